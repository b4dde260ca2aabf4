package autoscaler

import (
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
)

var at = time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)

// shown is a stored status: 2 of 2 instances, a metric at 40, the last
// decision and two recommendations of 2.
func shown() *manifest.AutoscalerStatus {
	v, p := 40.0, 2
	return &manifest.AutoscalerStatus{ObservedRevision: 7, CurrentReplicas: 2, DesiredReplicas: 2,
		Metrics:    []manifest.MetricStatus{{Name: "players", Type: manifest.MetricPrometheus, TargetType: manifest.TargetAverageValue, Current: &v, Target: 50, Proposal: &p}},
		Conditions: []manifest.AutoscalerCondition{{Type: "AbleToScale", Status: "True", Reason: "ReadyForNewScale", LastTransitionTime: at}},
		Bounds:     manifest.ScaleBounds{Min: 1, Max: 5}, Message: "every metric is at its target, within its tolerance",
		Recommendations: []manifest.Recommendation{{At: at, Replicas: 2}, {At: at.Add(10 * time.Second), Replicas: 2}},
		Decisions:       []manifest.DecisionSummary{{At: at.Add(10 * time.Second), Current: 2, Proposal: 2, Desired: 2, Why: "at target"}},
		Allocation:      &manifest.AllocationProbeStatus{ProbedAt: at, Probed: 2, Holding: 1},
		UpdatedAt:       at.Add(10 * time.Second)}
}

// A status is written again when what a reader sees changes; a new
// round's times and a metric's noise are not such a change.
func TestSameToReaders(t *testing.T) {
	later := at.Add(20 * time.Second)
	for _, tc := range []struct {
		name   string
		change func(s *manifest.AutoscalerStatus)
		same   bool
	}{
		{"nothing", func(*manifest.AutoscalerStatus) {}, true},
		{"a new round: its decision, its recommendation of the same size, its time", func(s *manifest.AutoscalerStatus) {
			s.Decisions = append(s.Decisions, manifest.DecisionSummary{At: later, Current: 2, Proposal: 2, Desired: 2, Why: "at target"})
			s.Recommendations = append(s.Recommendations[1:], manifest.Recommendation{At: later, Replicas: 2})
			s.UpdatedAt = later
		}, true},
		{"the allocation probe ran again, finding the same", func(s *manifest.AutoscalerStatus) { s.Allocation.ProbedAt = later }, true},
		{"the allocation probe finds another allocated", func(s *manifest.AutoscalerStatus) {
			s.Allocation.Holding, s.Allocation.Allocations = 2, 1
		}, false},
		{"a metric value within 1%", func(s *manifest.AutoscalerStatus) { v := 40.3; s.Metrics[0].Current = &v }, true},
		{"a metric value beyond 1%", func(s *manifest.AutoscalerStatus) { v := 40.5; s.Metrics[0].Current = &v }, false},
		{"a metric no longer read", func(s *manifest.AutoscalerStatus) { s.Metrics[0].Current, s.Metrics[0].Message = nil, "timeout" }, false},
		{"a metric's proposal", func(s *manifest.AutoscalerStatus) { p := 3; s.Metrics[0].Proposal = &p }, false},
		{"desired", func(s *manifest.AutoscalerStatus) { s.DesiredReplicas = 3 }, false},
		{"current", func(s *manifest.AutoscalerStatus) { s.CurrentReplicas = 3 }, false},
		{"the spec decided on", func(s *manifest.AutoscalerStatus) { s.ObservedRevision = 8 }, false},
		{"a condition's transition", func(s *manifest.AutoscalerStatus) {
			s.Conditions[0].Status, s.Conditions[0].LastTransitionTime = "False", later
		}, false},
		{"the message", func(s *manifest.AutoscalerStatus) { s.Message = "paused" }, false},
		{"a schedule window opens", func(s *manifest.AutoscalerStatus) {
			s.Bounds = manifest.ScaleBounds{Min: 4, Max: 5, Windows: []manifest.ActiveWindow{{Name: "evening", Until: later}}}
		}, false},
		{"a new size recommended", func(s *manifest.AutoscalerStatus) {
			s.Recommendations = append(s.Recommendations, manifest.Recommendation{At: later, Replicas: 1})
		}, false},
		{"a decision with another outcome", func(s *manifest.AutoscalerStatus) {
			s.Decisions = append(s.Decisions, manifest.DecisionSummary{At: later, Current: 2, Proposal: 1, Desired: 2, Why: "stabilized at 2"})
		}, false},
		{"a scale", func(s *manifest.AutoscalerStatus) {
			s.LastScale = &manifest.ScaleRecord{At: later, From: 2, To: 3}
			s.ScaleUp = []manifest.ScaleChange{{At: later, Change: 1}}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next := shown()
			tc.change(next)
			if got := sameToReaders(shown(), next); got != tc.same {
				t.Errorf("sameToReaders = %t, want %t", got, tc.same)
			}
		})
	}
}
