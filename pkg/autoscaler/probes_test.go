package autoscaler_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/internal/testlog"
	"github.com/bcs-mesos/bcs-mesos/pkg/autoscaler"
	"github.com/bcs-mesos/bcs-mesos/pkg/egress"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest/manifesttest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// sessions is a game server's session endpoint for every instance,
// keyed by "app/id": {"players": n}, or a 500 for an instance told to
// fail. It counts the calls it answers.
type sessions struct {
	mu      sync.Mutex
	players map[string]int // a missing key fails
	calls   int
	server  *httptest.Server
}

func startSessions(t *testing.T) *sessions {
	s := &sessions{players: map[string]int{}}
	s.server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.calls++
		n, ok := s.players[strings.TrimPrefix(r.URL.Path, "/session/")]
		if !ok {
			http.Error(w, "no game here", http.StatusInternalServerError)
			return
		}
		fmt.Fprintf(w, `{"players": %d}`, n)
	}))
	t.Cleanup(s.server.Close)
	return s
}

// set sets each instance's players by ID (-1: it fails).
func (s *sessions) set(app string, players ...int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, n := range players {
		key := fmt.Sprintf("%s/%d", app, id)
		if n < 0 {
			delete(s.players, key)
		} else {
			s.players[key] = n
		}
	}
}

func (s *sessions) answered() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

func (s *sessions) port() string {
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(s.server.URL, "http://"))
	return port
}

// sessionProbe reads {$.players} of an instance at its host and http
// port, as a game server's own endpoint would be read.
func sessionProbe() manifest.InstanceValue {
	return manifest.InstanceValue{Web: &manifest.WebProvider{
		URL:      "http://{{ args.HostIP }}:{{ args.Port.http }}/session/{{ args.AppName }}/{{ args.InstanceID }}",
		JSONPath: "{$.players}", TimeoutSeconds: 2}}
}

// registryFleet is the scheduler's view as the registry has it: the
// application's instances, each running the launch its task group
// record names on 127.0.0.1 with an http port, allocated when the
// registry holds an allocation of that launch.
type registryFleet struct {
	reg  *registry.Registry
	port uint32
}

func (f *registryFleet) Fleet(ctx context.Context, refs []autoscaler.Ref) ([]autoscaler.Fleet, error) {
	out := make([]autoscaler.Fleet, len(refs))
	for i, ref := range refs {
		app, err := f.reg.GetApp(ctx, ref.Namespace, ref.Name)
		if err != nil {
			out[i].Problem = err.Error()
			continue
		}
		allocs, err := f.reg.Allocations(ctx, ref.Namespace, ref.Name)
		if err != nil {
			return nil, err
		}
		out[i].Replicas = app.Instances
		for _, id := range registry.WantedIDs(app.Instances, app.Removed) {
			g, err := f.reg.GetTaskGroup(ctx, ref.Namespace, ref.Name, id)
			if err != nil {
				return nil, err
			}
			tg := g.ID
			allocated := slices.ContainsFunc(allocs, func(a *registry.Allocation) bool { return a.Instance == id && a.TaskGroupID == tg })
			out[i].Instances = append(out[i].Instances, autoscaler.Instance{ID: id, TaskGroupID: tg, Ready: true, RunningSince: t0,
				Allocated: allocated, HostIP: "127.0.0.1", Ports: registry.HostPorts{{Name: "http", Port: f.port}}})
		}
	}
	return out, nil
}

// probeEnv is a paused autoscaler of ns-a/gamesvc (4 instances running)
// whose allocation probe reads sessions, its controller on a fake
// clock; probes run while an autoscaler is paused.
type probeEnv struct {
	*env
	sessions *sessions
}

