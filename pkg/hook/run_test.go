package hook_test

import (
	"strings"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/hook"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
)

// t0 is when the runs of these tests start; the tests pass time in.
var t0 = time.Date(2026, 11, 9, 10, 8, 49, 0, time.UTC)

func web(m manifest.HookMetric) manifest.HookMetric {
	m.Provider = manifest.HookProvider{Web: &manifest.WebProvider{URL: "http://127.0.0.1:9091", JSONPath: "{$.age}"}}
	return m
}

func limit(n int) *int { return &n }

// measured is a measurement of the given phase finished at `at`.
func measured(phase hook.Phase, at time.Time) hook.Measurement {
	return hook.Measurement{Phase: phase, StartedAt: at, FinishedAt: at, Message: "judged " + string(phase)}
}

// Every limit rule: after each measurement (phases, one a minute), the
// metric's phase; then the last message.
func TestMetricLimits(t *testing.T) {
	const (
		S = hook.Successful
		F = hook.Failed
		I = hook.Inconclusive
		E = hook.Error
		R = hook.Running
	)
	cases := []struct {
		name     string
		metric   manifest.HookMetric
		measured []hook.Phase
		phases   []hook.Phase // the metric's after each
		message  string
	}{
		{name: "failureLimit 0: one failure fails", metric: web(manifest.HookMetric{Count: 3, Interval: "60s"}),
			measured: []hook.Phase{S, F}, phases: []hook.Phase{R, F}, message: "measurement 2 of 3: judged Failed"},
		{name: "failureLimit 1: the second failure fails", metric: web(manifest.HookMetric{Count: 5, Interval: "60s", FailureLimit: 1}),
			measured: []hook.Phase{F, S, F}, phases: []hook.Phase{R, R, F},
			message: "2 measurements failed, more than failureLimit 1; the last, measurement 3 of 5: judged Failed"},
		{name: "inconclusiveLimit 0", metric: web(manifest.HookMetric{Count: 3, Interval: "60s"}),
			measured: []hook.Phase{I}, phases: []hook.Phase{I}, message: "measurement 1 of 3: judged Inconclusive"},
		{name: "inconclusiveLimit 1", metric: web(manifest.HookMetric{Count: 3, Interval: "60s", InconclusiveLimit: 1}),
			measured: []hook.Phase{I, I}, phases: []hook.Phase{R, I},
			message: "2 measurements were inconclusive, more than inconclusiveLimit 1; the last, measurement 2 of 3: judged Inconclusive"},
		{name: "consecutiveErrorLimit default 4", metric: web(manifest.HookMetric{Count: 3, Interval: "60s"}),
			measured: []hook.Phase{E, E, E, E, E}, phases: []hook.Phase{R, R, R, R, E},
			message: "5 errors in a row, more than consecutiveErrorLimit 4; the last: judged Error"},
		{name: "consecutiveErrorLimit 1: a value resets the run of errors", metric: web(manifest.HookMetric{Interval: "60s", ConsecutiveErrorLimit: limit(1)}),
			measured: []hook.Phase{E, S, E, S, E, E}, phases: []hook.Phase{R, R, R, R, R, E},
			message: "2 errors in a row, more than consecutiveErrorLimit 1; the last: judged Error"},
		{name: "consecutiveErrorLimit 0: one error", metric: web(manifest.HookMetric{ConsecutiveErrorLimit: limit(0)}),
			measured: []hook.Phase{E}, phases: []hook.Phase{E}, message: "judged Error"},
		{name: "successfulLimit ends an unbounded metric", metric: web(manifest.HookMetric{Interval: "60s", SuccessfulLimit: 2, FailureLimit: 3}),
			measured: []hook.Phase{S, F, S}, phases: []hook.Phase{R, R, S}, message: "successfulLimit 2 reached at measurement 3"},
		{name: "count reached within the limits", metric: web(manifest.HookMetric{Count: 2, Interval: "60s", FailureLimit: 1}),
			measured: []hook.Phase{F, S}, phases: []hook.Phase{R, S},
			message: "2 measurements: 1 successful, 1 failed, 0 inconclusive (0 errors retried)"},
		{name: "errors do not count toward count", metric: web(manifest.HookMetric{Count: 2, Interval: "60s"}),
			measured: []hook.Phase{S, E, S}, phases: []hook.Phase{R, R, S},
			message: "2 measurements: 2 successful, 0 failed, 0 inconclusive (1 errors retried)"},
		{name: "single call: success", metric: web(manifest.HookMetric{}),
			measured: []hook.Phase{S}, phases: []hook.Phase{S}},
		{name: "single call: failure", metric: web(manifest.HookMetric{}),
			measured: []hook.Phase{F}, phases: []hook.Phase{F}, message: "measurement 1 of 1: judged Failed"},
		{name: "single call: a failure within failureLimit", metric: web(manifest.HookMetric{FailureLimit: 1}),
			measured: []hook.Phase{F}, phases: []hook.Phase{S}},
		{name: "single call: inconclusive", metric: web(manifest.HookMetric{}),
			measured: []hook.Phase{I}, phases: []hook.Phase{I}},
		{name: "single call: an error is retried", metric: web(manifest.HookMetric{}),
			measured: []hook.Phase{E, S}, phases: []hook.Phase{R, S}},
		{name: "interval alone: until stopped", metric: web(manifest.HookMetric{Interval: "60s"}),
			measured: []hook.Phase{S, S, S, S, S, S, S, S, S, S, S, S}, phases: []hook.Phase{R, R, R, R, R, R, R, R, R, R, R, R}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.metric.Name = "webtest"
			metrics := []manifest.HookMetric{c.metric}
			s := hook.Start(hook.RunSpec{Metrics: metrics}, t0)
			if s.Phase != hook.Pending {
				t.Fatalf("started %s: %s", s.Phase, s.Message)
			}
			for i, phase := range c.measured {
				s.Record(metrics, 0, measured(phase, t0.Add(time.Duration(i)*time.Minute)))
				if got := s.MetricResults[0].Phase; got != c.phases[i] {
					t.Fatalf("after measurement %d (%s): metric %s, want %s (%s)", i+1, phase, got, c.phases[i], s.MetricResults[0].Message)
				}
			}
			r := s.MetricResults[0]
			if c.message != "" && r.Message != c.message {
				t.Errorf("message\n got %q\nwant %q", r.Message, c.message)
			}
			if r.Taken() != len(c.measured) || len(r.Measurements) != min(len(c.measured), hook.MaxMeasurements) {
				t.Errorf("taken %d, kept %d measurements, after %d", r.Taken(), len(r.Measurements), len(c.measured))
			}
			if last := r.Measurements[len(r.Measurements)-1]; !last.FinishedAt.Equal(t0.Add(time.Duration(len(c.measured)-1) * time.Minute)) {
				t.Errorf("the last measurement kept is not the latest: %v", last.FinishedAt)
			}
			// The run follows its one metric.
			want := c.phases[len(c.phases)-1]
			if s.Phase != want {
				t.Errorf("run %s, want %s", s.Phase, want)
			}
			if want.Completed() && !s.FinishedAt.Equal(r.Measurements[len(r.Measurements)-1].FinishedAt) {
				t.Errorf("run finished at %v", s.FinishedAt)
			}
		})
	}
}

