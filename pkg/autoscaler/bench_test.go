package autoscaler_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/bcs-mesos/bcs-mesos/pkg/autoscaler"
	"github.com/bcs-mesos/bcs-mesos/pkg/egress"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// The controller cycle benchmark: 1,000 autoscalers of 100 instances
// each (100k instances), every one due once per 15 s interval, driven
// through Run on a fake clock in 10 ms steps, so that the autoscalers
// fall due at their own phases as on a real clock. The scheduler's side
// (fleets, usage, scales) and the registry (specs listed and decoded
// from JSON, statuses encoded to JSON) are in memory; each autoscaler's
// Prometheus metric is a real HTTP call, through its namespace's egress
// policy, to a local httptest server answering the query API, which runs
// in this process: its CPU is counted too.
const (
	benchAutoscalers = 1000
	benchInstances   = 100
	benchInterval    = 15 * time.Second
	benchStep        = 10 * time.Millisecond
)

// BenchmarkControllerCycle/decisions is the measure; with
// probes, every autoscaler also has an allocation probe reading its
// instances' sessions from Prometheus every 10 s (one query of 100
// samples; nothing to change), to show what probes add.
func BenchmarkControllerCycle(b *testing.B) {
	b.Run("decisions", func(b *testing.B) { benchmarkCycle(b, false) })
	b.Run("decisions+probes", func(b *testing.B) { benchmarkCycle(b, true) })
}

func benchmarkCycle(b *testing.B, probes bool) {
	prom := startFakePrometheus(b)
	reg := newMemRegistry(b, prom.URL, probes)
	clock := clockwork.NewFakeClockAt(t0)
	fleets := newMemFleets(clock)
	set, err := egress.NewSet(egress.Networks(), nil, map[string][]string{"bench": {"127.0.0.0/8"}})
	if err != nil {
		b.Fatal(err)
	}
	c, err := autoscaler.New(autoscaler.Config{Registry: reg, Fleet: fleets, Usage: fleets, Scaler: fleets, StatusWriter: reg,
		Egress: set, Clock: clock, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), UsageInterval: benchInterval})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			b.Errorf("Run: %v", err)
		}
	}()
	cycle := func() {
		for range benchInterval / benchStep {
			if err := clock.BlockUntilContext(ctx, 1); err != nil {
				b.Fatal(err)
			}
			clock.Advance(benchStep)
		}
		if err := clock.BlockUntilContext(ctx, 1); err != nil {
			b.Fatal(err)
		}
	}
	cycle() // the first decisions: statuses created, fleets at their sizes
	fleets.reset()
	reg.reset()
	prom.readings.Store(0)
	start := cpuTime()
	b.ResetTimer()
	for range b.N {
		prom.cycle.Add(1)
		cycle()
	}
	b.StopTimer()
	cpu := cpuTime() - start
	perCycle := float64(cpu.Nanoseconds()) / float64(b.N)
	b.ReportMetric(perCycle, "cpu-ns/cycle")
	corePercent := perCycle / float64(benchInterval.Nanoseconds()) * 100
	b.ReportMetric(corePercent, "core-%@15s")
	if !probes && corePercent >= 5 {
		b.Errorf("a cycle takes %.1f %% of one core at a 15 s interval, want under 5 %%", corePercent)
	}
	b.ReportMetric(float64(fleets.calls.Load())/float64(b.N), "fleet-calls/cycle")
	b.ReportMetric(float64(fleets.scales.Load())/float64(b.N), "scales/cycle")
	b.ReportMetric(float64(reg.lists.Load())/float64(b.N), "lists/cycle")
	b.ReportMetric(float64(reg.writes.Load())/float64(b.N), "status-writes/cycle")
	// Statuses are stored only when they show something new: each
	// decision reads its metric, so the readings count the decisions.
	if n := prom.readings.Load(); n < int64(b.N*benchAutoscalers) {
		b.Errorf("%d decisions over %d cycles, want one per autoscaler per cycle", n, b.N)
	}
}

// cpuTime is the CPU this process used so far, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// fakePrometheus answers instant queries sessions{as="N"} with 100
// samples of 0, one per instance, and players{as="N"}: 5,000 players
// (100 instances at 50 each) for most, and for one autoscaler in ten a
// count that alternates each cycle between 3,000 and 6,000, so that a
// tenth of the fleets scale every cycle, up or down.
type fakePrometheus struct {
	*httptest.Server
	cycle atomic.Int64
	// readings counts the players queries: one per autoscaler decision.
	readings atomic.Int64
}

