package offer_test

import (
	"errors"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/constraint"
	"github.com/bcs-mesos/bcs-mesos/pkg/constraint/constrainttest"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/offer"
	"github.com/bcs-mesos/bcs-mesos/pkg/offer/offertest"
)

var now = time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)

func place(snap *offer.Snapshot, pending []offer.TaskGroup) *offer.Plan {
	return offertest.Matcher().Place(snap, pending, now, 42)
}

// placedOn maps task group ID to agent ID.
func placedOn(plan *offer.Plan) map[string]string {
	m := map[string]string{}
	for _, p := range plan.Placements {
		m[p.TaskGroupID] = p.AgentID
	}
	return m
}

func perAgent(plan *offer.Plan) map[string]int {
	m := map[string]int{}
	for _, p := range plan.Placements {
		m[p.AgentID]++
	}
	return m
}

func TestUniqueHostnameThreeAgents(t *testing.T) {
	snap := &offer.Snapshot{Agents: []offer.Agent{offertest.Agent(1), offertest.Agent(2), offertest.Agent(3)}}
	req := offertest.Requirements("ns/game")
	req.Constraint = constrainttest.New().Unique("hostname").Build()
	plan := place(snap, offertest.TaskGroups(req, 4))
	if len(plan.Placements) != 3 || len(perAgent(plan)) != 3 {
		t.Fatalf("placements %+v: want one per agent", plan.Placements)
	}
	if len(plan.Unplaced) != 1 || plan.Unplaced[0].TaskGroupID != "ns/game-3" {
		t.Fatalf("unplaced = %+v, want the 4th instance", plan.Unplaced)
	}
	if got, want := plan.Unplaced[0].Rejections.String(), "0/3 agents fit: hostname UNIQUE 3"; got != want {
		t.Errorf("rejections = %q, want %q", got, want)
	}
	if len(plan.Decline) != 0 {
		t.Errorf("declined %v, want every offer used", plan.Decline)
	}
}

func TestRejectionCountsNameEveryReason(t *testing.T) {
	// Issue example: "0/3 agents fit: hostname UNIQUE 2, mem 1".
	small := offertest.Agent(3)
	small.Offers[0].Resources.Mem = 512
	snap := &offer.Snapshot{
		Agents: []offer.Agent{offertest.Agent(1), offertest.Agent(2), small},
		Active: []offer.Instance{{App: "ns/game", AgentID: "agent-1"}, {App: "ns/game", AgentID: "agent-2"}},
	}
	req := offertest.Requirements("ns/game")
	req.Constraint = constrainttest.New().Unique("hostname").Build()
	plan := place(snap, offertest.TaskGroups(req, 1))
	if len(plan.Unplaced) != 1 {
		t.Fatalf("plan %+v: want unplaced", plan)
	}
	if got, want := plan.Unplaced[0].Rejections.String(), "0/3 agents fit: hostname UNIQUE 2, mem 1"; got != want {
		t.Errorf("rejections = %q, want %q", got, want)
	}
	if !reflect.DeepEqual(plan.Decline, []string{"offer-1", "offer-2", "offer-3"}) {
		t.Errorf("decline = %v, want all three offers", plan.Decline)
	}
}

func TestAgentWithoutOfferIsReported(t *testing.T) {
	idle := offertest.Agent(2)
	idle.Offers = nil
	snap := &offer.Snapshot{Agents: []offer.Agent{offertest.Agent(1), idle}}
	req := offertest.Requirements("ns/a")
	req.Constraint = constrainttest.New().Unique("hostname").Build()
	plan := place(snap, offertest.TaskGroups(req, 2))
	if got := plan.Unplaced[0].Rejections.String(); got != "0/2 agents fit: hostname UNIQUE 1, no offer 1" {
		t.Errorf("rejections = %q", got)
	}
}

func TestOneOfferTakesManyTaskGroups(t *testing.T) {
	snap := &offer.Snapshot{Agents: []offer.Agent{offertest.Agent(1)}}
	plan := place(snap, offertest.TaskGroups(offertest.Requirements("ns/a"), 7))
	if len(plan.Placements) != 7 {
		t.Fatalf("placed %d of 7 on an 8-cpu offer", len(plan.Placements))
	}
	// 8 cpus hold 7 groups of 1 cpu + 0.01 executor cpu, not 8.
	plan = place(snap, offertest.TaskGroups(offertest.Requirements("ns/a"), 8))
	if len(plan.Placements) != 7 || len(plan.Unplaced) != 1 {
		t.Fatalf("placed %d, unplaced %d: the executor's 0.01 cpu must count", len(plan.Placements), len(plan.Unplaced))
	}
	if got := plan.Unplaced[0].Rejections.String(); got != "0/1 agents fit: cpus 1" {
		t.Errorf("rejections = %q", got)
	}
	launches := plan.Launches()
	if len(launches) != 1 || len(launches[0].Placements) != 7 || !reflect.DeepEqual(launches[0].OfferIDs, []string{"offer-1"}) {
		t.Errorf("launches = %+v, want one ACCEPT of offer-1 with 7 groups", launches)
	}
}

