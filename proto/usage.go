package proto

import (
	"encoding/json"
	"fmt"
	"math"
	"time"
)

// UsageReportType tags an executor's usage report among its framework
// messages, so that the scheduler tells it from a MessageResult.
const UsageReportType = "usage"

// MinUsageInterval is the shortest report interval an executor takes:
// a floor against a scheduler gone wrong, not a setting.
const MinUsageInterval = 100 * time.Millisecond

// UsageReport is the data of the framework MESSAGE an executor sends
// every report interval: what each running task of one task group has
// used. A task the executor cannot measure (not running yet, ended, no
// cgroup) is left out; a group with no task measured sends nothing.
type UsageReport struct {
	Version string `json:"version"`
	// Type is UsageReportType.
	Type        string      `json:"type"`
	TaskGroupID string      `json:"taskGroupID"`
	Tasks       []TaskUsage `json:"tasks"`
}

// TaskUsage is one sample of one task: the scheduler takes the CPU rate
// from two samples.
type TaskUsage struct {
	TaskID string `json:"taskID"`
	// CPUNanos is the CPU time every process of the task has used since
	// the task's cgroup or container was created (it goes on across an
	// in-place restart of a process, starts again with a new container).
	CPUNanos uint64 `json:"cpuNanos"`
	// MemBytes is the working set: memory used minus the inactive file
	// cache, which the kernel reclaims first (what the kubelet and docker
	// stats show).
	MemBytes uint64 `json:"memBytes"`
	// At is when the sample was taken, on the agent's clock.
	At time.Time `json:"at"`
}

// Encode returns the report data, stamped with Version and Type.
func (r *UsageReport) Encode() ([]byte, error) {
	r.Version, r.Type = Version, UsageReportType
	return json.Marshal(r)
}

// DecodeUsageReport reads an executor's message data as a usage
// report; ok is false when the data is no usage report (a MessageResult,
// or no JSON), err says why a usage report cannot be read (another
// version). One decoding serves both, for the scheduler that reads many.
func DecodeUsageReport(data []byte) (r *UsageReport, ok bool, err error) {
	r = &UsageReport{}
	if json.Unmarshal(data, r) != nil || r.Type != UsageReportType {
		return nil, false, nil
	}
	if r.Version != Version {
		return nil, true, fmt.Errorf("bcs proto: usage report of version %q, this build reads %q", r.Version, Version)
	}
	return r, true, nil
}

// UsageInterval reads a usageIntervalSeconds field (field names it in
// the error): 0 is no reports, else at least MinUsageInterval.
func UsageInterval(field string, seconds float64) (time.Duration, error) {
	if seconds == 0 {
		return 0, nil
	}
	if math.IsNaN(seconds) || math.IsInf(seconds, 0) || seconds < MinUsageInterval.Seconds() || seconds > math.MaxInt64/float64(time.Second) {
		return 0, fmt.Errorf("%s %v: want 0 (no usage reports) or at least %v seconds", field, seconds, MinUsageInterval.Seconds())
	}
	return time.Duration(seconds * float64(time.Second)), nil
}
