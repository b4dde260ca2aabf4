package scheduler

import (
	"maps"
	"slices"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/bcs-mesos/bcs-mesos/pkg/rollout"
)

func (c *Core) subscribed(id string) {
	c.learnFrameworkID(id)
	c.connected, c.suppressed = true, false
	clear(c.offers)
	// Ask about every task we believe live, until each is answered.
	clear(c.reconciling)
	for _, id := range slices.Sorted(maps.Keys(c.tasks)) {
		if agent := c.tasks[id].rec.AgentID; agent != "" {
			c.reconciling[id] = agent
		}
	}
	c.reconcileSweeps()
	c.reconcileOrder, c.reconcileNext = slices.Sorted(maps.Keys(c.reconciling)), 0
	c.sendReconcile()
	c.implicitSent = c.now
	// Instances being killed (a deletion or a scale-down restored from
	// the store, or KILLs sent while disconnected, which went nowhere) are
	// killed again now rather than after the kill grace and the retry
	// interval; so are the tasks left of a group that ended.
	for _, id := range slices.Sorted(maps.Keys(c.tasks)) {
		if inst := c.tasks[id]; inst.phase() == PhaseKilling || !inst.phase().live() {
			c.sendKill(inst, id)
		}
	}
}

// learnFrameworkID persists the framework ID the master gave us.
func (c *Core) learnFrameworkID(id string) {
	if id != "" && id != c.frameworkID {
		c.frameworkID = id
		c.write(Write{FrameworkID: id})
	}
}

// sendReconcile asks about the next batch of the tasks not answered yet,
// in reconcileOrder.
func (c *Core) sendReconcile() {
	// Built here rather than with calls.ReconcileTasks, which ranges over a
	// map: the order of the tasks must not depend on it.
	var tasks []scheduler.Call_Reconcile_Task
	clear(c.reconcileAsked)
	for ; c.reconcileNext < len(c.reconcileOrder) && len(tasks) < c.cfg.ReconcileBatch; c.reconcileNext++ {
		id := c.reconcileOrder[c.reconcileNext]
		if agent, ok := c.reconciling[id]; ok {
			c.reconcileAsked[id] = true
			tasks = append(tasks, scheduler.Call_Reconcile_Task{TaskID: mesos.TaskID{Value: id}, AgentID: &mesos.AgentID{Value: agent}})
		}
	}
	if len(tasks) == 0 {
		return
	}
	c.call(calls.Reconcile(func(r *scheduler.Call_Reconcile) { r.Tasks = tasks }))
	c.reconcileSent = c.now
}

// answered notes a status of taskID: once the last batch is all
// answered, the next is asked.
func (c *Core) answered(taskID string) {
	if !c.reconcileAsked[taskID] {
		return
	}
	delete(c.reconcileAsked, taskID)
	if len(c.reconcileAsked) == 0 {
		c.sendReconcile()
	}
}

func (c *Core) tick() {
	if !c.connected {
		return
	}
	if len(c.reconciling) > 0 && c.now.Sub(c.reconcileSent) >= c.cfg.RetryInterval {
		// Ask again, from the first, about those still unanswered.
		c.reconcileOrder = slices.DeleteFunc(c.reconcileOrder, func(id string) bool {
			_, ok := c.reconciling[id]
			return !ok
		})
		c.reconcileNext = 0
		c.sendReconcile()
	}
	if c.now.Sub(c.implicitSent) >= c.cfg.ReconcileInterval {
		c.call(calls.Reconcile())
		c.implicitSent = c.now
	}
	for _, id := range slices.Sorted(maps.Keys(c.killSent)) {
		inst := c.tasks[id]
		if inst == nil {
			delete(c.killSent, id)
			continue
		}
		grace := inst.app.killGrace()
		if c.now.Sub(c.killSent[id]) >= grace+c.cfg.RetryInterval {
			c.sendKill(inst, id)
		}
	}
	c.pruneUnderWay()
	c.resendUpdates()
	c.preDeleteTick()
	for _, a := range c.apps {
		if a.ro.Status.Phase != rollout.PhaseCompleted {
			c.replan(a) // waits end with time
		}
	}
}