// When measurements are due: initialDelay from the run's start, interval
// after the previous one finished, sooner after an error.
func TestNext(t *testing.T) {
	cases := []struct {
		name     string
		metric   manifest.HookMetric
		measured []hook.Measurement
		now      time.Time
		due      bool
		next     time.Time // when not due
	}{
		{name: "first at the start", metric: web(manifest.HookMetric{}), now: t0, due: true},
		{name: "initialDelay not yet", metric: web(manifest.HookMetric{InitialDelay: "30s"}), now: t0.Add(29 * time.Second), next: t0.Add(30 * time.Second)},
		{name: "initialDelay reached", metric: web(manifest.HookMetric{InitialDelay: "30s"}), now: t0.Add(30 * time.Second), due: true},
		{name: "interval after the last one finished", metric: web(manifest.HookMetric{Count: 3, Interval: "60s", InitialDelay: "30s"}),
			measured: []hook.Measurement{{Phase: hook.Successful, StartedAt: t0.Add(30 * time.Second), FinishedAt: t0.Add(32 * time.Second)}},
			now:      t0.Add(91 * time.Second), next: t0.Add(92 * time.Second)},
		{name: "interval reached", metric: web(manifest.HookMetric{Count: 3, Interval: "60s"}),
			measured: []hook.Measurement{measured(hook.Successful, t0)}, now: t0.Add(time.Minute), due: true},
		{name: "overdue after downtime: one measurement now", metric: web(manifest.HookMetric{Count: 3, Interval: "60s"}),
			measured: []hook.Measurement{measured(hook.Successful, t0)}, now: t0.Add(time.Hour), due: true},
		{name: "an error is retried after ErrorRetryInterval", metric: web(manifest.HookMetric{Count: 3, Interval: "60s"}),
			measured: []hook.Measurement{measured(hook.Error, t0)}, now: t0, next: t0.Add(hook.ErrorRetryInterval)},
		{name: "or after a shorter interval", metric: web(manifest.HookMetric{Count: 3, Interval: "5s"}),
			measured: []hook.Measurement{measured(hook.Error, t0)}, now: t0, next: t0.Add(5 * time.Second)},
		{name: "a single call's error", metric: web(manifest.HookMetric{}),
			measured: []hook.Measurement{measured(hook.Error, t0)}, now: t0, next: t0.Add(hook.ErrorRetryInterval)},
		{name: "an ended metric is not due", metric: web(manifest.HookMetric{}),
			measured: []hook.Measurement{measured(hook.Successful, t0)}, now: t0.Add(time.Hour)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.metric.Name = "webtest"
			metrics := []manifest.HookMetric{c.metric}
			s := hook.Start(hook.RunSpec{Metrics: metrics}, t0)
			for _, m := range c.measured {
				s.Record(metrics, 0, m)
			}
			due, next := s.Next(metrics, c.now)
			if (len(due) == 1) != c.due || !next.Equal(c.next) {
				t.Errorf("due %v, next %v; want due %v, next %v", due, next, c.due, c.next)
			}
		})
	}
}

