package autoscaler

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/bcs-mesos/bcs-mesos/pkg/autoscale"
	"github.com/bcs-mesos/bcs-mesos/pkg/egress"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// DefaultMaxCalls bounds the provider calls under way at once.
const DefaultMaxCalls = 64

// relistEvery bounds how long a new or changed autoscaler waits to be
// seen: the controller lists the specs at least this often.
const relistEvery = 5 * time.Second

// Config is what a Controller needs.
type Config struct {
	Registry     Registry
	Fleet        FleetSource
	Usage        UsageSource
	Scaler       Scaler
	StatusWriter StatusWriter
	// Egress holds each call to its autoscaler's namespace's policy;
	// default egress.DefaultSet().
	Egress *egress.Set
	Clock  clockwork.Clock
	Logger *slog.Logger
	// MaxCalls bounds the provider calls under way at once; default
	// DefaultMaxCalls.
	MaxCalls int
	// UsageInterval is how often executors report their use; default
	// autoscale.DefaultUsageInterval.
	UsageInterval time.Duration
}

// Controller evaluates the stored autoscalers on the leader.
type Controller struct {
	cfg Config
	// entries are the autoscalers known, by namespace/name; only Run's
	// goroutine touches them.
	entries map[Ref]*entry
	reports usageReports
}

// entry is one autoscaler as the controller keeps it.
type entry struct {
	ref      Ref
	manifest *manifest.Autoscaler
	revision int64
	spec     autoscale.Spec
	// status is the record of the last decision, the next one's input;
	// nil before the first decision.
	status *registry.AutoscalerStatus
	// written is the last status stored, at writtenAt (statuswrites.go).
	written   *registry.AutoscalerStatus
	writtenAt time.Time
	due       time.Time
	// probe is its allocation probe; nil without one.
	probe *allocationProbe
}

