package devcluster

import (
	"fmt"
	"sort"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
)

// grantOffers makes the offers of an allocation pass, then sends the
// inverse offers, as the Mesos allocator makes both in one cycle.
// Resources granted to a framework or an agent that went away or was
// deactivated in between go back.
func (m *master) grantOffers(batches []offerBatch) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopped {
		return
	}
	var busy map[uint64]bool
	if m.cfg.ExecutorMode == ExecutorProcess && len(batches) > 0 {
		busy = busyHostPorts()
	}
	for _, b := range batches {
		fw := m.frameworks[b.framework.id]
		var offers []mesos.Offer
		for _, g := range b.grants {
			a := m.agents[g.agent.id]
			if fw == nil || fw.filters != b.framework || fw.stream == nil || a == nil || a.share != g.agent || a.deactivated {
				g.agent.recover(g.resources)
				continue
			}
			resources := g.resources
			if len(busy) > 0 {
				// Ports another program holds stay with the agent, for
				// a later offer once they are free.
				var held mesos.Resources
				if resources, held = withoutBusyPorts(resources, busy); len(held) > 0 {
					g.agent.recover(held)
				}
			}
			o := &offer{id: m.newOfferID(), fw: fw, agent: a, resources: resources}
			m.offers[o.id] = o
			a.offered[o.id] = o
			offers = append(offers, m.wireOffer(o))
		}
		if len(offers) > 0 {
			fw.stream.send(&scheduler.Event{Type: scheduler.Event_OFFERS, Offers: &scheduler.Event_Offers{Offers: offers}})
		}
	}
	var connected []*framework
	for _, fw := range m.frameworks {
		if fw.stream != nil {
			connected = append(connected, fw)
		}
	}
	sort.Slice(connected, func(i, j int) bool { return connected[i].id < connected[j].id })
	m.offerInverse(connected, m.cfg.Clock.Now())
}

// newOfferID is the ID of a new offer or inverse offer: the master draws
// both from one sequence. Caller holds m.mu.
func (m *master) newOfferID() string { return fmt.Sprintf("%s-O%d", m.id, m.nextSeq()) }

// wireOffer is the Offer message for o. As a 1.12 master does (see the
// recording), the offer and every resource carry allocation_info, MULTI_ROLE
// framework or not, and every resource its (deprecated) role "*". An
// agent in a maintenance window offers with its unavailability.
func (m *master) wireOffer(o *offer) mesos.Offer {
	role := o.fw.role
	wire := mesos.Offer{
		ID:             mesos.OfferID{Value: o.id},
		FrameworkID:    mesos.FrameworkID{Value: o.fw.id},
		AgentID:        mesos.AgentID{Value: o.agent.id},
		Hostname:       o.agent.info.Hostname,
		Attributes:     append([]mesos.Attribute(nil), o.agent.attributes...),
		AllocationInfo: &mesos.Resource_AllocationInfo{Role: &role},
		Resources:      withUnreservedRole(cloneResources(o.resources).Allocate(role)),
		URL:            o.agent.url(),
		Unavailability: m.unavailabilityOf(o.agent),
	}
	for _, ex := range o.agent.executors {
		if ex.fw == o.fw {
			wire.ExecutorIDs = append(wire.ExecutorIDs, mesos.ExecutorID{Value: ex.id})
		}
	}
	return wire
}

// withUnreservedRole sets the pre-refinement role "*" of unreserved
// resources, which a 1.12 master still writes on offers and on the
// resources of its endpoints.
func withUnreservedRole(rs mesos.Resources) mesos.Resources {
	for i := range rs {
		if rs[i].Role == nil {
			rs[i].Role = strPtr("*")
		}
	}
	return rs
}

func strPtr(s string) *string { return &s }

// offeredResources is what the agent's outstanding offers hold.
func (a *agent) offeredResources() mesos.Resources {
	var lists [][]mesos.Resource
	for _, o := range a.offered {
		lists = append(lists, o.resources)
	}
	return sumResources(lists...)
}

// removeOffer forgets an offer; its resources go back to the allocator.
// Caller holds m.mu.
func (m *master) removeOffer(o *offer) {
	m.useOffer(o)
	o.agent.share.recover(o.resources)
}

// useOffer forgets an accepted offer, whose resources stay allocated
// until its tasks end or the ACCEPT gives back what they do not use.
// Caller holds m.mu.
func (m *master) useOffer(o *offer) {
	delete(m.offers, o.id)
	delete(o.agent.offered, o.id)
}

// rescindOffer removes an offer and tells its framework. Caller holds m.mu.
func (m *master) rescindOffer(o *offer) {
	m.removeOffer(o)
	if o.fw.stream != nil {
		o.fw.stream.send(&scheduler.Event{Type: scheduler.Event_RESCIND, Rescind: &scheduler.Event_Rescind{OfferID: mesos.OfferID{Value: o.id}}})
	}
}

// removeOffersOf drops (or rescinds) every offer and inverse offer of fw.
// Caller holds m.mu.
func (m *master) removeOffersOf(fw *framework, rescind bool) {
	for _, o := range m.offers {
		if o.fw != fw {
			continue
		}
		if rescind {
			m.rescindOffer(o)
		} else {
			m.removeOffer(o)
		}
	}
	for _, io := range m.inverseOffers {
		if io.fw == fw {
			m.removeInverseOffer(io, rescind)
		}
	}
}
