package devcluster

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	mesosallocator "github.com/mesos/mesos-go/api/v1/lib/allocator"
	"github.com/mesos/mesos-go/api/v1/lib/executor"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
)

const headerStreamID = "Mesos-Stream-Id"

// handleScheduler serves POST /api/v1/scheduler like the Mesos master
// (src/master/http.cpp "scheduler" and validation::scheduler::call) for
// principal, the authenticated one ("" when frameworks do not
// authenticate).
func (c *Cluster) handleScheduler(w http.ResponseWriter, r *http.Request, principal string) {
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
		c.subscribe(w, r, *call.Subscribe.FrameworkInfo, call.Subscribe.SuppressedRoles, format)
		return
	}

	c.mu.Lock()
	var herr *httpError
	if c.stopped {
		herr = &httpError{http.StatusServiceUnavailable, "Master is shutting down"}
	} else {
		herr = c.dispatch(r, &call, principal)
	}
	c.mu.Unlock()
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

// dispatch runs a non-SUBSCRIBE call of principal. Caller holds c.mu.
func (c *Cluster) dispatch(r *http.Request, call *scheduler.Call, principal string) *httpError {
	fw := c.frameworks[call.FrameworkID.Value]
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
		c.log().Info("TEARDOWN", "framework", fw.id)
		c.removeFramework(fw)
	case scheduler.Call_ACCEPT:
		c.accept(fw, call.Accept)
	case scheduler.Call_DECLINE:
		c.decline(fw, call.Decline.OfferIDs, call.Decline.Filters)
	case scheduler.Call_REVIVE:
		fw.filters.revive()
		c.triggerAllocation()
	case scheduler.Call_SUPPRESS:
		fw.filters.suppress()
	case scheduler.Call_KILL:
		c.kill(fw, call.Kill)
	case scheduler.Call_SHUTDOWN:
		c.shutdownCall(fw, call.Shutdown)
	case scheduler.Call_ACKNOWLEDGE:
		c.acknowledge(fw, call.Acknowledge)
	case scheduler.Call_RECONCILE:
		c.reconcile(fw, call.Reconcile.Tasks)
	case scheduler.Call_MESSAGE:
		c.frameworkMessage(fw, call.Message)
	case scheduler.Call_REQUEST:
		// Deprecated in Mesos and a no-op for the built-in allocator.
	case scheduler.Call_UPDATE_FRAMEWORK:
		fw.applyInfo(call.UpdateFramework.FrameworkInfo)
	case scheduler.Call_ACCEPT_INVERSE_OFFERS:
		c.answerInverseOffers(fw, call.AcceptInverseOffers.InverseOfferIDs, call.AcceptInverseOffers.Filters, mesosallocator.InverseOfferStatus_ACCEPT)
	case scheduler.Call_DECLINE_INVERSE_OFFERS:
		c.answerInverseOffers(fw, call.DeclineInverseOffers.InverseOfferIDs, call.DeclineInverseOffers.Filters, mesosallocator.InverseOfferStatus_DECLINE)
	default:
		return &httpError{http.StatusNotImplemented, "The dev cluster does not implement " + call.Type.String() + " calls"}
	}
	return nil
}

// subscribe answers SUBSCRIBE with a RecordIO event stream that lasts
// until the client goes away, the framework fails over to another
// connection, is torn down, or the cluster stops.
func (c *Cluster) subscribe(w http.ResponseWriter, r *http.Request, info mesos.FrameworkInfo, suppressedRoles []string, format streamFormat) {
	stream := newEventStream(newUUIDString())
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		writeHTTPError(w, &httpError{http.StatusServiceUnavailable, "Master is shutting down"})
		return
	}
	var fw *framework
	id := info.GetID().GetValue()
	switch {
	case id != "" && c.removedFrameworks[id]:
		c.mu.Unlock()
		c.log().Info("SUBSCRIBE refused: framework removed", "framework", id)
		stream.sendAndClose(errorEvent("Framework has been removed"))
		c.serveSchedulerStream(w, r, stream, format, nil)
		return
	case id != "" && c.frameworks[id] != nil && c.frameworks[id].info.GetPrincipal() != info.GetPrincipal():
		c.mu.Unlock()
		c.log().Info("SUBSCRIBE refused: another principal", "framework", id)
		stream.sendAndClose(errorEvent("Changing framework's principal is not allowed."))
		c.serveSchedulerStream(w, r, stream, format, nil)
		return
	case id != "" && c.frameworks[id] != nil:
		fw = c.frameworks[id]
		if fw.stream != nil {
			fw.stream.sendAndClose(errorEvent("Framework failed over"))
		}
		fw.failoverTimer.stop()
		c.log().Info("framework subscribed again", "framework", id, "name", info.Name)
	default:
		if id == "" {
			id = fmt.Sprintf("%s-%04d", c.id, c.nextSeq())
		}
		fw = &framework{
			id:           id,
			tasks:        map[string]*task{},
			unreachable:  map[string]*task{},
			filters:      c.alloc.addFramework(id),
			registeredAt: c.cfg.Clock.Now(),
		}
		c.frameworks[id] = fw
		c.log().Info("framework subscribed", "framework", id, "name", info.Name)
	}
	info.ID = &mesos.FrameworkID{Value: id}
	fw.applyInfo(info)
	fw.stream, fw.streamID = stream, stream.id
	fw.filters.setConnected(true, slices.Contains(suppressedRoles, fw.role))
	hb := c.cfg.HeartbeatInterval.D().Seconds()
	stream.send(&scheduler.Event{
		Type: scheduler.Event_SUBSCRIBED,
		Subscribed: &scheduler.Event_Subscribed{
			FrameworkID:              &mesos.FrameworkID{Value: id},
			HeartbeatIntervalSeconds: &hb,
			MasterInfo:               c.masterInfo(),
		},
	})
	// The agents' status update managers resend what is unacknowledged.
	for _, t := range fw.tasks {
		if len(t.pending) > 0 {
			c.forwardHead(t)
		}
	}
	c.mu.Unlock()
	c.triggerAllocation()
	c.serveSchedulerStream(w, r, stream, format, fw)
}

