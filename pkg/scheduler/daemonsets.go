package scheduler

import (
	"maps"
	"slices"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/constraint"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/offer"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// Daemonsets (the original's BcsDaemonset): one instance on every agent
// that is there, schedulable (not cordoned or drained), not in
// maintenance, and admitted by the daemonset's constraint and taints.
// Each instance is bound to its agent by hostname (TaskGroup.Node): it
// launches there and nowhere else, its restarts too, and drains, drifts
// and reschedules leave it be. An agent that appears or becomes eligible
// gets an instance under the lowest free ID; one that leaves or stops
// being eligible has its instance killed, not moved. The desired count
// is the number of eligible agents, stored in the record's Instances.
//
// The core learns agents from their offers and from the master's list
// (AgentsListed, read by the driver every agent sync): with nothing to
// launch the framework is suppressed and gets no offer, so a new agent is
// first seen in the list; its pending instance revives the offers. Until
// the first list after a restart, an agent the core has not heard of is
// not taken for gone.
//
// Updates are the rollout controller's (rollouts.go), over the instances
// ranked by ID (ranks.go): the controller counts replicas from 0, a
// daemonset's IDs have holes where agents left.

// daemon reports whether a is a daemonset.
func (a *app) daemon() bool { return a.rec.Kind == manifest.KindDaemonset }

// boundToAgent reports whether a's instances stay on their agent: a
// dependency pod goes with its users, a daemonset's instance with its
// agent; drains, drifts and reschedules leave them be.
func (a *app) boundToAgent() bool { return a.followsUsers() || a.daemon() }

// replicas is how many instances a wants: its record's count, or a
// daemonset's eligible agents.
func (a *app) replicas() int {
	if a.daemon() {
		return a.desired
	}
	return a.rec.Instances
}

// AgentsListed: the master's agents (GET_AGENTS), as listed at At.
type AgentsListed struct {
	At     time.Time
	Agents []ListedAgent
}

// ListedAgent is one agent of the master's list.
type ListedAgent struct {
	ID, Hostname string
	Attributes   map[string]constraint.Value
	// Active: registered, connected and neither deactivated nor draining.
	Active bool
}

func (AgentsListed) input() {}

// agentsListed takes the master's list: an agent listed active is there
// (one never offered is learnt from it), one listed otherwise or not
// listed is not — unless it offered or left after the list was read.
func (c *Core) agentsListed(in AgentsListed) {
	c.listed = true
	listed := map[string]bool{}
	for _, l := range in.Agents {
		listed[l.ID] = true
		info := c.agents[l.ID]
		if info == nil {
			info = &agentInfo{id: l.ID, hostname: l.Hostname, ip: l.Hostname, attrs: l.Attributes}
			c.agents[l.ID] = info
		}
		if l.Active {
			info.seen = latest(info.seen, in.At)
		} else {
			info.gone = latest(info.gone, in.At)
		}
	}
	for id, info := range c.agents {
		if !listed[id] {
			info.gone = latest(info.gone, in.At)
		}
	}
	c.agentsChanged()
}

func latest(x, y time.Time) time.Time {
	if y.After(x) {
		return y
	}
	return x
}

// agentsChanged has every daemonset brought to the agents.
func (c *Core) agentsChanged() {
	for _, a := range c.apps {
		if a.daemon() {
			c.replan(a)
		}
	}
}

// daemonAgents returns the agents the instances of a daemonset with
// requirements req belong on: hostname → agent ID.
func (c *Core) daemonAgents(req *offer.Requirements) map[string]string {
	snap := c.snapshotWith(nil)
	snap.Agents = slices.DeleteFunc(snap.Agents, func(x offer.Agent) bool { return !c.agents[x.ID].present() })
	out := map[string]string{}
	for _, id := range c.matcher.Admits(snap, req) {
		out[c.agents[id].hostname] = id
	}
	return out
}

// reconcileDaemon gives every eligible agent one instance of a daemonset
// and kills those of the others. An instance whose agent the core knows
// nothing of yet (after a restart, before its offer or the master's
// list) is kept: only an agent known to be gone or ineligible loses it.
func (c *Core) reconcileDaemon(a *app) {
	if a.tmpl == nil {
		return
	}
	agents := c.daemonAgents(a.tmpl.Req)
	hosts := map[string]bool{}
	for _, info := range c.agents {
		hosts[info.hostname] = true
	}
	bound := map[string]bool{}
	for _, inst := range a.sortedInstances() {
		_, eligible := agents[inst.rec.Node]
		if eligible || !c.listed && !hosts[inst.rec.Node] {
			bound[inst.rec.Node] = true
			continue
		}
		if inst.phase() != PhaseKilling {
			c.logf("daemonset instance killed: its agent is not eligible", "app", a.key(), "instance", inst.rec.Index, "node", inst.rec.Node)
			c.kill(inst, KillIneligible)
		}
	}
	next := 0
	for _, host := range slices.Sorted(maps.Keys(agents)) {
		if bound[host] {
			continue
		}
		for a.instances[next] != nil {
			next++
		}
		inst := &instance{app: a,
			rec: registry.TaskGroup{Namespace: a.rec.Namespace, App: a.rec.Name, Index: next, Node: host, Phase: string(PhasePending)}}
		inst.rec.Version, inst.rec.Template = a.revision(a.target(next))
		a.put(inst)
		c.trackPhase(inst, c.now)
		c.logf("daemonset instance wanted", "app", a.key(), "instance", next, "node", host)
		c.persist(inst)
		bound[host] = true
	}
	a.desired = len(bound)
}
