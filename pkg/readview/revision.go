package readview

import (
	"context"
	"sync"
)

// revisions shares etcd's revision reads among concurrent Fresh calls:
// dashboards polling while the scheduler launches would otherwise send
// etcd one linearizable read per API read, each queued with the
// scheduler's writes.
//
// A shared read must still answer a revision etcd had when the caller
// came (or later): a caller arriving while a read is in flight does not
// take its answer, which etcd may have made before the caller's own
// write was acknowledged, but waits for the next read, started once the
// one in flight ends. At most two reads are outstanding, whatever the
// callers.
type revisions struct {
	read func(context.Context) (int64, error)

	mu       sync.Mutex
	inFlight bool
	next     *revisionRead // the read callers arriving now wait for; nil: none yet
}

// revisionRead is one read of the revision, answered to every caller
// that waits for it.
type revisionRead struct {
	ctx  context.Context // the first caller's, without its cancellation: others wait too
	done chan struct{}   // closed once rev and err are set
	rev  int64
	err  error
}

// current is etcd's revision read after current was called.
func (r *revisions) current(ctx context.Context) (int64, error) {
	r.mu.Lock()
	rd := r.next
	if rd == nil {
		rd = &revisionRead{ctx: context.WithoutCancel(ctx), done: make(chan struct{})}
		r.next = rd
	}
	if !r.inFlight {
		r.startNext()
	}
	r.mu.Unlock()
	select {
	case <-rd.done:
		return rd.rev, rd.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// startNext sends the read callers wait for; r.mu is held.
func (r *revisions) startNext() {
	rd := r.next
	r.next, r.inFlight = nil, true
	go func() {
		rd.rev, rd.err = r.read(rd.ctx)
		close(rd.done)
		r.mu.Lock()
		defer r.mu.Unlock()
		r.inFlight = false
		if r.next != nil {
			r.startNext()
		}
	}()
}
