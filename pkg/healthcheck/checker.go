package healthcheck

import (
	"context"
	"time"

	"github.com/bcs-mesos/bcs-mesos/proto"
	"github.com/jonboulle/clockwork"
)

// Defaults for a check that leaves a field at zero (Mesos' defaults).
const (
	DefaultInterval = 10 * time.Second
	DefaultTimeout  = 20 * time.Second
)

// Policy is when checks run and how their results are judged.
type Policy struct {
	Delay    time.Duration // before the first check
	Interval time.Duration // between checks
	Timeout  time.Duration // per check
	// Grace: failures are ignored until the first success or until Grace
	// has passed since the checks started.
	Grace time.Duration
	// ConsecutiveFailures in a row give the Kill verdict; 0 never kills.
	ConsecutiveFailures int
}

// PolicyOf reads a manifest health check; zero interval and timeout take
// the defaults.
func PolicyOf(c proto.HealthCheck) Policy {
	sec := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	p := Policy{
		Delay:               sec(c.DelaySeconds),
		Interval:            sec(c.IntervalSeconds),
		Timeout:             sec(c.TimeoutSeconds),
		Grace:               sec(c.GracePeriodSeconds),
		ConsecutiveFailures: c.ConsecutiveFailures,
	}
	if p.Interval <= 0 {
		p.Interval = DefaultInterval
	}
	if p.Timeout <= 0 {
		p.Timeout = DefaultTimeout
	}
	return p
}

// Result is the verdict after one check.
type Result struct {
	Time    time.Time
	Healthy bool
	// InGrace: the check failed but the failure is ignored (grace period,
	// never healthy yet). Healthy is false and nothing is counted.
	InGrace bool
	// ConsecutiveFailures counted so far (0 after a success).
	ConsecutiveFailures int
	// Message is the failure, empty when healthy.
	Message string
	// Kill: ConsecutiveFailures reached the policy's limit.
	Kill bool
}

// Tracker turns check outcomes into verdicts. It is a pure state
// machine: outcomes and times in, results out.
type Tracker struct {
	policy      Policy
	start       time.Time
	everHealthy bool
	failures    int
}

// NewTracker starts judging at start (when the task started).
func NewTracker(p Policy, start time.Time) *Tracker { return &Tracker{policy: p, start: start} }

// Observe records one check outcome (nil error = success) at now.
func (t *Tracker) Observe(now time.Time, err error) Result {
	if err == nil {
		t.everHealthy, t.failures = true, 0
		return Result{Time: now, Healthy: true}
	}
	if !t.everHealthy && now.Sub(t.start) < t.policy.Grace {
		return Result{Time: now, InGrace: true, Message: err.Error()}
	}
	t.failures++
	return Result{
		Time:                now,
		ConsecutiveFailures: t.failures,
		Message:             err.Error(),
		Kill:                t.policy.ConsecutiveFailures > 0 && t.failures >= t.policy.ConsecutiveFailures,
	}
}

// Checker runs one health check on its schedule.
type Checker struct {
	Prober Prober
	Policy Policy
	// Clock defaults to the wall clock.
	Clock clockwork.Clock
}

// Run checks until ctx ends or a Kill verdict, calling report after each
// check; it returns the last result.
func (c *Checker) Run(ctx context.Context, report func(Result)) Result {
	clock := c.Clock
	if clock == nil {
		clock = clockwork.NewRealClock()
	}
	tracker := NewTracker(c.Policy, clock.Now())
	wait := c.Policy.Delay
	var last Result
	for {
		if wait > 0 {
			select {
			case <-clock.After(wait):
			case <-ctx.Done():
				return last
			}
		}
		pctx, cancel := context.WithTimeout(ctx, c.Policy.Timeout)
		err := c.Prober.Probe(pctx)
		cancel()
		if ctx.Err() != nil {
			return last
		}
		last = tracker.Observe(clock.Now(), err)
		report(last)
		if last.Kill {
			return last
		}
		wait = c.Policy.Interval
	}
}
