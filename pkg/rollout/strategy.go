package rollout

import (
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
)

// Default budget of seed 004: "maxUnavailable 默认值为 25%", "maxSurge 默认值为 0".
var (
	DefaultMaxUnavailable = manifest.IntOrPercent{Value: 25, Percent: true}
	DefaultMaxSurge       = manifest.IntOrPercent{}
)

// Strategy is an update strategy with its defaults applied.
type Strategy struct {
	Type           manifest.UpdateType
	Partition      int
	MaxUnavailable manifest.IntOrPercent
	MaxSurge       manifest.IntOrPercent
	// InPlaceGrace is inPlaceUpdateStrategy.gracePeriodSeconds.
	InPlaceGrace time.Duration
	// ReloadSignal / ReloadCommand tell a hot-patched container to reload.
	ReloadSignal  int
	ReloadCommand []string
	Steps         []Step
	// UpgradeDuration is the wait between batches.
	UpgradeDuration time.Duration
	// DeleteFirst kills before it launches (no surge).
	DeleteFirst bool
	// Manual waits for promote after every batch (rollingManually).
	Manual bool
	// PreDelete is the hook an instance must pass before it is deleted
	// or restarted by an update (preDeleteUpdateStrategy); nil: none.
	// PreDeleteTimeout ends the wait (0: none).
	PreDelete        *manifest.HookStep
	PreDeleteTimeout time.Duration
	// AllocatedTimeout ends the wait for an allocated instance's release
	// that long after the rollout began (0: none).
	AllocatedTimeout time.Duration
}

// StepKind is what a canary step does.
type StepKind string

// The canary steps of seed 004.
const (
	StepPartition StepKind = "partition"
	StepPause     StepKind = "pause"
	StepHook      StepKind = "hook"
)

// Step is one canary step.
type Step struct {
	Kind      StepKind
	Partition int
	// Duration of a pause; 0 waits for promote.
	Duration time.Duration
	Hook     *manifest.HookStep
}

// StrategyOf reads a manifest's update strategy (manifest.UpdateStrategyOf)
// with the defaults filled in. It expects a validated manifest.
func StrategyOf(obj manifest.Object) Strategy {
	us := manifest.UpdateStrategyOf(obj)
	s := Strategy{
		Type: us.Type, Partition: us.Partition, MaxUnavailable: DefaultMaxUnavailable, MaxSurge: DefaultMaxSurge,
		UpgradeDuration: time.Duration(us.UpgradeDuration) * time.Second,
		DeleteFirst:     us.RollingOrder == manifest.RollingDeleteFirst, Manual: us.RollingManually,
		AllocatedTimeout: time.Duration(us.AllocatedTimeoutSeconds) * time.Second,
	}
	if s.Type == "" {
		s.Type = manifest.UpdateRolling
	}
	if us.MaxUnavailable != nil {
		s.MaxUnavailable = *us.MaxUnavailable
	}
	if us.MaxSurge != nil {
		s.MaxSurge = *us.MaxSurge
	}
	if ip := us.InPlaceUpdateStrategy; ip != nil {
		s.InPlaceGrace = time.Duration(ip.GracePeriodSeconds) * time.Second
	}
	if hp := us.HotPatchUpdateStrategy; hp != nil {
		if sig, err := manifest.ParseSignal(hp.Signal); err == nil && hp.Signal != "" {
			s.ReloadSignal = int(sig)
		}
		s.ReloadCommand = hp.Command
	}
	if d, ok := manifest.AsDeployment(obj); ok && d.Spec.PreDeleteUpdateStrategy != nil {
		s.PreDelete = d.Spec.PreDeleteUpdateStrategy.Hook
		s.PreDeleteTimeout = time.Duration(d.Spec.PreDeleteUpdateStrategy.TimeoutSeconds) * time.Second
	}
	if us.Canary != nil {
		for _, cs := range us.Canary.Steps {
			switch {
			case cs.Partition != nil:
				s.Steps = append(s.Steps, Step{Kind: StepPartition, Partition: *cs.Partition})
			case cs.Pause != nil:
				st := Step{Kind: StepPause}
				if cs.Pause.Duration != nil {
					st.Duration = time.Duration(*cs.Pause.Duration) * time.Second
				}
				s.Steps = append(s.Steps, st)
			case cs.Hook != nil:
				s.Steps = append(s.Steps, Step{Kind: StepHook, Hook: cs.Hook})
			}
		}
	}
	return s
}

// Budget resolves maxUnavailable (rounded down) and maxSurge (rounded up)
// against replicas, as Kubernetes does: both 0 after rounding makes
// maxUnavailable 1, so that the update can progress; DeleteFirst never
// surges.
func (s Strategy) Budget(replicas int) (maxUnavailable, maxSurge int) {
	maxUnavailable = s.MaxUnavailable.Resolve(replicas, false)
	if !s.DeleteFirst {
		maxSurge = s.MaxSurge.Resolve(replicas, true)
	}
	if maxUnavailable == 0 && maxSurge == 0 {
		maxUnavailable = 1
	}
	return maxUnavailable, maxSurge
}
