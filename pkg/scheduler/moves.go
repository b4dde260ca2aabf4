package scheduler

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// Moves take a running instance to another agent without a moment
// without it: a successor launch of the same instance ID is placed and
// must be running (and ready) before the instance is killed (through its
// PreDeleteHook when it has one); then the successor takes its place. An
// instance that ends on its own meanwhile is replaced by its successor at
// once. The successor avoids the agent left, for this move only.
//
// A move is stored in the instance's record (registry.InstanceMove, the
// successor's record inside it), so it survives a restart. Moves wait
// their turn: one at a time per agent left. A successor that fits on no
// agent (its last verdict placed it nowhere) holds no turn: it waits,
// saying why, while the agent's other moves go on, and is placed once an
// agent fits it.

// MoveReason says why an instance moves.
type MoveReason string

// The move reasons.
const (
	MoveDrain      MoveReason = "drain"
	MoveDrift      MoveReason = "drift"
	MoveReschedule MoveReason = "reschedule"
	// MoveMaintenance: the master asks for the agent (an inverse offer).
	MoveMaintenance MoveReason = "maintenance"
	// MoveEviction: the agent has a NoExecute taint the instance does not
	// tolerate (any longer: its tolerationSeconds are over).
	MoveEviction MoveReason = registry.EvictionMove
)

// queueMove asks for inst to move off its agent (to toHost when set).
// It reports whether a move was queued.
func (c *Core) queueMove(inst *instance, reason MoveReason, toHost string) bool {
	if inst.rec.Move != nil || !inst.phase().live() || inst.phase() == PhaseKilling || inst.rec.Host == "" {
		return false
	}
	if toHost == inst.rec.Host {
		return false
	}
	inst.rec.Move = &registry.InstanceMove{Reason: string(reason), FromHost: inst.rec.Host, ToHost: toHost, Since: c.now}
	c.moving[inst] = true
	c.logf("move queued", "app", inst.app.key(), "instance", inst.rec.Index, "reason", reason, "from", inst.rec.Host, "to", toHost)
	c.persist(inst)
	return true
}

// progressMoves starts the queued moves whose agent has none under way
// (a successor that fits nowhere does not count), kills the instances
// whose successor is ready, and ends the moves whose successor gave up.
func (c *Core) progressMoves() {
	if len(c.moving) == 0 {
		return
	}
	busy := map[string]bool{} // agents left by a move under way
	var queued []*instance
	for _, inst := range slices.SortedFunc(maps.Keys(c.moving), byInstance) {
		switch {
		case !c.attached(inst) || inst.rec.Move == nil:
			delete(c.moving, inst)
		case inst.successor != nil:
			if !inst.successor.rec.FitsNowhere() {
				busy[inst.rec.Move.FromHost] = true
			}
			c.advanceMove(inst)
		default:
			queued = append(queued, inst)
		}
	}
	slices.SortStableFunc(queued, func(x, y *instance) int { return x.rec.Move.Since.Compare(y.rec.Move.Since) })
	for _, inst := range queued {
		from := inst.rec.Move.FromHost
		switch {
		case !inst.phase().live() || inst.rec.Host != from:
			c.endMove(inst, "") // it ended or moved meanwhile: nothing left to move
		case busy[from] || inst.phase() != PhaseRunning || inst.rec.Update != nil:
			// its turn comes; a starting or updating instance moves once running
		default:
			busy[from] = true
			c.startSuccessor(inst)
		}
	}
}

// startSuccessor creates the pending successor of a queued move, at the
// revision the rollout wants for the instance.
func (c *Core) startSuccessor(inst *instance) {
	a := inst.app
	s := &instance{app: a, parent: inst,
		rec: registry.TaskGroup{Namespace: a.rec.Namespace, App: a.rec.Name, Index: inst.rec.Index, Launches: inst.rec.Launches,
			Restarts: inst.rec.Restarts, NotBefore: c.now, Phase: string(PhasePending)}}
	s.rec.Version, s.rec.Template = a.revision(a.target(inst.rec.Index))
	inst.successor = s
	c.trackPhase(s, c.now)
	c.logf("move started", "app", a.key(), "instance", inst.rec.Index, "reason", inst.rec.Move.Reason, "from", inst.rec.Move.FromHost)
	c.persist(inst)
}

