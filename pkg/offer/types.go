package offer

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/constraint"
)

// Resources are scalar resources in Mesos units: cpus, and mem and disk in
// MB. Ports are only meaningful in offers.
type Resources struct {
	CPUs  float64
	Mem   float64
	Disk  float64
	Ports []PortRange
}

// PortRange is an inclusive range of host ports, as in a Mesos RANGES value.
type PortRange struct{ Begin, End uint32 }

// Offer is one outstanding Mesos offer.
type Offer struct {
	ID        string
	Resources Resources
}

// Agent is a Mesos agent as the matcher sees it. Agents without offers are
// still listed: their attributes count for GROUPBY and for the instances
// running on them, and rejection counts report them as "no offer".
type Agent struct {
	constraint.Agent
	Offers []Offer
	// Total is the agent's whole capacity, for the load share used to
	// spread. Zero means the offered resources are taken as the capacity.
	Total Resources
	// Unschedulable: the operator cordoned or drains the agent.
	Unschedulable bool
	// Maintenance: the master announced a maintenance window for it.
	Maintenance bool
}

// Instance is an active (non-terminal) instance of an application.
type Instance struct {
	App     string
	AgentID string
	Labels  []string // the application's labels, "key:value", for EXCLUDE
}

// Snapshot is the cluster as the matcher sees it for one pass.
type Snapshot struct {
	Agents []Agent
	Active []Instance
}

// PortRequest asks for a host port; HostPort 0 asks for a random free one.
type PortRequest struct {
	Name     string
	HostPort uint32
}

// Requirements are what every instance of one application version needs.
// Task groups sharing a *Requirements are placed together.
type Requirements struct {
	App        string    // application key, e.g. "ns/name": whose instances constraints count
	Resources  Resources // the sum over the group's tasks; the executor's are added by Config
	Ports      []PortRequest
	Constraint *constraint.Compiled // nil: no constraint
	Labels     []string             // the application's labels, "key:value", for EXCLUDE
}

// TaskGroup is one pending instance.
type TaskGroup struct {
	ID        string
	Req       *Requirements
	NotBefore time.Time // restart backoff: not placed before this time
	// Avoid is an agent this instance must not go to: it is moving away
	// from it.
	Avoid string
	// OnlyHost, when set, is the hostname of the only agent it may go to
	// (a drift to a named agent, a daemonset's instance).
	OnlyHost string
	// Prefer is the ID of an agent the instance goes to if it fits there
	// (a started instance back where it ran): a preference before the
	// spread and the load, never a refusal.
	Prefer string
}

// Plan is the outcome of one pass.
type Plan struct {
	Placements []Placement // in decision order
	Decline    []string    // IDs of offers no task group uses
	Unplaced   []Unplaced  // task groups that fit nowhere, in input order
	Deferred   []string    // task groups whose NotBefore is after now
}

// Placement launches a task group with every offer of an agent.
type Placement struct {
	TaskGroupID string
	AgentID     string
	OfferIDs    []string
	Ports       []AssignedPort // one per PortRequest, in request order
	// Fits, from Matcher.Explain only, counts the agents its application
	// version fit at its first placement of the pass, and why the others
	// did not; shared by the version's placements.
	Fits *Rejections
}

// AssignedPort is the host port given to a named port request.
type AssignedPort struct {
	Name string
	Port uint32
}

// Launch is every placement on one agent: one ACCEPT call.
type Launch struct {
	AgentID    string
	OfferIDs   []string
	Placements []Placement
}

// Launches groups the placements by agent, in order of each agent's first
// placement.
func (p *Plan) Launches() []Launch {
	var launches []Launch
	index := map[string]int{}
	for _, pl := range p.Placements {
		i, ok := index[pl.AgentID]
		if !ok {
			i = len(launches)
			index[pl.AgentID] = i
			launches = append(launches, Launch{AgentID: pl.AgentID, OfferIDs: pl.OfferIDs})
		}
		launches[i].Placements = append(launches[i].Placements, pl)
	}
	return launches
}

// Unplaced is a task group no agent could take, with the reasons.
type Unplaced struct {
	TaskGroupID string
	Rejections  *Rejections // shared by every unplaced instance of one application version
}

// The resource and offer reasons. Constraint reasons are the clause names
// of constraint.Compiled.Reason, e.g. "hostname UNIQUE".
const (
	ReasonNoOffer = "no offer"
	ReasonCPUs    = "cpus"
	ReasonMem     = "mem"
	ReasonDisk    = "disk"
	ReasonPorts   = "ports"
	ReasonTaint   = "taint"
	// ReasonMovedAway: the agent a moving instance leaves.
	ReasonMovedAway = "moving away"
	// ReasonUnschedulable: the agent is cordoned or drained.
	ReasonUnschedulable = "cordoned"
	// ReasonMaintenance: the agent is in (or before) a maintenance window.
	ReasonMaintenance = "maintenance"
	// ReasonNotTarget: the instance is bound to another agent (a drift
	// to a named agent, a daemonset's instance).
	ReasonNotTarget = "bound to another agent"
)

// Rejections counts, for one task group, the agents rejected per reason.
// Each agent is counted once, under the first check it failed (resources
// and ports first, then taints, then the constraint clauses in order).
type Rejections struct {
	Agents  int // agents considered: every agent of the snapshot
	Fit     int
	Reasons []ReasonCount // most agents first, then by name
}

// ReasonCount is how many agents one reason rejected.
type ReasonCount struct {
	Reason string
	Agents int
}

// String renders the counts for a user: "0/3 agents fit: hostname UNIQUE 2, mem 1".
func (r *Rejections) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d/%d agents fit", r.Fit, r.Agents)
	for i, rc := range r.Reasons {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString(", ")
		}
		b.WriteString(rc.Reason + " " + strconv.Itoa(rc.Agents))
	}
	return b.String()
}

func newRejections(agents int, counts map[string]int) *Rejections {
	r := &Rejections{Agents: agents}
	for reason, n := range counts {
		r.Reasons = append(r.Reasons, ReasonCount{Reason: reason, Agents: n})
	}
	sort.Slice(r.Reasons, func(i, j int) bool {
		if r.Reasons[i].Agents != r.Reasons[j].Agents {
			return r.Reasons[i].Agents > r.Reasons[j].Agents
		}
		return r.Reasons[i].Reason < r.Reasons[j].Reason
	})
	return r
}