func (c *Cluster) serveSchedulerStream(w http.ResponseWriter, r *http.Request, stream *eventStream, format streamFormat, fw *framework) {
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
	_ = stream.serve(r.Context(), c.cfg.Clock, rw, heartbeat, c.cfg.HeartbeatInterval.D())
	if fw == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if fw.stream == stream && !c.stopped {
		c.frameworkDisconnected(fw)
	}
}

// frameworkDisconnected starts the failover timeout. Caller holds c.mu.
func (c *Cluster) frameworkDisconnected(fw *framework) {
	fw.stream, fw.streamID = nil, ""
	fw.filters.setConnected(false, false)
	c.removeOffersOf(fw, false)
	if c.frameworks[fw.id] != fw {
		return
	}
	timeout := fw.failoverTimeout()
	c.log().Info("framework disconnected", "framework", fw.id, "failover_timeout", timeout)
	// Subscribing again and removing the framework stop the timer.
	fw.failoverTimer = c.afterFunc(timeout, func() {
		c.log().Info("failover timeout expired; removing the framework", "framework", fw.id)
		c.removeFramework(fw)
	})
}

// removeFramework tears a framework down: its executors are shut down, its
// tasks killed, and its ID may never subscribe again. Caller holds c.mu.
func (c *Cluster) removeFramework(fw *framework) {
	if fw.stream != nil {
		fw.stream.close()
		fw.stream, fw.streamID = nil, ""
	}
	fw.stopTimers()
	c.alloc.removeFramework(fw.filters)
	c.removeOffersOf(fw, false)
	now := c.cfg.Clock.Now()
	for _, t := range fw.tasks {
		if !isTerminal(t.state) {
			st := c.newStatus(t, mesos.TASK_KILLED, mesos.SOURCE_MASTER, mesos.REASON_FRAMEWORK_REMOVED, "Framework "+fw.id+" removed")
			c.applyTaskState(t, st)
		}
		t.pending = nil
		fw.addCompleted(t)
	}
	fw.tasks = map[string]*task{}
	for _, a := range c.agentOrder {
		for _, ex := range a.executors {
			if ex.fw == fw {
				c.shutdownExecutor(ex, "framework removed")
			}
		}
		for _, ct := range a.commandTasks {
			if ct.task.fw == fw {
				ct.destroy()
			}
		}
	}
	delete(c.frameworks, fw.id)
	c.removedFrameworks[fw.id] = true
	c.completedFrameworks = append(c.completedFrameworks, fw)
	c.log().Info("framework removed", "framework", fw.id, "at", now.Format(time.RFC3339))
}

// mesosVersion is the version the master and its agents report.
const mesosVersion = "1.12.0-devcluster"

