package autoscale

import (
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
)

// The condition types, HPA v2's.
const (
	// AbleToScale: whether the autoscaler may change the size now.
	AbleToScale = "AbleToScale"
	// ScalingActive: whether the metrics give a size.
	ScalingActive = "ScalingActive"
	// ScalingLimited: whether a bound, a rate policy or allocated
	// instances hold the size short of what the metrics ask.
	ScalingLimited = "ScalingLimited"
)

// The condition reasons: HPA v2's, and ours for what game fleets add.
const (
	ReasonFailedGetScale          = "FailedGetScale"
	ReasonReadyForNewScale        = "ReadyForNewScale"
	ReasonScaleUpStabilized       = "ScaleUpStabilized"
	ReasonScaleDownStabilized     = "ScaleDownStabilized"
	ReasonSucceededRescale        = "SucceededRescale"
	ReasonPaused                  = "Paused"
	ReasonDryRun                  = "DryRun"
	ReasonFailedGetInstanceValues = "FailedGetInstanceValues"

	ReasonValidMetricFound          = "ValidMetricFound"
	ReasonScalingDisabled           = "ScalingDisabled"
	ReasonFailedGetResourceMetric   = "FailedGetResourceMetric"
	ReasonFailedGetPrometheusMetric = "FailedGetPrometheusMetric"
	ReasonFailedGetWebMetric        = "FailedGetWebMetric"

	ReasonTooManyReplicas    = "TooManyReplicas"
	ReasonTooFewReplicas     = "TooFewReplicas"
	ReasonScaleUpLimit       = "ScaleUpLimit"
	ReasonScaleDownLimit     = "ScaleDownLimit"
	ReasonDesiredWithinRange = "DesiredWithinRange"
	ReasonAllocated          = "AllocatedInstances"
)

// conditions are the three conditions of one decision, in their fixed
// order, each keeping its last transition time while its status holds.
type conditions struct {
	previous []manifest.AutoscalerCondition
	now      time.Time
	set      map[string]manifest.AutoscalerCondition
}

func newConditions(previous []manifest.AutoscalerCondition, now time.Time) *conditions {
	return &conditions{previous: previous, now: now, set: map[string]manifest.AutoscalerCondition{}}
}

func (c *conditions) put(typ string, status bool, reason, message string) {
	s := "False"
	if status {
		s = "True"
	}
	cond := manifest.AutoscalerCondition{Type: typ, Status: s, Reason: reason, Message: message, LastTransitionTime: c.now}
	for _, p := range c.previous {
		if p.Type == typ && p.Status == s {
			cond.LastTransitionTime = p.LastTransitionTime
		}
	}
	c.set[typ] = cond
}

// list returns the conditions set, and the previous ones of the types
// this decision did not look at (a target that cannot be read says
// nothing new about its metrics).
func (c *conditions) list() []manifest.AutoscalerCondition {
	var out []manifest.AutoscalerCondition
	for _, typ := range []string{AbleToScale, ScalingActive, ScalingLimited} {
		if cond, ok := c.set[typ]; ok {
			out = append(out, cond)
			continue
		}
		for _, p := range c.previous {
			if p.Type == typ {
				out = append(out, p)
			}
		}
	}
	return out
}
