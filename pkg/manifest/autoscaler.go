package manifest

import (
	"strings"
	"time"
)

// Autoscaler is kind "autoscaler": it sizes one workload of its namespace
// (an application, a process or a deployment) between minReplicas and
// maxReplicas from one or more metrics, the largest proposal winning, as
// Kubernetes' HorizontalPodAutoscaler v2 does; a buffer metric keeps
// ready instances free for game sessions, as Agones' FleetAutoscaler
// does. Unset fields keep their zero or nil here: pkg/autoscale's SpecOf
// applies the defaults (minReplicas 1, intervalSeconds 15, tolerance 0.1,
// HPA v2's behavior per direction), so a stored manifest says only what
// its author wrote.
type Autoscaler struct {
	APIVersion string         `json:"apiVersion"`
	KindName   string         `json:"kind"`
	Metadata   ObjectMeta     `json:"metadata"`
	Spec       AutoscalerSpec `json:"spec"`
}

// Kind implements Object.
func (*Autoscaler) Kind() Kind { return KindAutoscaler }

// Default sets the default namespace.
func (a *Autoscaler) Default() { a.Metadata.Default() }

func (a *Autoscaler) normalize() {
	a.Metadata.normalize()
	a.Spec.Target.Kind = Kind(strings.ToLower(string(a.Spec.Target.Kind)))
}

// AutoscalerSpec is an autoscaler's "spec".
type AutoscalerSpec struct {
	Target ScaleTarget `json:"target"`
	// MinReplicas defaults to 1 (HPA); 0 lets a fleet scale to nothing.
	MinReplicas *int `json:"minReplicas,omitempty"`
	MaxReplicas int  `json:"maxReplicas"`
	// IntervalSeconds is how often the autoscaler decides (default 15,
	// HPA's sync period).
	IntervalSeconds int `json:"intervalSeconds,omitempty"`
	// Tolerance is the dead band around a target within which a metric
	// proposes no change (default 0.1); behavior's per-direction
	// tolerances override it.
	Tolerance *float64 `json:"tolerance,omitempty"`
	// Paused decides and reports but never scales.
	Paused bool `json:"paused,omitempty"`
	// DryRun decides and records the would-be decision but never scales.
	DryRun   bool              `json:"dryRun,omitempty"`
	Metrics  []AutoscaleMetric `json:"metrics"`
	Behavior *ScaleBehavior    `json:"behavior,omitempty"`
	// Schedule raises or lowers the bounds while a window is open.
	Schedule []ScaleWindow `json:"schedule,omitempty"`
	// ScaleDownOrder is the per-instance value a scale-down removes the
	// lowest of first (players on a game server); none: highest ID first.
	ScaleDownOrder *InstanceValue `json:"scaleDownOrder,omitempty"`
	// Allocation marks instances allocated from a per-instance probe,
	// besides the API's allocate and release.
	Allocation *AllocationProbe `json:"allocation,omitempty"`
}

// ScaleTarget names the workload an autoscaler sizes, in its namespace.
type ScaleTarget struct {
	Kind Kind   `json:"kind"` // application, process or deployment
	Name string `json:"name"`
}

// MetricType is an autoscaler metric's "type".
type MetricType string

// The metric types.
const (
	// MetricResource is the cpu or memory use of the instances against
	// their requests.
	MetricResource MetricType = "resource"
	// MetricPrometheus is a Prometheus query's value.
	MetricPrometheus MetricType = "prometheus"
	// MetricWeb is a web call's value.
	MetricWeb MetricType = "web"
	// MetricBuffer keeps ready instances that are not allocated.
	MetricBuffer MetricType = "buffer"
)

// AutoscaleMetric is one metric: exactly the source its type names is
// set. TargetValue and TargetAverageValue (exactly one) are for
// prometheus and web; resource carries its own target, buffer is exact.
type AutoscaleMetric struct {
	Type MetricType `json:"type"`
	// Name is required for prometheus and web; resource defaults to its
	// resource's name, buffer to "buffer" (see MetricName).
	Name       string              `json:"name,omitempty"`
	Resource   *ResourceMetric     `json:"resource,omitempty"`
	Prometheus *PrometheusProvider `json:"prometheus,omitempty"`
	Web        *WebProvider        `json:"web,omitempty"`
	Buffer     *BufferMetric       `json:"buffer,omitempty"`
	// TargetValue is the value the whole fleet should see (queue length):
	// the proposal is ceil(value / target × ready instances).
	TargetValue *float64 `json:"targetValue,omitempty"`
	// TargetAverageValue is the value per instance (players): the
	// proposal is ceil(value / target).
	TargetAverageValue *float64 `json:"targetAverageValue,omitempty"`
}

// MetricName is m's name as status and errors show it.
func (m AutoscaleMetric) MetricName() string {
	switch {
	case m.Name != "":
		return m.Name
	case m.Type == MetricResource && m.Resource != nil:
		return string(m.Resource.Name)
	case m.Type == MetricBuffer:
		return string(MetricBuffer)
	}
	return string(m.Type)
}