func TestOffersOfOneAgentAreCombined(t *testing.T) {
	a := offertest.Agent(1)
	a.Offers = []offer.Offer{
		{ID: "o1", Resources: offer.Resources{CPUs: 0.6, Mem: 600, Disk: 600, Ports: []offer.PortRange{{Begin: 31000, End: 31000}}}},
		{ID: "o2", Resources: offer.Resources{CPUs: 0.5, Mem: 600, Disk: 600, Ports: []offer.PortRange{{Begin: 31001, End: 31001}}}},
	}
	req := offertest.Requirements("ns/a")
	req.Ports = []offer.PortRequest{{Name: "a"}, {Name: "b"}}
	plan := place(&offer.Snapshot{Agents: []offer.Agent{a}}, offertest.TaskGroups(req, 1))
	if len(plan.Placements) != 1 {
		t.Fatalf("plan %+v: 1 cpu + 2 ports fit only in both offers together", plan)
	}
	p := plan.Placements[0]
	if !reflect.DeepEqual(p.OfferIDs, []string{"o1", "o2"}) {
		t.Errorf("offers = %v, want both", p.OfferIDs)
	}
	ports := []uint32{p.Ports[0].Port, p.Ports[1].Port}
	sort.Slice(ports, func(i, j int) bool { return ports[i] < ports[j] })
	if !reflect.DeepEqual(ports, []uint32{31000, 31001}) {
		t.Errorf("ports = %v", p.Ports)
	}
}

func TestFixedPorts(t *testing.T) {
	snap := &offer.Snapshot{Agents: []offer.Agent{offertest.Agent(1), offertest.Agent(2)}}
	web := offertest.Requirements("ns/web")
	web.Ports = []offer.PortRequest{{Name: "http", HostPort: 31080}}
	outside := offertest.Requirements("ns/outside")
	outside.Ports = []offer.PortRequest{{Name: "http", HostPort: 8080}}
	plan := place(snap, append(offertest.TaskGroups(web, 3), offertest.TaskGroups(outside, 1)...))
	if len(perAgent(plan)) != 2 || len(plan.Placements) != 2 {
		t.Fatalf("placements %+v: a fixed port fits once per agent", plan.Placements)
	}
	for _, p := range plan.Placements {
		if p.Ports[0] != (offer.AssignedPort{Name: "http", Port: 31080}) {
			t.Errorf("port = %+v, want http 31080", p.Ports[0])
		}
	}
	if len(plan.Unplaced) != 2 {
		t.Fatalf("unplaced = %+v", plan.Unplaced)
	}
	for _, u := range plan.Unplaced {
		if got := u.Rejections.String(); got != "0/2 agents fit: ports 2" {
			t.Errorf("%s: rejections = %q", u.TaskGroupID, got)
		}
	}
}

func TestRandomPortsAreSeededNotSequential(t *testing.T) {
	snap := &offer.Snapshot{Agents: []offer.Agent{offertest.Agent(1)}}
	req := offertest.Requirements("ns/a")
	req.Resources = offer.Resources{CPUs: 0.1, Mem: 1, Disk: 1}
	req.Ports = []offer.PortRequest{{Name: "game"}}
	ports := func(seed uint64) []uint32 {
		plan := offertest.Matcher().Place(snap, offertest.TaskGroups(req, 20), now, seed)
		var out []uint32
		seen := map[uint32]bool{}
		for _, p := range plan.Placements {
			port := p.Ports[0].Port
			if port < 31000 || port > 32000 || seen[port] {
				t.Fatalf("port %d outside the offer or reused", port)
			}
			seen[port] = true
			out = append(out, port)
		}
		return out
	}
	a, b := ports(7), ports(7)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("same seed, different ports: %v vs %v", a, b)
	}
	if reflect.DeepEqual(a, ports(8)) {
		t.Errorf("different seeds gave the same ports %v", a)
	}
	sequential := 0
	for i := 1; i < len(a); i++ {
		if a[i] == a[i-1]+1 {
			sequential++
		}
	}
	if sequential > 2 {
		t.Errorf("ports %v are sequential", a)
	}
}

