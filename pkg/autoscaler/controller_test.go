package autoscaler_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"

	"github.com/bcs-mesos/bcs-mesos/internal/promtest"
	"github.com/bcs-mesos/bcs-mesos/internal/testlog"
	"github.com/bcs-mesos/bcs-mesos/pkg/autoscaler"
	"github.com/bcs-mesos/bcs-mesos/pkg/egress"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
	"github.com/bcs-mesos/bcs-mesos/pkg/store/storetest"
)

var shared storetest.Shared

func TestMain(m *testing.M) { os.Exit(storetest.RunShared(m, &shared)) }

const ns = "ns-a"

var t0 = time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)

// players is a gauge a real Prometheus scrapes every second, with
// sessions{slot} per instance beside it.
type players struct {
	gauge    prometheus.Gauge
	sessions *prometheus.GaugeVec
	address  string
}

func startPrometheus(t *testing.T) *players {
	t.Helper()
	gauge := prometheus.NewGauge(prometheus.GaugeOpts{Name: "players", Help: "Players online."})
	sessions := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "sessions", Help: "Sessions per instance."}, []string{"slot"})
	metrics := prometheus.NewRegistry()
	metrics.MustRegister(gauge, sessions)
	return &players{gauge: gauge, sessions: sessions, address: promtest.Start(t, "game", promtest.Serve(t, metrics))}
}

// set sets the gauge and waits until Prometheus answers it.
func (p *players) set(t *testing.T, v float64) {
	t.Helper()
	p.gauge.Set(v)
	promtest.Await(t, p.address, "players", func(vec model.Vector) bool { return len(vec) == 1 && float64(vec[0].Value) == v })
}

// fleet is the scheduler's side: workloads' sizes, every instance ready,
// and the scaler that sets them, storing the status as the one-write
// registry.ApplyScaleDecision does and refusing a decision made on a
// size that is no longer the workload's.
type fleet struct {
	mu       sync.Mutex
	replicas map[string]int
	scales   []string
	reg      *registry.Registry
}

func (f *fleet) Fleet(_ context.Context, refs []autoscaler.Ref) ([]autoscaler.Fleet, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]autoscaler.Fleet, len(refs))
	for i, ref := range refs {
		n, ok := f.replicas[ref.Name]
		if !ok {
			out[i].Problem = "not found"
			continue
		}
		out[i].Replicas = n
		out[i].App = &registry.App{Namespace: ref.Namespace, Name: ref.Name, Kind: manifest.KindApplication, Instances: n}
		for id := range n {
			out[i].Instances = append(out[i].Instances, autoscaler.Instance{ID: id, TaskGroupID: fmt.Sprintf("%s.%d", ref.Name, id),
				Ready: true, RunningSince: t0})
		}
	}
	return out, nil
}

func (f *fleet) Usage([]string) map[string]autoscaler.Usage { return nil }

func (f *fleet) ApplyScaleDecision(ctx context.Context, w registry.ScaleWrite) (*registry.App, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	name := w.App.Name
	if f.replicas[name] != w.App.Instances {
		return nil, fmt.Errorf("%s changed since read: %w", name, errdefs.ErrConflict)
	}
	if err := f.reg.PutAutoscalerStatuses(ctx, []*registry.AutoscalerStatus{w.Status}); err != nil {
		return nil, err
	}
	f.scales = append(f.scales, fmt.Sprintf("%s %d->%d removed %v", name, f.replicas[name], w.Instances, w.Remove))
	f.replicas[name] = w.Instances
	app := *w.App
	app.Instances = w.Instances
	return &app, nil
}

func (f *fleet) size(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.replicas[name]
}

func (f *fleet) scaled() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.scales...)
}

func intp(v int) *int           { return &v }
func floatp(v float64) *float64 { return &v }

func autoscalerOf(name, target, address, query string) *manifest.Autoscaler {
	return &manifest.Autoscaler{APIVersion: "v4", KindName: "autoscaler",
		Metadata: manifest.ObjectMeta{Name: name, Namespace: ns},
		Spec: manifest.AutoscalerSpec{Target: manifest.ScaleTarget{Kind: manifest.KindApplication, Name: target},
			MinReplicas: intp(1), MaxReplicas: 5, IntervalSeconds: 10,
			Metrics: []manifest.AutoscaleMetric{{Type: manifest.MetricPrometheus, Name: "players",
				Prometheus: &manifest.PrometheusProvider{Address: address, Query: query}, TargetAverageValue: floatp(100)}},
			Behavior: &manifest.ScaleBehavior{ScaleDown: &manifest.ScaleRules{StabilizationWindowSeconds: intp(30)}}}}
}

// env runs controllers, one at a time, on a registry of the shared etcd
// and a fake clock.
type env struct {
	t     *testing.T
	reg   *registry.Registry
	clock *clockwork.FakeClock
	fleet *fleet
	// scaler is the Scaler and source the FleetSource if not the fleet.
	scaler autoscaler.Scaler
	source autoscaler.FleetSource
	stop   func()
	// planner is the controller running.
	planner *autoscaler.Controller
}

