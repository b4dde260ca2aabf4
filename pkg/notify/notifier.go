package notify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/bcs-mesos/bcs-mesos/pkg/egress"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// Defaults of Config, which bcs-scheduler's flags show.
const (
	DefaultTimeout     = 10 * time.Second
	DefaultMinBackoff  = time.Second
	DefaultMaxBackoff  = 10 * time.Minute
	DefaultMaxAttempts = 20 // about two hours of retries with the default backoff
	DefaultRetention   = 7 * 24 * time.Hour
	DefaultKeep        = 1000
	DefaultConcurrency = 8
)

// Config configures a Notifier. Zero values take the defaults above.
type Config struct {
	Registry *registry.Registry
	// Store is where the notifications are watched.
	Store *store.Store
	// Clock schedules retries and stamps attempts; default the real one.
	// A POST's timeout is real time.
	Clock  clockwork.Clock
	Logger *slog.Logger
	// Egress holds the POSTs to the egress policy of callbacks (the
	// default rules: the admin registers them for the whole cluster);
	// default egress.DefaultSet()'s. They follow no redirects.
	Egress *egress.Policy
	// Timeout bounds one POST.
	Timeout time.Duration
	// MinBackoff is the wait after the first failed attempt; it doubles
	// with each further one, up to MaxBackoff.
	MinBackoff, MaxBackoff time.Duration
	// MaxAttempts is how many attempts a delivery gets before it fails.
	MaxAttempts int
	// Retention is how long a finished notification stays in the log;
	// Keep bounds how many finished ones stay.
	Retention time.Duration
	Keep      int
	// Concurrency bounds the POSTs under way at once.
	Concurrency int
}

// Notifier delivers the notifications; see the package doc.
type Notifier struct {
	cfg    Config
	log    *slog.Logger
	client *http.Client
}

// New returns a Notifier; Registry and Store are required.
func New(cfg Config) (*Notifier, error) {
	if cfg.Registry == nil || cfg.Store == nil {
		return nil, fmt.Errorf("notify: Registry and Store are required: %w", errdefs.ErrInvalidArgument)
	}
	for _, f := range []struct {
		name  string
		value int64
	}{
		{"Timeout", int64(cfg.Timeout)}, {"MinBackoff", int64(cfg.MinBackoff)}, {"MaxBackoff", int64(cfg.MaxBackoff)},
		{"MaxAttempts", int64(cfg.MaxAttempts)}, {"Retention", int64(cfg.Retention)}, {"Keep", int64(cfg.Keep)},
		{"Concurrency", int64(cfg.Concurrency)},
	} {
		if f.value < 0 {
			return nil, fmt.Errorf("notify: %s %d is negative: %w", f.name, f.value, errdefs.ErrInvalidArgument)
		}
	}
	cfg.Timeout = orDefault(cfg.Timeout, DefaultTimeout)
	cfg.MinBackoff = orDefault(cfg.MinBackoff, DefaultMinBackoff)
	cfg.MaxBackoff = max(orDefault(cfg.MaxBackoff, DefaultMaxBackoff), cfg.MinBackoff)
	cfg.MaxAttempts = orDefault(cfg.MaxAttempts, DefaultMaxAttempts)
	cfg.Retention = orDefault(cfg.Retention, DefaultRetention)
	cfg.Keep = orDefault(cfg.Keep, DefaultKeep)
	cfg.Concurrency = orDefault(cfg.Concurrency, DefaultConcurrency)
	if cfg.Clock == nil {
		cfg.Clock = clockwork.NewRealClock()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Egress == nil {
		cfg.Egress = egress.DefaultSet().Default("notify callbacks")
	}
	// A redirect could carry the notice elsewhere; it is a failure.
	client := cfg.Egress.Client(egress.ClientOptions{})
	return &Notifier{cfg: cfg, log: cfg.Logger, client: client}, nil
}

func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// leaseMargin is how long past its timeout an attempt stays claimed: no
// other notifier makes it again before.
const leaseMargin = 5 * time.Second

// retryDelay is the wait after a pass failed (the store did not answer).
const retryDelay = time.Second

// delivery names one delivery: a notification and a callback.
type delivery struct{ notification, callback string }

// Run delivers until ctx ends: a pass over the notifications whenever
// one is written, an attempt ends, or a retry is due. It returns nil when
// ctx ends, or the error that ended the watch (the store holds the
// truth: a new Run resumes), once every attempt under way has ended.
func (n *Notifier) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	var attempts sync.WaitGroup
	defer func() {
		cancel()
		attempts.Wait()
	}()
	// A written notification may be new; a deleted callback cancels its
	// deliveries at once.
	notifications, err := n.cfg.Store.Watch(ctx, registry.NotificationsPrefix, 0)
	if err != nil {
		return n.ended(ctx, fmt.Errorf("notifications: %w", err))
	}
	callbacks, err := n.cfg.Store.Watch(ctx, registry.NotifyCallbacksPrefix, 0)
	if err != nil {
		return n.ended(ctx, fmt.Errorf("notify callbacks: %w", err))
	}
	// inflight are the deliveries with an attempt started: waiting for
	// one of the Concurrency slots, or under way.
	inflight := map[delivery]bool{}
	slots := make(chan struct{}, n.cfg.Concurrency)
	ended := make(chan delivery)
	timer := n.cfg.Clock.NewTimer(0)
	defer timer.Stop()
	for {
		next, err := n.pass(ctx, inflight, func(d delivery) {
			inflight[d] = true
			attempts.Add(1)
			go func() {
				defer attempts.Done()
				select {
				case slots <- struct{}{}:
					n.attempt(ctx, d)
					<-slots
				case <-ctx.Done():
				}
				select {
				case ended <- d:
				case <-ctx.Done():
				}
			}()
		})
		if err != nil && ctx.Err() == nil {
			n.log.Warn("notifications: pass failed; trying again", "err", err, "retry_in", retryDelay)
			next = n.cfg.Clock.Now().Add(retryDelay)
		}
		timer.Stop()
		if !next.IsZero() {
			timer.Reset(max(next.Sub(n.cfg.Clock.Now()), time.Millisecond))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-timer.Chan():
		case d := <-ended:
			// One pass covers any number of ended attempts.
			for more := true; more; {
				delete(inflight, d)
				select {
				case d = <-ended:
				default:
					more = false
				}
			}
		case ev, ok := <-notifications:
			if err := n.watched(ctx, "notifications", notifications, ev, ok); err != nil {
				return err
			}
		case ev, ok := <-callbacks:
			if err := n.watched(ctx, "notify callbacks", callbacks, ev, ok); err != nil {
				return err
			}
		}
	}
}