// advanceMove kills the instance once its successor is ready, hands over
// when the instance is gone, and gives up when the successor did.
func (c *Core) advanceMove(inst *instance) {
	s := inst.successor
	switch {
	case s.phase() == PhaseFailed || s.phase() == PhaseFinished:
		c.endMove(inst, "move failed: the successor "+s.rec.Message)
	case !inst.phase().live():
		c.handOver(inst)
	case inst.phase() != PhaseKilling && c.ready(s):
		c.kill(inst, KillMove)
	}
}

// handOver makes the successor the instance: the moved instance is gone.
func (c *Core) handOver(inst *instance) {
	a, s, mv := inst.app, inst.successor, inst.rec.Move
	c.untrack(inst)
	c.endPreDelete(inst)
	delete(c.written, inst)
	delete(c.moving, inst)
	s.parent = nil
	s.rec.Previous = previousLaunch(&inst.rec)
	if s.phase() != PhasePending || s.rec.Message == "" {
		s.rec.Message = fmt.Sprintf("moved from %s (%s)", mv.FromHost, mv.Reason)
	}
	a.put(s)
	c.logf("move done", "app", a.key(), "instance", inst.rec.Index, "reason", mv.Reason, "from", mv.FromHost, "to", s.rec.Host)
	c.persist(s)
}

// endMove gives up a move: the successor's launch is killed and the
// instance stays where it is.
func (c *Core) endMove(inst *instance, message string) {
	if s := inst.successor; s != nil {
		c.dropSuccessor(s)
		inst.successor = nil
	}
	if message != "" {
		inst.rec.Message = message
		c.logf("move ended", "app", inst.app.key(), "instance", inst.rec.Index, "message", message)
	}
	inst.rec.Move = nil
	delete(c.moving, inst)
	c.persist(inst)
}

// dropSuccessor forgets a successor and kills what it runs; updates of
// its tasks then find no instance and are killed again if still running.
func (c *Core) dropSuccessor(s *instance) {
	for _, t := range s.rec.Tasks {
		if c.tasks[t.ID] == s {
			delete(c.tasks, t.ID)
			if !terminal(taskState(t.State)) {
				c.sendKill(s, t.ID)
			}
		}
		delete(c.killSent, t.ID)
	}
	c.stopRemoteChecks(s)
	s.parent = nil
}

// byInstance orders instances by application and ID.
func byInstance(x, y *instance) int {
	return cmp.Or(cmp.Compare(x.app.key(), y.app.key()), cmp.Compare(x.rec.Index, y.rec.Index))
}

// attached reports whether inst is an instance or the successor of one,
// rather than a launch already given up.
func (c *Core) attached(inst *instance) bool {
	if p := inst.parent; p != nil {
		return p.successor == inst && c.attached(p)
	}
	return inst.app.instances[inst.rec.Index] == inst
}

// restoreMove rebuilds the successor stored in an instance's record.
func (c *Core) restoreMove(inst *instance) {
	mv := inst.rec.Move
	if mv == nil {
		return
	}
	c.moving[inst] = true
	if mv.Successor == nil {
		return
	}
	rec := *mv.Successor
	mv.Successor = nil
	rec.Phase = string(parsePhase(rec.Phase))
	s := &instance{app: inst.app, parent: inst, rec: rec}
	inst.successor = s
	c.trackPhase(s, time.Time{})
	if s.phase().live() {
		for _, t := range rec.Tasks {
			if !terminal(taskState(t.State)) {
				c.tasks[t.ID] = s
			}
		}
	}
	if s.phase() == PhaseRunning {
		c.startRemoteChecks(s)
	}
}
