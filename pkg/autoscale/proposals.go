package autoscale

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
)

// proposals are what the metrics propose: each one's status, the largest
// proposal and the metric that made it, or the failures that hold the
// size this round.
type proposals struct {
	metrics  []manifest.MetricStatus
	best     int
	bestName string
	bestType manifest.MetricType
	failures []failure
}

// failure is a metric that could not be read: its condition reason
// (FailedGet<Type>Metric) and why.
type failure struct{ reason, message string }

// propose computes every metric's proposal; the largest wins (HPA's
// computeReplicasForMetrics).
func propose(in Input, current int) proposals {
	var p proposals
	reading := 0
	for _, m := range in.Spec.Metrics {
		var st manifest.MetricStatus
		var err error
		switch m.Type {
		case manifest.MetricResource:
			st, err = resourceProposal(in, *m.Resource, current)
		case manifest.MetricBuffer:
			st = bufferProposal(in.Instances, m.Buffer.BufferSize)
		default:
			r := Reading{Err: "no reading taken"}
			if reading < len(in.Readings) {
				r = in.Readings[reading]
			}
			reading++
			st, err = readingProposal(in, m, r, current)
		}
		st.Name, st.Type = m.MetricName(), m.Type
		if err != nil {
			st.Message = err.Error()
			p.failures = append(p.failures, failure{reason: failedReason(m.Type), message: st.Name + ": " + err.Error()})
		} else if p.bestName == "" || *st.Proposal > p.best {
			p.best, p.bestName, p.bestType = *st.Proposal, st.Name, st.Type
		}
		p.metrics = append(p.metrics, st)
	}
	return p
}

func failedReason(t manifest.MetricType) string {
	switch t {
	case manifest.MetricResource:
		return ReasonFailedGetResourceMetric
	case manifest.MetricPrometheus:
		return ReasonFailedGetPrometheusMetric
	}
	return ReasonFailedGetWebMetric
}

// within reports whether ratio is inside the tolerance: no change.
func within(spec Spec, ratio float64) bool {
	return ratio >= 1-spec.Down.Tolerance && ratio <= 1+spec.Up.Tolerance
}

// ceilCount rounds a proposal up, forgiving float noise: 1.1 × 10 is 11,
// not 12.
func ceilCount(x float64) int { return int(math.Ceil(x - 1e-9)) }

func proposal(n int) *int { return &n }

// readingProposal is HPA's external metric rule. targetValue: ratio =
// value / target, proposal ceil(ratio × ready instances), ceil(ratio)
// from 0. targetAverageValue: proposal ceil(value / target), the
// tolerance judged on value / (target × current).
func readingProposal(in Input, m manifest.AutoscaleMetric, r Reading, current int) (manifest.MetricStatus, error) {
	st := manifest.MetricStatus{TargetType: manifest.TargetAverageValue}
	if m.TargetValue != nil {
		st = manifest.MetricStatus{TargetType: manifest.TargetValue, Target: *m.TargetValue}
	} else {
		st.Target = *m.TargetAverageValue
	}
	if r.Err != "" {
		return st, errors.New(r.Err)
	}
	v := r.Value
	if m.TargetValue != nil {
		t := *m.TargetValue
		st.Current = &v
		ratio := v / t
		switch ready := readyCount(in.Instances); {
		case current == 0:
			st.Proposal = proposal(ceilCount(ratio))
		case within(in.Spec, ratio):
			st.Proposal = proposal(current)
		case ready == 0:
			st.Proposal, st.Message = proposal(current), "no ready instance to scale from"
		default:
			st.Proposal = proposal(ceilCount(ratio * float64(ready)))
		}
		return st, nil
	}
	t := *m.TargetAverageValue
	avg := v
	if current > 0 {
		avg = v / float64(current)
	}
	st.Current = &avg
	if current > 0 && within(in.Spec, v/(t*float64(current))) {
		st.Proposal = proposal(current)
	} else {
		st.Proposal = proposal(ceilCount(v / t))
	}
	return st, nil
}

func readyCount(instances []Instance) int {
	n := 0
	for _, inst := range instances {
		if inst.Ready && !inst.Going {
			n++
		}
	}
	return n
}

// bufferProposal is Agones' buffer policy: allocated + size, or for a
// percentage ceil(allocated × 100 / (100 − p)), the buffer being a share
// of the fleet to come. No tolerance: the buffer is exact. Current is
// the ready instances not allocated; Target what the proposal keeps
// free.
func bufferProposal(instances []Instance, size manifest.IntOrPercent) manifest.MetricStatus {
	allocated, free := 0, 0
	for _, inst := range instances {
		switch {
		case inst.Going:
		case inst.Allocated:
			allocated++
		case inst.Ready:
			free++
		}
	}
	want := allocated + size.Value
	if size.Percent {
		want = ceilCount(float64(allocated) * 100 / float64(100-size.Value))
	}
	current := float64(free)
	return manifest.MetricStatus{TargetType: manifest.TargetBuffer, Target: float64(want - allocated), Current: &current, Proposal: proposal(want)}
}

// usageGroups are HPA's groups of pods for a resource metric.
type usageGroups struct {
	ready   []usageSample // ready with a fresh sample
	unready []usageSample // not running, or (cpu) not ready or too new for a rate
	missing []usageSample // no fresh sample
}

type usageSample struct{ usage, request float64 }

