package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// The headers of a delivery: receivers deduplicate on EventIDHeader.
const (
	EventIDHeader   = "X-BCS-Event-ID"
	EventTypeHeader = "X-BCS-Event-Type"
)

// outcome is what one attempt came to.
type outcome struct {
	status    int
	err       string
	cancelled bool // the callback is gone
}

// attempt makes the next attempt of a delivery: it claims it (records it
// as begun, so that no other notifier makes it), POSTs, and records the
// outcome.
func (n *Notifier) attempt(ctx context.Context, key delivery) {
	claimed, number := false, 0
	var notice registry.Notice
	var shown string // the callback's URL, redacted
	_, err := n.cfg.Registry.ModifyNotification(ctx, key.notification, func(stored *registry.Notification) bool {
		now := n.cfg.Clock.Now()
		d := deliveryOf(stored, key.callback)
		claimed = d != nil && d.State == registry.DeliveryPending && !d.NextAttempt.After(now)
		if !claimed {
			return false
		}
		d.Attempts++
		d.LastAttempt, d.NextAttempt = now.UTC(), now.Add(n.cfg.Timeout+leaseMargin).UTC()
		number, notice, shown = d.Attempts, stored.Notice, d.URL
		return true
	})
	if err != nil || !claimed {
		if err != nil && ctx.Err() == nil && !errors.Is(err, errdefs.ErrNotFound) {
			n.log.Warn("notification: claiming an attempt failed", "id", key.notification, "callback", key.callback, "err", err)
		}
		return
	}
	out := n.post(ctx, key.callback, notice)
	if ctx.Err() != nil {
		return // stopped: the claim runs out and the next leader tries again
	}
	n.record(ctx, key, number, shown, out)
}

// post sends the notice to the callback's URL.
func (n *Notifier) post(ctx context.Context, callback string, notice registry.Notice) outcome {
	target, err := n.cfg.Registry.NotifyTarget(ctx, callback)
	if errors.Is(err, errdefs.ErrNotFound) {
		return outcome{cancelled: true, err: "the callback was deleted"}
	}
	if err != nil {
		return outcome{err: err.Error()}
	}
	body, err := json.Marshal(notice)
	if err != nil {
		return outcome{err: err.Error()}
	}
	ctx, cancel := context.WithTimeout(ctx, n.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return outcome{err: "building the request: " + redactError(err)}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "bcs-scheduler")
	req.Header.Set(EventIDHeader, notice.ID)
	req.Header.Set(EventTypeHeader, string(notice.Type))
	resp, err := n.client.Do(req)
	if err != nil {
		return outcome{err: redactError(err)}
	}
	resp.Body.Close() // its status is the answer; the log quotes nothing a receiver sent
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return outcome{status: resp.StatusCode, err: "HTTP " + resp.Status}
	}
	return outcome{status: resp.StatusCode}
}

// redactError describes a failed request without its URL, which the
// client's errors quote (query tokens included).
func redactError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Op + ": " + ue.Err.Error()
	}
	return err.Error()
}

// record writes the outcome of attempt number of a delivery. A success
// always counts; a failure only while the attempt is the latest (a
// notifier whose claim ran out may report late) and the delivery still
// pending.
func (n *Notifier) record(ctx context.Context, key delivery, number int, shown string, out outcome) {
	var state registry.DeliveryState
	var next time.Time
	_, err := n.cfg.Registry.ModifyNotification(ctx, key.notification, func(stored *registry.Notification) bool {
		now := n.cfg.Clock.Now().UTC()
		d := deliveryOf(stored, key.callback)
		if d == nil || d.State == registry.DeliveryDelivered || (out.err != "" && (d.Attempts != number || d.State != registry.DeliveryPending)) {
			state = ""
			return false
		}
		d.LastStatus, d.LastError = out.status, out.err
		switch {
		case out.err == "":
			d.State, d.DeliveredAt, d.NextAttempt = registry.DeliveryDelivered, now, time.Time{}
		case out.cancelled:
			d.State, d.NextAttempt = registry.DeliveryCancelled, time.Time{}
		case number >= n.cfg.MaxAttempts:
			d.State, d.NextAttempt = registry.DeliveryFailed, time.Time{}
		default:
			d.NextAttempt = now.Add(n.backoff(number))
		}
		state, next = d.State, d.NextAttempt
		return true
	})
	args := []any{"id", key.notification, "callback", shown, "attempt", number}
	switch {
	case err != nil:
		if ctx.Err() == nil && !errors.Is(err, errdefs.ErrNotFound) {
			n.log.Warn("notification: recording an attempt failed; it will be made again", append(args, "err", err)...)
		}
	case state == registry.DeliveryDelivered:
		n.log.Info("notification delivered", append(args, "status", out.status)...)
	case state == registry.DeliveryPending:
		n.log.Warn("notification delivery failed", append(args, "err", out.err, "next_attempt", next)...)
	case state != "":
		n.log.Warn(fmt.Sprintf("notification delivery %s", strings.ToLower(string(state))), append(args, "err", out.err)...)
	}
}

// backoff is the wait after failed attempt number: MinBackoff doubling,
// capped at MaxBackoff.
func (n *Notifier) backoff(number int) time.Duration {
	d := n.cfg.MinBackoff
	for i := 1; i < number && d < n.cfg.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, n.cfg.MaxBackoff)
}
