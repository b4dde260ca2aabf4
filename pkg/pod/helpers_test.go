package pod

import (
	"context"
	"net"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	docker "github.com/fsouza/go-dockerclient"

	"github.com/bcs-mesos/bcs-mesos/pkg/pod/podtest"
	"github.com/bcs-mesos/bcs-mesos/pkg/taskstate"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

var nonName = regexp.MustCompile(`[^a-zA-Z0-9_.-]+`)

// testConfig is a valid CNM config whose containers carry a per-test
// label; every container with it is removed in t.Cleanup.
func testConfig(t *testing.T, c *docker.Client) Config {
	t.Helper()
	id := strings.ToLower(nonName.ReplaceAllString(t.Name(), "-"))
	if len(id) > 40 {
		id = id[len(id)-40:]
	}
	id = strings.TrimLeft(id, "-_.")
	removeLabelled(t, c, id)
	t.Cleanup(func() { removeLabelled(t, c, id) })
	return Config{
		Docker:     c,
		PodID:      id,
		SandboxDir: t.TempDir(),
		NodeAddr:   "127.0.0.1",
		PortBindIP: "127.0.0.1",
		Labels:     map[string]string{podtest.Label: id},
		// No registry: the network container runs the test image.
		NetworkImage:   podtest.Image,
		NetworkCommand: podtest.NetworkCommand(),
	}
}

func removeLabelled(t *testing.T, c *docker.Client, id string) {
	list, err := c.ListContainers(docker.ListContainersOptions{All: true, Filters: map[string][]string{"label": {podtest.Label + "=" + id}}})
	if err != nil {
		t.Errorf("list test containers: %v", err)
		return
	}
	for _, ct := range list {
		_ = c.RemoveContainer(docker.RemoveContainerOptions{ID: ct.ID, Force: true})
	}
}

// labelled counts the containers still carrying the test's label.
func labelled(t *testing.T, c *docker.Client, cfg Config) int {
	t.Helper()
	list, err := c.ListContainers(docker.ListContainersOptions{All: true, Filters: map[string][]string{"label": {podtest.Label + "=" + cfg.Labels[podtest.Label]}}})
	if err != nil {
		t.Fatal(err)
	}
	return len(list)
}

// containerTask is a valid busybox task running sh -c script.
func containerTask(name, script string) Task {
	return Task{ID: "task-" + name, Spec: &proto.TaskSpec{
		Version: proto.Version,
		Name:    name,
		Container: &proto.ContainerSpec{
			Image: podtest.Image, PullPolicy: "IfNotPresent",
			Command: "sh", Args: []string{"-c", script},
			NetworkMode: NetworkBridge,
		},
		KillGracePeriodSeconds: 1,
		Resources:              proto.Resources{CPUs: 0.1, MemMB: 64},
	}}
}

// recorder keeps every update a pod reports.
type recorder struct {
	mu      sync.Mutex
	updates []Update
}

func (r *recorder) add(u Update) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.updates = append(r.updates, u)
}

// states is the sequence of states reported for taskID.
func (r *recorder) states(taskID string) []taskstate.State {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []taskstate.State
	for _, u := range r.updates {
		if u.TaskID == taskID {
			out = append(out, u.State)
		}
	}
	return out
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// eventually retries f until it returns "" or d passes.
func eventually(t *testing.T, d time.Duration, f func() string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		msg := f()
		if msg == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(msg)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
