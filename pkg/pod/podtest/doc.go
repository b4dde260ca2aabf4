// Package podtest holds what the Docker-backed tests share: the local test
// image (also the network containers' image, with NetworkCommand), the
// label that marks test containers, images made from it without a
// registry (CommitImage), and a docker client that fails (never skips)
// when dockerd or the image is missing. Only tests import it.
package podtest