func openProbeEnv(t *testing.T, allowLoopback bool, change func(*manifest.Autoscaler)) *probeEnv {
	t.Helper()
	ctx := context.Background()
	s := startSessions(t)
	a := &manifest.Autoscaler{APIVersion: "v4", KindName: "autoscaler", Metadata: manifest.ObjectMeta{Name: "game", Namespace: ns},
		Spec: manifest.AutoscalerSpec{Target: manifest.ScaleTarget{Kind: manifest.KindProcess, Name: "gamesvc"},
			MaxReplicas: 10, IntervalSeconds: 10, Paused: true,
			Metrics:    []manifest.AutoscaleMetric{{Type: manifest.MetricBuffer, Buffer: &manifest.BufferMetric{BufferSize: *manifest.Count(1)}}},
			Allocation: &manifest.AllocationProbe{Probe: sessionProbe(), AllocatedCondition: "asInt(result) > 0", IntervalSeconds: 10}}}
	if change != nil {
		change(a)
	}
	e := openEnv(t, map[string]int{"gamesvc": 4}, a)
	p := manifesttest.Process()
	p.Spec.Instance = 4
	if _, err := e.reg.CreateApp(ctx, p); err != nil {
		t.Fatal(err)
	}
	for id := range 4 {
		tg := &registry.TaskGroup{ID: registry.TaskGroupID(ns, "gamesvc", "", id, 1), Namespace: ns, App: "gamesvc", Index: id, Phase: "Running"}
		if err := e.reg.PutTaskGroup(ctx, tg); err != nil {
			t.Fatal(err)
		}
	}
	port, _ := strconv.ParseUint(s.port(), 10, 32)
	allowed := map[string][]string{}
	if allowLoopback {
		allowed[ns] = []string{"127.0.0.0/8"}
	}
	set, err := egress.NewSet(egress.Networks(), nil, allowed)
	if err != nil {
		t.Fatal(err)
	}
	c, err := autoscaler.New(autoscaler.Config{Registry: e.reg, Fleet: &registryFleet{reg: e.reg, port: uint32(port)}, Usage: e.fleet,
		Scaler: e.fleet, StatusWriter: e.reg, Egress: set, Clock: e.clock, Logger: testlog.New(t)})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- c.Run(runCtx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	e.wait()
	return &probeEnv{env: e, sessions: s}
}

// allocations lists gamesvc's allocations as "id:source".
func (e *probeEnv) allocations() []string {
	e.t.Helper()
	list, err := e.reg.Allocations(context.Background(), ns, "gamesvc")
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, a := range list {
		out = append(out, fmt.Sprintf("%d:%s", a.Instance, a.Source))
	}
	slices.Sort(out)
	return out
}

// revisions are the store revisions of gamesvc's allocations.
func (e *probeEnv) revisions() []int64 {
	e.t.Helper()
	list, err := e.reg.Allocations(context.Background(), ns, "gamesvc")
	if err != nil {
		e.t.Fatal(err)
	}
	var out []int64
	for _, a := range list {
		out = append(out, a.Revision)
	}
	return out
}

func (e *probeEnv) probeStatus() manifest.AllocationProbeStatus {
	e.t.Helper()
	s := e.status("game").Allocation
	if s == nil {
		e.t.Fatal("the status has no allocation probe round")
	}
	return *s
}

// The probe allocates an instance once its game has players and
// releases it once they are gone, writing only on change, with source
// "probe"; an instance whose probe fails keeps its state, said in the
// status; an instance allocated through the API is never touched, even
// when the probe finds it empty.
func TestAllocationProbe(t *testing.T) {
	e := openProbeEnv(t, true, nil)
	if _, err := e.reg.Allocate(context.Background(), registry.Allocation{Namespace: ns, App: "gamesvc", Instance: 2,
		Source: registry.AllocatedByAPI, By: "alice"}); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		players []int // by instance ID; -1 fails
		want    []string
		status  manifest.AllocationProbeStatus
		failed  []int
		why     string
	}{
		{players: []int{0, 3, 0, -1}, want: []string{"1:probe", "2:api"},
			status: manifest.AllocationProbeStatus{Probed: 4, Holding: 1, Allocations: 1, FailedCount: 1}, failed: []int{3},
			why: "1 has players; 2 is the API's although empty; 3 fails and stays as it was"},
		{players: []int{0, -1, 0, 2}, want: []string{"1:probe", "2:api", "3:probe"},
			status: manifest.AllocationProbeStatus{Probed: 4, Holding: 1, Allocations: 1, FailedCount: 1}, failed: []int{1},
			why: "1 fails and stays allocated; 3 has players"},
		{players: []int{0, 3, 0, 2}, want: []string{"1:probe", "2:api", "3:probe"},
			status: manifest.AllocationProbeStatus{Probed: 4, Holding: 2},
			why:    "nothing changes, nothing is written"},
		{players: []int{0, 0, 0, 0}, want: []string{"2:api"},
			status: manifest.AllocationProbeStatus{Probed: 4, Releases: 2},
			why:    "1 and 3 are empty: released; 2 is left to the API"},
	}
	for i, s := range steps {
		e.sessions.set("gamesvc", s.players...)
		revisions := e.revisions()
		e.tick()
		if got := e.allocations(); !slices.Equal(got, s.want) {
			t.Fatalf("step %d (%s): allocations %v, want %v", i, s.why, got, s.want)
		}
		if s.status.Allocations+s.status.Releases == 0 && !slices.Equal(e.revisions(), revisions) {
			t.Errorf("step %d (%s): the allocations were written again", i, s.why)
		}
		got := e.probeStatus()
		var failed []int
		for _, f := range got.Failed {
			failed = append(failed, f.Instance)
			if f.Message == "" {
				t.Errorf("step %d: instance %d failed without a message", i, f.Instance)
			}
		}
		if !slices.Equal(failed, s.failed) || got.Probed != s.status.Probed || got.Holding != s.status.Holding ||
			got.Allocations != s.status.Allocations || got.Releases != s.status.Releases || got.FailedCount != s.status.FailedCount {
			t.Errorf("step %d (%s): probe status %+v, want %+v failing %v", i, s.why, got, s.status, s.failed)
		}
		if len(s.failed) > 0 && !strings.Contains(got.Message, "keep their state") {
			t.Errorf("step %d: status message %q, want it to say the failed keep their state", i, got.Message)
		}
	}
}

