package devcluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/executor"
)

// containerCheckpoint is what an agent keeps of one container, an
// executor with its tasks or a command task, for the next run of the
// cluster to recover it (like the run directories of a Mesos agent's
// meta/slaves/<agent>/frameworks/<fw>/executors/<executor>/runs). It is
// written before the container's process starts, so that no process of
// a container escapes the next run, and again on each change of its
// tasks.
type containerCheckpoint struct {
	FrameworkID string              `json:"framework_id"`
	ContainerID string              `json:"container_id"`
	Executor    *mesos.ExecutorInfo `json:"executor,omitempty"` // nil: a command task
	Sandbox     string              `json:"sandbox"`
	// Session is the container's session: the pid of its leader, 0 until
	// it started, and the leader's start time, which tells it from a
	// later process of the same pid.
	Session   int    `json:"session,omitempty"`
	StartTime uint64 `json:"start_time,omitempty"`
	// Ended: the container's process is gone; only the last updates of
	// its tasks wait for the framework's acknowledgement.
	Ended bool             `json:"ended,omitempty"`
	Tasks []taskCheckpoint `json:"tasks"`
	// Queued are the launches the executor gets when it subscribes.
	Queued []*executor.Event `json:"queued,omitempty"`
}

// taskCheckpoint is one task of a container: its info, its latest
// statuses (the last one its state) and the updates the framework has
// not acknowledged yet, in order.
type taskCheckpoint struct {
	Info           mesos.TaskInfo         `json:"info"`
	Statuses       []mesos.TaskStatus     `json:"statuses"`
	Unacknowledged []unacknowledgedUpdate `json:"unacknowledged,omitempty"`
}

type unacknowledgedUpdate struct {
	Status       mesos.TaskStatus `json:"status"`
	FromExecutor bool             `json:"from_executor,omitempty"`
}

// checkpointDir holds the agent's container checkpoints.
func (a *agent) checkpointDir() string { return filepath.Join(a.m.metaDir(), "agents", a.id) }

func (a *agent) checkpointPath(containerID string) string {
	return filepath.Join(a.checkpointDir(), containerID+".json")
}

// checkpointExecutor writes what the agent keeps of ex's container, or
// removes it once nothing of it is left to recover: it ended and its
// framework acknowledged the last update of each of its tasks, or the
// framework is gone, or the cluster stopped (everything it ran was
// killed). Caller holds a.m.mu.
func (a *agent) checkpointExecutor(ex *executorRun) {
	if !a.m.durable() {
		return
	}
	live := a.executors[ex.key()] == ex
	var tasks []taskCheckpoint
	if live {
		for _, t := range ex.tasks {
			tasks = append(tasks, checkpointOf(t))
		}
	}
	for _, t := range ex.ended {
		if len(t.pending) > 0 {
			tasks = append(tasks, checkpointOf(t))
		}
	}
	if !live && (len(tasks) == 0 || a.m.stopped || !a.m.registered(ex.fw)) {
		a.removeCheckpoint(ex.containerID)
		return
	}
	info := ex.info
	ck := &containerCheckpoint{
		FrameworkID: ex.fw.id, ContainerID: ex.containerID, Executor: &info, Sandbox: ex.sandbox,
		Session: ex.sid, StartTime: ex.startTime, Ended: !live, Tasks: tasks,
	}
	if live {
		ck.Queued = ex.queued
	}
	a.writeCheckpoint(ck)
}

// checkpointCommand writes what the agent keeps of a command task's
// container while it runs, and removes it once the task is terminal.
// Caller holds a.m.mu.
func (a *agent) checkpointCommand(ct *commandTask) {
	if !a.m.durable() {
		return
	}
	if a.commandTasks[ct.task.key()] != ct {
		a.removeCheckpoint(ct.containerID)
		return
	}
	a.writeCheckpoint(&containerCheckpoint{
		FrameworkID: ct.task.fw.id, ContainerID: ct.containerID, Sandbox: ct.sandbox,
		Session: ct.sid, StartTime: ct.startTime, Tasks: []taskCheckpoint{checkpointOf(ct.task)},
	})
}

// checkpointTask checkpoints the container of t. Caller holds a.m.mu.
func (a *agent) checkpointTask(t *task) {
	switch {
	case t.exec != nil:
		a.checkpointExecutor(t.exec)
	case t.command != nil:
		a.checkpointCommand(t.command)
	}
}

func checkpointOf(t *task) taskCheckpoint {
	tc := taskCheckpoint{Info: t.info, Statuses: t.statuses}
	for _, p := range t.pending {
		tc.Unacknowledged = append(tc.Unacknowledged, unacknowledgedUpdate{Status: p.status, FromExecutor: p.fromExecutor})
	}
	return tc
}

func (a *agent) writeCheckpoint(ck *containerCheckpoint) {
	if err := writeFileAtomically(a.checkpointPath(ck.ContainerID), ck); err != nil {
		a.m.log().Warn("container not checkpointed: a restart would not recover it", "agent", a.id, "container", ck.ContainerID, "err", err)
	}
}

func (a *agent) removeCheckpoint(containerID string) {
	if err := os.Remove(a.checkpointPath(containerID)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		a.m.log().Warn("container checkpoint not removed", "agent", a.id, "container", containerID, "err", err)
	}
}

// readCheckpoints reads the container checkpoints under dir (an agent's
// checkpoint directory).
func readCheckpoints(dir string) ([]containerCheckpoint, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var cks []containerCheckpoint
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		var ck containerCheckpoint
		if err := json.Unmarshal(data, &ck); err != nil {
			return nil, fmt.Errorf("container checkpoint %q: %v", path, err)
		}
		cks = append(cks, ck)
	}
	return cks, nil
}
