package scheduler

import (
	"fmt"
	"time"

	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// operate restarts, reloads, reschedules, stops or starts an instance. A
// reschedule is a move: placed elsewhere first, then killed.
func (c *Core) operate(op Operate) {
	inst := c.currentLaunch(op.TaskGroupID)
	if inst == nil {
		return
	}
	switch op.Op {
	case OpStop, OpStart:
		c.stopOrStart(inst, op.Op)
		return
	}
	if !inst.phase().live() {
		return
	}
	switch op.Op {
	case OpReschedule:
		if inst.app.boundToAgent() {
			reason := "a dependency pod stays on its agent"
			if inst.app.daemon() {
				reason = "a daemonset's instance stays on its agent"
			}
			c.logf("reschedule ignored", "app", inst.app.key(), "instance", inst.rec.Index, "reason", reason)
			return
		}
		if inst.parent == nil && !c.queueMove(inst, MoveReschedule, "") {
			c.logf("reschedule ignored", "app", inst.app.key(), "instance", inst.rec.Index, "reason", "already moving or not running")
		}
	case OpRestart, OpReload:
		for _, t := range inst.rec.Tasks {
			msg := &proto.Message{ID: fmt.Sprintf("%s-%d", op.Op, c.now.UnixNano()), Type: proto.MessageType(op.Op), TaskID: t.ID}
			data, err := msg.Encode()
			if err != nil {
				continue
			}
			c.call(calls.Message(inst.rec.AgentID, inst.rec.ID, data))
		}
	}
}

// stopOrStart stops or starts one instance (its successor's operation
// is its instance's): stop kills its tasks and keeps it Stopped; start
// places it again, on the agent it ran on if that fits.
func (c *Core) stopOrStart(inst *instance, op Operation) {
	if inst.parent != nil {
		inst = inst.parent
	}
	a := inst.app
	ignored := func(reason string) {
		c.logf(string(op)+" ignored", "app", a.key(), "instance", inst.rec.Index, "reason", reason)
	}
	switch {
	case a.boundToAgent():
		ignored("a daemonset's instance and a dependency pod follow their agents and users")
	case op == OpStop && inst.phase() == PhaseStopped, op == OpStop && inst.killReason() == KillStop:
		ignored("already stopped")
	case op == OpStop && inst.goingAway():
		ignored("being removed")
	case op == OpStop:
		c.stop(inst)
	case inst.phase() != PhaseStopped:
		ignored("not stopped")
	case a.rec.Stopped:
		ignored("its application is stopped: start the application")
	default:
		c.start(inst)
	}
}

// stop kills what an instance runs, or ends its wait for a launch, and
// keeps it Stopped; a move or update under way ends with it.
func (c *Core) stop(inst *instance) {
	if inst.goingAway() || inst.killReason() == KillStop {
		return
	}
	if inst.successor != nil {
		c.endMove(inst, "")
	}
	c.endPreDelete(inst)
	inst.rec.Update = nil
	c.logf("stop", "app", inst.app.key(), "instance", inst.rec.Index, "task_group", inst.rec.ID, "agent", inst.rec.AgentID)
	switch inst.phase() {
	case PhaseKilling:
		inst.rec.KillReason = string(KillStop) // whatever it was killed for, it stays
		c.persist(inst)
	case PhaseLaunched, PhaseRunning:
		c.kill(inst, KillStop)
	default:
		c.stopped(inst)
	}
}

// stopped records an instance with nothing running as Stopped, or
// removes it when a scale-down or delete no longer wants it.
func (c *Core) stopped(inst *instance) {
	if a := inst.app; a.rec.State == registry.AppDeleting || !a.wants(inst.rec.Index) {
		c.remove(inst)
		return
	}
	if inst.rec.StoppedWithApp && !inst.app.rec.Stopped {
		c.start(inst) // its application was started while it was being stopped
		return
	}
	c.setPhase(inst, PhaseStopped)
	inst.rec.NotBefore, inst.rec.Pending, inst.rec.WaitingFor = time.Time{}, nil, ""
	inst.rec.Message = "stopped"
	c.persist(inst)
}

// start places a Stopped instance again at once, preferring the agent it
// last ran on; its restart count starts from zero.
func (c *Core) start(inst *instance) {
	c.setPhase(inst, PhasePending)
	inst.rec.StoppedWithApp, inst.rec.Restarts, inst.rec.NotBefore = false, 0, c.now
	inst.rec.Prefer, inst.rec.Message = inst.rec.AgentID, "started"
	c.logf("start", "app", inst.app.key(), "instance", inst.rec.Index, "prefer", inst.rec.AgentID)
	c.persist(inst)
}

// followAppStop stops the instances of a stopped application, marked as
// stopped with it, and starts those marked once it is started again.
func (c *Core) followAppStop(a *app) {
	if a.boundToAgent() {
		return
	}
	for _, inst := range a.sortedInstances() {
		switch {
		case a.rec.Stopped && !inst.rec.StoppedWithApp:
			inst.rec.StoppedWithApp = true
			if inst.phase() == PhaseStopped {
				c.persist(inst)
			} else {
				c.stop(inst)
			}
		case !a.rec.Stopped && inst.rec.StoppedWithApp && inst.phase() == PhaseStopped:
			c.start(inst)
		}
	}
}

// executorMessage records the answer to a reload or restart.
func (c *Core) executorMessage(m ExecutorMessage) {
	res, err := proto.DecodeMessageResult(m.Data)
	if err != nil {
		return
	}
	// The executor's ID is its task group's: found by it, not by a walk
	// of the fleet for each answer (a rollout at size brings one each).
	inst := c.currentLaunch(m.ExecutorID)
	if inst == nil || inst.rec.ID != m.ExecutorID || inst.parent != nil {
		return
	}
	if res.Type == proto.MessageUpdate {
		c.updateResult(inst, res)
		return
	}
	verdict := "ok"
	if !res.OK {
		verdict = "failed: " + res.Error
	}
	inst.rec.Message = fmt.Sprintf("%s %s", res.Type, verdict)
	c.persist(inst)
}
