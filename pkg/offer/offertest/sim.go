package offertest

import (
	"fmt"
	"math/rand/v2"

	"github.com/bcs-mesos/bcs-mesos/pkg/constraint"
	"github.com/bcs-mesos/bcs-mesos/pkg/constraint/constrainttest"
	"github.com/bcs-mesos/bcs-mesos/pkg/offer"
)

// ClusterSpec sizes a regular simulated cluster: agents spread round-robin
// over IDCs, districts and racks, each with one offer of the given size.
type ClusterSpec struct {
	Agents    int
	IDCs      int
	Districts int
	Racks     int
	CPUs      float64
	Mem       float64
}

// Cluster builds the agents of spec. Hostnames are "host-<n>"; attributes
// idc "idc-<k>", district "district-<k>", rack "rack-<k>".
func Cluster(spec ClusterSpec) []offer.Agent {
	agents := make([]offer.Agent, spec.Agents)
	for n := range agents {
		a := Agent(n,
			"idc", fmt.Sprintf("idc-%d", n%spec.IDCs),
			"district", fmt.Sprintf("district-%d", n%spec.Districts),
			"rack", fmt.Sprintf("rack-%d", n%spec.Racks))
		a.Offers[0].Resources.CPUs = spec.CPUs
		a.Offers[0].Resources.Mem = spec.Mem
		agents[n] = a
	}
	return agents
}

// WorkloadSpec sizes a simulated workload: Apps applications of equal size
// sharing TaskGroups pending instances, each application given one of the
// constraint mixes in turn (see Workload).
type WorkloadSpec struct {
	Apps       int
	TaskGroups int
	Cluster    ClusterSpec
}

// Workload builds the pending task groups of spec. Application k gets mix
// k mod 6:
//
//	0: hostname UNIQUE
//	1: idc MAXPER ⌈instances/IDCs⌉+1
//	2: district GROUPBY over every district
//	3: rack CLUSTER over a tenth of the racks (at least 1), and hostname UNIQUE
//	4: hostname LIKE host-[0-9]*[02468] (even hosts)
//	5: label EXCLUDE of the labels of application k-1, carrying its own
//
// Every application asks for 0.5 cpu, 256 MB and one random host port.
func Workload(spec WorkloadSpec) []offer.TaskGroup {
	perApp := spec.TaskGroups / spec.Apps
	var tgs []offer.TaskGroup
	for k := 0; k < spec.Apps; k++ {
		app := fmt.Sprintf("ns/app-%d", k)
		b := constrainttest.New()
		switch k % 6 {
		case 0:
			b.Unique("hostname")
		case 1:
			b.MaxPer("idc", perApp/spec.Cluster.IDCs+1)
		case 2:
			var districts []string
			for d := 0; d < spec.Cluster.Districts; d++ {
				districts = append(districts, fmt.Sprintf("district-%d", d))
			}
			b.GroupBy("district", districts...)
		case 3:
			var racks []string
			for r := 0; r < max(1, spec.Cluster.Racks/10); r++ {
				racks = append(racks, fmt.Sprintf("rack-%d", r*10))
			}
			b.Cluster("rack", racks...).Unique("hostname")
		case 4:
			b.Like("hostname", "host-[0-9]*[02468]")
		case 5:
			b.Exclude(fmt.Sprintf("app:app-%d", k-1))
		}
		req := &offer.Requirements{
			App:        app,
			Resources:  offer.Resources{CPUs: 0.5, Mem: 256, Disk: 64},
			Ports:      []offer.PortRequest{{Name: "game"}},
			Constraint: b.Build(),
			Labels:     []string{fmt.Sprintf("app:app-%d", k)},
		}
		tgs = append(tgs, TaskGroups(req, perApp)...)
	}
	return tgs
}

// RandomScenario is a small random cluster and workload for property tests.
type RandomScenario struct {
	Snapshot offer.Snapshot
	Pending  []offer.TaskGroup
}

