package autoscaler

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/autoscale"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// evaluate decides for the entries due, acts on the decisions that
// scale and stores the other statuses together, those that show a
// reader something new (statuswrites.go). Every entry is due
// again an interval on, whatever happens: an error holds the size until
// then. It returns an error wrapping store.ErrDeposed when a write was
// refused because this leader was deposed.
func (c *Controller) evaluate(ctx context.Context, due []*entry, now time.Time) error {
	for _, e := range due {
		e.due = nextDue(e.ref, e.spec.Interval, now)
	}
	decisions, fleets, err := c.decide(ctx, due, now)
	if err != nil {
		c.cfg.Logger.Warn("autoscaler: reading the fleets", "autoscalers", len(due), "error", err)
		return nil
	}
	if err := c.reportUsage(ctx, due, fleets, now); err != nil {
		return err
	}
	var statuses []*registry.AutoscalerStatus
	var owners []*entry
	for i, e := range due {
		d := decisions[i]
		status := &registry.AutoscalerStatus{Namespace: e.ref.Namespace, Name: e.ref.Name, AutoscalerStatus: d.Record}
		if !d.Act {
			if e.stillShown(status, now) {
				e.status = status
				continue
			}
			statuses, owners = append(statuses, status), append(owners, e)
			continue
		}
		removed := make([]int, 0, len(d.Record.LastScale.Removed))
		for _, r := range d.Record.LastScale.Removed {
			removed = append(removed, r.ID)
		}
		target := Ref{e.ref.Namespace, e.spec.Target.Name}
		_, err := c.cfg.Scaler.ApplyScaleDecision(ctx, registry.ScaleWrite{App: fleets[i].App, Instances: d.Desired, Remove: removed, Status: status})
		if errors.Is(err, store.ErrDeposed) {
			return err
		}
		if err != nil {
			// The status stays as stored: the next round decides again
			// from the scheduler's size, never from this one; soon, when
			// only the record moved under the decision.
			if errors.Is(err, errdefs.ErrConflict) {
				e.due = now.Add(min(retryAfterConflict, e.spec.Interval))
			}
			c.cfg.Logger.Warn("autoscaler: scaling", "autoscaler", e.ref, "workload", target, "to", d.Desired, "error", err)
			continue
		}
		e.wrote(status, now)
		c.cfg.Logger.Info("autoscaler: scaled", "autoscaler", e.ref, "workload", target,
			"from", d.Record.LastScale.From, "to", d.Desired, "reason", d.Record.LastScale.Reason)
	}
	if err := c.cfg.StatusWriter.PutAutoscalerStatuses(ctx, statuses); err != nil {
		if errors.Is(err, store.ErrDeposed) {
			return err
		}
		c.cfg.Logger.Warn("autoscaler: storing statuses", "autoscalers", len(statuses), "error", err)
		return nil
	}
	for i, e := range owners {
		e.wrote(statuses[i], now)
	}
	return nil
}

// retryAfterConflict is how soon a scale refused because the workload's
// record changed under it is decided again: the scheduler sees the new
// record within moments, and a status write of its own is enough to
// refuse one.
const retryAfterConflict = 2 * time.Second

// decide makes the entries' decisions, in their order, and returns the
// fleets they were made on: one fleet and one usage read for all, their
// readings under MaxCalls, the victims of a scale-down chosen with their
// order values read then.
func (c *Controller) decide(ctx context.Context, entries []*entry, now time.Time) ([]autoscale.Decision, []Fleet, error) {
	refs := make([]Ref, len(entries))
	for i, e := range entries {
		refs[i] = Ref{e.ref.Namespace, e.spec.Target.Name}
	}
	fleets, err := c.cfg.Fleet.Fleet(ctx, refs)
	if err != nil {
		return nil, nil, err
	}
	if len(fleets) != len(refs) {
		return nil, nil, fmt.Errorf("the fleet source answered %d workloads for %d", len(fleets), len(refs))
	}
	usage := c.usage(entries, fleets)
	readings := c.readAll(ctx, entries)
	out := make([]autoscale.Decision, len(entries))
	for i, e := range entries {
		in := c.input(e, fleets[i], usage, readings[i], now)
		d := autoscale.Decide(in)
		if d.NeedVictims > 0 {
			values, problem := c.orderValues(ctx, e, fleets[i])
			if problem != "" {
				in.OrderProblem = problem
				d = autoscale.Decide(in)
			} else {
				d.Remove(autoscale.Victims(candidates(fleets[i], values), d.NeedVictims))
			}
		}
		d.Record.Allocation = e.probeStatus()
		out[i] = d
	}
	return out, fleets, nil
}