func TestNextOfSeveralMetrics(t *testing.T) {
	metrics := []manifest.HookMetric{
		web(manifest.HookMetric{Name: "now"}),
		web(manifest.HookMetric{Name: "later", InitialDelay: "1m"}),
		web(manifest.HookMetric{Name: "soon", InitialDelay: "10s"}),
	}
	s := hook.Start(hook.RunSpec{Metrics: metrics}, t0)
	due, next := s.Next(metrics, t0)
	if len(due) != 1 || due[0] != 0 || !next.Equal(t0.Add(10*time.Second)) {
		t.Errorf("due %v, next %v; want [0] and t0+10s", due, next)
	}
}

// The run's phase: Pending, Running, then the worst metric's — Error
// over Failed over Inconclusive — or Successful when all are.
func TestRunPhase(t *testing.T) {
	seed := manifest.HookMetric{Name: "webtest", Count: 2, Interval: "60s", SuccessCondition: "asInt(result) < 30"}
	metrics := []manifest.HookMetric{web(seed), web(manifest.HookMetric{Name: "other", Interval: "60s", InconclusiveLimit: 5})}
	s := hook.Start(hook.RunSpec{Metrics: metrics}, t0)
	if s.Phase != hook.Pending || !s.StartedAt.Equal(t0) {
		t.Fatalf("started: %+v", s)
	}
	s.Record(metrics, 1, measured(hook.Inconclusive, t0))
	if s.Phase != hook.Running {
		t.Fatalf("after a measurement: %s", s.Phase)
	}
	// Seed 003's run: 45 is not under 30.
	s.Record(metrics, 0, hook.Measure(metrics[0], "45", nil, t0, t0.Add(time.Second)))
	want := "metric webtest failed: measurement 1 of 2: successCondition asInt(result) < 30 is false for 45"
	if s.Phase != hook.Failed || s.Message != want || !s.FinishedAt.Equal(t0.Add(time.Second)) {
		t.Fatalf("run %s %q at %v; want Failed %q", s.Phase, s.Message, s.FinishedAt, want)
	}
	if r := s.MetricResults[1]; r.Phase != hook.Terminated || r.Message != "stopped: metric webtest failed" {
		t.Errorf("the other metric: %s %q", r.Phase, r.Message)
	}
	if due, next := s.Next(metrics, t0.Add(time.Hour)); due != nil || !next.IsZero() {
		t.Errorf("an ended run is due: %v %v", due, next)
	}
	before := s.MetricResults[1].Taken()
	s.Record(metrics, 1, measured(hook.Successful, t0.Add(time.Minute)))
	if s.MetricResults[1].Taken() != before {
		t.Error("a measurement was recorded in an ended run")
	}

	worst := []struct {
		phases []hook.Phase // the measurements of three single-call metrics
		want   hook.Phase
		name   string
	}{
		{[]hook.Phase{hook.Inconclusive, hook.Failed, hook.Error}, hook.Error, "c"},
		{[]hook.Phase{hook.Inconclusive, hook.Failed, hook.Failed}, hook.Failed, "b"},
		{[]hook.Phase{hook.Successful, hook.Inconclusive, hook.Successful}, hook.Inconclusive, "b"},
		{[]hook.Phase{hook.Successful, hook.Successful, hook.Successful}, hook.Successful, ""},
	}
	for _, w := range worst {
		metrics := []manifest.HookMetric{web(manifest.HookMetric{Name: "a"}), web(manifest.HookMetric{Name: "b"}),
			web(manifest.HookMetric{Name: "c", ConsecutiveErrorLimit: limit(0)})}
		// Judged together: the status as it would be with all three in.
		s := hook.Start(hook.RunSpec{Metrics: metrics}, t0)
		for i, p := range w.phases {
			s.MetricResults[i].Phase = hook.Running
			if i < len(w.phases)-1 {
				s.MetricResults[i].Measurements = []hook.Measurement{measured(p, t0)}
				s.MetricResults[i].Phase = p
			}
		}
		s.Record(metrics, 2, measured(w.phases[2], t0))
		if s.Phase != w.want || (w.name != "" && !strings.HasPrefix(s.Message, "metric "+w.name+" ")) {
			t.Errorf("metrics %v: run %s %q, want %s naming %s", w.phases, s.Phase, s.Message, w.want, w.name)
		}
	}
}

