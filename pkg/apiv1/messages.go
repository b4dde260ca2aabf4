package apiv1

import (
	"encoding/json"
	"fmt"

	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// The bodies of POST /v1/taskgroups/{id}/{exec,signal,env,files,resources}:
// each is a message to the executor of the task group, which answers with
// a MessageReply.

// TaskRequest names the task of the task group a message is for and how
// long the executor may take.
type TaskRequest struct {
	// Task is a container or process name of the task group, or a task
	// ID; optional when the group has one task.
	Task string `json:"task"`
	// Timeout bounds the command and the wait for the executor's answer
	// ("30s"); default 1m, at most 10m.
	Timeout manifest.Duration `json:"timeout"`
}

// ExecRequest runs a command in the task: docker exec in a container, a
// shell in a process's work path as its user. Env is added to the task's
// environment; user, workingDir and privileged are docker exec's (a
// process runs commands as its own user, never privileged).
type ExecRequest struct {
	TaskRequest
	Command    []string       `json:"command"`
	Env        []proto.EnvVar `json:"env,omitempty"`
	User       string         `json:"user,omitempty"`
	WorkingDir string         `json:"workingDir,omitempty"`
	Privileged bool           `json:"privileged,omitempty"`
}

// SignalRequest sends a signal to the task's main process.
type SignalRequest struct {
	TaskRequest
	Signal SignalName `json:"signal"`
}

// SignalName is a signal name ("SIGHUP", "HUP") or number, as a JSON
// string or number.
type SignalName string

// UnmarshalJSON takes a string or a number.
func (s *SignalName) UnmarshalJSON(data []byte) error {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	switch v := v.(type) {
	case string:
		*s = SignalName(v)
	case float64:
		*s = SignalName(string(data))
	default:
		return fmt.Errorf("want a signal name such as \"SIGHUP\", or a number")
	}
	return nil
}

// EnvRequest replaces environment variables: a container is re-created
// with them, a process gets them at its next start.
type EnvRequest struct {
	TaskRequest
	Env []proto.EnvVar `json:"env"`
}

// FilesRequest writes a file into the task's container (what a configmap
// or secret item becomes).
type FilesRequest struct {
	TaskRequest
	File *proto.File `json:"file"`
}

// ResourcesRequest changes the task's cpu and memory limits in place.
type ResourcesRequest struct {
	TaskRequest
	Resources *proto.Resources `json:"resources"`
}
