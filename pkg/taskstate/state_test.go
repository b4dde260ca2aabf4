package taskstate_test

import (
	"errors"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/taskstate"
)

// STYLE 9: states map one-to-one onto Mesos TaskState; illegal moves are
// errors.
func TestStateMapping(t *testing.T) {
	want := map[taskstate.State]mesos.TaskState{
		taskstate.Staging: mesos.TASK_STAGING, taskstate.Starting: mesos.TASK_STARTING,
		taskstate.Running: mesos.TASK_RUNNING, taskstate.Killing: mesos.TASK_KILLING,
		taskstate.Finished: mesos.TASK_FINISHED, taskstate.Failed: mesos.TASK_FAILED,
		taskstate.Killed: mesos.TASK_KILLED, taskstate.Errored: mesos.TASK_ERROR,
	}
	seen := map[mesos.TaskState]bool{}
	for s, m := range want {
		if s.MesosName() != m.String() {
			t.Errorf("%s → %s, want %s", s, s.MesosName(), m)
		}
		if seen[m] {
			t.Errorf("%s mapped twice", m)
		}
		seen[m] = true
		if s.Terminal() != (m == mesos.TASK_FINISHED || m == mesos.TASK_FAILED || m == mesos.TASK_KILLED || m == mesos.TASK_ERROR) {
			t.Errorf("%s Terminal() = %v", s, s.Terminal())
		}
	}
}

func TestTransition(t *testing.T) {
	tests := []struct {
		name     string
		from, to taskstate.State
		ok       bool
	}{
		{"start", taskstate.Staging, taskstate.Starting, true},
		{"invalid spec", taskstate.Staging, taskstate.Errored, true},
		{"started", taskstate.Starting, taskstate.Running, true},
		{"start failed", taskstate.Starting, taskstate.Failed, true},
		{"status refresh", taskstate.Running, taskstate.Running, true},
		{"kill", taskstate.Running, taskstate.Killing, true},
		{"killed", taskstate.Killing, taskstate.Killed, true},
		{"died while killing", taskstate.Killing, taskstate.Failed, true},
		{"back to running after kill", taskstate.Killing, taskstate.Running, false},
		{"terminal is final", taskstate.Failed, taskstate.Running, false},
		{"killed twice", taskstate.Killed, taskstate.Killed, false},
		{"running to starting", taskstate.Running, taskstate.Starting, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := taskstate.Transition(tc.from, tc.to)
			if tc.ok && (err != nil || got != tc.to) {
				t.Errorf("got %s, %v", got, err)
			}
			if !tc.ok && (!errors.Is(err, errdefs.ErrConflict) || got != tc.from) {
				t.Errorf("got %s, %v; want ErrConflict", got, err)
			}
		})
	}
}
