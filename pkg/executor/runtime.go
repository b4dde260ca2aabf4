package executor

import (
	"context"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/bcs-mesos/bcs-mesos/pkg/taskstate"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// Task is one task handed to a Runtime.
type Task struct {
	Info mesos.TaskInfo
	// Spec is Info.Data decoded; the driver fails the task itself when it
	// does not decode.
	Spec *proto.TaskSpec
	// KillGrace is the grace period between the polite stop and SIGKILL
	// (TaskInfo.kill_policy, else TaskSpec.KillGracePeriodSeconds, else
	// DefaultKillGrace).
	KillGrace time.Duration
}

// ID is the task's ID.
func (t Task) ID() string { return t.Info.TaskID.Value }

// Report is a change of one task, from a Runtime to the driver.
type Report struct {
	TaskID  string
	State   taskstate.State
	Reason  *mesos.TaskStatus_Reason
	Message string
	// Healthy is the latest health verdict; nil when the task has no
	// health checks.
	Healthy *bool
	// Data becomes TaskStatus.data (proto.ProcessInfo or ContainerInfo
	// JSON); nil keeps the last data reported.
	Data []byte
	// IPAddresses are the addresses of the task's container, sent as
	// TaskStatus.container_status.network_infos, where Mesos reports
	// them; nil keeps the last reported.
	IPAddresses []string
}

// Reporter receives task changes. Report never blocks for long and may be
// called from any goroutine; an illegal transition is logged and dropped.
type Reporter interface {
	Report(Report)
}

// Runtime runs task groups: processes, or Docker pods. Launch, Kill and
// Shutdown start work and return; outcomes arrive through the Reporter
// given to Launch. Message may block (it runs on its own goroutine).
type Runtime interface {
	// Launch starts a task group; every task must eventually reach a
	// terminal state through r.
	Launch(ctx context.Context, group []Task, r Reporter)
	// Kill stops one task: polite stop, grace, then force.
	Kill(taskID string, grace time.Duration)
	// Message answers a scheduler message (reload, restart, exec,
	// signal, …) for a task the runtime knows.
	Message(ctx context.Context, msg *proto.Message) proto.MessageResult
	// Shutdown kills every task within grace and returns when all are
	// terminal or grace is over.
	Shutdown(grace time.Duration)
}

// UsageReader is a Runtime that measures what its tasks use, for the
// usage reports the driver sends the scheduler (usage.go). Optional.
type UsageReader interface {
	// Usage samples the tasks of taskIDs: cumulative CPU time and working
	// set, with when each sample was taken. A task it cannot measure (not
	// running, ended, no cgroup) is left out. It may take a while (docker
	// stats) and gives up when ctx ends.
	Usage(ctx context.Context, taskIDs []string) []proto.TaskUsage
}
