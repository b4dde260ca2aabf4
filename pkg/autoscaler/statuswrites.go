package autoscaler

import (
	"math"
	"reflect"
	"slices"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// A decision that changes nothing a reader sees is not written: every
// round renews the record's times (its newest decision and
// recommendation, UpdatedAt) and moves the metric values a little, and
// a thousand idle autoscalers would otherwise write a thousand statuses
// every interval. The record in memory carries on from every decision;
// the stored one is written again when something shown changed, or
// once statusFreshness has passed since it was.
//
// What a skipped write costs: a new leader resumes from a record whose
// newest recommendation may be up to statusFreshness old. Skipped
// rounds recommended that same size (a new one is a change), so the
// only difference is that this size leaves the stabilization window up
// to statusFreshness early after a failover.

// statusFreshness bounds how long a status goes unwritten while only
// its times and its metric values (within valueTolerance) change: what
// the API shows is at most this old, and a failover loses at most this
// much of a recommendation's time in its window. A minute keeps a
// fleet of idle autoscalers at 15 s to a write each per 4 rounds.
const statusFreshness = time.Minute

// valueTolerance is the relative change of a metric value shown as a
// change: below it, values differ by noise a reader cannot act on.
const valueTolerance = 0.01

// stillShown reports whether e's stored status shows what status does,
// and was written within statusFreshness of now: status need not be
// written.
func (e *entry) stillShown(status *registry.AutoscalerStatus, now time.Time) bool {
	return e.written != nil && now.Sub(e.writtenAt) < statusFreshness &&
		sameToReaders(&e.written.AutoscalerStatus, &status.AutoscalerStatus)
}

// wrote records that status was stored at now.
func (e *entry) wrote(status *registry.AutoscalerStatus, now time.Time) {
	e.status, e.written, e.writtenAt = status, status, now
}

// sameToReaders reports whether a and b differ only by their times of
// decision and probing and metric values within valueTolerance.
func sameToReaders(a, b *manifest.AutoscalerStatus) bool {
	return a.ObservedRevision == b.ObservedRevision && a.CurrentReplicas == b.CurrentReplicas &&
		a.DesiredReplicas == b.DesiredReplicas && a.Message == b.Message &&
		reflect.DeepEqual(a.LastScale, b.LastScale) && reflect.DeepEqual(a.Conditions, b.Conditions) &&
		reflect.DeepEqual(a.Bounds, b.Bounds) && reflect.DeepEqual(a.ScaleUp, b.ScaleUp) && reflect.DeepEqual(a.ScaleDown, b.ScaleDown) &&
		slices.EqualFunc(a.Metrics, b.Metrics, sameMetric) &&
		slices.Equal(recommended(a.Recommendations), recommended(b.Recommendations)) &&
		sameDecision(a.Decisions, b.Decisions) && sameProbe(a.Allocation, b.Allocation)
}

// sameProbe reports whether two allocation probe rounds found the same,
// whenever they ran.
func sameProbe(a, b *manifest.AllocationProbeStatus) bool {
	if a == nil || b == nil {
		return a == b
	}
	x, y := *a, *b
	x.ProbedAt, y.ProbedAt = time.Time{}, time.Time{}
	return reflect.DeepEqual(x, y)
}

func sameMetric(a, b manifest.MetricStatus) bool {
	current := a.Current == nil && b.Current == nil || a.Current != nil && b.Current != nil && near(*a.Current, *b.Current)
	return current && a.Name == b.Name && a.Type == b.Type && a.TargetType == b.TargetType && a.Target == b.Target &&
		reflect.DeepEqual(a.Proposal, b.Proposal) && a.Message == b.Message
}

func near(a, b float64) bool {
	return a == b || math.Abs(a-b) <= valueTolerance*max(math.Abs(a), math.Abs(b))
}

// recommended is the sizes recommended in order, a size recommended
// again in a row counted once: what the stabilization windows hold,
// their times apart.
func recommended(recs []manifest.Recommendation) []int {
	out := make([]int, 0, len(recs))
	for _, r := range recs {
		if len(out) == 0 || out[len(out)-1] != r.Replicas {
			out = append(out, r.Replicas)
		}
	}
	return out
}

// sameDecision reports whether the newest decisions of a and b are the
// same but for their times.
func sameDecision(a, b []manifest.DecisionSummary) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	x, y := a[len(a)-1], b[len(b)-1]
	x.At, y.At = time.Time{}, time.Time{}
	return reflect.DeepEqual(x, y)
}
