package manifest

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/bcs-mesos/bcs-mesos/pkg/field"
)

// Bounds of an autoscaler's numbers (HPA's where it has one).
const (
	// MinAutoscaleIntervalSeconds and MaxAutoscaleIntervalSeconds bound
	// intervalSeconds.
	MinAutoscaleIntervalSeconds = 5
	MaxAutoscaleIntervalSeconds = 3600
	// MaxStabilizationWindowSeconds is HPA's bound on a window.
	MaxStabilizationWindowSeconds = 3600
	// MaxPolicyPeriodSeconds is HPA's bound on a policy's period.
	MaxPolicyPeriodSeconds = 1800
	// MaxTargetUtilization bounds a resource metric's percentage: use
	// above the request is possible up to the limit.
	MaxTargetUtilization = 1000
	// MinProbeIntervalSeconds and MaxProbeIntervalSeconds bound an
	// allocation probe's interval.
	MinProbeIntervalSeconds = 2
	MaxProbeIntervalSeconds = 300
)

// Validate implements Object. The expr-lang allocatedCondition and the
// jsonPaths are the hook engine's languages: pkg/autoscale's Check
// compiles them.
func (a *Autoscaler) Validate(Resolver) field.ErrorList {
	v := newValidator(nil, a.Metadata.Namespace)
	v.meta("metadata", a.Metadata)
	s := a.Spec
	sp := field.Path("spec")
	v.scaleTarget(sp.Child("target"), s.Target)
	minReplicas := 1
	if s.MinReplicas != nil {
		minReplicas = *s.MinReplicas
		v.inRange(sp.Child("minReplicas"), minReplicas, MaxInstances)
	}
	switch {
	case s.MaxReplicas < 1 || s.MaxReplicas > MaxInstances:
		v.invalid(sp.Child("maxReplicas"), "want 1 to %d, got %d", MaxInstances, s.MaxReplicas)
	case minReplicas > s.MaxReplicas:
		v.invalid(sp.Child("minReplicas"), "must be at most maxReplicas (%d), got %d", s.MaxReplicas, minReplicas)
	}
	if s.IntervalSeconds != 0 && (s.IntervalSeconds < MinAutoscaleIntervalSeconds || s.IntervalSeconds > MaxAutoscaleIntervalSeconds) {
		v.invalid(sp.Child("intervalSeconds"), "want %d to %d seconds, got %d", MinAutoscaleIntervalSeconds, MaxAutoscaleIntervalSeconds, s.IntervalSeconds)
	}
	v.tolerance(sp.Child("tolerance"), s.Tolerance)
	v.autoscaleMetrics(sp.Child("metrics"), s.Metrics, minReplicas, s.MaxReplicas)
	if b := s.Behavior; b != nil {
		v.scaleRules(sp.Child("behavior").Child("scaleUp"), b.ScaleUp)
		v.scaleRules(sp.Child("behavior").Child("scaleDown"), b.ScaleDown)
	}
	v.scaleWindows(sp.Child("schedule"), s.Schedule)
	if o := s.ScaleDownOrder; o != nil {
		v.instanceValue(sp.Child("scaleDownOrder"), *o)
	}
	if al := s.Allocation; al != nil {
		ap := sp.Child("allocation")
		v.instanceValue(ap.Child("probe"), al.Probe)
		if strings.TrimSpace(al.AllocatedCondition) == "" {
			v.required(ap.Child("allocatedCondition"))
		}
		if al.IntervalSeconds != 0 && (al.IntervalSeconds < MinProbeIntervalSeconds || al.IntervalSeconds > MaxProbeIntervalSeconds) {
			v.invalid(ap.Child("intervalSeconds"), "want %d to %d seconds, got %d", MinProbeIntervalSeconds, MaxProbeIntervalSeconds, al.IntervalSeconds)
		}
	}
	return v.errs
}

func (v *validator) scaleTarget(p field.Path, t ScaleTarget) {
	switch t.Kind {
	case KindApplication, KindProcess, KindDeployment:
	case KindDaemonset:
		v.invalid(p.Child("kind"), "a daemonset runs one instance per agent its constraint admits: nothing to scale")
	case "":
		v.required(p.Child("kind"))
	default:
		v.invalid(p.Child("kind"), "want one of application, process, deployment, got %q", t.Kind)
	}
	v.name(p.Child("name"), t.Name)
}

func (v *validator) tolerance(p field.Path, t *float64) {
	if t != nil && !(*t >= 0 && *t <= 1) {
		v.invalid(p, "want 0 to 1 (a fraction of the target), got %v", *t)
	}
}

