package store

import (
	"context"
	"fmt"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
)

// EventType says what happened to a key.
type EventType int

// The event types Watch delivers.
const (
	EventPut    EventType = iota + 1 // key created or updated
	EventDelete                      // key deleted
)

func (t EventType) String() string {
	switch t {
	case EventPut:
		return "put"
	case EventDelete:
		return "delete"
	}
	return "unknown"
}

// Event is one change seen by Watch, or the error that ended the watch.
type Event struct {
	Type EventType
	// Entry is the key as written. For EventDelete only Key and Revision
	// (the revision of the deletion) are set.
	Entry Entry
	// Index is the event's position, from 0, among the keys under the
	// watched prefix that the transaction of Entry.Revision changed, in
	// the transaction's order; keys WatchKeys drops are counted too, so
	// (Entry.Revision, Index) names one change whatever the filter.
	Index int
	// Progress: no change, but every change up to Entry.Revision has
	// been delivered (etcd's answer to RequestProgress).
	Progress bool
	// Err, when set, is the last event before the channel closes: the
	// watch failed (ErrCompacted: fromRev is too old; errdefs.ErrUnavailable:
	// etcd lost its leader or the store was closed).
	Err error
}

// Watch streams the changes to keys under prefix ("" or ending in "/"),
// starting at store revision fromRev (0: changes after now), in revision
// order. Watch(ctx, prefix, rev+1) after ListWithRevision returned rev
// misses nothing. While etcd is unreachable the watch waits and resumes
// where it stopped. The channel closes when ctx is done, or after an
// Event with Err. The caller must keep receiving until then. Watch
// delivers no progress notices.
func (s *Store) Watch(ctx context.Context, prefix string, fromRev int64) (<-chan Event, error) {
	return s.watch(ctx, prefix, fromRev, nil, false)
}

// WatchKeys is Watch delivering only the keys keep accepts (nil: every
// key), and progress notices: etcd answers RequestProgress on every
// watch of the store, so only a watch that asks for them gets them. A
// dropped key is not even decoded: a watch that drops secrets/ never
// unseals one.
func (s *Store) WatchKeys(ctx context.Context, prefix string, fromRev int64, keep func(key string) bool) (<-chan Event, error) {
	return s.watch(ctx, prefix, fromRev, keep, true)
}

func (s *Store) watch(ctx context.Context, prefix string, fromRev int64, keep func(key string) bool, progress bool) (<-chan Event, error) {
	if err := validateListPrefix(prefix); err != nil {
		return nil, err
	}
	if fromRev < 0 {
		return nil, fmt.Errorf("watch %q: revision must be ≥ 0, got %d: %w", prefix, fromRev, errdefs.ErrInvalidArgument)
	}
	opts := []clientv3.OpOption{clientv3.WithPrefix()}
	if fromRev > 0 {
		opts = append(opts, clientv3.WithRev(fromRev))
	}
	responses := s.client.Watch(clientv3.WithRequireLeader(ctx), s.prefix+prefix, opts...)
	out := make(chan Event)
	go s.forward(ctx, prefix, responses, keep, progress, out)
	return out, nil
}

// forward turns etcd watch responses into Events until ctx ends or the
// watch fails.
func (s *Store) forward(ctx context.Context, prefix string, responses clientv3.WatchChan, keep func(string) bool, progress bool, out chan<- Event) {
	defer close(out)
	send := func(ev Event) bool {
		select {
		case out <- ev:
			return true
		case <-ctx.Done():
			return false
		}
	}
	// The position inside a revision; etcd never splits a revision
	// across responses, but counting across them does not rely on it.
	var revision int64
	index := -1
	for resp := range responses {
		if err := resp.Err(); err != nil {
			send(Event{Err: classify(ctx, fmt.Sprintf("watch %q", prefix), err)})
			return
		}
		if resp.IsProgressNotify() {
			if progress && !send(Event{Progress: true, Entry: Entry{Revision: resp.Header.Revision}}) {
				return
			}
			continue
		}
		for _, ev := range resp.Events {
			if ev.Kv.ModRevision != revision {
				revision, index = ev.Kv.ModRevision, -1
			}
			index++
			if keep != nil && !keep(s.relative(ev.Kv.Key)) {
				continue
			}
			event, err := s.event(ev)
			if err != nil {
				send(Event{Err: fmt.Errorf("watch %q: %w", prefix, err)})
				return
			}
			event.Index = index
			if !send(event) {
				return
			}
		}
	}
	if ctx.Err() == nil {
		send(Event{Err: fmt.Errorf("watch %q: channel closed (store closed?): %w", prefix, errdefs.ErrUnavailable)})
	}
}

// RequestProgress asks etcd to tell every watch of this store how far
// it has delivered (an Event with Progress): with the store's Revision
// read before, a reader learns that it has seen every write up to then,
// even when none of them was under its prefix.
func (s *Store) RequestProgress(ctx context.Context) error {
	rctx, cancel := s.withTimeout(ctx)
	defer cancel()
	if err := s.client.RequestProgress(clientv3.WithRequireLeader(rctx)); err != nil {
		return classify(ctx, "request watch progress", err)
	}
	return nil
}

func (s *Store) event(ev *clientv3.Event) (Event, error) {
	if ev.Type == mvccpb.Event_DELETE {
		return Event{Type: EventDelete, Entry: Entry{
			Key:      s.relative(ev.Kv.Key),
			Revision: ev.Kv.ModRevision,
		}}, nil
	}
	e, err := s.entry(ev.Kv)
	if err != nil {
		return Event{}, err
	}
	return Event{Type: EventPut, Entry: e}, nil
}
