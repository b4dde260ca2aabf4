package autoscale

import (
	"math"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
)

// stabilize is HPA's stabilizeRecommendationWithBehaviors: from the
// current size, rise to the lowest recommendation of the up window and
// fall to the highest of the down window, the new proposal counting in
// both. A flapping metric thus moves the fleet only when it has asked
// for the move for a whole window.
func stabilize(spec Spec, recs []manifest.Recommendation, now time.Time, current, proposal int) (int, string, string) {
	upMin, downMax := proposal, proposal
	for _, r := range recs {
		if r.At.After(now.Add(-spec.Up.Window)) {
			upMin = min(upMin, r.Replicas)
		}
		if r.At.After(now.Add(-spec.Down.Window)) {
			downMax = max(downMax, r.Replicas)
		}
	}
	stabilized := min(max(current, upMin), downMax)
	switch {
	case stabilized < proposal:
		return stabilized, ReasonScaleUpStabilized, "recent recommendations were lower than current one, applying the lowest recent recommendation"
	case stabilized > proposal:
		return stabilized, ReasonScaleDownStabilized, "recent recommendations were higher than current one, applying the highest recent recommendation"
	}
	return stabilized, ReasonReadyForNewScale, "recommended size matches current size"
}

// remember appends a recommendation and drops those no window can see.
func remember(spec Spec, recs []manifest.Recommendation, now time.Time, replicas int) []manifest.Recommendation {
	longest := max(spec.Up.Window, spec.Down.Window)
	kept := recs[:0:0]
	for _, r := range recs {
		if !olderThan(r.At, now, longest) {
			kept = append(kept, r)
		}
	}
	return append(kept, manifest.Recommendation{At: now, Replicas: replicas})
}

// changeInPeriod sums the changes of the events within the last period
// (HPA's getReplicasChangePerPeriod).
func changeInPeriod(events []manifest.ScaleChange, now time.Time, periodSeconds int) int {
	n := 0
	for _, e := range events {
		if !olderThan(e.At, now, time.Duration(periodSeconds)*time.Second) {
			n += e.Change
		}
	}
	return n
}

// scaleUpLimit is HPA's calculateScaleUpLimitWithScalingRules: each
// policy allows its value on top of the size at its period's start (the
// current size less what was added within the period, plus what was
// removed); Max takes the most generous policy, Min the tightest,
// Disabled allows nothing.
func scaleUpLimit(r Rules, current int, up, down []manifest.ScaleChange, now time.Time) int {
	if r.Select == manifest.SelectDisabled {
		return current
	}
	limit := math.MinInt
	if r.Select == manifest.SelectMin {
		limit = math.MaxInt
	}
	for _, p := range r.Policies {
		start := current - changeInPeriod(up, now, p.PeriodSeconds) + changeInPeriod(down, now, p.PeriodSeconds)
		allowed := start + p.Value
		if p.Type == manifest.PolicyPercent {
			allowed = ceilDiv(start*(100+p.Value), 100)
		}
		if r.Select == manifest.SelectMin {
			limit = min(limit, allowed)
		} else {
			limit = max(limit, allowed)
		}
	}
	return limit
}

// ceilDiv is ⌈a / b⌉ for b > 0. HPA computes a Percent policy in
// floating point, where 110 % of 100 comes to 111; integers keep it 110.
func ceilDiv(a, b int) int {
	q := a / b
	if a%b > 0 {
		q++
	}
	return q
}

// scaleDownLimit is HPA's calculateScaleDownLimitWithBehaviors, the
// mirror of scaleUpLimit: a Percent policy's floor is truncated, Max
// takes the lowest floor (the most change).
func scaleDownLimit(r Rules, current int, up, down []manifest.ScaleChange, now time.Time) int {
	if r.Select == manifest.SelectDisabled {
		return current
	}
	limit := math.MaxInt
	if r.Select == manifest.SelectMin {
		limit = math.MinInt
	}
	for _, p := range r.Policies {
		start := current - changeInPeriod(up, now, p.PeriodSeconds) + changeInPeriod(down, now, p.PeriodSeconds)
		allowed := start - p.Value
		if p.Type == manifest.PolicyPercent {
			allowed = start * (100 - p.Value) / 100 // truncated, as HPA's int32()
		}
		if r.Select == manifest.SelectMin {
			limit = max(limit, allowed)
		} else {
			limit = min(limit, allowed)
		}
	}
	return limit
}

// limitRate is HPA's convertDesiredReplicasWithBehaviorRate: the rate
// policies, then the bounds; the reason names whichever was tighter.
func limitRate(spec Spec, b manifest.ScaleBounds, rec *manifest.AutoscalerStatus, now time.Time, current, desired int) (int, string, string) {
	switch {
	case desired > current:
		limit := max(scaleUpLimit(spec.Up, current, rec.ScaleUp, rec.ScaleDown, now), current)
		if b.Max > limit {
			if desired > limit {
				return limit, ReasonScaleUpLimit, "the desired replica count is increasing faster than the maximum scale rate"
			}
		} else if desired > b.Max {
			return b.Max, ReasonTooManyReplicas, "the desired replica count is more than the maximum replica count"
		}
	case desired < current:
		limit := min(scaleDownLimit(spec.Down, current, rec.ScaleUp, rec.ScaleDown, now), current)
		if b.Min < limit {
			if desired < limit {
				return limit, ReasonScaleDownLimit, "the desired replica count is decreasing faster than the maximum scale rate"
			}
		} else if desired < b.Min {
			return b.Min, ReasonTooFewReplicas, "the desired replica count is less than the minimum replica count"
		}
	}
	return desired, ReasonDesiredWithinRange, "the desired count is within the acceptable range"
}

// recordScale adds a scale from current to desired to its direction's
// events.
func recordScale(rec *manifest.AutoscalerStatus, now time.Time, current, desired int) {
	if desired > current {
		rec.ScaleUp = append(rec.ScaleUp, manifest.ScaleChange{At: now, Change: desired - current})
	} else {
		rec.ScaleDown = append(rec.ScaleDown, manifest.ScaleChange{At: now, Change: current - desired})
	}
}

// pruneEvents drops the events no policy period can see.
func pruneEvents(events []manifest.ScaleChange, now time.Time, longest time.Duration) []manifest.ScaleChange {
	kept := events[:0:0]
	for _, e := range events {
		if !olderThan(e.At, now, longest) {
			kept = append(kept, e)
		}
	}
	return kept
}