func (v *validator) autoscaleMetrics(p field.Path, metrics []AutoscaleMetric, minReplicas, maxReplicas int) {
	if len(metrics) == 0 {
		v.required(p)
	}
	names := map[string]bool{}
	buffers := 0
	for i, m := range metrics {
		mp := p.Index(i)
		name := m.MetricName()
		if names[name] {
			v.invalid(mp.Child("name"), "duplicate metric %q", name)
		}
		names[name] = true
		if m.Type == MetricBuffer {
			buffers++
			if buffers == 2 {
				v.invalid(mp, "at most one buffer metric")
			}
		}
		v.autoscaleMetric(mp, m, minReplicas, maxReplicas)
	}
}

// autoscaleMetric checks that m has exactly the source its type names,
// and the target that type takes.
func (v *validator) autoscaleMetric(p field.Path, m AutoscaleMetric, minReplicas, maxReplicas int) {
	sources := map[MetricType]bool{
		MetricResource: m.Resource != nil, MetricPrometheus: m.Prometheus != nil,
		MetricWeb: m.Web != nil, MetricBuffer: m.Buffer != nil,
	}
	for _, t := range []MetricType{MetricResource, MetricPrometheus, MetricWeb, MetricBuffer} {
		switch {
		case t == m.Type && !sources[t]:
			v.required(p.Child(string(t)))
		case t != m.Type && sources[t]:
			v.invalid(p.Child(string(t)), "a metric of type %q takes no %s", m.Type, t)
		}
	}
	switch m.Type {
	case MetricResource, MetricBuffer:
		if m.TargetValue != nil || m.TargetAverageValue != nil {
			v.invalid(p, "targetValue and targetAverageValue are for prometheus and web metrics")
		}
	case MetricPrometheus, MetricWeb:
		v.name(p.Child("name"), m.Name)
		v.readingTarget(p, m)
	case "":
		v.required(p.Child("type"))
	default:
		v.invalid(p.Child("type"), "want one of resource, prometheus, web, buffer, got %q", m.Type)
	}
	switch {
	case m.Type == MetricResource && m.Resource != nil:
		v.resourceMetric(p.Child("resource"), *m.Resource)
	case m.Type == MetricPrometheus && m.Prometheus != nil:
		v.prometheusProvider(p.Child("prometheus"), *m.Prometheus, noArgs)
	case m.Type == MetricWeb && m.Web != nil:
		v.webProvider(p.Child("web"), *m.Web, noArgs)
	case m.Type == MetricBuffer && m.Buffer != nil:
		v.bufferMetric(p.Child("buffer").Child("bufferSize"), m.Buffer.BufferSize, minReplicas, maxReplicas)
	}
}

// readingTarget checks that exactly one of a reading's targets is set,
// and positive.
func (v *validator) readingTarget(p field.Path, m AutoscaleMetric) {
	switch {
	case m.TargetValue == nil && m.TargetAverageValue == nil:
		v.invalid(p.Child("targetValue"), "required: targetValue (the whole fleet's) or targetAverageValue (per instance)")
	case m.TargetValue != nil && m.TargetAverageValue != nil:
		v.invalid(p.Child("targetAverageValue"), "give targetValue or targetAverageValue, not both")
	case m.TargetValue != nil:
		v.positive(p.Child("targetValue"), *m.TargetValue)
	default:
		v.positive(p.Child("targetAverageValue"), *m.TargetAverageValue)
	}
}

func (v *validator) positive(p field.Path, f float64) {
	if !(f > 0) || math.IsInf(f, 0) {
		v.invalid(p, "must be a number > 0, got %v", f)
	}
}

func (v *validator) resourceMetric(p field.Path, r ResourceMetric) {
	oneOf(v, p.Child("name"), r.Name, ResourceCPU, ResourceMemory)
	switch {
	case r.TargetAverageUtilization == nil && r.TargetAverageValue == nil:
		v.invalid(p.Child("targetAverageUtilization"), "required: targetAverageUtilization (percent of the request) or targetAverageValue (cores or MB per instance)")
	case r.TargetAverageUtilization != nil && r.TargetAverageValue != nil:
		v.invalid(p.Child("targetAverageValue"), "give targetAverageUtilization or targetAverageValue, not both")
	case r.TargetAverageUtilization != nil:
		if u := *r.TargetAverageUtilization; u < 1 || u > MaxTargetUtilization {
			v.invalid(p.Child("targetAverageUtilization"), "want 1 to %d (percent), got %d", MaxTargetUtilization, u)
		}
	default:
		v.positive(p.Child("targetAverageValue"), *r.TargetAverageValue)
	}
}

