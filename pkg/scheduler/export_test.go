package scheduler

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// Waiting counts the callers of Driver.Message waiting for an answer.
func (d *Driver) Waiting() int {
	d.waitersMu.Lock()
	defer d.waitersMu.Unlock()
	return len(d.waiters)
}

// Busy keeps the driver's loop busy for d, as a long step would.
func (d *Driver) Busy(ctx context.Context, busy time.Duration) error {
	return d.query(ctx, func(*Core, time.Time) { time.Sleep(busy) })
}

// StaleKept lists where what the core keeps step by step differs from a
// full recomputation over every application and instance: statuses a step
// failed to mark as touched, launches pendingSet misses or invents.
func StaleKept(c *Core) []string {
	var stale []string
	var pending []*instance
	launching := 0
	for _, a := range c.sortedApps() {
		if st := c.appStatus(a); st != a.status {
			stale = append(stale, fmt.Sprintf("%s: kept status %+v, computed %+v", a.key(), a.status, st))
		}
		if k := &a.kept; a.tmpl != nil && k.holds(a, a.sortedInstances(), k.updateHash) {
			for i, inst := range k.sorted {
				if seen := c.seenByRollout(inst, k.updateHash); !slices.Contains(k.changed, inst) && seen != k.seen[i] {
					stale = append(stale, fmt.Sprintf("%s/%d: the rollout kept %+v, sees %+v", a.key(), inst.rec.Index, k.seen[i], seen))
				}
			}
		}
		for _, inst := range a.sortedInstances() {
			for _, launch := range []*instance{inst, inst.successor} {
				if launch == nil {
					continue
				}
				if launch.phase() == PhaseLaunched && c.attached(launch) {
					launching++
				}
				if a.tmpl != nil && a.rec.State != registry.AppDeleting && launch.phase() == PhasePending && launch.rec.WaitingFor == "" {
					pending = append(pending, launch)
				}
			}
		}
	}
	if kept, _ := c.pending(math.MaxInt); !slices.Equal(kept, pending) || c.waiting() != (len(pending) > 0) {
		stale = append(stale, fmt.Sprintf("kept %d pending launches, computed %d", len(kept), len(pending)))
	}
	if kept := c.underWay(); kept != launching {
		stale = append(stale, fmt.Sprintf("kept %d launches under way, computed %d", kept, launching))
	}
	return stale
}
