package devcluster

import (
	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
)

const maxStatusHistory = 32

// newStatus builds a status for task t. Caller holds c.mu.
func (c *Cluster) newStatus(t *task, state mesos.TaskState, source mesos.TaskStatus_Source, reason mesos.TaskStatus_Reason, msg string) mesos.TaskStatus {
	ts := float64(c.cfg.Clock.Now().UnixNano()) / 1e9
	st := mesos.TaskStatus{
		TaskID:    t.info.TaskID,
		State:     state.Enum(),
		Source:    source.Enum(),
		AgentID:   &mesos.AgentID{Value: t.agent.id},
		Timestamp: &ts,
	}
	if reason != 0 || state == mesos.TASK_ERROR {
		st.Reason = reason.Enum()
	}
	if msg != "" {
		st.Message = &msg
	}
	if t.exec != nil {
		st.ExecutorID = &mesos.ExecutorID{Value: t.exec.id}
	}
	return st
}

// masterStatus is a status the master makes up for a task it never
// launched or no longer tracks (no uuid, no acknowledgement).
func (c *Cluster) masterStatus(taskID mesos.TaskID, agentID *mesos.AgentID, state mesos.TaskState, reason mesos.TaskStatus_Reason, msg string) mesos.TaskStatus {
	ts := float64(c.cfg.Clock.Now().UnixNano()) / 1e9
	st := mesos.TaskStatus{
		TaskID:    taskID,
		State:     state.Enum(),
		Source:    mesos.SOURCE_MASTER.Enum(),
		Reason:    reason.Enum(),
		Timestamp: &ts,
	}
	if agentID != nil && agentID.Value != "" {
		st.AgentID = &mesos.AgentID{Value: agentID.Value}
	}
	if msg != "" {
		st.Message = &msg
	}
	return st
}

// sendUpdate sends an UPDATE event (no ack expected when uuid is empty).
func (c *Cluster) sendUpdate(fw *framework, st mesos.TaskStatus) {
	if fw.stream != nil {
		fw.stream.send(&scheduler.Event{Type: scheduler.Event_UPDATE, Update: &scheduler.Event_Update{Status: st}})
	}
}

// applyTaskState records st as t's latest state and releases resources of
// a task that became terminal. Caller holds c.mu.
func (c *Cluster) applyTaskState(t *task, st mesos.TaskStatus) {
	c.recordStatus(t, st)
	if !isTerminal(t.state) || t.released {
		return
	}
	t.released = true
	delete(t.agent.tasks, t.key())
	t.agent.share.recover(t.resources)
	if t.command != nil {
		delete(t.agent.commandTasks, t.key())
	}
	if ex := t.exec; ex != nil {
		delete(ex.tasks, t.info.TaskID.Value)
	}
	c.triggerAllocation()
}

// recordStatus makes st t's latest status and counts the tasks running.
// Caller holds c.mu.
func (c *Cluster) recordStatus(t *task, st mesos.TaskStatus) {
	if t.state == mesos.TASK_RUNNING {
		c.stats.TasksRunning--
	}
	t.state = st.GetState()
	if t.state == mesos.TASK_RUNNING {
		c.stats.TasksRunning++
	}
	t.latest = st
	t.statuses = append(t.statuses, st)
	if len(t.statuses) > maxStatusHistory {
		t.statuses = t.statuses[len(t.statuses)-maxStatusHistory:]
	}
}

