package proto

import "time"

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
}

// ProcessInfo is the TaskStatus.data of a process task.
type ProcessInfo struct {
	Pid       int            `json:"pid,omitempty"`
	ProcName  string         `json:"procName"`
	StartedAt time.Time      `json:"startedAt,omitempty"`
	ExitCode  *int           `json:"exitCode,omitempty"`
	WorkPath  string         `json:"workPath"`
	Ports     map[string]int `json:"ports,omitempty"`
}
