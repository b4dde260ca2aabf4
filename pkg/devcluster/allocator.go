package devcluster

import (
	"fmt"
	"sort"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
)

// allocationLoop runs an offer round every AllocationInterval and whenever
// something frees resources or a framework (re)subscribes or revives.
func (c *Cluster) allocationLoop() {
	defer c.wg.Done()
	t := c.cfg.Clock.NewTicker(c.cfg.AllocationInterval.D())
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.Chan():
		case <-c.allocNow:
		}
		c.mu.Lock()
		if !c.stopped {
			c.allocate()
		}
		c.mu.Unlock()
	}
}

// allocate makes one offer round: each active agent's unused, unoffered
// resources go to one framework at a time (frameworks take turns first
// from round to round), skipping suppressed frameworks and live refusal
// filters; then inverse offers go out for agents in a maintenance window,
// as the Mesos allocator makes them in the same cycle. Caller holds c.mu.
func (c *Cluster) allocate() {
	var connected []*framework
	for _, fw := range c.frameworks {
		if fw.stream != nil {
			connected = append(connected, fw)
		}
	}
	if len(connected) == 0 {
		return
	}
	sort.Slice(connected, func(i, j int) bool { return connected[i].id < connected[j].id })
	now := c.cfg.Clock.Now()
	c.offerResources(connected, now)
	c.offerInverse(connected, now)
}

// offerResources makes the offers of one round. Caller holds c.mu.
func (c *Cluster) offerResources(connected []*framework, now time.Time) {
	var fws []*framework
	for _, fw := range connected {
		if !fw.suppressed {
			fws = append(fws, fw)
		}
	}
	if len(fws) == 0 {
		return
	}
	c.rotation++
	start := c.rotation % len(fws)
	fws = append(fws[start:], fws[:start]...)

	batches := make(map[*framework][]mesos.Offer, len(fws))
	for _, a := range c.agentOrder {
		if a.removed || a.deactivated {
			continue
		}
		avail := a.available()
		if !allocatable(avail) {
			continue
		}
		for _, fw := range fws {
			if r, ok := fw.refusals[a.id]; ok {
				if now.Before(r.until) && containsAll(r.resources, avail) {
					continue
				}
				if !now.Before(r.until) {
					delete(fw.refusals, a.id)
				}
			}
			o := &offer{
				id:        c.newOfferID(),
				fw:        fw,
				agent:     a,
				resources: avail,
			}
			c.offers[o.id] = o
			a.offered[o.id] = o
			batches[fw] = append(batches[fw], c.wireOffer(o))
			break
		}
	}
	for _, fw := range fws {
		if offers := batches[fw]; len(offers) > 0 {
			fw.stream.send(&scheduler.Event{Type: scheduler.Event_OFFERS, Offers: &scheduler.Event_Offers{Offers: offers}})
		}
	}
}

// newOfferID is the ID of a new offer or inverse offer: the master draws
// both from one sequence. Caller holds c.mu.
func (c *Cluster) newOfferID() string { return fmt.Sprintf("%s-O%d", c.id, c.nextSeq()) }

// wireOffer is the Offer message for o. As a 1.12 master does (see the
// recording), the offer and every resource carry allocation_info, MULTI_ROLE
// framework or not, and every resource its (deprecated) role "*". An
// agent in a maintenance window offers with its unavailability.
func (c *Cluster) wireOffer(o *offer) mesos.Offer {
	role := o.fw.role
	m := mesos.Offer{
		ID:             mesos.OfferID{Value: o.id},
		FrameworkID:    mesos.FrameworkID{Value: o.fw.id},
		AgentID:        mesos.AgentID{Value: o.agent.id},
		Hostname:       o.agent.info.Hostname,
		Attributes:     append([]mesos.Attribute(nil), o.agent.attributes...),
		AllocationInfo: &mesos.Resource_AllocationInfo{Role: &role},
		Resources:      withUnreservedRole(o.resources.Clone().Allocate(role)),
		URL:            o.agent.url(),
		Unavailability: c.unavailabilityOf(o.agent),
	}
	for _, ex := range o.agent.executors {
		if ex.fw == o.fw {
			m.ExecutorIDs = append(m.ExecutorIDs, mesos.ExecutorID{Value: ex.id})
		}
	}
	return m
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

// url is where the agent's own API lives, as offers name it; simulated
// agents have none.
func (a *agent) url() *mesos.URL {
	if a.endpoint == "" {
		return nil
	}
	host, port := splitHostPort(a.endpoint)
	return &mesos.URL{Scheme: "http", Address: mesos.Address{Hostname: &a.info.Hostname, IP: &host, Port: int32(port)}, Path: strPtr("/slave(1)")}
}

func strPtr(s string) *string { return &s }

// removeOffer forgets an offer (its resources become available again).
// Caller holds c.mu.
func (c *Cluster) removeOffer(o *offer) {
	delete(c.offers, o.id)
	delete(o.agent.offered, o.id)
}

// rescindOffer removes an offer and tells its framework. Caller holds c.mu.
func (c *Cluster) rescindOffer(o *offer) {
	c.removeOffer(o)
	if o.fw.stream != nil {
		o.fw.stream.send(&scheduler.Event{Type: scheduler.Event_RESCIND, Rescind: &scheduler.Event_Rescind{OfferID: mesos.OfferID{Value: o.id}}})
	}
}

// removeOffersOf drops (or rescinds) every offer and inverse offer of fw.
// Caller holds c.mu.
func (c *Cluster) removeOffersOf(fw *framework, rescind bool) {
	for _, o := range c.offers {
		if o.fw != fw {
			continue
		}
		if rescind {
			c.rescindOffer(o)
		} else {
			c.removeOffer(o)
		}
	}
	for _, io := range c.inverseOffers {
		if io.fw == fw {
			c.removeInverseOffer(io, rescind)
		}
	}
}