func startFakePrometheus(b *testing.B) *fakePrometheus {
	p := &fakePrometheus{}
	samples := make([]string, benchInstances)
	for id := range samples {
		samples[id] = fmt.Sprintf(`{"metric":{"__name__":"sessions","instance":"%d"},"value":[%d,"0"]}`, id, t0.Unix())
	}
	sessions := []byte(`{"status":"success","data":{"resultType":"vector","result":[` + strings.Join(samples, ",") + `]}}`)
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		query := r.Form.Get("query")
		if strings.HasPrefix(query, "sessions") {
			w.Write(sessions)
			return
		}
		p.readings.Add(1)
		var n int
		fmt.Sscanf(strings.TrimPrefix(query, "players{as=\""), "%d", &n)
		players := 5000
		if n%10 == 0 {
			players = 3000 + 3000*int(p.cycle.Load()%2)
		}
		fmt.Fprintf(w, `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[%d,"%d"]}]}}`, t0.Unix(), players)
	}))
	b.Cleanup(p.Close)
	return p
}

// benchAutoscaler is autoscaler n of workload gs-n: players per
// instance, a buffer of 10 %, and for one in three the CPU against 60 %
// of the request; those that scale every cycle have no down window.
// With probe, an allocation probe reads its sessions.
func benchAutoscaler(n int, address string, probe bool) *manifest.Autoscaler {
	a := &manifest.Autoscaler{APIVersion: "v4", KindName: "autoscaler",
		Metadata: manifest.ObjectMeta{Name: fmt.Sprintf("as-%d", n), Namespace: "bench"},
		Spec: manifest.AutoscalerSpec{Target: manifest.ScaleTarget{Kind: manifest.KindDeployment, Name: fmt.Sprintf("gs-%d", n)},
			MinReplicas: intp(10), MaxReplicas: 200, IntervalSeconds: int(benchInterval / time.Second),
			Metrics: []manifest.AutoscaleMetric{
				{Type: manifest.MetricPrometheus, Name: "players", TargetAverageValue: floatp(50),
					Prometheus: &manifest.PrometheusProvider{Address: address, Query: fmt.Sprintf("players{as=%q}", fmt.Sprint(n))}},
				{Type: manifest.MetricBuffer, Buffer: &manifest.BufferMetric{BufferSize: *manifest.Percent(10)}}}}}
	if n%3 == 0 {
		a.Spec.Metrics = append(a.Spec.Metrics, manifest.AutoscaleMetric{Type: manifest.MetricResource,
			Resource: &manifest.ResourceMetric{Name: "cpu", TargetAverageUtilization: intp(60)}})
	}
	if probe {
		a.Spec.Allocation = &manifest.AllocationProbe{AllocatedCondition: "result > 0", IntervalSeconds: 10,
			Probe: manifest.InstanceValue{InstanceLabel: "instance",
				Prometheus: &manifest.PrometheusProvider{Address: address, Query: fmt.Sprintf("sessions{as=%q}", fmt.Sprint(n))}}}
	}
	if n%10 == 0 {
		a.Spec.Behavior = &manifest.ScaleBehavior{ScaleDown: &manifest.ScaleRules{StabilizationWindowSeconds: intp(0)}}
	}
	return a
}

// memRegistry keeps the autoscalers as the store does, in JSON: each
// listing decodes them, each status write encodes them.
type memRegistry struct {
	specs                   []byte
	lists, writes, statuses atomic.Int64
	mu                      sync.Mutex
	stored                  map[string][]byte
}

func newMemRegistry(b *testing.B, address string, probes bool) *memRegistry {
	objects := make([]*registry.Object, benchAutoscalers)
	for n := range objects {
		a := benchAutoscaler(n, address, probes)
		if errs := a.Validate(nil); len(errs) > 0 {
			b.Fatalf("autoscaler %d: %v", n, errs)
		}
		spec, err := json.Marshal(a)
		if err != nil {
			b.Fatal(err)
		}
		objects[n] = &registry.Object{Kind: manifest.KindAutoscaler, Namespace: "bench", Name: a.Metadata.Name, Spec: spec, CreatedAt: t0}
	}
	specs, err := json.Marshal(objects)
	if err != nil {
		b.Fatal(err)
	}
	return &memRegistry{specs: specs, stored: map[string][]byte{}}
}

func (r *memRegistry) reset() { r.lists.Store(0); r.writes.Store(0); r.statuses.Store(0) }

func (r *memRegistry) ListAutoscalers(context.Context, string) ([]*registry.Object, error) {
	r.lists.Add(1)
	var objects []*registry.Object
	if err := json.Unmarshal(r.specs, &objects); err != nil {
		return nil, err
	}
	for _, o := range objects {
		o.Revision = 1
	}
	return objects, nil
}