// New checks cfg and fills its defaults.
func New(cfg Config) (*Controller, error) {
	switch {
	case cfg.Registry == nil:
		return nil, errors.New("autoscaler: Config.Registry is nil")
	case cfg.Fleet == nil:
		return nil, errors.New("autoscaler: Config.Fleet is nil")
	case cfg.Usage == nil:
		return nil, errors.New("autoscaler: Config.Usage is nil")
	case cfg.Scaler == nil:
		return nil, errors.New("autoscaler: Config.Scaler is nil")
	case cfg.StatusWriter == nil:
		return nil, errors.New("autoscaler: Config.StatusWriter is nil")
	}
	if cfg.Egress == nil {
		cfg.Egress = egress.DefaultSet()
	}
	if cfg.Clock == nil {
		cfg.Clock = clockwork.NewRealClock()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.MaxCalls <= 0 {
		cfg.MaxCalls = DefaultMaxCalls
	}
	if cfg.UsageInterval <= 0 {
		cfg.UsageInterval = autoscale.DefaultUsageInterval
	}
	return &Controller{cfg: cfg, entries: map[Ref]*entry{}, reports: usageReports{since: map[Ref]time.Time{}}}, nil
}

// Run evaluates the autoscalers as they fall due until ctx ends (nil)
// or a write is refused because this leader was deposed (that error).
// It resumes from the stored statuses alone.
func (c *Controller) Run(ctx context.Context) error {
	statuses, err := c.cfg.Registry.ListAutoscalerStatuses(ctx, "")
	if err != nil {
		if ctx.Err() != nil {
			return nil // stopped before it began: stopping is not failing
		}
		return fmt.Errorf("autoscaler: reading the statuses: %w", err)
	}
	stored := make(map[Ref]*registry.AutoscalerStatus, len(statuses))
	for _, s := range statuses {
		stored[Ref{s.Namespace, s.Name}] = s
	}
	for {
		now := c.cfg.Clock.Now()
		changed, err := c.refresh(ctx, now, stored)
		if err != nil && ctx.Err() == nil {
			c.cfg.Logger.Warn("autoscaler: listing the autoscalers", "error", err)
		}
		stored = nil
		if err := c.reconcileReports(ctx, changed, now); err != nil {
			return err
		}
		if err := c.runProbes(ctx, now); errors.Is(err, store.ErrDeposed) {
			return err
		}
		if due := c.due(now); len(due) > 0 {
			if err := c.evaluate(ctx, due, now); errors.Is(err, store.ErrDeposed) {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-c.cfg.Clock.After(c.sleep(now)):
		}
	}
}

// refresh lists the autoscalers and returns those new or changed: a new
// one is due at its next phase, a changed spec is compiled again, a
// deleted one is forgotten; one with a resource metric changed or
// deleted brings the usage reports' sweep forward. stored gives a new
// entry its status (Run's first listing only).
func (c *Controller) refresh(ctx context.Context, now time.Time, stored map[Ref]*registry.AutoscalerStatus) ([]*entry, error) {
	objects, err := c.cfg.Registry.ListAutoscalers(ctx, "")
	if err != nil {
		return nil, err
	}
	var changed []*entry
	seen := make(map[Ref]bool, len(objects))
	for _, o := range objects {
		ref := Ref{o.Namespace, o.Name}
		seen[ref] = true
		e := c.entries[ref]
		if e != nil && e.revision == o.Revision {
			continue
		}
		a, err := o.Autoscaler()
		if err != nil {
			c.cfg.Logger.Warn("autoscaler: a stored spec does not parse", "autoscaler", ref, "error", err)
			continue
		}
		spec, err := autoscale.SpecOf(a)
		if err != nil {
			c.cfg.Logger.Warn("autoscaler: a stored spec is refused", "autoscaler", ref, "error", err)
			continue
		}
		if e == nil {
			e = &entry{ref: ref}
			if s := stored[ref]; s != nil {
				e.wrote(s, s.UpdatedAt)
			}
			c.entries[ref] = e
		} else if hasResourceMetric(e.spec) {
			c.reports.sweepAt = time.Time{}
		}
		e.manifest, e.revision, e.spec = a, o.Revision, spec
		e.due = nextDue(ref, spec.Interval, now)
		changed = append(changed, e)
	}
	for ref, e := range c.entries {
		if !seen[ref] {
			if hasResourceMetric(e.spec) {
				c.reports.sweepAt = time.Time{}
			}
			delete(c.entries, ref)
			c.deleteOrphanStatus(ctx, ref)
		}
	}
	for ref := range stored { // a new term's first round: statuses left by the last
		if !seen[ref] {
			c.deleteOrphanStatus(ctx, ref)
		}
	}
	return changed, nil
}

// deleteOrphanStatus deletes the status of ref, an autoscaler deleted: a
// round that began before its delete may have written it since. A
// failure is logged; the next term's first round tries again.
func (c *Controller) deleteOrphanStatus(ctx context.Context, ref Ref) {
	if err := c.cfg.Registry.DeleteOrphanStatus(ctx, ref.Namespace, ref.Name); err != nil && ctx.Err() == nil {
		c.cfg.Logger.Warn("autoscaler: deleting the status of a deleted autoscaler", "autoscaler", ref, "error", err)
	}
}

// reconcileReports turns on the usage reports the autoscalers changed
// want and sweeps those no longer wanted, when due (usagereports.go); it
// returns an error only when the leader was deposed.
func (c *Controller) reconcileReports(ctx context.Context, changed []*entry, now time.Time) error {
	if err := c.reportUsageOfNew(ctx, changed, now); err != nil {
		return err
	}
	return c.sweepReports(ctx, now)
}

// due returns the entries due at now.
func (c *Controller) due(now time.Time) []*entry {
	var out []*entry
	for _, e := range c.entries {
		if !e.due.After(now) {
			out = append(out, e)
		}
	}
	return out
}

// sleep is how long to wait from now for the next entry due, at most
// relistEvery.
func (c *Controller) sleep(now time.Time) time.Duration {
	wait := relistEvery
	for _, e := range c.entries {
		wait = min(wait, e.due.Sub(now))
		if e.probe != nil && e.probe.condition != nil {
			wait = min(wait, e.probe.due.Sub(now))
		}
	}
	return max(wait, 0)
}

// phaseStep is the granularity of the phases: the autoscalers whose
// phases fall in one step are due together and decided as one batch
// (one fleet read, one status write, one listing of the specs), rather
// than each on its own wake.
const phaseStep = time.Second

// nextDue is the first time after now at ref's phase of interval: the
// phase is a hash of ref, in whole phaseSteps, so that autoscalers
// spread over their interval whenever they were created.
func nextDue(ref Ref, interval time.Duration, now time.Time) time.Time {
	h := fnv.New64a()
	h.Write([]byte(ref.String()))
	phase := time.Duration(h.Sum64()%uint64(max(interval/phaseStep, 1))) * phaseStep
	at := now.Truncate(interval).Add(phase)
	for !at.After(now) {
		at = at.Add(interval)
	}
	return at
}
