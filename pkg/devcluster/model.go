package devcluster

import (
	"slices"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/executor"
)

// framework is the master's record of one scheduler.
type framework struct {
	id       string
	info     mesos.FrameworkInfo
	stream   *eventStream // nil while disconnected
	streamID string

	registeredAt   time.Time
	partitionAware bool
	multiRole      bool
	role           string // the role offers are allocated to
	filters        *frameworkFilters
	// inverseRefusals: until when the framework wants no inverse offer for
	// an agent (the filters of its last answer), by agent ID.
	inverseRefusals map[string]time.Time

	tasks       map[string]*task // live tasks and terminal ones not yet acknowledged
	unreachable map[string]*task
	completed   []*task

	failoverTimer *lockedTimer // while disconnected
}

const maxCompletedTasks = 1000

func (fw *framework) findCompleted(taskID string) *task {
	for i := len(fw.completed) - 1; i >= 0; i-- {
		if fw.completed[i].info.TaskID.Value == taskID {
			return fw.completed[i]
		}
	}
	return nil
}

func (fw *framework) addCompleted(t *task) {
	fw.completed = append(fw.completed, t)
	if len(fw.completed) > maxCompletedTasks {
		fw.completed = fw.completed[len(fw.completed)-maxCompletedTasks:]
	}
}

func (fw *framework) stopTimers() {
	fw.failoverTimer.stop()
	for _, t := range fw.tasks {
		t.stopTimers()
	}
}

func (fw *framework) applyInfo(info mesos.FrameworkInfo) {
	fw.info = info
	fw.partitionAware, fw.multiRole = false, false
	for _, c := range info.Capabilities {
		switch c.Type {
		case mesos.FrameworkInfo_Capability_PARTITION_AWARE:
			fw.partitionAware = true
		case mesos.FrameworkInfo_Capability_MULTI_ROLE:
			fw.multiRole = true
		}
	}
	fw.role = "*"
	switch {
	case fw.multiRole && len(info.Roles) > 0:
		fw.role = info.Roles[0]
	case info.Role != nil && *info.Role != "":
		fw.role = *info.Role
	}
}

func (fw *framework) failoverTimeout() time.Duration {
	if fw.info.FailoverTimeout == nil {
		return 0
	}
	return time.Duration(*fw.info.FailoverTimeout * float64(time.Second))
}

// offer is an outstanding offer.
type offer struct {
	id        string
	fw        *framework
	agent     *agent
	resources mesos.Resources // unallocated
}

// inverseOffer is an outstanding inverse offer: the master asks a
// framework to give an agent back for a maintenance window.
type inverseOffer struct {
	id             string
	fw             *framework
	agent          *agent
	unavailability mesos.Unavailability
}

// task is the master's and the agent's record of one task (the dev
// cluster keeps one record for both).
type task struct {
	info    mesos.TaskInfo
	fw      *framework
	agent   *agent
	exec    *executorRun // nil for command tasks
	command *commandTask // process mode command tasks

	state mesos.TaskState
	// statuses are its latest updates, oldest first, the last its state
	// (never empty: a task starts TASK_STAGING).
	statuses []mesos.TaskStatus
	released bool // terminal: resources returned to the agent
	killing  bool

	// Status update manager: updates waiting for the scheduler's ACK, in
	// order; the head is (re)sent until acknowledged.
	pending    []pendingUpdate
	retryTimer *lockedTimer
	retryDelay time.Duration

	simTimer *lockedTimer // shared by the tasks of one simulated launch
}

type pendingUpdate struct {
	status       mesos.TaskStatus
	fromExecutor bool
	firstSent    time.Time // zero until sent
}

func (t *task) stopTimers() {
	t.retryTimer.stop()
	t.simTimer.stop()
}

// resources is what t holds on its agent, without allocation info: made
// from its TaskInfo when asked (at its end, and for the state and
// operator views), not kept beside it — a fleet's tasks are a million.
func (t *task) resources() mesos.Resources { return sumResources(t.info.Resources) }

// resources is what ex holds on its agent beside its tasks' (as a task's).
func (ex *executorRun) resources() mesos.Resources { return sumResources(ex.info.Resources) }

