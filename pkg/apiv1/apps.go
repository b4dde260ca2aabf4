package apiv1

import (
	"encoding/json"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/rollout"
)

// AppView is an application, process, deployment or daemonset as GET
// returns it.
type AppView struct {
	Namespace string        `json:"namespace"`
	Name      string        `json:"name"`
	Kind      manifest.Kind `json:"kind"`
	Version   uint64        `json:"version"`
	Revision  int64         `json:"revision"`
	Instances int           `json:"instances"` // desired
	// Stopped: the operator stopped it (POST …/stop); every instance is
	// stopped until it is started.
	Stopped bool            `json:"stopped,omitempty"`
	Spec    json.RawMessage `json:"spec"`
	Status  AppStatus       `json:"status"`
	// DependencyPod marks a dependency pod: the scheduler runs it for
	// a depends object and refuses the operator's changes.
	DependencyPod *DependencyPod `json:"dependencyPod,omitempty"`
	CreatedAt     time.Time      `json:"createdAt"`
	UpdatedAt     time.Time      `json:"updatedAt"`
}

// AppState is an application's summary state (the registry's
// constants: Deploying, Running, Abnormal, Deleting).
type AppState string

// AppStatus is what the scheduler reports of an application.
type AppStatus struct {
	State   AppState `json:"state"`
	Message string   `json:"message,omitempty"`
	// Instances is always a list in GET but for ?summary=true; an app
	// event leaves it out (instances are events of their own).
	Instances []InstanceView `json:"instances,omitzero"`
	// Counts are its instances counted by what a view of the fleet shows;
	// absent in events.
	Counts *InstanceCounts `json:"counts,omitempty"`
	// Rollout is the state of its updates (seed 004's GameDeployment
	// status); absent until the scheduler first saw the application.
	Rollout *RolloutView `json:"rollout,omitempty"`
}

// RolloutView is an application's rollout: the counts and revisions of
// seed 004's `kubectl get gamedeployment`, the phase and conditions, and
// what it waits for.
type RolloutView struct {
	rollout.Status
	Cause        rollout.Cause `json:"cause,omitempty"`
	RolledBackTo uint64        `json:"rolledBackTo,omitempty"`
	Aborted      bool          `json:"aborted,omitempty"`
	AbortReason  string        `json:"abortReason,omitempty"`
	// Wait is what the rollout waits for; promote ends a promotable one.
	Wait *rollout.Wait `json:"wait,omitempty"`
}

// InstanceCounts count an application's instances: how many run, are
// ready, fail a health check, wait for a launch.
type InstanceCounts struct {
	Running int `json:"running"`
	Ready   int `json:"ready"`
	// Unhealthy: running and failing a check of its own or a REMOTE one.
	Unhealthy int `json:"unhealthy"`
	// Pending: waiting for a launch that fits no agent (its pending
	// verdict says why).
	Pending int `json:"pending"`
	// Stopped: stopped by the operator.
	Stopped int `json:"stopped"`
}

// InstanceView is one instance of an application.
type InstanceView struct {
	ID          int    `json:"id"`
	TaskGroupID string `json:"taskGroupID"`
	// PreviousTaskGroupID is the launch before this one (a relaunch, a
	// move): its logs are still read by it.
	PreviousTaskGroupID string `json:"previousTaskGroupID,omitempty"`
	State               string `json:"state"`
	// Stopped: the operator stopped it (POST /v1/taskgroups/{id}/stop, or
	// its application's stop): it runs nothing until started.
	Stopped bool `json:"stopped,omitempty"`
	// Phase is the scheduler's: Pending (waiting to launch; State is
	// empty before its first launch), Launched, Running, Killing, Failed,
	// Finished.
	Phase string `json:"phase"`
	// Revision is the application version whose template it runs.
	Revision uint64 `json:"revision"`
	// Ready: running, healthy by its checks, not being restarted.
	Ready bool   `json:"ready"`
	Agent string `json:"agent,omitempty"`
	Host  string `json:"host,omitempty"`
	// HostIP is the agent's address: host ports answer there.
	HostIP  string            `json:"hostIP,omitempty"`
	Ports   map[string]uint32 `json:"ports,omitempty"`
	Healthy *bool             `json:"healthy,omitempty"`
	// RemoteHealthy is the scheduler's REMOTE_HTTP/REMOTE_TCP verdict.
	RemoteHealthy *bool  `json:"remoteHealthy,omitempty"`
	RemoteMessage string `json:"remoteMessage,omitempty"`
	// RemoteChecks are each REMOTE check's own verdict, by name.
	RemoteChecks []RemoteCheckResult `json:"remoteChecks,omitempty"`
	Restarts     int                 `json:"restarts"`
	Message      string              `json:"message,omitempty"`
	// Update is what the rollout is doing to it.
	Update *InstanceUpdate `json:"update,omitempty"`
	// PreDelete is the PreDeleteHook it waits for before it goes.
	PreDelete *PreDeleteWait `json:"preDelete,omitempty"`
	// Move is its move to another agent (drain, drift, reschedule).
	Move *MoveView `json:"move,omitempty"`
	// Pending says why it waits for a launch: how many known agents it
	// fits and why each other one is rejected.
	Pending *Pending `json:"pending,omitempty"`
	// Tasks are its containers or processes, once launched.
	Tasks []TaskView `json:"tasks,omitempty"`
	// Allocated: a game session runs on it; scale-downs and rollouts keep
	// it until it is released.
	Allocated *AllocationView `json:"allocated,omitempty"`
}

