package taskstate

import (
	"fmt"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
)

// State is the lifecycle state of one task.
type State int

// The states, in lifecycle order.
const (
	// Staging: accepted, nothing started yet.
	Staging State = iota
	// Starting: fetching packages or images, creating the process or
	// container.
	Starting
	// Running: the task runs (and, with a start grace period, survived it).
	Running
	// Killing: a kill is in progress (stop command, grace period).
	Killing
	// Finished: the task ended by itself with success.
	Finished
	// Failed: the task could not start, died, or was killed because it or
	// another task of its group failed.
	Failed
	// Killed: the task was killed on request.
	Killed
	// Errored: the task can never run as described (invalid spec).
	Errored
)

var names = [...]string{"Staging", "Starting", "Running", "Killing", "Finished", "Failed", "Killed", "Errored"}

var mesosNames = [...]string{"TASK_STAGING", "TASK_STARTING", "TASK_RUNNING", "TASK_KILLING", "TASK_FINISHED", "TASK_FAILED", "TASK_KILLED", "TASK_ERROR"}

func (s State) String() string {
	if s < 0 || int(s) >= len(names) {
		return fmt.Sprintf("State(%d)", int(s))
	}
	return names[s]
}

// MesosName is the Mesos v1 TaskState of s, e.g. "TASK_RUNNING".
func (s State) MesosName() string {
	if s < 0 || int(s) >= len(mesosNames) {
		return "TASK_ERROR"
	}
	return mesosNames[s]
}

// Terminal reports whether no transition leaves s.
func (s State) Terminal() bool { return s >= Finished }

// transitions is the one table of legal moves. Running → Running is a
// status refresh (health or data changed).
var transitions = map[State][]State{
	Staging:  {Starting, Running, Killing, Failed, Killed, Errored},
	Starting: {Running, Killing, Finished, Failed, Killed},
	Running:  {Running, Killing, Finished, Failed, Killed},
	Killing:  {Killed, Failed, Finished},
}

// Transition checks the move from → to and returns to, or an error
// wrapping errdefs.ErrConflict for an illegal move.
func Transition(from, to State) (State, error) {
	for _, s := range transitions[from] {
		if s == to {
			return to, nil
		}
	}
	return from, fmt.Errorf("task state %s → %s: %w", from, to, errdefs.ErrConflict)
}