// The probe's allocation says who made it, for which launch, and why.
func TestAllocationProbeRecord(t *testing.T) {
	e := openProbeEnv(t, true, nil)
	e.sessions.set("gamesvc", 0, 7, 0, 0)
	e.tick()
	list, err := e.reg.Allocations(context.Background(), ns, "gamesvc")
	if err != nil || len(list) != 1 {
		t.Fatalf("allocations %+v, %v; want instance 1's", list, err)
	}
	a := list[0]
	if a.Instance != 1 || a.Source != registry.AllocatedByProbe || a.By != "autoscaler ns-a/game" ||
		a.TaskGroupID != registry.TaskGroupID(ns, "gamesvc", "", 1, 1) || !strings.Contains(a.Note, "asInt(result) > 0 holds for 7") {
		t.Errorf("allocation %+v: want instance 1's current launch, by the autoscaler, noting the condition and value", a)
	}
}

// Each probe call is held to the namespace's egress policy: with
// loopback refused to ns-a, no call reaches the game server and no
// instance changes; the status says why. (TestAllocationProbe is the
// same probe with loopback allowed.)
func TestAllocationProbeEgress(t *testing.T) {
	e := openProbeEnv(t, false, nil)
	e.sessions.set("gamesvc", 5, 5, 5, 5)
	e.tick()
	if got := e.allocations(); len(got) != 0 {
		t.Errorf("allocations %v, want none", got)
	}
	if n := e.sessions.answered(); n != 0 {
		t.Errorf("the game server answered %d calls, want none", n)
	}
	got := e.probeStatus()
	if got.FailedCount != 4 || len(got.Failed) != 4 || !strings.Contains(got.Failed[0].Message, "refused: loopback") {
		t.Errorf("probe status %+v, want 4 failed, refused by the egress policy", got)
	}
}

// In a dry run the probe says what it would change and writes nothing.
func TestAllocationProbeDryRun(t *testing.T) {
	e := openProbeEnv(t, true, func(a *manifest.Autoscaler) { a.Spec.Paused, a.Spec.DryRun = false, true })
	e.sessions.set("gamesvc", 1, 1, 0, 0)
	e.tick()
	if got := e.allocations(); len(got) != 0 {
		t.Errorf("allocations %v, want none", got)
	}
	if got := e.probeStatus(); got.Allocations != 2 || !strings.Contains(got.Message, "dry run") {
		t.Errorf("probe status %+v, want 2 allocations counted in a dry run", got)
	}
}