func TestTerminate(t *testing.T) {
	metrics := []manifest.HookMetric{web(manifest.HookMetric{Name: "forever", Interval: "60s"})}
	s := hook.Start(hook.RunSpec{Metrics: metrics}, t0)
	s.Record(metrics, 0, measured(hook.Successful, t0))
	if !s.Terminate(t0.Add(time.Minute)) {
		t.Fatal("Terminate changed nothing")
	}
	if s.Phase != hook.Terminated || !s.FinishedAt.Equal(t0.Add(time.Minute)) || s.MetricResults[0].Phase != hook.Terminated {
		t.Errorf("terminated: %+v", s)
	}
	if due, next := s.Next(metrics, t0.Add(time.Hour)); due != nil || !next.IsZero() {
		t.Errorf("a terminated run is due: %v %v", due, next)
	}
	ended := hook.Start(hook.RunSpec{Metrics: metrics[:0:0]}, t0)
	if ended.Terminate(t0) || ended.Phase != hook.Error {
		t.Errorf("Terminate changed an ended run: %+v", ended)
	}
}

// A spec that cannot run ends in Error at once, naming the field.
func TestStartRefuses(t *testing.T) {
	cases := []struct {
		name    string
		spec    hook.RunSpec
		message string
	}{
		{name: "no metrics", spec: hook.RunSpec{}, message: "cannot run: spec.metrics: required"},
		{name: "a bad condition", spec: hook.RunSpec{Metrics: []manifest.HookMetric{web(manifest.HookMetric{Name: "m", FailureCondition: "result >"})}},
			message: "cannot run: spec.metrics[0].failureCondition: unexpected token EOF (column 8)"},
		{name: "a bad duration", spec: hook.RunSpec{Metrics: []manifest.HookMetric{web(manifest.HookMetric{Name: "m", Interval: "soon"})}},
			message: `cannot run: spec.metrics[0].interval: want a duration such as "30s" or "2m", got "soon"`},
		{name: "an argument without a value", spec: hook.RunSpec{
			Args: []manifest.HookArg{{Name: "port", Value: "9091"}},
			Metrics: []manifest.HookMetric{{Name: "m", Provider: manifest.HookProvider{
				Web: &manifest.WebProvider{URL: "http://{{ args.PodIP }}:{{ args.port }}/"}}}}},
			message: "cannot run: spec.metrics[0].provider.web.url: no value for PodIP"},
	}
	for _, c := range cases {
		s := hook.Start(c.spec, t0)
		if s.Phase != hook.Error || s.Message != c.message || !s.FinishedAt.Equal(t0) {
			t.Errorf("%s: %s %q; want Error %q", c.name, s.Phase, s.Message, c.message)
		}
	}
}

func TestRenderProvider(t *testing.T) {
	p := manifest.HookProvider{Web: &manifest.WebProvider{
		URL: "http://{{ args.PodIP }}:9091/check", Method: "POST", Body: `{"pod":"{{ args.PodName }}"}`,
		Headers: []manifest.HookHeader{{Key: "Authorization", Value: "Bearer {{args.token}}"}},
	}}
	args := []manifest.HookArg{{Name: "PodIP", Value: "127.0.0.1"}, {Name: "PodName", Value: "gs-0"}, {Name: "token", Value: "s3cret"}}
	got, errs := hook.RenderProvider("provider", p, args)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	w := got.Web
	if w.URL != "http://127.0.0.1:9091/check" || w.Body != `{"pod":"gs-0"}` || w.Headers[0].Value != "Bearer s3cret" {
		t.Errorf("rendered %+v", w)
	}
	if p.Web.Headers[0].Value != "Bearer {{args.token}}" || p.Web.URL != "http://{{ args.PodIP }}:9091/check" {
		t.Errorf("the template's provider was changed: %+v", p.Web)
	}
	prom, errs := hook.RenderProvider("provider", manifest.HookProvider{Prometheus: &manifest.PrometheusProvider{
		Address: "http://{{ args.host }}:9090", Query: `up{pod="{{ args.PodName }}"}`}}, args)
	if want := "provider.prometheus.address: no value for host"; errs.Error() != want || prom.Prometheus.Query != `up{pod="gs-0"}` {
		t.Errorf("errors %q (want %q), query %q", errs.Error(), want, prom.Prometheus.Query)
	}
}
