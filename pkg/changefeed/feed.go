package changefeed

import (
	"context"
	"errors"
	"fmt"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// Action is what a change did to its key.
type Action string

// The actions of a change.
const (
	Put    Action = "put"
	Delete Action = "delete"
)

// Change is one write of a key, or a Reset.
type Change struct {
	ID     ID
	Action Action
	Key    string // relative to the store prefix, e.g. "apps/default/web"
	// Value is what a put wrote; nil for a delete.
	Value []byte
	// Previous is what a delete removed, for the keys Options.Previous
	// selects; nil otherwise.
	Previous []byte
	// Reset: the changes between the reader's position and ID cannot be
	// replayed (Reason says why); list the state again, the feed goes on
	// after ID. Action, Key and the values are empty.
	Reset  bool
	Reason string
	// Progress: no change, but every change up to ID has been delivered
	// (after Store.RequestProgress); only with Options.Progress.
	Progress bool
}

// Options select what a subscription delivers.
type Options struct {
	// Keep selects the keys delivered; nil keeps every key. A dropped
	// key is never decoded (a secret is never unsealed); it still counts
	// in the IDs.
	Keep func(key string) bool
	// Previous selects the deleted keys whose last value the delete
	// carries: their record says what kind of object went.
	Previous func(key string) bool
	// Progress delivers the store's progress notices as Progress changes.
	Progress bool
}

// Feed follows a store.
type Feed struct{ store *store.Store }

// New returns the feed of s's changes.
func New(s *store.Store) *Feed { return &Feed{store: s} }

// Subscription is one reader's place in the feed. It is not safe for
// concurrent use.
type Subscription struct {
	feed   *Feed
	ctx    context.Context
	opts   Options
	at     ID // the last change delivered, or where the subscription began
	events <-chan store.Event
	stop   context.CancelFunc // ends the current watch
	reset  *Change            // delivered before anything else
}

// Follow subscribes to the changes after after (nil: after now) until
// ctx ends. Every change made after Follow returned is delivered.
func (f *Feed) Follow(ctx context.Context, after *ID, opts Options) (*Subscription, error) {
	current, err := f.store.Revision(ctx)
	if err != nil {
		return nil, err
	}
	s := &Subscription{feed: f, ctx: ctx, opts: opts, at: EndOf(current)}
	switch {
	case after == nil:
	case after.Revision > current:
		s.reset = &Change{ID: s.at, Reset: true,
			Reason: fmt.Sprintf("event %s is beyond this store's revision %d (another etcd, or one restored from a backup)", after, current)}
	default:
		s.at = *after
	}
	if err := s.watch(); err != nil {
		return nil, err
	}
	return s, nil
}

// Position is the ID of the last change Next returned, or the position
// the subscription began at.
func (s *Subscription) Position() ID { return s.at }

// Pause ends the store watch until the next call of Next, which follows
// on from Position: a reader that cannot take more for a while lets etcd
// keep the changes rather than the etcd client buffer them.
func (s *Subscription) Pause() {
	if s.events == nil {
		return
	}
	s.stop()
	for range s.events { // the store's contract: receive until it closes
	}
	s.events = nil
}

// watch (re)starts the store watch at the first revision that may hold a
// change after s.at.
func (s *Subscription) watch() error {
	s.Pause()
	from := s.at.Revision
	if s.at.Index == wholeRevision {
		from++
	}
	// Revision 0 holds no change, and to Watch it means "from now".
	from = max(from, 1)
	ctx, stop := context.WithCancel(s.ctx)
	events, err := s.feed.store.WatchKeys(ctx, "", from, s.opts.Keep)
	if err != nil {
		stop()
		return err
	}
	s.events, s.stop = events, stop
	return nil
}

// Next waits for the next change: a write after Position, or a Reset. It
// fails when the subscription's context ends or the store fails
// (errdefs.ErrUnavailable); the reader follows on from Position later.
func (s *Subscription) Next() (Change, error) {
	if r := s.reset; r != nil {
		s.reset = nil
		return *r, nil
	}
	for {
		if s.events == nil {
			if err := s.watch(); err != nil {
				return Change{}, err
			}
		}
		ev, ok := <-s.events
		switch {
		case !ok:
			if err := s.ctx.Err(); err != nil {
				return Change{}, err
			}
			return Change{}, fmt.Errorf("change feed: watch closed: %w", errdefs.ErrUnavailable)
		case errors.Is(ev.Err, store.ErrCompacted):
			return s.restart(fmt.Sprintf("etcd compacted the changes after event %s", s.at))
		case ev.Err != nil:
			return Change{}, ev.Err
		case ev.Progress:
			done := EndOf(ev.Entry.Revision)
			if !s.opts.Progress || !s.at.Before(done) {
				continue
			}
			s.at = done
			return Change{ID: done, Progress: true}, nil
		}
		id := ID{Revision: ev.Entry.Revision, Index: ev.Index}
		if !s.at.Before(id) {
			continue // the part of a revision delivered before the resume
		}
		c := Change{ID: id, Action: Put, Key: ev.Entry.Key, Value: ev.Entry.Value}
		if ev.Type == store.EventDelete {
			c.Action, c.Value = Delete, nil
			if s.opts.Previous != nil && s.opts.Previous(c.Key) {
				prev, err := s.feed.store.GetAt(s.ctx, c.Key, id.Revision-1)
				if errors.Is(err, store.ErrCompacted) {
					return s.restart(fmt.Sprintf("etcd compacted what event %s deleted", id))
				}
				if err != nil {
					return Change{}, err
				}
				c.Previous = prev.Value
			}
		}
		s.at = id
		return c, nil
	}
}

// restart gives up on replaying: it watches again from the current
// revision and returns the Reset that says so.
func (s *Subscription) restart(reason string) (Change, error) {
	current, err := s.feed.store.Revision(s.ctx)
	if err != nil {
		return Change{}, err
	}
	s.at = EndOf(current)
	if err := s.watch(); err != nil {
		return Change{}, err
	}
	return Change{ID: s.at, Reset: true, Reason: reason}, nil
}

// Close ends the subscription's watch; call Next no more.
func (s *Subscription) Close() { s.Pause() }