// A web scaleDownOrder is read per instance when a scale-down needs
// victims: the lowest value goes first, an instance whose call fails
// after those with a value; when every call fails the scale-down
// waits, saying why.
func TestWebScaleDownOrder(t *testing.T) {
	s := startSessions(t)
	order := manifest.InstanceValue{Web: &manifest.WebProvider{
		URL: "http://127.0.0.1:" + s.port() + "/session/{{ args.AppName }}/{{ args.InstanceID }}", JSONPath: "{$.players}"}}
	buffer := func(name string) *manifest.Autoscaler {
		return &manifest.Autoscaler{APIVersion: "v4", KindName: "autoscaler", Metadata: manifest.ObjectMeta{Name: name, Namespace: ns},
			Spec: manifest.AutoscalerSpec{Target: manifest.ScaleTarget{Kind: manifest.KindApplication, Name: name},
				MaxReplicas: 10, IntervalSeconds: 10, ScaleDownOrder: &order,
				Metrics:  []manifest.AutoscaleMetric{{Type: manifest.MetricBuffer, Buffer: &manifest.BufferMetric{BufferSize: *manifest.Count(2)}}},
				Behavior: &manifest.ScaleBehavior{ScaleDown: &manifest.ScaleRules{StabilizationWindowSeconds: intp(0)}}}}
	}
	s.set("game", 5, -1, 0, 9)
	s.set("broken", -1, -1, -1, -1)
	e := openEnv(t, map[string]int{"game": 4, "broken": 4}, buffer("game"), buffer("broken"))
	e.start()
	defer e.stop()
	calls := s.answered()
	e.tick()
	want := []string{"game 4->2 removed [2 0]"}
	if got := e.fleet.scaled(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("scales %q, want %q (0 players, then 5; instance 1 failed: after them)", got, want)
	}
	if n := s.answered() - calls; n != 8 {
		t.Errorf("%d calls, want one per instance of the two scaling down", n)
	}
	if got := e.status("broken"); e.fleet.size("broken") != 4 || !strings.Contains(got.Message, "the scale-down order's values could not be read: instance") {
		t.Errorf("every call failing: size %d, message %q; want 4 kept, the failure said", e.fleet.size("broken"), got.Message)
	}
}

// A probe may read every instance's value in one Prometheus query, each
// sample naming its instance by a label: an instance without a sample
// keeps its state.
func TestAllocationProbePrometheus(t *testing.T) {
	prom := startPrometheus(t)
	e := openProbeEnv(t, true, func(a *manifest.Autoscaler) {
		a.Spec.Allocation.Probe = manifest.InstanceValue{Prometheus: &manifest.PrometheusProvider{Address: prom.address, Query: "sessions"},
			InstanceLabel: "slot"}
		a.Spec.Allocation.AllocatedCondition = "result > 0"
	})
	for slot, n := range map[string]float64{"0": 0, "1": 2, "3": 1} {
		prom.sessions.WithLabelValues(slot).Set(n)
	}
	prom.set(t, 1) // scraped with the sessions
	e.tick()
	if got, want := e.allocations(), []string{"1:probe", "3:probe"}; !slices.Equal(got, want) {
		t.Fatalf("allocations %v, want %v", got, want)
	}
	if got := e.probeStatus(); got.FailedCount != 1 || got.Failed[0].Instance != 2 || got.Allocations != 2 {
		t.Errorf("probe status %+v, want 2 allocated and instance 2 without a sample", got)
	}
	prom.sessions.WithLabelValues("1").Set(0)
	prom.set(t, 2)
	e.tick()
	if got, want := e.allocations(), []string{"3:probe"}; !slices.Equal(got, want) {
		t.Errorf("allocations %v, want %v", got, want)
	}
}

// An instance relaunched lost its session: the probe's allocation of
// its earlier launch, which the fleet no longer shows and which would
// keep the instance from being scaled down, is released by the next
// sweep, while an instance still allocated stays so.
func TestAllocationProbeReleasesEarlierLaunch(t *testing.T) {
	ctx := context.Background()
	e := openProbeEnv(t, true, nil)
	e.sessions.set("gamesvc", 0, 3, 0, 4)
	e.tick()
	if got, want := e.allocations(), []string{"1:probe", "3:probe"}; !slices.Equal(got, want) {
		t.Fatalf("allocations %v, want %v", got, want)
	}
	relaunched := &registry.TaskGroup{ID: registry.TaskGroupID(ns, "gamesvc", "", 1, 2), Namespace: ns, App: "gamesvc", Index: 1, Phase: "Running"}
	if err := e.reg.PutTaskGroup(ctx, relaunched); err != nil {
		t.Fatal(err)
	}
	e.sessions.set("gamesvc", 0, 0, 0, 4)
	for round := 1; round < 6; round++ {
		e.tick()
		if got, want := e.allocations(), []string{"1:probe", "3:probe"}; !slices.Equal(got, want) {
			t.Fatalf("round %d before the sweep: allocations %v, want %v", round, got, want)
		}
	}
	e.tick()
	if got, want := e.allocations(), []string{"3:probe"}; !slices.Equal(got, want) {
		t.Errorf("after the sweep: allocations %v, want %v", got, want)
	}
	if got := e.probeStatus(); got.Releases != 1 {
		t.Errorf("probe status %+v, want the release counted", got)
	}
}
