package mesosoperator

import (
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/allocator"
	"github.com/mesos/mesos-go/api/v1/lib/maintenance"
	"github.com/mesos/mesos-go/api/v1/lib/master"

	"github.com/bcs-mesos/bcs-mesos/pkg/constraint"
	"github.com/bcs-mesos/bcs-mesos/pkg/offer"
)

// Agent is one agent as the master reports it.
type Agent struct {
	ID       string
	Hostname string
	Port     int32
	PID      string // "slave(1)@ip:port"
	Version  string
	// Active: registered, connected and not deactivated — its resources
	// are offered.
	Active bool
	// Deactivated by DEACTIVATE_AGENT or DRAIN_AGENT, until
	// REACTIVATE_AGENT.
	Deactivated bool
	// Recovered: known from the registry after a master failover but not
	// reregistered yet; only ID, Hostname, Port, Attributes and Total are
	// known.
	Recovered  bool
	Attributes map[string]constraint.Value
	// Total is what the agent provides; Allocated what its tasks and
	// executors hold; Offered what outstanding offers hold.
	Total, Allocated, Offered offer.Resources
	// Drain is set while the agent drains and once it is drained.
	Drain          *Drain
	RegisteredAt   time.Time
	ReregisteredAt time.Time
}

// DrainState is where a drain is.
type DrainState string

// Drain states (mesos.proto DrainState); DrainUnknown is a state this
// client does not know, from a newer master.
const (
	Draining     DrainState = "DRAINING"
	Drained      DrainState = "DRAINED"
	DrainUnknown DrainState = "UNKNOWN"
)

// Drain is an agent's drain: its state and how it was asked for.
type Drain struct {
	State DrainState
	// MaxGracePeriod caps the tasks' kill grace periods; NoMaxGracePeriod
	// when the drain caps nothing.
	MaxGracePeriod time.Duration
	MarkGone       bool
	// EstimatedStart is when the master expects the drain began (whole
	// seconds); zero when it does not say.
	EstimatedStart time.Time
}

// MaintenanceStatus is the cluster's maintenance state.
type MaintenanceStatus struct {
	Draining []DrainingMachine
	Down     []Machine
}

// Machine is a machine of the maintenance schedule: a hostname, an IP or
// both (an agent's machine has both).
type Machine struct {
	Hostname string
	IP       string
}

// DrainingMachine is a machine in the schedule and the answers the
// frameworks gave to the inverse offers for its agents.
type DrainingMachine struct {
	Machine
	Answers []InverseOfferAnswer
}

// InverseOfferAnswer is one framework's latest answer to an inverse
// offer for an agent of the machine; Answer is "ACCEPT", "DECLINE" or
// "UNKNOWN".
type InverseOfferAnswer struct {
	FrameworkID string
	Answer      string
	At          time.Time
}

// Endpoint is where the agent's HTTP API answers, host:port: the address
// of its PID, else its hostname and port ("" without a port).
func (a Agent) Endpoint() string {
	if _, addr, ok := strings.Cut(a.PID, "@"); ok && addr != "" {
		return addr
	}
	if a.Port == 0 || a.Hostname == "" {
		return ""
	}
	return net.JoinHostPort(a.Hostname, strconv.Itoa(int(a.Port)))
}

func agentOf(a master.Response_GetAgents_Agent) Agent {
	out := Agent{
		ID:          a.AgentInfo.GetID().GetValue(),
		Hostname:    a.AgentInfo.Hostname,
		Port:        a.AgentInfo.GetPort(),
		PID:         a.GetPID(),
		Version:     a.Version,
		Active:      a.Active,
		Deactivated: a.GetDeactivated(),
		Attributes:  Attributes(a.AgentInfo.Attributes),
		Total:       Resources(a.TotalResources),
		Allocated:   Resources(a.AllocatedResources),
		Offered:     Resources(a.OfferedResources),
	}
	if t := a.RegisteredTime; t != nil {
		out.RegisteredAt = time.Unix(0, t.Nanoseconds)
	}
	if t := a.ReregisteredTime; t != nil {
		out.ReregisteredAt = time.Unix(0, t.Nanoseconds)
	}
	if d := a.DrainInfo; d != nil {
		drain := &Drain{State: drainState(d.State), MaxGracePeriod: NoMaxGracePeriod, MarkGone: d.Config.GetMarkGone()}
		if g := d.Config.MaxGracePeriod; g != nil {
			drain.MaxGracePeriod = time.Duration(g.Nanoseconds)
		}
		if t := a.EstimatedDrainStartTime; t != nil {
			drain.EstimatedStart = time.Unix(0, t.Nanoseconds)
		}
		out.Drain = drain
	}
	return out
}