// groupUsage sorts the instances into HPA's groups (replica_calculator.go
// groupPods): going ones are left out; not running or, for cpu, not
// ready or running for less than one report interval are unready; those
// without a sample younger than two intervals are missing.
func groupUsage(in Input, name manifest.ResourceName) (usageGroups, error) {
	interval := in.UsageInterval
	if interval <= 0 {
		interval = DefaultUsageInterval
	}
	g := usageGroups{ready: make([]usageSample, 0, len(in.Instances))}
	staleBefore, newAfter := in.Now.Add(-2*interval), in.Now.Add(-interval)
	for _, inst := range in.Instances {
		if inst.Going {
			continue
		}
		s := usageSample{request: inst.Request.CPU}
		if name == manifest.ResourceMemory {
			s.request = inst.Request.MemMB
		}
		if s.request <= 0 {
			return g, fmt.Errorf("instance %d requests no %s and has no limit: utilization has nothing to divide by", inst.ID, name)
		}
		fresh := inst.Usage != nil && !inst.Usage.At.Before(staleBefore)
		switch {
		case inst.RunningSince.IsZero():
			g.unready = append(g.unready, s)
		case !fresh:
			g.missing = append(g.missing, s)
		case name == manifest.ResourceCPU && (!inst.Ready || inst.RunningSince.After(newAfter)):
			g.unready = append(g.unready, s)
		default:
			s.usage = inst.Usage.CPU
			if name == manifest.ResourceMemory {
				s.usage = inst.Usage.MemMB
			}
			g.ready = append(g.ready, s)
		}
	}
	return g, nil
}

// usageTarget measures a resource metric: utilization in percent of the
// requests, or the average amount per instance.
type usageTarget struct {
	utilization bool
	target      float64
}

// value is the metric's value over samples: Σusage / Σrequest in percent,
// or the average usage.
func (t usageTarget) value(samples []usageSample) float64 {
	var usage, request float64
	for _, s := range samples {
		usage += s.usage
		request += s.request
	}
	if t.utilization {
		return usage / request * 100
	}
	return usage / float64(len(samples))
}

// fallback is a missing instance's assumed use on a scale-down: its full
// request, or the target when that is above 100 % (HPA's
// fallbackUtilization); the target amount for an average value.
func (t usageTarget) fallback(s usageSample) float64 {
	if t.utilization {
		return s.request * max(100, t.target) / 100
	}
	return t.target
}

// firstReportsWithin is how many report intervals after the reports
// were turned on every ready instance should have a rate: an executor
// reports an interval after it is told, a cpu rate needs a report
// before it, and the message comes through the master.
const firstReportsWithin = 3

// waitingForReports reports whether the target's usage reports were
// turned on too lately for any to have come.
func waitingForReports(in Input) bool {
	interval := in.UsageInterval
	if interval <= 0 {
		interval = DefaultUsageInterval
	}
	return !in.UsageReportsSince.IsZero() && in.Now.Before(in.UsageReportsSince.Add(firstReportsWithin*interval))
}

// resourceProposal is HPA's GetResourceReplicas: the plain formula when
// no instance is missing and none is unready on a scale-up; otherwise
// missing instances count at their fallback on a scale-down and at 0 on
// a scale-up, unready ones at 0 on a scale-up, and a recomputed ratio
// that lands within the tolerance or turns the direction holds the size.
func resourceProposal(in Input, r manifest.ResourceMetric, current int) (manifest.MetricStatus, error) {
	t := usageTarget{utilization: r.TargetAverageUtilization != nil}
	st := manifest.MetricStatus{TargetType: manifest.TargetAverageValue}
	if t.utilization {
		t.target = float64(*r.TargetAverageUtilization)
		st.TargetType = manifest.TargetUtilization
	} else {
		t.target = *r.TargetAverageValue
	}
	st.Target = t.target
	g, err := groupUsage(in, r.Name)
	if err != nil {
		return st, err
	}
	if len(g.ready) == 0 {
		if waitingForReports(in) {
			return st, fmt.Errorf("waiting for the first usage reports: they were turned on %s ago", in.Now.Sub(in.UsageReportsSince).Round(time.Second))
		}
		return st, fmt.Errorf("no %s use reported for any ready instance", r.Name)
	}
	value := t.value(g.ready)
	st.Current = &value
	ratio := value / t.target
	scaleUpWithUnready := len(g.unready) > 0 && ratio > 1
	if !scaleUpWithUnready && len(g.missing) == 0 {
		if within(in.Spec, ratio) {
			st.Proposal = proposal(current)
		} else {
			st.Proposal = proposal(ceilCount(ratio * float64(len(g.ready))))
		}
		return st, nil
	}
	counted := append([]usageSample(nil), g.ready...)
	for _, s := range g.missing {
		if ratio < 1 {
			s.usage = t.fallback(s)
		}
		counted = append(counted, s) // at 0 on a scale-up
	}
	if scaleUpWithUnready {
		counted = append(counted, g.unready...)
	}
	newRatio := t.value(counted) / t.target
	replicas := ceilCount(newRatio * float64(len(counted)))
	switch {
	case within(in.Spec, newRatio), ratio < 1 && newRatio > 1, ratio > 1 && newRatio < 1,
		newRatio < 1 && replicas > current, newRatio > 1 && replicas < current:
		st.Proposal = proposal(current)
	default:
		st.Proposal = proposal(replicas)
	}
	return st, nil
}

// olderThan reports whether at lies at or before now − d.
func olderThan(at, now time.Time, d time.Duration) bool { return !at.After(now.Add(-d)) }
