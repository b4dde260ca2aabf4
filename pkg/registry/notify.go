package registry

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// NoticeType is what happened to an instance (seed 002's notifyController:
// a pod exited, went missing, started without an IP, restarted too often).
type NoticeType string

// The notice types.
const (
	// NoticeExit: the instance's tasks ended on their own (TASK_FAILED,
	// TASK_FINISHED, TASK_ERROR, a TASK_KILLED the scheduler did not ask
	// for), not by a kill of the scheduler's (scale-down, delete, update,
	// reschedule, health).
	NoticeExit NoticeType = "exit"
	// NoticeMissing: Mesos lost track of its tasks (TASK_LOST,
	// TASK_UNREACHABLE, TASK_GONE, TASK_GONE_BY_OPERATOR, TASK_DROPPED,
	// TASK_UNKNOWN).
	NoticeMissing NoticeType = "missing"
	// NoticeNoIP: a container instance in a CNI network runs without an IP.
	NoticeNoIP NoticeType = "noIP"
	// NoticeFlapping: the instance restarted more than N times within a
	// window (once per window).
	NoticeFlapping NoticeType = "flapping"
)

// NoticeTypes are the types a callback may filter on, in this order.
var NoticeTypes = []NoticeType{NoticeExit, NoticeMissing, NoticeNoIP, NoticeFlapping}

// Notice is one event about an instance: the JSON body POSTed to the
// callbacks.
type Notice struct {
	// ID is unique and begins with the UTC time (NoticeID), so IDs sort
	// by time; receivers deduplicate on it (X-BCS-Event-ID).
	ID          string     `json:"id"`
	Type        NoticeType `json:"type"`
	Namespace   string     `json:"namespace"`
	App         string     `json:"app"`
	Instance    int        `json:"instance"`
	TaskGroupID string     `json:"taskGroupID"`
	AgentID     string     `json:"agentID,omitempty"`
	Host        string     `json:"host,omitempty"`
	// State is the Mesos task state that made it, if one did.
	State   string    `json:"state,omitempty"`
	Time    time.Time `json:"time"`
	Message string    `json:"message"`
}

// NoticeID returns the ID of the notice of type t about a launch
// (taskGroupID) made at time at: fixed-width UTC time first, so that IDs,
// and the keys they are in, sort by time.
func NoticeID(at time.Time, taskGroupID string, t NoticeType) string {
	return at.UTC().Format("20060102T150405.000000000Z") + "-" + taskGroupID + "-" + string(t)
}

// Notification is a stored notice and its deliveries: the durable outbox
// the notifier (pkg/notify) delivers from, and its delivery log.
type Notification struct {
	Notice
	// Addressed: Deliveries lists every callback that was registered when
	// the notice was made and takes its type. Until then the notice waits
	// for the notifier.
	Addressed  bool       `json:"addressed"`
	Deliveries []Delivery `json:"deliveries"`
	Revision   int64      `json:"-"`
}

func (n *Notification) setRevision(rev int64) { n.Revision = rev }

// DeliveryState is where the delivery of a notice to one callback stands.
type DeliveryState string

// The delivery states.
const (
	DeliveryPending   DeliveryState = "Pending"   // not delivered yet; tried again at NextAttempt
	DeliveryDelivered DeliveryState = "Delivered" // the callback answered 2xx
	DeliveryFailed    DeliveryState = "Failed"    // given up after the last attempt
	DeliveryCancelled DeliveryState = "Cancelled" // the callback was deleted first
)

// Delivery is the delivery of a notice to one callback.
type Delivery struct {
	Callback string        `json:"callback"` // the callback's ID
	URL      string        `json:"url"`      // its URL, redacted
	State    DeliveryState `json:"state"`
	// Attempts counts the POSTs begun. An attempt is recorded before it
	// is made, with NextAttempt after its timeout: no other notifier
	// makes the same attempt meanwhile.
	Attempts    int       `json:"attempts"`
	LastAttempt time.Time `json:"lastAttempt,omitempty"`
	NextAttempt time.Time `json:"nextAttempt,omitempty"`
	LastStatus  int       `json:"lastStatus,omitempty"` // HTTP status of the last answer
	LastError   string    `json:"lastError,omitempty"`
	DeliveredAt time.Time `json:"deliveredAt,omitempty"`
}

// NotificationState sums up a notification's deliveries for the log.
type NotificationState string

// The notification states.
const (
	// NotificationPending: not addressed yet, or a delivery is pending.
	NotificationPending NotificationState = "pending"
	// NotificationDelivered: every delivery succeeded (or was cancelled
	// with its callback), or there was no callback to deliver to.
	NotificationDelivered NotificationState = "delivered"
	// NotificationFailed: nothing is pending and a delivery failed.
	NotificationFailed NotificationState = "failed"
)