// Random generates a scenario of up to maxAgents agents: few attribute
// values so constraints collide, small port ranges so ports run out, some
// agents without offers or attributes, some tainted, active instances, and
// applications with random constraints, labels, ports and sizes.
func Random(rng *rand.Rand, maxAgents int) RandomScenario {
	var s RandomScenario
	pick := func(vals ...string) string { return vals[rng.IntN(len(vals))] }
	nAgents := 1 + rng.IntN(maxAgents)
	for n := 0; n < nAgents; n++ {
		a := offer.Agent{Agent: constraint.Agent{
			ID: fmt.Sprintf("agent-%d", n), Hostname: fmt.Sprintf("host-%d", n),
			Attributes: map[string]constraint.Value{},
		}}
		if rng.IntN(8) > 0 {
			a.Attributes["idc"] = constraint.Text(pick("sz", "sh", "gz"))
		}
		if rng.IntN(4) > 0 {
			a.Attributes["district"] = constraint.Text(pick("north", "south"))
		}
		if rng.IntN(2) == 0 {
			a.Attributes["gen"] = constraint.Scalar(float64(rng.IntN(5)))
		}
		if rng.IntN(6) == 0 {
			a.Taints = []constraint.Taint{{Key: "maintenance", Value: pick("true", "drain")}}
		}
		if rng.IntN(4) == 0 {
			a.Taints = append(a.Taints, constraint.Taint{Key: "spot", Value: pick("true", "soon"),
				Effect: constraint.TaintEffect(pick("", "NoSchedule", "PreferNoSchedule", "PreferNoSchedule"))})
		}
		for o := 0; o < rng.IntN(3); o++ {
			base := uint32(31000 + 10*rng.IntN(3))
			a.Offers = append(a.Offers, offer.Offer{
				ID: fmt.Sprintf("offer-%d-%d", n, o),
				Resources: offer.Resources{
					CPUs: float64(1+rng.IntN(8)) / 2, Mem: float64(256 * (1 + rng.IntN(8))), Disk: 1024,
					Ports: []offer.PortRange{{Begin: base, End: base + uint32(rng.IntN(6))}},
				},
			})
		}
		if rng.IntN(2) == 0 {
			a.Total = offer.Resources{CPUs: 8, Mem: 4096, Disk: 4096}
		}
		s.Snapshot.Agents = append(s.Snapshot.Agents, a)
	}
	labels := []string{"tier:db", "tier:web", "team:a"}
	nApps := 1 + rng.IntN(4)
	for k := 0; k < nApps; k++ {
		app := fmt.Sprintf("ns/app-%d", k)
		appLabels := []string{pick(labels...)}
		for i := 0; i < rng.IntN(3); i++ {
			s.Snapshot.Active = append(s.Snapshot.Active, offer.Instance{
				App: app, AgentID: fmt.Sprintf("agent-%d", rng.IntN(nAgents)), Labels: appLabels,
			})
		}
		req := &offer.Requirements{
			App:        app,
			Resources:  offer.Resources{CPUs: float64(rng.IntN(4)) / 4, Mem: float64(128 * rng.IntN(4)), Disk: 16},
			Constraint: randomConstraint(rng, pick),
			Labels:     appLabels,
		}
		for i := 0; i < rng.IntN(3); i++ {
			port := uint32(0)
			if rng.IntN(3) == 0 {
				port = uint32(31000 + rng.IntN(6))
			}
			req.Ports = append(req.Ports, offer.PortRequest{Name: fmt.Sprintf("p%d", i), HostPort: port})
		}
		s.Pending = append(s.Pending, TaskGroups(req, 1+rng.IntN(6))...)
	}
	return s
}

func randomConstraint(rng *rand.Rand, pick func(...string) string) *constraint.Compiled {
	b := constrainttest.New()
	cond := func() constraint.UnionData {
		switch rng.IntN(10) {
		case 0:
			return constrainttest.Unique(pick("hostname", "idc", "district"))
		case 1:
			return constrainttest.MaxPer(pick("hostname", "idc"), 1+rng.IntN(3))
		case 2:
			return constrainttest.Cluster(pick("idc", "district", "hostname"), pick("sz", "north", "host-1"), pick("sh", "south", "host-2"))
		case 3:
			return constrainttest.Like(pick("hostname", "idc"), pick("host-[0-3]", "s.", "g.*"))
		case 4:
			return constrainttest.Unlike(pick("hostname", "district"), pick("host-[02468]", "north"))
		case 5:
			return constrainttest.GroupBy(pick("idc", "district"), "sz", "sh", "gz", "north", "south")
		case 6:
			return constrainttest.Exclude(pick("tier:db", "tier:web", "team:a"))
		case 7:
			return constrainttest.Greater("gen", float64(rng.IntN(4)))
		case 8:
			return constrainttest.TolerateEffect("spot", pick("true", "soon"), constraint.TaintEffect(pick("", "NoSchedule", "PreferNoSchedule")))
		default:
			return constrainttest.Tolerate("maintenance", pick("true", "drain"))
		}
	}
	for i := 0; i < rng.IntN(4); i++ {
		conds := []constraint.UnionData{cond()}
		if rng.IntN(4) == 0 {
			conds = append(conds, cond())
		}
		b.Or(conds...)
	}
	for i := 0; i < rng.IntN(3); i++ {
		var conds []constraint.UnionData
		for len(conds) == 0 || rng.IntN(4) == 0 {
			if c := cond(); c.Operate != constraint.Toleration {
				conds = append(conds, c)
			}
		}
		b.Prefer(1+rng.IntN(constraint.MaxWeight), conds...)
	}
	return b.Build()
}
