package podtest

import (
	"archive/tar"
	"bytes"
	"strings"
	"testing"

	docker "github.com/fsouza/go-dockerclient"
)

// Image is built by scripts/test-deps from busybox-static.
const Image = "bcs-test/busybox:latest"

// Label marks every container a test creates; tests remove them by it.
const Label = "io.bcs.test"

// NetworkCommand keeps a network container of Image running: pods of
// several containers and CNI pods get one, and tests cannot pull the
// default pause image.
func NetworkCommand() []string { return []string{"sleep", "2147483647"} }

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

// CommitImage makes image tag from Image with files (path → content)
// added, without a registry or a build: a container of Image is created,
// the files uploaded into it and the container committed. The image is
// removed in t.Cleanup (register it before what runs containers of it).
func CommitImage(t testing.TB, c *docker.Client, tag string, files map[string]string) string {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for name, content := range files {
		if err := tw.WriteHeader(&tar.Header{Name: strings.TrimPrefix(name, "/"), Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	ct, err := c.CreateContainer(docker.CreateContainerOptions{Config: &docker.Config{Image: Image, Labels: map[string]string{Label: "commit-image"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.RemoveContainer(docker.RemoveContainerOptions{ID: ct.ID, Force: true}) }()
	if err := c.UploadToContainer(ct.ID, docker.UploadToContainerOptions{InputStream: &buf, Path: "/"}); err != nil {
		t.Fatal(err)
	}
	repo, tg := docker.ParseRepositoryTag(tag)
	img, err := c.CommitContainer(docker.CommitContainerOptions{Container: ct.ID, Repository: repo, Tag: tg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.RemoveImageExtended(img.ID, docker.RemoveImageOptions{Force: true}) })
	return img.ID
}
