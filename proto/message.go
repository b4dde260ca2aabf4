package proto

import (
	"encoding/json"
	"time"
)

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
)

// Message is the data of a framework MESSAGE from the scheduler.
type Message struct {
	Version string      `json:"version"`
	ID      string      `json:"id"` // correlates the result
	Type    MessageType `json:"type"`
	TaskID  string      `json:"taskID"`

	Signal    int        `json:"signal,omitempty"`
	Command   []string   `json:"command,omitempty"`
	Env       []EnvVar   `json:"env,omitempty"`
	File      *File      `json:"file,omitempty"`
	Resources *Resources `json:"resources,omitempty"`
	// Timeout bounds exec, reload and restart; 0 means the executor's default.
	Timeout time.Duration `json:"timeout,omitempty"`
}

// MessageResult is the data of the executor's MESSAGE answering one.
type MessageResult struct {
	Version  string      `json:"version"`
	ID       string      `json:"id"`
	Type     MessageType `json:"type"`
	TaskID   string      `json:"taskID"`
	OK       bool        `json:"ok"`
	Output   string      `json:"output,omitempty"`
	ExitCode int         `json:"exitCode"`
	Error    string      `json:"error,omitempty"`
}

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
