package devcluster

import (
	"bytes"
	"slices"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/executor"
)

// The agent's status update manager: every update of a task gets a uuid
// and is forwarded through the master to the framework, the oldest
// unacknowledged one of each task resent with backoff until the framework
// acknowledges it, the next one waiting behind it.

const maxStatusHistory = 32

// status builds a status of t at now.
func (t *task) status(now time.Time, state mesos.TaskState, source mesos.TaskStatus_Source, reason mesos.TaskStatus_Reason, msg string) mesos.TaskStatus {
	ts := float64(now.UnixNano()) / 1e9
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

// recordStatus makes st t's latest status and counts the tasks running.
// Caller holds m.mu.
func (m *master) recordStatus(t *task, st mesos.TaskStatus) {
	if t.state == mesos.TASK_RUNNING {
		m.stats.TasksRunning--
	}
	t.state = st.GetState()
	if t.state == mesos.TASK_RUNNING {
		m.stats.TasksRunning++
	}
	t.statuses = append(t.statuses, st)
	if len(t.statuses) > maxStatusHistory {
		t.statuses = t.statuses[len(t.statuses)-maxStatusHistory:]
	}
}

// applyTaskState records st as t's latest state and releases the
// resources of a task that became terminal. Caller holds a.m.mu.
func (a *agent) applyTaskState(t *task, st mesos.TaskStatus) {
	a.m.recordStatus(t, st)
	if !isTerminal(t.state) || t.released {
		return
	}
	t.released = true
	delete(a.tasks, t.key())
	a.share.recover(t.resources())
	if t.command != nil {
		delete(a.commandTasks, t.key())
	}
	if ex := t.exec; ex != nil {
		delete(ex.tasks, t.info.TaskID.Value)
	}
	a.m.alloc.triggerFreed()
}

// statusUpdate records st, gives it a uuid and queues it for reliable
// delivery. Caller holds a.m.mu.
func (a *agent) statusUpdate(t *task, st mesos.TaskStatus, fromExecutor bool) {
	if len(st.UUID) == 0 {
		st.UUID = newUUIDBytes()
	}
	st.AgentID = &mesos.AgentID{Value: a.id}
	if t.exec != nil && st.ExecutorID == nil {
		st.ExecutorID = &mesos.ExecutorID{Value: t.exec.id}
	}
	if st.Timestamp == nil {
		ts := float64(a.m.cfg.Clock.Now().UnixNano()) / 1e9
		st.Timestamp = &ts
	}
	drainingStatus(t, &st)
	a.applyTaskState(t, st)
	if a.m.registered(t.fw) {
		t.pending = append(t.pending, pendingUpdate{status: st, fromExecutor: fromExecutor})
		if t.exec != nil && t.exec.ended != nil && isTerminal(t.state) {
			t.exec.ended[t.info.TaskID.Value] = t
		}
		if len(t.pending) == 1 {
			a.forwardHead(t)
		}
	}
	a.checkpointTask(t)
	if ex := t.exec; ex != nil && ex.simulated && len(ex.tasks) == 0 {
		// A simulated executor exits once it has nothing left to run, like
		// a custom executor whose tasks are all terminal.
		a.executorTerminated(ex, 0, "")
	}
}

// forwardHead sends the oldest unacknowledged update and arms its resend
// timer. Caller holds a.m.mu.
func (a *agent) forwardHead(t *task) {
	m := a.m
	if len(t.pending) == 0 {
		return
	}
	head := &t.pending[0]
	if head.firstSent.IsZero() {
		head.firstSent = m.cfg.Clock.Now()
		m.stats.StatusUpdates++
	} else {
		m.stats.StatusUpdatesResent++
	}
	m.sendUpdate(t.fw, head.status)
	if t.retryDelay == 0 {
		t.retryDelay = m.cfg.StatusUpdateRetry.D()
	}
	delay := t.retryDelay
	// An acknowledgement, a resend and the task's end stop the timer.
	t.retryTimer.stop()
	t.retryTimer = m.afterFunc(delay, func() {
		t.retryDelay = min(2*delay, m.cfg.StatusUpdateRetryMax.D())
		a.forwardHead(t)
	})
}

// acknowledged takes the framework's acknowledgement of t's oldest
// pending update, passes it on to the executor that sent it and forwards
// the next; it returns the acknowledged update, or false when uuid is not
// the oldest's. Caller holds a.m.mu.
func (a *agent) acknowledged(t *task, uuid []byte) (mesos.TaskStatus, bool) {
	if len(t.pending) == 0 {
		return mesos.TaskStatus{}, false
	}
	head := t.pending[0]
	if !bytes.Equal(head.status.UUID, uuid) {
		return mesos.TaskStatus{}, false
	}
	// A fleet's tasks are acknowledged and then run for long: each holds
	// no queue and no timer from then on (a slice of the queue past its
	// head would keep every update it held).
	if len(t.pending) == 1 {
		t.pending = nil
	} else {
		t.pending = slices.Delete(t.pending, 0, 1)
	}
	a.m.stats.AckLatency.observe(a.m.cfg.Clock.Since(head.firstSent))
	t.retryTimer.stop()
	t.retryTimer = nil
	t.retryDelay = 0
	if head.fromExecutor && t.exec != nil && t.exec.stream != nil {
		t.exec.stream.send(&executor.Event{
			Type:         executor.Event_ACKNOWLEDGED,
			Acknowledged: &executor.Event_Acknowledged{TaskID: t.info.TaskID, UUID: append([]byte(nil), uuid...)},
		})
	}
	a.forwardHead(t)
	return head.status, true
}

// sendExecutorStatus is a status a simulated executor (or the simulated
// command executor) sends. Caller holds a.m.mu.
func (a *agent) sendExecutorStatus(t *task, state mesos.TaskState, msg string, reason *mesos.TaskStatus_Reason) {
	if isTerminal(t.state) {
		return
	}
	st := t.status(a.m.cfg.Clock.Now(), state, mesos.SOURCE_EXECUTOR, 0, msg)
	if reason != nil {
		st.Reason = reason.Enum()
	}
	a.statusUpdate(t, st, true)
}
