package podruntime

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	docker "github.com/fsouza/go-dockerclient"
	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/bcs-mesos/bcs-mesos/internal/testlog"
	"github.com/bcs-mesos/bcs-mesos/pkg/executor"
	"github.com/bcs-mesos/bcs-mesos/pkg/pod"
	"github.com/bcs-mesos/bcs-mesos/pkg/pod/podtest"
	"github.com/bcs-mesos/bcs-mesos/pkg/taskstate"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

const httpdScript = "mkdir -p /www && echo ok > /www/health && exec httpd -f -p 8080 -h /www"

var nonName = regexp.MustCompile(`[^a-zA-Z0-9_.-]+`)

// testID is a docker-safe name for the test, also its container label.
func testID(t *testing.T) string {
	id := strings.ToLower(nonName.ReplaceAllString(t.Name(), "-"))
	if len(id) > 40 {
		id = id[len(id)-40:]
	}
	return "rt-" + strings.Trim(id, "-_.")
}

// newRuntime is a CNM runtime whose containers carry a per-test label;
// every container with it is removed in t.Cleanup.
func newRuntime(t *testing.T, c *docker.Client, mod func(*Config)) (*Runtime, Config) {
	t.Helper()
	id := testID(t)
	removeLabelled(t, c, id)
	t.Cleanup(func() { removeLabelled(t, c, id) })
	cfg := Config{
		Docker:      c,
		ExecutorID:  id,
		FrameworkID: "framework-" + id,
		SandboxDir:  t.TempDir(),
		NodeAddr:    "127.0.0.1",
		PortBindIP:  "127.0.0.1",
		Labels:      map[string]string{podtest.Label: id},
		Logger:      testlog.New(t),
		// No registry: the network containers run the test image.
		NetworkImage:   podtest.Image,
		NetworkCommand: podtest.NetworkCommand(),
	}
	if mod != nil {
		mod(&cfg)
	}
	rt, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		rt.Shutdown(time.Second)
		_ = rt.Wait(ctx)
	})
	return rt, cfg
}

func removeLabelled(t *testing.T, c *docker.Client, id string) {
	for _, ct := range labelledContainers(t, c, id) {
		_ = c.RemoveContainer(docker.RemoveContainerOptions{ID: ct.ID, Force: true})
	}
}

func labelledContainers(t *testing.T, c *docker.Client, id string) []docker.APIContainers {
	list, err := c.ListContainers(docker.ListContainersOptions{All: true, Filters: map[string][]string{"label": {podtest.Label + "=" + id}}})
	if err != nil {
		t.Errorf("list test containers: %v", err)
	}
	return list
}

// containerTask is a valid busybox task running sh -c script.
func containerTask(id, name, script string) executor.Task {
	return executor.Task{
		Info: mesos.TaskInfo{TaskID: mesos.TaskID{Value: id}, Name: name},
		Spec: &proto.TaskSpec{
			Version: proto.Version,
			Name:    name,
			Container: &proto.ContainerSpec{
				Image: podtest.Image, PullPolicy: "IfNotPresent",
				Command: "sh", Args: []string{"-c", script},
				NetworkMode: pod.NetworkBridge,
			},
			KillGracePeriodSeconds: 1,
			Resources:              proto.Resources{CPUs: 0.1, MemMB: 64},
		},
		KillGrace: time.Second,
	}
}

// fastCheck is a health check on a quick schedule.
func fastCheck(typ string) proto.HealthCheck {
	return proto.HealthCheck{Type: typ, IntervalSeconds: 0.2, TimeoutSeconds: 1, ConsecutiveFailures: 3}
}

// reporter records reports like the driver does: it applies the one
// transition table and fails the test on an illegal move.
type reporter struct {
	t       *testing.T
	mu      sync.Mutex
	state   map[string]taskstate.State
	reports []executor.Report
	notify  chan struct{}
}

func newReporter(t *testing.T) *reporter {
	return &reporter{t: t, state: map[string]taskstate.State{}, notify: make(chan struct{}, 1)}
}

func (r *reporter) Report(rep executor.Report) {
	r.mu.Lock()
	from := r.state[rep.TaskID]
	next, err := taskstate.Transition(from, rep.State)
	if err != nil {
		r.t.Errorf("task %q: illegal report %s → %s (%q)", rep.TaskID, from, rep.State, rep.Message)
	} else {
		r.state[rep.TaskID] = next
	}
	r.reports = append(r.reports, rep)
	r.mu.Unlock()
	select {
	case r.notify <- struct{}{}:
	default:
	}
}

// await waits for a report of task matching pred and returns it.
func (r *reporter) await(task string, what string, pred func(executor.Report) bool) executor.Report {
	r.t.Helper()
	return r.awaitSince(0, task, what, pred)
}

// awaitSince is await among the reports after the first seen ones.
func (r *reporter) awaitSince(seen int, task string, what string, pred func(executor.Report) bool) executor.Report {
	r.t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		r.mu.Lock()
		for _, rep := range r.reports[seen:] {
			if rep.TaskID == task && pred(rep) {
				r.mu.Unlock()
				return rep
			}
		}
		var all []string
		for _, rep := range r.reports {
			all = append(all, describe(rep))
		}
		r.mu.Unlock()
		select {
		case <-r.notify:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			r.t.Fatalf("task %q: no %s; have %v", task, what, all)
		}
	}
}

func (r *reporter) awaitState(task string, s taskstate.State) executor.Report {
	r.t.Helper()
	return r.await(task, s.String(), func(rep executor.Report) bool { return rep.State == s })
}

func (r *reporter) awaitHealthy(task string, healthy bool) executor.Report {
	r.t.Helper()
	return r.await(task, fmt.Sprintf("healthy=%v", healthy), func(rep executor.Report) bool {
		return rep.Healthy != nil && *rep.Healthy == healthy
	})
}

// snapshot is every report so far, in order.
func (r *reporter) snapshot() []executor.Report {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]executor.Report(nil), r.reports...)
}

// states is the sequence of states reported for task.
func (r *reporter) states(task string) []taskstate.State {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []taskstate.State
	for _, rep := range r.reports {
		if rep.TaskID == task {
			out = append(out, rep.State)
		}
	}
	return out
}

func describe(rep executor.Report) string {
	h := ""
	if rep.Healthy != nil {
		h = fmt.Sprintf(" healthy=%v", *rep.Healthy)
	}
	return fmt.Sprintf("%s:%s%s %q", rep.TaskID, rep.State, h, rep.Message)
}

func containerInfo(t *testing.T, rep executor.Report) proto.ContainerInfo {
	t.Helper()
	var info proto.ContainerInfo
	if err := json.Unmarshal(rep.Data, &info); err != nil {
		t.Fatalf("task %q: data %q is not ContainerInfo JSON: %v", rep.TaskID, rep.Data, err)
	}
	return info
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

// waitDone waits until rt's pods are torn down.
func waitDone(t *testing.T, rt *Runtime) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := rt.Wait(ctx); err != nil {
		t.Fatalf("wait: %v", err)
	}
}
