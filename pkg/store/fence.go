package store

import (
	"fmt"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
)

// ErrDeposed is the error of a write refused by a Fence: the leadership
// the writer holds in memory has ended in etcd. It is an
// errdefs.ErrUnavailable, never an ErrConflict: re-reading and retrying
// cannot succeed, the writer must stop acting as leader.
var ErrDeposed = fmt.Errorf("not the leader any more: %w", errdefs.ErrUnavailable)

// Fence makes writes conditional on one term of leadership: the leader
// key Campaign created must still exist with the create revision it got.
// The key goes when the leader's session ends (lease expired or revoked,
// resignation), so a leader paused or cut off past its TTL cannot write
// after another replica took over, whatever it still believes.
type Fence struct {
	key     string // full etcd key of the leader
	rev     int64  // its create revision
	refused chan struct{}
	once    sync.Once
}

// Refused is closed when the fence first refuses a write.
func (f *Fence) Refused() <-chan struct{} { return f.refused }

func (f *Fence) cmp() clientv3.Cmp {
	return clientv3.Compare(clientv3.CreateRevision(f.key), "=", f.rev)
}

// holds tells whether the leader key, as read in the else branch of a
// failed transaction, still belongs to the fenced term.
func (f *Fence) holds(resp *clientv3.TxnResponse) bool {
	kvs := resp.Responses[0].GetResponseRange().GetKvs()
	return len(kvs) > 0 && kvs[0].CreateRevision == f.rev
}

func (f *Fence) refuse(ops []Op) error {
	f.once.Do(func() { close(f.refused) })
	return fmt.Errorf("%s: refused, leader key %q (created at revision %d) is gone: %w", describe(ops), f.key, f.rev, ErrDeposed)
}

// WithFence returns a view of s every write of which (Apply, and so
// Create, Update, Put and Delete) is also conditional on f: a write made
// after f's leadership ended fails with ErrDeposed and writes nothing.
// Reads and watches are s's. The view shares s's connection: close s,
// not the view.
func (s *Store) WithFence(f *Fence) *Store {
	view := *s
	view.fence = f
	return &view
}
