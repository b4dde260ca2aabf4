package offer_test

import (
	"reflect"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/constraint/constrainttest"
	"github.com/bcs-mesos/bcs-mesos/pkg/offer"
	"github.com/bcs-mesos/bcs-mesos/pkg/offer/offertest"
)

// Explain places as Place does and counts, per application version, the
// agents its first placement fit: why a task group waits for the offer of
// an agent it fits.
func TestExplainCountsTheAgentsAPlacedGroupFits(t *testing.T) {
	cordoned := offertest.Agent(3)
	cordoned.Unschedulable = true
	snap := &offer.Snapshot{Agents: []offer.Agent{offertest.Agent(1), offertest.Agent(2), cordoned},
		Active: []offer.Instance{{App: "ns/game", AgentID: "agent-1"}}}
	req := offertest.Requirements("ns/game")
	req.Constraint = constrainttest.New().Unique("hostname").Build()
	pending := offertest.TaskGroups(req, 2)

	plan := offertest.Matcher().Explain(snap, pending, now, 42)
	if len(plan.Placements) != 1 || plan.Placements[0].AgentID != "agent-2" {
		t.Fatalf("placements %+v: want instance 0 on agent-2", plan.Placements)
	}
	if got, want := plan.Placements[0].Fits.String(), "1/3 agents fit: cordoned 1, hostname UNIQUE 1"; got != want {
		t.Errorf("fits = %q, want %q", got, want)
	}
	if got, want := plan.Unplaced[0].Rejections.String(), "0/3 agents fit: hostname UNIQUE 2, cordoned 1"; got != want {
		t.Errorf("rejections = %q, want %q", got, want)
	}
	if placed := offertest.Matcher().Place(snap, pending, now, 42); placed.Placements[0].Fits != nil ||
		!reflect.DeepEqual(placed.Placements[0].AgentID, plan.Placements[0].AgentID) {
		t.Errorf("Place: %+v; want the same placement, without counts", placed.Placements[0])
	}
}

func TestResourcesArithmetic(t *testing.T) {
	offered := offer.Resources{CPUs: 4, Mem: 4096, Disk: 100, Ports: []offer.PortRange{{Begin: 31000, End: 31009}}}
	launched := offer.Resources{CPUs: 1.01, Mem: 288, Disk: 200, Ports: []offer.PortRange{{Begin: 31000, End: 31000}, {Begin: 31004, End: 31005}}}
	left := offered.Minus(launched)
	want := offer.Resources{CPUs: 4 - 1.01, Mem: 4096 - 288, Disk: 0,
		Ports: []offer.PortRange{{Begin: 31001, End: 31003}, {Begin: 31006, End: 31009}}}
	if !reflect.DeepEqual(left, want) {
		t.Errorf("Minus = %+v, want %+v (disk never below zero)", left, want)
	}
	back := left.Plus(offer.Resources{CPUs: 1.01, Ports: launched.Ports})
	if back.CPUs != 4 || !reflect.DeepEqual(back.Ports, offered.Ports) {
		t.Errorf("Plus = %+v, want the offered cpus and one merged range 31000-31009", back)
	}
	edges := offer.WithoutPorts([]offer.PortRange{{Begin: 1, End: 3}, {Begin: 65534, End: 65535}},
		[]offer.PortRange{{Begin: 1, End: 1}, {Begin: 3, End: 3}, {Begin: 65535, End: 65535}})
	if want := []offer.PortRange{{Begin: 2, End: 2}, {Begin: 65534, End: 65534}}; !reflect.DeepEqual(edges, want) {
		t.Errorf("WithoutPorts at the edges = %v, want %v", edges, want)
	}
}
