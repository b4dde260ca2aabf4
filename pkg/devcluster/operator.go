package devcluster

import (
	"net/http"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	mesosmaster "github.com/mesos/mesos-go/api/v1/lib/master"
)

// handleOperator serves the master's operator API, POST /api/v1
// (src/master/http.cpp "api"): GET_AGENTS, the agent calls DRAIN_AGENT,
// DEACTIVATE_AGENT and REACTIVATE_AGENT, and the maintenance calls. The
// call comes in JSON or protobuf (Content-Type); a response goes out as
// Accept asks, JSON by default. Calls without a response answer 200 with
// an empty body, errors a status and a text/plain reason, as Mesos does.
func (m *master) handleOperator(w http.ResponseWriter, r *http.Request) {
	var call mesosmaster.Call
	if _, herr := decodeCall(r, &call); herr != nil {
		writeHTTPError(w, herr)
		return
	}
	if msg := validateOperatorCall(&call); msg != "" {
		writeHTTPError(w, &httpError{http.StatusBadRequest, "Failed to validate master::Call: " + msg})
		return
	}
	out, herr := negotiateResponse(r)
	if herr != nil {
		writeHTTPError(w, herr)
		return
	}
	m.mu.Lock()
	var resp *mesosmaster.Response
	if m.stopped {
		herr = &httpError{http.StatusServiceUnavailable, "Master is shutting down"}
	} else {
		resp, herr = m.operate(&call)
	}
	m.mu.Unlock()
	if herr != nil {
		writeHTTPError(w, herr)
		return
	}
	if resp == nil {
		w.WriteHeader(http.StatusOK)
		return
	}
	body, err := out.encode(resp)
	if err != nil {
		writeHTTPError(w, &httpError{http.StatusInternalServerError, "Failed to serialize the response: " + err.Error()})
		return
	}
	w.Header().Set("Content-Type", out.mediaType)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// validateOperatorCall is validation::master::call::validate for the
// calls the dev cluster serves, plus the required agent ID that a
// protobuf body cannot omit but a JSON one can.
func validateOperatorCall(call *mesosmaster.Call) string {
	present := func(name string, ok bool) string {
		if ok {
			return ""
		}
		return "Expecting '" + name + "' to be present"
	}
	agentID := func(name string, id mesos.AgentID) string {
		if id.Value == "" {
			return "Missing required fields: " + name + ".agent_id"
		}
		return ""
	}
	switch call.Type {
	case mesosmaster.Call_UNKNOWN:
		return "Expecting 'type' to be present"
	case mesosmaster.Call_DRAIN_AGENT:
		if msg := present("drain_agent", call.DrainAgent != nil); msg != "" {
			return msg
		}
		return agentID("drain_agent", call.DrainAgent.AgentID)
	case mesosmaster.Call_DEACTIVATE_AGENT:
		if msg := present("deactivate_agent", call.DeactivateAgent != nil); msg != "" {
			return msg
		}
		return agentID("deactivate_agent", call.DeactivateAgent.AgentID)
	case mesosmaster.Call_REACTIVATE_AGENT:
		if msg := present("reactivate_agent", call.ReactivateAgent != nil); msg != "" {
			return msg
		}
		return agentID("reactivate_agent", call.ReactivateAgent.AgentID)
	case mesosmaster.Call_UPDATE_MAINTENANCE_SCHEDULE:
		return present("update_maintenance_schedule", call.UpdateMaintenanceSchedule != nil)
	case mesosmaster.Call_START_MAINTENANCE:
		return present("start_maintenance", call.StartMaintenance != nil)
	case mesosmaster.Call_STOP_MAINTENANCE:
		return present("stop_maintenance", call.StopMaintenance != nil)
	}
	return ""
}

// operate runs a validated operator call; a nil response means 200 with
// no body. Caller holds m.mu.
func (m *master) operate(call *mesosmaster.Call) (*mesosmaster.Response, *httpError) {
	switch call.Type {
	case mesosmaster.Call_GET_AGENTS:
		return m.getAgents(), nil
	case mesosmaster.Call_DRAIN_AGENT:
		d := call.DrainAgent
		var maxGrace *time.Duration
		if g := d.MaxGracePeriod; g != nil {
			// v1 carries a google.protobuf.Duration; the master keeps a
			// DurationInfo (src/internal/devolve.cpp).
			ns := time.Duration(g.Seconds)*time.Second + time.Duration(g.Nanos)
			maxGrace = &ns
		}
		return nil, m.drainAgent(d.AgentID.Value, maxGrace, d.GetMarkGone())
	case mesosmaster.Call_DEACTIVATE_AGENT:
		return nil, m.deactivateAgent(call.DeactivateAgent.AgentID.Value)
	case mesosmaster.Call_REACTIVATE_AGENT:
		return nil, m.reactivateAgent(call.ReactivateAgent.AgentID.Value)
	case mesosmaster.Call_GET_MAINTENANCE_SCHEDULE:
		return &mesosmaster.Response{
			Type:                   mesosmaster.Response_GET_MAINTENANCE_SCHEDULE,
			GetMaintenanceSchedule: &mesosmaster.Response_GetMaintenanceSchedule{Schedule: m.schedule},
		}, nil
	case mesosmaster.Call_UPDATE_MAINTENANCE_SCHEDULE:
		return nil, m.updateSchedule(call.UpdateMaintenanceSchedule.Schedule)
	case mesosmaster.Call_GET_MAINTENANCE_STATUS:
		return &mesosmaster.Response{
			Type:                 mesosmaster.Response_GET_MAINTENANCE_STATUS,
			GetMaintenanceStatus: &mesosmaster.Response_GetMaintenanceStatus{Status: m.maintenanceStatus()},
		}, nil
	case mesosmaster.Call_START_MAINTENANCE:
		return nil, m.startMaintenance(call.StartMaintenance.Machines)
	case mesosmaster.Call_STOP_MAINTENANCE:
		return nil, m.stopMaintenance(call.StopMaintenance.Machines)
	}
	return nil, &httpError{http.StatusNotImplemented, "The dev cluster does not implement " + call.Type.String() + " calls"}
}

// agentCapabilities are those a 1.12 agent announces (src/slave/constants.cpp).
var agentCapabilities = []mesos.AgentInfo_Capability{
	{Type: mesos.AgentInfo_Capability_HIERARCHICAL_ROLE},
	{Type: mesos.AgentInfo_Capability_MULTI_ROLE},
	{Type: mesos.AgentInfo_Capability_RESERVATION_REFINEMENT},
	{Type: mesos.AgentInfo_Capability_RESOURCE_PROVIDER},
	{Type: mesos.AgentInfo_Capability_RESIZE_VOLUME},
	{Type: mesos.AgentInfo_Capability_AGENT_OPERATION_FEEDBACK},
	{Type: mesos.AgentInfo_Capability_AGENT_DRAINING},
	{Type: mesos.AgentInfo_Capability_TASK_RESOURCE_LIMITS},
}

// getAgents answers GET_AGENTS with every registered agent, filled as
// protobuf::master::event::createAgentResponse fills it. Caller holds m.mu.
func (m *master) getAgents() *mesosmaster.Response {
	agents := make([]mesosmaster.Response_GetAgents_Agent, 0, len(m.agentOrder))
	for _, a := range m.agentOrder {
		agents = append(agents, m.agentResponse(a))
	}
	return &mesosmaster.Response{Type: mesosmaster.Response_GET_AGENTS, GetAgents: &mesosmaster.Response_GetAgents{Agents: agents}}
}

// agentResponse describes one agent. agent_info keeps its resources as
// the agent registered them (no role: the master upgrades them to the
// post-refinement format); total, allocated and offered resources are in
// the endpoint format, role "*", the latter two with allocation_info.
func (m *master) agentResponse(a *agent) mesosmaster.Response_GetAgents_Agent {
	info := a.info
	info.Resources = cloneResources(a.info.Resources)
	info.Attributes = append([]mesos.Attribute(nil), a.info.Attributes...)
	pid := "slave(1)@" + a.endpointOrDefault()
	deactivated := a.deactivated
	r := mesosmaster.Response_GetAgents_Agent{
		AgentInfo:          info,
		Active:             !a.deactivated,
		Deactivated:        &deactivated,
		Version:            mesosVersion,
		PID:                &pid,
		RegisteredTime:     &mesos.TimeInfo{Nanoseconds: a.registeredAt.UnixNano()},
		TotalResources:     withUnreservedRole(cloneResources(a.total)),
		AllocatedResources: withUnreservedRole(a.allocated()),
		OfferedResources:   withUnreservedRole(a.offeredAllocated()),
		Capabilities:       append([]mesos.AgentInfo_Capability(nil), agentCapabilities...),
	}
	if a.drain != nil {
		d := *a.drain
		if g := d.Config.MaxGracePeriod; g != nil {
			grace := *g
			d.Config.MaxGracePeriod = &grace
		}
		r.DrainInfo = &d
		// Mesos reports the estimate in whole seconds.
		r.EstimatedDrainStartTime = &mesos.TimeInfo{Nanoseconds: a.drainStarted.Unix() * int64(time.Second)}
	}
	return r
}

// allocated is what the agent's tasks and executors hold, allocated to
// their frameworks' roles.
func (a *agent) allocated() mesos.Resources {
	var sum allocatedSum
	for _, ex := range a.executors {
		sum.add(ex.resources(), ex.fw.role)
	}
	for _, t := range a.tasks {
		sum.add(t.resources(), t.fw.role)
	}
	return sum.resources()
}

// offeredAllocated is what outstanding offers hold, allocated to the
// roles they were offered to.
func (a *agent) offeredAllocated() mesos.Resources {
	var sum allocatedSum
	for _, o := range a.offered {
		sum.add(o.resources, o.fw.role)
	}
	return sum.resources()
}
