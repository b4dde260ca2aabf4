package api

import (
	"github.com/bcs-mesos/bcs-mesos/pkg/apiv1"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// The API's types are pkg/apiv1's, shared with bcsctl and described by
// GET /openapi.json; these are the names the server's callers know them
// by. The functions below build them from the registry's records.
type (
	AppView           = apiv1.AppView
	AppStatus         = apiv1.AppStatus
	RolloutView       = apiv1.RolloutView
	InstanceCounts    = apiv1.InstanceCounts
	InstanceView      = apiv1.InstanceView
	TaskView          = apiv1.TaskView
	MoveView          = apiv1.MoveView
	ObjectView        = apiv1.ObjectView
	DependsView       = apiv1.DependsView
	DependsStatus     = apiv1.DependsStatus
	DependencyPodView = apiv1.DependencyPodView
	CommandView       = apiv1.CommandView
	CommandResult     = apiv1.CommandResult
	MessageReply      = apiv1.MessageReply
	DriftRequest      = apiv1.DriftRequest
)

// A record whose fields are its wire type's, types alike, converts as it
// is: a field added to one and not the other fails to compile. One whose
// fields differ in a named type (a mode, a state) is copied field by
// field, and TestWireTypesMatchTheirRecords holds the two to one
// encoding.

func pendingView(p *registry.Pending) *apiv1.Pending {
	if p == nil {
		return nil
	}
	v := &apiv1.Pending{Fit: p.Fit, Agents: p.Agents, LastEvaluated: p.LastEvaluated}
	if p.Reasons != nil {
		v.Reasons = make([]apiv1.PendingReason, len(p.Reasons))
		for i, r := range p.Reasons {
			v.Reasons[i] = apiv1.PendingReason(r)
		}
	}
	return v
}

func updateView(u *registry.InstanceUpdate) *apiv1.InstanceUpdate {
	if u == nil {
		return nil
	}
	return &apiv1.InstanceUpdate{Version: u.Version, Template: u.Template, Mode: string(u.Mode), Since: u.Since,
		Sent: u.Sent, Message: u.Message, Error: u.Error}
}

func preDeleteView(p *registry.PreDeleteWait) *apiv1.PreDeleteWait {
	if p == nil {
		return nil
	}
	v := apiv1.PreDeleteWait(*p)
	return &v
}

func dependencyPodView(p *registry.DependencyPod) *apiv1.DependencyPod {
	if p == nil {
		return nil
	}
	v := apiv1.DependencyPod(*p)
	return &v
}

func maintenanceView(m *registry.AgentMaintenance) *apiv1.AgentMaintenance {
	if m == nil {
		return nil
	}
	v := apiv1.AgentMaintenance(*m)
	return &v
}

func remoteChecksView(checks []registry.RemoteCheckResult) []apiv1.RemoteCheckResult {
	if checks == nil {
		return nil
	}
	out := make([]apiv1.RemoteCheckResult, len(checks))
	for i, c := range checks {
		out[i] = apiv1.RemoteCheckResult(c)
	}
	return out
}

func agentMasterView(m *registry.AgentMaster) *apiv1.AgentMaster {
	if m == nil {
		return nil
	}
	return &apiv1.AgentMaster{Active: m.Active, Deactivated: m.Deactivated, Recovered: m.Recovered, Drain: m.Drain,
		Total: apiv1.AgentResources(m.Total)}
}

func engineConfigWire(c registry.EngineConfig) apiv1.EngineConfig {
	return apiv1.EngineConfig{
		ReconcileInterval: apiv1.Duration(c.ReconcileInterval), AgentSyncInterval: apiv1.Duration(c.AgentSyncInterval),
		DependsGCDelay: apiv1.Duration(c.DependsGCDelay), MaxLaunching: c.MaxLaunching,
		FlappingRestarts: c.FlappingRestarts, FlappingWindow: apiv1.Duration(c.FlappingWindow),
	}
}

func viewNotification(n *registry.Notification) apiv1.NotificationView {
	m := n.Notice
	v := apiv1.NotificationView{Notification: &apiv1.Notification{
		Notice: apiv1.Notice{ID: m.ID, Type: string(m.Type), Namespace: m.Namespace, App: m.App, Instance: m.Instance,
			TaskGroupID: m.TaskGroupID, AgentID: m.AgentID, Host: m.Host, State: m.State, Time: m.Time, Message: m.Message},
		Addressed: n.Addressed,
	}, State: string(n.State()), TaskState: n.Notice.State}
	if n.Deliveries != nil {
		v.Deliveries = make([]apiv1.Delivery, len(n.Deliveries))
		for i, d := range n.Deliveries {
			v.Deliveries[i] = apiv1.Delivery{Callback: d.Callback, URL: d.URL, State: string(d.State), Attempts: d.Attempts,
				LastAttempt: d.LastAttempt, NextAttempt: d.NextAttempt, LastStatus: d.LastStatus, LastError: d.LastError,
				DeliveredAt: d.DeliveredAt}
		}
	}
	return v
}
