package scheduler

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/constraint"
	"github.com/bcs-mesos/bcs-mesos/pkg/mesosoperator"
	"github.com/bcs-mesos/bcs-mesos/pkg/offer"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// pending returns the instances and successors waiting for a launch in
// launch order (pendingOrder): the first room of those that may launch now,
// and those in their restart backoff among them; held tells that more
// wait behind them. The order is sorted again only after launches joined
// it, and a pass reads no further than room, so that a pass costs what it
// can launch, not the whole set, while the launch budget is full.
func (c *Core) pending(room int) (out []*instance, held bool) {
	if c.pendingJoined {
		c.pendingOrder = slices.AppendSeq(c.pendingOrder[:0], maps.Keys(c.pendingSet))
		slices.SortFunc(c.pendingOrder, launchOrder)
		c.pendingJoined = false
	}
	kept, read := 0, 0
	for ; read < len(c.pendingOrder); read++ {
		inst := c.pendingOrder[read]
		waits := c.waits(inst)
		if _, ok := c.pendingSet[inst]; !ok {
			continue // launched or given up: it leaves the order
		}
		c.pendingOrder[kept] = inst
		kept++
		if !waits {
			continue
		}
		if !inst.rec.NotBefore.After(c.now) {
			if room <= 0 {
				held = true
				read++ // kept already
				break
			}
			room--
		}
		out = append(out, inst)
	}
	kept += copy(c.pendingOrder[kept:], c.pendingOrder[read:])
	clear(c.pendingOrder[kept:])
	c.pendingOrder = c.pendingOrder[:kept]
	if cap(c.pendingOrder) >= 1024 && kept < cap(c.pendingOrder)/8 {
		c.pendingOrder = slices.Clone(c.pendingOrder) // as shrunk does for the maps
	}
	return out, held
}

// launchOrder orders launches by application and index, an instance
// before its successor.
func launchOrder(x, y *instance) int {
	successor := func(inst *instance) int {
		if inst.parent != nil {
			return 1
		}
		return 0
	}
	return cmp.Or(cmp.Compare(x.app.key(), y.app.key()), cmp.Compare(x.rec.Index, y.rec.Index),
		cmp.Compare(successor(x), successor(y)))
}

// waits reports whether a launch in pendingSet waits for a place; one
// given up since (its application or itself) leaves the set.
func (c *Core) waits(inst *instance) bool {
	a := inst.app
	if c.apps[a.key()] != a || !c.attached(inst) {
		delete(c.pendingSet, inst)
		return false
	}
	return inst.phase() == PhasePending && inst.rec.WaitingFor == "" && a.tmpl != nil && a.rec.State != registry.AppDeleting
}

// launchable reports whether an instance could be launched now.
func (c *Core) launchable() bool {
	for inst := range c.pendingSet {
		if c.waits(inst) && !inst.rec.NotBefore.After(c.now) {
			return true
		}
	}
	return false
}

// waiting reports whether any instance waits for a launch, now or after
// its backoff.
func (c *Core) waiting() bool {
	for inst := range c.pendingSet {
		if c.waits(inst) {
			return true
		}
	}
	return false
}

// underWay counts the launches sent and not yet running, dropping from
// launching those given up since.
func (c *Core) underWay() int {
	for inst := range c.launching {
		if inst.phase() != PhaseLaunched || c.apps[inst.app.key()] != inst.app || !c.attached(inst) {
			delete(c.launching, inst)
		}
	}
	return len(c.launching)
}

