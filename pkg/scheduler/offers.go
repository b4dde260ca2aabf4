package scheduler

import (
	"cmp"
	"maps"
	"net"
	"slices"
	"strconv"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/bcs-mesos/bcs-mesos/pkg/constraint"
	"github.com/bcs-mesos/bcs-mesos/pkg/mesosoperator"
	"github.com/bcs-mesos/bcs-mesos/pkg/offer"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// offersIn keeps new offers; what an agent offers is what it has free.
func (c *Core) offersIn(offers []mesos.Offer) {
	free := map[string]offer.Resources{}
	for _, o := range offers {
		if info := c.agents[o.AgentID.Value]; info == nil || !info.present() || info.hostname != o.Hostname {
			c.agentsChanged() // an agent back or new: daemonsets want it
		}
		c.learnAgent(o)
		c.learnUnavailability(o)
		// An offer lists every executor its agent runs, which nothing
		// here reads: at 20 executors an agent they are most of a held
		// offer, and 5,000 agents' offers are held at once.
		o.ExecutorIDs = nil
		c.offers[o.ID.Value] = o
		free[o.AgentID.Value] = free[o.AgentID.Value].Plus(mesosoperator.Resources(o.Resources))
	}
	for id, r := range free {
		c.agents[id].free, c.agents[id].known = r, true
	}
}

// launched takes what LAUNCH_GROUP operations use (their tasks' and
// executor's resources) from their agent's free resources.
func (c *Core) launched(agentID string, ops []mesos.Offer_Operation) {
	info := c.agents[agentID]
	if info == nil {
		return
	}
	for _, op := range ops {
		lg := op.GetLaunchGroup()
		if lg == nil {
			continue
		}
		used := mesosoperator.Resources(lg.GetExecutor().Resources)
		for _, t := range lg.GetTaskGroup().Tasks {
			used = used.Plus(mesosoperator.Resources(t.Resources))
		}
		info.free = info.free.Minus(used)
	}
}

// learnAgent remembers what an offer tells about its agent, and records
// an agent that is new or changed, or last recorded AgentSeenEvery ago
// (its record's time is when it was last seen).
func (c *Core) learnAgent(o mesos.Offer) {
	info := &agentInfo{id: o.AgentID.Value, hostname: o.Hostname, ip: o.Hostname, attributes: o.Attributes,
		attrs: mesosoperator.Attributes(o.Attributes), recorded: c.now, seen: c.now}
	if u := o.GetURL(); u != nil {
		if u.Address.GetIP() != "" {
			info.ip = u.Address.GetIP()
		}
		if u.Address.Port > 0 {
			info.endpoint = net.JoinHostPort(cmp.Or(u.Address.GetIP(), u.Address.GetHostname(), o.Hostname), strconv.Itoa(int(u.Address.Port)))
		}
	}
	old := c.agents[info.id]
	if old != nil {
		info.endpoint = cmp.Or(info.endpoint, old.endpoint)
		info.gone = old.gone
		// The strings an agent's instances keep (launch) are the agent's
		// own, not each offer's copy: one per agent, not per instance.
		info.id = old.id
		if info.hostname == old.hostname {
			info.hostname = old.hostname
		}
		if info.ip == old.ip {
			info.ip = old.ip
		}
	}
	c.agents[info.id] = info
	if old != nil && old.hostname == info.hostname && old.endpoint == info.endpoint && slices.EqualFunc(old.attributes, info.attributes,
		func(x, y mesos.Attribute) bool { return x.Equal(&y) }) && c.now.Sub(old.recorded) < AgentSeenEvery {
		info.recorded = old.recorded
		return
	}
	c.write(Write{Agent: &registry.AgentSeen{ID: info.id, Hostname: info.hostname, Endpoint: info.endpoint, Attributes: shownAttributes(info.attrs)}})
}

// shownAttributes are an agent's attributes as its record shows them.
func shownAttributes(attrs map[string]constraint.Value) map[string]string {
	out := make(map[string]string, len(attrs))
	for name, v := range attrs {
		out[name] = v.String()
	}
	return out
}

// AgentSeenEvery is how often an agent that keeps offering has its record
// written again, to show when it was last seen.
const AgentSeenEvery = time.Minute

// adjustOffers keeps no offer it has no use for and tells the master
// whether we want offers at all: SUPPRESS with nothing to launch, REVIVE
// when something waits.
func (c *Core) adjustOffers() {
	if !c.connected {
		return
	}
	c.schedule()
	if len(c.offers) > 0 {
		ids := slices.Sorted(maps.Keys(c.offers))
		offerIDs := make([]mesos.OfferID, len(ids))
		for i, id := range ids {
			offerIDs[i] = mesos.OfferID{Value: id}
		}
		clear(c.offers)
		c.call(calls.Decline(offerIDs...).With(calls.RefuseSeconds(c.refuse())))
	}
	sweepWaiting, sweepDue := c.sweepsWanted()
	waiting := c.acting() && (c.waiting() || sweepWaiting)
	// Launches held back by the launch budget (schedule): once half of
	// it is free, the agents declined meanwhile are offered again at once
	// (REVIVE clears the refusal filters).
	budgetFreed := c.launchesHeld && c.underWay()+len(c.updatesSent) <= c.maxLaunching()/2
	if budgetFreed || !waiting {
		c.launchesHeld = false
	}
	switch {
	case waiting && (budgetFreed || c.suppressed && (c.launchable() || sweepDue)):
		c.call(calls.Revive())
		c.suppressed = false
	case !waiting && !c.suppressed:
		c.call(calls.Suppress())
		c.suppressed = true
	}
}

func (c *Core) refuse() time.Duration {
	return time.Duration(c.cfg.RefuseSeconds * float64(time.Second))
}
