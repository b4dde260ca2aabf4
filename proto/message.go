package proto

import (
	"encoding/json"
	"time"
)

// MaxOutputBytes bounds MessageResult.Output: an executor sends the first
// MaxOutputBytes bytes of a command's output and sets Truncated.
const MaxOutputBytes = 64 << 10

// MessageType names what a scheduler → executor message asks.
type MessageType string

// The messages executors understand. Results come back as MessageResult
// with the same ID.
const (
	// MessageSignal sends Signal to the task's main process.
	MessageSignal MessageType = "signal"
	// MessageExec runs Command in the task (docker exec, or a shell in the
	// process's work path) and returns its output and exit code.
	MessageExec MessageType = "exec"
	// MessageReload runs the process's reloadCmd.
	MessageReload MessageType = "reload"
	// MessageRestart runs restartCmd, or stop then start without one; for a
	// container it restarts the container in place, keeping the pod and
	// its network.
	MessageRestart MessageType = "restart"
	// MessageUpdateEnv replaces environment variables for the next start.
	MessageUpdateEnv MessageType = "update-env"
	// MessageUpdateFile rewrites a configmap or secret file.
	MessageUpdateFile MessageType = "update-file"
	// MessageReportStatus asks for a fresh TaskStatus of the task now.
	MessageReportStatus MessageType = "report-status"
	// MessageUpdateResources changes cpu and memory limits in place.
	MessageUpdateResources MessageType = "update-resources"
	// MessageUpdate moves the whole task group to a new revision without
	// a new launch (a rollout's InplaceUpdate or HotPatchUpdate): Update
	// holds it, TaskID names any task of the group. See GroupUpdate.
	MessageUpdate MessageType = "update"
	// MessageUsageInterval sets how often the executor reports the usage
	// of the task group of TaskID (UsageReport): every
	// UsageIntervalSeconds, 0 stops the reports. It starts, retimes or
	// stops what the spec's UsageIntervalSeconds set at launch. An
	// executor from before usage reports answers it with an error.
	MessageUsageInterval MessageType = "usage-interval"
)

// Message is the data of a framework MESSAGE from the scheduler.
type Message struct {
	Version string      `json:"version"`
	ID      string      `json:"id"` // correlates the result
	Type    MessageType `json:"type"`
	TaskID  string      `json:"taskID"`

	Signal  int      `json:"signal,omitempty"`
	Command []string `json:"command,omitempty"`
	// Env is update-env's environment, or what exec adds to the task's.
	Env []EnvVar `json:"env,omitempty"`
	// User and WorkingDir run exec's command as that user and there
	// ("": the task's own); Privileged runs it privileged (containers
	// only).
	User       string     `json:"user,omitempty"`
	WorkingDir string     `json:"workingDir,omitempty"`
	Privileged bool       `json:"privileged,omitempty"`
	File       *File      `json:"file,omitempty"`
	Resources  *Resources `json:"resources,omitempty"`
	// Update is the new revision of MessageUpdate.
	Update *GroupUpdate `json:"update,omitempty"`
	// UsageIntervalSeconds is MessageUsageInterval's new interval; 0
	// stops the reports.
	UsageIntervalSeconds float64 `json:"usageIntervalSeconds,omitempty"`
	// Timeout bounds exec, reload and restart; 0 means the executor's default.
	Timeout time.Duration `json:"timeout,omitempty"`
}

// UpdateMode says how MessageUpdate reaches the running tasks.
type UpdateMode string

// The update modes (seed 004's InplaceUpdate and HotPatchUpdate).
const (
	// UpdateInPlace restarts the tasks whose spec changed, in the same
	// task group: the pod keeps its network (host ports, CNI IP) and the
	// process pod its work path; containers are re-created from their new
	// spec, processes stop, get their new packages, files and environment,
	// and start again (a new pid). First every changed task reports
	// TASK_RUNNING with healthy=false and waits GracePeriodSeconds, so
	// that traffic drains; after the restart it is healthy again by its
	// checks (true at once without checks). With Restart every task
	// restarts, changed or not (a rolling restart).
	UpdateInPlace UpdateMode = "InPlace"
	// UpdateHotPatch restarts nothing: the pid stays. Containers get the
	// files their new image changed copied in, new limits (docker
	// update) and new configmap/secret files, then ReloadSignal or
	// ReloadCommand; processes get their new packages unpacked into place,
	// new files and cgroup limits, then their reloadCmd. A change that
	// cannot be applied without a restart (command, args, env, ports,
	// volumes, network, user, work path …) refuses the whole update,
	// naming the fields, and changes nothing.
	UpdateHotPatch UpdateMode = "HotPatch"
)

