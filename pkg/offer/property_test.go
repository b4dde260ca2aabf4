package offer_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/constraint"
	"github.com/bcs-mesos/bcs-mesos/pkg/constraint/constrainttest"
	"github.com/bcs-mesos/bcs-mesos/pkg/offer"
	"github.com/bcs-mesos/bcs-mesos/pkg/offer/offertest"
)

// reference is a slow, obviously correct model of a pass: it recomputes
// everything from the snapshot and the placements replayed so far, scanning
// every agent, instance and port each time.
type reference struct {
	snap     *offer.Snapshot
	executor offer.Resources
	placed   []refPlacement
}

type refPlacement struct {
	agentID string
	req     *offer.Requirements
	ports   []uint32
}

func (r *reference) agent(id string) *offer.Agent {
	for i := range r.snap.Agents {
		if r.snap.Agents[i].ID == id {
			return &r.snap.Agents[i]
		}
	}
	return nil
}

// free returns what is left of an agent's offers in thousandths, as Mesos
// keeps scalars.
func (r *reference) free(a *offer.Agent) (cpus, mem, disk int64) {
	m := func(v float64) int64 { return int64(math.Round(v * 1000)) }
	for _, o := range a.Offers {
		cpus, mem, disk = cpus+m(o.Resources.CPUs), mem+m(o.Resources.Mem), disk+m(o.Resources.Disk)
	}
	for _, p := range r.placed {
		if p.agentID == a.ID {
			cpus -= m(p.req.Resources.CPUs) + m(r.executor.CPUs)
			mem -= m(p.req.Resources.Mem) + m(r.executor.Mem)
			disk -= m(p.req.Resources.Disk) + m(r.executor.Disk)
		}
	}
	return cpus, mem, disk
}

func (r *reference) portFree(a *offer.Agent, port uint32) bool {
	offered := false
	for _, o := range a.Offers {
		for _, pr := range o.Resources.Ports {
			if pr.Begin <= port && port <= pr.End {
				offered = true
			}
		}
	}
	for _, p := range r.placed {
		for _, used := range p.ports {
			if p.agentID == a.ID && used == port {
				return false
			}
		}
	}
	return offered
}

func (r *reference) freePorts(a *offer.Agent) int {
	n := 0
	for port := uint32(30000); port < 33000; port++ {
		if r.portFree(a, port) {
			n++
		}
	}
	return n
}

// state builds the constraint state of app from scratch.
func (r *reference) state(app string) *constrainttest.State {
	var agents []*constraint.Agent
	for i := range r.snap.Agents {
		agents = append(agents, &r.snap.Agents[i].Agent)
	}
	s := constrainttest.NewState(agents...)
	for _, inst := range r.snap.Active {
		if r.agent(inst.AgentID) == nil {
			continue
		}
		if inst.App == app {
			s.Place(inst.AgentID)
		}
		for _, l := range inst.Labels {
			s.RunLabel(inst.AgentID, l)
		}
	}
	for _, p := range r.placed {
		if p.req.App == app {
			s.Place(p.agentID)
		}
		for _, l := range p.req.Labels {
			s.RunLabel(p.agentID, l)
		}
	}
	return s
}

// reason is why a cannot take an instance of req now, "" if it can, checked
// in the documented order.
func (r *reference) reason(a *offer.Agent, req *offer.Requirements) string {
	if len(a.Offers) == 0 {
		return offer.ReasonNoOffer
	}
	cpus, mem, disk := r.free(a)
	m := func(v float64) int64 { return int64(math.Round(v * 1000)) }
	switch {
	case cpus < m(req.Resources.CPUs)+m(r.executor.CPUs):
		return offer.ReasonCPUs
	case mem < m(req.Resources.Mem)+m(r.executor.Mem):
		return offer.ReasonMem
	case disk < m(req.Resources.Disk)+m(r.executor.Disk):
		return offer.ReasonDisk
	}
	random := 0
	for i, pr := range req.Ports {
		if pr.HostPort == 0 {
			random++
			continue
		}
		if !r.portFree(a, pr.HostPort) {
			return offer.ReasonPorts
		}
		for _, earlier := range req.Ports[:i] {
			if earlier.HostPort == pr.HostPort {
				return offer.ReasonPorts
			}
		}
	}
	if random > 0 && r.freePorts(a)-(len(req.Ports)-random) < random {
		return offer.ReasonPorts
	}
	c := req.Constraint
	if c == nil {
		c = constrainttest.New().Build()
	}
	if ok, _ := c.Tolerates(a.Taints); !ok {
		return offer.ReasonTaint
	}
	if ok, clause := r.state(req.App).Fits(c, a.ID); !ok {
		return c.Reason(clause)
	}
	return ""
}

