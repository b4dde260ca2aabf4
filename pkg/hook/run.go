package hook

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/field"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
)

// ErrorRetryInterval is how soon a metric is measured again after a
// measurement erred (Argo Rollouts' default), or its interval when that
// is shorter: an error is retried, it does not count as a measurement.
const ErrorRetryInterval = 10 * time.Second

// Start begins a run of spec at now: the run and every metric Pending,
// each metric's first measurement due after its initialDelay. A spec
// that cannot run — no metrics, a condition or jsonPath that does not
// compile, a bad duration, an argument a provider uses without a value —
// ends the run in Error at once, the message naming the field.
// MetricResults[i] is Metrics[i]'s from here on.
func Start(spec RunSpec, now time.Time) RunStatus {
	s := RunStatus{Phase: Pending, StartedAt: now}
	for _, m := range spec.Metrics {
		s.MetricResults = append(s.MetricResults, MetricResult{Name: m.Name, Phase: Pending})
	}
	if errs := checkSpec(spec); len(errs) > 0 {
		s.Abort("cannot run: "+errs.Error(), now)
	}
	return s
}

// checkSpec lists what keeps spec from running; Next and Record rely on
// its durations parsing.
func checkSpec(spec RunSpec) field.ErrorList {
	at := field.Path("spec.metrics")
	if len(spec.Metrics) == 0 {
		return field.ErrorList{field.Required(at)}
	}
	errs := checkMetrics(at, spec.Metrics)
	for i, m := range spec.Metrics {
		for _, d := range []struct {
			name  string
			value manifest.Duration
		}{{"interval", m.Interval}, {"initialDelay", m.InitialDelay}} {
			if _, err := d.value.Parse(); err != nil {
				errs = append(errs, field.Invalid(at.Index(i).Child(d.name), "%v", err))
			}
		}
		_, renderErrs := RenderProvider(at.Index(i).Child("provider"), m.Provider, spec.Args)
		errs = append(errs, renderErrs...)
	}
	return errs
}

// RenderProvider returns p with {{ args.NAME }} replaced in every field
// that takes arguments (web: url, header values, body; Prometheus:
// address, query); an argument without a value is an error naming the
// field, at being the provider's path.
func RenderProvider(at field.Path, p manifest.HookProvider, args []manifest.HookArg) (manifest.HookProvider, field.ErrorList) {
	values := make(map[string]string, len(args))
	for _, a := range args {
		values[a.Name] = a.Value
	}
	var errs field.ErrorList
	render := func(p field.Path, s *string) {
		out, err := manifest.RenderArgs(*s, values)
		if err != nil {
			errs = append(errs, field.Invalid(p, "%v", err))
			return
		}
		*s = out
	}
	if p.Web != nil {
		web := *p.Web
		web.Headers = slices.Clone(web.Headers)
		wp := at.Child("web")
		render(wp.Child("url"), &web.URL)
		render(wp.Child("body"), &web.Body)
		for i := range web.Headers {
			render(wp.Child("headers").Index(i).Child("value"), &web.Headers[i].Value)
		}
		p.Web = &web
	}
	if p.Prometheus != nil {
		prom := *p.Prometheus
		pp := at.Child("prometheus")
		render(pp.Child("address"), &prom.Address)
		render(pp.Child("query"), &prom.Query)
		p.Prometheus = &prom
	}
	return p, errs
}

// Next says, for a run of metrics, which metrics are due for a
// measurement at now (indices into metrics) and, of the others still
// measuring, when the earliest is due (zero: none). A metric's first
// measurement is due initialDelay after the run started; the next one
// interval after the previous one finished, or sooner after an error
// (ErrorRetryInterval). Nothing is due in an ended run or metric; a
// metric due while its measurement is under way is reported again, the
// caller knows it is under way.
func (s *RunStatus) Next(metrics []manifest.HookMetric, now time.Time) (due []int, next time.Time) {
	if s.Phase.Completed() {
		return nil, time.Time{}
	}
	for i, m := range metrics {
		r := s.MetricResults[i]
		if r.Phase.Completed() {
			continue
		}
		at := s.dueAt(m, r)
		switch {
		case !at.After(now):
			due = append(due, i)
		case next.IsZero() || at.Before(next):
			next = at
		}
	}
	return due, next
}

func (s *RunStatus) dueAt(m manifest.HookMetric, r MetricResult) time.Time {
	if len(r.Measurements) == 0 {
		return s.StartedAt.Add(duration(m.InitialDelay))
	}
	last := r.Measurements[len(r.Measurements)-1]
	wait := duration(m.Interval)
	if last.Phase == Error && (wait == 0 || wait > ErrorRetryInterval) {
		wait = ErrorRetryInterval
	}
	return last.FinishedAt.Add(wait)
}

// duration reads a duration Start checked.
func duration(d manifest.Duration) time.Duration {
	v, _ := d.Parse()
	return v
}

// Taken is how many measurements a metric took: those that count and
// the errors.
func (r MetricResult) Taken() int { return r.Count + r.Error }