// latest is t's latest status.
func (t *task) latest() mesos.TaskStatus { return t.statuses[len(t.statuses)-1] }

func (t *task) key() string { return t.fw.id + "/" + t.info.TaskID.Value }

func executorKey(frameworkID, executorID string) string { return frameworkID + "/" + executorID }

// executorRun is one executor on one agent: simulated, or a child process
// speaking the executor HTTP API.
type executorRun struct {
	fw          *framework
	agent       *agent
	info        mesos.ExecutorInfo
	id          string
	containerID string
	tasks       map[string]*task // non-terminal tasks
	// ended are terminal tasks whose last update the framework has not
	// acknowledged yet, checkpointed with the executor until it has
	// (process mode).
	ended map[string]*task

	simulated bool
	// received are the framework messages a simulated executor got, the
	// last maxSimulatedMessages (Cluster.ExecutorMessages).
	received [][]byte

	// Process mode.
	sandbox     string
	stream      *eventStream
	queued      []*executor.Event // launches waiting for SUBSCRIBE
	launched    bool              // process started
	subscribed  bool
	terminating bool // SHUTDOWN sent or being killed on purpose
	regTimedOut bool // killed for not subscribing in time
	// After the agent's recovery: the executor must subscribe again in
	// time; its first subscription then settles the tasks it never got.
	reregTimer    *lockedTimer
	reregTimedOut bool
	reregistering bool
	sid           int    // its session, led by the executor process
	startTime     uint64 // of the executor process (procStat)
	exited        chan struct{}
	regTimer      *lockedTimer
}

func (ex *executorRun) key() string { return executorKey(ex.fw.id, ex.id) }

func (ex *executorRun) gracePeriod(def time.Duration) time.Duration {
	if ex.info.ShutdownGracePeriod != nil {
		return time.Duration(ex.info.ShutdownGracePeriod.Nanoseconds)
	}
	return def
}

// destroy kills what runs in the executor's container: its session.
func (ex *executorRun) destroy() { killSession(ex.sid) }

// dropQueued removes t from the launches not yet delivered to the
// executor and reports whether it was there.
func (ex *executorRun) dropQueued(t *task) bool {
	id := t.info.TaskID.Value
	found := false
	kept := ex.queued[:0]
	for _, ev := range ex.queued {
		switch {
		case ev.Launch != nil && ev.Launch.Task.TaskID.Value == id:
			found = true
			continue
		case ev.LaunchGroup != nil:
			tasks := ev.LaunchGroup.TaskGroup.Tasks[:0]
			for _, ti := range ev.LaunchGroup.TaskGroup.Tasks {
				if ti.TaskID.Value == id {
					found = true
				} else {
					tasks = append(tasks, ti)
				}
			}
			ev.LaunchGroup.TaskGroup.Tasks = tasks
			if len(tasks) == 0 {
				continue
			}
		}
		kept = append(kept, ev)
	}
	ex.queued = kept
	return found
}

// holdsLaunch reports whether the launch of task id waits for the
// executor to subscribe.
func (ex *executorRun) holdsLaunch(id string) bool {
	for _, ev := range ex.queued {
		if ev.Launch != nil && ev.Launch.Task.TaskID.Value == id {
			return true
		}
		if ev.LaunchGroup != nil && slices.ContainsFunc(ev.LaunchGroup.TaskGroup.Tasks, func(ti mesos.TaskInfo) bool { return ti.TaskID.Value == id }) {
			return true
		}
	}
	return false
}

// commandTask is a LAUNCH task without an executor, run by the agent
// itself as a shell command in process mode.
type commandTask struct {
	task        *task
	containerID string
	sandbox     string
	sid         int
	startTime   uint64
	exited      chan struct{}
}

// destroy kills what runs in the command task's container: its session.
func (ct *commandTask) destroy() { killSession(ct.sid) }

func isTerminal(s mesos.TaskState) bool {
	switch s {
	case mesos.TASK_FINISHED, mesos.TASK_FAILED, mesos.TASK_KILLED, mesos.TASK_ERROR,
		mesos.TASK_LOST, mesos.TASK_DROPPED, mesos.TASK_GONE, mesos.TASK_GONE_BY_OPERATOR:
		return true
	}
	return false
}