// start runs a new controller, as a new leader would.
func (e *env) start() {
	e.t.Helper()
	set, err := egress.NewSet(egress.Networks(), nil, map[string][]string{ns: {"127.0.0.0/8"}})
	if err != nil {
		e.t.Fatal(err)
	}
	var scaler autoscaler.Scaler = e.fleet
	if e.scaler != nil {
		scaler = e.scaler
	}
	var source autoscaler.FleetSource = e.fleet
	if e.source != nil {
		source = e.source
	}
	c, err := autoscaler.New(autoscaler.Config{Registry: e.reg, Fleet: source, Usage: e.fleet, Scaler: scaler, StatusWriter: e.reg,
		Egress: set, Clock: e.clock, Logger: testlog.New(e.t)})
	if err != nil {
		e.t.Fatal(err)
	}
	e.planner = c
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	e.stop = func() {
		cancel()
		if err := <-done; err != nil {
			e.t.Errorf("Run: %v", err)
		}
	}
	e.wait()
}

// wait returns once the controller sleeps.
func (e *env) wait() {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.clock.BlockUntilContext(ctx, 1); err != nil {
		e.t.Fatalf("the controller did not go back to sleep: %v", err)
	}
}

// tick advances the clock an interval: each autoscaler decides once.
func (e *env) tick() {
	e.t.Helper()
	e.clock.Advance(10 * time.Second)
	e.wait()
}

