package scheduler

import (
	"fmt"

	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/bcs-mesos/bcs-mesos/proto"
)

// Usage reports are opt-in per application (App.UsageReport, set for a
// workload an autoscaler's resource metric targets): one MESSAGE per
// instance per interval goes through the master. Launches carry the
// interval in their task specs; when the flag flips, every running task
// group is told the new interval (0 stops its reports).

// usageInterval is the report interval, in seconds, of a's launches: 0
// for none.
func (c *Core) usageInterval(a *app) float64 {
	if !a.rec.UsageReport {
		return 0
	}
	return c.cfg.UsageInterval.Seconds()
}

// reportUsage sets the report interval of a's task specs, launched or
// updated in place.
func (c *Core) reportUsage(a *app, specs []*proto.TaskSpec) {
	for _, spec := range specs {
		spec.UsageIntervalSeconds = c.usageInterval(a)
	}
}

// sendUsageInterval tells the executor of each running task group of a
// its report interval.
func (c *Core) sendUsageInterval(a *app) {
	interval := c.usageInterval(a)
	for _, inst := range a.sortedInstances() {
		for _, g := range []*instance{inst, inst.successor} {
			if g == nil || g.phase() != PhaseRunning || len(g.rec.Tasks) == 0 {
				continue
			}
			msg := &proto.Message{ID: fmt.Sprintf("usage-interval-%s-%d", g.rec.ID, c.now.UnixNano()), Type: proto.MessageUsageInterval,
				TaskID: g.rec.Tasks[0].ID, UsageIntervalSeconds: interval}
			data, err := msg.Encode()
			if err != nil {
				continue
			}
			c.call(calls.Message(g.rec.AgentID, g.rec.ID, data))
		}
	}
	c.logf("usage reports", "app", a.key(), "interval_seconds", interval)
}