// schedule launches the sweeps owed to agents that offer, places the
// pending instances on what is left of the offers, and says why the others
// wait (explainPending); the matcher defers instances still in their
// restart backoff. Nothing launches while the engine does not act.
func (c *Core) schedule() {
	if len(c.offers) == 0 || !c.acting() {
		return
	}
	_, sweepDue := c.sweepsWanted()
	var launches []*instance
	if c.launchable() {
		// The launch budget: while maxLaunching launches and updates are
		// under way, no launch more; launchesHeld tells adjustOffers to ask for
		// offers again once half of it is free. Launches still in their
		// restart backoff do not count.
		var held bool
		launches, held = c.pending(c.maxLaunching() - c.underWay() - len(c.updatesSent))
		c.launchesHeld = c.launchesHeld || held
		if !slices.ContainsFunc(launches, func(inst *instance) bool { return !inst.rec.NotBefore.After(c.now) }) {
			launches = nil // all in their backoff
		}
	}
	if len(launches) == 0 && !sweepDue {
		return // nothing can launch: no snapshot of the fleet is made
	}
	snap := c.snapshot()
	sweeps := c.reserveSweeps(snap)
	var considered []*instance
	if len(launches) > 0 {
		groups, byID := taskGroups(launches)
		plan := c.matcher.Place(snap, groups, c.now, c.cfg.Seed+c.passes)
		c.passes++
		for _, l := range plan.Launches() {
			c.accept(l, byID, sweeps[l.AgentID])
			delete(sweeps, l.AgentID)
		}
		deferred := map[string]bool{}
		for _, id := range plan.Deferred {
			deferred[id] = true
		}
		for _, g := range groups {
			if !deferred[g.ID] {
				considered = append(considered, byID[g.ID])
			}
		}
	}
	c.acceptSweeps(sweeps) // those of agents no instance goes to
	c.explainPending(considered)
}

// taskGroups are launches as the matcher's task groups, in order, and the
// launches by task group ID.
func taskGroups(launches []*instance) ([]offer.TaskGroup, map[string]*instance) {
	groups := make([]offer.TaskGroup, 0, len(launches))
	byID := make(map[string]*instance, len(launches))
	for _, inst := range launches {
		id := fmt.Sprintf("%s/%d", inst.app.key(), inst.rec.Index)
		if inst.parent != nil {
			id += "/successor"
		}
		byID[id] = inst
		avoid, onlyHost := inst.moveTarget()
		groups = append(groups, offer.TaskGroup{ID: id, Req: inst.template().Req, NotBefore: inst.rec.NotBefore,
			Avoid: avoid, OnlyHost: cmp.Or(onlyHost, inst.rec.Node), Prefer: inst.rec.Prefer})
	}
	return groups, byID
}

// explainPending says why the launches a pass considered and could not
// place still wait: the matcher's verdict over every known agent, each
// with what it last offered less what was launched there since (so an
// agent without an offer in hand counts under its real reason), for the
// instances' records — stored only when it changed — and for their
// application's message, which names the first launch that fits nowhere
// (a move's successor only when no instance of its own waits). A launch
// explained within explainAgain whose verdict found agents it fits only
// waits for their offers: it is not explained again at every pass, which
// at a fleet's rollout cost a second look at the whole fleet per offer.
func (c *Core) explainPending(considered []*instance) {
	var waiting []*instance
	for _, inst := range considered {
		if inst.phase() == PhasePending && inst.rec.WaitingFor == "" && c.explainDue(inst) {
			waiting = append(waiting, inst)
		}
	}
	if len(waiting) == 0 {
		return
	}
	verdicts := map[*instance]*offer.Rejections{}
	groups, byID := taskGroups(waiting)
	// A fixed seed: the same cluster gives the same verdicts.
	plan := c.matcher.Explain(c.knownSnapshot(), groups, c.now, c.cfg.Seed)
	for _, pl := range plan.Placements {
		verdicts[byID[pl.TaskGroupID]] = pl.Fits
	}
	for _, u := range plan.Unplaced {
		verdicts[byID[u.TaskGroupID]] = u.Rejections
	}
	type why struct {
		message string
		move    bool
		by      *instance
	}
	unplaced := map[*app]why{}
	for _, moves := range []bool{false, true} {
		for _, inst := range waiting {
			r := verdicts[inst]
			if _, seen := unplaced[inst.app]; seen || r == nil || r.Fit > 0 || (inst.parent != nil) != moves {
				continue
			}
			w := why{message: r.String(), move: moves, by: inst}
			if moves {
				w.message = fmt.Sprintf("%s of instance %d waits: %s", inst.parent.rec.Move.Reason, inst.rec.Index, w.message)
			}
			unplaced[inst.app] = w
		}
	}
	for _, inst := range waiting {
		w := unplaced[inst.app]
		inst.app.unplaced, inst.app.moveWaits, inst.app.unplacedBy = w.message, w.move, w.by
		c.touched[inst.app] = true
	}
	for _, inst := range waiting {
		if r := verdicts[inst]; r != nil {
			c.setPending(inst, pendingOf(r, c.now))
		}
	}
}

// explainAgain is how long the verdict of a launch that fits some agent
// stands before a pass explains the launch again.
const explainAgain = 5 * time.Second

