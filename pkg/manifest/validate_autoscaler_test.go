package manifest_test

import (
	"reflect"
	"testing"
	_ "time/tzdata" // the windows' zones, whatever the machine has

	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
)

func ptr[T any](v T) *T { return &v }

// autoscaler is a valid autoscaler with one metric of each type.
func autoscaler() *manifest.Autoscaler {
	return &manifest.Autoscaler{
		APIVersion: "v4", KindName: "autoscaler",
		Metadata: manifest.ObjectMeta{Name: "gamesvr", Namespace: "demo"},
		Spec: manifest.AutoscalerSpec{
			Target:      manifest.ScaleTarget{Kind: manifest.KindDeployment, Name: "gamesvr"},
			MinReplicas: ptr(2), MaxReplicas: 60,
			Metrics: []manifest.AutoscaleMetric{
				{Type: manifest.MetricResource, Resource: &manifest.ResourceMetric{Name: manifest.ResourceCPU, TargetAverageUtilization: ptr(60)}},
				{Type: manifest.MetricPrometheus, Name: "players", Prometheus: &manifest.PrometheusProvider{Address: "http://prom:9090", Query: "sum(players)"}, TargetAverageValue: ptr(40.0)},
				{Type: manifest.MetricWeb, Name: "queue", Web: &manifest.WebProvider{URL: "http://mm/queue", JSONPath: "{$.waiting}"}, TargetValue: ptr(100.0)},
				{Type: manifest.MetricBuffer, Buffer: &manifest.BufferMetric{BufferSize: *manifest.Percent(20)}},
			},
		},
	}
}

const m0, m1, m2, m3 = "spec.metrics[0]", "spec.metrics[1]", "spec.metrics[2]", "spec.metrics[3]"

