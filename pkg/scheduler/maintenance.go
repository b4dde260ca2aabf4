package scheduler

import (
	"maps"
	"slices"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// Mesos maintenance: an operator schedules a machine's downtime on the
// master; the agent's offers then carry the window (unavailability), and
// every framework with tasks there gets an inverse offer asking for the
// agent back. An agent in a window not yet over takes no new instance. An
// inverse offer drains the agent like the operator's drain (place before
// kill, one move at a time; stateful applications stay), and is accepted
// once none of our instances is left there, declined (asked again after
// MaintenanceDeclineRefuse) while only stateful ones are.

// maintenanceWindow is an agent's announced maintenance: the window and
// the answer as stored, and the inverse offer outstanding.
type maintenanceWindow struct {
	registry.AgentMaintenance
	agentID, hostname string
	// inverseOffer is the outstanding inverse offer's ID, "" for none.
	inverseOffer string
}

// MaintenanceDeclineRefuse is how long the master waits before it asks
// again for an agent whose inverse offer was declined.
const MaintenanceDeclineRefuse = time.Minute

// The answers shown in registry.AgentMaintenance.
const (
	answerPending  = "pending"
	answerAccepted = "accepted"
	answerDeclined = "declined"
)

// InverseOffersIn: the master asks for agents back (INVERSE_OFFERS).
type InverseOffersIn struct{ InverseOffers []mesos.InverseOffer }

// RescindInverseOffer: an inverse offer is no longer valid (the schedule
// changed or was cancelled).
type RescindInverseOffer struct{ OfferID string }

func (InverseOffersIn) input()     {}
func (RescindInverseOffer) input() {}

// window returns the maintenance window of an agent, a new one if it had
// none.
func (c *Core) window(agentID string) *maintenanceWindow {
	w := c.maintenance[agentID]
	if w == nil {
		w = &maintenanceWindow{agentID: agentID}
		if info := c.agents[agentID]; info != nil {
			w.hostname = info.hostname
		}
		c.maintenance[agentID] = w
	}
	return w
}

// learnUnavailability takes the window an offer announces, or its end.
func (c *Core) learnUnavailability(o mesos.Offer) {
	u := o.GetUnavailability()
	w := c.maintenance[o.AgentID.Value]
	switch {
	case u == nil && w != nil && w.inverseOffer == "":
		delete(c.maintenance, o.AgentID.Value)
		c.windowsChanged[o.AgentID.Value] = o.Hostname
	case u != nil:
		w = c.window(o.AgentID.Value)
		w.hostname = o.Hostname
		c.setWindow(w, *u)
	}
}

// setWindow sets w's times from u, recording a change.
func (c *Core) setWindow(w *maintenanceWindow, u mesos.Unavailability) {
	start := time.Unix(0, u.Start.Nanoseconds).UTC()
	var end time.Time
	if u.Duration != nil {
		end = start.Add(time.Duration(u.Duration.Nanoseconds))
	}
	if start.Equal(w.Start) && end.Equal(w.End) {
		return
	}
	w.Start, w.End = start, end
	c.logf("maintenance announced", "agent", w.agentID, "host", w.hostname, "start", start, "end", end)
	c.windowsChanged[w.agentID] = w.hostname
}

// inverseOffersIn takes the master's inverse offers.
func (c *Core) inverseOffersIn(ios []mesos.InverseOffer) {
	for _, io := range ios {
		if io.AgentID == nil {
			// For a whole machine without an agent: nothing of ours runs there.
			c.call(calls.AcceptInverseOffers(io.OfferID))
			continue
		}
		w := c.window(io.AgentID.Value)
		w.inverseOffer = io.OfferID.Value
		c.setWindow(w, io.Unavailability)
		c.logf("inverse offer", "agent", w.agentID, "host", w.hostname, "inverseOffer", w.inverseOffer)
	}
}

// rescindInverseOffer forgets an inverse offer; the moves it queued that
// have not started are cancelled.
func (c *Core) rescindInverseOffer(id string) {
	for _, agentID := range slices.Sorted(maps.Keys(c.maintenance)) {
		w := c.maintenance[agentID]
		if w.inverseOffer != id {
			continue
		}
		w.inverseOffer, w.Answer = "", ""
		c.windowsChanged[agentID] = w.hostname
		c.cancelMoves(MoveMaintenance, func(inst *instance) bool { return inst.rec.AgentID == agentID })
	}
}

// answerInverseOffers accepts each outstanding inverse offer whose agent
// has none of our instances left, and declines those where only
// instances that stay (stateful) are left. Dependency pods do not count:
// they go with their users.
func (c *Core) answerInverseOffers() {
	defer c.recordWindows()
	if !c.connected || !c.askedBack() {
		return // no question to answer: no pass over the instances
	}
	left, kept := map[string]int{}, map[string]int{}
	for _, a := range c.sortedApps() {
		if a.boundToAgent() {
			continue
		}
		for _, inst := range a.sortedInstances() {
			for _, launch := range []*instance{inst, inst.successor} {
				if launch == nil || !launch.phase().live() || c.maintenance[launch.rec.AgentID] == nil {
					continue
				}
				left[launch.rec.AgentID]++
				if a.tmpl != nil && a.tmpl.Stateful {
					kept[launch.rec.AgentID]++
				}
			}
		}
	}
	for _, agentID := range slices.Sorted(maps.Keys(c.maintenance)) {
		w := c.maintenance[agentID]
		if w.inverseOffer == "" {
			continue
		}
		id := mesos.OfferID{Value: w.inverseOffer}
		answer := answerPending
		switch {
		case left[agentID] == 0:
			answer = answerAccepted
			c.call(calls.AcceptInverseOffers(id))
		case left[agentID] == kept[agentID]:
			answer = answerDeclined
			c.call(calls.DeclineInverseOffers(id).With(calls.RefuseSeconds(MaintenanceDeclineRefuse)))
		}
		if answer != answerPending {
			w.inverseOffer = ""
			c.logf("inverse offer answered", "agent", agentID, "host", w.hostname, "answer", answer, "statefulKept", kept[agentID])
		}
		if answer != w.Answer {
			w.Answer = answer
			c.windowsChanged[agentID] = w.hostname
		}
	}
}

// askedBack reports whether an inverse offer is outstanding.
func (c *Core) askedBack() bool {
	for _, w := range c.maintenance {
		if w.inverseOffer != "" {
			return true
		}
	}
	return false
}

// inMaintenance reports whether an agent is in a maintenance window or
// will be: it takes no new instance.
func (c *Core) inMaintenance(agentID string) bool {
	w := c.maintenance[agentID]
	return w != nil && (w.inverseOffer != "" || w.Current(c.now))
}

// recordWindows stores the windows changed in this step, once each.
func (c *Core) recordWindows() {
	for _, agentID := range slices.Sorted(maps.Keys(c.windowsChanged)) {
		rec := &AgentMaintenance{AgentID: agentID, Hostname: c.windowsChanged[agentID]}
		if w := c.maintenance[agentID]; w != nil {
			window := w.AgentMaintenance
			rec.Window = &window
		}
		c.write(Write{Maintenance: rec})
	}
	clear(c.windowsChanged)
}

// AgentMaintenance is an agent's maintenance window to store; Window nil
// removes it.
type AgentMaintenance struct {
	AgentID, Hostname string
	Window            *registry.AgentMaintenance
}
