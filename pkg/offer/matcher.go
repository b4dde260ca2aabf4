package offer

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/constraint"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
)

// Mesos refuses a custom executor below these resources (mesos-facts.md:
// "uses less CPUs (0.001) than the minimum required (0.01)", "uses less
// memory (16MB) than the minimum required (32MB)", "uses no disk").
const (
	MinExecutorCPUs = 0.01
	MinExecutorMem  = 32
)

// DefaultExecutor is the executor's own share of every task group.
var DefaultExecutor = Resources{CPUs: 0.01, Mem: 32, Disk: 1}

// DefaultLimit is the fewest fitting candidates compared per placement.
const DefaultLimit = 16

// Config configures a Matcher.
type Config struct {
	// Executor is added to every task group's resources: Mesos accounts the
	// executor's resources separately from its tasks'.
	Executor Resources
	// Limit is how many fitting candidates are compared per placement; the
	// matcher compares max(Limit, ⌈log2 agents⌉). 0 means DefaultLimit.
	Limit int
}

// Matcher places task groups on offers. It holds only configuration; every
// Place call is independent.
type Matcher struct {
	executor scalars
	limit    int
}

// New validates cfg and returns a Matcher.
func New(cfg Config) (*Matcher, error) {
	if cfg.Executor.CPUs < MinExecutorCPUs || cfg.Executor.Mem < MinExecutorMem || cfg.Executor.Disk <= 0 {
		return nil, fmt.Errorf("executor resources %+v below the Mesos minimum (cpus %.2f, mem %d MB, some disk): %w",
			cfg.Executor, MinExecutorCPUs, MinExecutorMem, errdefs.ErrInvalidArgument)
	}
	if cfg.Limit < 0 {
		return nil, fmt.Errorf("limit %d: %w", cfg.Limit, errdefs.ErrInvalidArgument)
	}
	if cfg.Limit == 0 {
		cfg.Limit = DefaultLimit
	}
	return &Matcher{executor: scalarsOf(cfg.Executor), limit: cfg.Limit}, nil
}

// agentState is one agent during a pass.
type agentState struct {
	agent         *Agent
	snapshotIndex int
	offers        []string
	free          scalars
	total         scalars
	ports         portPool
	placed        bool
}

// pass is the scratch state of one Place call. Agents are laid out in the
// pass's seeded random order, those with offers first, so an agent's index
// is also its tie-break rank and a scan over candidates walks memory in
// order.
type pass struct {
	m        *Matcher
	rng      *rand.Rand
	agents   []agentState
	offering []int                  // 0..n-1: the agents with offers
	table    *constraint.Table      // the agents' interned attribute values
	labels   map[string]map[int]int // label → agent → active instances carrying it
	apps     map[string]*appState
	active   map[string][]int // app → agents of its active instances before the pass
	byID     map[string]int   // agent ID → index
	// instancesOn counts, per agent, the instances of the application
	// placeGroup is placing (zero between groups), for the spread every
	// placement prefers.
	instancesOn []int32
	limit       int
	plan        *Plan
	// explain: count the agents a placed group fits (Explain).
	explain bool
}

// Place computes a plan for pending against snap. Task groups sharing a
// *Requirements are placed consecutively, in order of first appearance.
func (m *Matcher) Place(snap *Snapshot, pending []TaskGroup, now time.Time, seed uint64) *Plan {
	return m.run(m.newPass(snap, seed), pending, now)
}

// Explain is Place that also says, for every placed task group, how many
// agents it fits and why the others do not (Placement.Fits): the reasons of
// a task group waiting for the offer of an agent it fits. The counts are
// taken once per application version, at its first placement, so they cost
// one look at every agent per version, not per instance.
func (m *Matcher) Explain(snap *Snapshot, pending []TaskGroup, now time.Time, seed uint64) *Plan {
	p := m.newPass(snap, seed)
	p.explain = true
	return m.run(p, pending, now)
}

func (m *Matcher) run(p *pass, pending []TaskGroup, now time.Time) *Plan {
	for _, group := range groupByRequirements(pending) {
		p.placeGroup(group, now)
	}
	// Decline in snapshot order, so the list does not depend on the seed.
	bySnapshot := make([]*agentState, len(p.agents))
	for i := range p.agents {
		bySnapshot[p.agents[i].snapshotIndex] = &p.agents[i]
	}
	for _, a := range bySnapshot {
		if !a.placed {
			p.plan.Decline = append(p.plan.Decline, a.offers...)
		}
	}
	return p.plan
}