// Record adds metric i's measurement m, keeping the latest
// MaxMeasurements, and judges the metric and the run (see judgeMetric
// and conclude). A measurement for an ended run or metric is dropped.
func (s *RunStatus) Record(metrics []manifest.HookMetric, i int, m Measurement) {
	r := &s.MetricResults[i]
	if s.Phase.Completed() || r.Phase.Completed() {
		return
	}
	r.Measurements = append(r.Measurements, m)
	if n := len(r.Measurements); n > MaxMeasurements {
		r.Measurements = slices.Clone(r.Measurements[n-MaxMeasurements:])
	}
	switch m.Phase {
	case Successful:
		r.Successful++
	case Failed:
		r.Failed++
	case Inconclusive:
		r.Inconclusive++
	case Error:
		r.Error++
	}
	if m.Phase == Error {
		r.ConsecutiveError++
	} else {
		r.Count++
		r.ConsecutiveError = 0
	}
	r.Phase, r.Message = judgeMetric(metrics[i], *r)
	s.conclude(m.FinishedAt)
}

// judgeMetric is a metric's phase after its latest measurement: Failed
// once more measurements failed than failureLimit, Inconclusive once
// more were inconclusive than inconclusiveLimit, Error once more erred
// in a row than consecutiveErrorLimit; Successful once successfulLimit
// measurements succeeded, or once count measurements were taken (no
// count and no interval: one) without crossing a limit; Running until
// then. The message says what decided, quoting the last measurement.
func judgeMetric(m manifest.HookMetric, r MetricResult) (Phase, string) {
	last := r.Measurements[len(r.Measurements)-1]
	count := effectiveCount(m)
	which := fmt.Sprintf("measurement %d", r.Count)
	if count > 0 {
		which += fmt.Sprintf(" of %d", count)
	}
	crossed := func(n int, what, limitName string, limit int) string {
		if limit == 0 {
			return which + ": " + last.Message
		}
		return fmt.Sprintf("%d measurements %s, more than %s %d; the last, %s: %s", n, what, limitName, limit, which, last.Message)
	}
	switch {
	case r.Failed > m.FailureLimit:
		return Failed, crossed(r.Failed, "failed", "failureLimit", m.FailureLimit)
	case r.Inconclusive > m.InconclusiveLimit:
		return Inconclusive, crossed(r.Inconclusive, "were inconclusive", "inconclusiveLimit", m.InconclusiveLimit)
	case r.ConsecutiveError > m.ErrorLimit():
		if m.ErrorLimit() == 0 {
			return Error, last.Message
		}
		return Error, fmt.Sprintf("%d errors in a row, more than consecutiveErrorLimit %d; the last: %s", r.ConsecutiveError, m.ErrorLimit(), last.Message)
	case m.SuccessfulLimit > 0 && r.Successful >= m.SuccessfulLimit:
		return Successful, fmt.Sprintf("successfulLimit %d reached at %s", m.SuccessfulLimit, which)
	case count > 0 && r.Count >= count:
		return Successful, fmt.Sprintf("%d measurements: %d successful, %d failed, %d inconclusive (%d errors retried)",
			r.Count, r.Successful, r.Failed, r.Inconclusive, r.Error)
	}
	return Running, ""
}

// effectiveCount is how many measurements end a metric: count; one
// with neither count nor interval (seed 003); none (until the run is
// stopped) with an interval alone.
func effectiveCount(m manifest.HookMetric) int {
	if m.Count == 0 && duration(m.Interval) == 0 {
		return 1
	}
	return m.Count
}

// How a run's message says what a metric's phase is.
var phaseVerbs = map[Phase]string{Error: "erred", Failed: "failed", Inconclusive: "was inconclusive"}

// conclude is the run's phase from its metrics': Error if one erred,
// else Failed if one failed, else Inconclusive if one was, else
// Successful when every metric succeeded, else Running. The first
// metric (in spec order) of the deciding phase names the message; an
// ending stops the metrics still measuring.
func (s *RunStatus) conclude(now time.Time) {
	for _, phase := range []Phase{Error, Failed, Inconclusive} {
		for _, r := range s.MetricResults {
			if r.Phase == phase {
				s.end(phase, fmt.Sprintf("metric %s %s: %s", r.Name, phaseVerbs[phase], r.Message),
					fmt.Sprintf("stopped: metric %s %s", r.Name, phaseVerbs[phase]), now)
				return
			}
		}
	}
	for _, r := range s.MetricResults {
		if r.Phase != Successful {
			s.Phase = Running
			return
		}
	}
	names := make([]string, len(s.MetricResults))
	for i, r := range s.MetricResults {
		names[i] = r.Name
	}
	s.end(Successful, "every metric successful: "+strings.Join(names, ", "), "", now)
}

// Terminate stops a run on request (RunSpec.Terminate): phase
// Terminated, no more measurements. It reports whether the run changed:
// one that ended already keeps its phase.
func (s *RunStatus) Terminate(now time.Time) bool {
	if s.Phase.Completed() {
		return false
	}
	s.end(Terminated, "terminated on request", "stopped: the run was terminated", now)
	return true
}

// Abort ends a run in Error before or while it measures, for a reason
// outside its metrics (its template is missing, an argument has no
// value): message says which.
func (s *RunStatus) Abort(message string, now time.Time) {
	if s.StartedAt.IsZero() {
		s.StartedAt = now
	}
	s.end(Error, message, "stopped: the run ended in Error", now)
}

// end ends the run; metrics still measuring end Terminated with
// stopped as their message.
func (s *RunStatus) end(phase Phase, message, stopped string, now time.Time) {
	s.Phase, s.Message, s.FinishedAt = phase, message, now
	for i := range s.MetricResults {
		if r := &s.MetricResults[i]; !r.Phase.Completed() {
			r.Phase, r.Message = Terminated, stopped
		}
	}
}