// AllocationView is the allocation of an instance.
type AllocationView struct {
	// Source is "api" (POST …/allocate) or "probe" (its autoscaler's
	// allocation probe).
	Source string    `json:"source"`
	Since  time.Time `json:"since"`
	By     string    `json:"by,omitempty"`
	Note   string    `json:"note,omitempty"`
	// TaskGroupID is the launch it was made for.
	TaskGroupID string `json:"taskGroupID"`
}

// AllocateRequest is the optional body of POST …/instances/{id}/allocate.
type AllocateRequest struct {
	Note string `json:"note,omitempty"`
}

// TaskView is one task of an instance, with what its executor reports of
// it: the container or the process.
type TaskView struct {
	Name      string           `json:"name"`
	ID        string           `json:"id"`
	State     string           `json:"state"`
	Healthy   *bool            `json:"healthy,omitempty"`
	Message   string           `json:"message,omitempty"`
	Container *ContainerStatus `json:"container,omitempty"`
	Process   *ProcessStatus   `json:"process,omitempty"`
}

// MoveView is an instance's move: queued, or its successor launch on the
// way (it replaces the instance once running).
type MoveView struct {
	Reason    string        `json:"reason"`
	FromHost  string        `json:"fromHost"`
	ToHost    string        `json:"toHost,omitempty"`
	Since     time.Time     `json:"since"`
	Successor *InstanceView `json:"successor,omitempty"`
}

// DependencyPod is what makes an application a dependency pod: the
// depends object it runs for and where.
type DependencyPod struct {
	// DependsNamespace and DependsName name the depends object.
	DependsNamespace string `json:"dependsNamespace"`
	DependsName      string `json:"dependsName"`
	// Node is the hostname of the agent it runs on.
	Node   string                 `json:"node"`
	Policy manifest.DependsPolicy `json:"policy"`
	// ServedNamespace is, with policy namespace, the namespace whose
	// instances it serves (and its own).
	ServedNamespace string `json:"servedNamespace,omitempty"`
	// Users counts the live instances that reference it on Node.
	Users int `json:"users"`
	// IdleSince is when its last user left; zero while it has users.
	IdleSince time.Time `json:"idleSince,omitzero"`
}

// Depends returns "namespace/name" of the depends object.
func (p *DependencyPod) Depends() string { return p.DependsNamespace + "/" + p.DependsName }

// RemoteCheckResult is one REMOTE health check's verdict on an instance.
type RemoteCheckResult struct {
	Name string `json:"name"`
	// Address is what the check probed (host:port): the address a client
	// of the instance uses in its network mode.
	Address string `json:"address,omitempty"`
	Healthy bool   `json:"healthy"`
	Message string `json:"message,omitempty"`
}

// InstanceUpdate is a rollout's update of one instance, under way.
type InstanceUpdate struct {
	Version  uint64 `json:"version"`
	Template string `json:"template"`
	// Mode is Replace, InPlace or HotPatch.
	Mode  string    `json:"mode"`
	Since time.Time `json:"since"`
	// Sent is when the update message last went to the executor.
	Sent time.Time `json:"sent,omitzero"`
	// Message says what is being done, and why this mode.
	Message string `json:"message,omitempty"`
	// Error is why the executor refused a hot patch; the rollout waits
	// (abort, or a new spec, ends it).
	Error string `json:"error,omitempty"`
}

