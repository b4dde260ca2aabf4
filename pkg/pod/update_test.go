package pod

import (
	"errors"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	docker "github.com/fsouza/go-dockerclient"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/pod/podtest"
	"github.com/bcs-mesos/bcs-mesos/pkg/taskstate"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// specChanges names what an update changes by JSON field, ignoring the
// instance bookkeeping, the egress policy and nil-versus-empty.
func TestSpecChanges(t *testing.T) {
	base := containerTask("main", "exec sleep 1").Spec
	base.Instance = proto.Instance{Namespace: "ns", App: "app", Version: 1}
	for _, tc := range []struct {
		name string
		mod  func(s *proto.TaskSpec)
		want []string
	}{
		{"bookkeeping only", func(s *proto.TaskSpec) { s.Instance.Version, s.Version = 2, "other" }, nil},
		{"the egress policy", func(s *proto.TaskSpec) { s.Egress = &proto.Egress{Allowed: []string{"10.1.0.0/16"}} }, nil},
		{"nil and empty", func(s *proto.TaskSpec) { s.Env, s.Container.Labels = []proto.EnvVar{}, map[string]string{} }, nil},
		{"env and args", func(s *proto.TaskSpec) {
			s.Env = []proto.EnvVar{{Name: "A", Value: "1"}}
			s.Container.Args = []string{"-c", "exec sleep 2"}
		}, []string{"env", "args"}},
		{"image and limits", func(s *proto.TaskSpec) {
			s.Container.Image = "other:v2"
			s.Resources.MemLimitMB = 128
			s.Resources.PinCPUs = true
		}, []string{"image", "resources.memLimitMB", "resources.pinCPUs"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next := *base
			c := *base.Container
			next.Container = &c
			tc.mod(&next)
			if got := specChanges(base, &next); !slices.Equal(got, tc.want) {
				t.Errorf("changes %v, want %v", got, tc.want)
			}
		})
	}
}

// diffManifests: what the new image added or changed (content, mode,
// owner, type; not times) is copied, the topmost of what it deleted is
// removed, skipped paths are neither.
func TestDiffManifests(t *testing.T) {
	file := func(content string, mode int64) entry {
		return entry{typeflag: '0', mode: mode, size: int64(len(content)), digest: [32]byte{content[0]}}
	}
	dir := entry{typeflag: '5', mode: 0o755}
	old := manifest{
		"/app": dir, "/app/same": file("s", 0o644), "/app/changed": file("a", 0o644), "/app/mode": file("m", 0o644),
		"/app/gone": dir, "/app/gone/x": file("x", 0o644), "/app/gone/y": file("y", 0o644), "/app/file": file("f", 0o644),
		"/etc/hosts": file("h", 0o644), "/data/old": file("d", 0o644),
	}
	next := manifest{
		"/app": dir, "/app/same": file("s", 0o644), "/app/changed": file("b", 0o644), "/app/mode": file("m", 0o755),
		"/app/new": file("n", 0o644), "/app/file": dir, "/etc/hosts": file("H", 0o644), "/data/new": file("d", 0o644),
	}
	skip := func(name string) bool { return dockerOwned(name) || underAny(name, []string{"/data"}) }
	changed, deleted := diffManifests(old, next, skip)
	var names []string
	for name := range changed {
		names = append(names, name)
	}
	slices.Sort(names)
	if want := []string{"/app/changed", "/app/file", "/app/mode", "/app/new"}; !slices.Equal(names, want) {
		t.Errorf("changed %v, want %v", names, want)
	}
	if want := []string{"/app/gone"}; !slices.Equal(deleted, want) {
		t.Errorf("deleted %v, want %v", deleted, want)
	}
}

// PlanUpdate refuses, before anything is touched, what cannot be applied,
// naming the task and the fields.
func TestPlanUpdateRefusals(t *testing.T) {
	c := podtest.Docker(t)
	cfg := testConfig(t, c)
	web := containerTask("web", "exec sleep 100000")
	web.Spec.Ports = []proto.Port{{Name: "http", ContainerPort: 8080, HostPort: freePort(t)}}
	worker := containerTask("worker", "exec sleep 100000")
	p, err := New(cfg, []Task{web, worker})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctxT(t, time.Minute)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Kill(ctxT(t, 30*time.Second), syscall.SIGKILL, 0) })
	next := func(task Task, mod func(*proto.TaskSpec)) proto.TaskUpdate {
		spec := *task.Spec
		c := *spec.Container
		spec.Container = &c
		spec.Instance.Version = 2
		if mod != nil {
			mod(&spec)
		}
		return proto.TaskUpdate{TaskID: task.ID, Spec: &spec}
	}
	for _, tc := range []struct {
		name string
		u    proto.GroupUpdate
		want string
	}{
		{"hot-patch env and args", proto.GroupUpdate{Revision: 2, Mode: proto.UpdateHotPatch, Tasks: []proto.TaskUpdate{next(web, nil), next(worker, func(s *proto.TaskSpec) {
			s.Env = []proto.EnvVar{{Name: "A", Value: "1"}}
			s.Container.Args = []string{"-c", "sleep 1"}
			s.Container.Image = "other"
		})}}, `hot-patch of task "task-worker" cannot change env, args: they need a restart (use InplaceUpdate)`},
		{"in-place ports held by the network container", proto.GroupUpdate{Revision: 2, Mode: proto.UpdateInPlace, Tasks: []proto.TaskUpdate{next(web, func(s *proto.TaskSpec) {
			s.Ports = []proto.Port{{Name: "http", ContainerPort: 9090, HostPort: 1}}
			s.Container.NetworkMode = NetworkHost
		}), next(worker, nil)}}, `in-place update of task "task-web" cannot change ports: the pod's network container publishes them; networkMode: the pod keeps its network`},
		{"renamed", proto.GroupUpdate{Revision: 2, Mode: proto.UpdateInPlace, Tasks: []proto.TaskUpdate{next(web, nil), next(worker, func(s *proto.TaskSpec) { s.Name = "other" })}}, "name: a task keeps its container name"},
		{"task missing", proto.GroupUpdate{Revision: 2, Mode: proto.UpdateInPlace, Tasks: []proto.TaskUpdate{next(web, nil)}}, `no spec for task "task-worker"`},
		{"unknown task", proto.GroupUpdate{Revision: 2, Mode: proto.UpdateInPlace, Tasks: []proto.TaskUpdate{next(web, nil), next(worker, nil), {TaskID: "nope", Spec: web.Spec}}}, `task "nope" is not a task`},
		{"no mode", proto.GroupUpdate{Revision: 2, Tasks: []proto.TaskUpdate{next(web, nil), next(worker, nil)}}, `mode ""`},
		{"no revision", proto.GroupUpdate{Mode: proto.UpdateInPlace}, "revision 0"},
		{"signal and command", proto.GroupUpdate{Revision: 2, Mode: proto.UpdateHotPatch, ReloadSignal: 1, ReloadCommand: []string{"true"}}, "at most one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := p.PlanUpdate(&tc.u)
			if !errors.Is(err, errdefs.ErrInvalidArgument) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("plan: %v, want an invalid-argument error containing %q", err, tc.want)
			}
		})
	}
	for _, ts := range p.Tasks() {
		if ts.Info.Revision != 0 || ts.Spec.Instance.Version != 0 {
			t.Errorf("task %q moved: %+v", ts.TaskID, ts.Info)
		}
	}

	// The same specs at the revision the pod runs: nothing to do.
	plan, err := p.PlanUpdate(&proto.GroupUpdate{Revision: 1, Mode: proto.UpdateInPlace, Tasks: []proto.TaskUpdate{next(web, nil), next(worker, nil)}})
	if err != nil || plan.Current || len(plan.Changed) != 0 {
		t.Errorf("an update changing nothing but the revision: %+v, %v; want nothing changed, not current", plan, err)
	}
}

