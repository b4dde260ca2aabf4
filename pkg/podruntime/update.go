package podruntime

import (
	"context"
	"fmt"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/executor"
	"github.com/bcs-mesos/bcs-mesos/pkg/pod"
	"github.com/bcs-mesos/bcs-mesos/pkg/taskstate"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// update moves the group's pod to u's revision (MessageUpdate). One update
// runs at a time: a duplicate of the one under way (same revision) waits
// for it and shares its outcome, another revision is refused meanwhile.
// An update to the revision every task runs changes nothing and reports
// every task again, so that a scheduler that lost a status learns the
// revision.
func (g *group) update(ctx context.Context, u *proto.GroupUpdate) error {
	if u == nil {
		return fmt.Errorf("update message without an update: %w", errdefs.ErrInvalidArgument)
	}
	return g.updates.Do(ctx, u.Revision, func() error {
		g.mu.Lock()
		p := g.pod
		g.mu.Unlock()
		err := g.apply(ctx, p, u)
		if err != nil {
			g.rt.cfg.Logger.Warn("update failed", "pod", g.id, "revision", u.Revision, "mode", u.Mode, "err", err)
		} else {
			g.rt.cfg.Logger.Info("update applied", "pod", g.id, "revision", u.Revision, "mode", u.Mode)
		}
		return err
	})
}

// apply plans and applies u to p and reports the tasks.
//
// InPlace: once the new containers are ready to be made, every task to
// restart is reported RUNNING with healthy=false and a message saying
// when it restarts, and its checks stop; after the restart it is reported
// RUNNING with its new container data, healthy=true without checks (it
// was explicitly unhealthy), else by its checks, re-armed for its new
// spec. HotPatch: the patched tasks' checks are re-armed for their new
// specs. Either way every task is then reported with the revision it runs.
func (g *group) apply(ctx context.Context, p *pod.Pod, u *proto.GroupUpdate) error {
	resolved, err := g.rt.cfg.Remote.ResolveUpdate(ctx, u)
	if err != nil {
		return fmt.Errorf("update to revision %d refused, nothing changed: %w", u.Revision, err)
	}
	u = resolved
	plan, err := p.PlanUpdate(u)
	if err != nil {
		return err
	}
	if plan.Current {
		for _, st := range p.Tasks() {
			if st.State == taskstate.Finished {
				continue // done (seed 001): out of updates
			}
			if err := g.reportStatus(st.TaskID); err != nil {
				return err
			}
		}
		return nil
	}
	for _, tu := range u.Tasks {
		for i, hc := range tu.Spec.HealthChecks {
			if err := checkable(tu.Spec, hc, g.network); err != nil {
				return fmt.Errorf("update to revision %d: task %q: health check %d: %w", u.Revision, tu.TaskID, i, err)
			}
		}
	}
	drained := false
	draining := func() {
		drained = true
		msg := fmt.Sprintf("in-place update to revision %d: not ready, restarting in %s", u.Revision, plan.Grace)
		g.mu.Lock()
		defer g.mu.Unlock()
		for _, id := range plan.Changed {
			gt := g.tasks[id]
			if gt == nil || gt.stopping {
				continue
			}
			g.stopHealthLocked(gt)
			unhealthy := false
			gt.lastHealthy = &unhealthy
			g.push(withContainer(executor.Report{TaskID: id, State: taskstate.Running, Message: msg, Healthy: &unhealthy}, gt.info))
		}
	}
	err = p.Update(ctx, plan, draining)
	if err != nil && plan.Mode == proto.UpdateInPlace && !drained {
		return err // nothing was touched
	}
	g.reportUpdated(p, plan, err)
	return err
}

// reportUpdated reports every running task after an update: its
// container data and revision, and for the changed tasks their new specs'
// checks.
func (g *group) reportUpdated(p *pod.Pod, plan *pod.UpdatePlan, updateErr error) {
	changed := map[string]bool{}
	for _, id := range plan.Changed {
		changed[id] = true
	}
	for _, st := range p.Tasks() {
		info, err := p.Info(st.TaskID)
		if err != nil || st.State != taskstate.Running {
			continue
		}
		g.mu.Lock()
		gt := g.tasks[st.TaskID]
		if gt == nil || gt.stopping {
			g.mu.Unlock()
			continue
		}
		if st.Spec.KillGracePeriodSeconds != gt.t.Spec.KillGracePeriodSeconds {
			gt.t.KillGrace = time.Duration(st.Spec.KillGracePeriodSeconds * float64(time.Second))
		}
		gt.t.Spec = st.Spec
		gt.info = info
		r := withContainer(executor.Report{TaskID: st.TaskID, State: taskstate.Running, Healthy: gt.lastHealthy}, info)
		if changed[st.TaskID] {
			r.Message = updateOutcome(plan, info.Revision, updateErr)
			if plan.Mode == proto.UpdateInPlace && len(st.Spec.HealthChecks) == 0 {
				healthy := true
				gt.lastHealthy, r.Healthy = &healthy, &healthy
			}
		}
		g.push(r)
		if changed[st.TaskID] {
			g.startHealthLocked(gt, info)
		}
		g.mu.Unlock()
	}
}

// updateOutcome is the message of a changed task's report once the update
// is over; rev is the revision the task runs.
func updateOutcome(plan *pod.UpdatePlan, rev uint64, err error) string {
	switch {
	case err != nil:
		return fmt.Sprintf("%s update to revision %d failed, running revision %d: %v", plan.Mode, plan.Revision, rev, err)
	case plan.Mode == proto.UpdateInPlace:
		return fmt.Sprintf("in-place update to revision %d: container re-created", plan.Revision)
	}
	return fmt.Sprintf("hot-patched to revision %d", plan.Revision)
}
