package scheduler

import (
	"fmt"

	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/bcs-mesos/bcs-mesos/proto"
)

// operate restarts, reloads or reschedules an instance. A reschedule is
// a move: placed elsewhere first, then killed.
func (c *Core) operate(op Operate) {
	inst := c.currentLaunch(op.TaskGroupID)
	if inst == nil || !inst.phase().live() {
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

// executorMessage records the answer to a reload or restart.
func (c *Core) executorMessage(m ExecutorMessage) {
	res, err := proto.DecodeMessageResult(m.Data)
	if err != nil {
		return
	}
	for _, a := range c.sortedApps() {
		for _, inst := range a.sortedInstances() {
			if inst.rec.ID != m.ExecutorID {
				continue
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
			return
		}
	}
}