func TestRandomPortsExhaustRange(t *testing.T) {
	a := offertest.Agent(1)
	a.Offers[0].Resources.Ports = []offer.PortRange{{Begin: 31000, End: 31002}}
	req := offertest.Requirements("ns/a")
	req.Resources = offer.Resources{CPUs: 0.1, Mem: 1, Disk: 1}
	req.Ports = []offer.PortRequest{{Name: "game"}}
	plan := place(&offer.Snapshot{Agents: []offer.Agent{a}}, offertest.TaskGroups(req, 4))
	if len(plan.Placements) != 3 || len(plan.Unplaced) != 1 {
		t.Fatalf("placed %d: three ports take three groups", len(plan.Placements))
	}
}

// Seed 002 (deployd): a podgroup is spread across nodes unless told
// otherwise. Four instances go one to each of four agents although one of
// them is eight times larger and would be the least loaded for all four.
func TestSpreadAcrossAgentsBeforeLoad(t *testing.T) {
	large := offertest.Agent(1)
	large.Offers[0].Resources.CPUs, large.Offers[0].Resources.Mem = 64, 131072
	snap := &offer.Snapshot{Agents: []offer.Agent{large, offertest.Agent(2), offertest.Agent(3), offertest.Agent(4)}}
	plan := place(snap, offertest.TaskGroups(offertest.Requirements("ns/a"), 4))
	if got := perAgent(plan); len(got) != 4 {
		t.Errorf("per agent %v: four instances without a constraint go to four agents", got)
	}
}

// Among agents running as many of the application's instances, the least
// loaded takes the next: five instances on three agents are one each, then
// the two idle agents' second, never the busy one's.
func TestSpreadThenLeastLoaded(t *testing.T) {
	idle := offertest.Agent(1)
	idle.Total = offer.Resources{CPUs: 8, Mem: 16384}
	busy := offertest.Agent(2) // offers 8 of its 32 cpus: already 3/4 used
	busy.Total = offer.Resources{CPUs: 32, Mem: 65536}
	snap := &offer.Snapshot{Agents: []offer.Agent{idle, busy, offertest.Agent(3)}}
	plan := place(snap, offertest.TaskGroups(offertest.Requirements("ns/a"), 5))
	got := perAgent(plan)
	if got["agent-1"] != 2 || got["agent-3"] != 2 || got["agent-2"] != 1 {
		t.Errorf("per agent %v: one instance per agent, then the idle agents before the busy one", got)
	}
}

// Spreading counts the instances already running, and is a preference,
// never a refusal: the agent already running one takes the next only when
// no other fits.
func TestSpreadCountsRunningInstancesAndNeverRefuses(t *testing.T) {
	req := offertest.Requirements("ns/a")
	running := []offer.Instance{{App: "ns/a", AgentID: "agent-1"}, {App: "ns/other", AgentID: "agent-2"}}
	snap := &offer.Snapshot{Agents: []offer.Agent{offertest.Agent(1), offertest.Agent(2)}, Active: running}
	plan := place(snap, offertest.TaskGroups(req, 1))
	if got := perAgent(plan); got["agent-2"] != 1 {
		t.Errorf("per agent %v: the agent without an instance of ns/a takes it", got)
	}
	snap = &offer.Snapshot{Agents: []offer.Agent{offertest.Agent(1)}, Active: running[:1]}
	plan = place(snap, offertest.TaskGroups(req, 3))
	if got := perAgent(plan); got["agent-1"] != 3 || len(plan.Unplaced) != 0 {
		t.Errorf("per agent %v, unplaced %v: one agent takes all three", got, plan.Unplaced)
	}
}

func TestGroupByTwoIDCs(t *testing.T) {
	// Seed 000: 3 instances, set [idc1, idc2] → 2+1, never 3+0.
	snap := &offer.Snapshot{Agents: []offer.Agent{
		offertest.Agent(1, "idc", "idc1"), offertest.Agent(2, "idc", "idc1"),
		offertest.Agent(3, "idc", "idc1"), offertest.Agent(4, "idc", "idc2"),
	}}
	req := offertest.Requirements("ns/a")
	req.Constraint = constrainttest.New().GroupBy("idc", "idc1", "idc2").Build()
	for seed := uint64(0); seed < 20; seed++ {
		plan := offertest.Matcher().Place(snap, offertest.TaskGroups(req, 3), now, seed)
		idc2 := perAgent(plan)["agent-4"]
		if len(plan.Placements) != 3 || idc2 < 1 || idc2 > 2 {
			t.Fatalf("seed %d: %v: want 2+1 over the IDCs", seed, perAgent(plan))
		}
	}
}

