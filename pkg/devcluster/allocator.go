package devcluster

import (
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// allocator decides which framework is offered what, like Mesos'
// hierarchical allocator without weights, quotas or reservations: it keeps
// what each agent has left to offer — its total less what tasks,
// executors and outstanding offers hold — up to date as that changes, and
// every AllocationInterval, or when triggered, offers what each active
// agent has left to one framework at a time (the frameworks take turns
// being first from pass to pass), skipping suppressed frameworks and live
// refusal filters. The master makes the offers (grant). A pass triggered
// only by resources freed (a task or executor ended, an ACCEPT left some
// unused) visits only the agents that freed them, as Mesos' allocator
// allocates only its allocation candidates: at thousands of agents and
// hundreds of tasks ending a second, passes over the whole fleet were
// the dev master's largest cost.
//
// The master calls it holding its own lock; the allocator's locks are
// taken after it and never held while calling the master. A pass holds
// one agent's lock at a time.
type allocator struct {
	clock    clockwork.Clock
	interval time.Duration
	// grant makes the offers of a pass, one batch per framework in the
	// pass's order; it is called after every pass that had a connected
	// framework, even with none, for the inverse offers.
	grant func([]offerBatch)
	wake  chan struct{}

	mu         sync.Mutex // guards the fields below; never held across a pass
	agents     []*agentShare
	frameworks map[*frameworkFilters]bool
	rotation   int
	// freed are the agents whose free resources grew since the last
	// pass, each once (agentShare.candidate); whole is set when the next
	// pass must visit every agent.
	freed []*agentShare
	whole bool
}

// agentShare is the allocator's record of one agent.
type agentShare struct {
	id    string
	total mesos.Resources // fixes the order of free's resources
	al    *allocator
	// candidate: in al.freed; guarded by al.mu.
	candidate bool

	mu   sync.Mutex // guards the fields below
	free mesos.Resources
	// freeVersion counts the changes of free, from 1: a refusal filter
	// found to contain free once need not be checked again until it
	// changes.
	freeVersion uint64
	// sized is the freeVersion at which worthOffering was found of free:
	// a pass sums an agent's free resources only when they changed, not
	// the whole fleet's every pass (most of them full or filtered).
	sized         uint64
	worthOffering bool
	active        bool // registered and not deactivated
	removed       bool
}

// frameworkFilters is the allocator's record of one framework: whether
// it is connected and wants offers, and which agents' resources it
// refused until when.
type frameworkFilters struct {
	id string

	mu         sync.Mutex // guards the fields below
	connected  bool
	suppressed bool
	refusals   map[string]refusal // by agent ID
}

// refusal is an offer filter: resources of one agent a framework declined
// until a time. It blocks re-offering only while what is available is
// contained in what was refused, like Mesos' RefusedOfferFilter.
type refusal struct {
	until     time.Time
	resources mesos.Resources
	// contains is the agent's freeVersion when resources were last found
	// to contain its free resources; 0 for not yet.
	contains uint64
}

// offerBatch is what a pass offers one framework: each agent's free
// resources, taken from the agent until the offer ends.
type offerBatch struct {
	framework *frameworkFilters
	grants    []grant
}

type grant struct {
	agent     *agentShare
	resources mesos.Resources
}

func newAllocator(clock clockwork.Clock, interval time.Duration, grantOffers func([]offerBatch)) *allocator {
	return &allocator{
		clock: clock, interval: interval, grant: grantOffers,
		wake: make(chan struct{}, 1), frameworks: map[*frameworkFilters]bool{},
	}
}

// run makes a pass over every agent every interval, and one whenever
// triggered, until stop is closed.
func (al *allocator) run(stop <-chan struct{}) {
	t := al.clock.NewTicker(al.interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.Chan():
			al.mu.Lock()
			al.whole = true
			al.mu.Unlock()
		case <-al.wake:
		}
		al.pass()
	}
}

// trigger asks for a pass over every agent soon: a framework
// (re)subscribed or revived, an agent came back or changed.
func (al *allocator) trigger() {
	al.mu.Lock()
	al.whole = true
	al.mu.Unlock()
	al.wakeUp()
}

// triggerFreed asks for a pass over the agents that freed resources
// since the last (agentShare.recover notes them).
func (al *allocator) triggerFreed() { al.wakeUp() }

func (al *allocator) wakeUp() {
	select {
	case al.wake <- struct{}{}:
	default:
	}
}

// triggerAfter triggers a pass once a filter of d expired.
func (al *allocator) triggerAfter(d time.Duration) { al.clock.AfterFunc(d, al.trigger) }

// noteFreed makes s a candidate of the next pass.
func (al *allocator) noteFreed(s *agentShare) {
	al.mu.Lock()
	if !s.candidate {
		s.candidate = true
		al.freed = append(al.freed, s)
	}
	al.mu.Unlock()
}

// passAgents are the agents the pass visits, and no agent is a candidate
// any more; al.mu is held.
func (al *allocator) passAgents() []*agentShare {
	agents := al.freed
	if al.whole {
		agents = slices.Clone(al.agents)
	}
	for _, s := range al.freed {
		s.candidate = false
	}
	al.freed, al.whole = nil, false
	return agents
}

