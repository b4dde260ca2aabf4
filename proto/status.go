package proto

import (
	"encoding/json"
	"time"
)

// ContainerInfo is the TaskStatus.data of a container task once it runs:
// seed 001's BcsContainerInfo, field for field.
type ContainerInfo struct {
	ID          string    `json:"ID,omitempty"`
	Name        string    `json:"Name,omitempty"`
	Pid         int       `json:"Pid,omitempty"`
	StartAt     time.Time `json:"StartAt,omitempty"`
	FinishAt    time.Time `json:"FinishAt,omitempty"`
	Status      string    `json:"Status,omitempty"` // paused, restarting, running, dead, created, exited
	ExitCode    int       `json:"ExitCode,omitempty"`
	Hostname    string    `json:"Hostname,omitempty"`
	NetworkMode string    `json:"NetworkMode,omitempty"`
	IPAddress   string    `json:"IPAddress,omitempty"`
	// Revision is the application revision the container runs: the
	// TaskSpec's Instance.Version at launch, a GroupUpdate's Revision once
	// that applied.
	Revision uint64 `json:"revision,omitempty"`
}

// ProcessInfo is the TaskStatus.data of a process task.
type ProcessInfo struct {
	Pid       int            `json:"pid,omitempty"`
	ProcName  string         `json:"procName"`
	StartedAt time.Time      `json:"startedAt,omitempty"`
	ExitCode  *int           `json:"exitCode,omitempty"`
	WorkPath  string         `json:"workPath"`
	Ports     map[string]int `json:"ports,omitempty"`
	// Revision is the application revision the process runs (see
	// ContainerInfo.Revision).
	Revision uint64 `json:"revision,omitempty"`
}

// RevisionOf reads the revision from a task's TaskStatus.data
// (ContainerInfo or ProcessInfo); 0 when it names none.
func RevisionOf(data []byte) uint64 {
	var v struct {
		Revision uint64 `json:"revision"`
	}
	if json.Unmarshal(data, &v) != nil {
		return 0
	}
	return v.Revision
}
