package hookrun_test

import (
	"context"
	"log/slog"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/bcs-mesos/bcs-mesos/internal/testlog"
	"github.com/bcs-mesos/bcs-mesos/pkg/egress"
	"github.com/bcs-mesos/bcs-mesos/pkg/hook"
	"github.com/bcs-mesos/bcs-mesos/pkg/hookrun"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
	"github.com/bcs-mesos/bcs-mesos/pkg/store/storetest"
)

// One embedded etcd for the test binary; each test uses its own prefix.
var shared storetest.Shared

func TestMain(m *testing.M) { os.Exit(storetest.RunShared(m, &shared)) }

const ns = "ns-a"

// t0 is the fake clock's start.
var t0 = time.Date(2026, 11, 9, 10, 8, 49, 0, time.UTC)

// env is a registry on a fresh prefix of the shared etcd and a fake
// clock, for runners to share.
type env struct {
	t     *testing.T
	st    *store.Store
	reg   *registry.Registry
	clock *clockwork.FakeClock
	// egress is the runners' egress policies: the test servers listen on
	// loopback, which ns reaches through an allowed exception, as a
	// user's policy opens a Prometheus on 127.0.0.1.
	egress *egress.Set
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := store.Open(ctx, store.Config{Endpoints: shared.Etcd.Endpoints(), Prefix: shared.Prefix("hookrun-test"), Sealer: shared.Sealer})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	clock := clockwork.NewFakeClockAt(t0)
	return &env{t: t, st: st, reg: registry.New(st, clock.Now), clock: clock, egress: egressSet(t, "127.0.0.0/8")}
}

// egressSet refuses the default networks and allows ns allowed.
func egressSet(t *testing.T, allowed ...string) *egress.Set {
	t.Helper()
	set, err := egress.NewSet(egress.Networks(), nil, map[string][]string{ns: allowed})
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// startRunner runs a Runner until the returned stop, or the test's end;
// stop returns once it has stopped.
func (e *env) startRunner(logger *slog.Logger) (stop func()) {
	e.t.Helper()
	if logger == nil {
		logger = testlog.New(e.t)
	}
	r, err := hookrun.New(hookrun.Config{Registry: e.reg, Store: e.st, Clock: e.clock, Logger: logger, Egress: e.egress})
	if err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	var stopped atomic.Bool
	stop = func() {
		if stopped.Swap(true) {
			return
		}
		cancel()
		if err := <-done; err != nil {
			e.t.Errorf("Run: %v", err)
		}
	}
	e.t.Cleanup(stop)
	return stop
}

func (e *env) putTemplate(metrics []manifest.HookMetric, args ...manifest.HookArg) {
	e.t.Helper()
	tmpl := &manifest.HookTemplate{APIVersion: "v4", KindName: "hooktemplate",
		Metadata: manifest.ObjectMeta{Name: "test", Namespace: ns},
		Spec:     manifest.HookTemplateSpec{Args: args, Metrics: metrics}}
	// As the API stores it: its structure valid (its conditions are the
	// runner's to check, again).
	if errs := tmpl.Validate(nil); len(errs) > 0 {
		e.t.Fatal(errs)
	}
	if _, err := e.reg.PutObject(context.Background(), tmpl, -1); err != nil {
		e.t.Fatal(err)
	}
}

// createRun creates a run of template "test".
func (e *env) createRun(name string, args ...manifest.HookArg) {
	e.t.Helper()
	e.createRunOf(name, "test", args...)
}

func (e *env) createRunOf(name, template string, args ...manifest.HookArg) {
	e.t.Helper()
	run := &registry.HookRun{Namespace: ns, Name: name, Spec: hook.RunSpec{TemplateName: template, Args: args}}
	if err := e.reg.CreateHookRun(context.Background(), run); err != nil {
		e.t.Fatal(err)
	}
}

// waitRun waits until the run satisfies ok, and returns it.
func (e *env) waitRun(name string, what string, ok func(*registry.HookRun) bool) *registry.HookRun {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		run, err := e.reg.GetHookRun(context.Background(), ns, name)
		if err != nil {
			e.t.Fatal(err)
		}
		if ok(run) {
			return run
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("hook run %s: not %s after 30s: %+v", name, what, run.Status)
		}
		time.Sleep(10 * time.Millisecond) // the runner works in other goroutines
	}
}

func (e *env) waitPhase(name string, phase hook.Phase) *registry.HookRun {
	e.t.Helper()
	return e.waitRun(name, string(phase), func(r *registry.HookRun) bool { return r.Status.Phase == phase })
}

// waitTaken waits until the run's first metric took n measurements.
func (e *env) waitTaken(name string, n int) *registry.HookRun {
	e.t.Helper()
	return e.waitRun(name, "measured", func(r *registry.HookRun) bool {
		return len(r.Status.MetricResults) > 0 && r.Status.MetricResults[0].Taken() == n
	})
}

// advance moves the fake clock once a runner waits on it.
func (e *env) advance(d time.Duration) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.clock.BlockUntilContext(ctx, 1); err != nil {
		e.t.Fatalf("no runner waits on the clock: %v", err)
	}
	e.clock.Advance(d)
}

func webMetric(url string, m manifest.HookMetric) manifest.HookMetric {
	m.Provider = manifest.HookProvider{Web: &manifest.WebProvider{URL: url, JSONPath: "{$.age}"}}
	return m
}

func limit(n int) *int { return &n }
