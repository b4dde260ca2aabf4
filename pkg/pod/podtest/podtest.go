package podtest

import (
	"testing"

	docker "github.com/fsouza/go-dockerclient"
)

// Image is built by scripts/test-deps from busybox-static.
const Image = "bcs-test/busybox:latest"

// Label marks every container a test creates; tests remove them by it.
const Label = "io.bcs.test"

// Docker returns a client of the local dockerd, failing the test when it
// or Image is missing.
func Docker(t testing.TB) *docker.Client {
	t.Helper()
	c, err := docker.NewClient("unix:///var/run/docker.sock")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Ping(); err != nil {
		t.Fatalf("dockerd does not answer on /var/run/docker.sock (%v): run scripts/test-deps (make test-deps)", err)
	}
	if _, err := c.InspectImage(Image); err != nil {
		t.Fatalf("image %s missing (%v): run scripts/test-deps (make test-deps)", Image, err)
	}
	return c
}
