package apiv1

import "time"

// AgentView is an agent as GET /v1/agents shows it: its settings, what
// the master says of it, and the instances on it of the namespaces the
// caller may read (the others counted, not named).
type AgentView struct {
	ID         string            `json:"id,omitempty"`
	Hostname   string            `json:"hostname"`
	Attributes map[string]string `json:"attributes,omitempty"`
	// Endpoint is where its own HTTP API answers (host:port); task logs
	// are read from its files API.
	Endpoint string `json:"endpoint,omitempty"`
	// LastSeen is when an offer of it was last recorded.
	LastSeen *time.Time `json:"lastSeen,omitempty"`
	// Schedulable: new instances may be placed on it — not cordoned, not
	// draining, not deactivated by the master, not in (or before) a
	// maintenance window.
	Schedulable bool       `json:"schedulable"`
	Cordoned    bool       `json:"cordoned"`
	Taints      []string   `json:"taints"`
	Reason      string     `json:"reason,omitempty"`
	Drain       *DrainView `json:"drain,omitempty"`
	// Evictions are the running instances a NoExecute taint of the agent
	// moves off, to come or under way: at once (at: when the taint was
	// set) or when their toleration's seconds are over; those of the
	// namespaces the caller may read.
	Evictions []PendingEviction `json:"evictions,omitempty"`
	// Master is the master's view of it (GET_AGENTS): state, its own
	// drain (DRAIN_AGENT), total resources.
	Master *AgentMaster `json:"master,omitempty"`
	// Maintenance is the master's maintenance window for it and the
	// scheduler's answer to its inverse offer.
	Maintenance *AgentMaintenance `json:"maintenance,omitempty"`
	// Used is what our instances on it took (cpus, mem in MB), every
	// namespace's.
	Used UsedView `json:"used"`
	// Instances are those of the namespaces the caller may read; Others
	// counts the rest, which are not named. With ?summary=true they are
	// left out and InstanceCount counts them: a list of 5,000 agents
	// would otherwise carry every instance of the fleet.
	Instances     []AgentInstance `json:"instances,omitzero"`
	InstanceCount int             `json:"instanceCount,omitempty"`
	Others        int             `json:"others"`
}

// UsedView is what the scheduler's instances take of an agent.
type UsedView struct {
	CPUs  float64 `json:"cpus"`
	MemMB float64 `json:"memMB"`
}

// DrainView is an agent's drain.
type DrainView struct {
	Since time.Time `json:"since"`
	Force bool      `json:"force,omitempty"`
	// State is "draining" while instances are left to move, "drained"
	// when only kept (stateful) instances or none are left. Remaining
	// counts every namespace's; Moving, Blocked and Kept name those of
	// the namespaces the caller may read.
	State     string   `json:"state"`
	Remaining int      `json:"remaining"`
	Moving    []string `json:"moving"`
	// Blocked are the moves whose successor fits on no agent, and why;
	// the others go on meanwhile.
	Blocked []BlockedMove `json:"blocked"`
	Kept    []string      `json:"kept"`
}

// PendingEviction is an instance a NoExecute taint moves off its agent.
type PendingEviction struct {
	Instance string    `json:"instance"` // namespace/app/index
	At       time.Time `json:"at"`
}

// BlockedMove is an instance whose move waits for an agent that fits it.
type BlockedMove struct {
	Instance string `json:"instance"` // namespace/app/index
	// Why is the last placement's verdict: "0/2 agents fit: cordoned 1,
	// hostname UNIQUE 1".
	Why string `json:"why"`
}

// AgentInstance is an instance on an agent.
type AgentInstance struct {
	App   string `json:"app"` // namespace/name
	Index int    `json:"index"`
	ID    string `json:"taskGroupID"`
	Phase string `json:"phase"`
	// Successor: this launch replaces the instance (a move under way).
	Successor bool   `json:"successor,omitempty"`
	Move      string `json:"move,omitempty"`
}

// AgentMaster is what the master's operator API says of an agent.
type AgentMaster struct {
	// Active: registered, connected and not deactivated.
	Active      bool `json:"active"`
	Deactivated bool `json:"deactivated,omitempty"`
	// Recovered: known from the master's registry after its failover,
	// not reregistered yet.
	Recovered bool `json:"recovered,omitempty"`
	// Drain is the master's drain of the agent (DRAIN_AGENT): "DRAINING",
	// "DRAINED", or "" for none.
	Drain string `json:"drain,omitempty"`
	// Total is what the agent provides, to every framework.
	Total AgentResources `json:"total"`
}

// AgentResources are an agent's scalar resources and its port count.
type AgentResources struct {
	CPUs   float64 `json:"cpus"`
	MemMB  float64 `json:"memMB"`
	DiskMB float64 `json:"diskMB"`
	Ports  int     `json:"ports"`
}

// AgentMaintenance is a maintenance window of the agent's machine, as
// its offers and inverse offers announce it, and how the scheduler
// answered.
type AgentMaintenance struct {
	Start time.Time `json:"start"`
	// End is zero for a window with no end.
	End time.Time `json:"end,omitzero"`
	// Answer is the scheduler's answer to the master's inverse offer:
	// "" before one came, "pending" while instances are moved off,
	// "accepted" once none is left, "declined" while only instances
	// that stay (stateful) are.
	Answer string `json:"answer,omitempty"`
}

// AgentRequest is the optional body of cordon, drain and taints.
type AgentRequest struct {
	Reason string   `json:"reason"`
	Force  bool     `json:"force"`
	Taints []string `json:"taints"`
}

// DriftRequest moves instances off an agent (seed 002's drift): every
// instance on it, those of one application, or one instance, to the agent
// To names or anywhere. Stateful applications stay unless Force.
type DriftRequest struct {
	FromHost  string `json:"-"`
	To        string `json:"to"`
	Namespace string `json:"namespace"`
	App       string `json:"app"`
	// Instance is the instance ID; nil moves every instance.
	Instance *int `json:"instance"`
	Force    bool `json:"force"`
}
