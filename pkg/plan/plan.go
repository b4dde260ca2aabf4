package plan

import (
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/rollout"
)

// Action is what storing the manifest would be.
type Action string

// The actions of a plan.
const (
	// Create: no such workload runs; every instance is placed.
	Create Action = "create"
	// Update: a new version, rolled out by its strategy.
	Update Action = "update"
	// Unchanged: the same pod template and instance count as the
	// current version; no instance would change.
	Unchanged Action = "unchanged"
)

// InstanceAction is what would happen to one instance.
type InstanceAction string

// The instance actions.
const (
	// Place launches an instance that does not run: a new one (create,
	// scale-up, surge) or one waiting for its launch.
	Place InstanceAction = "place"
	// Keep leaves a running instance as it is.
	Keep InstanceAction = "keep"
	// UpdateInstance updates a running instance in its task group, on
	// its agent: in place or hot patched (Instance.UpdateMode).
	UpdateInstance InstanceAction = "update"
	// Recreate kills an instance and launches it anew, wherever it
	// fits: a RollingUpdate, or an in-place update it cannot take.
	Recreate InstanceAction = "recreate"
	// Kill removes an instance (scale-down).
	Kill InstanceAction = "kill"
)

// Plan is what storing a workload manifest would do.
type Plan struct {
	Kind      manifest.Kind `json:"kind"`
	Namespace string        `json:"namespace"`
	Name      string        `json:"name"`
	Action    Action        `json:"action"`
	// CurrentVersion is the version running now (update, unchanged).
	CurrentVersion uint64     `json:"currentVersion,omitempty"`
	Instances      []Instance `json:"instances"`
	Summary        Summary    `json:"summary"`
	// Rollout is how the update's rollout would begin (update).
	Rollout  *Rollout `json:"rollout,omitempty"`
	Warnings []string `json:"warnings"`
}

// Instance is one instance's part in a plan.
type Instance struct {
	Index  int            `json:"index"`
	Action InstanceAction `json:"action"`
	// Agent and Hostname are where it runs (keep, update, kill) or
	// would be placed (place, recreate); empty when it fits no agent.
	Agent    string `json:"agent,omitempty"`
	Hostname string `json:"hostname,omitempty"`
	// Revision is the version it would run: the new one, or the stable
	// one below a partition.
	Revision uint64 `json:"revision,omitempty"`
	// UpdateMode is how an update or recreate goes: InPlace, HotPatch,
	// Replace.
	UpdateMode registry.UpdateMode `json:"updateMode,omitempty"`
	// Surge marks an extra instance the rollout keeps while it updates.
	Surge bool `json:"surge,omitempty"`
	// Message says why, when there is more to say (an in-place update
	// replaced instead, a hot patch that cannot apply).
	Message string `json:"message,omitempty"`
	// Pending is the matcher's verdict for a launch that fits no agent
	// now: it would wait.
	Pending *registry.Pending `json:"pending,omitempty"`
}

// Summary counts the instances by action; Pending counts the launches
// (place, recreate) that fit no agent, which Place and Recreate do not.
type Summary struct {
	Place    int `json:"place"`
	Keep     int `json:"keep"`
	Update   int `json:"update"`
	Recreate int `json:"recreate"`
	Kill     int `json:"kill"`
	Pending  int `json:"pending"`
}

// Rollout is the first step of an update's rollout: its phase and what
// it says (a pause, a canary step, the budget).
type Rollout struct {
	Phase   rollout.Phase `json:"phase"`
	Message string        `json:"message"`
}

// Summarize counts p's instances into p.Summary.
func (p *Plan) Summarize() {
	p.Summary = Summary{}
	for _, inst := range p.Instances {
		s := &p.Summary
		switch {
		case inst.Pending != nil:
			s.Pending++
		case inst.Action == Place:
			s.Place++
		case inst.Action == Keep:
			s.Keep++
		case inst.Action == UpdateInstance:
			s.Update++
		case inst.Action == Recreate:
			s.Recreate++
		case inst.Action == Kill:
			s.Kill++
		}
	}
}