// pass makes one allocation pass.
func (al *allocator) pass() {
	al.mu.Lock()
	var connected, wanting []*frameworkFilters
	for f := range al.frameworks {
		f.mu.Lock()
		if f.connected {
			connected = append(connected, f)
			if !f.suppressed {
				wanting = append(wanting, f)
			}
		}
		f.mu.Unlock()
	}
	if len(connected) == 0 {
		al.mu.Unlock()
		return
	}
	byID := func(a, b *frameworkFilters) int { return strings.Compare(a.id, b.id) }
	slices.SortFunc(wanting, byID)
	if len(wanting) > 0 {
		al.rotation++
		start := al.rotation % len(wanting)
		wanting = append(wanting[start:], wanting[:start]...)
	}
	agents := al.passAgents()
	al.mu.Unlock()

	now := al.clock.Now()
	granted := make(map[*frameworkFilters][]grant, len(wanting))
	for _, s := range agents {
		if f, rs := s.offerTo(wanting, now); f != nil {
			granted[f] = append(granted[f], grant{agent: s, resources: rs})
		}
	}
	batches := make([]offerBatch, 0, len(granted))
	for _, f := range wanting {
		if gs := granted[f]; len(gs) > 0 {
			batches = append(batches, offerBatch{framework: f, grants: gs})
		}
	}
	al.grant(batches)
}

// offerTo takes the agent's free resources for the first framework of
// fws that has not filtered them, if they are worth offering.
func (s *agentShare) offerTo(fws []*frameworkFilters, now time.Time) (*frameworkFilters, mesos.Resources) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sized != s.freeVersion {
		s.sized, s.worthOffering = s.freeVersion, allocatable(s.free)
	}
	if !s.active || !s.worthOffering {
		return nil, nil
	}
	for _, f := range fws {
		if f.refuses(s.id, s.free, s.freeVersion, now) {
			continue
		}
		rs := s.free
		s.free = nil
		s.freeVersion++
		return f, rs
	}
	return nil, nil
}

// refuses reports whether a live refusal filter keeps the agent's free
// resources from f, forgetting an expired one.
func (f *frameworkFilters) refuses(agentID string, free mesos.Resources, freeVersion uint64, now time.Time) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.refusals[agentID]
	switch {
	case !ok:
		return false
	case !now.Before(r.until):
		delete(f.refusals, agentID)
		return false
	case r.contains == freeVersion:
		return true
	case !containsAll(r.resources, free):
		return false
	}
	r.contains = freeVersion
	f.refusals[agentID] = r
	return true
}

// addAgent starts offering a new agent's resources.
func (al *allocator) addAgent(id string, total mesos.Resources) *agentShare {
	s := &agentShare{id: id, total: cloneResources(total), free: cloneResources(total), freeVersion: 1, active: true, al: al}
	al.mu.Lock()
	al.agents = append(al.agents, s)
	al.mu.Unlock()
	return s
}

// removeAgent stops offering an agent; resources recovered later are
// dropped.
func (al *allocator) removeAgent(s *agentShare) {
	al.mu.Lock()
	al.agents = slices.DeleteFunc(al.agents, func(x *agentShare) bool { return x == s })
	al.mu.Unlock()
	s.mu.Lock()
	s.removed, s.active, s.free = true, false, nil
	s.mu.Unlock()
}

// setActive starts or stops offering the agent (REACTIVATE_AGENT,
// DEACTIVATE_AGENT).
func (s *agentShare) setActive(active bool) {
	s.mu.Lock()
	s.active = active && !s.removed
	s.mu.Unlock()
}

// recover gives resources back to the agent: an offer ended, a task or
// executor ended, or an ACCEPT left some unused.
func (s *agentShare) recover(rs mesos.Resources) {
	if len(rs) == 0 {
		return
	}
	s.mu.Lock()
	if s.removed {
		s.mu.Unlock()
		return
	}
	addResources(&s.free, sumResources(rs)...)
	s.free = inOrderOf(s.free, s.total)
	s.freeVersion++
	s.mu.Unlock()
	s.al.noteFreed(s)
}

// take holds resources of the agent that are in use without an offer:
// those of the tasks and executors it recovered.
func (s *agentShare) take(rs mesos.Resources) {
	if len(rs) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.free.Subtract(rs...)
	s.freeVersion++
}

// inOrderOf orders rs' resources by their names' order in total, as a
// subtraction from total leaves them.
func inOrderOf(rs, total mesos.Resources) mesos.Resources {
	rank := func(r mesos.Resource) int {
		return slices.IndexFunc(total, func(t mesos.Resource) bool { return t.Name == r.Name })
	}
	slices.SortStableFunc(rs, func(a, b mesos.Resource) int { return rank(a) - rank(b) })
	return rs
}

// addFramework starts tracking a framework, disconnected.
func (al *allocator) addFramework(id string) *frameworkFilters {
	f := &frameworkFilters{id: id, refusals: map[string]refusal{}}
	al.mu.Lock()
	al.frameworks[f] = true
	al.mu.Unlock()
	return f
}

// removeFramework forgets a framework and its filters.
func (al *allocator) removeFramework(f *frameworkFilters) {
	al.mu.Lock()
	delete(al.frameworks, f)
	al.mu.Unlock()
	f.setConnected(false, false)
}

// setConnected marks the framework (dis)connected; a subscription says
// whether it starts suppressed. Its filters stay.
func (f *frameworkFilters) setConnected(connected, suppressed bool) {
	f.mu.Lock()
	f.connected, f.suppressed = connected, suppressed
	f.mu.Unlock()
}

// suppress stops offers to the framework (SUPPRESS).
func (f *frameworkFilters) suppress() {
	f.mu.Lock()
	f.suppressed = true
	f.mu.Unlock()
}

// revive resumes offers and clears every refusal filter (REVIVE).
func (f *frameworkFilters) revive() {
	f.mu.Lock()
	f.suppressed = false
	f.refusals = map[string]refusal{}
	f.mu.Unlock()
}

// refuse installs a refusal filter of the agent's resources rs until.
func (f *frameworkFilters) refuse(agentID string, rs mesos.Resources, until time.Time) {
	f.mu.Lock()
	f.refusals[agentID] = refusal{until: until, resources: cloneResources(rs)}
	f.mu.Unlock()
}
