package devcluster

import (
	"context"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
)

// eventStream is the outgoing side of one subscription (a scheduler's or an
// executor's). Senders never block: events queue up and the HTTP handler
// that owns the connection drains them. Closing the stream ends the
// handler, which ends the HTTP response.
type eventStream struct {
	id string

	mu     sync.Mutex
	queue  []message
	closed bool

	wake chan struct{}
	done chan struct{}
}

func newEventStream(id string) *eventStream {
	return &eventStream{id: id, wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// send queues m; it reports false when the stream is already closed.
func (s *eventStream) send(m message) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.queue = append(s.queue, m)
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return true
}

// sendAndClose queues a last event and closes the stream.
func (s *eventStream) sendAndClose(m message) {
	s.send(m)
	s.close()
}

func (s *eventStream) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		close(s.done)
	}
}

func (s *eventStream) take() []message {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.queue
	s.queue = nil
	return q
}

// serve writes queued events to w until the stream is closed (after
// flushing what is queued), the client goes away (ctx) or a write fails.
// A heartbeat event is written every interval when heartbeat is not nil.
func (s *eventStream) serve(ctx context.Context, clock clockwork.Clock, w *recordWriter, heartbeat func() message, interval time.Duration) error {
	var tick <-chan time.Time
	if heartbeat != nil && interval > 0 {
		t := clock.NewTicker(interval)
		defer t.Stop()
		tick = t.Chan()
	}
	flush := func() error {
		for _, m := range s.take() {
			if err := w.write(m); err != nil {
				return err
			}
		}
		return nil
	}
	for {
		if err := flush(); err != nil {
			s.close()
			return err
		}
		select {
		case <-ctx.Done():
			s.close()
			return ctx.Err()
		case <-s.done:
			return flush()
		case <-s.wake:
		case <-tick:
			if err := w.write(heartbeat()); err != nil {
				s.close()
				return err
			}
		}
	}
}
