package pod

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/pod/podtest"
	docker "github.com/fsouza/go-dockerclient"
)

// Launch → TASK_RUNNING of a two-container pod against
// creating and starting the same two containers directly (what `docker run`
// does), reported as pod-ns/op, docker-ns/op and their ratio (target ≤ 1.2).
// The pod also starts its network container (so that either container can
// be updated in place): three container starts against docker's two.
func BenchmarkPodStartVsDockerRun(b *testing.B) {
	c, err := docker.NewClient("unix:///var/run/docker.sock")
	if err != nil {
		b.Fatal(err)
	}
	if err := c.Ping(); err != nil {
		b.Fatalf("dockerd does not answer (%v): run scripts/test-deps", err)
	}
	const label = "bcs-bench"
	clean := func() {
		list, _ := c.ListContainers(docker.ListContainersOptions{All: true, Filters: map[string][]string{"label": {podtest.Label + "=" + label}}})
		for _, ct := range list {
			_ = c.RemoveContainer(docker.RemoveContainerOptions{ID: ct.ID, Force: true})
		}
	}
	clean()
	b.Cleanup(clean)
	sandbox := b.TempDir()
	var podTime, dockerTime time.Duration
	for i := 0; i < b.N; i++ {
		cfg := Config{Docker: c, PodID: "bench", SandboxDir: sandbox, NodeAddr: "127.0.0.1", Labels: map[string]string{podtest.Label: label},
			NetworkImage: podtest.Image, NetworkCommand: podtest.NetworkCommand()}
		p, err := New(cfg, []Task{containerTask("a", "exec sleep 100000"), containerTask("b", "exec sleep 100000")})
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if err := p.Start(context.Background()); err != nil {
			b.Fatal(err)
		}
		podTime += time.Since(start)
		if err := p.Kill(context.Background(), syscall.SIGKILL, 0); err != nil {
			b.Fatal(err)
		}

		start = time.Now()
		var first string
		for j, name := range []string{"bench-docker-a", "bench-docker-b"} {
			hc := &docker.HostConfig{NetworkMode: "bridge"}
			if j > 0 {
				hc.NetworkMode = "container:" + first
			}
			ct, err := c.CreateContainer(docker.CreateContainerOptions{Name: name, HostConfig: hc, Config: &docker.Config{
				Image: podtest.Image, Cmd: []string{"sh", "-c", "exec sleep 100000"}, Labels: map[string]string{podtest.Label: label},
			}})
			if err != nil {
				b.Fatal(err)
			}
			if err := c.StartContainer(ct.ID, nil); err != nil {
				b.Fatal(err)
			}
			if j == 0 {
				first = ct.ID
			}
		}
		dockerTime += time.Since(start)
		clean()
	}
	b.ReportMetric(float64(podTime.Nanoseconds())/float64(b.N), "pod-ns/op")
	b.ReportMetric(float64(dockerTime.Nanoseconds())/float64(b.N), "docker-ns/op")
	b.ReportMetric(float64(podTime)/float64(dockerTime), "ratio")
}