// instances counts app's instances on a: active ones and those placed.
func (r *reference) instances(a *offer.Agent, app string) int {
	n := 0
	for _, inst := range r.snap.Active {
		if inst.App == app && inst.AgentID == a.ID {
			n++
		}
	}
	for _, p := range r.placed {
		if p.req.App == app && p.agentID == a.ID {
			n++
		}
	}
	return n
}

func (r *reference) share(a *offer.Agent, req *offer.Requirements) float64 {
	cpus, mem, _ := r.free(a)
	m := func(v float64) int64 { return int64(math.Round(v * 1000)) }
	var tc, tm int64
	if a.Total.CPUs > 0 || a.Total.Mem > 0 || a.Total.Disk > 0 {
		tc, tm = m(a.Total.CPUs), m(a.Total.Mem)
	} else {
		for _, o := range a.Offers {
			tc, tm = tc+m(o.Resources.CPUs), tm+m(o.Resources.Mem)
		}
	}
	var s float64
	if tc > 0 {
		s += float64(tc-cpus+m(req.Resources.CPUs)+m(r.executor.CPUs)) / float64(tc)
	}
	if tm > 0 {
		s += float64(tm-mem+m(req.Resources.Mem)+m(r.executor.Mem)) / float64(tm)
	}
	return s
}

// refRank is how the reference orders fitting agents, best first.
type refRank struct {
	avoided, preferred, instances int
	share                         float64
}

func (r refRank) soft() [3]int { return [3]int{r.avoided, -r.preferred, r.instances} }

func (r refRank) before(o refRank) bool {
	if r.soft() != o.soft() {
		a, b := r.soft(), o.soft()
		for k := range a {
			if a[k] != b[k] {
				return a[k] < b[k]
			}
		}
	}
	return r.share < o.share
}

func (r *reference) rank(a *offer.Agent, req *offer.Requirements) refRank {
	c := req.Constraint
	if c == nil {
		c = constrainttest.New().Build()
	}
	rank := refRank{instances: r.instances(a, req.App), share: r.share(a, req)}
	for _, t := range a.Taints {
		if t.EffectOrDefault() == constraint.PreferNoSchedule && !c.ToleratesTaint(t) {
			rank.avoided++
		}
	}
	rank.preferred = r.state(req.App).Preference(c, a.ID)
	return rank
}

