package autoscale

import (
	"time"

	"github.com/robfig/cron/v3"

	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
)

// Spec is an autoscaler's spec with every default applied and its
// schedule compiled: what Decide reads.
type Spec struct {
	Target   manifest.ScaleTarget
	Min, Max int
	Interval time.Duration
	Paused   bool
	DryRun   bool
	// Metrics are the spec's, in its order; Readings follow it.
	Metrics []manifest.AutoscaleMetric
	// Up and Down are behavior.scaleUp and behavior.scaleDown.
	Up, Down Rules
	Windows  []Window
}

// Rules is one direction's behavior with HPA v2's defaults filled in.
type Rules struct {
	Window    time.Duration
	Select    manifest.SelectPolicy
	Policies  []manifest.ScalePolicy
	Tolerance float64
}

// Window is a compiled schedule window.
type Window struct {
	Name       string
	Start, End cron.Schedule
	Min, Max   *int
}

// Defaults, HPA v2's (pkg/apis/autoscaling/v2/defaults.go) where it has
// one.
const (
	DefaultMinReplicas     = 1
	DefaultInterval        = 15 * time.Second
	DefaultTolerance       = 0.1
	DefaultScaleDownWindow = 300 * time.Second
	// DefaultUsageInterval is how often instances report their use
	// unless Input says otherwise.
	DefaultUsageInterval    = 15 * time.Second
	defaultPolicyPeriodSecs = 15
)

// DefaultScaleUp is HPA v2's scaleUp: no window; the larger of 4
// instances and 100 % per 15 s.
func DefaultScaleUp() manifest.ScaleRules {
	return manifest.ScaleRules{SelectPolicy: manifest.SelectMax, Policies: []manifest.ScalePolicy{
		{Type: manifest.PolicyPods, Value: 4, PeriodSeconds: defaultPolicyPeriodSecs},
		{Type: manifest.PolicyPercent, Value: 100, PeriodSeconds: defaultPolicyPeriodSecs},
	}}
}

// DefaultScaleDown is HPA v2's scaleDown: a 300 s window; 100 % per 15 s.
func DefaultScaleDown() manifest.ScaleRules {
	return manifest.ScaleRules{SelectPolicy: manifest.SelectMax, Policies: []manifest.ScalePolicy{
		{Type: manifest.PolicyPercent, Value: 100, PeriodSeconds: defaultPolicyPeriodSecs},
	}}
}

// SpecOf validates m and returns its Spec: unset fields take their
// defaults, per direction for behavior (HPA v2 fills a direction's unset
// fields from that direction's defaults), and the schedule's crons are
// compiled in their zones.
func SpecOf(m *manifest.Autoscaler) (Spec, error) {
	if err := m.Validate(nil).ToError(); err != nil {
		return Spec{}, err
	}
	s := m.Spec
	spec := Spec{
		Target: s.Target, Min: DefaultMinReplicas, Max: s.MaxReplicas, Interval: DefaultInterval,
		Paused: s.Paused, DryRun: s.DryRun, Metrics: s.Metrics,
	}
	if s.MinReplicas != nil {
		spec.Min = *s.MinReplicas
	}
	if s.IntervalSeconds != 0 {
		spec.Interval = time.Duration(s.IntervalSeconds) * time.Second
	}
	tolerance := DefaultTolerance
	if s.Tolerance != nil {
		tolerance = *s.Tolerance
	}
	var up, down *manifest.ScaleRules
	if s.Behavior != nil {
		up, down = s.Behavior.ScaleUp, s.Behavior.ScaleDown
	}
	spec.Up = rulesOf(up, DefaultScaleUp(), 0, tolerance)
	spec.Down = rulesOf(down, DefaultScaleDown(), DefaultScaleDownWindow, tolerance)
	for _, w := range s.Schedule {
		compiled, err := compileWindow(w)
		if err != nil {
			return Spec{}, err
		}
		spec.Windows = append(spec.Windows, compiled)
	}
	return spec, nil
}

// rulesOf fills the unset fields of r from the direction's defaults.
func rulesOf(r *manifest.ScaleRules, defaults manifest.ScaleRules, window time.Duration, tolerance float64) Rules {
	out := Rules{Window: window, Select: defaults.SelectPolicy, Policies: defaults.Policies, Tolerance: tolerance}
	if r == nil {
		return out
	}
	if r.StabilizationWindowSeconds != nil {
		out.Window = time.Duration(*r.StabilizationWindowSeconds) * time.Second
	}
	if r.SelectPolicy != "" {
		out.Select = r.SelectPolicy
	}
	if len(r.Policies) > 0 {
		out.Policies = r.Policies
	}
	if r.Tolerance != nil {
		out.Tolerance = *r.Tolerance
	}
	return out
}

func compileWindow(w manifest.ScaleWindow) (Window, error) {
	loc, err := manifest.WindowZone(w.TimeZone)
	if err != nil {
		return Window{}, err
	}
	start, err := manifest.WindowCron(w.Start, loc)
	if err != nil {
		return Window{}, err
	}
	end, err := manifest.WindowCron(w.End, loc)
	if err != nil {
		return Window{}, err
	}
	return Window{Name: w.Name, Start: start, End: end, Min: w.MinReplicas, Max: w.MaxReplicas}, nil
}

// longestPeriod is the longest policy period of either direction: scale
// events older than it no longer limit anything (a scale-up's limit
// counts the scale-downs of its period too).
func (s Spec) longestPeriod() time.Duration {
	var longest int
	for _, p := range append(append([]manifest.ScalePolicy(nil), s.Up.Policies...), s.Down.Policies...) {
		longest = max(longest, p.PeriodSeconds)
	}
	return time.Duration(longest) * time.Second
}
