package devcluster

import (
	"fmt"
	"net/http"
	"slices"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	mesosallocator "github.com/mesos/mesos-go/api/v1/lib/allocator"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
)

const headerStreamID = "Mesos-Stream-Id"

// handleScheduler serves POST /api/v1/scheduler like the Mesos master
// (src/master/http.cpp "scheduler" and validation::scheduler::call) for
// principal, the authenticated one ("" when frameworks do not
// authenticate).
func (m *master) handleScheduler(w http.ResponseWriter, r *http.Request, principal string) {
	var call scheduler.Call
	if _, herr := decodeCall(r, &call); herr != nil {
		writeHTTPError(w, herr)
		return
	}
	if msg := validateSchedulerCall(&call, principal); msg != "" {
		writeHTTPError(w, &httpError{http.StatusBadRequest, "Failed to validate scheduler::Call: " + msg})
		return
	}
	if call.Type == scheduler.Call_SUBSCRIBE {
		// An authenticated framework without a principal takes the
		// authenticated one.
		if principal != "" && call.Subscribe.FrameworkInfo.Principal == nil {
			call.Subscribe.FrameworkInfo.Principal = &principal
		}
		format, herr := negotiateStream(r)
		if herr != nil {
			writeHTTPError(w, herr)
			return
		}
		if r.Header.Get(headerStreamID) != "" {
			writeHTTPError(w, &httpError{http.StatusBadRequest, "Subscribe calls should not include the 'Mesos-Stream-Id' header"})
			return
		}
		m.subscribe(w, r, *call.Subscribe.FrameworkInfo, call.Subscribe.SuppressedRoles, format)
		return
	}

	m.mu.Lock()
	var herr *httpError
	if m.stopped {
		herr = &httpError{http.StatusServiceUnavailable, "Master is shutting down"}
	} else {
		herr = m.dispatch(r, &call, principal)
	}
	m.mu.Unlock()
	if herr != nil {
		writeHTTPError(w, herr)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

func validateSchedulerCall(call *scheduler.Call, principal string) string {
	if call.Type == scheduler.Call_UNKNOWN {
		return "Expecting 'type' to be present"
	}
	if call.Type == scheduler.Call_SUBSCRIBE {
		if call.Subscribe == nil {
			return "Expecting 'subscribe' to be present"
		}
		if call.Subscribe.FrameworkInfo == nil {
			return "Not initialized: subscribe.framework_info"
		}
		if call.Subscribe.FrameworkInfo.GetID().GetValue() != call.GetFrameworkID().GetValue() {
			return "'framework_id' differs from 'subscribe.framework_info.id'"
		}
		if info := call.Subscribe.FrameworkInfo; principal != "" && info.Principal != nil && *info.Principal != principal {
			return principalMismatch(principal, *info.Principal)
		}
		return ""
	}
	if call.FrameworkID == nil {
		return "Expecting 'framework_id' to be present"
	}
	missing := func(name string, present bool) string {
		if present {
			return ""
		}
		return "Expecting '" + name + "' to be present"
	}
	switch call.Type {
	case scheduler.Call_ACCEPT:
		return missing("accept", call.Accept != nil)
	case scheduler.Call_DECLINE:
		return missing("decline", call.Decline != nil)
	case scheduler.Call_ACCEPT_INVERSE_OFFERS:
		return missing("accept_inverse_offers", call.AcceptInverseOffers != nil)
	case scheduler.Call_DECLINE_INVERSE_OFFERS:
		return missing("decline_inverse_offers", call.DeclineInverseOffers != nil)
	case scheduler.Call_KILL:
		return missing("kill", call.Kill != nil)
	case scheduler.Call_SHUTDOWN:
		return missing("shutdown", call.Shutdown != nil)
	case scheduler.Call_ACKNOWLEDGE:
		if call.Acknowledge == nil {
			return "Expecting 'acknowledge' to be present"
		}
		if len(call.Acknowledge.UUID) != 16 {
			return "Invalid UUID: the uuid must be 16 bytes"
		}
	case scheduler.Call_RECONCILE:
		return missing("reconcile", call.Reconcile != nil)
	case scheduler.Call_MESSAGE:
		return missing("message", call.Message != nil)
	case scheduler.Call_REQUEST:
		return missing("request", call.Request != nil)
	case scheduler.Call_UPDATE_FRAMEWORK:
		if call.UpdateFramework == nil {
			return "Expecting 'update_framework' to be present"
		}
		if call.UpdateFramework.FrameworkInfo.GetID().GetValue() != call.FrameworkID.Value {
			return "'framework_id' differs from 'update_framework.framework_info.id'"
		}
	}
	return ""
}

// principalMismatch is the master's answer when the authenticated
// principal is not the framework's.
func principalMismatch(authenticated, framework string) string {
	return "Authenticated principal '" + authenticated + "' does not match principal '" + framework + "' set in `FrameworkInfo`"
}

// dispatch runs a non-SUBSCRIBE call of principal. Caller holds m.mu.
func (m *master) dispatch(r *http.Request, call *scheduler.Call, principal string) *httpError {
	fw := m.frameworks[call.FrameworkID.Value]
	if fw == nil {
		return &httpError{http.StatusBadRequest, "Framework cannot be found"}
	}
	if principal != "" && principal != fw.info.GetPrincipal() {
		return &httpError{http.StatusBadRequest, principalMismatch(principal, fw.info.GetPrincipal())}
	}
	if fw.stream == nil {
		return &httpError{http.StatusForbidden, "Framework is not subscribed"}
	}
	sid := r.Header.Get(headerStreamID)
	if sid == "" {
		return &httpError{http.StatusBadRequest, "All non-subscribe calls should include the 'Mesos-Stream-Id' header"}
	}
	if sid != fw.streamID {
		return &httpError{http.StatusBadRequest, "The stream ID '" + sid + "' included in this request didn't match the stream ID currently associated with framework ID " + fw.id}
	}
	switch call.Type {
	case scheduler.Call_TEARDOWN:
		m.log().Info("TEARDOWN", "framework", fw.id)
		m.removeFramework(fw)
	case scheduler.Call_ACCEPT:
		m.accept(fw, call.Accept)
	case scheduler.Call_DECLINE:
		m.decline(fw, call.Decline.OfferIDs, call.Decline.Filters)
	case scheduler.Call_REVIVE:
		fw.filters.revive()
		m.triggerAllocation()
	case scheduler.Call_SUPPRESS:
		fw.filters.suppress()
	case scheduler.Call_KILL:
		m.kill(fw, call.Kill)
	case scheduler.Call_SHUTDOWN:
		m.shutdownCall(fw, call.Shutdown)
	case scheduler.Call_ACKNOWLEDGE:
		m.acknowledge(fw, call.Acknowledge)
	case scheduler.Call_RECONCILE:
		m.reconcile(fw, call.Reconcile.Tasks)
	case scheduler.Call_MESSAGE:
		m.frameworkMessage(fw, call.Message)
	case scheduler.Call_REQUEST:
		// Deprecated in Mesos and a no-op for the built-in allocator.
	case scheduler.Call_UPDATE_FRAMEWORK:
		fw.applyInfo(call.UpdateFramework.FrameworkInfo)
		m.saveRegistry()
	case scheduler.Call_ACCEPT_INVERSE_OFFERS:
		m.answerInverseOffers(fw, call.AcceptInverseOffers.InverseOfferIDs, call.AcceptInverseOffers.Filters, mesosallocator.InverseOfferStatus_ACCEPT)
	case scheduler.Call_DECLINE_INVERSE_OFFERS:
		m.answerInverseOffers(fw, call.DeclineInverseOffers.InverseOfferIDs, call.DeclineInverseOffers.Filters, mesosallocator.InverseOfferStatus_DECLINE)
	default:
		return &httpError{http.StatusNotImplemented, "The dev cluster does not implement " + call.Type.String() + " calls"}
	}
	return nil
}

// subscribe answers SUBSCRIBE with a RecordIO event stream that lasts
// until the client goes away, the framework fails over to another
// connection, is torn down, or the cluster stops.
func (m *master) subscribe(w http.ResponseWriter, r *http.Request, info mesos.FrameworkInfo, suppressedRoles []string, format streamFormat) {
	stream := newEventStream(newUUIDString())
	m.mu.Lock()
	if m.stopped {
		m.mu.Unlock()
		writeHTTPError(w, &httpError{http.StatusServiceUnavailable, "Master is shutting down"})
		return
	}
	var fw *framework
	id := info.GetID().GetValue()
	switch {
	case id != "" && m.removedFrameworks[id]:
		m.mu.Unlock()
		m.log().Info("SUBSCRIBE refused: framework removed", "framework", id)
		stream.sendAndClose(errorEvent("Framework has been removed"))
		m.serveSchedulerStream(w, r, stream, format, nil)
		return
	case id != "" && m.frameworks[id] != nil && m.frameworks[id].info.GetPrincipal() != info.GetPrincipal():
		m.mu.Unlock()
		m.log().Info("SUBSCRIBE refused: another principal", "framework", id)
		stream.sendAndClose(errorEvent("Changing framework's principal is not allowed."))
		m.serveSchedulerStream(w, r, stream, format, nil)
		return
	case id != "" && m.frameworks[id] != nil:
		fw = m.frameworks[id]
		if fw.stream != nil {
			fw.stream.sendAndClose(errorEvent("Framework failed over"))
		}
		fw.failoverTimer.stop()
		m.log().Info("framework subscribed again", "framework", id, "name", info.Name)
	default:
		if id == "" {
			id = fmt.Sprintf("%s-%04d", m.id, m.nextSeq())
		}
		fw = m.addFramework(id)
		m.log().Info("framework subscribed", "framework", id, "name", info.Name)
	}
	info.ID = &mesos.FrameworkID{Value: id}
	fw.applyInfo(info)
	m.saveRegistry()
	fw.stream, fw.streamID = stream, stream.id
	fw.filters.setConnected(true, slices.Contains(suppressedRoles, fw.role))
	hb := m.cfg.HeartbeatInterval.D().Seconds()
	stream.send(&scheduler.Event{
		Type: scheduler.Event_SUBSCRIBED,
		Subscribed: &scheduler.Event_Subscribed{
			FrameworkID:              &mesos.FrameworkID{Value: id},
			HeartbeatIntervalSeconds: &hb,
			MasterInfo:               m.masterInfo(),
		},
	})
	// The agents' status update managers resend what is unacknowledged.
	for _, t := range fw.tasks {
		if len(t.pending) > 0 {
			t.agent.forwardHead(t)
		}
	}
	m.mu.Unlock()
	m.triggerAllocation()
	m.serveSchedulerStream(w, r, stream, format, fw)
}

// addFramework makes the record of a new framework, disconnected.
// Caller holds m.mu.
func (m *master) addFramework(id string) *framework {
	fw := &framework{
		id:           id,
		tasks:        map[string]*task{},
		unreachable:  map[string]*task{},
		filters:      m.alloc.addFramework(id),
		registeredAt: m.cfg.Clock.Now(),
	}
	m.frameworks[id] = fw
	return fw
}

func (m *master) serveSchedulerStream(w http.ResponseWriter, r *http.Request, stream *eventStream, format streamFormat, fw *framework) {
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
	w.Header().Set(headerStreamID, stream.id)
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flush()
	rw := &recordWriter{w: w, flush: flush, codec: format.message}
	heartbeat := func() message { return &scheduler.Event{Type: scheduler.Event_HEARTBEAT} }
	_ = stream.serve(r.Context(), m.cfg.Clock, rw, heartbeat, m.cfg.HeartbeatInterval.D())
	if fw == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if fw.stream == stream && !m.stopped {
		m.frameworkDisconnected(fw)
	}
}

// frameworkDisconnected starts the failover timeout. Caller holds m.mu.
func (m *master) frameworkDisconnected(fw *framework) {
	fw.stream, fw.streamID = nil, ""
	fw.filters.setConnected(false, false)
	m.removeOffersOf(fw, false)
	if m.frameworks[fw.id] != fw {
		return
	}
	timeout := fw.failoverTimeout()
	m.log().Info("framework disconnected", "framework", fw.id, "failover_timeout", timeout)
	// Subscribing again and removing the framework stop the timer.
	fw.failoverTimer = m.afterFunc(timeout, func() {
		m.log().Info("failover timeout expired; removing the framework", "framework", fw.id)
		m.removeFramework(fw)
	})
}

// removeFramework tears a framework down: its executors are shut down, its
// tasks killed, and its ID may never subscribe again. Caller holds m.mu.
func (m *master) removeFramework(fw *framework) {
	if fw.stream != nil {
		fw.stream.close()
		fw.stream, fw.streamID = nil, ""
	}
	fw.stopTimers()
	m.alloc.removeFramework(fw.filters)
	m.removeOffersOf(fw, false)
	now := m.cfg.Clock.Now()
	for _, t := range fw.tasks {
		if !isTerminal(t.state) {
			st := t.status(now, mesos.TASK_KILLED, mesos.SOURCE_MASTER, mesos.REASON_FRAMEWORK_REMOVED, "Framework "+fw.id+" removed")
			t.agent.applyTaskState(t, st)
		}
		t.pending = nil
		fw.addCompleted(t)
	}
	fw.tasks = map[string]*task{}
	for _, a := range m.agentOrder {
		for _, ex := range a.executors {
			if ex.fw == fw {
				a.shutdownExecutor(ex, "framework removed")
			}
		}
		for _, ct := range a.commandTasks {
			if ct.task.fw == fw {
				ct.destroy()
			}
		}
	}
	delete(m.frameworks, fw.id)
	m.saveRegistry()
	m.removedFrameworks[fw.id] = true
	m.completedFrameworks = append(m.completedFrameworks, fw)
	m.log().Info("framework removed", "framework", fw.id, "at", now.Format(time.RFC3339))
}

// mesosVersion is the version the master and its agents report.
const mesosVersion = "1.12.0-devcluster"

func (m *master) masterInfo() *mesos.MasterInfo {
	host, port := splitHostPort(m.addr)
	p := uint32(port)
	pid := "master@" + m.addr
	version := mesosVersion
	return &mesos.MasterInfo{
		ID:       m.id,
		IP:       0x0100007f, // 127.0.0.1 in network order, as Mesos fills it
		Port:     &p,
		PID:      &pid,
		Hostname: &host,
		Version:  &version,
		Address:  &mesos.Address{Hostname: &host, IP: &host, Port: int32(port)},
		// What a 1.12 master announces (recording).
		Capabilities: []mesos.MasterInfo_Capability{
			{Type: mesos.MasterInfo_Capability_AGENT_UPDATE},
			{Type: mesos.MasterInfo_Capability_AGENT_DRAINING},
			{Type: masterCapabilityQuotaV2},
		},
	}
}

// decline removes offers and installs refusal filters. Caller holds m.mu.
func (m *master) decline(fw *framework, ids []mesos.OfferID, filters *mesos.Filters) {
	for _, oid := range ids {
		o := m.offers[oid.Value]
		if o == nil || o.fw != fw {
			continue
		}
		// The filter first: the resources must not go to fw in between.
		m.refuse(fw, o.agent, o.resources, filters)
		m.removeOffer(o)
	}
}

func (m *master) refuse(fw *framework, a *agent, rs mesos.Resources, filters *mesos.Filters) {
	d := m.cfg.DefaultRefuse.D()
	if filters != nil && filters.RefuseSeconds != nil {
		d = time.Duration(*filters.RefuseSeconds * float64(time.Second))
	}
	if d <= 0 || len(rs) == 0 {
		return
	}
	fw.filters.refuse(a.id, rs, m.cfg.Clock.Now().Add(d))
	m.alloc.triggerAfter(d)
}

// kill handles KILL. Caller holds m.mu.
func (m *master) kill(fw *framework, k *scheduler.Call_Kill) {
	m.stats.KillsReceived++
	t := fw.tasks[k.TaskID.Value]
	if t == nil {
		// Mesos performs an explicit reconciliation for unknown tasks.
		m.reconcile(fw, []scheduler.Call_Reconcile_Task{{TaskID: k.TaskID, AgentID: k.AgentID}})
		return
	}
	if isTerminal(t.state) {
		return
	}
	policy := k.KillPolicy
	if policy == nil {
		policy = t.info.KillPolicy
	}
	t.agent.killTask(t, policy)
}

// shutdownCall handles SHUTDOWN of an executor. Caller holds m.mu.
func (m *master) shutdownCall(fw *framework, s *scheduler.Call_Shutdown) {
	a := m.agents[s.AgentID.Value]
	if a == nil {
		return
	}
	if ex := a.executors[executorKey(fw.id, s.ExecutorID.Value)]; ex != nil {
		a.shutdownExecutor(ex, "shutdown requested by the scheduler")
	}
}

// frameworkMessage delivers MESSAGE to an executor. Caller holds m.mu.
func (m *master) frameworkMessage(fw *framework, msg *scheduler.Call_Message) {
	if a := m.agents[msg.AgentID.Value]; a != nil {
		a.frameworkMessage(fw, msg.ExecutorID.Value, msg.Data)
	}
}

// executorMessage hands an executor's framework message to its framework
// (dropped while the framework is disconnected, as Mesos does). Caller
// holds m.mu.
func (m *master) executorMessage(ex *executorRun, data []byte) {
	if ex.fw.stream != nil {
		ex.fw.stream.send(&scheduler.Event{Type: scheduler.Event_MESSAGE, Message: &scheduler.Event_Message{
			AgentID:    mesos.AgentID{Value: ex.agent.id},
			ExecutorID: mesos.ExecutorID{Value: ex.id},
			Data:       append([]byte(nil), data...),
		}})
	}
}

// acknowledge handles ACKNOWLEDGE: the task's agent takes it; once a
// terminal update is acknowledged the master forgets the task. Caller
// holds m.mu.
func (m *master) acknowledge(fw *framework, ack *scheduler.Call_Acknowledge) {
	t := fw.tasks[ack.TaskID.Value]
	if t == nil || t.agent.id != ack.AgentID.Value || len(t.pending) == 0 {
		return
	}
	st, ok := t.agent.acknowledged(t, ack.UUID)
	if !ok {
		m.log().Info("ignoring ACKNOWLEDGE with an unexpected uuid", "framework", fw.id, "task", t.info.TaskID.Value)
		return
	}
	if len(t.pending) == 0 && isTerminal(t.state) && isTerminal(st.GetState()) {
		delete(fw.tasks, t.info.TaskID.Value)
		if t.exec != nil {
			delete(t.exec.ended, t.info.TaskID.Value)
		}
		fw.addCompleted(t)
		m.checkDrained(t.agent)
	}
	t.agent.checkpointTask(t)
}

func splitHostPort(addr string) (string, int) {
	var host string
	var port int
	for i := len(addr) - 1; i >= 0; i-- {
		if addr[i] == ':' {
			host = addr[:i]
			_, _ = fmt.Sscanf(addr[i+1:], "%d", &port)
			break
		}
	}
	return host, port
}

// masterStatus is a status the master makes up for a task it never
// launched or no longer tracks (no uuid, no acknowledgement).
func (m *master) masterStatus(taskID mesos.TaskID, agentID *mesos.AgentID, state mesos.TaskState, reason mesos.TaskStatus_Reason, msg string) mesos.TaskStatus {
	ts := float64(m.cfg.Clock.Now().UnixNano()) / 1e9
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
func (m *master) sendUpdate(fw *framework, st mesos.TaskStatus) {
	if fw.stream != nil {
		fw.stream.send(&scheduler.Event{Type: scheduler.Event_UPDATE, Update: &scheduler.Event_Update{Status: st}})
	}
}

// reconcile answers RECONCILE (src/master/master.cpp "_reconcileTasks").
// Caller holds m.mu.
func (m *master) reconcile(fw *framework, tasks []scheduler.Call_Reconcile_Task) {
	latest := func(t *task) mesos.TaskStatus {
		st := t.latest()
		st.UUID = nil
		st.Source = mesos.SOURCE_MASTER.Enum()
		st.Reason = mesos.REASON_RECONCILIATION.Enum()
		msg := "Reconciliation: Latest task state"
		st.Message = &msg
		ts := float64(m.cfg.Clock.Now().UnixNano()) / 1e9
		st.Timestamp = &ts
		return st
	}
	if len(tasks) == 0 {
		for _, t := range fw.tasks {
			m.sendUpdate(fw, latest(t))
		}
		for _, t := range fw.unreachable {
			m.sendUpdate(fw, latest(t))
		}
		return
	}
	for _, rt := range tasks {
		if t := fw.tasks[rt.TaskID.Value]; t != nil {
			m.sendUpdate(fw, latest(t))
			continue
		}
		if t := fw.unreachable[rt.TaskID.Value]; t != nil {
			m.sendUpdate(fw, latest(t))
			continue
		}
		state := mesos.TASK_LOST
		msg := "Reconciliation: Task is unknown"
		if fw.partitionAware {
			state = mesos.TASK_UNKNOWN
			if rt.AgentID != nil && m.agents[rt.AgentID.Value] != nil {
				// The agent is registered and does not know the task.
				state = mesos.TASK_GONE
				msg = "Reconciliation: Task is unknown to the agent"
			}
		}
		m.sendUpdate(fw, m.masterStatus(rt.TaskID, rt.AgentID, state, mesos.REASON_RECONCILIATION, msg))
	}
}
