package devcluster

import (
	"maps"
	"slices"
	"strings"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

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
	registered, completed := m.frameworkLists(everyID)
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
		"frameworks":           m.stateFrameworks(registered),
		"completed_frameworks": m.stateFrameworks(completed),
	}
}

func (a *agent) endpointOrDefault() string {
	if a.endpoint != "" {
		return a.endpoint
	}
	return a.info.Hostname + ":5051"
}

// frameworkLists are the frameworks sel accepts in the order the
// master's views list them: the registered ones by ID, then the completed
// ones as they completed. Caller holds m.mu.
func (m *master) frameworkLists(sel idSelector) (registered, completed []*framework) {
	for _, fw := range m.frameworks {
		if sel.accepts(fw.id) {
			registered = append(registered, fw)
		}
	}
	slices.SortFunc(registered, func(a, b *framework) int { return strings.Compare(a.id, b.id) })
	for _, fw := range m.completedFrameworks {
		if sel.accepts(fw.id) {
			completed = append(completed, fw)
		}
	}
	return registered, completed
}

// stateFrameworks renders frameworks as /master/state lists them.
func (m *master) stateFrameworks(fws []*framework) []any {
	out := make([]any, 0, len(fws))
	for _, fw := range fws {
		out = append(out, m.stateFramework(fw))
	}
	return out
}

// taskLists are a framework's tasks in the order the master's views list
// them: its tasks (live ones and terminal ones not yet acknowledged) and
// its unreachable ones by ID, its completed ones as they completed.
func (fw *framework) taskLists() (tasks, unreachable, completed []*task) {
	byID := func(a, b *task) int { return strings.Compare(a.info.TaskID.Value, b.info.TaskID.Value) }
	tasks = slices.SortedFunc(maps.Values(fw.tasks), byID)
	unreachable = slices.SortedFunc(maps.Values(fw.unreachable), byID)
	return tasks, unreachable, fw.completed
}

func stateTasks(ts []*task) []any {
	out := make([]any, 0, len(ts))
	for _, t := range ts {
		out = append(out, stateTask(t))
	}
	return out
}

func (m *master) stateFramework(fw *framework) map[string]any {
	tasks, unreachable, completed := fw.taskLists()
	var used []mesos.Resource
	for _, t := range tasks {
		if !t.released {
			used = append(used, t.resources()...)
		}
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
		"tasks":             stateTasks(tasks),
		"unreachable_tasks": stateTasks(unreachable),
		"completed_tasks":   stateTasks(completed),
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
		"resources":    stateResources(t.resources()),
		"statuses":     statuses,
	}
	if t.exec != nil {
		m["executor_id"] = t.exec.id
	} else {
		m["executor_id"] = ""
	}
	return m
}