// State sums up the deliveries.
func (n *Notification) State() NotificationState {
	if !n.Addressed {
		return NotificationPending
	}
	state := NotificationDelivered
	for _, d := range n.Deliveries {
		switch d.State {
		case DeliveryPending:
			return NotificationPending
		case DeliveryFailed:
			state = NotificationFailed
		}
	}
	return state
}

// NotificationKey is the store key of a notification.
func NotificationKey(id string) (string, error) {
	return store.Key(store.KindNotification, id)
}

// NotificationsPrefix is where the notifications are, for watching.
var NotificationsPrefix = string(store.KindNotification) + "/"

// ListNotifications returns every notification, oldest first.
func (r *Registry) ListNotifications(ctx context.Context) ([]*Notification, error) {
	return list[Notification](ctx, r.store, NotificationsPrefix)
}

// GetNotification returns one notification.
func (r *Registry) GetNotification(ctx context.Context, id string) (*Notification, error) {
	key, err := NotificationKey(id)
	if err != nil {
		return nil, err
	}
	n, err := get[Notification](ctx, r.store, key)
	if err != nil {
		return nil, fmt.Errorf("notification %q: %w", id, err)
	}
	return n, nil
}

// UpdateNotification writes n back if it is still at n.Revision
// (errdefs.ErrConflict otherwise): two notifiers never both record the
// same attempt.
func (r *Registry) UpdateNotification(ctx context.Context, n *Notification) error {
	key, err := NotificationKey(n.ID)
	if err != nil {
		return err
	}
	rev, err := store.UpdateJSON(ctx, r.store, key, n, n.Revision)
	if err != nil {
		return fmt.Errorf("notification %q: %w", n.ID, err)
	}
	n.Revision = rev
	return nil
}

// ModifyNotification reads a notification, applies change and writes it
// back, again on a concurrent write; change returns false to write
// nothing.
func (r *Registry) ModifyNotification(ctx context.Context, id string, change func(*Notification) bool) (*Notification, error) {
	for {
		n, err := r.GetNotification(ctx, id)
		if err != nil {
			return nil, err
		}
		if !change(n) {
			return n, nil
		}
		err = r.UpdateNotification(ctx, n)
		if errors.Is(err, errdefs.ErrConflict) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return n, nil
	}
}

// DeleteNotification removes a notification if it is still at rev.
func (r *Registry) DeleteNotification(ctx context.Context, id string, rev int64) error {
	key, err := NotificationKey(id)
	if err != nil {
		return err
	}
	if err := r.store.Delete(ctx, key, rev); err != nil {
		return fmt.Errorf("notification %q: %w", id, err)
	}
	return nil
}

// NotifyCallbacksPrefix is where the callbacks are, for watching.
var NotifyCallbacksPrefix = string(store.KindNotifyCallback) + "/"

// NotifyCallback is a registered callback as shown: its URL redacted.
// The URL itself is stored apart, sealed (NotifyTarget).
type NotifyCallback struct {
	ID  string `json:"id"`
	URL string `json:"url"`
	// Events are the notice types it takes; empty takes every type.
	Events    []NoticeType `json:"events,omitempty"`
	CreatedAt time.Time    `json:"createdAt"`
	UpdatedAt time.Time    `json:"updatedAt"`
	Revision  int64        `json:"-"`
}

func (c *NotifyCallback) setRevision(rev int64) { c.Revision = rev }

// Takes reports whether the callback takes notices of type t.
func (c *NotifyCallback) Takes(t NoticeType) bool {
	return len(c.Events) == 0 || slices.Contains(c.Events, t)
}

// notifyTarget is a callback's URL, sealed at rest.
type notifyTarget struct {
	URL string `json:"url"`
}

// CallbackURL is a parsed, checked callback URL.
type CallbackURL struct {
	raw      string
	redacted string
}

// maxCallbackURLLen bounds a callback URL.
const maxCallbackURLLen = 2048

// ParseCallbackURL checks a callback URL: absolute http or https with a
// host. Errors name the field and show the URL redacted only.
func ParseCallbackURL(field, raw string) (CallbackURL, error) {
	if raw == "" {
		return CallbackURL{}, fmt.Errorf("%s: required: %w", field, errdefs.ErrInvalidArgument)
	}
	if len(raw) > maxCallbackURLLen {
		return CallbackURL{}, fmt.Errorf("%s: longer than %d characters: %w", field, maxCallbackURLLen, errdefs.ErrInvalidArgument)
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url's errors quote the parts they choke on, credentials too.
		return CallbackURL{}, fmt.Errorf("%s: not a URL: %w", field, errdefs.ErrInvalidArgument)
	}
	redacted := RedactURL(u)
	if u.Scheme != "http" && u.Scheme != "https" {
		return CallbackURL{}, fmt.Errorf("%s: %q: want an http or https URL: %w", field, redacted, errdefs.ErrInvalidArgument)
	}
	if u.Host == "" {
		return CallbackURL{}, fmt.Errorf("%s: %q: no host: %w", field, redacted, errdefs.ErrInvalidArgument)
	}
	return CallbackURL{raw: raw, redacted: redacted}, nil
}

