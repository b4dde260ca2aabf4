package apiv1

import (
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/rollout"
)

// Plan is what POST /v1/plan (and ?dryRun=true) answers: what storing a
// workload manifest would do, nothing stored or launched.
type Plan struct {
	Kind      manifest.Kind `json:"kind"`
	Namespace string        `json:"namespace"`
	Name      string        `json:"name"`
	// Action is create, update or unchanged.
	Action string `json:"action"`
	// CurrentVersion is the version running now (update, unchanged).
	CurrentVersion uint64         `json:"currentVersion,omitempty"`
	Instances      []PlanInstance `json:"instances"`
	Summary        PlanSummary    `json:"summary"`
	// Rollout is how the update's rollout would begin (update).
	Rollout  *PlanRollout `json:"rollout,omitempty"`
	Warnings []string     `json:"warnings"`
}

// PlanInstance is one instance's part in a plan.
type PlanInstance struct {
	Index int `json:"index"`
	// Action is place, keep, update, recreate or kill.
	Action string `json:"action"`
	// Agent and Hostname are where it runs (keep, update, kill) or
	// would be placed (place, recreate); empty when it fits no agent.
	Agent    string `json:"agent,omitempty"`
	Hostname string `json:"hostname,omitempty"`
	// Revision is the version it would run: the new one, or the stable
	// one below a partition.
	Revision uint64 `json:"revision,omitempty"`
	// UpdateMode is how an update or recreate goes: InPlace, HotPatch,
	// Replace.
	UpdateMode string `json:"updateMode,omitempty"`
	// Surge marks an extra instance the rollout keeps while it updates.
	Surge bool `json:"surge,omitempty"`
	// Message says why, when there is more to say (an in-place update
	// replaced instead, a hot patch that cannot apply).
	Message string `json:"message,omitempty"`
	// Pending is the matcher's verdict for a launch that fits no agent
	// now: it would wait.
	Pending *Pending `json:"pending,omitempty"`
}

// PlanSummary counts the instances by action; Pending counts the
// launches (place, recreate) that fit no agent, which Place and Recreate
// do not.
type PlanSummary struct {
	Place    int `json:"place"`
	Keep     int `json:"keep"`
	Update   int `json:"update"`
	Recreate int `json:"recreate"`
	Kill     int `json:"kill"`
	Pending  int `json:"pending"`
}

// PlanRollout is the first step of an update's rollout: its phase and
// what it says (a pause, a canary step, the budget).
type PlanRollout struct {
	Phase   rollout.Phase `json:"phase"`
	Message string        `json:"message"`
}
