package scheduler

import (
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/bcs-mesos/bcs-mesos/pkg/launch"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// Input is one event for Core.Step.
type Input interface{ input() }

// Restore loads the stored state; it is the first input after start or
// after winning leadership.
type Restore struct {
	FrameworkID string
	Apps        []*registry.App
	Groups      []*registry.TaskGroup
	Sweeps      []*registry.Sweep
	Rollouts    []*registry.Rollout
	// HookRuns are the hook runs, whose phases canary steps and
	// PreDeleteHooks wait for.
	HookRuns []*registry.HookRun
	// Objects are the configmaps and secrets launches may inject, and
	// the depends objects of dependency pods.
	Objects []manifest.Object
	// AgentSettings are the operator's settings of agents; Engine the
	// engine's record (mode "" is running).
	AgentSettings []*registry.AgentSettings
	Engine        registry.Engine
	// Identities are the namespaces' identities on the agents, by
	// namespace (Config.Identities).
	Identities map[string]*proto.Identity
	// Allocations are the allocated instances (allocations.go).
	Allocations []*registry.Allocation
}

// ObjectChanged: a configmap, secret or depends object was written.
type ObjectChanged struct{ Object manifest.Object }

// ObjectRemoved: a configmap, secret or depends object was deleted.
type ObjectRemoved struct {
	Kind            manifest.Kind
	Namespace, Name string
}

// SecretUnreadable: a secret exists but the driver cannot read its values
// now (its backend, e.g. Vault, is unreachable; it retries). Launches
// that take it wait, saying so; it is not "not found".
type SecretUnreadable struct {
	Namespace, Name string
	Reason          string // no values in it
}

// HookRunChanged: a hook run was written (created, measured, ended).
type HookRunChanged struct{ Run *registry.HookRun }

// Subscribed: the master accepted the subscription.
type Subscribed struct{ FrameworkID string }

// LearnedFrameworkID: the master named our framework ID in a SUBSCRIBED
// that could not otherwise be read; the subscription failed, but the next
// one must use this ID.
type LearnedFrameworkID struct{ FrameworkID string }

// Disconnected: the subscription ended; offers are gone with it.
type Disconnected struct{}

// OffersIn: new offers.
type OffersIn struct{ Offers []mesos.Offer }

// Rescind: an offer is no longer valid.
type Rescind struct{ OfferID string }

// StatusUpdates: task statuses (UPDATE events), applied in the order they
// came. The driver hands over at once the updates that queued while it was
// busy, so that their records are stored together and their
// acknowledgements sent together.
type StatusUpdates struct{ Statuses []mesos.TaskStatus }

// ExecutorMessage: data an executor sent (MESSAGE event); the core takes
// it in ExecutorMessages.
type ExecutorMessage struct {
	AgentID, ExecutorID string
	Data                []byte
}

// ExecutorMessages: the executors' messages that queued while the driver
// was busy, in the order they came, stepped together: a rollout's
// thousands of update answers one step each made as many outputs, and
// the loop waited on each, while the store's changes (an application's
// new version) waited behind it.
type ExecutorMessages struct{ Messages []ExecutorMessage }

// AppChanged: an application record was written (created, updated,
// scaled, marked for deletion, status).
type AppChanged struct{ App *registry.App }

// AppRemoved: an application record is gone.
type AppRemoved struct{ Namespace, Name string }

// Operate: an operator asks to restart, reload, reschedule, stop or start
// an instance.
type Operate struct {
	TaskGroupID string
	Op          Operation
}

// Operation is what Operate asks.
type Operation string

// Operations on an instance (POST /v1/taskgroups/{id}/<op>).
const (
	OpRestart    Operation = "restart"
	OpReload     Operation = "reload"
	OpReschedule Operation = "reschedule"
	// OpStop kills the instance's tasks and keeps it defined, Stopped:
	// nothing relaunches it until OpStart (seed 002, optype=stop/start).
	OpStop  Operation = "stop"
	OpStart Operation = "start"
)

// Tick: time passed; backoffs, reconciliation and kill retries run.
type Tick struct{}

// RemoteHealth is the verdict of a scheduler-side (REMOTE_*) health check
// of an instance's current launch.
type RemoteHealth struct {
	TaskGroupID string
	// Check is the check's index among the template's remote checks.
	Check int
	// Address is what the check probed (host:port).
	Address string
	Healthy bool
	Message string
	// Kill: consecutiveFailures was reached.
	Kill bool
}

func (Restore) input()            {}
func (Subscribed) input()         {}
func (LearnedFrameworkID) input() {}
func (Disconnected) input()       {}
func (OffersIn) input()           {}
func (Rescind) input()            {}
func (StatusUpdates) input()      {}
func (ExecutorMessage) input()    {}
func (ExecutorMessages) input()   {}
func (AppChanged) input()         {}
func (AppRemoved) input()         {}
func (Operate) input()            {}
func (Tick) input()               {}
func (ObjectChanged) input()      {}
func (ObjectRemoved) input()      {}
func (SecretUnreadable) input()   {}
func (RemoteHealth) input()       {}
func (HookRunChanged) input()     {}
func (AllocationChanged) input()  {}

// Output is what a step asks of the driver: persist Writes, in order, then
// send Calls, in order, then start and stop remote health checks. Logs
// are decisions an operator should find in the log.
type Output struct {
	Writes []Write
	Calls  []*scheduler.Call
	Checks []CheckChange
	Logs   []LogLine
	// Running are the launches that reached Running in this step: how
	// long each waited since its instance was wanted (metrics).
	Running []time.Duration
}

// LogLine is one structured log line: a message and slog key-value pairs.
type LogLine struct {
	Message string
	Args    []any
}

// CheckChange starts (Checks set) or stops (Checks nil) the remote health
// checks of a task group of Namespace, whose probes hold to its egress
// policy's endpoints; starting them again replaces those running.
// Results come back as RemoteHealth.
type CheckChange struct {
	TaskGroupID string
	Namespace   string
	Checks      []launch.RemoteProbe
}

// Write is one record to persist; exactly one field is set, but for
// Notices, which go with TaskGroup.
type Write struct {
	TaskGroup   *registry.TaskGroup // store the instance's state
	DeleteGroup *GroupRef           // remove the instance's record
	AppStatus   *AppStatus          // set an application's state and message
	RemoveApp   *AppRef             // delete the application (after its instances)
	FrameworkID string              // remember the framework ID
	Agent       *registry.AgentSeen // what offers told about an agent
	Maintenance *AgentMaintenance   // an agent's maintenance window
	Sweep       *registry.Sweep     // store the sweep owed an agent
	DeleteSweep string              // the sweep of this agent is done
	Rollout     *registry.Rollout   // store an application's rollout
	HookRun     *registry.HookRun   // create a hook run (one that exists is left as it is)
	DeleteHook  *HookRunRef         // delete a hook run

	// Notices go with TaskGroup: what its change tells the notify
	// callbacks, stored in the same transaction (notices.go).
	Notices []registry.Notice

	// DependencyPod creates or updates a dependency pod: its spec and
	// its registry.DependencyPod state (registry.PutDependencyPod).
	DependencyPod *registry.App
	// DeleteDependencyPod deletes a dependency pod (its instance is
	// killed, then it is removed).
	DeleteDependencyPod *AppRef
}

// HookRunRef names a hook run.
type HookRunRef struct{ Namespace, Name string }

// GroupRef names an instance.
type GroupRef struct {
	Namespace, App string
	Index          int
}

// AppRef names an application.
type AppRef struct{ Namespace, Name string }

// AppStatus is an application's summary state.
type AppStatus struct {
	Namespace, Name string
	State           registry.AppState
	Message         string
	// Daemonset: Desired, the count of eligible agents, is stored too.
	Daemonset bool
	Desired   int
}

// change is the status as the registry stores it.
func (st AppStatus) change() registry.AppStatusChange {
	c := registry.AppStatusChange{Namespace: st.Namespace, Name: st.Name, State: st.State, Message: st.Message}
	if st.Daemonset {
		c.Desired = &st.Desired
	}
	return c
}