func (e *env) status(name string) *registry.AutoscalerStatus {
	e.t.Helper()
	s, err := e.reg.GetAutoscalerStatus(context.Background(), ns, name)
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// openEnv is an env on a fresh prefix of the shared etcd, the autoscalers
// created and the fleet at its sizes.
func openEnv(t *testing.T, sizes map[string]int, autoscalers ...*manifest.Autoscaler) *env {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, store.Config{Endpoints: shared.Etcd.Endpoints(), Prefix: shared.Prefix("autoscaler-test"), Sealer: shared.Sealer})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	clock := clockwork.NewFakeClockAt(t0)
	reg := registry.New(st, clock.Now)
	for _, a := range autoscalers {
		if _, err := reg.CreateAutoscaler(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	return &env{t: t, reg: reg, clock: clock, fleet: &fleet{replicas: sizes, reg: reg}}
}

// A scale-down removes the instances with the fewest sessions, read
// from Prometheus by their slot label only when it scales down.
func TestScaleDownOrder(t *testing.T) {
	prom := startPrometheus(t)
	for slot, n := range []float64{5, 0, 9, 1} {
		prom.sessions.WithLabelValues(fmt.Sprint(slot)).Set(n)
	}
	prom.set(t, 150)
	a := autoscalerOf("game", "game", prom.address, "sum(players)")
	a.Spec.Behavior.ScaleDown.StabilizationWindowSeconds = intp(0)
	a.Spec.ScaleDownOrder = &manifest.InstanceValue{Prometheus: &manifest.PrometheusProvider{Address: prom.address, Query: "sessions"}, InstanceLabel: "slot"}
	e := openEnv(t, map[string]int{"game": 4}, a)
	e.start()
	defer e.stop()
	e.tick()
	want := []string{"game 4->2 removed [1 3]"}
	if got := e.fleet.scaled(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("scales %q, want %q", got, want)
	}
	if last := e.status("game").LastScale; last == nil || len(last.Removed) != 2 || last.Removed[0].Why == "" {
		t.Errorf("last scale %+v, want the two removed with why", last)
	}
}

// A real Prometheus's players rise and fall: the size follows within
// 1..5, up at once, down only once the 30 s stabilization window has
// no higher recommendation; a controller started anew (a new leader)
// resumes from the stored status alone, neither scaling again nor
// forgetting the window; a provider that errs holds its workload's
// size and says why in the status.
func TestControllerFollowsPrometheus(t *testing.T) {
	prom := startPrometheus(t)
	prom.set(t, 250)
	ctx := context.Background()
	e := openEnv(t, map[string]int{"game": 1, "other": 2}, autoscalerOf("game", "game", prom.address, "sum(players)"),
		autoscalerOf("broken", "other", prom.address, "players{"))
	e.start()

	steps := []struct {
		players float64
		restart bool
		want    int
		why     string
	}{
		{players: 250, want: 3, why: "250 players over a target of 100 each: 3, at once (no up window)"},
		{players: 1000, want: 5, why: "10 wanted, held to maxReplicas"},
		{players: 50, want: 5, why: "1 wanted, but 5 was recommended within the down window"},
		{players: 50, restart: true, want: 5, why: "a new leader still sees 5 in the window, from the status"},
		{players: 50, want: 1, why: "the window holds only 1s now"},
		{players: 160, want: 2, why: "160 players: 2"},
	}
	for i, s := range steps {
		if s.restart {
			e.stop()
			e.start()
		}
		prom.set(t, s.players)
		before := len(e.fleet.scaled())
		e.tick()
		if got := e.fleet.size("game"); got != s.want {
			t.Fatalf("step %d (%v players): size %d, want %d: %s\nscales %v\nstatus %+v", i, s.players, got, s.want, s.why, e.fleet.scaled(), e.status("game"))
		}
		status := e.status("game")
		if status.DesiredReplicas != s.want || status.CurrentReplicas > 0 && status.Metrics[0].Current == nil {
			t.Errorf("step %d: status desired %d, metrics %+v; want %d with a value", i, status.DesiredReplicas, status.Metrics, s.want)
		}
		if s.restart && len(e.fleet.scaled()) != before {
			t.Errorf("step %d: the new leader scaled again: %v", i, e.fleet.scaled()[before:])
		}
	}
	want := []string{"game 1->3 removed []", "game 3->5 removed []", "game 5->1 removed [4 3 2 1]", "game 1->2 removed []"}
	if got := e.fleet.scaled(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("scales %q, want %q", got, want)
	}

	plan, err := e.planner.PlanAutoscaler(ctx, autoscalerOf("game", "game", prom.address, "sum(players) * 2"))
	if err != nil || plan.DesiredReplicas != 4 || e.fleet.size("game") != 2 {
		t.Errorf("plan of 320 players: %+v, %v, size %d; want 4 planned, 2 kept", plan, err, e.fleet.size("game"))
	}

	broken := e.status("broken")
	if e.fleet.size("other") != 2 || broken.DesiredReplicas != 2 || !strings.Contains(fmt.Sprintf("%+v", broken.AutoscalerStatus), "query players{") {
		t.Errorf("an erring provider: size %d, status %+v; want 2 held, the query's error said", e.fleet.size("other"), broken.AutoscalerStatus)
	}
	e.stop()
}

// deposedWriter refuses every write as a fenced store does once its
// leader was deposed.
type deposedWriter struct{}

func (deposedWriter) PutAutoscalerStatuses(context.Context, []*registry.AutoscalerStatus) error {
	return fmt.Errorf("statuses: %w", store.ErrDeposed)
}

// A status write refused by the fence ends Run with that error: a
// deposed leader stops deciding.
func TestDeposedEndsRun(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, store.Config{Endpoints: shared.Etcd.Endpoints(), Prefix: shared.Prefix("autoscaler-deposed"), Sealer: shared.Sealer})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	clock := clockwork.NewFakeClockAt(t0)
	reg := registry.New(st, clock.Now)
	if _, err := reg.CreateAutoscaler(ctx, autoscalerOf("game", "game", "http://127.0.0.1:1", "players")); err != nil {
		t.Fatal(err)
	}
	f := &fleet{replicas: map[string]int{"game": 2}, reg: reg}
	c, err := autoscaler.New(autoscaler.Config{Registry: reg, Fleet: f, Usage: f, Scaler: f, StatusWriter: deposedWriter{},
		Clock: clock, Logger: testlog.New(t)})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	if err := clock.BlockUntilContext(ctx, 1); err != nil {
		t.Fatal(err)
	}
	clock.Advance(10 * time.Second)
	select {
	case err := <-done:
		if !errors.Is(err, store.ErrDeposed) {
			t.Errorf("Run: %v, want store.ErrDeposed", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run still runs after a refused write")
	}
}

// A status whose autoscaler is gone — written by a round that began
// before the delete, or left by the last leader — is deleted: at a new
// term's first round, and when the controller sees the delete. A live
// autoscaler's status stays.
func TestOrphanStatusesAreDeleted(t *testing.T) {
	ctx := context.Background()
	e := openEnv(t, map[string]int{"gs": 2}, autoscalerOf("live", "gs", "http://127.0.0.1:1", "players"))
	lateWrite := func(name string) {
		t.Helper()
		if err := e.reg.PutAutoscalerStatuses(ctx, []*registry.AutoscalerStatus{{Namespace: ns, Name: name}}); err != nil {
			t.Fatal(err)
		}
	}
	gone := func(name string) bool {
		_, err := e.reg.GetAutoscalerStatus(ctx, ns, name)
		return errors.Is(err, errdefs.ErrNotFound)
	}
	lateWrite("left-by-the-last-leader")
	e.start()
	defer e.stop()
	if !gone("left-by-the-last-leader") {
		t.Errorf("the last term's orphan status is still there after the first round")
	}
	e.tick()
	if gone("live") {
		t.Fatalf("the live autoscaler has no status")
	}
	if err := e.reg.DeleteAutoscaler(ctx, ns, "live"); err != nil {
		t.Fatal(err)
	}
	lateWrite("live")
	e.tick()
	if !gone("live") {
		t.Errorf("the status written after the delete is still there")
	}
}
