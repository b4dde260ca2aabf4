package readview

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// etcdRevisions stands for etcd: a read answers the revision etcd had
// when the read arrived, and returns once the test releases it.
type etcdRevisions struct {
	revision atomic.Int64
	reads    chan int64 // each read's answer, as it arrives
	release  chan struct{}
}

func newEtcdRevisions() *etcdRevisions {
	e := &etcdRevisions{reads: make(chan int64, 10), release: make(chan struct{})}
	e.revision.Store(1)
	return e
}

func (e *etcdRevisions) read(context.Context) (int64, error) {
	rev := e.revision.Load()
	e.reads <- rev
	<-e.release
	return rev, nil
}

// arrival is a caller's context that says when the caller waits: current
// asks for Done only once it has joined a read.
type arrival struct {
	context.Context
	waits chan struct{}
	once  sync.Once
}

func (a *arrival) Done() <-chan struct{} {
	a.once.Do(func() { close(a.waits) })
	return a.Context.Done()
}

func arrive(ctx context.Context) *arrival {
	return &arrival{Context: ctx, waits: make(chan struct{})}
}

// Callers arriving while a read is in flight share the next one, and it
// answers a revision at least that of the write acknowledged before they
// came (read your writes): they never take the answer of the read in
// flight, which etcd made before the write. The first caller giving up
// stops nobody else's read.
func TestRevisionReadsSharedAfterArrival(t *testing.T) {
	etcd := newEtcdRevisions()
	r := &revisions{read: etcd.read}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	firstCtx, giveUp := context.WithCancel(ctx)
	first := arrive(firstCtx)
	firstDone := make(chan error, 1)
	go func() { _, err := r.current(first); firstDone <- err }()
	if got := <-etcd.reads; got != 1 {
		t.Fatalf("first read answers %d, want 1", got)
	}
	<-first.waits
	giveUp()
	if err := <-firstDone; !errors.Is(err, context.Canceled) {
		t.Fatalf("the first caller, given up, got %v", err)
	}

	etcd.revision.Store(2) // a write acknowledged while the first read is in flight
	const callers = 10
	got := make(chan int64, callers)
	for range callers {
		c := arrive(ctx)
		go func() {
			rev, err := r.current(c)
			if err != nil {
				t.Error(err)
			}
			got <- rev
		}()
		<-c.waits
	}
	etcd.release <- struct{}{} // the first read answers 1, to nobody left
	if rev := <-etcd.reads; rev != 2 {
		t.Fatalf("the shared read answers %d, want 2", rev)
	}
	close(etcd.release)
	for range callers {
		if rev := <-got; rev != 2 {
			t.Fatalf("a caller arriving after the write read revision %d, want 2", rev)
		}
	}
	select {
	case rev := <-etcd.reads:
		t.Fatalf("%d callers arriving during one read made more than one more read (another answered %d)", callers, rev)
	default:
	}
}