func (r *memRegistry) ListAutoscalerStatuses(context.Context, string) ([]*registry.AutoscalerStatus, error) {
	return nil, nil
}

func (r *memRegistry) GetAutoscalerStatus(_ context.Context, namespace, name string) (*registry.AutoscalerStatus, error) {
	return nil, fmt.Errorf("status %s/%s: %w", namespace, name, errdefs.ErrNotFound)
}

func (r *memRegistry) PutAutoscalerStatuses(_ context.Context, statuses []*registry.AutoscalerStatus) error {
	r.writes.Add(1)
	for _, s := range statuses {
		if err := r.put(s); err != nil {
			return err
		}
	}
	return nil
}

func (r *memRegistry) put(s *registry.AutoscalerStatus) error {
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	r.statuses.Add(1)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stored[s.Namespace+"/"+s.Name] = data
	return nil
}

func (r *memRegistry) DeleteOrphanStatus(context.Context, string, string) error { return nil }

func (r *memRegistry) Allocations(context.Context, string, string) ([]*registry.Allocation, error) {
	return nil, nil
}

func (r *memRegistry) Allocate(context.Context, registry.Allocation) (*registry.Allocation, error) {
	return nil, errdefs.ErrConflict
}

func (r *memRegistry) Release(context.Context, string, string, int) error { return errdefs.ErrNotFound }

// SetUsageReport is never called: every bench fleet reports its usage.
func (r *memRegistry) SetUsageReport(_ context.Context, namespace, name string, _ bool, _ int64) (*registry.App, error) {
	return nil, fmt.Errorf("%s/%s: the bench's usage reports are on from the start", namespace, name)
}

// AppsReportingUsage answers none: the sweep has nothing to turn off.
func (r *memRegistry) AppsReportingUsage(context.Context) ([]*registry.App, error) { return nil, nil }

// memFleets are the scheduler's side: each workload's instances, all
// ready, running for an hour, requesting one core, using 0.6 of it
// (60 %: the resource metric holds its size), and the scaler that
// resizes them.
type memFleets struct {
	clock         clockwork.Clock
	mu            sync.Mutex
	fleets        map[string]*autoscaler.Fleet
	usage         map[string]autoscaler.Usage
	calls, scales atomic.Int64
}

func newMemFleets(clock clockwork.Clock) *memFleets {
	f := &memFleets{clock: clock, fleets: map[string]*autoscaler.Fleet{}, usage: map[string]autoscaler.Usage{}}
	for n := range benchAutoscalers {
		name := fmt.Sprintf("gs-%d", n)
		f.fleets[name] = &autoscaler.Fleet{}
		f.resize(name, benchInstances)
	}
	return f
}

func (f *memFleets) reset() { f.calls.Store(0); f.scales.Store(0) }

// resize sets a fleet's size; the caller holds mu or is alone.
func (f *memFleets) resize(name string, replicas int) {
	fl := f.fleets[name]
	fl.Replicas = replicas
	for id := len(fl.Instances); id < replicas; id++ {
		tg := fmt.Sprintf("bench.%s.%d.1", name, id)
		fl.Instances = append(fl.Instances, autoscaler.Instance{ID: id, TaskGroupID: tg, Ready: true,
			RunningSince: t0.Add(-time.Hour), CPUs: 1, MemMB: 256})
		f.usage[tg] = autoscaler.Usage{CPUCores: 0.6, MemBytes: 128 << 20}
	}
	fl.Instances = fl.Instances[:replicas]
	fl.App = &registry.App{Namespace: "bench", Name: name, Kind: manifest.KindDeployment, Instances: replicas, UsageReport: true}
}

func (f *memFleets) Fleet(_ context.Context, refs []autoscaler.Ref) ([]autoscaler.Fleet, error) {
	f.calls.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]autoscaler.Fleet, len(refs))
	for i, ref := range refs {
		out[i] = *f.fleets[ref.Name]
	}
	return out, nil
}

// Usage answers as if every report had just come.
func (f *memFleets) Usage(groups []string) map[string]autoscaler.Usage {
	now := f.clock.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[string]autoscaler.Usage, len(groups))
	for _, g := range groups {
		if u, ok := f.usage[g]; ok {
			u.Received = now
			out[g] = u
		}
	}
	return out
}

func (f *memFleets) ApplyScaleDecision(_ context.Context, w registry.ScaleWrite) (*registry.App, error) {
	f.scales.Add(1)
	if _, err := json.Marshal(w.Status); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.resize(w.App.Name, w.Instances)
	return f.fleets[w.App.Name].App, nil
}
