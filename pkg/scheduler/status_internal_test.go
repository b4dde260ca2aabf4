package scheduler

import (
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// A task's message says what happened to it: a reason that only says a
// check's verdict changed (shown as healthy) is not part of it.
func TestStatusMessage(t *testing.T) {
	for _, c := range []struct {
		reason  mesos.TaskStatus_Reason
		message string
		want    string
	}{
		{mesos.REASON_TASK_HEALTH_CHECK_STATUS_UPDATED, "", ""},
		{mesos.REASON_TASK_CHECK_STATUS_UPDATED, "check", "check"},
		{mesos.REASON_RECONCILIATION, "Reconciliation: Task is unknown to the agent", "REASON_RECONCILIATION: Reconciliation: Task is unknown to the agent"},
		{mesos.REASON_COMMAND_EXECUTOR_FAILED, "", "REASON_COMMAND_EXECUTOR_FAILED"},
	} {
		st := mesos.TaskStatus{Reason: c.reason.Enum()}
		if c.message != "" {
			st.Message = &c.message
		}
		if got := statusMessage(st); got != c.want {
			t.Errorf("reason %s, message %q: %q, want %q", c.reason, c.message, got, c.want)
		}
	}
	if got := statusMessage(mesos.TaskStatus{}); got != "" {
		t.Errorf("no reason, no message: %q", got)
	}
}
