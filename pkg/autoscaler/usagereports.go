package autoscaler

import (
	"context"
	"errors"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// Usage reports cost a message per instance per interval, so the
// scheduler asks for them only from the workloads a resource metric
// reads (registry.App.UsageReport). The controller keeps the flag: it
// turns it on for the target of an autoscaler with a resource metric
// when it finds it off (a new or changed autoscaler at once, the others
// each round on the fleet read anyway), and off by a sweep of the
// workloads that have it: on its first round (a new leader does not
// know what the last one turned on), every sweepEvery, and soon after
// an autoscaler with a resource metric is deleted or changed. A write
// refused because the record changed is tried again the next round.

// sweepEvery is how often the usage reports no resource metric reads
// any more are looked for with nothing changed.
const sweepEvery = 5 * time.Minute

// usageReports is what the controller keeps of the flags.
type usageReports struct {
	// since is when the controller turned a workload's reports on: the
	// first intervals after, a resource metric awaits its first sample.
	since map[Ref]time.Time
	// sweepAt is when the next sweep is due; zero: the next round.
	sweepAt time.Time
}

// wantedReports are the targets of the autoscalers with a resource
// metric.
func (c *Controller) wantedReports() map[Ref]bool {
	out := map[Ref]bool{}
	for _, e := range c.entries {
		if hasResourceMetric(e.spec) {
			out[Ref{e.ref.Namespace, e.spec.Target.Name}] = true
		}
	}
	return out
}

// reportUsage turns on the reports of the targets of entries with a
// resource metric whose fleets show them off; it returns an error only
// when the leader was deposed.
func (c *Controller) reportUsage(ctx context.Context, entries []*entry, fleets []Fleet, now time.Time) error {
	for i, e := range entries {
		app := fleets[i].App
		if !hasResourceMetric(e.spec) || app == nil || app.UsageReport || targetProblem(e.spec.Target, fleets[i]) != "" {
			continue
		}
		target := Ref{app.Namespace, app.Name}
		set, err := c.setUsageReport(ctx, target, true, app.Revision)
		if err != nil {
			return err
		}
		if _, known := c.reports.since[target]; set && !known {
			c.reports.since[target] = now
		}
	}
	return nil
}

// reportUsageOfNew turns on the reports of the targets of entries new
// or changed this refresh, rather than at their first decision, so that
// the first samples come sooner.
func (c *Controller) reportUsageOfNew(ctx context.Context, entries []*entry, now time.Time) error {
	var withResource []*entry
	refs := make([]Ref, 0, len(entries))
	for _, e := range entries {
		if hasResourceMetric(e.spec) {
			withResource = append(withResource, e)
			refs = append(refs, Ref{e.ref.Namespace, e.spec.Target.Name})
		}
	}
	if len(refs) == 0 {
		return nil
	}
	fleets, err := c.cfg.Fleet.Fleet(ctx, refs)
	if err != nil || len(fleets) != len(refs) {
		c.cfg.Logger.Warn("autoscaler: reading the fleets to turn usage reports on", "workloads", len(refs), "error", err)
		return nil // each round's fleet read turns them on
	}
	return c.reportUsage(ctx, withResource, fleets, now)
}

// sweepReports turns off the reports of the workloads no resource metric
// reads, when a sweep is due; a write that fails makes the next round
// sweep again. It returns an error only when the leader was deposed.
func (c *Controller) sweepReports(ctx context.Context, now time.Time) error {
	if now.Before(c.reports.sweepAt) {
		return nil
	}
	apps, err := c.cfg.Registry.AppsReportingUsage(ctx)
	if err != nil {
		c.cfg.Logger.Warn("autoscaler: listing the workloads reporting usage", "error", err)
		return nil
	}
	wanted := c.wantedReports()
	c.reports.sweepAt = now.Add(sweepEvery)
	for _, app := range apps {
		ref := Ref{app.Namespace, app.Name}
		if wanted[ref] {
			continue
		}
		if _, err := c.setUsageReport(ctx, ref, false, app.Revision); err != nil {
			return err
		}
	}
	for ref := range c.reports.since {
		if !wanted[ref] {
			delete(c.reports.since, ref)
		}
	}
	return nil
}

// setUsageReport writes the flag of target at revision rev and reports
// whether it is set; a failure other than the leader's deposition (an
// error) is logged and tried again the next round: a sweep brought
// forward for off, the round's fleet read for on.
func (c *Controller) setUsageReport(ctx context.Context, target Ref, on bool, rev int64) (bool, error) {
	_, err := c.cfg.Registry.SetUsageReport(ctx, target.Namespace, target.Name, on, rev)
	switch {
	case errors.Is(err, store.ErrDeposed):
		return false, err
	case err != nil:
		c.cfg.Logger.Warn("autoscaler: setting usage reports", "workload", target, "on", on, "error", err)
		if !on {
			c.reports.sweepAt = time.Time{}
		}
		return false, nil
	}
	c.cfg.Logger.Info("autoscaler: usage reports", "workload", target, "on", on)
	return true, nil
}