func (c *Cluster) masterInfo() *mesos.MasterInfo {
	host, port := splitHostPort(c.masterAddr)
	p := uint32(port)
	pid := "master@" + c.masterAddr
	version := mesosVersion
	return &mesos.MasterInfo{
		ID:       c.id,
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

// decline removes offers and installs refusal filters. Caller holds c.mu.
func (c *Cluster) decline(fw *framework, ids []mesos.OfferID, filters *mesos.Filters) {
	for _, oid := range ids {
		o := c.offers[oid.Value]
		if o == nil || o.fw != fw {
			continue
		}
		// The filter first: the resources must not go to fw in between.
		c.refuse(fw, o.agent, o.resources, filters)
		c.removeOffer(o)
	}
}

func (c *Cluster) refuse(fw *framework, a *agent, rs mesos.Resources, filters *mesos.Filters) {
	d := c.cfg.DefaultRefuse.D()
	if filters != nil && filters.RefuseSeconds != nil {
		d = time.Duration(*filters.RefuseSeconds * float64(time.Second))
	}
	if d <= 0 || len(rs) == 0 {
		return
	}
	fw.filters.refuse(a.id, rs, c.cfg.Clock.Now().Add(d))
	c.alloc.triggerAfter(d)
}

// kill handles KILL. Caller holds c.mu.
func (c *Cluster) kill(fw *framework, k *scheduler.Call_Kill) {
	t := fw.tasks[k.TaskID.Value]
	if t == nil {
		// Mesos performs an explicit reconciliation for unknown tasks.
		c.reconcile(fw, []scheduler.Call_Reconcile_Task{{TaskID: k.TaskID, AgentID: k.AgentID}})
		return
	}
	if isTerminal(t.state) {
		return
	}
	policy := k.KillPolicy
	if policy == nil {
		policy = t.info.KillPolicy
	}
	c.killTask(t, policy)
}

// killTask asks whatever runs t to kill it. Caller holds c.mu.
func (c *Cluster) killTask(t *task, policy *mesos.KillPolicy) {
	t.killing = true
	switch {
	case t.exec != nil && t.exec.simulated:
		c.sendExecutorStatus(t, mesos.TASK_KILLED, "Task killed", nil)
	case t.exec != nil && c.dropQueuedTask(t.exec, t):
		// Not yet handed to the executor: the agent drops it.
		c.agentStatusUpdate(t, c.newStatus(t, mesos.TASK_KILLED, mesos.SOURCE_AGENT, mesos.REASON_TASK_KILLED_DURING_LAUNCH, "Killed before delivery to the executor"), false)
	case t.exec != nil && t.exec.stream != nil:
		t.exec.stream.send(&executor.Event{Type: executor.Event_KILL, Kill: &executor.Event_Kill{TaskID: t.info.TaskID, KillPolicy: policy}})
	case t.exec != nil:
		// Delivered, but the executor is disconnected: Mesos kills the
		// executor in that case, and so do we.
		c.shutdownExecutor(t.exec, "task killed while the executor is disconnected")
	case t.command != nil:
		if policy == nil {
			policy = t.info.KillPolicy // as the command executor falls back
		}
		c.killCommandTask(t.command, policy)
	default:
		// Simulated command task.
		c.sendExecutorStatus(t, mesos.TASK_KILLED, "Task killed", nil)
	}
}

// shutdownCall handles SHUTDOWN of an executor. Caller holds c.mu.
func (c *Cluster) shutdownCall(fw *framework, s *scheduler.Call_Shutdown) {
	a := c.agents[s.AgentID.Value]
	if a == nil {
		return
	}
	if ex := a.executors[executorKey(fw.id, s.ExecutorID.Value)]; ex != nil {
		c.shutdownExecutor(ex, "shutdown requested by the scheduler")
	}
}

// frameworkMessage delivers MESSAGE to an executor. Caller holds c.mu.
func (c *Cluster) frameworkMessage(fw *framework, m *scheduler.Call_Message) {
	a := c.agents[m.AgentID.Value]
	if a == nil {
		return
	}
	ex := a.executors[executorKey(fw.id, m.ExecutorID.Value)]
	if ex != nil && ex.simulated {
		ex.received = append(ex.received, append([]byte(nil), m.Data...))
		if len(ex.received) > maxSimulatedMessages {
			ex.received = ex.received[1:]
		}
		return
	}
	if ex == nil || ex.stream == nil {
		c.log().Warn("MESSAGE dropped: executor not subscribed", "framework", fw.id, "executor", m.ExecutorID.Value, "agent", a.id)
		return
	}
	ex.stream.send(&executor.Event{Type: executor.Event_MESSAGE, Message: &executor.Event_Message{Data: append([]byte(nil), m.Data...)}})
}

// acknowledge handles ACKNOWLEDGE. Caller holds c.mu.
func (c *Cluster) acknowledge(fw *framework, ack *scheduler.Call_Acknowledge) {
	t := fw.tasks[ack.TaskID.Value]
	if t == nil || t.agent.id != ack.AgentID.Value || len(t.pending) == 0 {
		return
	}
	head := t.pending[0]
	if !bytes.Equal(head.status.UUID, ack.UUID) {
		c.log().Info("ignoring ACKNOWLEDGE with an unexpected uuid", "framework", fw.id, "task", t.info.TaskID.Value)
		return
	}
	t.pending = t.pending[1:]
	c.stats.AckLatency.observe(c.cfg.Clock.Since(head.firstSent))
	t.retryTimer.stop()
	t.retryDelay = 0
	if head.fromExecutor && t.exec != nil && t.exec.stream != nil {
		t.exec.stream.send(&executor.Event{
			Type:         executor.Event_ACKNOWLEDGED,
			Acknowledged: &executor.Event_Acknowledged{TaskID: t.info.TaskID, UUID: append([]byte(nil), ack.UUID...)},
		})
	}
	if len(t.pending) > 0 {
		c.forwardHead(t)
		return
	}
	if isTerminal(t.state) && isTerminal(head.status.GetState()) {
		delete(fw.tasks, t.info.TaskID.Value)
		fw.addCompleted(t)
		c.checkDrained(t.agent)
	}
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
