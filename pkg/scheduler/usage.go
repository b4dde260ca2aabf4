package scheduler

import (
	"sync"
	"time"

	"github.com/bcs-mesos/bcs-mesos/proto"
)

// Usage reports (proto.UsageReport) come from the executors of task
// groups launched with a usage interval, one framework MESSAGE per group
// per interval, tens of thousands a minute in a large fleet. They never
// reach the loop: the subscription's goroutine hands them to a table
// beside the core (messages.go offLoop), which keeps each group's last
// sample and the CPU rate between its last two; Driver.Usage reads it
// under the table's lock. The table is the driver's memory only: a new
// driver (a failover) knows a group's rate two reports after it starts.

// usageRetention is how long a task group's usage is kept after its last
// report, at least: longer than any report interval, so that a group
// that stopped reporting (it ended, or its reports were turned off)
// leaves the table soon enough.
const usageRetention = 10 * time.Minute

// usageSweepEvery bounds how often the table looks for groups to drop.
const usageSweepEvery = time.Minute

// TaskGroupUsage is what the executor of a task group last reported of
// its usage (Driver.Usage).
type TaskGroupUsage struct {
	// CPUCores is the CPU time the group's tasks used between its last
	// two reports over the time between them, summed over its tasks.
	CPUCores float64
	// MemBytes is the tasks' working set at the last report, summed.
	MemBytes uint64
	// Received is when the last report came, on the scheduler's clock.
	Received time.Time
	// Window is the time between the two samples CPUCores comes from.
	Window time.Duration
}

// usageTable is the last usage report of each task group, by task group
// ID.
type usageTable struct {
	mu     sync.Mutex
	groups map[string]*groupUsage
	swept  time.Time
}

// groupUsage is one task group's last report and the rate it gave.
type groupUsage struct {
	samples []proto.TaskUsage
	usage   TaskGroupUsage
	rated   bool // samples followed a report of the same tasks
}

func newUsageTable() *usageTable { return &usageTable{groups: map[string]*groupUsage{}} }

// record takes executor's report, received at now; it drops one older
// than the one it has.
func (u *usageTable) record(executor string, r *proto.UsageReport, now time.Time) {
	id := r.TaskGroupID
	if id == "" {
		id = executor
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.sweep(now)
	g := u.groups[id]
	if g == nil {
		g = &groupUsage{}
		u.groups[id] = g
	}
	next, rated, ok := rate(g.samples, r.Tasks)
	if !ok {
		return
	}
	next.Received = now
	g.samples, g.usage, g.rated = r.Tasks, next, rated
}

// rate computes what samples say after prev: the CPU rate of each task
// since its previous sample, summed, when every task has one it
// followed (rated); the memory summed. ok is false when a sample is
// not newer than its task's previous one (a report that came late).
func rate(prev, samples []proto.TaskUsage) (u TaskGroupUsage, rated, ok bool) {
	rated = len(samples) > 0
	for _, s := range samples {
		u.MemBytes += s.MemBytes
		i := indexOfTask(prev, s.TaskID)
		if i < 0 {
			rated = false
			continue
		}
		p := prev[i]
		if !s.At.After(p.At) {
			return TaskGroupUsage{}, false, false
		}
		if s.CPUNanos < p.CPUNanos { // a new container: its counter started again
			rated = false
			continue
		}
		window := s.At.Sub(p.At)
		u.CPUCores += float64(s.CPUNanos-p.CPUNanos) / float64(window.Nanoseconds())
		u.Window = max(u.Window, window)
	}
	return u, rated, true
}

func indexOfTask(samples []proto.TaskUsage, taskID string) int {
	for i, s := range samples {
		if s.TaskID == taskID {
			return i
		}
	}
	return -1
}

// sweep drops, at most once per usageSweepEvery, the groups whose last
// report is older than retained allows. Caller holds mu.
func (u *usageTable) sweep(now time.Time) {
	if now.Sub(u.swept) < usageSweepEvery {
		return
	}
	u.swept = now
	for id, g := range u.groups {
		if !g.fresh(now) {
			delete(u.groups, id)
		}
	}
}

// fresh reports whether g's last report is recent enough to keep:
// within usageRetention, or three of its intervals.
func (g *groupUsage) fresh(now time.Time) bool {
	return now.Sub(g.usage.Received) <= max(usageRetention, 3*g.usage.Window)
}

// Usage returns the usage the executors of taskGroupIDs last reported,
// for those with a CPU rate: two reports in a row from the same tasks,
// the last one recent (a group that stopped reporting is left out after
// usageRetention). Reports never reach the core; Usage reads them from
// any goroutine, the loop's state untouched.
func (d *Driver) Usage(taskGroupIDs []string) map[string]TaskGroupUsage {
	now := d.cfg.Clock.Now()
	out := make(map[string]TaskGroupUsage, len(taskGroupIDs))
	u := d.usage
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, id := range taskGroupIDs {
		if g := u.groups[id]; g != nil && g.rated && g.fresh(now) {
			out[id] = g.usage
		}
	}
	return out
}
