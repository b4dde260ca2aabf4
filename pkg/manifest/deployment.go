package manifest

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/bcs-mesos/bcs-mesos/pkg/constraint"
)

// Deployment is kind "deployment": the instances of one pod template,
// containers or processes, updated by a strategy when the template
// changes (seed 004 GameDeployment brought to the original's deployment).
type Deployment struct {
	WorkloadHeader
	// Stateful instances keep state on their agent: drains and drifts
	// leave them where they are unless forced (seed 002).
	Stateful bool           `json:"stateful,omitempty"`
	Spec     DeploymentSpec `json:"spec"`
}

// Kind implements Object.
func (*Deployment) Kind() Kind { return KindDeployment }

func (d *Deployment) normalize() {
	d.Metadata.normalize()
	d.Spec.Template.Spec.normalize()
	if d.Spec.Strategy == nil && d.Spec.UpdateStrategy == nil {
		// The original's own manifests omit the strategy: RollingUpdate
		// with its defaults.
		d.Spec.UpdateStrategy = &UpdateStrategy{Type: UpdateRolling}
	}
}

// DeploymentSpec is a deployment's "spec". The strategy comes in the
// original's shape (Strategy) or seed 004's (UpdateStrategy), not both.
type DeploymentSpec struct {
	Instance int `json:"instance"`
	// Selector is the original's; it is kept and shown, and selects
	// nothing: a deployment's instances are its own.
	Selector                map[string]string        `json:"selector,omitempty"`
	Strategy                *Strategy                `json:"strategy,omitempty"`
	UpdateStrategy          *UpdateStrategy          `json:"updateStrategy,omitempty"`
	PreDeleteUpdateStrategy *PreDeleteUpdateStrategy `json:"preDeleteUpdateStrategy,omitempty"`
	Template                DeploymentTemplate       `json:"template"`
}

// DeploymentTemplate is a deployment's pod template: containers, or (new
// with bcs-mesos) processes.
type DeploymentTemplate struct {
	// Metadata is the original's; its name and namespace are shown and
	// name nothing: the instances are named after the deployment.
	Metadata TemplateMeta           `json:"metadata"`
	Spec     DeploymentTemplateSpec `json:"spec"`
}

// DeploymentTemplateSpec is a pod spec of containers or of processes.
type DeploymentTemplateSpec struct {
	PodSpec
	Processes []ProcessSpec `json:"processes,omitempty"`
}

func (s *DeploymentTemplateSpec) normalize() {
	s.PodSpec.normalize()
	for i := range s.Processes {
		s.Processes[i].normalize()
	}
}

// MarshalJSON writes a template of processes without the containers'
// fields, which mean nothing to it.
func (s DeploymentTemplateSpec) MarshalJSON() ([]byte, error) {
	if len(s.Processes) > 0 && len(s.Containers) == 0 && s.NetworkMode == "" && s.NetworkType == "" && s.NetLimit == nil {
		return json.Marshal(struct {
			Processes []ProcessSpec `json:"processes"`
			Depends   []DependsRef  `json:"depends,omitempty"`
		}{s.Processes, s.Depends})
	}
	type plain DeploymentTemplateSpec // without this method
	return json.Marshal(plain(s))
}

// Workload returns what runs for obj: an application or process manifest
// as is, and for a deployment or daemonset the application (containers)
// or process manifest of its template, under its name.
func Workload(obj Object) (Object, error) {
	switch m := obj.(type) {
	case *Application, *Process:
		return m, nil
	case *Deployment:
		return m.workload(), nil
	case *Daemonset:
		return m.deployment().workload(), nil
	}
	return nil, fmt.Errorf("kind %q does not run instances", obj.Kind())
}

// IsStateful reports whether a workload's instances keep state on their
// agent (drains and drifts leave them unless forced).
func IsStateful(obj Object) bool {
	switch m := obj.(type) {
	case *Application:
		return m.Stateful
	case *Process:
		return m.Stateful
	case *Deployment:
		return m.Stateful
	}
	return false
}

// ConstraintOf returns a workload's placement constraint; nil when it has
// none.
func ConstraintOf(obj Object) *constraint.Constraint {
	switch m := obj.(type) {
	case *Application:
		return m.Constraint
	case *Process:
		return m.Constraint
	case *Deployment:
		return m.Constraint
	case *Daemonset:
		return m.Constraint
	}
	return nil
}

func (d *Deployment) workload() Object {
	if len(d.Spec.Template.Spec.Processes) > 0 {
		p := &Process{WorkloadHeader: d.WorkloadHeader.as(KindProcess), Stateful: d.Stateful}
		p.Spec.Instance = d.Spec.Instance
		p.Spec.Template.Spec.Processes = d.Spec.Template.Spec.Processes
		p.Spec.Template.Spec.Depends = d.Spec.Template.Spec.Depends
		return p
	}
	a := &Application{WorkloadHeader: d.WorkloadHeader.as(KindApplication), Stateful: d.Stateful}
	a.Spec.Instance = d.Spec.Instance
	a.Spec.Template = PodTemplate{Metadata: d.Spec.Template.Metadata, Spec: d.Spec.Template.Spec.PodSpec}
	return a
}