func TestMaxPerIDC(t *testing.T) {
	snap := &offer.Snapshot{Agents: []offer.Agent{
		offertest.Agent(1, "idc", "sz"), offertest.Agent(2, "idc", "sz"), offertest.Agent(3, "idc", "sh"),
	}}
	req := offertest.Requirements("ns/a")
	req.Constraint = constrainttest.New().MaxPer("idc", 2).Build()
	plan := place(snap, offertest.TaskGroups(req, 5))
	if len(plan.Placements) != 4 {
		t.Fatalf("placed %d, want 4 (2 per IDC)", len(plan.Placements))
	}
	if got := plan.Unplaced[0].Rejections.String(); got != "0/3 agents fit: idc MAXPER 3" {
		t.Errorf("rejections = %q", got)
	}
}

func TestExcludeSeesPlacementsOfTheSamePass(t *testing.T) {
	snap := &offer.Snapshot{
		Agents: []offer.Agent{offertest.Agent(1), offertest.Agent(2), offertest.Agent(3)},
		Active: []offer.Instance{{App: "other/db", AgentID: "agent-3", Labels: []string{"tier:db"}}},
	}
	db := offertest.Requirements("ns/db")
	db.Labels = []string{"tier:db"}
	db.Constraint = constrainttest.New().Cluster("hostname", "host-1").Build()
	web := offertest.Requirements("ns/web")
	web.Constraint = constrainttest.New().Exclude("tier:db", "tier:cache").Build()
	plan := place(snap, append(offertest.TaskGroups(db, 1), offertest.TaskGroups(web, 3)...))
	on := placedOn(plan)
	if on["ns/db-0"] != "agent-1" {
		t.Fatalf("db on %q", on["ns/db-0"])
	}
	for i := 0; i < 3; i++ {
		if agent := on["ns/web-"+string(rune('0'+i))]; agent != "agent-2" {
			t.Errorf("web-%d on %q: agent-1 runs db from this pass, agent-3 from before", i, agent)
		}
	}
}

func TestTaintedAgentNeedsToleration(t *testing.T) {
	tainted := offertest.Agent(1)
	tainted.Taints = []constraint.Taint{{Key: "maintenance", Value: "true"}}
	snap := &offer.Snapshot{Agents: []offer.Agent{tainted}}
	plain := offertest.Requirements("ns/plain")
	tolerant := offertest.Requirements("ns/tolerant")
	tolerant.Constraint = constrainttest.New().Tolerate("maintenance", "true").Build()
	plan := place(snap, append(offertest.TaskGroups(plain, 1), offertest.TaskGroups(tolerant, 1)...))
	if on := placedOn(plan); on["ns/tolerant-0"] != "agent-1" || on["ns/plain-0"] != "" {
		t.Errorf("placed %v: only the tolerating group may land on the tainted agent", on)
	}
	if got := plan.Unplaced[0].Rejections.String(); got != "0/1 agents fit: taint 1" {
		t.Errorf("rejections = %q", got)
	}
}

// A PreferNoSchedule taint is a score, never a refusal: the untainted agent
// takes the instance while it fits, the tainted one when nothing else does,
// and a toleration of the taint makes both alike again.
func TestPreferNoScheduleSteersAndNeverRefuses(t *testing.T) {
	spot := offertest.Agent(1)
	spot.Offers[0].Resources.CPUs = 64 // the least loaded: chosen without the taint
	spot.Taints = []constraint.Taint{{Key: "spot", Value: "true", Effect: constraint.PreferNoSchedule}}
	snap := &offer.Snapshot{Agents: []offer.Agent{spot, offertest.Agent(2)}}
	plan := place(snap, offertest.TaskGroups(offertest.Requirements("ns/a"), 1))
	if on := placedOn(plan); on["ns/a-0"] != "agent-2" {
		t.Errorf("placed %v: the untainted agent takes it", on)
	}
	plan = place(&offer.Snapshot{Agents: []offer.Agent{spot}}, offertest.TaskGroups(offertest.Requirements("ns/a"), 2))
	if on := placedOn(plan); on["ns/a-0"] != "agent-1" || on["ns/a-1"] != "agent-1" {
		t.Errorf("placed %v, unplaced %v: the tainted agent takes what fits nowhere else", on, plan.Unplaced)
	}
	tolerant := offertest.Requirements("ns/t")
	tolerant.Constraint = constrainttest.New().Or(constrainttest.TolerateEffect("spot", "true", constraint.PreferNoSchedule)).Build()
	plan = place(snap, offertest.TaskGroups(tolerant, 1))
	if on := placedOn(plan); on["ns/t-0"] != "agent-1" {
		t.Errorf("placed %v: tolerated, the least loaded agent takes it", on)
	}
	hard := spot
	hard.Taints = []constraint.Taint{{Key: "spot", Value: "true", Effect: constraint.NoSchedule}}
	plan = place(&offer.Snapshot{Agents: []offer.Agent{hard}}, offertest.TaskGroups(tolerant, 1))
	if len(plan.Placements) != 0 {
		t.Errorf("placed %v: a PreferNoSchedule toleration does not tolerate NoSchedule", placedOn(plan))
	}
}