// usage reads the use of the instances of the entries with a resource
// metric, in one call.
func (c *Controller) usage(entries []*entry, fleets []Fleet) map[string]Usage {
	var groups []string
	for i, e := range entries {
		if !hasResourceMetric(e.spec) {
			continue
		}
		for _, inst := range fleets[i].Instances {
			groups = append(groups, inst.TaskGroupID)
		}
	}
	if len(groups) == 0 {
		return nil
	}
	return c.cfg.Usage.Usage(groups)
}

func hasResourceMetric(spec autoscale.Spec) bool {
	for _, m := range spec.Metrics {
		if m.Type == manifest.MetricResource {
			return true
		}
	}
	return false
}

// input is what Decide reads for e.
func (c *Controller) input(e *entry, fleet Fleet, usage map[string]Usage, readings []autoscale.Reading, now time.Time) autoscale.Input {
	in := autoscale.Input{Now: now, Spec: e.spec, Revision: e.revision, Readings: readings, UsageInterval: c.cfg.UsageInterval,
		Target:            autoscale.Target{Problem: targetProblem(e.spec.Target, fleet), Replicas: fleet.Replicas},
		UsageReportsSince: c.reports.since[Ref{e.ref.Namespace, e.spec.Target.Name}]}
	if fleet.App != nil && !fleet.App.UsageReport && hasResourceMetric(e.spec) {
		in.UsageReportsSince = now // off: this round turns them on
	}
	if e.status != nil {
		in.Record = e.status.AutoscalerStatus
	}
	in.Instances = make([]autoscale.Instance, len(fleet.Instances))
	for i, inst := range fleet.Instances {
		in.Instances[i] = autoscale.Instance{ID: inst.ID, Ready: inst.Ready, Going: inst.Going, Allocated: inst.Allocated,
			RunningSince: inst.RunningSince, Request: autoscale.Resources{CPU: inst.CPUs, MemMB: inst.MemMB}}
		if u, ok := usage[inst.TaskGroupID]; ok {
			in.Instances[i].Usage = &autoscale.Usage{Resources: autoscale.Resources{CPU: u.CPUCores, MemMB: float64(u.MemBytes) / (1 << 20)}, At: u.Received}
		}
	}
	return in
}

// targetProblem says why fleet cannot be scaled as target: the fleet's
// own problem, or a workload of another kind under its name (made after
// the autoscaler, which the API checks only then).
func targetProblem(target manifest.ScaleTarget, fleet Fleet) string {
	if fleet.Problem == "" && fleet.App != nil && fleet.App.Kind != target.Kind {
		return fmt.Sprintf("%s/%s is of kind %s, not %s", fleet.App.Namespace, fleet.App.Name, fleet.App.Kind, target.Kind)
	}
	return fleet.Problem
}

// candidates are fleet's instances for Victims, with their order values
// (by instance ID; nil without an order).
func candidates(fleet Fleet, values map[int]float64) []autoscale.Candidate {
	out := make([]autoscale.Candidate, len(fleet.Instances))
	for i, inst := range fleet.Instances {
		out[i] = autoscale.Candidate{ID: inst.ID, Running: !inst.RunningSince.IsZero(), Ready: inst.Ready,
			Allocated: inst.Allocated, Going: inst.Going}
		if v, ok := values[inst.ID]; ok && !math.IsNaN(v) {
			out[i].Value = &v
		}
	}
	return out
}