// ResourceName is a resource metric's resource.
type ResourceName string

// The resources an instance's use is reported for.
const (
	ResourceCPU    ResourceName = "cpu"
	ResourceMemory ResourceName = "memory"
)

// ResourceMetric is the average use of the ready instances: exactly one
// of TargetAverageUtilization (percent of the requested amount, the
// limit where a task requests none) and TargetAverageValue (cores for
// cpu, MB for memory, per instance).
type ResourceMetric struct {
	Name                     ResourceName `json:"name"`
	TargetAverageUtilization *int         `json:"targetAverageUtilization,omitempty"`
	TargetAverageValue       *float64     `json:"targetAverageValue,omitempty"`
}

// BufferMetric is Agones' buffer policy: keep BufferSize instances (a
// count, or a percentage of the fleet) ready and not allocated.
type BufferMetric struct {
	BufferSize IntOrPercent `json:"bufferSize"`
}

// ScaleBehavior is HPA v2's behavior: how fast each direction may move.
// A direction left out takes HPA's defaults.
type ScaleBehavior struct {
	ScaleUp   *ScaleRules `json:"scaleUp,omitempty"`
	ScaleDown *ScaleRules `json:"scaleDown,omitempty"`
}

// SelectPolicy picks among a direction's policies.
type SelectPolicy string

// HPA v2's selectPolicy values.
const (
	// SelectMax takes the policy allowing the most change.
	SelectMax SelectPolicy = "Max"
	// SelectMin takes the policy allowing the least change.
	SelectMin SelectPolicy = "Min"
	// SelectDisabled forbids scaling in the direction.
	SelectDisabled SelectPolicy = "Disabled"
)

// ScaleRules is one direction's behavior; unset fields take HPA v2's
// defaults for that direction.
type ScaleRules struct {
	StabilizationWindowSeconds *int          `json:"stabilizationWindowSeconds,omitempty"`
	SelectPolicy               SelectPolicy  `json:"selectPolicy,omitempty"`
	Policies                   []ScalePolicy `json:"policies,omitempty"`
	// Tolerance overrides spec.tolerance in this direction (HPA's
	// configurable tolerance).
	Tolerance *float64 `json:"tolerance,omitempty"`
}

// PolicyType is how a policy measures change.
type PolicyType string

// HPA v2's policy types.
const (
	PolicyPods    PolicyType = "Pods"
	PolicyPercent PolicyType = "Percent"
)

// ScalePolicy allows a change of Value instances (Pods) or Value percent
// of the fleet (Percent) within any PeriodSeconds.
type ScalePolicy struct {
	Type          PolicyType `json:"type"`
	Value         int        `json:"value"`
	PeriodSeconds int        `json:"periodSeconds"`
}

// ScaleWindow sets the bounds while it is open: from each time its Start
// cron expression names until the next time End names, in TimeZone
// (IANA, default UTC). Crons have five fields (minute hour day-of-month
// month day-of-week) or six with leading seconds. An open window's
// MinReplicas and MaxReplicas replace the spec's; of several open ones
// the largest wins.
type ScaleWindow struct {
	Name        string `json:"name"`
	Start       string `json:"start"`
	End         string `json:"end"`
	TimeZone    string `json:"timeZone,omitempty"`
	MinReplicas *int   `json:"minReplicas,omitempty"`
	MaxReplicas *int   `json:"maxReplicas,omitempty"`
}

// InstanceValue is a value read for each instance: a Prometheus query
// whose samples carry the instance in InstanceLabel (an instance ID or a
// task group ID), or a web call made per instance with the instance's
// arguments (PreDeleteHook's: PodName, InstanceID, HostIP, PodIP,
// Port.<name>). Exactly one of Prometheus and Web.
type InstanceValue struct {
	Prometheus    *PrometheusProvider `json:"prometheus,omitempty"`
	InstanceLabel string              `json:"instanceLabel,omitempty"`
	Web           *WebProvider        `json:"web,omitempty"`
}

// AllocationProbe marks an instance allocated while AllocatedCondition
// (expr-lang over result, as hook conditions) holds for its probe value,
// every IntervalSeconds (default 10).
type AllocationProbe struct {
	Probe              InstanceValue `json:"probe"`
	AllocatedCondition string        `json:"allocatedCondition"`
	IntervalSeconds    int           `json:"intervalSeconds,omitempty"`
}

