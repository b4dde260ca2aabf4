package executor_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/executor"
)

// proto.GroupUpdate: "The executor applies one update at a time per task
// group and is idempotent": a duplicate of the revision under way shares
// its outcome (it waits rather than applying: see the waiter whose context
// ends; the runtimes' tests show duplicates sharing the outcome with real
// pods and processes), another revision is refused until it is done.
func TestUpdatesOneAtATime(t *testing.T) {
	var u executor.Updates
	var applied atomic.Int32
	release := make(chan struct{})
	started := make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- u.Do(context.Background(), 7, func() error {
			applied.Add(1)
			close(started)
			<-release
			return errors.New("pull failed")
		})
	}()
	<-started
	if err := u.Do(context.Background(), 8, func() error { applied.Add(1); return nil }); !errors.Is(err, errdefs.ErrConflict) {
		t.Errorf("another revision during the update: %v, want a conflict", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := u.Do(ctx, 7, func() error { applied.Add(1); return nil }); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a waiter whose context ends: %v", err)
	}
	close(release)
	if err := <-first; err == nil || err.Error() != "pull failed" {
		t.Errorf("outcome %v", err)
	}
	if n := applied.Load(); n != 1 {
		t.Errorf("applied %d times, want once", n)
	}
	if err := u.Do(context.Background(), 8, func() error { applied.Add(1); return nil }); err != nil || applied.Load() != 2 {
		t.Errorf("the next revision after: %v (applied %d)", err, applied.Load())
	}
}