// PreDeleteWait is an instance waiting for its PreDeleteHook.
type PreDeleteWait struct {
	// Reason is what waits: a kill reason (scale-down, delete, update) or
	// "in-place".
	Reason string `json:"reason"`
	// Run is the current run; Attempt counts them.
	Run     string    `json:"run"`
	Attempt int       `json:"attempt"`
	Since   time.Time `json:"since"`
	// NotBefore delays the next run after a failed one.
	NotBefore time.Time `json:"notBefore,omitzero"`
	// Passed: a run succeeded (or the wait timed out); the instance goes.
	Passed  bool   `json:"passed,omitempty"`
	Message string `json:"message,omitempty"`
}

// Pending is the placement engine's verdict on a pending launch over
// every agent the scheduler knows: how many it fits and why each other
// one is rejected, under the first reason it failed ("cpus", "cordoned",
// "hostname UNIQUE" …).
type Pending struct {
	Fit     int             `json:"fit"`
	Agents  int             `json:"agents"`
	Reasons []PendingReason `json:"reasons"`
	// LastEvaluated is when this verdict was reached; the same verdict
	// may have held since.
	LastEvaluated time.Time `json:"lastEvaluated"`
}

// PendingReason is how many agents one reason rejected.
type PendingReason struct {
	Reason string `json:"reason"`
	Count  int    `json:"count"`
}

// ContainerStatus is a task's Docker container as the container executor
// reports it (seed 001 BcsContainerInfo); the registry keeps it as it is
// shown.
type ContainerStatus struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Pid  int    `json:"pid,omitempty"`
	// Status is Docker's: created, running, paused, restarting, exited,
	// dead.
	Status string `json:"status"`
	// ExitCode is set once the container exited.
	ExitCode *int `json:"exitCode,omitempty"`
	// IPAddress is the pod's address: the network container's (bridge,
	// CNI) or the agent's (host network).
	IPAddress   string    `json:"ipAddress,omitempty"`
	NetworkMode string    `json:"networkMode,omitempty"`
	Hostname    string    `json:"hostname,omitempty"`
	StartedAt   time.Time `json:"startedAt,omitzero"`
	FinishedAt  time.Time `json:"finishedAt,omitzero"`
}

// ProcessStatus is a task's process as the process executor reports it;
// the registry keeps it as it is shown.
type ProcessStatus struct {
	Pid       int       `json:"pid,omitempty"`
	ProcName  string    `json:"procName"`
	StartedAt time.Time `json:"startedAt,omitzero"`
	// ExitCode is set once the process exited.
	ExitCode *int   `json:"exitCode,omitempty"`
	WorkPath string `json:"workPath"`
	// Ports are its ports by name, with the host port.
	Ports map[string]int `json:"ports,omitempty"`
}

// AppVersion is one entry of an application's history (GET …/versions).
type AppVersion struct {
	Version      uint64          `json:"version"`
	Spec         json.RawMessage `json:"spec"`
	Cause        rollout.Cause   `json:"cause,omitempty"`
	RolledBackTo uint64          `json:"rolledBackTo,omitempty"`
	// RestartGeneration is the version's; a rollback restores it, so
	// that instances still running that version are not restarted.
	RestartGeneration int       `json:"restartGeneration,omitempty"`
	CreatedAt         time.Time `json:"createdAt"`
}

// ScaleRequest is the body of POST …/scale.
type ScaleRequest struct {
	Instances *int `json:"instances"`
	// Force skips the PreDeleteHook of the instances removed.
	Force bool `json:"force,omitempty"`
}

// RollbackRequest is the body of POST …/rollback: the stored version
// whose spec becomes a new version.
type RollbackRequest struct {
	Revision *uint64 `json:"revision"`
}

// DeletedReply answers the delete of an application that had no
// instances left: it is gone at once.
type DeletedReply struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	State     string `json:"state"`
}

// Condition is one observation about a rollout, Kubernetes style
// (pkg/rollout's, named here for clients of these types).
type Condition = rollout.Condition
