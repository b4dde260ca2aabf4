// Package podtest holds what the Docker-backed tests share: the local test
// image, the label that marks test containers, and a docker client that
// fails (never skips) when dockerd or the image is missing. Only tests
// import it.
package podtest
