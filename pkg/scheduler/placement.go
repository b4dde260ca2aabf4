package scheduler

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/bcs-mesos/bcs-mesos/pkg/constraint"
	"github.com/bcs-mesos/bcs-mesos/pkg/mesosoperator"
	"github.com/bcs-mesos/bcs-mesos/pkg/offer"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// pending returns the instances and successors waiting for a launch, in
// their backoff or not.
func (c *Core) pending() []*instance {
	var out []*instance
	for _, a := range c.sortedApps() {
		if a.tmpl == nil || a.rec.State == registry.AppDeleting {
			continue
		}
		for _, inst := range a.sortedInstances() {
			for _, launch := range []*instance{inst, inst.successor} {
				if launch != nil && launch.phase == PhasePending && launch.rec.WaitingFor == "" {
					out = append(out, launch)
				}
			}
		}
	}
	return out
}

// launchable reports whether an instance could be launched now.
func (c *Core) launchable() bool {
	for _, inst := range c.pending() {
		if !inst.rec.NotBefore.After(c.now) {
			return true
		}
	}
	return false
}

// waiting reports whether any instance waits for a launch, now or after
// its backoff.
func (c *Core) waiting() bool {
	for _, a := range c.apps {
		if a.tmpl == nil || a.rec.State == registry.AppDeleting {
			continue
		}
		for _, inst := range a.instances {
			if inst.phase == PhasePending && inst.rec.WaitingFor == "" {
				return true
			}
			if s := inst.successor; s != nil && s.phase == PhasePending && s.rec.WaitingFor == "" {
				return true
			}
		}
	}
	return false
}

// schedule launches the sweeps owed to agents that offer, and places the
// pending instances on what is left of the offers; the matcher defers
// instances still in their restart backoff. Nothing launches while the
// engine does not act.
func (c *Core) schedule() {
	if len(c.offers) == 0 || !c.acting() {
		return
	}
	_, sweepDue := c.sweepsWanted()
	launchable := c.launchable()
	if !launchable && !sweepDue {
		return
	}
	snap := c.snapshot()
	sweeps := c.reserveSweeps(snap)
	defer c.acceptSweeps(sweeps) // those of agents no instance goes to
	if !launchable {
		return
	}
	pending := c.pending()
	byID := map[string]*instance{}
	var groups []offer.TaskGroup
	for _, inst := range pending {
		id := fmt.Sprintf("%s/%d", inst.app.key(), inst.rec.Index)
		if inst.parent != nil {
			id += "/successor"
		}
		byID[id] = inst
		groups = append(groups, offer.TaskGroup{ID: id, Req: inst.template().Req, NotBefore: inst.rec.NotBefore,
			Avoid: inst.avoid, OnlyHost: inst.onlyHost})
	}
	plan := c.matcher.Place(snap, groups, c.now, c.cfg.Seed+c.passes)
	c.passes++
	for _, l := range plan.Launches() {
		c.accept(l, byID, sweeps[l.AgentID])
		delete(sweeps, l.AgentID)
	}
	// An application's message names why its first instance could not be
	// placed; a move's successor only when no instance of its own waits.
	type why struct {
		message string
		move    bool
	}
	unplaced := map[*app]why{}
	for _, moves := range []bool{false, true} {
		for _, u := range plan.Unplaced {
			inst := byID[u.TaskGroupID]
			if _, seen := unplaced[inst.app]; seen || (inst.parent != nil) != moves {
				continue
			}
			w := why{message: u.Rejections.String(), move: moves}
			if moves {
				w.message = fmt.Sprintf("%s of instance %d waits: %s", inst.parent.rec.Move.Reason, inst.rec.Index, w.message)
			}
			unplaced[inst.app] = w
		}
	}
	deferred := map[string]bool{}
	for _, id := range plan.Deferred {
		deferred[id] = true
	}
	for id, inst := range byID {
		if !deferred[id] {
			inst.app.unplaced, inst.app.moveWaits = unplaced[inst.app].message, unplaced[inst.app].move
		}
	}
}

// snapshot is the cluster as the matcher sees it: agents with their
// offers, less the ports orphans may hold, and every live instance.
func (c *Core) snapshot() *offer.Snapshot {
	snap := &offer.Snapshot{}
	byAgent := map[string][]mesos.Offer{}
	for _, o := range c.offers {
		byAgent[o.AgentID.Value] = append(byAgent[o.AgentID.Value], o)
	}
	for _, id := range slices.Sorted(maps.Keys(c.agents)) {
		info := c.agents[id]
		a := offer.Agent{Agent: constraint.Agent{ID: id, Hostname: info.hostname, Attributes: mesosoperator.Attributes(info.attributes)}}
		if s := c.settings[info.hostname]; s != nil {
			a.Taints, a.Unschedulable = s.Taints, !s.Schedulable()
		}
		a.Maintenance = c.inMaintenance(id)
		offers := byAgent[id]
		slices.SortFunc(offers, func(x, y mesos.Offer) int { return cmp.Compare(x.ID.Value, y.ID.Value) })
		for _, o := range offers {
			a.Offers = append(a.Offers, offer.Offer{ID: o.ID.Value, Resources: mesosoperator.Resources(o.Resources)})
		}
		snap.Agents = append(snap.Agents, a)
	}
	for _, a := range c.sortedApps() {
		var labels []string
		if a.tmpl != nil {
			labels = a.tmpl.Req.Labels
		}
		for _, inst := range a.sortedInstances() {
			for _, launch := range []*instance{inst, inst.successor} {
				if launch != nil && launch.phase.live() && launch.rec.AgentID != "" {
					snap.Active = append(snap.Active, offer.Instance{App: a.key(), AgentID: launch.rec.AgentID, Labels: labels})
				}
			}
		}
	}
	c.holdPorts(snap)
	return snap
}