// AutoscalerStatus is what the leading scheduler decided for an
// autoscaler, stored before it acts: the API shows it, and a new leader
// resumes from it alone (its windows' recommendations and its scale
// events are here, not in memory).
type AutoscalerStatus struct {
	// ObservedRevision is the spec revision decided on.
	ObservedRevision int64 `json:"observedRevision"`
	CurrentReplicas  int   `json:"currentReplicas"`
	DesiredReplicas  int   `json:"desiredReplicas"`
	// LastScale is the last scale the autoscaler made.
	LastScale  *ScaleRecord          `json:"lastScale,omitempty"`
	Metrics    []MetricStatus        `json:"metrics,omitempty"`
	Conditions []AutoscalerCondition `json:"conditions,omitempty"`
	Bounds     ScaleBounds           `json:"bounds"`
	// Message says why the autoscaler does not scale when it does not.
	Message string `json:"message,omitempty"`
	// Recommendations are the proposals within the longer stabilization
	// window, oldest first.
	Recommendations []Recommendation `json:"recommendations,omitempty"`
	// ScaleUp and ScaleDown are the scale events within the longest
	// policy period of their direction, oldest first.
	ScaleUp   []ScaleChange `json:"scaleUp,omitempty"`
	ScaleDown []ScaleChange `json:"scaleDown,omitempty"`
	// Decisions are the last decisions, oldest first.
	Decisions []DecisionSummary `json:"decisions,omitempty"`
	// Allocation is the allocation probe's last round; nil without a
	// probe.
	Allocation *AllocationProbeStatus `json:"allocation,omitempty"`
	UpdatedAt  time.Time              `json:"updatedAt"`
}

// AllocationProbeStatus is one round of an allocation probe: how many
// instances it probed, for how many allocatedCondition held, what it
// changed, and the instances it could not judge, which keep their state.
type AllocationProbeStatus struct {
	ProbedAt time.Time `json:"probedAt"`
	Probed   int       `json:"probed"`
	// Holding is how many probed instances the condition held for.
	Holding int `json:"holding"`
	// Allocations and Releases are the changes the round wrote (in a dry
	// run, would have written).
	Allocations int `json:"allocations,omitempty"`
	Releases    int `json:"releases,omitempty"`
	// FailedCount instances could not be probed or changed; the first
	// few are in Failed.
	FailedCount int            `json:"failedCount,omitempty"`
	Failed      []ProbeFailure `json:"failed,omitempty"`
	// Message says why the round did nothing at all (the fleet could not
	// be read) or that it was a dry run.
	Message string `json:"message,omitempty"`
}

// ProbeFailure is an instance an allocation probe could not judge or
// change, and why.
type ProbeFailure struct {
	Instance int    `json:"instance"`
	Message  string `json:"message"`
}

// ScaleRecord is one scale: from and to how many instances, why, and the
// instances a scale-down removed with why each.
type ScaleRecord struct {
	At      time.Time         `json:"at"`
	From    int               `json:"from"`
	To      int               `json:"to"`
	Reason  string            `json:"reason"`
	Removed []RemovedInstance `json:"removed,omitempty"`
}

// RemovedInstance is an instance a scale-down chose, and why it.
type RemovedInstance struct {
	ID  int    `json:"id"`
	Why string `json:"why"`
}

// MetricStatus is one metric's reading and proposal. Current is nil when
// the metric could not be read (Message says why); Proposal is nil then.
type MetricStatus struct {
	Name string     `json:"name"`
	Type MetricType `json:"type"`
	// TargetType is Utilization (percent), AverageValue, Value or Buffer.
	TargetType string   `json:"targetType"`
	Current    *float64 `json:"current,omitempty"`
	Target     float64  `json:"target"`
	Proposal   *int     `json:"proposal,omitempty"`
	Message    string   `json:"message,omitempty"`
}

// The metric target types.
const (
	TargetUtilization  = "Utilization"
	TargetAverageValue = "AverageValue"
	TargetValue        = "Value"
	TargetBuffer       = "Buffer"
)

// AutoscalerCondition is one observation, Kubernetes style.
// LastTransitionTime changes only when Status does.
type AutoscalerCondition struct {
	Type               string    `json:"type"`   // AbleToScale, ScalingActive, ScalingLimited
	Status             string    `json:"status"` // True, False
	Reason             string    `json:"reason"`
	Message            string    `json:"message,omitempty"`
	LastTransitionTime time.Time `json:"lastTransitionTime"`
}

// ScaleBounds are the bounds in force and the schedule windows that set
// them.
type ScaleBounds struct {
	Min     int            `json:"min"`
	Max     int            `json:"max"`
	Windows []ActiveWindow `json:"windows,omitempty"`
}

// ActiveWindow is an open schedule window and when it closes.
type ActiveWindow struct {
	Name  string    `json:"name"`
	Until time.Time `json:"until"`
}

// Recommendation is one evaluation's proposal, kept for the
// stabilization windows.
type Recommendation struct {
	At       time.Time `json:"at"`
	Replicas int       `json:"replicas"`
}

// ScaleChange is a scale event of one direction: Change instances added
// (scale-up) or removed (scale-down), a positive count.
type ScaleChange struct {
	At     time.Time `json:"at"`
	Change int       `json:"change"`
}

// DecisionSummary is one decision: the size then, the metrics' proposal,
// the size decided, whether it was acted on, why, and for a scale-down
// (acted on or not: a dry run shows it) the instances it chose.
type DecisionSummary struct {
	At       time.Time         `json:"at"`
	Current  int               `json:"current"`
	Proposal int               `json:"proposal"`
	Desired  int               `json:"desired"`
	Acted    bool              `json:"acted"`
	Why      string            `json:"why"`
	Removed  []RemovedInstance `json:"removed,omitempty"`
}