func recoveredAgentOf(info mesos.AgentInfo) Agent {
	return Agent{
		ID:         info.GetID().GetValue(),
		Hostname:   info.Hostname,
		Port:       info.GetPort(),
		Recovered:  true,
		Attributes: Attributes(info.Attributes),
		Total:      Resources(info.Resources),
	}
}

func drainState(s mesos.DrainState) DrainState {
	switch s {
	case mesos.DrainState_DRAINING:
		return Draining
	case mesos.DrainState_DRAINED:
		return Drained
	}
	return DrainUnknown
}

func maintenanceStatusOf(s maintenance.ClusterStatus) MaintenanceStatus {
	var out MaintenanceStatus
	for _, dm := range s.DrainingMachines {
		m := DrainingMachine{Machine: machineOf(dm.ID)}
		for _, st := range dm.Statuses {
			answer := "UNKNOWN"
			switch st.GetStatus() {
			case allocator.InverseOfferStatus_ACCEPT:
				answer = "ACCEPT"
			case allocator.InverseOfferStatus_DECLINE:
				answer = "DECLINE"
			}
			m.Answers = append(m.Answers, InverseOfferAnswer{FrameworkID: st.FrameworkID.Value, Answer: answer, At: time.Unix(0, st.Timestamp.Nanoseconds)})
		}
		out.Draining = append(out.Draining, m)
	}
	for _, id := range s.DownMachines {
		out.Down = append(out.Down, machineOf(id))
	}
	return out
}

func machineOf(id mesos.MachineID) Machine {
	return Machine{Hostname: id.GetHostname(), IP: id.GetIP()}
}

// Attributes turns Mesos agent attributes into the values constraints
// compare.
func Attributes(attrs []mesos.Attribute) map[string]constraint.Value {
	out := make(map[string]constraint.Value, len(attrs))
	for _, a := range attrs {
		switch a.Type {
		case mesos.SCALAR:
			out[a.Name] = constraint.Scalar(a.GetScalar().GetValue())
		case mesos.SET:
			out[a.Name] = constraint.Set(a.GetSet().GetItem()...)
		case mesos.RANGES:
			var rs []constraint.Range
			for _, r := range a.GetRanges().GetRange() {
				rs = append(rs, constraint.Range{Begin: r.Begin, End: r.End})
			}
			out[a.Name] = constraint.Ranges(rs...)
		default:
			out[a.Name] = constraint.Text(a.GetText().GetValue())
		}
	}
	return out
}

// Resources sums Mesos resources of any role and allocation into the
// amounts placement reads: cpus, mem and disk, and the port ranges in
// order.
func Resources(rs []mesos.Resource) offer.Resources {
	var out offer.Resources
	for _, r := range rs {
		switch r.Name {
		case "cpus":
			out.CPUs += r.GetScalar().GetValue()
		case "mem":
			out.Mem += r.GetScalar().GetValue()
		case "disk":
			out.Disk += r.GetScalar().GetValue()
		case "ports":
			for _, pr := range r.GetRanges().GetRange() {
				out.Ports = append(out.Ports, offer.PortRange{Begin: uint32(pr.Begin), End: uint32(pr.End)})
			}
		}
	}
	sort.Slice(out.Ports, func(i, j int) bool { return out.Ports[i].Begin < out.Ports[j].Begin })
	return out
}