// A preferred item (a weighted IntersectionItem) wins over the spread and
// the load, and never refuses: with its agents full, the others take the
// rest.
func TestPreferredItemBeforeSpread(t *testing.T) {
	req := offertest.Requirements("ns/a")
	req.Constraint = constrainttest.New().Prefer(50, constrainttest.Cluster("idc", "sz")).Build()
	sz := offertest.Agent(1, "idc", "sz")
	sz.Offers[0].Resources.CPUs = 1.5 // room for three instances of 0.5 cpus with their executors
	snap := &offer.Snapshot{Agents: []offer.Agent{sz, offertest.Agent(2, "idc", "sh"), offertest.Agent(3, "idc", "sh")}}
	req.Resources.CPUs = 0.49
	plan := place(snap, offertest.TaskGroups(req, 5))
	got := perAgent(plan)
	if got["agent-1"] != 3 || got["agent-2"] != 1 || got["agent-3"] != 1 || len(plan.Unplaced) != 0 {
		t.Errorf("per agent %v, unplaced %v: the preferred idc takes all it can, the others the rest, spread", got, plan.Unplaced)
	}
}

func TestCandidatesFromIndex(t *testing.T) {
	var agents []offer.Agent
	for n := 0; n < 40; n++ {
		agents = append(agents, offertest.Agent(n, "rack", []string{"r1", "r2", "r3", "r4"}[n%4]))
	}
	req := offertest.Requirements("ns/a")
	req.Constraint = constrainttest.New().Cluster("rack", "r2", "r4").Unique("hostname").Build()
	plan := place(&offer.Snapshot{Agents: agents}, offertest.TaskGroups(req, 25))
	if len(plan.Placements) != 20 || len(plan.Unplaced) != 5 {
		t.Fatalf("placed %d unplaced %d: 20 agents in r2 and r4", len(plan.Placements), len(plan.Unplaced))
	}
	if got := plan.Unplaced[0].Rejections.String(); got != "0/40 agents fit: hostname UNIQUE 20, rack CLUSTER 20" {
		t.Errorf("rejections = %q", got)
	}
}

func TestDeferredUntilNotBefore(t *testing.T) {
	snap := &offer.Snapshot{Agents: []offer.Agent{offertest.Agent(1)}}
	tgs := offertest.TaskGroups(offertest.Requirements("ns/a"), 2)
	tgs[1].NotBefore = now.Add(time.Second) // restart backoff not over
	plan := place(snap, tgs)
	if len(plan.Placements) != 1 || !reflect.DeepEqual(plan.Deferred, []string{"ns/a-1"}) {
		t.Errorf("placements %d deferred %v", len(plan.Placements), plan.Deferred)
	}
}

func TestSameSeedSamePlan(t *testing.T) {
	agents := offertest.Cluster(offertest.ClusterSpec{Agents: 200, IDCs: 4, Districts: 3, Racks: 20, CPUs: 16, Mem: 32768})
	pending := offertest.Workload(offertest.WorkloadSpec{Apps: 12, TaskGroups: 1200,
		Cluster: offertest.ClusterSpec{IDCs: 4, Districts: 3, Racks: 20}})
	snap := &offer.Snapshot{Agents: agents}
	a := offertest.Matcher().Place(snap, pending, now, 99)
	b := offertest.Matcher().Place(snap, pending, now, 99)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two passes with the same inputs and seed differ")
	}
	c := offertest.Matcher().Place(snap, pending, now, 100)
	if reflect.DeepEqual(a.Placements, c.Placements) {
		t.Fatal("a different seed changed nothing")
	}
}