func (m *Matcher) newPass(snap *Snapshot, seed uint64) *pass {
	p := &pass{
		m:      m,
		rng:    rand.New(rand.NewPCG(seed, 0x6263732d6d65736f)),
		agents: make([]agentState, 0, len(snap.Agents)),
		labels: map[string]map[int]int{},
		apps:   map[string]*appState{},
		active: map[string][]int{},
		plan:   &Plan{},
	}
	var offering, idle []int
	for i := range snap.Agents {
		if len(snap.Agents[i].Offers) > 0 {
			offering = append(offering, i)
		} else {
			idle = append(idle, i)
		}
	}
	p.rng.Shuffle(len(offering), func(i, j int) { offering[i], offering[j] = offering[j], offering[i] })
	byID := make(map[string]int, len(snap.Agents))
	p.byID = byID
	attrs := make([]*constraint.Agent, 0, len(snap.Agents))
	var ports []PortRange
	for _, k := range append(offering, idle...) {
		a := &snap.Agents[k]
		st := agentState{agent: a, snapshotIndex: k}
		ports = ports[:0]
		for _, o := range a.Offers {
			st.offers = append(st.offers, o.ID)
			st.free = st.free.plus(scalarsOf(o.Resources))
			ports = append(ports, o.Resources.Ports...)
		}
		st.ports = newPortPool(ports)
		st.total = scalarsOf(a.Total)
		if st.total == (scalars{}) {
			st.total = st.free
		}
		byID[a.ID] = len(p.agents)
		p.agents = append(p.agents, st)
		attrs = append(attrs, &a.Agent)
	}
	p.table = constraint.NewTable(attrs)
	p.instancesOn = make([]int32, len(p.agents))
	p.offering = make([]int, len(offering))
	for i := range p.offering {
		p.offering[i] = i
	}
	p.limit = max(m.limit, bits.Len(uint(len(offering))))
	for _, inst := range snap.Active {
		i, ok := byID[inst.AgentID]
		if !ok {
			continue // an agent the snapshot does not know: its attributes are unknown
		}
		p.active[inst.App] = append(p.active[inst.App], i)
		for _, label := range inst.Labels {
			p.addLabel(label, i)
		}
	}
	return p
}

func (p *pass) addLabel(label string, agent int) {
	byAgent := p.labels[label]
	if byAgent == nil {
		byAgent = map[int]int{}
		p.labels[label] = byAgent
	}
	byAgent[agent]++
}

// groupByRequirements groups the task groups that share Requirements and
// an agent to avoid.
func groupByRequirements(pending []TaskGroup) [][]TaskGroup {
	type key struct {
		req   *Requirements
		avoid string
		only  string
	}
	var groups [][]TaskGroup
	index := map[key]int{}
	for _, tg := range pending {
		k := key{tg.Req, tg.Avoid, tg.OnlyHost}
		i, ok := index[k]
		if !ok {
			i = len(groups)
			index[k] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], tg)
	}
	return groups
}

// group is one application version being placed.
type group struct {
	req   *Requirements
	avoid string // an agent the group must not use (TaskGroup.Avoid)
	only  string // the only hostname it may use (TaskGroup.OnlyHost)
	need  scalars
	bound *constraint.Bound // nil: no constraint
	app   *appState
}