// ID is the callback's ID: the same URL always has the same.
func (c CallbackURL) ID() string {
	sum := sha256.Sum256([]byte(c.raw))
	return hex.EncodeToString(sum[:8])
}

// Redacted is the URL without credentials, for showing and logging.
func (c CallbackURL) Redacted() string { return c.redacted }

// redactedValue replaces what a URL may hide credentials in.
const redactedValue = "redacted"

// RedactURL returns u without what may be credentials: userinfo, query
// values and fragment are replaced.
func RedactURL(u *url.URL) string {
	c := *u
	if c.User != nil {
		c.User = url.User(redactedValue)
	}
	if c.RawQuery != "" {
		q := c.Query()
		for k := range q {
			q[k] = []string{redactedValue}
		}
		c.RawQuery = q.Encode()
	}
	if c.Fragment != "" {
		c.Fragment, c.RawFragment = redactedValue, ""
	}
	return c.String()
}

// PutNotifyCallback registers a callback for events (every type when
// empty), or changes the events of the one registered at that URL; it
// reports whether it was new. The callback and its sealed URL are
// written in one transaction.
func (r *Registry) PutNotifyCallback(ctx context.Context, u CallbackURL, events []NoticeType) (*NotifyCallback, bool, error) {
	id := u.ID()
	key, err := store.Key(store.KindNotifyCallback, id)
	if err != nil {
		return nil, false, err
	}
	targetKey, err := store.Key(store.KindNotifyTarget, id)
	if err != nil {
		return nil, false, err
	}
	target, err := json.Marshal(notifyTarget{URL: u.raw})
	if err != nil {
		return nil, false, err
	}
	for {
		now := r.now().UTC()
		cb := &NotifyCallback{ID: id, URL: u.Redacted(), Events: events, CreatedAt: now, UpdatedAt: now}
		old, err := get[NotifyCallback](ctx, r.store, key)
		switch {
		case errors.Is(err, errdefs.ErrNotFound):
			old = nil
		case err != nil:
			return nil, false, fmt.Errorf("notify callback %s: %w", u.Redacted(), err)
		default:
			cb.CreatedAt = old.CreatedAt
		}
		value, err := json.Marshal(cb)
		if err != nil {
			return nil, false, err
		}
		write := store.CreateOp(key, value)
		if old != nil {
			write = store.UpdateOp(key, value, old.Revision)
		}
		rev, err := r.store.Apply(ctx, write, store.PutOp(targetKey, target))
		if errors.Is(err, errdefs.ErrConflict) || errors.Is(err, errdefs.ErrAlreadyExists) {
			continue // registered or changed meanwhile
		}
		if err != nil {
			return nil, false, fmt.Errorf("notify callback %s: %w", u.Redacted(), err)
		}
		cb.Revision = rev
		return cb, old == nil, nil
	}
}

// DeleteNotifyCallback unregisters the callback at a URL and forgets the
// URL; errdefs.ErrNotFound when none is registered there.
func (r *Registry) DeleteNotifyCallback(ctx context.Context, u CallbackURL) error {
	key, err := store.Key(store.KindNotifyCallback, u.ID())
	if err != nil {
		return err
	}
	targetKey, err := store.Key(store.KindNotifyTarget, u.ID())
	if err != nil {
		return err
	}
	if _, err := r.store.Apply(ctx, store.DeleteOp(key, 0), store.DeleteOp(targetKey, 0)); err != nil {
		return fmt.Errorf("notify callback %s: %w", u.Redacted(), err)
	}
	return nil
}

// ListNotifyCallbacks returns the registered callbacks, by ID.
func (r *Registry) ListNotifyCallbacks(ctx context.Context) ([]*NotifyCallback, error) {
	return list[NotifyCallback](ctx, r.store, NotifyCallbacksPrefix)
}

// NotifyTarget returns the URL of a callback, credentials and all, for
// the notifier to POST to; errdefs.ErrNotFound once it is deleted.
func (r *Registry) NotifyTarget(ctx context.Context, callbackID string) (string, error) {
	key, err := store.Key(store.KindNotifyTarget, callbackID)
	if err != nil {
		return "", err
	}
	t, _, err := store.GetJSON[notifyTarget](ctx, r.store, key)
	if err != nil {
		return "", fmt.Errorf("notify callback %q: %w", callbackID, err)
	}
	return t.URL, nil
}
