package hook_test

import (
	"strings"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/hook"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
)

// seedBody is seed 003's example answer of the web hook.
const seedBody = `{"name":"bryan","male":"yes","age":45}`

func TestJudge(t *testing.T) {
	cases := []struct {
		name             string
		success, failure string
		result           any
		want             hook.Phase
		message          string // the whole message
	}{
		{name: "no condition", result: "anything", want: hook.Successful},
		{name: "seed: age under 30", success: "asInt(result) < 30", result: "29", want: hook.Successful},
		{name: "seed: age 45", success: "asInt(result) < 30", result: "45", want: hook.Failed,
			message: "successCondition asInt(result) < 30 is false for 45"},
		{name: "string equality", success: `result == "ok"`, result: "ok", want: hook.Successful},
		{name: "string inequality", success: `result == "ok"`, result: "down", want: hook.Failed,
			message: `successCondition result == "ok" is false for down`},
		{name: "len of a string", success: "len(result) > 0", result: "", want: hook.Failed,
			message: "successCondition len(result) > 0 is false for "},
		{name: "failure only, true", failure: "asInt(result) > 40", result: "45", want: hook.Failed,
			message: "failureCondition asInt(result) > 40 is true for 45"},
		{name: "failure only, false", failure: "asInt(result) > 40", result: "12", want: hook.Successful},
		{name: "both, failure holds", success: "asInt(result) < 30", failure: "asInt(result) > 40", result: "45", want: hook.Failed,
			message: "failureCondition asInt(result) > 40 is true for 45"},
		{name: "both, success holds", success: "asInt(result) < 30", failure: "asInt(result) > 40", result: "12", want: hook.Successful},
		{name: "both, neither holds", success: "asInt(result) < 30", failure: "asInt(result) > 40", result: "35", want: hook.Inconclusive,
			message: "neither successCondition asInt(result) < 30 nor failureCondition asInt(result) > 40 is true for 35"},
		{name: "asInt of a non-number", success: "asInt(result) < 30", result: "abc", want: hook.Error,
			message: `successCondition asInt(result) < 30: asInt: "abc" is not a number (column 1) (value abc)`},
		{name: "asInt of a decimal string truncates", success: "asInt(result) == 29", result: "29.7", want: hook.Successful},
		{name: "asFloat of a string", success: "asFloat(result) < 0.5", result: "0.25", want: hook.Successful},
		// Prometheus: a float64, a list of samples, an empty list.
		{name: "prometheus scalar", success: "result < 30", result: 12.5, want: hook.Successful},
		{name: "prometheus asInt truncates", success: "asInt(result) < 30", result: 29.9, want: hook.Successful},
		{name: "prometheus samples, all", success: "all(result, # < 30)", result: []float64{1, 31}, want: hook.Failed,
			message: "successCondition all(result, # < 30) is false for [1, 31]"},
		{name: "prometheus no sample", success: "len(result) > 0", result: []float64{}, want: hook.Failed,
			message: "successCondition len(result) > 0 is false for []"},
		{name: "asInt of a list", success: "asInt(result) < 30", result: []float64{1, 2}, want: hook.Error,
			message: "successCondition asInt(result) < 30: asInt: the value is a list of 2 samples, not one number (len(result) and all(result, # < 30) read lists) (column 1) (value [1, 2])"},
		{name: "a condition not bool at run time", success: "result", result: "45", want: hook.Error},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := manifest.HookMetric{Name: "m", SuccessCondition: c.success, FailureCondition: c.failure}
			phase, message := hook.Judge(m, c.result)
			if phase != c.want {
				t.Fatalf("phase %s (%q), want %s", phase, message, c.want)
			}
			if c.message != "" && message != c.message {
				t.Errorf("message\n got %q\nwant %q", message, c.message)
			}
		})
	}
}

