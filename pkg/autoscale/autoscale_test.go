package autoscale_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/autoscale"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
)

func newAutoscaler() *manifest.Autoscaler {
	return &manifest.Autoscaler{
		Metadata: manifest.ObjectMeta{Name: "gamesvr", Namespace: "demo"},
		Spec: manifest.AutoscalerSpec{
			Target:      manifest.ScaleTarget{Kind: manifest.KindDeployment, Name: "gamesvr"},
			MaxReplicas: 10, Metrics: []manifest.AutoscaleMetric{playersMetric},
		},
	}
}

// HPA v2 defaults (pkg/apis/autoscaling/v2/defaults.go): minReplicas 1,
// a 15 s sync, tolerance 0.1; scaleUp no window, max(Pods 4, Percent
// 100) per 15 s; scaleDown a 300 s window, Percent 100 per 15 s; a
// direction given in part takes the rest from its own defaults.
func TestSpecOfDefaults(t *testing.T) {
	spec, err := autoscale.SpecOf(newAutoscaler())
	if err != nil {
		t.Fatal(err)
	}
	if spec.Min != 1 || spec.Max != 10 || spec.Interval != 15*time.Second {
		t.Errorf("min %d max %d interval %s, want 1, 10, 15s", spec.Min, spec.Max, spec.Interval)
	}
	wantUp := autoscale.Rules{Select: manifest.SelectMax, Policies: autoscale.DefaultScaleUp().Policies, Tolerance: 0.1}
	wantDown := autoscale.Rules{Window: 300 * time.Second, Select: manifest.SelectMax, Policies: autoscale.DefaultScaleDown().Policies, Tolerance: 0.1}
	if !reflect.DeepEqual(spec.Up, wantUp) || !reflect.DeepEqual(spec.Down, wantDown) {
		t.Errorf("up %+v\nwant %+v\ndown %+v\nwant %+v", spec.Up, wantUp, spec.Down, wantDown)
	}

	a := newAutoscaler()
	a.Spec.Tolerance = ptr(0.2)
	a.Spec.Behavior = &manifest.ScaleBehavior{ScaleDown: &manifest.ScaleRules{SelectPolicy: manifest.SelectMin, Tolerance: ptr(0.5)},
		ScaleUp: &manifest.ScaleRules{StabilizationWindowSeconds: ptr(30)}}
	spec, err = autoscale.SpecOf(a)
	if err != nil {
		t.Fatal(err)
	}
	if spec.Up.Window != 30*time.Second || spec.Up.Tolerance != 0.2 || !reflect.DeepEqual(spec.Up.Policies, wantUp.Policies) {
		t.Errorf("up %+v: want the 30 s window, spec.tolerance 0.2 and the default policies", spec.Up)
	}
	if spec.Down.Window != 300*time.Second || spec.Down.Select != manifest.SelectMin || spec.Down.Tolerance != 0.5 {
		t.Errorf("down %+v: want the default window, Min, its own tolerance 0.5", spec.Down)
	}
}

func TestSpecOfRefusesAnInvalidSpec(t *testing.T) {
	a := newAutoscaler()
	a.Spec.Schedule = []manifest.ScaleWindow{{Name: "x", Start: "0 19 * * *", End: "0 23 * * *", TimeZone: "Nowhere/City", MinReplicas: ptr(1)}}
	_, err := autoscale.SpecOf(a)
	if err == nil || !strings.Contains(err.Error(), "spec.schedule[0].timeZone") {
		t.Errorf("SpecOf: %v, want the zone's field", err)
	}
}

// KEDA's rule at the edges: open at its start to the second, closed at
// its end; in the zone's local time across a daylight saving change
// (Europe/Berlin moved from UTC+1 to UTC+2 on 29 March 2026).
func TestBoundsAtEdgesAndDaylightSaving(t *testing.T) {
	a := newAutoscaler()
	a.Spec.Schedule = []manifest.ScaleWindow{{Name: "morning", Start: "0 8 * * *", End: "0 9 * * *", TimeZone: "Europe/Berlin", MinReplicas: ptr(5)}}
	spec, err := autoscale.SpecOf(a)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		at   string
		open bool
	}{
		{"2026-03-28T06:59:59Z", false}, // 07:59:59 CET
		{"2026-03-28T07:00:00Z", true},  // 08:00 CET
		{"2026-03-28T07:59:59Z", true},
		{"2026-03-28T08:00:00Z", false}, // 09:00 CET
		{"2026-03-29T05:59:59Z", false}, // 07:59:59 CEST
		{"2026-03-29T06:00:00Z", true},  // 08:00 CEST
		{"2026-03-29T07:00:00Z", false}, // 09:00 CEST
	}
	for _, tt := range tests {
		now, _ := time.Parse(time.RFC3339, tt.at)
		b := autoscale.BoundsAt(spec, now)
		if open := len(b.Windows) == 1; open != tt.open || (open && b.Min != 5) || (!open && b.Min != 1) {
			t.Errorf("%s: bounds %+v, want open %v", tt.at, b, tt.open)
		}
	}
}

