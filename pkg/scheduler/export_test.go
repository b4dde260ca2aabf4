package scheduler

import (
	"context"
	"fmt"
	"time"
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

// StaleStatuses lists the applications whose kept status differs from
// their status computed afresh over all their instances: what a step
// failed to mark as touched.
func StaleStatuses(c *Core) []string {
	var stale []string
	for _, a := range c.sortedApps() {
		if st := c.appStatus(a); st != a.status {
			stale = append(stale, fmt.Sprintf("%s: kept %+v, computed %+v", a.key(), a.status, st))
		}
	}
	return stale
}