// GroupUpdate is a task group's next revision, for MessageUpdate.
//
// The executor applies one update at a time per task group and is
// idempotent: an update to the revision the group already runs changes
// nothing and reports the tasks' status again, so the scheduler may
// resend it when a message or a status was lost. Progress travels in
// TaskStatus: the tasks' data carries the revision they run (Revision of
// ContainerInfo / ProcessInfo) and changes to the new revision when the
// update applied; the MessageResult says OK or why not (a failed in-place
// update leaves the old revision running where it can, else the task
// fails).
type GroupUpdate struct {
	Revision uint64     `json:"revision"`
	Mode     UpdateMode `json:"mode"`
	// GracePeriodSeconds is InplaceUpdate's wait between reporting
	// unhealthy and restarting (inPlaceUpdateStrategy.gracePeriodSeconds).
	GracePeriodSeconds float64 `json:"gracePeriodSeconds,omitempty"`
	// Restart restarts every task in place, changed or not.
	Restart bool `json:"restart,omitempty"`
	// Tasks are the new specs, one per task of the group, by task ID; the
	// specs' Instance.Version is Revision.
	Tasks []TaskUpdate `json:"tasks"`
	// ReloadSignal and ReloadCommand (argv) tell a hot-patched container's
	// process to pick up its new files (hotPatchUpdateStrategy); at most
	// one is set; neither: the files are copied and nothing is signalled.
	ReloadSignal  int      `json:"reloadSignal,omitempty"`
	ReloadCommand []string `json:"reloadCommand,omitempty"`
}

// TaskUpdate is one task's spec in a GroupUpdate.
type TaskUpdate struct {
	TaskID string    `json:"taskID"`
	Spec   *TaskSpec `json:"spec"`
}

// MessageResult is the data of the executor's MESSAGE answering one.
type MessageResult struct {
	Version string      `json:"version"`
	ID      string      `json:"id"`
	Type    MessageType `json:"type"`
	TaskID  string      `json:"taskID"`
	OK      bool        `json:"ok"`
	Output  string      `json:"output,omitempty"`
	// Truncated: the command wrote more than MaxOutputBytes; Output is
	// the beginning.
	Truncated bool   `json:"truncated,omitempty"`
	ExitCode  int    `json:"exitCode"`
	Error     string `json:"error,omitempty"`
}

// OutputBuffer collects a command's output (stdout and stderr) for a
// MessageResult: it keeps the first MaxOutputBytes bytes and drops the
// rest, so that a chatty command cannot fill the executor's memory or
// the framework message.
type OutputBuffer struct {
	kept      []byte
	truncated bool
}

// Write keeps what fits and takes all of p, so that the command is never
// stopped by a short write.
func (b *OutputBuffer) Write(p []byte) (int, error) {
	room := MaxOutputBytes - len(b.kept)
	if len(p) > room {
		b.kept, b.truncated = append(b.kept, p[:room]...), true
		return len(p), nil
	}
	b.kept = append(b.kept, p...)
	return len(p), nil
}

// String returns the output kept.
func (b *OutputBuffer) String() string { return string(b.kept) }

// Truncated reports whether output was dropped.
func (b *OutputBuffer) Truncated() bool { return b.truncated }

// Encode returns the message data, stamped with Version.
func (m *Message) Encode() ([]byte, error) {
	m.Version = Version
	return json.Marshal(m)
}

// DecodeMessage reads a scheduler message.
func DecodeMessage(data []byte) (*Message, error) {
	var m Message
	if err := decode(data, &m, &m.Version); err != nil {
		return nil, err
	}
	return &m, nil
}

// Encode returns the result data, stamped with Version.
func (r *MessageResult) Encode() ([]byte, error) {
	r.Version = Version
	return json.Marshal(r)
}

// DecodeMessageResult reads an executor's answer.
func DecodeMessageResult(data []byte) (*MessageResult, error) {
	var r MessageResult
	if err := decode(data, &r, &r.Version); err != nil {
		return nil, err
	}
	return &r, nil
}
