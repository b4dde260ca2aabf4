package scheduler

import (
	"fmt"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// Phase is the scheduler's lifecycle phase of an instance.
type Phase string

// The phases; see the diagram in doc.go.
const (
	PhasePending  Phase = "Pending"  // wants a launch (after NotBefore)
	PhaseLaunched Phase = "Launched" // ACCEPT sent; tasks staging or starting
	PhaseRunning  Phase = "Running"  // every task running
	PhaseKilling  Phase = "Killing"  // killed by the scheduler, waiting for terminal states
	PhaseFailed   Phase = "Failed"   // terminal, not restarted (policy, maxtimes, invalid task)
	PhaseFinished Phase = "Finished" // every task finished successfully
	// PhaseStopped: the operator stopped it (seed 002, optype=stop): it
	// stays defined, runs nothing and is not relaunched until started.
	PhaseStopped Phase = registry.PhaseStopped
)

// phases are the phases in their lifecycle's order.
var phases = []Phase{PhasePending, PhaseLaunched, PhaseRunning, PhaseKilling, PhaseFailed, PhaseFinished, PhaseStopped}

func (p Phase) String() string { return string(p) }

// parsePhase reads a stored phase; a value this build does not know reads
// as Pending, which reconciliation then corrects.
func parsePhase(s string) Phase {
	if _, ok := transitions[Phase(s)]; ok {
		return Phase(s)
	}
	return PhasePending
}

// KillReason says why the scheduler kills an instance.
type KillReason string

// The kill reasons; an instance killed for its health fails (the restart
// policy decides), one updated is placed again, one moved is replaced by
// its successor, the others go.
const (
	KillDelete    KillReason = "delete"
	KillScaleDown KillReason = "scale-down"
	// KillMove: the instance's successor on another agent is ready.
	KillMove   KillReason = "move"
	KillHealth KillReason = "health"
	// KillUpdate: a rollout replaces the instance with another revision.
	KillUpdate KillReason = "update"
	// KillIneligible: a daemonset's instance whose agent left, is
	// cordoned or drained, or no longer passes the constraint.
	KillIneligible KillReason = "agent-ineligible"
	// KillStop: the operator stopped the instance; it is Stopped once
	// its tasks ended.
	KillStop KillReason = "stop"
)

// transitions is the one table of legal phase changes.
var transitions = map[Phase][]Phase{
	PhasePending:  {PhaseLaunched, PhaseKilling, PhaseStopped},
	PhaseLaunched: {PhaseRunning, PhasePending, PhaseFailed, PhaseFinished, PhaseKilling},
	PhaseRunning:  {PhaseLaunched, PhasePending, PhaseFailed, PhaseFinished, PhaseKilling},
	PhaseKilling:  {PhasePending, PhaseFailed, PhaseFinished, PhaseStopped},
	PhaseFailed:   {PhasePending, PhaseKilling, PhaseStopped},
	PhaseFinished: {PhasePending, PhaseKilling, PhaseStopped},
	PhaseStopped:  {PhasePending},
}

// transition checks that from → to is legal.
func transition(from, to Phase) error {
	if from == to {
		return nil
	}
	for _, p := range transitions[from] {
		if p == to {
			return nil
		}
	}
	return fmt.Errorf("illegal phase change %s → %s", from, to)
}

// live reports whether tasks of the instance may be running on an agent.
func (p Phase) live() bool {
	return p == PhaseLaunched || p == PhaseRunning || p == PhaseKilling
}

// outcome classifies how a task group ended, for the restart policy.
type outcome int

const (
	outcomeFinished outcome = iota // every task exited 0
	outcomeFailed                  // a task failed, or was killed unasked
	outcomeLost                    // the agent or the task went missing
	outcomeDropped                 // never started: the launch itself was refused (offer gone)
	outcomeInvalid                 // Mesos rejected the task group as invalid
	outcomeEvicted                 // killed by the master draining its agent (DRAIN_AGENT)
)

func (o outcome) String() string {
	return [...]string{"finished", "failed", "lost", "dropped", "invalid", "evicted"}[o]
}

// terminal reports whether a Mesos task state is terminal.
func terminal(s mesos.TaskState) bool {
	switch s {
	case mesos.TASK_FINISHED, mesos.TASK_FAILED, mesos.TASK_KILLED, mesos.TASK_ERROR,
		mesos.TASK_LOST, mesos.TASK_DROPPED, mesos.TASK_GONE, mesos.TASK_GONE_BY_OPERATOR, mesos.TASK_UNKNOWN:
		return true
	}
	return false // TASK_UNREACHABLE may come back; we treat it as lost separately
}

// classify returns the outcome a terminal (or unreachable) task state
// stands for.
func classify(s mesos.TaskState) outcome {
	switch s {
	case mesos.TASK_FINISHED:
		return outcomeFinished
	case mesos.TASK_ERROR:
		return outcomeInvalid
	case mesos.TASK_DROPPED:
		return outcomeDropped
	case mesos.TASK_LOST, mesos.TASK_GONE, mesos.TASK_GONE_BY_OPERATOR, mesos.TASK_UNKNOWN, mesos.TASK_UNREACHABLE:
		return outcomeLost
	}
	return outcomeFailed
}