// placeGroup places the instances of one application version.
func (p *pass) placeGroup(tgs []TaskGroup, now time.Time) {
	g := &group{req: tgs[0].Req, avoid: tgs[0].Avoid, only: tgs[0].OnlyHost, need: scalarsOf(tgs[0].Req.Resources).plus(p.m.executor)}
	if g.req.Constraint != nil {
		g.bound = g.req.Constraint.Bind(p.table)
	}
	g.app = p.app(g.req)
	for _, i := range g.app.agents {
		p.instancesOn[i]++
	}
	defer func() {
		for _, i := range g.app.agents {
			p.instancesOn[i] = 0
		}
	}()
	candidates := p.candidates(g.req)
	cursor := 0
	if len(candidates) > 0 {
		cursor = p.rng.IntN(len(candidates))
	}
	// excluded marks agents that failed permanently for this group, so later
	// instances skip them at the cost of a bit test.
	excluded := make([]uint64, (len(p.agents)+63)/64)
	var failed, fits *Rejections
	for _, tg := range tgs {
		if tg.NotBefore.After(now) {
			p.plan.Deferred = append(p.plan.Deferred, tg.ID)
			continue
		}
		if failed != nil {
			p.plan.Unplaced = append(p.plan.Unplaced, Unplaced{TaskGroupID: tg.ID, Rejections: failed})
			continue
		}
		best, visited, fitting := -1, 0, 0
		var bestScore score
		if i, ok := p.byID[tg.Prefer]; ok && excluded[i/64]&(1<<(i%64)) == 0 {
			if reason, _ := p.check(i, g); reason == "" {
				best, fitting = i, p.limit // taken without looking further
			}
		}
		for visited < len(candidates) && fitting < p.limit {
			i := candidates[(cursor+visited)%len(candidates)]
			visited++
			if excluded[i/64]&(1<<(i%64)) != 0 {
				continue
			}
			if reason, permanent := p.check(i, g); reason != "" {
				if permanent {
					excluded[i/64] |= 1 << (i % 64)
				}
				continue
			}
			fitting++
			if s := p.score(i, g); best < 0 || p.better(i, s, best, bestScore, g) {
				best, bestScore = i, s
			}
		}
		if len(candidates) > 0 {
			cursor = (cursor + visited) % len(candidates)
		}
		if best < 0 {
			failed = p.rejections(g)
			p.plan.Unplaced = append(p.plan.Unplaced, Unplaced{TaskGroupID: tg.ID, Rejections: failed})
			continue
		}
		if p.explain && fits == nil {
			fits = p.rejections(g)
		}
		p.place(best, tg, g, fits)
	}
}

// candidates returns the agents worth checking for req: the smallest index
// lookup a value-restricting clause allows, or every agent with offers.
func (p *pass) candidates(req *Requirements) []int {
	best := p.offering
	if req.Constraint == nil {
		return best
	}
	for _, f := range req.Constraint.ValueFilters() {
		col := p.table.Column(f.Name)
		var ids []int32
		n := 0
		for _, v := range f.Values {
			if id, ok := col.ID(v); ok && !slices.Contains(ids, id) {
				ids = append(ids, id)
				n += len(col.AgentsWith(id))
			}
		}
		if n >= len(best) {
			continue
		}
		cands := make([]int, 0, n)
		for _, id := range ids {
			for _, i := range col.AgentsWith(id) {
				if int(i) < len(p.offering) {
					cands = append(cands, int(i))
				}
			}
		}
		slices.Sort(cands) // index order is the seeded order
		best = cands
	}
	return best
}

// check returns why agent i cannot take an instance of g now, or "" when it
// can, and whether that stays so for the rest of the pass. Cheapest checks
// first; the order also decides which reason an agent is counted under.
func (p *pass) check(i int, g *group) (reason string, permanent bool) {
	a := &p.agents[i]
	// Within a pass resources and ports only shrink and instances are only
	// added, so every failure is permanent but a GROUPBY one.
	switch {
	case len(a.offers) == 0:
		return ReasonNoOffer, true
	case g.only != "" && a.agent.Hostname != g.only:
		return ReasonNotTarget, true
	case a.agent.Unschedulable:
		return ReasonUnschedulable, true
	case a.agent.Maintenance:
		return ReasonMaintenance, true
	case a.free.cpus < g.need.cpus:
		return ReasonCPUs, true
	case a.free.mem < g.need.mem:
		return ReasonMem, true
	case a.free.disk < g.need.disk:
		return ReasonDisk, true
	case len(g.req.Ports) > 0 && !a.ports.fits(g.req.Ports):
		return ReasonPorts, true
	case g.avoid != "" && a.agent.ID == g.avoid:
		return ReasonMovedAway, true
	}
	if g.bound == nil {
		if p.table.Tainted(i) {
			return ReasonTaint, true
		}
		return "", false
	}
	if !g.bound.Tolerates(i) {
		return ReasonTaint, true
	}
	if ok, clause := g.bound.Fits(i, g.app); !ok {
		return g.bound.Reason(clause), g.bound.Permanent(clause)
	}
	return "", false
}