func TestMeasure(t *testing.T) {
	start := time.Date(2026, 11, 9, 10, 8, 49, 0, time.UTC)
	m := manifest.HookMetric{Name: "webtest", SuccessCondition: "asInt(result) < 30"}
	got := hook.Measure(m, "45", nil, start, start.Add(time.Second))
	want := hook.Measurement{Value: "45", Phase: hook.Failed, StartedAt: start, FinishedAt: start.Add(time.Second),
		Message: "successCondition asInt(result) < 30 is false for 45"}
	if got != want {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	got = hook.Measure(m, nil, errString("GET http://x: connection refused"), start, start)
	if got.Phase != hook.Error || got.Message != "GET http://x: connection refused" || got.Value != "" {
		t.Errorf("an error: got %+v", got)
	}
	long := strings.Repeat("x", 5000)
	if got := hook.Measure(manifest.HookMetric{}, long, nil, start, start); len(got.Value) > hook.MaxValueBytes+len("…") {
		t.Errorf("a long value is kept whole: %d bytes", len(got.Value))
	}
}

type errString string

func (e errString) Error() string { return string(e) }

func TestJSONPath(t *testing.T) {
	cases := []struct {
		body, path, want, err string
	}{
		{body: seedBody, path: "{$.age}", want: "45"},
		{body: seedBody, path: "{.name}", want: "bryan"},
		{body: `{"data":{"ok":true,"n":12345678901234567890}}`, path: "{$.data.n}", want: "12345678901234567890"},
		{body: `{"data":{"ok":true}}`, path: "{$.data.ok}", want: "true"},
		{body: `{"items":[{"v":1},{"v":2}]}`, path: "{$.items[1].v}", want: "2"},
		{body: seedBody, path: "{$.height}", err: "jsonPath {$.height}: height is not found"},
		{body: "<html>", path: "{$.age}", err: "jsonPath {$.age}: the body (6 bytes) is not JSON (at byte 1)"},
		{body: `{"secret":"victim-bytes"}`, path: "{$.secret[?(@.a)]}", err: "jsonPath {$.secret[?(@.a)]}: it does not apply to the body (25 bytes)"},
		{body: seedBody, path: "{$.age", err: "jsonPath {$.age: unclosed action"},
	}
	for _, c := range cases {
		got, err := hook.JSONPath([]byte(c.body), c.path)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s on %s: error %v, want one containing %q", c.path, c.body, err, c.err)
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("%s on %s: %q, %v; want %q", c.path, c.body, got, err, c.want)
		}
	}
}

func TestCheck(t *testing.T) {
	tmpl := &manifest.HookTemplate{Spec: manifest.HookTemplateSpec{Metrics: []manifest.HookMetric{
		{Name: "good", SuccessCondition: "asInt(result) < 30", FailureCondition: `result == "down"`,
			Provider: manifest.HookProvider{Web: &manifest.WebProvider{URL: "http://x", JSONPath: "{$.age}"}}},
		{Name: "bad", SuccessCondition: "asInt(result) <", FailureCondition: "asInt(result)",
			Provider: manifest.HookProvider{Web: &manifest.WebProvider{URL: "http://x", JSONPath: "{$.age"}}},
		{Name: "unknown", SuccessCondition: "nope(result)",
			Provider: manifest.HookProvider{Prometheus: &manifest.PrometheusProvider{Address: "http://p", Query: "up"}}},
	}}}
	got := hook.Check(tmpl).Messages()
	want := []string{
		"spec.metrics[1].successCondition: unexpected token EOF (column 15)",
		"spec.metrics[1].failureCondition: expected bool, but got int",
		"spec.metrics[1].provider.web.jsonPath: unclosed action",
		"spec.metrics[2].successCondition: unknown name nope (column 1)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Check:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Conditions are compiled at every measurement, which comes seconds
// apart: this is what that costs.
func BenchmarkJudge(b *testing.B) {
	m := manifest.HookMetric{SuccessCondition: "asInt(result) < 30", FailureCondition: "asInt(result) > 40"}
	for b.Loop() {
		hook.Judge(m, "35")
	}
}

func BenchmarkJSONPath(b *testing.B) {
	for b.Loop() {
		if _, err := hook.JSONPath([]byte(seedBody), "{$.age}"); err != nil {
			b.Fatal(err)
		}
	}
}