func TestExecutorBelowMesosMinimumIsRejected(t *testing.T) {
	for _, exec := range []offer.Resources{
		{CPUs: 0.001, Mem: 32, Disk: 1},
		{CPUs: 0.01, Mem: 16, Disk: 1},
		{CPUs: 0.01, Mem: 32},
	} {
		if _, err := offer.New(offer.Config{Executor: exec}); !errors.Is(err, errdefs.ErrInvalidArgument) {
			t.Errorf("executor %+v: err = %v, want invalid argument", exec, err)
		}
	}
}

// A rescheduled instance avoids the agent it left — a named requirement
// with its own rejection reason — while its siblings may still use it.
func TestRescheduledInstanceAvoidsItsAgent(t *testing.T) {
	snap := &offer.Snapshot{Agents: []offer.Agent{offertest.Agent(1), offertest.Agent(2)}}
	req := offertest.Requirements("ns/game")
	moved := offer.TaskGroup{ID: "ns/game-0", Req: req, Avoid: "agent-1"}
	other := offer.TaskGroup{ID: "ns/game-1", Req: req}
	for seed := uint64(0); seed < 20; seed++ {
		plan := offertest.Matcher().Place(snap, []offer.TaskGroup{moved, other}, now, seed)
		if got := placedOn(plan)["ns/game-0"]; got != "agent-2" {
			t.Fatalf("seed %d: the rescheduled instance went to %q, want agent-2", seed, got)
		}
	}
	alone := &offer.Snapshot{Agents: []offer.Agent{offertest.Agent(1)}}
	plan := place(alone, []offer.TaskGroup{moved, other})
	if len(plan.Unplaced) != 1 || plan.Unplaced[0].TaskGroupID != "ns/game-0" || placedOn(plan)["ns/game-1"] != "agent-1" {
		t.Fatalf("plan %+v", plan)
	}
	if got, want := plan.Unplaced[0].Rejections.String(), "0/1 agents fit: moving away 1"; got != want {
		t.Errorf("rejections = %q, want %q", got, want)
	}
}

// A cordoned or draining agent and one in a maintenance window take
// nothing, each counted under its reason; the others still do.
func TestUnschedulableAndMaintenanceAgentsTakeNothing(t *testing.T) {
	cordoned, maintained := offertest.Agent(1), offertest.Agent(2)
	cordoned.Unschedulable, maintained.Maintenance = true, true
	snap := &offer.Snapshot{Agents: []offer.Agent{cordoned, maintained, offertest.Agent(3)}}
	req := offertest.Requirements("ns/a")
	req.Constraint = constrainttest.New().Unique("hostname").Build()
	plan := place(snap, offertest.TaskGroups(req, 2))
	if on := perAgent(plan); !reflect.DeepEqual(on, map[string]int{"agent-3": 1}) || len(plan.Unplaced) != 1 {
		t.Fatalf("placements per agent %v, unplaced %+v: want one on agent-3 only", on, plan.Unplaced)
	}
	if got, want := plan.Unplaced[0].Rejections.String(), "0/3 agents fit: cordoned 1, hostname UNIQUE 1, maintenance 1"; got != want {
		t.Errorf("rejections = %q, want %q", got, want)
	}
}

// A started instance goes back to the agent it ran on (TaskGroup.Prefer)
// if it fits there, before the spread: agent-1 already runs one of its
// application's instances and agent-2 none. When it does not fit there,
// the preference refuses nothing.
func TestPreferredAgentBeforeSpread(t *testing.T) {
	req := offertest.Requirements("ns/a")
	running := []offer.Instance{{App: "ns/a", AgentID: "agent-1"}}
	tg := offertest.TaskGroups(req, 1)
	tg[0].Prefer = "agent-1"
	snap := &offer.Snapshot{Agents: []offer.Agent{offertest.Agent(1), offertest.Agent(2)}, Active: running}
	if got := perAgent(place(snap, tg)); got["agent-1"] != 1 {
		t.Errorf("per agent %v: the preferred agent-1 takes it", got)
	}
	full := offertest.Agent(1)
	full.Offers[0].Resources.CPUs = 0.5
	snap = &offer.Snapshot{Agents: []offer.Agent{full, offertest.Agent(2)}, Active: running}
	if got := perAgent(place(snap, tg)); got["agent-2"] != 1 {
		t.Errorf("per agent %v: agent-1 has no room, agent-2 takes it", got)
	}
}
