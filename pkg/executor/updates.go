package executor

import (
	"context"
	"fmt"
	"sync"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
)

// Updates applies a task group's updates (proto.MessageUpdate) one at a
// time, for both runtimes: a duplicate of the revision under way — the
// scheduler resends an update whose answer or statuses it lost — waits
// for it and shares its outcome; another revision is refused
// (errdefs.ErrConflict) until it is done. The zero value is ready.
type Updates struct {
	mu  sync.Mutex
	run *updateRun
}

// updateRun is the update under way.
type updateRun struct {
	revision uint64
	done     chan struct{}
	err      error // set before done closes
}

// Do applies revision with apply, or waits (bounded by ctx) for the
// application of revision already under way.
func (u *Updates) Do(ctx context.Context, revision uint64, apply func() error) error {
	u.mu.Lock()
	if run := u.run; run != nil {
		u.mu.Unlock()
		if run.revision != revision {
			return fmt.Errorf("an update to revision %d is under way: %w", run.revision, errdefs.ErrConflict)
		}
		select {
		case <-run.done:
			return run.err
		case <-ctx.Done():
			return fmt.Errorf("waiting for the update to revision %d under way: %w", revision, ctx.Err())
		}
	}
	run := &updateRun{revision: revision, done: make(chan struct{})}
	u.run = run
	u.mu.Unlock()
	run.err = apply()
	u.mu.Lock()
	u.run = nil
	u.mu.Unlock()
	close(run.done)
	return run.err
}