// A provider's result read as a number: a Prometheus vector summed (as
// HPA sums an external metric's series), a web body parsed; anything
// else is an error that holds the size.
func TestReadingOf(t *testing.T) {
	tests := []struct {
		name   string
		result any
		err    error
		want   autoscale.Reading
	}{
		{"scalar", 42.5, nil, autoscale.Reading{Value: 42.5}},
		{"vector summed", []float64{1, 2, 3.5}, nil, autoscale.Reading{Value: 6.5}},
		{"no samples", []float64{}, nil, autoscale.Reading{Err: "the query returned no samples"}},
		{"web body", " 120\n", nil, autoscale.Reading{Value: 120}},
		{"not a number", "busy", nil, autoscale.Reading{Err: `want a number, got "busy"`}},
		{"NaN", "NaN", nil, autoscale.Reading{Err: "want a number, got NaN"}},
		{"provider error", nil, errors.New("connection refused"), autoscale.Reading{Err: "connection refused"}},
		{"other type", true, nil, autoscale.Reading{Err: "want a number, got bool"}},
	}
	for _, tt := range tests {
		if got := autoscale.ReadingOf(tt.result, tt.err); got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

// Check compiles the hook languages at their fields: a web source's
// jsonPath and the allocation condition.
func TestCheckHookLanguages(t *testing.T) {
	a := newAutoscaler()
	a.Spec.Metrics = append(a.Spec.Metrics, manifest.AutoscaleMetric{Type: manifest.MetricWeb, Name: "queue",
		Web: &manifest.WebProvider{URL: "http://mm/q", JSONPath: "{$.waiting"}, TargetValue: ptr(1.0)})
	a.Spec.Allocation = &manifest.AllocationProbe{Probe: manifest.InstanceValue{Web: &manifest.WebProvider{URL: "http://x/", JSONPath: "{$.players}"}},
		AllocatedCondition: "asInt(result) >"}
	errs := autoscale.Check(a)
	var paths []string
	for _, e := range errs {
		paths = append(paths, string(e.Path))
	}
	want := []string{"spec.metrics[1].web.jsonPath", "spec.allocation.allocatedCondition"}
	if !reflect.DeepEqual(paths, want) {
		t.Errorf("Check: %v, want errors at %v", errs, want)
	}
	a.Spec.Metrics[1].Web.JSONPath, a.Spec.Allocation.AllocatedCondition = "{$.waiting}", "asInt(result) > 0"
	if errs := autoscale.Check(a); len(errs) > 0 {
		t.Errorf("Check of valid languages: %v", errs)
	}
}

// Victims never chooses an allocated or going instance, chooses
// min(k, eligible), and never the same one twice, over random fleets.
func TestVictimsNeverAllocated(t *testing.T) {
	for seed := int64(0); seed < 500; seed++ {
		cands := randomCandidates(seed)
		k := int(seed % 12)
		eligible := 0
		for _, c := range cands {
			if !c.Allocated && !c.Going {
				eligible++
			}
		}
		got := autoscale.Victims(cands, k)
		if len(got) != min(k, eligible) {
			t.Fatalf("seed %d: %d victims of %d eligible for k %d", seed, len(got), eligible, k)
		}
		seen := map[int]bool{}
		for _, v := range got {
			c := cands[slices.IndexFunc(cands, func(c autoscale.Candidate) bool { return c.ID == v.ID })]
			if c.Allocated || c.Going || seen[v.ID] {
				t.Fatalf("seed %d: chose %+v", seed, c)
			}
			seen[v.ID] = true
		}
	}
}

func randomCandidates(seed int64) []autoscale.Candidate {
	var cands []autoscale.Candidate
	for id := 0; id < 10; id++ {
		bits := (seed >> id) ^ (seed * int64(id+3))
		c := autoscale.Candidate{ID: id, Running: bits%3 != 0, Allocated: bits%4 == 0, Going: bits%7 == 0}
		c.Ready = c.Running && bits%5 != 0
		if bits%2 == 0 {
			c.Value = ptr(float64(bits % 9))
		}
		cands = append(cands, c)
	}
	return cands
}

// Decide is a function of its input: the input's record is left as it
// was, and the same input decides the same twice.
func TestDecideLeavesItsInputAlone(t *testing.T) {
	spec, _ := autoscale.SpecOf(newAutoscaler())
	now := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	rec := manifest.AutoscalerStatus{
		Recommendations: make([]manifest.Recommendation, 1, 8),
		ScaleUp:         make([]manifest.ScaleChange, 1, 8),
	}
	rec.Recommendations[0] = manifest.Recommendation{At: now.Add(-time.Minute), Replicas: 2}
	rec.ScaleUp[0] = manifest.ScaleChange{At: now.Add(-5 * time.Second), Change: 1}
	in := autoscale.Input{Now: now, Spec: spec, Record: rec, Target: autoscale.Target{Replicas: 2}, Readings: []autoscale.Reading{{Value: 60}}}
	first := autoscale.Decide(in)
	second := autoscale.Decide(in)
	if !reflect.DeepEqual(first, second) {
		t.Errorf("two decisions on one input differ:\n%+v\n%+v", first, second)
	}
	if len(rec.Recommendations) != 1 || len(rec.ScaleUp) != 1 || rec.ScaleUp[:2][1] != (manifest.ScaleChange{}) {
		t.Errorf("the input's record changed: %+v", rec)
	}
	// The period began at 2 − 1 = 1: max(1 + 4 Pods, 1 × 200 %) = 5.
	if !first.Act || first.Desired != 5 {
		t.Errorf("decided %+v, want 2 → 5", first)
	}
}

// The record keeps the last 10 decisions, and a condition's transition
// time moves only when its status does.
func TestDecisionsCappedAndTransitionTimes(t *testing.T) {
	spec, _ := autoscale.SpecOf(newAutoscaler())
	now := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	var rec manifest.AutoscalerStatus
	for i := 0; i < 15; i++ {
		reading := autoscale.Reading{Value: 30}
		if i == 12 {
			reading = autoscale.Reading{Err: "timeout"}
		}
		d := autoscale.Decide(autoscale.Input{Now: now.Add(time.Duration(i) * 15 * time.Second), Spec: spec, Record: rec,
			Target: autoscale.Target{Replicas: 3}, Readings: []autoscale.Reading{reading}})
		rec = d.Record
	}
	if len(rec.Decisions) != autoscale.MaxDecisions || !rec.Decisions[9].At.Equal(now.Add(14*15*time.Second)) {
		t.Errorf("%d decisions, the last at %s", len(rec.Decisions), rec.Decisions[len(rec.Decisions)-1].At)
	}
	for _, c := range rec.Conditions {
		if c.Type == autoscale.ScalingActive && (c.Status != "True" || !c.LastTransitionTime.Equal(now.Add(13*15*time.Second))) {
			t.Errorf("ScalingActive %+v: True again since the read after the timeout", c)
		}
		if c.Type == autoscale.ScalingLimited && !c.LastTransitionTime.Equal(now) {
			t.Errorf("ScalingLimited %+v: False since the first decision", c)
		}
	}
}

// Failover needs the record alone: a run whose record goes through JSON
// between every decision (a new leader each time) decides exactly as one
// that keeps it in memory.
func TestRecordAloneCarriesTheDecisions(t *testing.T) {
	a := newAutoscaler()
	a.Spec.MaxReplicas = 40
	a.Spec.Behavior = &manifest.ScaleBehavior{
		ScaleUp:   &manifest.ScaleRules{StabilizationWindowSeconds: ptr(30), Policies: []manifest.ScalePolicy{{Type: manifest.PolicyPods, Value: 3, PeriodSeconds: 60}}},
		ScaleDown: &manifest.ScaleRules{StabilizationWindowSeconds: ptr(90), Policies: []manifest.ScalePolicy{{Type: manifest.PolicyPercent, Value: 20, PeriodSeconds: 45}}},
	}
	spec, err := autoscale.SpecOf(a)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	run := func(failover bool) []manifest.DecisionSummary {
		var rec manifest.AutoscalerStatus
		var all []manifest.DecisionSummary
		replicas := 5
		for step := 0; step < 80; step++ {
			players := float64((step*37)%300 + 10)
			in := autoscale.Input{Now: start.Add(time.Duration(step) * 15 * time.Second), Spec: spec, Record: rec,
				Target: autoscale.Target{Replicas: replicas}, Readings: []autoscale.Reading{{Value: players}}}
			for id := 0; id < replicas; id++ {
				in.Instances = append(in.Instances, autoscale.Instance{ID: id, Ready: true})
			}
			d := autoscale.Decide(in)
			rec = d.Record
			if d.Act {
				replicas = d.Desired
			}
			if failover {
				b, err := json.Marshal(rec)
				if err != nil {
					t.Fatal(err)
				}
				rec = manifest.AutoscalerStatus{}
				if err := json.Unmarshal(b, &rec); err != nil {
					t.Fatal(err)
				}
			}
			all = append(all, rec.Decisions[len(rec.Decisions)-1])
		}
		return all
	}
	kept, failedOver := run(false), run(true)
	scales := 0
	for i := range kept {
		if kept[i].Acted {
			scales++
		}
		if kept[i].Desired != failedOver[i].Desired || kept[i].Acted != failedOver[i].Acted || kept[i].Why != failedOver[i].Why {
			t.Fatalf("decision %d differs after failover:\n%+v\n%+v", i, kept[i], failedOver[i])
		}
	}
	if scales < 5 {
		t.Errorf("only %d scales in the run: it proves little", scales)
	}
}