// UpdateType is updateStrategy.type (seed 004).
type UpdateType string

// Seed 004: "支持 RollingUpdate, InplaceUpdate, HotPatchUpdate 三种更新策略".
const (
	// UpdateRolling replaces instances: kill, then launch the new
	// revision (or launch surge instances first).
	UpdateRolling UpdateType = "RollingUpdate"
	// UpdateInPlace restarts the changed containers or processes in the
	// same task group: same agent, ports, CNI IP and instance.
	UpdateInPlace UpdateType = "InplaceUpdate"
	// UpdateHotPatch restarts nothing: new files are put in place and
	// the application told to reload.
	UpdateHotPatch UpdateType = "HotPatchUpdate"
)

// Rolling orders of the original (spec.strategy.rollingupdate.rollingOrder).
const (
	// RollingCreateFirst launches the surge instances before killing old
	// ones (the default).
	RollingCreateFirst = "CreateFirst"
	// RollingDeleteFirst kills before it launches: never more instances
	// than spec.instance, maxSurge unused.
	RollingDeleteFirst = "DeleteFirst"
)

// UpdateStrategy is seed 004's spec.updateStrategy, and the form the
// original's spec.strategy is read into (Deployment.UpdateStrategyOf).
type UpdateStrategy struct {
	Type UpdateType `json:"type"`
	// Partition: only instances with an ID ≥ partition are updated.
	Partition int `json:"partition,omitempty"`
	// MaxUnavailable and MaxSurge are counts or percentages of
	// spec.instance (defaults 25% and 0; a percentage of MaxUnavailable
	// rounds down, of MaxSurge up).
	MaxUnavailable         *IntOrPercent           `json:"maxUnavailable,omitempty" alias:"maxUnavilable"`
	MaxSurge               *IntOrPercent           `json:"maxSurge,omitempty"`
	InPlaceUpdateStrategy  *InPlaceUpdateStrategy  `json:"inPlaceUpdateStrategy,omitempty"`
	HotPatchUpdateStrategy *HotPatchUpdateStrategy `json:"hotPatchUpdateStrategy,omitempty"`
	Canary                 *CanaryStrategy         `json:"canary,omitempty"`
	// Paused starts the rollout paused (resume continues it).
	Paused bool `json:"paused,omitempty"`
	// UpgradeDuration is the original's wait in seconds between batches.
	UpgradeDuration int `json:"upgradeDuration,omitempty"`
	// RollingOrder is the original's CreateFirst (default) or DeleteFirst.
	RollingOrder string `json:"rollingOrder,omitempty"`
	// RollingManually pauses after every batch until promote (the
	// original's rollingManually).
	RollingManually bool `json:"rollingManually,omitempty"`
	// AllocatedTimeoutSeconds: an allocated instance (a game session runs
	// on it) is updated only once released, or this long after the
	// rollout began; 0 waits for the release.
	AllocatedTimeoutSeconds int `json:"allocatedTimeoutSeconds,omitempty"`
}

// InPlaceUpdateStrategy is seed 004's updateStrategy.inPlaceUpdateStrategy.
type InPlaceUpdateStrategy struct {
	// GracePeriodSeconds: an instance is marked not ready this long before
	// its containers or processes restart, so traffic drains (default 0).
	GracePeriodSeconds int `json:"gracePeriodSeconds"`
}

// HotPatchUpdateStrategy says how a hot-patched container learns of its
// new files: a signal to its main process or a command run in it.
// Processes run their reloadCmd.
type HotPatchUpdateStrategy struct {
	// Signal is a signal name ("SIGHUP", "HUP") or number.
	Signal  string   `json:"signal,omitempty"`
	Command []string `json:"command,omitempty"`
}

// CanaryStrategy is seed 004's updateStrategy.canary.
type CanaryStrategy struct {
	Steps []CanaryStep `json:"steps"`
}

// CanaryStep is one step of a canary: exactly one field is set.
type CanaryStep struct {
	// Partition updates the instances with an ID ≥ Partition.
	Partition *int `json:"partition,omitempty"`
	// Pause waits for promote ({}), or Duration seconds.
	Pause *PauseStep `json:"pause,omitempty"`
	// Hook runs a HookTemplate and goes on when it succeeds.
	Hook *HookStep `json:"hook,omitempty"`
}

// PauseStep is a canary pause: until promote, or for Duration seconds.
type PauseStep struct {
	Duration *int `json:"duration,omitempty"`
}