// The network container holds the pod's network: when it exits, the pod
// fails (as when the container owning the network exited) and nothing is
// left.
func TestNetworkContainerExitFailsPod(t *testing.T) {
	c := podtest.Docker(t)
	cfg := testConfig(t, c)
	p, err := New(cfg, []Task{containerTask("a", "exec sleep 100000"), containerTask("b", "exec sleep 100000")})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctxT(t, time.Minute)); err != nil {
		t.Fatal(err)
	}
	network := readRecord(t, cfg).NetworkContainer
	if err := c.KillContainer(docker.KillContainerOptions{ID: network, Signal: docker.SIGKILL}); err != nil {
		t.Fatal(err)
	}
	if st, err := p.Wait(ctxT(t, 30*time.Second)); st != taskstate.Failed || err != nil {
		t.Fatalf("pod %s (%v), want failed", st, err)
	}
	for _, ts := range p.Tasks() {
		if ts.State != taskstate.Failed || !strings.Contains(ts.Message, "network container") {
			t.Errorf("task %q: %s %q, want failed naming the network container", ts.TaskID, ts.State, ts.Message)
		}
	}
	if n := labelled(t, c, cfg); n != 0 {
		t.Errorf("%d containers left", n)
	}
	u := &proto.GroupUpdate{Revision: 2, Mode: proto.UpdateInPlace}
	if _, err := p.PlanUpdate(u); !errors.Is(err, errdefs.ErrConflict) || !strings.Contains(err.Error(), "not running") {
		t.Errorf("update of a failed pod: %v, want a conflict", err)
	}
}
