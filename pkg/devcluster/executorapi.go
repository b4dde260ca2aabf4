package devcluster

import (
	"bytes"
	"net/http"
	"slices"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/executor"
)

// handleExecutor serves an agent's POST /api/v1/executor (Mesos
// docs/executor-http-api.md, src/slave/http.cpp "executor").
func (a *agent) handleExecutor(w http.ResponseWriter, r *http.Request) {
	var call executor.Call
	if _, herr := decodeCall(r, &call); herr != nil {
		writeHTTPError(w, herr)
		return
	}
	if msg := validateExecutorCall(&call); msg != "" {
		writeHTTPError(w, &httpError{http.StatusBadRequest, "Failed to validate executor::Call: " + msg})
		return
	}
	if call.Type == executor.Call_SUBSCRIBE {
		format, herr := negotiateStream(r)
		if herr != nil {
			writeHTTPError(w, herr)
			return
		}
		a.executorSubscribe(w, r, &call, format)
		return
	}

	a.m.mu.Lock()
	herr := a.executorCall(&call)
	a.m.mu.Unlock()
	if herr != nil {
		writeHTTPError(w, herr)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

func validateExecutorCall(call *executor.Call) string {
	switch call.Type {
	case executor.Call_UNKNOWN:
		return "Expecting 'type' to be present"
	case executor.Call_SUBSCRIBE:
		if call.Subscribe == nil {
			return "Expecting 'subscribe' to be present"
		}
	case executor.Call_UPDATE:
		if call.Update == nil {
			return "Expecting 'update' to be present"
		}
		st := call.Update.Status
		if len(st.UUID) == 0 {
			return "Expecting 'uuid' to be present"
		}
		if len(st.UUID) != 16 {
			return "Invalid UUID: the uuid must be 16 bytes"
		}
		if st.GetState() == mesos.TASK_STAGING {
			return "Received TASK_STAGING from executor"
		}
		if st.ExecutorID != nil && st.ExecutorID.Value != call.ExecutorID.Value {
			return "ExecutorID in Call: " + call.ExecutorID.Value + " does not match ExecutorID in TaskStatus: " + st.ExecutorID.Value
		}
		if st.GetSource() != mesos.SOURCE_EXECUTOR {
			return "Received Call from executor " + call.ExecutorID.Value + " of framework " + call.FrameworkID.Value + " with invalid source, expecting 'SOURCE_EXECUTOR'"
		}
	case executor.Call_MESSAGE:
		if call.Message == nil {
			return "Expecting 'message' to be present"
		}
	}
	return ""
}

func (a *agent) findExecutor(call *executor.Call) (*executorRun, *httpError) {
	if a.m.stopped || a.m.agents[a.id] != a {
		return nil, &httpError{http.StatusServiceUnavailable, "Agent has been removed"}
	}
	// Executors of a removed framework live on until they exit (they are
	// being shut down), so look them up on the agent, not the master.
	ex := a.executors[executorKey(call.FrameworkID.Value, call.ExecutorID.Value)]
	if ex == nil {
		return nil, &httpError{http.StatusBadRequest, "Executor cannot be found"}
	}
	return ex, nil
}

// executorSubscribe answers SUBSCRIBE with SUBSCRIBED and then the
// launches queued for this executor, and keeps the stream open.
func (a *agent) executorSubscribe(w http.ResponseWriter, r *http.Request, call *executor.Call, format streamFormat) {
	stream := newEventStream(newUUIDString())
	a.m.mu.Lock()
	ex, herr := a.findExecutor(call)
	if herr != nil {
		a.m.mu.Unlock()
		writeHTTPError(w, herr)
		return
	}
	if ex.terminating {
		a.m.mu.Unlock()
		writeHTTPError(w, &httpError{http.StatusForbidden, "Executor is terminating"})
		return
	}
	if ex.stream != nil {
		ex.stream.close()
	}
	ex.stream = stream
	ex.subscribed = true
	ex.regTimer.stop()
	ex.reregTimer.stop()
	fwInfo := ex.fw.info
	containerID := mesos.ContainerID{Value: ex.containerID}
	stream.send(&executor.Event{
		Type: executor.Event_SUBSCRIBED,
		Subscribed: &executor.Event_Subscribed{
			ExecutorInfo:  ex.info,
			FrameworkInfo: fwInfo,
			AgentInfo:     a.info,
			ContainerID:   &containerID,
		},
	})
	// Updates the executor still holds unacknowledged: those the agent has
	// (same uuid) are pending already; those sent while it was away are
	// taken now, as the real agent does on reregistration. Tasks it
	// reports that we don't know of are ignored.
	for _, up := range call.Subscribe.GetUnacknowledgedUpdates() {
		a.takeExecutorUpdate(ex, up.Status)
	}
	if ex.reregistering {
		ex.reregistering = false
		a.dropTasksUnknownToExecutor(ex, call.Subscribe.GetUnacknowledgedTasks())
	}
	for _, ev := range ex.queued {
		stream.send(ev)
	}
	if ex.queued != nil {
		// Delivered: a recovery must not deliver them twice.
		ex.queued = nil
		a.checkpointExecutor(ex)
	}
	a.executorBack(ex)
	a.m.mu.Unlock()
	a.m.log().Info("executor subscribed", "executor", ex.id, "framework", ex.fw.id, "agent", a.id)

	flusher, _ := w.(http.Flusher)
	flush := func() {
		if flusher != nil {
			flusher.Flush()
		}
	}
	w.Header().Set("Content-Type", format.contentType)
	if format.contentType == mediaRecordIO {
		w.Header().Set("Message-Content-Type", format.message.mediaType)
	}
	w.WriteHeader(http.StatusOK)
	flush()
	rw := &recordWriter{w: w, flush: flush, codec: format.message}
	_ = stream.serve(r.Context(), a.m.cfg.Clock, rw, nil, 0)

	a.m.mu.Lock()
	defer a.m.mu.Unlock()
	if ex.stream == stream {
		ex.stream = nil
	}
}

// dropTasksUnknownToExecutor settles, when an executor subscribes again
// after the agent's recovery, the tasks it never got, as Mesos'
// Slave::subscribe does: a task still TASK_STAGING that the executor does
// not list among its unacknowledged tasks, and that the agent does not
// hold for it, was launched as the agent went down, and becomes
// TASK_DROPPED (TASK_LOST) with REASON_AGENT_RESTARTED; an executor left
// without tasks by that is shut down. Caller holds a.m.mu.
func (a *agent) dropTasksUnknownToExecutor(ex *executorRun, known []mesos.TaskInfo) {
	dropped := 0
	for id, t := range ex.tasks {
		if t.state != mesos.TASK_STAGING || slices.ContainsFunc(known, func(ti mesos.TaskInfo) bool { return ti.TaskID.Value == id }) ||
			ex.holdsLaunch(id) {
			continue
		}
		state := mesos.TASK_DROPPED
		if !ex.fw.partitionAware {
			state = mesos.TASK_LOST
		}
		a.statusUpdate(t, t.status(a.m.cfg.Clock.Now(), state, mesos.SOURCE_AGENT, mesos.REASON_AGENT_RESTARTED, "Task launched during agent restart"), false)
		dropped++
	}
	if dropped > 0 && len(ex.tasks) == 0 {
		a.shutdownExecutor(ex, "its tasks were launched during the agent's restart")
	}
}

// executorCall handles UPDATE, MESSAGE and HEARTBEAT. Caller holds a.m.mu.
func (a *agent) executorCall(call *executor.Call) *httpError {
	ex, herr := a.findExecutor(call)
	if herr != nil {
		return herr
	}
	switch call.Type {
	case executor.Call_UPDATE:
		return a.takeExecutorUpdate(ex, call.Update.Status)
	case executor.Call_MESSAGE:
		a.m.executorMessage(ex, call.Message.Data)
	case executor.Call_HEARTBEAT:
	default:
		return &httpError{http.StatusNotImplemented, "The dev cluster does not implement " + call.Type.String() + " calls"}
	}
	return nil
}

// takeExecutorUpdate hands an executor's status update to the status
// update manager. Caller holds a.m.mu.
func (a *agent) takeExecutorUpdate(ex *executorRun, st mesos.TaskStatus) *httpError {
	if !a.m.registered(ex.fw) {
		return nil // framework removed: the update has nobody to go to
	}
	t := ex.fw.tasks[st.TaskID.Value]
	if t == nil || t.exec != ex {
		return &httpError{http.StatusBadRequest, "Task " + st.TaskID.Value + " is unknown to executor " + ex.id}
	}
	for _, p := range t.pending {
		if bytes.Equal(p.status.UUID, st.UUID) {
			return nil // a retry of an update we already hold
		}
	}
	for _, old := range t.statuses {
		if bytes.Equal(old.UUID, st.UUID) {
			return nil // taken and acknowledged before
		}
	}
	if isTerminal(t.state) {
		// Mesos' status update manager drops updates after a terminal
		// one.
		return nil
	}
	st.AgentID = &mesos.AgentID{Value: a.id}
	st.ExecutorID = &mesos.ExecutorID{Value: ex.id}
	a.statusUpdate(t, st, true)
	return nil
}
