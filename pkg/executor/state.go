package executor

import (
	"fmt"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
)

// State is the executor-side lifecycle of one task. Each state maps onto
// exactly one mesos.TaskState (Mesos).
type State int

// The task states, in lifecycle order.
const (
	// Staging: the executor has the task but has not started it.
	Staging State = iota
	// Starting: fetching packages, creating the process or containers.
	Starting
	// Running: the task runs (and, when it has a start grace period, has
	// survived it).
	Running
	// Killing: a kill is in progress (stop command, grace period).
	Killing
	// Finished: the task ended by itself with success.
	Finished
	// Failed: the task could not start, died, or was killed by its health
	// check.
	Failed
	// Killed: the task was killed on request.
	Killed
	// Errored: the task can never run as described (invalid spec).
	Errored
)

var stateNames = [...]string{"Staging", "Starting", "Running", "Killing", "Finished", "Failed", "Killed", "Errored"}

var mesosStates = [...]mesos.TaskState{
	Staging:  mesos.TASK_STAGING,
	Starting: mesos.TASK_STARTING,
	Running:  mesos.TASK_RUNNING,
	Killing:  mesos.TASK_KILLING,
	Finished: mesos.TASK_FINISHED,
	Failed:   mesos.TASK_FAILED,
	Killed:   mesos.TASK_KILLED,
	Errored:  mesos.TASK_ERROR,
}

func (s State) String() string {
	if s < 0 || int(s) >= len(stateNames) {
		return fmt.Sprintf("State(%d)", int(s))
	}
	return stateNames[s]
}

// Mesos is the TaskState reported for s.
func (s State) Mesos() mesos.TaskState { return mesosStates[s] }

// Terminal reports whether no transition leaves s.
func (s State) Terminal() bool { return s >= Finished }

// transitions is the one table of legal moves. Running → Running is a
// status refresh (health changed, data changed, report-status).
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