// agentStatusUpdate is the agent's status update manager: it records st,
// gives it a uuid and queues it for reliable delivery; the head of a task's
// queue is resent with backoff until the scheduler acknowledges it.
// Caller holds c.mu.
func (c *Cluster) agentStatusUpdate(t *task, st mesos.TaskStatus, fromExecutor bool) {
	if len(st.UUID) == 0 {
		st.UUID = newUUIDBytes()
	}
	st.AgentID = &mesos.AgentID{Value: t.agent.id}
	if t.exec != nil && st.ExecutorID == nil {
		st.ExecutorID = &mesos.ExecutorID{Value: t.exec.id}
	}
	if st.Timestamp == nil {
		ts := float64(c.cfg.Clock.Now().UnixNano()) / 1e9
		st.Timestamp = &ts
	}
	drainingStatus(t, &st)
	c.applyTaskState(t, st)
	if c.frameworks[t.fw.id] == t.fw {
		t.pending = append(t.pending, pendingUpdate{status: st, fromExecutor: fromExecutor})
		if len(t.pending) == 1 {
			c.forwardHead(t)
		}
	}
	if ex := t.exec; ex != nil && ex.simulated && len(ex.tasks) == 0 {
		// A simulated executor exits once it has nothing left to run, like
		// a custom executor whose tasks are all terminal.
		c.executorTerminated(ex, 0, "")
	}
}

// forwardHead sends the oldest unacknowledged update and arms its resend
// timer. Caller holds c.mu.
func (c *Cluster) forwardHead(t *task) {
	if len(t.pending) == 0 {
		return
	}
	head := &t.pending[0]
	if head.firstSent.IsZero() {
		head.firstSent = c.cfg.Clock.Now()
		c.stats.StatusUpdates++
	} else {
		c.stats.StatusUpdatesResent++
	}
	c.sendUpdate(t.fw, head.status)
	if t.retryDelay == 0 {
		t.retryDelay = c.cfg.StatusUpdateRetry.D()
	}
	delay := t.retryDelay
	// An acknowledgement, a resend and the task's end stop the timer.
	t.retryTimer.stop()
	t.retryTimer = c.afterFunc(delay, func() {
		t.retryDelay = min(2*delay, c.cfg.StatusUpdateRetryMax.D())
		c.forwardHead(t)
	})
}

// sendExecutorStatus is a status a simulated executor (or the simulated
// command executor) sends. Caller holds c.mu.
func (c *Cluster) sendExecutorStatus(t *task, state mesos.TaskState, msg string, reason *mesos.TaskStatus_Reason) {
	if isTerminal(t.state) {
		return
	}
	st := c.newStatus(t, state, mesos.SOURCE_EXECUTOR, 0, msg)
	if reason != nil {
		st.Reason = reason.Enum()
	}
	c.agentStatusUpdate(t, st, true)
}

// reconcile answers RECONCILE (src/master/master.cpp "_reconcileTasks").
// Caller holds c.mu.
func (c *Cluster) reconcile(fw *framework, tasks []scheduler.Call_Reconcile_Task) {
	latest := func(t *task) mesos.TaskStatus {
		st := t.latest
		st.UUID = nil
		st.Source = mesos.SOURCE_MASTER.Enum()
		st.Reason = mesos.REASON_RECONCILIATION.Enum()
		msg := "Reconciliation: Latest task state"
		st.Message = &msg
		ts := float64(c.cfg.Clock.Now().UnixNano()) / 1e9
		st.Timestamp = &ts
		return st
	}
	if len(tasks) == 0 {
		for _, t := range fw.tasks {
			c.sendUpdate(fw, latest(t))
		}
		for _, t := range fw.unreachable {
			c.sendUpdate(fw, latest(t))
		}
		return
	}
	for _, rt := range tasks {
		if t := fw.tasks[rt.TaskID.Value]; t != nil {
			c.sendUpdate(fw, latest(t))
			continue
		}
		if t := fw.unreachable[rt.TaskID.Value]; t != nil {
			c.sendUpdate(fw, latest(t))
			continue
		}
		state := mesos.TASK_LOST
		msg := "Reconciliation: Task is unknown"
		if fw.partitionAware {
			state = mesos.TASK_UNKNOWN
			if rt.AgentID != nil && c.agents[rt.AgentID.Value] != nil {
				// The agent is registered and does not know the task.
				state = mesos.TASK_GONE
				msg = "Reconciliation: Task is unknown to the agent"
			}
		}
		c.sendUpdate(fw, c.masterStatus(rt.TaskID, rt.AgentID, state, mesos.REASON_RECONCILIATION, msg))
	}
}
