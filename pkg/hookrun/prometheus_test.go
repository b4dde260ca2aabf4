package hookrun_test

import (
	"context"
	"github.com/bcs-mesos/bcs-mesos/internal/promtest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"

	"github.com/bcs-mesos/bcs-mesos/pkg/hook"
	"github.com/bcs-mesos/bcs-mesos/pkg/hookrun"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// startPrometheus runs a real Prometheus scraping an exporter of the
// gauge hook_test_age{pod} (set from ages) every second, waits until
// every pod's sample can be queried, and returns its address.
func startPrometheus(t *testing.T, ages map[string]float64) string {
	t.Helper()
	gauge := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "hook_test_age", Help: "An age a hook checks."}, []string{"pod"})
	for pod, age := range ages {
		gauge.WithLabelValues(pod).Set(age)
	}
	metrics := prometheus.NewRegistry()
	metrics.MustRegister(gauge)
	address := promtest.Start(t, "hooktest", promtest.Serve(t, metrics))
	promtest.Await(t, address, "hook_test_age", func(v model.Vector) bool { return len(v) == len(ages) })
	return address
}

// Prometheus metrics against a real Prometheus: the query rendered with
// the run's arguments, the value a number for one sample and a list for
// several, the conditions judging them.
func TestPrometheus(t *testing.T) {
	address := startPrometheus(t, map[string]float64{"young": 12, "old": 45})
	e := newEnv(t)
	metric := func(query, condition string) manifest.HookMetric {
		return manifest.HookMetric{Name: "age", SuccessCondition: condition,
			Provider: manifest.HookProvider{Prometheus: &manifest.PrometheusProvider{Address: "{{ args.prometheus }}", Query: query}}}
	}
	cases := []struct {
		run      string
		metric   manifest.HookMetric
		phase    hook.Phase
		value    string
		message  string // the run's, whole when it is not a prefix ending in ": "
		isPrefix bool
	}{
		{run: "passes", metric: metric(`hook_test_age{pod="{{ args.PodName }}"}`, "asInt(result) < 30"), phase: hook.Successful, value: "12"},
		{run: "fails", metric: metric(`hook_test_age{pod="old"}`, "result < 30"), phase: hook.Failed, value: "45",
			message: "metric age failed: measurement 1 of 1: successCondition result < 30 is false for 45"},
		{run: "samples", metric: metric(`sort(hook_test_age)`, "len(result) == 2 && all(result, # < 50)"), phase: hook.Successful, value: "[12, 45]"},
		{run: "no-sample", metric: metric(`hook_test_age{pod="none"}`, "len(result) > 0"), phase: hook.Failed, value: "[]",
			message: "metric age failed: measurement 1 of 1: successCondition len(result) > 0 is false for []"},
		{run: "bad-query", metric: withErrorLimit(metric(`hook_test_age{`, "true"), 0), phase: hook.Error,
			message: "metric age erred: prometheus " + address + `: query hook_test_age{: bad_data: `, isPrefix: true},
	}
	e.startRunner(nil)
	for _, c := range cases {
		// One template per run: each run is of its own template.
		tmpl := &manifest.HookTemplate{APIVersion: "v4", KindName: "hooktemplate",
			Metadata: manifest.ObjectMeta{Name: c.run, Namespace: ns},
			Spec: manifest.HookTemplateSpec{Args: []manifest.HookArg{{Name: "prometheus"}, {Name: "PodName", Value: "young"}},
				Metrics: []manifest.HookMetric{c.metric}}}
		if _, err := e.reg.PutObject(context.Background(), tmpl, -1); err != nil {
			t.Fatal(err)
		}
		e.createRunOf(c.run, c.run, manifest.HookArg{Name: "prometheus", Value: address})
	}
	for _, c := range cases {
		run := e.waitRun(c.run, "ended", func(r *registry.HookRun) bool { return r.Status.Phase.Completed() })
		got := run.Status
		if got.Phase != c.phase {
			t.Errorf("%s: %s %q, want %s", c.run, got.Phase, got.Message, c.phase)
			continue
		}
		if c.value != "" && got.MetricResults[0].Measurements[0].Value != c.value {
			t.Errorf("%s: value %q, want %q", c.run, got.MetricResults[0].Measurements[0].Value, c.value)
		}
		if c.message != "" && (c.isPrefix && !strings.HasPrefix(got.Message, c.message) || !c.isPrefix && got.Message != c.message) {
			t.Errorf("%s: message %q, want %q", c.run, got.Message, c.message)
		}
	}
}

func withErrorLimit(m manifest.HookMetric, n int) manifest.HookMetric {
	m.ConsecutiveErrorLimit = limit(n)
	return m
}

// Call and QuerySamples against a real Prometheus: Call's value is what
// a hook's measurement gets; QuerySamples keeps each series' labels, so
// that a value can be told to its instance; a scalar is refused by
// QuerySamples, and the namespace's egress policy holds for both.
func TestCallAndQuerySamples(t *testing.T) {
	address := startPrometheus(t, map[string]float64{"young": 12, "old": 45})
	ctx := context.Background()
	policy := egressSet(t, "127.0.0.0/8").Policy(ns)
	prom := func(query string) *manifest.PrometheusProvider {
		return &manifest.PrometheusProvider{Address: address, Query: query}
	}

	value, err := hookrun.Call(ctx, policy, manifest.HookProvider{Prometheus: prom(`sum(hook_test_age)`)})
	if err != nil || value != 57.0 {
		t.Errorf("Call sum: %v, %v; want 57", value, err)
	}
	if _, err := hookrun.Call(ctx, policy, manifest.HookProvider{}); err == nil {
		t.Error("Call without a provider: no error")
	}

	samples, err := hookrun.QuerySamples(ctx, policy, prom(`hook_test_age`))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, s := range samples {
		if s.Labels["job"] != "hooktest" || s.Labels["__name__"] != "hook_test_age" {
			t.Errorf("sample labels %v, want job hooktest and the metric's name", s.Labels)
		}
		got[s.Labels["pod"]] = s.Value
	}
	if len(samples) != 2 || got["young"] != 12 || got["old"] != 45 {
		t.Errorf("QuerySamples: %v, want young 12 and old 45 by their pod label", samples)
	}
	if _, err := hookrun.QuerySamples(ctx, policy, prom(`scalar(sum(hook_test_age))`)); err == nil || !strings.Contains(err.Error(), "gave a scalar, want an instant vector") {
		t.Errorf("QuerySamples of a scalar: %v, want the type named", err)
	}
	refused := egressSet(t).Policy(ns)
	if _, err := hookrun.QuerySamples(ctx, refused, prom(`hook_test_age`)); err == nil || !strings.Contains(err.Error(), "127.0.0.1") {
		t.Errorf("QuerySamples to loopback without the exception: %v, want refused naming the address", err)
	}
}
