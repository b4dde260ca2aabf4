package apiv1

import (
	"encoding/json"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// ObjectView is a configmap, secret, service or hook template as the API
// returns it. A secret's spec never carries its values.
type ObjectView struct {
	Kind      manifest.Kind   `json:"kind"`
	Namespace string          `json:"namespace"`
	Name      string          `json:"name"`
	Revision  int64           `json:"revision"`
	Spec      json.RawMessage `json:"spec"`
	CreatedAt time.Time       `json:"createdAt"`
	UpdatedAt time.Time       `json:"updatedAt"`
}

// DependsView is a depends object with its dependency pods.
type DependsView struct {
	ObjectView
	Status DependsStatus `json:"status"`
}

// DependsStatus says who uses a depends object and where it runs.
type DependsStatus struct {
	// ReferencedBy are the applications naming it ("namespace/name") in
	// the namespaces the caller may read; ReferencedByOthers counts the
	// others' (another namespace's applications may name it), which are
	// not named.
	ReferencedBy       []string `json:"referencedBy"`
	ReferencedByOthers int      `json:"referencedByOthers"`
	// Pods are its dependency pods: one per agent (policy node) or per
	// agent and namespace (policy namespace) where referencing instances
	// are live, or were until less than the GC delay ago.
	Pods []DependencyPodView `json:"pods"`
}

// DependencyPodView is one dependency pod: the deployment that runs it
// (at /v1/deployments/{namespace}/{name}) and its instance.
type DependencyPodView struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Node is the hostname of its agent; Agent the agent's ID.
	Node   string                 `json:"node"`
	Agent  string                 `json:"agent,omitempty"`
	Policy manifest.DependsPolicy `json:"policy"`
	// ServedNamespace is, with policy namespace, the namespace whose
	// instances use it.
	ServedNamespace string `json:"servedNamespace,omitempty"`
	// Users is its reference count: the live referencing instances on
	// its agent. IdleSince is when the last one left.
	Users     int       `json:"users"`
	IdleSince time.Time `json:"idleSince,omitzero"`
	State     AppState  `json:"state"`
	Message   string    `json:"message,omitempty"`
	Version   uint64    `json:"version"`
	// TaskGroupID and TaskState are its instance's, once launched.
	TaskGroupID string `json:"taskGroupID,omitempty"`
	TaskState   string `json:"taskState,omitempty"`
}

// CommandView is the answer to a command (the original's kind command):
// what each task of the target's instances answered.
type CommandView struct {
	Target  manifest.CommandTarget `json:"target"`
	Command []string               `json:"command"`
	Results []CommandResult        `json:"results"`
}

// CommandResult is one task's answer, or why it was not asked (an
// instance not running: ok false, error says so).
type CommandResult struct {
	MessageReply
	Instance int `json:"instance"`
}

// MessageReply is the executor's answer to a message (exec, signal, env,
// files, resources): ok false with error (and exitCode for a command)
// when it refused or the command failed.
type MessageReply struct {
	TaskGroupID string `json:"taskGroupID"`
	// Task is the task's ID.
	Task string            `json:"task"`
	Type proto.MessageType `json:"type"`
	OK   bool              `json:"ok"`
	// Output is what an exec's command wrote to stdout and stderr: the
	// first 64 KiB, Truncated when there was more.
	Output    string `json:"output"`
	Truncated bool   `json:"truncated,omitempty"`
	ExitCode  int    `json:"exitCode"`
	Error     string `json:"error"`
}