// explainDue reports whether a pass that leaves the launch waiting
// explains it: one without a verdict or fitting nowhere (its
// application's status says so at once), or one whose verdict is older
// than explainAgain.
func (c *Core) explainDue(inst *instance) bool {
	p := inst.rec.Pending
	return p == nil || p.Fit == 0 || c.now.Sub(p.LastEvaluated) >= explainAgain
}

// unplacedNow is why a's launch fits nowhere, as the last placement pass
// said, while that launch still waits; "" once it is gone (scaled down,
// its move given up) or no longer waits for a place.
func (c *Core) unplacedNow(a *app) string {
	by := a.unplacedBy
	if by == nil || !c.attached(by) || by.phase() != PhasePending || by.rec.WaitingFor != "" {
		return ""
	}
	return a.unplaced
}

// setPending records a launch's new verdict; the same verdict again is
// not stored (an offer round must not write every waiting instance).
func (c *Core) setPending(inst *instance, p *registry.Pending) {
	if inst.rec.Pending.Same(p) {
		return
	}
	inst.rec.Pending = p
	c.persist(inst)
}

// pendingOf is the stored form of the matcher's verdict.
func pendingOf(r *offer.Rejections, now time.Time) *registry.Pending {
	p := &registry.Pending{Fit: r.Fit, Agents: r.Agents, Reasons: make([]registry.PendingReason, len(r.Reasons)), LastEvaluated: now}
	for i, rc := range r.Reasons {
		p.Reasons[i] = registry.PendingReason{Reason: rc.Reason, Count: rc.Agents}
	}
	return p
}

// snapshot is the cluster as the matcher sees it: agents with their
// outstanding offers, less the ports orphans may hold, and every live
// instance.
func (c *Core) snapshot() *offer.Snapshot {
	byAgent := map[string][]offer.Offer{}
	for _, id := range slices.Sorted(maps.Keys(c.offers)) {
		o := c.offers[id]
		byAgent[o.AgentID.Value] = append(byAgent[o.AgentID.Value], offer.Offer{ID: id, Resources: mesosoperator.Resources(o.Resources)})
	}
	return c.snapshotWith(byAgent)
}

// knownSnapshot is the cluster as the scheduler knows it, offers in hand
// or not: every agent with what it last offered less what was launched
// there since, as one offer ("known/AGENT"; none for an agent that left
// and has not offered since), less the ports orphans may hold, and every
// live instance. It explains why launches wait and what a
// plan would do; nothing is launched on it.
func (c *Core) knownSnapshot() *offer.Snapshot {
	byAgent := make(map[string][]offer.Offer, len(c.agents))
	for id, info := range c.agents {
		if info.known {
			byAgent[id] = []offer.Offer{{ID: "known/" + id, Resources: info.free}}
		}
	}
	return c.snapshotWith(byAgent)
}

// snapshotWith is the cluster with the offers of each agent.
func (c *Core) snapshotWith(offers map[string][]offer.Offer) *offer.Snapshot {
	// Sized as the last: a fleet's snapshot grown by appends was most of
	// what it cost.
	snap := &offer.Snapshot{Agents: make([]offer.Agent, 0, len(c.agents)), Active: make([]offer.Instance, 0, c.activeSeen)}
	for _, id := range slices.Sorted(maps.Keys(c.agents)) {
		info := c.agents[id]
		a := offer.Agent{Agent: constraint.Agent{ID: id, Hostname: info.hostname, Attributes: info.attrs}}
		if s := c.settings[info.hostname]; s != nil {
			a.Taints, a.Unschedulable = s.Taints, !s.Schedulable()
		}
		a.Maintenance = c.inMaintenance(id)
		a.Offers = offers[id]
		snap.Agents = append(snap.Agents, a)
	}
	for _, a := range c.sortedApps() {
		var labels []string
		if a.tmpl != nil {
			labels = a.tmpl.Req.Labels
		}
		for _, inst := range a.sortedInstances() {
			for _, launch := range []*instance{inst, inst.successor} {
				if launch != nil && launch.phase().live() && launch.rec.AgentID != "" {
					snap.Active = append(snap.Active, offer.Instance{App: a.key(), AgentID: launch.rec.AgentID, Labels: labels})
				}
			}
		}
	}
	c.activeSeen = len(snap.Active)
	c.holdPorts(snap)
	return snap
}
