package autoscale_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/autoscale"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
)

// BenchmarkDecide decides one cycle of 1,000 autoscalers over fleets of
// 100 instances each (100k instances): resource, prometheus and buffer
// metrics, a record with a full stabilization history, and one fleet in
// ten scaling down with its victims chosen. The budget is 5 % of
// one core at 15 s intervals: core-%@15s reports what this part takes.
func BenchmarkDecide(b *testing.B) {
	const autoscalers, perFleet = 1000, 100
	now := time.Date(2026, 1, 5, 12, 0, 0, 0, time.UTC)
	inputs := make([]autoscale.Input, autoscalers)
	for i := range inputs {
		inputs[i] = benchInput(i, perFleet, now)
	}
	b.ReportAllocs()
	b.ResetTimer()
	scaled := 0
	for n := 0; n < b.N; n++ {
		scaled = 0
		for _, in := range inputs {
			d := autoscale.Decide(in)
			if d.NeedVictims > 0 {
				d.Remove(autoscale.Victims(candidatesOf(in.Instances), d.NeedVictims))
				scaled++
			}
		}
	}
	b.StopTimer()
	if scaled != autoscalers/10 {
		b.Fatalf("%d fleets scaled down, want %d", scaled, autoscalers/10)
	}
	perCycle := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(perCycle/15e9*100, "core-%@15s")
	b.ReportMetric(perCycle/(autoscalers*perFleet), "ns/instance")
}

func benchInput(i, size int, now time.Time) autoscale.Input {
	a := &manifest.Autoscaler{
		Metadata: manifest.ObjectMeta{Name: fmt.Sprintf("fleet-%d", i), Namespace: "bench"},
		Spec: manifest.AutoscalerSpec{
			Target:      manifest.ScaleTarget{Kind: manifest.KindDeployment, Name: fmt.Sprintf("fleet-%d", i)},
			MinReplicas: ptr(10), MaxReplicas: 500,
			Metrics: []manifest.AutoscaleMetric{
				{Type: manifest.MetricResource, Resource: &manifest.ResourceMetric{Name: manifest.ResourceCPU, TargetAverageUtilization: ptr(60)}},
				playersMetric,
				{Type: manifest.MetricBuffer, Buffer: &manifest.BufferMetric{BufferSize: *manifest.Count(5)}},
			},
		},
	}
	spec, err := autoscale.SpecOf(a)
	if err != nil {
		panic(err)
	}
	// A busy fleet is at its targets; one in ten has been idle for its
	// whole down window and scales down to its buffer: 34 allocated + 5.
	cpu, players, remembered := 0.6, float64(size*10), size
	if i%10 == 0 {
		cpu, players, remembered = 0.2, float64(size*3), 39
	}
	in := autoscale.Input{Now: now, Spec: spec, Target: autoscale.Target{Replicas: size}, Readings: []autoscale.Reading{{Value: players}}}
	for id := 0; id < size; id++ {
		in.Instances = append(in.Instances, autoscale.Instance{ID: id, Ready: id%20 != 0, Allocated: id%3 == 0,
			RunningSince: now.Add(-time.Hour), Request: autoscale.Resources{CPU: 1, MemMB: 1024},
			Usage: &autoscale.Usage{At: now.Add(-5 * time.Second), Resources: autoscale.Resources{CPU: cpu, MemMB: 500}}})
	}
	// The record holds a proposal every 15 s of the default 300 s down
	// window.
	for t := 285; t > 0; t -= 15 {
		in.Record.Recommendations = append(in.Record.Recommendations, manifest.Recommendation{At: now.Add(-time.Duration(t) * time.Second), Replicas: remembered})
	}
	return in
}

func candidatesOf(instances []autoscale.Instance) []autoscale.Candidate {
	cands := make([]autoscale.Candidate, len(instances))
	for i, inst := range instances {
		v := float64(inst.ID % 7)
		cands[i] = autoscale.Candidate{ID: inst.ID, Running: !inst.RunningSince.IsZero(), Ready: inst.Ready,
			Allocated: inst.Allocated, Going: inst.Going, Value: &v}
	}
	return cands
}
