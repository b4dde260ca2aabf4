package autoscale

import (
	"fmt"
	"strings"

	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
)

// Limits of one decision.
const (
	// MaxDecisions is how many decisions the record keeps.
	MaxDecisions = 10
)

// Decision is one evaluation's outcome.
type Decision struct {
	// Record is the autoscaler's new record, to store; when Act, in the
	// same write as the new size.
	Record manifest.AutoscalerStatus
	// Desired is the size decided.
	Desired int
	// Act: scale the target to Desired (neither paused nor a dry run,
	// and a change).
	Act bool
	// NeedVictims is how many instances a scale-down removes: pick them
	// with Victims and attach them with Remove.
	NeedVictims int
}

// Remove attaches the instances a scale-down chose to the record.
func (d *Decision) Remove(victims []manifest.RemovedInstance) {
	d.Record.Decisions[len(d.Record.Decisions)-1].Removed = victims
	if d.Act {
		d.Record.LastScale.Removed = victims
	}
}

// evaluation is one Decide's working state.
type evaluation struct {
	in      Input
	current int
	bounds  manifest.ScaleBounds
	rec     manifest.AutoscalerStatus
	conds   *conditions
	// proposal is the metrics' largest proposal (current when they fail).
	proposal int
	why      []string
}

// Decide makes one decision: target checks, bounds, the metrics'
// proposals, stabilization, rate policies, the allocation floor, then
// paused and dry run. See the package documentation for the rules' sources.
func Decide(in Input) Decision {
	e := &evaluation{in: in, current: in.Target.Replicas, bounds: BoundsAt(in.Spec, in.Now), proposal: in.Target.Replicas}
	e.rec = in.Record
	e.rec.ObservedRevision, e.rec.CurrentReplicas, e.rec.Bounds, e.rec.UpdatedAt = in.Revision, e.current, e.bounds, in.Now
	e.rec.Metrics = nil
	e.conds = newConditions(in.Record.Conditions, in.Now)
	desired := e.size()
	desired = e.floor(desired)
	return e.finish(desired)
}

// size is the size the target should have, before the allocation floor.
func (e *evaluation) size() int {
	in, current := e.in, e.current
	if in.Target.Problem != "" {
		e.conds.put(AbleToScale, false, ReasonFailedGetScale, in.Target.Problem)
		e.because(in.Target.Problem)
		return current
	}
	if current == 0 && e.bounds.Min > 0 {
		e.conds.put(ScalingActive, false, ReasonScalingDisabled, "scaling is disabled since the replica count of the target is zero")
		e.because("the target has 0 instances: autoscaling waits until it has one")
		return current
	}
	p := propose(in, current)
	e.rec.Metrics = p.metrics
	if len(p.failures) == 0 {
		e.proposal = p.best
		e.conds.put(ScalingActive, true, ReasonValidMetricFound, "the autoscaler computed a size from metric "+p.bestName)
	} else {
		msgs := make([]string, len(p.failures))
		for i, f := range p.failures {
			msgs[i] = f.message
		}
		e.conds.put(ScalingActive, false, p.failures[0].reason, strings.Join(msgs, "; "))
	}
	if current < e.bounds.Min || current > e.bounds.Max {
		return e.toBounds(p)
	}
	if len(p.failures) > 0 {
		e.because("a metric could not be read: the size holds (" + e.conds.set[ScalingActive].Message + ")")
		return current
	}
	e.because(metricsWhy(p, current))
	e.rec.Recommendations = e.seeded(e.rec.Recommendations)
	stabilized, reason, message := stabilize(in.Spec, e.rec.Recommendations, in.Now, current, p.best)
	e.rec.Recommendations = remember(in.Spec, e.rec.Recommendations, in.Now, e.clamp(p.best))
	e.conds.put(AbleToScale, true, reason, message)
	if reason != ReasonReadyForNewScale {
		e.because(fmt.Sprintf("stabilized at %d (%s)", stabilized, reason))
	}
	desired, reason, message := limitRate(in.Spec, e.bounds, &e.rec, in.Now, current, stabilized)
	e.conds.put(ScalingLimited, desired != stabilized, reason, message)
	if desired != stabilized {
		e.because(fmt.Sprintf("limited to %d (%s)", desired, reason))
	}
	return desired
}

// toBounds jumps a size outside the bounds straight to the bound, as HPA
// does: no stabilization, no rate policy. The proposal is still
// remembered, so the windows see it.
func (e *evaluation) toBounds(p proposals) int {
	desired, reason, side := e.bounds.Min, ReasonTooFewReplicas, "below minReplicas"
	if e.current > e.bounds.Max {
		desired, reason, side = e.bounds.Max, ReasonTooManyReplicas, "above maxReplicas"
	}
	msg := fmt.Sprintf("the current size %d is %s %d", e.current, side, desired)
	if names := windowNames(e.bounds); names != "" {
		msg += " (schedule " + names + ")"
	}
	e.conds.put(ScalingLimited, true, reason, msg)
	e.conds.put(AbleToScale, true, ReasonReadyForNewScale, "the size goes to the bound at once")
	e.because(msg)
	if len(p.failures) == 0 {
		e.rec.Recommendations = remember(e.in.Spec, e.rec.Recommendations, e.in.Now, e.clamp(p.best))
	}
	return desired
}

