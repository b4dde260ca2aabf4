package hookrun_test

import (
	"context"
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	promapi "github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/model"

	"github.com/bcs-mesos/bcs-mesos/pkg/hook"
	"github.com/bcs-mesos/bcs-mesos/pkg/hookrun"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

const prometheusBinary = "/usr/bin/prometheus"

// startPrometheus runs a real Prometheus scraping an exporter of the
// gauge hook_test_age{pod} (set from ages) every second, waits until
// every pod's sample can be queried, and returns its address.
func startPrometheus(t *testing.T, ages map[string]float64) string {
	t.Helper()
	if _, err := os.Stat(prometheusBinary); err != nil {
		t.Fatalf("%s: %v (scripts/test-deps installs Debian's prometheus)", prometheusBinary, err)
	}
	gauge := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "hook_test_age", Help: "An age a hook checks."}, []string{"pod"})
	for pod, age := range ages {
		gauge.WithLabelValues(pod).Set(age)
	}
	metrics := prometheus.NewRegistry()
	metrics.MustRegister(gauge)
	exporter := httptest.NewServer(promhttp.HandlerFor(metrics, promhttp.HandlerOpts{}))
	t.Cleanup(exporter.Close)

	dir := t.TempDir()
	config := fmt.Sprintf("global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: hooktest\n    static_configs:\n      - targets: [%q]\n",
		strings.TrimPrefix(exporter.URL, "http://"))
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	cmd := exec.Command(prometheusBinary, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+addr)
	logFile, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})

	address := "http://" + addr
	client, err := promapi.NewClient(promapi.Config{Address: address})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		v, _, _, err := promv1.NewAPI(client).Query(ctx, "hook_test_age", time.Time{})
		cancel()
		if vec, ok := v.(model.Vector); err == nil && ok && len(vec) == len(ages) {
			return address
		}
		select {
		case err := <-exited:
			log, _ := os.ReadFile(logFile.Name())
			t.Fatalf("prometheus exited: %v\n%s", err, log)
		case <-time.After(200 * time.Millisecond): // scrapes are real time
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(logFile.Name())
			t.Fatalf("hook_test_age not queryable after 60s (last: %v, %v)\n%s", v, err, log)
		}
	}
}

// freeAddr returns a loopback address no one listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
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