// HookStep names a HookTemplate and its arguments (seed 003).
type HookStep struct {
	TemplateName string    `json:"templateName"`
	Args         []HookArg `json:"args,omitempty"`
}

// HookArg is one argument of a hook.
type HookArg struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// PreDeleteUpdateStrategy is seed 004's preDeleteUpdateStrategy: a hook
// that must succeed before an instance is deleted (scale-down, delete)
// or restarted by an update (rolling, in place); the instance waits,
// running a new run while one fails ("如果返回不 ok,那么就继续等待").
type PreDeleteUpdateStrategy struct {
	Hook *HookStep `json:"hook,omitempty"`
	// TimeoutSeconds ends the wait: the instance goes after that long
	// even without a successful run (0: it waits for as long as it takes).
	TimeoutSeconds int `json:"timeoutSeconds,omitempty"`
}

// Strategy is the original's spec.strategy.
type Strategy struct {
	Type          UpdateType     `json:"type"`
	RollingUpdate *RollingUpdate `json:"rollingupdate,omitempty" alias:"rollingUpdate"`
}

// RollingUpdate is the original's spec.strategy.rollingupdate.
type RollingUpdate struct {
	// MaxUnavailable keeps the original's spelling "maxUnavilable" and
	// accepts the right one.
	MaxUnavailable  *IntOrPercent `json:"maxUnavilable,omitempty" alias:"maxUnavailable"`
	MaxSurge        *IntOrPercent `json:"maxSurge,omitempty"`
	UpgradeDuration int           `json:"upgradeDuration,omitempty"`
	RollingOrder    string        `json:"rollingOrder,omitempty"`
	RollingManually bool          `json:"rollingManually,omitempty"`
}

// UpdateStrategyOf returns the strategy obj's updates follow: a
// deployment's or daemonset's, read from either shape; RollingUpdate with
// its defaults for applications and processes.
func UpdateStrategyOf(obj Object) UpdateStrategy {
	d, ok := AsDeployment(obj)
	switch {
	case !ok:
		return UpdateStrategy{Type: UpdateRolling}
	case d.Spec.UpdateStrategy != nil:
		return *d.Spec.UpdateStrategy
	case d.Spec.Strategy != nil:
		s := UpdateStrategy{Type: d.Spec.Strategy.Type}
		if ru := d.Spec.Strategy.RollingUpdate; ru != nil {
			s.MaxUnavailable, s.MaxSurge = ru.MaxUnavailable, ru.MaxSurge
			s.UpgradeDuration, s.RollingOrder, s.RollingManually = ru.UpgradeDuration, ru.RollingOrder, ru.RollingManually
		}
		return s
	}
	return UpdateStrategy{Type: UpdateRolling}
}

// AsDeployment returns the deployment obj is updated as: a deployment,
// or a daemonset's template and strategies; ok is false for other kinds.
func AsDeployment(obj Object) (d *Deployment, ok bool) {
	switch m := obj.(type) {
	case *Deployment:
		return m, true
	case *Daemonset:
		return m.deployment(), true
	}
	return nil, false
}

// IntOrPercent is a count written as a number (2) or a percentage of
// spec.instance ("25%").
type IntOrPercent struct {
	Value   int
	Percent bool
}

// Count returns a plain count.
func Count(n int) *IntOrPercent { return &IntOrPercent{Value: n} }

// Percent returns a percentage.
func Percent(p int) *IntOrPercent { return &IntOrPercent{Value: p, Percent: true} }

// UnmarshalJSON reads 2 or "25%".
func (q *IntOrPercent) UnmarshalJSON(b []byte) error {
	var n int
	if err := json.Unmarshal(b, &n); err == nil {
		*q = IntOrPercent{Value: n}
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("want a number or a percentage such as \"25%%\", got %s", b)
	}
	digits, ok := strings.CutSuffix(s, "%")
	p, err := strconv.Atoi(digits)
	if !ok || err != nil {
		return fmt.Errorf("want a number or a percentage such as \"25%%\", got %q", s)
	}
	*q = IntOrPercent{Value: p, Percent: true}
	return nil
}

// MarshalJSON writes 2 or "25%".
func (q IntOrPercent) MarshalJSON() ([]byte, error) {
	if q.Percent {
		return json.Marshal(q.String())
	}
	return json.Marshal(q.Value)
}

func (q IntOrPercent) String() string {
	if q.Percent {
		return strconv.Itoa(q.Value) + "%"
	}
	return strconv.Itoa(q.Value)
}

// Resolve returns the count q stands for out of total: a percentage
// rounds up or down as asked.
func (q IntOrPercent) Resolve(total int, roundUp bool) int {
	if !q.Percent {
		return q.Value
	}
	n := q.Value * total
	if roundUp {
		return (n + 99) / 100
	}
	return n / 100
}