// bufferMetric checks Agones' buffer rules: a count > 0 that maxReplicas
// can hold, or 1% to 99% with minReplicas ≥ 1 (at 0 a fleet with nothing
// allocated shrinks to nothing and never grows again).
func (v *validator) bufferMetric(p field.Path, size IntOrPercent, minReplicas, maxReplicas int) {
	switch {
	case size.Percent && (size.Value < 1 || size.Value > 99):
		v.invalid(p, "want a percentage from 1%% to 99%%, got %s", size)
	case size.Percent && minReplicas < 1:
		v.invalid(p, "a percentage buffer needs minReplicas ≥ 1: with none allocated the fleet would shrink to 0 and never grow")
	case !size.Percent && size.Value < 1:
		v.invalid(p, "want a count > 0 or a percentage such as \"20%%\", got %s", size)
	case !size.Percent && size.Value > maxReplicas:
		v.invalid(p, "must be at most maxReplicas (%d), got %d", maxReplicas, size.Value)
	}
}

func (v *validator) scaleRules(p field.Path, r *ScaleRules) {
	if r == nil {
		return
	}
	if w := r.StabilizationWindowSeconds; w != nil {
		v.inRange(p.Child("stabilizationWindowSeconds"), *w, MaxStabilizationWindowSeconds)
	}
	if r.SelectPolicy != "" {
		oneOf(v, p.Child("selectPolicy"), r.SelectPolicy, SelectMax, SelectMin, SelectDisabled)
	}
	v.tolerance(p.Child("tolerance"), r.Tolerance)
	for i, pol := range r.Policies {
		pp := p.Child("policies").Index(i)
		oneOf(v, pp.Child("type"), pol.Type, PolicyPods, PolicyPercent)
		if pol.Value < 1 {
			v.invalid(pp.Child("value"), "must be > 0, got %d", pol.Value)
		}
		if pol.PeriodSeconds < 1 || pol.PeriodSeconds > MaxPolicyPeriodSeconds {
			v.invalid(pp.Child("periodSeconds"), "want 1 to %d seconds, got %d", MaxPolicyPeriodSeconds, pol.PeriodSeconds)
		}
	}
}

func (v *validator) scaleWindows(p field.Path, windows []ScaleWindow) {
	names := map[string]bool{}
	for i, w := range windows {
		wp := p.Index(i)
		switch {
		case w.Name == "":
			v.required(wp.Child("name"))
		case names[w.Name]:
			v.invalid(wp.Child("name"), "duplicate window %q", w.Name)
		}
		names[w.Name] = true
		loc, err := WindowZone(w.TimeZone)
		if err != nil {
			v.invalid(wp.Child("timeZone"), "%v", err)
			loc = time.UTC
		}
		for _, c := range []struct{ name, spec string }{{"start", w.Start}, {"end", w.End}} {
			if _, err := WindowCron(c.spec, loc); err != nil {
				v.invalid(wp.Child(c.name), "%v", err)
			}
		}
		if w.Start != "" && strings.Join(strings.Fields(w.Start), " ") == strings.Join(strings.Fields(w.End), " ") {
			v.invalid(wp.Child("end"), "must differ from start: the window would never open")
		}
		v.windowBounds(wp, w)
	}
}

func (v *validator) windowBounds(p field.Path, w ScaleWindow) {
	if w.MinReplicas == nil && w.MaxReplicas == nil {
		v.invalid(p, "a window sets minReplicas, maxReplicas or both")
	}
	if w.MinReplicas != nil {
		v.inRange(p.Child("minReplicas"), *w.MinReplicas, MaxInstances)
	}
	if w.MaxReplicas != nil {
		v.inRange(p.Child("maxReplicas"), *w.MaxReplicas, MaxInstances)
	}
	if w.MinReplicas != nil && w.MaxReplicas != nil && *w.MinReplicas > *w.MaxReplicas {
		v.invalid(p.Child("minReplicas"), "must be at most the window's maxReplicas (%d), got %d", *w.MaxReplicas, *w.MinReplicas)
	}
}

// cronFields is a window's cron dialect: five fields, or six with
// leading seconds.
var cronFields = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)