// checkPlan replays plan against the reference and returns every
// discrepancy. exact demands the least-loaded choice among all fitting
// agents (true when the matcher compares every candidate).
func checkPlan(s offertest.RandomScenario, plan *offer.Plan, exact bool) []string {
	ref := &reference{snap: &s.Snapshot, executor: offer.DefaultExecutor}
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	// Groups in order of first appearance; each group's placements are
	// contiguous in the plan and its failure comes after them.
	var order []*offer.Requirements
	groups := map[*offer.Requirements][]offer.TaskGroup{}
	for _, tg := range s.Pending {
		if groups[tg.Req] == nil {
			order = append(order, tg.Req)
		}
		groups[tg.Req] = append(groups[tg.Req], tg)
	}
	unplaced := map[string]*offer.Rejections{}
	for _, u := range plan.Unplaced {
		unplaced[u.TaskGroupID] = u.Rejections
	}
	next := 0
	for _, req := range order {
		for _, tg := range groups[req] {
			if rej, ok := unplaced[tg.ID]; ok {
				counts := map[string]int{}
				fit := 0
				for i := range s.Snapshot.Agents {
					if reason := ref.reason(&s.Snapshot.Agents[i], req); reason != "" {
						counts[reason]++
					} else {
						fit++
					}
				}
				got := map[string]int{}
				for _, rc := range rej.Reasons {
					got[rc.Reason] = rc.Agents
				}
				if fit != 0 || rej.Fit != 0 || rej.Agents != len(s.Snapshot.Agents) || !reflect.DeepEqual(got, counts) {
					bad("%s unplaced with %v; reference: %d fit, %v", tg.ID, rej, fit, counts)
				}
				continue
			}
			if next >= len(plan.Placements) || plan.Placements[next].TaskGroupID != tg.ID {
				bad("%s: neither placed next nor unplaced", tg.ID)
				return problems
			}
			p := plan.Placements[next]
			next++
			a := ref.agent(p.AgentID)
			if reason := ref.reason(a, req); reason != "" {
				bad("%s placed on %s which fails %q", tg.ID, p.AgentID, reason)
			}
			if exact {
				// Fewest untolerated PreferNoSchedule taints, then the
				// most preferred weight, then fewest instances of the
				// application (spread), then the least loaded.
				var best *refRank
				for i := range s.Snapshot.Agents {
					b := &s.Snapshot.Agents[i]
					if ref.reason(b, req) != "" {
						continue
					}
					if r := ref.rank(b, req); best == nil || r.before(*best) {
						best = &r
					}
				}
				if got := ref.rank(a, req); best == nil || got.soft() != best.soft() || got.share > best.share+1e-12 {
					bad("%s on %s ranked %+v; the best fitting agent ranks %+v", tg.ID, p.AgentID, got, best)
				}
			}
			var want []string
			for _, o := range a.Offers {
				want = append(want, o.ID)
			}
			if !reflect.DeepEqual(p.OfferIDs, want) {
				bad("%s: offers %v, want all of the agent's %v", tg.ID, p.OfferIDs, want)
			}
			var ports []uint32
			for k, ap := range p.Ports {
				if ap.Name != req.Ports[k].Name || (req.Ports[k].HostPort != 0 && ap.Port != req.Ports[k].HostPort) {
					bad("%s: port %d = %+v for request %+v", tg.ID, k, ap, req.Ports[k])
				}
				if !ref.portFree(a, ap.Port) {
					bad("%s: port %d on %s not offered or taken", tg.ID, ap.Port, p.AgentID)
				}
				for _, earlier := range ports {
					if earlier == ap.Port {
						bad("%s: port %d assigned twice", tg.ID, ap.Port)
					}
				}
				ports = append(ports, ap.Port)
			}
			ref.placed = append(ref.placed, refPlacement{agentID: p.AgentID, req: req, ports: ports})
		}
	}
	if next != len(plan.Placements) {
		bad("%d placements beyond the pending task groups", len(plan.Placements)-next)
	}
	used := map[string]bool{}
	for _, p := range plan.Placements {
		used[p.AgentID] = true
	}
	var decline []string
	for _, a := range s.Snapshot.Agents {
		if !used[a.ID] {
			for _, o := range a.Offers {
				decline = append(decline, o.ID)
			}
		}
	}
	if !reflect.DeepEqual(plan.Decline, decline) {
		bad("decline %v, want %v", plan.Decline, decline)
	}
	return problems
}

// TestMatcherAgainstReference runs random small clusters, where the matcher
// compares every fitting agent, and demands the reference's exact choice
// quality; then larger ones, where it samples, and demands validity and
// exact rejection counts.
func TestMatcherAgainstReference(t *testing.T) {
	cases := []struct {
		name      string
		maxAgents int
		runs      int
		exact     bool
	}{
		{"small clusters, exhaustive choice", offer.DefaultLimit, 1500, true},
		{"large clusters, sampled choice", 60, 300, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for run := 0; run < tc.runs; run++ {
				rng := rand.New(rand.NewPCG(uint64(run), 1))
				s := offertest.Random(rng, tc.maxAgents)
				plan := offertest.Matcher().Place(&s.Snapshot, s.Pending, now, uint64(run))
				if problems := checkPlan(s, plan, tc.exact); len(problems) > 0 {
					t.Fatalf("run %d (%d agents, %d pending):\n%v", run, len(s.Snapshot.Agents), len(s.Pending), problems)
				}
			}
		})
	}
}