// score is what makes one fitting agent a better place than another before
// the spread and the load: soft rules, never refusals.
type score struct {
	// avoided counts the agent's PreferNoSchedule taints the instance does
	// not tolerate: fewer is better.
	avoided int
	// preferred sums the weights of the preferred constraint items the
	// agent meets: more is better.
	preferred int
}

func (p *pass) score(i int, g *group) score {
	if g.bound == nil {
		return score{avoided: p.table.Avoided(i)}
	}
	return score{avoided: g.bound.Avoided(i), preferred: g.bound.Preference(i, g.app)}
}

// better reports whether agent i (scored si) is a better place than agent
// j (scored sj) for one more instance of g: the one with fewer untolerated
// PreferNoSchedule taints, then the one meeting more preferred weight, then
// the one running fewer of its application's instances (deployd spreads a
// podgroup across nodes unless its constraints say otherwise: a
// preference, never a refusal), then the less loaded after taking it (the
// sum of its cpu and memory shares), ties broken by seeded rank.
func (p *pass) better(i int, si score, j int, sj score, g *group) bool {
	if si.avoided != sj.avoided {
		return si.avoided < sj.avoided
	}
	if si.preferred != sj.preferred {
		return si.preferred > sj.preferred
	}
	if ni, nj := p.instancesOn[i], p.instancesOn[j]; ni != nj {
		return ni < nj
	}
	if li, lj := p.share(i, g.need), p.share(j, g.need); li != lj {
		return li < lj
	}
	return i < j
}

func (p *pass) share(i int, need scalars) float64 {
	a := &p.agents[i]
	used := a.total.minus(a.free).plus(need)
	var s float64
	if a.total.cpus > 0 {
		s += float64(used.cpus) / float64(a.total.cpus)
	}
	if a.total.mem > 0 {
		s += float64(used.mem) / float64(a.total.mem)
	}
	return s
}

func (p *pass) place(i int, tg TaskGroup, g *group, fits *Rejections) {
	a := &p.agents[i]
	a.free = a.free.minus(g.need)
	a.placed = true
	ports := a.ports.take(g.req.Ports, p.rng)
	g.app.record(i)
	p.instancesOn[i]++
	for _, label := range g.req.Labels {
		p.addLabel(label, i)
	}
	p.plan.Placements = append(p.plan.Placements, Placement{
		TaskGroupID: tg.ID, AgentID: a.agent.ID, OfferIDs: a.offers, Ports: ports, Fits: fits,
	})
}

// rejections checks every agent of the snapshot and counts each under the
// first reason it fails.
func (p *pass) rejections(g *group) *Rejections {
	counts := map[string]int{}
	fit := 0
	for i := range p.agents {
		if reason, _ := p.check(i, g); reason != "" {
			counts[reason]++
		} else {
			fit++
		}
	}
	r := newRejections(len(p.agents), counts)
	r.Fit = fit
	return r
}

// Admits returns the IDs of the agents of snap that req's instances may
// run on whatever their resources: schedulable, not in maintenance, their
// taints tolerated and the constraint met — a daemonset's agents. The
// constraint does not count req's own instances: one per agent is the
// daemonset's rule, not a constraint's. Agents come in snapshot order.
func (m *Matcher) Admits(snap *Snapshot, req *Requirements) []string {
	p := m.newPass(&Snapshot{Agents: snap.Agents, Active: slices.DeleteFunc(slices.Clone(snap.Active), func(i Instance) bool {
		return i.App == req.App
	})}, 0)
	g := &group{req: req}
	if req.Constraint != nil {
		g.bound = req.Constraint.Bind(p.table)
	}
	g.app = p.app(req)
	admitted := make([]bool, len(snap.Agents))
	for i := range p.agents {
		a := p.agents[i].agent
		switch {
		case a.Unschedulable, a.Maintenance:
		case g.bound == nil:
			admitted[p.agents[i].snapshotIndex] = !p.table.Tainted(i)
		case g.bound.Tolerates(i):
			ok, _ := g.bound.Fits(i, g.app)
			admitted[p.agents[i].snapshotIndex] = ok
		}
	}
	var out []string
	for i, ok := range admitted {
		if ok {
			out = append(out, snap.Agents[i].ID)
		}
	}
	return out
}
