package devcluster

import (
	"encoding/json"
	"net/http"
	"sort"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// handleState serves GET /master/state in the shape of the Mesos master's
// endpoint (the fields schedulers and tools commonly read).
func (m *master) handleState(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		writeHTTPError(w, &httpError{http.StatusMethodNotAllowed, "Expecting one of { 'GET', 'HEAD' }, but received '" + r.Method + "'"})
		return
	}
	m.mu.Lock()
	state := m.state()
	m.mu.Unlock()
	w.Header().Set("Content-Type", mediaJSON)
	_ = json.NewEncoder(w).Encode(state)
}

// state is what GET /master/state serves. Caller holds m.mu.
func (m *master) state() map[string]any {
	host, port := splitHostPort(m.addr)
	slaves := make([]any, 0, len(m.agentOrder))
	deactivated := 0
	for _, a := range m.agentOrder {
		slave := map[string]any{
			"id":                   a.id,
			"hostname":             a.info.Hostname,
			"port":                 a.info.GetPort(),
			"pid":                  "slave(1)@" + a.endpointOrDefault(),
			"active":               !a.deactivated,
			"deactivated":          a.deactivated,
			"resources":            stateResources(a.total),
			"unreserved_resources": stateResources(a.total),
			"used_resources":       stateResources(a.used()),
			"offered_resources":    stateResources(a.offeredResources()),
			"attributes":           stateAttributes(a.attributes),
		}
		if a.deactivated {
			deactivated++
		}
		if d := a.drain; d != nil {
			config := map[string]any{"mark_gone": d.Config.GetMarkGone()}
			if g := d.Config.MaxGracePeriod; g != nil {
				config["max_grace_period"] = map[string]any{"nanoseconds": g.Nanoseconds}
			}
			slave["drain_info"] = map[string]any{"state": d.State.String(), "config": config}
			slave["estimated_drain_start_time_seconds"] = a.drainStarted.Unix()
		}
		slaves = append(slaves, slave)
	}
	fwIDs := make([]string, 0, len(m.frameworks))
	for id := range m.frameworks {
		fwIDs = append(fwIDs, id)
	}
	sort.Strings(fwIDs)
	frameworks := make([]any, 0, len(fwIDs))
	for _, id := range fwIDs {
		frameworks = append(frameworks, m.stateFramework(m.frameworks[id]))
	}
	completed := make([]any, 0, len(m.completedFrameworks))
	for _, fw := range m.completedFrameworks {
		completed = append(completed, m.stateFramework(fw))
	}
	return map[string]any{
		"version":              mesosVersion,
		"id":                   m.id,
		"pid":                  "master@" + m.addr,
		"hostname":             host,
		"port":                 port,
		"leader":               "master@" + m.addr,
		"activated_slaves":     len(m.agentOrder) - deactivated,
		"deactivated_slaves":   deactivated,
		"slaves":               slaves,
		"frameworks":           frameworks,
		"completed_frameworks": completed,
	}
}

func (a *agent) endpointOrDefault() string {
	if a.endpoint != "" {
		return a.endpoint
	}
	return a.info.Hostname + ":5051"
}

func (m *master) stateFramework(fw *framework) map[string]any {
	ids := make([]string, 0, len(fw.tasks))
	for id := range fw.tasks {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	tasks := make([]any, 0, len(ids))
	var used []mesos.Resource
	for _, id := range ids {
		t := fw.tasks[id]
		tasks = append(tasks, stateTask(t))
		if !t.released {
			used = append(used, t.resources...)
		}
	}
	unreachable := make([]any, 0, len(fw.unreachable))
	for _, t := range fw.unreachable {
		unreachable = append(unreachable, stateTask(t))
	}
	completed := make([]any, 0, len(fw.completed))
	for _, t := range fw.completed {
		completed = append(completed, stateTask(t))
	}
	var offers []any
	var offered []mesos.Resource
	for _, o := range m.offers {
		if o.fw == fw {
			offers = append(offers, map[string]any{
				"id": o.id, "framework_id": fw.id, "slave_id": o.agent.id,
				"resources": stateResources(o.resources),
			})
			offered = append(offered, o.resources...)
		}
	}
	if offers == nil {
		offers = []any{}
	}
	roles := fw.info.Roles
	if roles == nil {
		roles = []string{fw.role}
	}
	caps := make([]string, 0, len(fw.info.Capabilities))
	for _, cp := range fw.info.Capabilities {
		caps = append(caps, cp.Type.String())
	}
	state := map[string]any{
		"id":                fw.id,
		"name":              fw.info.Name,
		"user":              fw.info.User,
		"role":              fw.role,
		"roles":             roles,
		"active":            fw.stream != nil,
		"connected":         fw.stream != nil,
		"recovered":         false,
		"failover_timeout":  fw.failoverTimeout().Seconds(),
		"checkpoint":        fw.info.GetCheckpoint(),
		"capabilities":      caps,
		"registered_time":   float64(fw.registeredAt.UnixNano()) / 1e9,
		"tasks":             tasks,
		"unreachable_tasks": unreachable,
		"completed_tasks":   completed,
		"offers":            offers,
		"resources":         stateResources(sumResources(used, offered)),
		"used_resources":    stateResources(sumResources(used)),
		"offered_resources": stateResources(sumResources(offered)),
	}
	// As the master's state: the principal only when the framework has one.
	if fw.info.Principal != nil {
		state["principal"] = *fw.info.Principal
	}
	return state
}

func stateTask(t *task) map[string]any {
	statuses := make([]any, 0, len(t.statuses))
	for _, st := range t.statuses {
		statuses = append(statuses, map[string]any{
			"state":     st.GetState().String(),
			"timestamp": st.GetTimestamp(),
		})
	}
	m := map[string]any{
		"id":           t.info.TaskID.Value,
		"name":         t.info.Name,
		"framework_id": t.fw.id,
		"slave_id":     t.agent.id,
		"state":        t.state.String(),
		"resources":    stateResources(t.resources),
		"statuses":     statuses,
	}
	if t.exec != nil {
		m["executor_id"] = t.exec.id
	} else {
		m["executor_id"] = ""
	}
	return m
}
