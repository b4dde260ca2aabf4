package manifest_test

import (
	"reflect"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest/manifesttest"
)

// Seed 003's rules for a HookTemplate's metrics and arguments.
func TestValidateHookTemplate(t *testing.T) {
	const M = "spec.metrics[0]"
	tests := []struct {
		name   string
		mutate func(h *manifest.HookTemplate)
		want   []string
	}{
		{"seed 003's example", func(*manifest.HookTemplate) {}, nil},
		{"one call: no count, no interval", func(h *manifest.HookTemplate) { h.Spec.Metrics[0].Count, h.Spec.Metrics[0].Interval = 0, "" }, nil},
		{"until stopped: interval only", func(h *manifest.HookTemplate) { h.Spec.Metrics[0].Count = 0 }, nil},
		{"count > 1 needs interval", func(h *manifest.HookTemplate) { h.Spec.Metrics[0].Interval = "" },
			[]string{M + ".interval: required when count is greater than 1 (count 2)"}},
		{"bad interval", func(h *manifest.HookTemplate) { h.Spec.Metrics[0].Interval = "soon" },
			[]string{M + `.interval: want a duration such as "30s" or "2m", got "soon"`}},
		{"no metrics", func(h *manifest.HookTemplate) { h.Spec.Metrics = nil }, []string{"spec.metrics: required"}},
		{"two providers", func(h *manifest.HookTemplate) {
			h.Spec.Metrics[0].Provider.Prometheus = &manifest.PrometheusProvider{Address: "http://p:9090", Query: "up"}
		}, []string{M + ".provider: exactly one of web and prometheus"}},
		{"undeclared argument", func(h *manifest.HookTemplate) { h.Spec.Metrics[0].Provider.Web.URL = "http://{{ args.PodIP }}:9091" },
			[]string{M + `.provider.web.url: {{ args.PodIP }}: no argument "PodIP" in spec.args`}},
		{"method", func(h *manifest.HookTemplate) { h.Spec.Metrics[0].Provider.Web.Method = "PUT" },
			[]string{M + `.provider.web.method: want one of GET, POST, got "PUT"`}},
		{"limits", func(h *manifest.HookTemplate) {
			h.Spec.Metrics[0].FailureLimit, h.Spec.Metrics[0].ConsecutiveErrorLimit = -1, new(int)
			*h.Spec.Metrics[0].ConsecutiveErrorLimit = -2
		}, []string{M + ".failureLimit: must be ≥ 0, got -1", M + ".consecutiveErrorLimit: must be ≥ 0, got -2"}},
		{"duplicate names", func(h *manifest.HookTemplate) {
			h.Spec.Metrics = append(h.Spec.Metrics, h.Spec.Metrics[0])
			h.Spec.Args = append(h.Spec.Args, manifest.HookArg{Name: "PodName"})
		}, []string{`spec.args[2].name: duplicate argument "PodName"`, `spec.metrics[1].name: duplicate metric "webtest"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := manifesttest.HookTemplate()
			tt.mutate(h)
			if got := messages(h.Validate(nil)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Validate:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
	if got, err := manifest.RenderArgs("http://{{ args.PodIP }}:{{args.Port.http}}/x", map[string]string{"PodIP": "10.0.0.1", "Port.http": "31000"}); err != nil || got != "http://10.0.0.1:31000/x" {
		t.Errorf("RenderArgs: %q %v", got, err)
	}
	if _, err := manifest.RenderArgs("{{ args.a }}{{ args.b }}", map[string]string{"a": "1"}); err == nil || err.Error() != "no value for b" {
		t.Errorf("RenderArgs without a value: %v", err)
	}
}