// Every rule of the autoscaler manifest, each error at its field: HPA v2's
// bounds (minReplicas default 1, windows 0–3600 s, periods 1–1800 s,
// selectPolicy Max/Min/Disabled), Agones' buffer rules, KEDA's cron
// windows (start ≠ end, an IANA zone).
func TestValidateAutoscaler(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(a *manifest.Autoscaler)
		want   []string
	}{
		{"the fixture", func(*manifest.Autoscaler) {}, nil},
		{"metadata checked", func(a *manifest.Autoscaler) { a.Metadata.Name = "" }, []string{"metadata.name: required"}},
		{"target kind required", func(a *manifest.Autoscaler) { a.Spec.Target.Kind = "" }, []string{"spec.target.kind: required"}},
		{"a daemonset", func(a *manifest.Autoscaler) { a.Spec.Target.Kind = manifest.KindDaemonset },
			[]string{"spec.target.kind: a daemonset runs one instance per agent its constraint admits: nothing to scale"}},
		{"a service", func(a *manifest.Autoscaler) { a.Spec.Target.Kind = manifest.KindService },
			[]string{`spec.target.kind: want one of application, process, deployment, got "service"`}},
		{"a process", func(a *manifest.Autoscaler) { a.Spec.Target.Kind = manifest.KindProcess }, nil},
		{"target name", func(a *manifest.Autoscaler) { a.Spec.Target.Name = "Game_Svr" },
			[]string{`spec.target.name: want lowercase letters, digits and '-', starting with a letter and ending with a letter or digit, got "Game_Svr"`}},
		{"min above max", func(a *manifest.Autoscaler) { a.Spec.MinReplicas = ptr(61) },
			[]string{"spec.minReplicas: must be at most maxReplicas (60), got 61"}},
		{"min 0", func(a *manifest.Autoscaler) { a.Spec.MinReplicas, a.Spec.Metrics = ptr(0), a.Spec.Metrics[:3] }, nil},
		{"min negative", func(a *manifest.Autoscaler) { a.Spec.MinReplicas, a.Spec.Metrics = ptr(-1), a.Spec.Metrics[:3] }, []string{"spec.minReplicas: must be ≥ 0, got -1"}},
		{"default min 1 above max 0", func(a *manifest.Autoscaler) { a.Spec.MinReplicas, a.Spec.MaxReplicas = nil, 0 },
			[]string{"spec.maxReplicas: want 1 to 100000, got 0"}},
		{"max beyond MaxInstances", func(a *manifest.Autoscaler) { a.Spec.MaxReplicas = 100_001 },
			[]string{"spec.maxReplicas: want 1 to 100000, got 100001"}},
		{"interval too short", func(a *manifest.Autoscaler) { a.Spec.IntervalSeconds = 4 },
			[]string{"spec.intervalSeconds: want 5 to 3600 seconds, got 4"}},
		{"tolerance above 1", func(a *manifest.Autoscaler) { a.Spec.Tolerance = ptr(1.5) },
			[]string{"spec.tolerance: want 0 to 1 (a fraction of the target), got 1.5"}},
		{"no metric", func(a *manifest.Autoscaler) { a.Spec.Metrics = nil }, []string{"spec.metrics: required"}},
		{"duplicate names", func(a *manifest.Autoscaler) { a.Spec.Metrics[2].Name = "players" },
			[]string{m2 + `.name: duplicate metric "players"`}},
		{"a resource metric named by its resource", func(a *manifest.Autoscaler) {
			a.Spec.Metrics = append(a.Spec.Metrics, a.Spec.Metrics[0])
		}, []string{`spec.metrics[4].name: duplicate metric "cpu"`}},
		{"unknown type", func(a *manifest.Autoscaler) { a.Spec.Metrics[0].Type = "gpu" },
			[]string{m0 + ".resource: a metric of type \"gpu\" takes no resource", m0 + `.type: want one of resource, prometheus, web, buffer, got "gpu"`}},
		{"source of another type", func(a *manifest.Autoscaler) { a.Spec.Metrics[1].Web = a.Spec.Metrics[2].Web },
			[]string{m1 + `.web: a metric of type "prometheus" takes no web`}},
		{"source missing", func(a *manifest.Autoscaler) { a.Spec.Metrics[1].Prometheus = nil }, []string{m1 + ".prometheus: required"}},
		{"resource name", func(a *manifest.Autoscaler) { a.Spec.Metrics[0].Resource.Name = "gpu" },
			[]string{m0 + `.resource.name: want one of cpu, memory, got "gpu"`}},
		{"resource without target", func(a *manifest.Autoscaler) { a.Spec.Metrics[0].Resource.TargetAverageUtilization = nil },
			[]string{m0 + ".resource.targetAverageUtilization: required: targetAverageUtilization (percent of the request) or targetAverageValue (cores or MB per instance)"}},
		{"resource with both targets", func(a *manifest.Autoscaler) { a.Spec.Metrics[0].Resource.TargetAverageValue = ptr(0.5) },
			[]string{m0 + ".resource.targetAverageValue: give targetAverageUtilization or targetAverageValue, not both"}},
		{"utilization 0", func(a *manifest.Autoscaler) { a.Spec.Metrics[0].Resource.TargetAverageUtilization = ptr(0) },
			[]string{m0 + ".resource.targetAverageUtilization: want 1 to 1000 (percent), got 0"}},
		{"resource with a reading's target", func(a *manifest.Autoscaler) { a.Spec.Metrics[0].TargetValue = ptr(1.0) },
			[]string{m0 + ": targetValue and targetAverageValue are for prometheus and web metrics"}},
		{"reading without a name", func(a *manifest.Autoscaler) { a.Spec.Metrics[1].Name = "" }, []string{m1 + ".name: required"}},
		{"reading without target", func(a *manifest.Autoscaler) { a.Spec.Metrics[1].TargetAverageValue = nil },
			[]string{m1 + ".targetValue: required: targetValue (the whole fleet's) or targetAverageValue (per instance)"}},
		{"reading with both targets", func(a *manifest.Autoscaler) { a.Spec.Metrics[1].TargetValue = ptr(1.0) },
			[]string{m1 + ".targetAverageValue: give targetValue or targetAverageValue, not both"}},
		{"target 0", func(a *manifest.Autoscaler) { a.Spec.Metrics[2].TargetValue = ptr(0.0) },
			[]string{m2 + ".targetValue: must be a number > 0, got 0"}},
		{"prometheus without query", func(a *manifest.Autoscaler) { a.Spec.Metrics[1].Prometheus.Query = "" },
			[]string{m1 + ".prometheus.query: required"}},
		{"web method", func(a *manifest.Autoscaler) { a.Spec.Metrics[2].Web.Method = "PUT" },
			[]string{m2 + `.web.method: want one of GET, POST, got "PUT"`}},
		{"a fleet-wide reading takes no arguments", func(a *manifest.Autoscaler) { a.Spec.Metrics[2].Web.URL = "http://{{ args.HostIP }}/q" },
			[]string{m2 + ".web.url: {{ args.HostIP }}: not given here (a fleet-wide reading takes no arguments; a per-instance one gets Namespace, AppName, PodName, InstanceID, HostIP, PodIP and Port.<name>)"}},
		{"buffer 100%", func(a *manifest.Autoscaler) { a.Spec.Metrics[3].Buffer.BufferSize = *manifest.Percent(100) },
			[]string{m3 + ".buffer.bufferSize: want a percentage from 1% to 99%, got 100%"}},
		{"percent buffer with min 0", func(a *manifest.Autoscaler) { a.Spec.MinReplicas = ptr(0) },
			[]string{m3 + ".buffer.bufferSize: a percentage buffer needs minReplicas ≥ 1: with none allocated the fleet would shrink to 0 and never grow"}},
		{"buffer 0", func(a *manifest.Autoscaler) { a.Spec.Metrics[3].Buffer.BufferSize = *manifest.Count(0) },
			[]string{m3 + `.buffer.bufferSize: want a count > 0 or a percentage such as "20%", got 0`}},
		{"buffer above max", func(a *manifest.Autoscaler) { a.Spec.Metrics[3].Buffer.BufferSize = *manifest.Count(61) },
			[]string{m3 + ".buffer.bufferSize: must be at most maxReplicas (60), got 61"}},
		{"two buffers", func(a *manifest.Autoscaler) {
			b := a.Spec.Metrics[3]
			b.Name = "buffer2"
			a.Spec.Metrics = append(a.Spec.Metrics, b)
		}, []string{"spec.metrics[4]: at most one buffer metric"}},
		{"behavior", func(a *manifest.Autoscaler) {
			a.Spec.Behavior = &manifest.ScaleBehavior{
				ScaleUp: &manifest.ScaleRules{StabilizationWindowSeconds: ptr(3601), SelectPolicy: "Most", Tolerance: ptr(-0.1)},
				ScaleDown: &manifest.ScaleRules{Policies: []manifest.ScalePolicy{
					{Type: "Instances", Value: 0, PeriodSeconds: 1801}, {Type: manifest.PolicyPercent, Value: 10, PeriodSeconds: 60}}},
			}
		}, []string{
			"spec.behavior.scaleUp.stabilizationWindowSeconds: must be at most 3600, got 3601",
			`spec.behavior.scaleUp.selectPolicy: want one of Max, Min, Disabled, got "Most"`,
			"spec.behavior.scaleUp.tolerance: want 0 to 1 (a fraction of the target), got -0.1",
			`spec.behavior.scaleDown.policies[0].type: want one of Pods, Percent, got "Instances"`,
			"spec.behavior.scaleDown.policies[0].value: must be > 0, got 0",
			"spec.behavior.scaleDown.policies[0].periodSeconds: want 1 to 1800 seconds, got 1801",
		}},
		{"a window", func(a *manifest.Autoscaler) {
			a.Spec.Schedule = []manifest.ScaleWindow{{Name: "peak", Start: "0 19 * * *", End: "0 23 * * *", TimeZone: "Asia/Shanghai", MinReplicas: ptr(20), MaxReplicas: ptr(120)}}
		}, nil},
		{"a window opening to the second", func(a *manifest.Autoscaler) {
			a.Spec.Schedule = []manifest.ScaleWindow{{Name: "e2e", Start: "10 0 12 * * *", End: "40 0 12 * * *", MinReplicas: ptr(3)}}
		}, nil},
		{"windows", func(a *manifest.Autoscaler) {
			a.Spec.Schedule = []manifest.ScaleWindow{
				{Name: "", Start: "0 19 * * *", End: "0 23 * * *", TimeZone: "Local", MaxReplicas: ptr(3)},
				{Name: "b", Start: "", End: "0 23 * * *", MinReplicas: ptr(5), MaxReplicas: ptr(4)},
				{Name: "b", Start: "0 19 * * *", End: "0 19 * * *", MinReplicas: ptr(-1)},
				{Name: "c", Start: "@daily", End: "TZ=UTC 0 1 * * *", MaxReplicas: ptr(1)},
			}
		}, []string{
			"spec.schedule[0].name: required",
			`spec.schedule[0].timeZone: want an IANA zone such as "Asia/Shanghai": Local is whatever the leader's machine says`,
			"spec.schedule[1].start: required",
			"spec.schedule[1].minReplicas: must be at most the window's maxReplicas (4), got 5",
			`spec.schedule[2].name: duplicate window "b"`,
			"spec.schedule[2].end: must differ from start: the window would never open",
			"spec.schedule[2].minReplicas: must be ≥ 0, got -1",
			`spec.schedule[3].start: want a cron expression of 5 fields (minute hour day-of-month month day-of-week) or 6 with leading seconds, got "@daily": parser does not accept descriptors: @daily`,
			`spec.schedule[3].end: give the zone in timeZone, not in the expression, got "TZ=UTC 0 1 * * *"`,
		}},
		{"scale-down order", func(a *manifest.Autoscaler) {
			a.Spec.ScaleDownOrder = &manifest.InstanceValue{Web: &manifest.WebProvider{URL: "http://{{ args.HostIP }}:{{ args.Port.http }}/players?id={{ args.InstanceID }}"}}
		}, nil},
		{"scale-down order by prometheus needs its label", func(a *manifest.Autoscaler) {
			a.Spec.ScaleDownOrder = &manifest.InstanceValue{Prometheus: &manifest.PrometheusProvider{Address: "http://prom:9090", Query: "players"}}
		}, []string{"spec.scaleDownOrder.instanceLabel: required: the label whose value is the instance ID or task group ID of each sample"}},
		{"scale-down order with both", func(a *manifest.Autoscaler) {
			a.Spec.ScaleDownOrder = &manifest.InstanceValue{Prometheus: &manifest.PrometheusProvider{}, Web: &manifest.WebProvider{}}
		}, []string{"spec.scaleDownOrder: exactly one of prometheus and web"}},
		{"a per-instance call with an unknown argument", func(a *manifest.Autoscaler) {
			a.Spec.ScaleDownOrder = &manifest.InstanceValue{Web: &manifest.WebProvider{URL: "http://{{ args.Revision }}/"}, InstanceLabel: "id"}
		}, []string{
			"spec.scaleDownOrder.web.url: {{ args.Revision }}: not given here (a fleet-wide reading takes no arguments; a per-instance one gets Namespace, AppName, PodName, InstanceID, HostIP, PodIP and Port.<name>)",
			"spec.scaleDownOrder.instanceLabel: for prometheus: a web call is made per instance with its arguments",
		}},
		{"allocation probe", func(a *manifest.Autoscaler) {
			a.Spec.Allocation = &manifest.AllocationProbe{Probe: manifest.InstanceValue{Web: &manifest.WebProvider{URL: "http://{{ args.HostIP }}/session"}},
				AllocatedCondition: "asInt(result) > 0", IntervalSeconds: 10}
		}, nil},
		{"allocation probe without condition, too often", func(a *manifest.Autoscaler) {
			a.Spec.Allocation = &manifest.AllocationProbe{Probe: manifest.InstanceValue{Web: &manifest.WebProvider{URL: "http://x/"}}, IntervalSeconds: 1}
		}, []string{"spec.allocation.allocatedCondition: required", "spec.allocation.intervalSeconds: want 2 to 300 seconds, got 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := autoscaler()
			tt.mutate(a)
			if got := messages(a.Validate(nil)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Validate:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// Parse knows the kind, decodes strictly (a misspelt field is an error
// at its path), lower-cases the target's kind and names a resource
// metric by its resource.
func TestParseAutoscaler(t *testing.T) {
	obj, err := manifest.Parse([]byte(`{"apiVersion": "v4", "kind": "Autoscaler", "metadata": {"name": "gamesvr"},
		"spec": {"target": {"kind": "Deployment", "name": "gamesvr"}, "maxReplicas": 10,
		"metrics": [{"type": "resource", "resource": {"name": "memory", "targetAverageUtilization": 70}},
		            {"type": "buffer", "buffer": {"bufferSize": "10%"}}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	a := obj.(*manifest.Autoscaler)
	if a.Spec.Target.Kind != manifest.KindDeployment || a.Metadata.Namespace != manifest.DefaultNamespace {
		t.Errorf("target kind %q, namespace %q", a.Spec.Target.Kind, a.Metadata.Namespace)
	}
	if got := a.Spec.Metrics[0].MetricName(); got != "memory" {
		t.Errorf("resource metric named %q, want memory", got)
	}
	if b := a.Spec.Metrics[1].Buffer.BufferSize; !b.Percent || b.Value != 10 {
		t.Errorf("bufferSize %v, want 10%%", b)
	}
	if errs := a.Validate(nil); len(errs) > 0 {
		t.Errorf("Validate: %v", errs)
	}
	got := parseErrors(t, []byte(`{"apiVersion": "v4", "kind": "autoscaler", "metadata": {"name": "g"},
		"spec": {"target": {"kind": "deployment", "name": "g"}, "maxReplicas": 10, "minReplica": 1,
		"metrics": [{"type": "buffer", "buffer": {"bufferSize": "ten"}}]}}`))
	want := []string{"spec.minReplica: unknown field", `spec.metrics[0].buffer.bufferSize: want a number or a percentage such as "25%", got "ten"`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Parse errors:\n got %q\nwant %q", got, want)
	}
}