// WindowCron compiles a schedule window's start or end in loc. A zone
// written into the expression (CRON_TZ=) is refused: timeZone says it,
// once for both ends.
func WindowCron(spec string, loc *time.Location) (*cron.SpecSchedule, error) {
	switch {
	case strings.TrimSpace(spec) == "":
		return nil, fmt.Errorf("required")
	case strings.HasPrefix(spec, "TZ=") || strings.HasPrefix(spec, "CRON_TZ="):
		return nil, fmt.Errorf("give the zone in timeZone, not in the expression, got %q", spec)
	}
	s, err := cronFields.Parse(spec)
	if err != nil {
		return nil, fmt.Errorf("want a cron expression of 5 fields (minute hour day-of-month month day-of-week) or 6 with leading seconds, got %q: %v", spec, err)
	}
	sched := s.(*cron.SpecSchedule) // the parser's only result without descriptors
	sched.Location = loc
	// Any date comes round within five years (the library's horizon):
	// none from a fixed time means never (February 30).
	if sched.Next(time.Date(2000, 1, 1, 0, 0, 0, 0, loc)).IsZero() {
		return nil, fmt.Errorf("%q never comes", spec)
	}
	return sched, nil
}

// WindowZone loads a window's IANA time zone; "" is UTC.
func WindowZone(name string) (*time.Location, error) {
	if name == "" {
		return time.UTC, nil
	}
	if name == "Local" {
		return nil, fmt.Errorf("want an IANA zone such as \"Asia/Shanghai\": Local is whatever the leader's machine says")
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %q (want an IANA name such as \"Asia/Shanghai\")", name)
	}
	return loc, nil
}

// argsAllowed says which {{ args.NAME }} a provider may use.
type argsAllowed func(name string) bool

// noArgs: a fleet-wide reading is one call with nothing to fill in.
func noArgs(string) bool { return false }

// instanceArgs are the arguments a per-instance call gets, PreDeleteHook's.
func instanceArgs(name string) bool {
	switch name {
	case ArgNamespace, ArgAppName, ArgPodName, ArgInstanceID, ArgHostIP, ArgPodIP:
		return true
	}
	return strings.HasPrefix(name, ArgPortPrefix)
}

// instanceValue checks a per-instance source: a Prometheus query whose
// samples name their instance in instanceLabel, or a web call per
// instance.
func (v *validator) instanceValue(p field.Path, iv InstanceValue) {
	switch {
	case (iv.Prometheus == nil) == (iv.Web == nil):
		v.invalid(p, "exactly one of prometheus and web")
	case iv.Prometheus != nil:
		v.prometheusProvider(p.Child("prometheus"), *iv.Prometheus, noArgs)
		if iv.InstanceLabel == "" {
			v.invalid(p.Child("instanceLabel"), "required: the label whose value is the instance ID or task group ID of each sample")
		}
	default:
		v.webProvider(p.Child("web"), *iv.Web, instanceArgs)
		if iv.InstanceLabel != "" {
			v.invalid(p.Child("instanceLabel"), "for prometheus: a web call is made per instance with its arguments")
		}
	}
}

func (v *validator) prometheusProvider(p field.Path, prom PrometheusProvider, args argsAllowed) {
	if prom.Address == "" {
		v.required(p.Child("address"))
	}
	if prom.Query == "" {
		v.required(p.Child("query"))
	}
	v.allowedArgs(p.Child("address"), prom.Address, args)
	v.allowedArgs(p.Child("query"), prom.Query, args)
}

func (v *validator) webProvider(p field.Path, web WebProvider, args argsAllowed) {
	if web.URL == "" {
		v.required(p.Child("url"))
	}
	if web.Method != "" {
		oneOf(v, p.Child("method"), web.Method, "GET", "POST")
	}
	v.inRange(p.Child("timeoutSeconds"), web.TimeoutSeconds, MaxIntervalSeconds)
	v.allowedArgs(p.Child("url"), web.URL, args)
	v.allowedArgs(p.Child("body"), web.Body, args)
	for j, h := range web.Headers {
		hp := p.Child("headers").Index(j)
		if h.Key == "" {
			v.required(hp.Child("key"))
		}
		v.allowedArgs(hp.Child("value"), h.Value, args)
	}
}

func (v *validator) allowedArgs(p field.Path, s string, args argsAllowed) {
	for _, name := range ArgNames(s) {
		if !args(name) {
			v.invalid(p, "{{ args.%s }}: not given here (a fleet-wide reading takes no arguments; a per-instance one gets Namespace, AppName, PodName, InstanceID, HostIP, PodIP and Port.<name>)", name)
		}
	}
}