// seeded starts a history with the current size when none was ever
// kept (HPA's recordInitialRecommendation): a new autoscaler does not
// scale down before its down window has seen the metrics. Only then: a
// window shorter than the interval would otherwise always see the
// current size and never let the fleet down.
func (e *evaluation) seeded(recs []manifest.Recommendation) []manifest.Recommendation {
	if len(recs) > 0 {
		return recs
	}
	return []manifest.Recommendation{{At: e.in.Now, Replicas: e.current}}
}

// clamp keeps a remembered recommendation within the bounds in force:
// when a schedule window that raised the minimum closes, the down window
// then lowers the fleet from the window's size, not at once.
func (e *evaluation) clamp(n int) int { return min(max(n, e.bounds.Min), e.bounds.Max) }

// metricsWhy says why the metrics move the size: the metric that asks
// for the most on a scale-up, every metric on a scale-down. A buffer
// asks for more when its free instances are below its target; a load
// (cpu, players per instance) when it is above.
func metricsWhy(p proposals, current int) string {
	switch {
	case p.best > current && p.bestType == manifest.MetricBuffer:
		return p.bestName + " below target"
	case p.best > current:
		return p.bestName + " above target"
	case p.best < current:
		return scaleDownWhy(p.metrics)
	}
	return "every metric is at its target, within its tolerance"
}

// scaleDownWhy: every buffer is above its target, every load below.
func scaleDownWhy(metrics []manifest.MetricStatus) string {
	var buffers []string
	for _, m := range metrics {
		if m.Type == manifest.MetricBuffer {
			buffers = append(buffers, m.Name)
		}
	}
	switch {
	case len(buffers) == 0:
		return "All metrics below target"
	case len(buffers) == len(metrics):
		return strings.Join(buffers, ", ") + " above target"
	}
	return strings.Join(buffers, ", ") + " above target, all other metrics below target"
}

func windowNames(b manifest.ScaleBounds) string {
	names := make([]string, len(b.Windows))
	for i, w := range b.Windows {
		names[i] = w.Name
	}
	return strings.Join(names, ", ")
}

func (e *evaluation) because(why string) { e.why = append(e.why, why) }

// floor keeps a scale-down off allocated instances: it removes at most
// the instances Victims may choose (neither allocated nor going), so
// Victims always finds NeedVictims; a value source that failed defers
// it.
func (e *evaluation) floor(desired int) int {
	if desired >= e.current {
		return desired
	}
	removable := 0
	for _, inst := range e.in.Instances {
		if !inst.Allocated && !inst.Going {
			removable++
		}
	}
	if k := e.current - desired; k > removable {
		desired = e.current - removable
		msg := fmt.Sprintf("%d instances to remove, but only %d are neither allocated nor going: allocated ones are kept until released", k, removable)
		e.conds.put(ScalingLimited, true, ReasonAllocated, msg)
		e.because(msg)
	}
	if desired < e.current && e.in.OrderProblem != "" {
		msg := "the scale-down order's values could not be read: " + e.in.OrderProblem
		e.conds.put(AbleToScale, false, ReasonFailedGetInstanceValues, msg)
		e.because(msg)
		return e.current
	}
	return desired
}

// finish applies paused and dry run, records the scale and the decision.
func (e *evaluation) finish(desired int) Decision {
	spec, now := e.in.Spec, e.in.Now
	act := desired != e.current && !spec.Paused && !spec.DryRun
	switch {
	case spec.Paused:
		e.conds.put(AbleToScale, false, ReasonPaused, fmt.Sprintf("paused: would scale from %d to %d", e.current, desired))
		e.because("paused")
	case spec.DryRun:
		e.conds.put(AbleToScale, false, ReasonDryRun, fmt.Sprintf("dry run: would scale from %d to %d", e.current, desired))
		e.because("dry run")
	case act:
		e.conds.put(AbleToScale, true, ReasonSucceededRescale, fmt.Sprintf("scaled from %d to %d", e.current, desired))
	}
	why := strings.Join(e.why, "; ")
	rec := &e.rec
	longest := spec.longestPeriod()
	rec.ScaleUp, rec.ScaleDown = pruneEvents(rec.ScaleUp, now, longest), pruneEvents(rec.ScaleDown, now, longest)
	if act {
		recordScale(rec, now, e.current, desired)
		rec.LastScale = &manifest.ScaleRecord{At: now, From: e.current, To: desired, Reason: why}
	}
	rec.DesiredReplicas, rec.Message = desired, ""
	if !act {
		rec.Message = why
	}
	rec.Conditions = e.conds.list()
	summary := manifest.DecisionSummary{At: now, Current: e.current, Proposal: e.proposal, Desired: desired, Acted: act, Why: why}
	rec.Decisions = append(append(rec.Decisions[:0:0], lastN(rec.Decisions, MaxDecisions-1)...), summary)
	d := Decision{Record: *rec, Desired: desired, Act: act}
	if desired < e.current && !spec.Paused {
		d.NeedVictims = e.current - desired
	}
	return d
}

func lastN[T any](s []T, n int) []T {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
