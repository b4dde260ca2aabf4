package executor_test

import (
	"errors"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	bcsexec "github.com/bcs-mesos/bcs-mesos/pkg/executor"
)

// STYLE 9: states map one-to-one onto Mesos TaskState; illegal moves are
// errors.
func TestStateMapping(t *testing.T) {
	want := map[bcsexec.State]mesos.TaskState{
		bcsexec.Staging: mesos.TASK_STAGING, bcsexec.Starting: mesos.TASK_STARTING,
		bcsexec.Running: mesos.TASK_RUNNING, bcsexec.Killing: mesos.TASK_KILLING,
		bcsexec.Finished: mesos.TASK_FINISHED, bcsexec.Failed: mesos.TASK_FAILED,
		bcsexec.Killed: mesos.TASK_KILLED, bcsexec.Errored: mesos.TASK_ERROR,
	}
	seen := map[mesos.TaskState]bool{}
	for s, m := range want {
		if s.Mesos() != m {
			t.Errorf("%s → %s, want %s", s, s.Mesos(), m)
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
		from, to bcsexec.State
		ok       bool
	}{
		{"start", bcsexec.Staging, bcsexec.Starting, true},
		{"invalid spec", bcsexec.Staging, bcsexec.Errored, true},
		{"started", bcsexec.Starting, bcsexec.Running, true},
		{"start failed", bcsexec.Starting, bcsexec.Failed, true},
		{"status refresh", bcsexec.Running, bcsexec.Running, true},
		{"kill", bcsexec.Running, bcsexec.Killing, true},
		{"killed", bcsexec.Killing, bcsexec.Killed, true},
		{"died while killing", bcsexec.Killing, bcsexec.Failed, true},
		{"back to running after kill", bcsexec.Killing, bcsexec.Running, false},
		{"terminal is final", bcsexec.Failed, bcsexec.Running, false},
		{"killed twice", bcsexec.Killed, bcsexec.Killed, false},
		{"running to starting", bcsexec.Running, bcsexec.Starting, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := bcsexec.Transition(tc.from, tc.to)
			if tc.ok && (err != nil || got != tc.to) {
				t.Errorf("got %s, %v", got, err)
			}
			if !tc.ok && (!errors.Is(err, errdefs.ErrConflict) || got != tc.from) {
				t.Errorf("got %s, %v; want ErrConflict", got, err)
			}
		})
	}
}
