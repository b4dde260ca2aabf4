package scheduler

import (
	"context"
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
