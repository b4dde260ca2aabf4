package pod

import (
	"fmt"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
)

// State is the lifecycle state of a task (one container) and of the pod as
// a whole. Each state maps one-to-one onto a Mesos TaskState (MesosState).
type State int

// The states. Terminal states are Finished, Failed and Killed.
const (
	StateStaging  State = iota // accepted, nothing created yet
	StateStarting              // image pulled / container being created and started
	StateRunning               // container started
	StateKilling               // a kill was asked; waiting for the container to exit
	StateFinished              // exited with code 0 on its own
	StateFailed                // failed to start, exited non-zero, or killed because another task failed
	StateKilled                // stopped because a kill was asked
)

var stateNames = [...]string{"staging", "starting", "running", "killing", "finished", "failed", "killed"}

var mesosStates = [...]string{"TASK_STAGING", "TASK_STARTING", "TASK_RUNNING", "TASK_KILLING", "TASK_FINISHED", "TASK_FAILED", "TASK_KILLED"}

func (s State) String() string {
	if s < 0 || int(s) >= len(stateNames) {
		return fmt.Sprintf("State(%d)", int(s))
	}
	return stateNames[s]
}

// MesosState is the Mesos v1 TaskState name of s.
func (s State) MesosState() string {
	if s < 0 || int(s) >= len(mesosStates) {
		return "TASK_ERROR"
	}
	return mesosStates[s]
}

// Terminal reports whether no transition leaves s.
func (s State) Terminal() bool {
	return s == StateFinished || s == StateFailed || s == StateKilled
}

// transitions is the one table of legal moves.
var transitions = map[State][]State{
	StateStaging:  {StateStarting, StateFailed, StateKilled},
	StateStarting: {StateRunning, StateFinished, StateFailed, StateKilling, StateKilled},
	StateRunning:  {StateKilling, StateFinished, StateFailed},
	StateKilling:  {StateKilled, StateFailed, StateFinished},
}

// transition returns to when from → to is legal, else an ErrConflict.
func transition(from, to State) (State, error) {
	for _, s := range transitions[from] {
		if s == to {
			return to, nil
		}
	}
	return from, fmt.Errorf("state %s → %s: %w", from, to, errdefs.ErrConflict)
}