// watched takes a watch event: an error when the watch ended, else the
// events queued behind it too, which the next pass covers.
func (n *Notifier) watched(ctx context.Context, what string, events <-chan store.Event, ev store.Event, ok bool) error {
	for {
		switch {
		case !ok:
			return n.ended(ctx, fmt.Errorf("%s: watch closed: %w", what, errdefs.ErrUnavailable))
		case ev.Err != nil:
			return n.ended(ctx, fmt.Errorf("%s: %w", what, ev.Err))
		}
		select {
		case ev, ok = <-events:
		default:
			return nil
		}
	}
}

// ended returns err, or nil when ctx ended: stopping is not failing.
func (n *Notifier) ended(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// pass addresses new notifications, cancels deliveries to deleted
// callbacks, starts the attempts that are due (not those under way) and
// prunes the log. It returns when the next attempt is due (zero: none
// waits).
func (n *Notifier) pass(ctx context.Context, inflight map[delivery]bool, start func(delivery)) (time.Time, error) {
	notifications, err := n.cfg.Registry.ListNotifications(ctx)
	if err != nil {
		return time.Time{}, err
	}
	callbacks, err := n.cfg.Registry.ListNotifyCallbacks(ctx)
	if err != nil {
		return time.Time{}, err
	}
	registered := map[string]bool{}
	for _, cb := range callbacks {
		registered[cb.ID] = true
	}
	now := n.cfg.Clock.Now()
	var next time.Time
	for _, note := range notifications {
		if !note.Addressed {
			if note, err = n.address(ctx, note, callbacks); err != nil {
				return time.Time{}, err
			}
		}
		for _, d := range note.Deliveries {
			key := delivery{note.ID, d.Callback}
			switch {
			case d.State != registry.DeliveryPending || inflight[key]:
			case !registered[d.Callback]:
				if err := n.cancel(ctx, key); err != nil {
					return time.Time{}, err
				}
			case !d.NextAttempt.After(now):
				start(key)
			default:
				if next.IsZero() || d.NextAttempt.Before(next) {
					next = d.NextAttempt
				}
			}
		}
	}
	return next, n.prune(ctx, notifications, now)
}

// address gives a notification its deliveries: one to every callback
// registered when it was made that takes its type.
func (n *Notifier) address(ctx context.Context, note *registry.Notification, callbacks []*registry.NotifyCallback) (*registry.Notification, error) {
	return n.cfg.Registry.ModifyNotification(ctx, note.ID, func(stored *registry.Notification) bool {
		if stored.Addressed {
			return false // another notifier did
		}
		stored.Addressed, stored.Deliveries = true, []registry.Delivery{}
		for _, cb := range callbacks {
			if !cb.CreatedAt.After(stored.Time) && cb.Takes(stored.Type) {
				stored.Deliveries = append(stored.Deliveries, registry.Delivery{Callback: cb.ID, URL: cb.URL, State: registry.DeliveryPending})
			}
		}
		return true
	})
}

// cancel ends a pending delivery whose callback was deleted.
func (n *Notifier) cancel(ctx context.Context, key delivery) error {
	_, err := n.cfg.Registry.ModifyNotification(ctx, key.notification, func(stored *registry.Notification) bool {
		d := deliveryOf(stored, key.callback)
		if d == nil || d.State != registry.DeliveryPending {
			return false
		}
		d.State, d.NextAttempt, d.LastError = registry.DeliveryCancelled, time.Time{}, "the callback was deleted"
		return true
	})
	if errors.Is(err, errdefs.ErrNotFound) {
		return nil // pruned meanwhile
	}
	return err
}

// prune deletes the finished notifications older than Retention, and
// the oldest finished ones beyond Keep. notifications are oldest first.
func (n *Notifier) prune(ctx context.Context, notifications []*registry.Notification, now time.Time) error {
	var finished []*registry.Notification
	for _, note := range notifications {
		if note.State() != registry.NotificationPending {
			finished = append(finished, note)
		}
	}
	for i, note := range finished {
		if len(finished)-i <= n.cfg.Keep && now.Sub(note.Time) < n.cfg.Retention {
			continue
		}
		err := n.cfg.Registry.DeleteNotification(ctx, note.ID, note.Revision)
		if err != nil && !errors.Is(err, errdefs.ErrConflict) && !errors.Is(err, errdefs.ErrNotFound) {
			return err
		}
	}
	return nil
}

func deliveryOf(n *registry.Notification, callback string) *registry.Delivery {
	for i := range n.Deliveries {
		if n.Deliveries[i].Callback == callback {
			return &n.Deliveries[i]
		}
	}
	return nil
}
