package notify_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/bcs-mesos/bcs-mesos/pkg/notify"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// A notice is POSTed as JSON to the callback, with its ID in
// X-BCS-Event-ID, once; the delivery log says when and how.
func TestDeliversOnceWithEventID(t *testing.T) {
	e := newEnv(t)
	r := newReceiver(t, e.clock, always(http.StatusOK))
	cb := e.register(r.URL + "/hook")
	n := e.notice(registry.NoticeExit, 1)
	e.start(nil)

	got := e.wait(n.ID, "delivered", func(n *registry.Notification) bool { return n.State() == registry.NotificationDelivered })
	if len(got.Deliveries) != 1 {
		t.Fatalf("deliveries %+v, want one", got.Deliveries)
	}
	d := got.Deliveries[0]
	if d.Callback != cb.ID || d.URL != cb.URL || d.State != registry.DeliveryDelivered || d.Attempts != 1 ||
		d.LastStatus != http.StatusOK || d.LastError != "" || !d.DeliveredAt.Equal(t0) || !d.NextAttempt.IsZero() {
		t.Errorf("delivery %+v", d)
	}
	posts := r.got()
	if len(posts) != 1 {
		t.Fatalf("the receiver got %d posts, want 1", len(posts))
	}
	p := posts[0]
	if p.id != n.ID || p.eventType != "exit" || p.notice.ID != n.ID || p.notice.Type != n.Type || p.notice.TaskGroupID != n.TaskGroupID ||
		p.notice.Message != n.Message || !p.notice.Time.Equal(n.Time) || p.notice.Host != "host-1" {
		t.Errorf("post %+v, want notice %+v", p, n)
	}
}

// Retries with backoff: failed attempts are made again after
// MinBackoff, doubling up to MaxBackoff (1s, 2s, 4s, 4s), each recorded
// with its answer, until one succeeds.
func TestRetriesWithBackoff(t *testing.T) {
	e := newEnv(t)
	r := newReceiver(t, e.clock, func(n int) int {
		if n <= 4 {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	e.register(r.URL)
	n := e.notice(registry.NoticeMissing, 1)
	e.start(nil)

	waits := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 4 * time.Second}
	for i, wait := range waits {
		d := e.waitAttempts(n.ID, i+1)
		if d.State != registry.DeliveryPending || d.LastStatus != http.StatusServiceUnavailable ||
			d.LastError != "HTTP 503 Service Unavailable" || d.NextAttempt.Sub(d.LastAttempt) != wait {
			t.Fatalf("after attempt %d: %+v; want the next one %s later", i+1, d, wait)
		}
		e.advance(wait - time.Millisecond)
		if got := e.waitAttempts(n.ID, i+1); got.Attempts != i+1 {
			t.Fatalf("attempt %d made %s early", i+2, time.Millisecond)
		}
		e.advance(time.Millisecond)
	}
	got := e.wait(n.ID, "delivered", func(n *registry.Notification) bool { return n.State() == registry.NotificationDelivered })
	if d := got.Deliveries[0]; d.Attempts != 5 || d.LastStatus != http.StatusOK || d.LastError != "" {
		t.Errorf("delivery %+v", d)
	}
	var at []string
	for _, p := range r.got() {
		at = append(at, p.at.Sub(t0).String())
	}
	if strings.Join(at, " ") != "0s 1s 3s 7s 11s" {
		t.Errorf("attempts at %v, want 0s 1s 3s 7s 11s", at)
	}
}

// After MaxAttempts failures a delivery fails and the notification says
// so; nothing more is tried.
func TestGivesUpAfterMaxAttempts(t *testing.T) {
	e := newEnv(t)
	r := newReceiver(t, e.clock, always(http.StatusInternalServerError))
	e.register(r.URL)
	n := e.notice(registry.NoticeFlapping, 1)
	e.start(func(c *notify.Config) { c.MaxAttempts = 3 })
	e.waitAttempts(n.ID, 1)
	e.advance(time.Second)
	e.waitAttempts(n.ID, 2)
	e.advance(2 * time.Second)
	got := e.wait(n.ID, "failed", func(n *registry.Notification) bool { return n.State() == registry.NotificationFailed })
	if d := got.Deliveries[0]; d.State != registry.DeliveryFailed || d.Attempts != 3 || !d.NextAttempt.IsZero() || d.LastStatus != 500 {
		t.Errorf("delivery %+v", d)
	}
	if len(r.got()) != 3 {
		t.Errorf("the receiver got %d posts, want 3", len(r.got()))
	}
}

// A notice goes to the callbacks registered when it was made that take
// its type; a callback deleted before its delivery cancels it.
func TestAddressing(t *testing.T) {
	e := newEnv(t)
	all := newReceiver(t, e.clock, always(http.StatusOK))
	flappingOnly := newReceiver(t, e.clock, always(http.StatusOK))
	late := newReceiver(t, e.clock, always(http.StatusOK))
	gone := newReceiver(t, e.clock, always(http.StatusServiceUnavailable))
	cbAll := e.register(all.URL)
	e.register(flappingOnly.URL, registry.NoticeFlapping)
	cbGone := e.register(gone.URL)
	e.clock.Advance(time.Minute)
	n := e.notice(registry.NoticeExit, 1)
	e.clock.Advance(time.Minute)
	e.register(late.URL)
	e.start(nil)

	e.wait(n.ID, "delivered to one, tried on the other", func(n *registry.Notification) bool {
		return len(n.Deliveries) == 2 && deliveryTo(n, cbAll.ID).State == registry.DeliveryDelivered && deliveryTo(n, cbGone.ID).LastStatus == 503
	})
	u, _ := registry.ParseCallbackURL("callback", gone.URL)
	if err := e.reg.DeleteNotifyCallback(ctx, u); err != nil {
		t.Fatal(err)
	}
	got := e.wait(n.ID, "done", func(n *registry.Notification) bool { return n.State() != registry.NotificationPending })
	byCallback := map[string]registry.DeliveryState{}
	for _, d := range got.Deliveries {
		byCallback[d.Callback] = d.State
	}
	if len(byCallback) != 2 || byCallback[cbAll.ID] != registry.DeliveryDelivered || byCallback[cbGone.ID] != registry.DeliveryCancelled {
		t.Errorf("deliveries %+v", got.Deliveries)
	}
	if len(all.got()) != 1 || len(flappingOnly.got()) != 0 || len(late.got()) != 0 || len(gone.got()) != 1 {
		t.Errorf("posts: all %d, flapping only %d, registered later %d, deleted %d; want 1 0 0 1",
			len(all.got()), len(flappingOnly.got()), len(late.got()), len(gone.got()))
	}
}

// Two notifiers at once (an old leader not yet stopped and a
// new one) never deliver a notice twice, nor post it at the same time.
func TestTwoNotifiersDeliverOnce(t *testing.T) {
	e := newEnv(t)
	r := newReceiver(t, e.clock, func(n int) int {
		if n%3 == 0 {
			return http.StatusBadGateway
		}
		return http.StatusOK
	})
	r.delay = 20 * time.Millisecond
	e.register(r.URL)
	var ids []string
	for i := 1; i <= 20; i++ {
		ids = append(ids, e.notice(registry.NoticeExit, i).ID)
	}
	realClock := func(c *notify.Config) {
		c.Clock, c.MinBackoff, c.MaxBackoff = clockwork.NewRealClock(), 10*time.Millisecond, 50*time.Millisecond
	}
	e.start(realClock)
	e.start(realClock)
	for _, id := range ids {
		e.wait(id, "delivered", func(n *registry.Notification) bool { return n.State() == registry.NotificationDelivered })
	}
	delivered := r.delivered()
	for _, id := range ids {
		if delivered[id] != 1 {
			t.Errorf("%s delivered %d times, want once", id, delivered[id])
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.overlaps != 0 {
		t.Errorf("%d posts of one notice overlapped", r.overlaps)
	}
}

// A notifier stopped (kill -9 of its scheduler) between attempts loses
// nothing: the next one makes the next attempt when it is due.
func TestResumesAfterStop(t *testing.T) {
	e := newEnv(t)
	r := newReceiver(t, e.clock, func(n int) int {
		if n == 1 {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	e.register(r.URL)
	n := e.notice(registry.NoticeExit, 1)
	stop := e.start(nil)
	e.waitAttempts(n.ID, 1)
	stop()
	e.start(nil)
	e.advance(time.Second)
	got := e.wait(n.ID, "delivered", func(n *registry.Notification) bool { return n.State() == registry.NotificationDelivered })
	if d := got.Deliveries[0]; d.Attempts != 2 {
		t.Errorf("delivery %+v, want the second attempt", d)
	}
	if delivered := r.delivered(); len(r.got()) != 2 || delivered[n.ID] != 1 {
		t.Errorf("posts %+v", r.got())
	}
}

// The one duplicate at-least-once allows: a notifier stopped while its
// POST is under way. The attempt stays claimed for its timeout (no
// other notifier makes it meanwhile), then is made again with the same
// X-BCS-Event-ID, for the receiver to see it had it.
func TestAttemptUnderWayAtStopIsMadeAgainAfterItsTimeout(t *testing.T) {
	e := newEnv(t)
	r := newReceiver(t, e.clock, always(http.StatusOK))
	release := r.hold(t)
	e.register(r.URL)
	n := e.notice(registry.NoticeExit, 1)
	stop := e.start(func(c *notify.Config) { c.Timeout = 10 * time.Second })
	claimed := e.wait(n.ID, "claimed", func(n *registry.Notification) bool { return len(n.Deliveries) == 1 && n.Deliveries[0].Attempts == 1 })
	e.wait(n.ID, "posted", func(*registry.Notification) bool { return r.arrived() == 1 })
	stop()
	e.start(func(c *notify.Config) { c.Timeout = 10 * time.Second })
	lease := claimed.Deliveries[0].NextAttempt.Sub(claimed.Deliveries[0].LastAttempt)
	if lease != 15*time.Second {
		t.Fatalf("an attempt is claimed for %s, want its timeout and 5s", lease)
	}
	e.advance(lease - time.Millisecond)
	if got := e.wait(n.ID, "claimed", func(*registry.Notification) bool { return true }); got.Deliveries[0].Attempts != 1 {
		t.Fatalf("attempt 2 made while attempt 1 was claimed: %+v", got.Deliveries[0])
	}
	e.advance(time.Millisecond)
	got := e.wait(n.ID, "delivered", func(n *registry.Notification) bool { return n.State() == registry.NotificationDelivered })
	release()
	if d := got.Deliveries[0]; d.Attempts != 2 {
		t.Errorf("delivery %+v, want the second attempt", d)
	}
	e.wait(n.ID, "both posts answered", func(*registry.Notification) bool { return len(r.got()) == 2 })
	if posts := r.got(); posts[0].id != n.ID || posts[1].id != n.ID {
		t.Errorf("posts %+v, want both of %s", posts, n.ID)
	}
}

// Callback URLs may carry credentials: the POST uses them; the delivery
// log and the notifier's log never show them, failures included.
func TestCredentialsNeverShown(t *testing.T) {
	e := newEnv(t)
	r := newReceiver(t, e.clock, func(n int) int {
		if n == 1 {
			return http.StatusUnauthorized
		}
		return http.StatusOK
	})
	withSecrets := strings.Replace(r.URL, "http://", "http://bot:hunter2@", 1) + "/hook?token=s3cr3t"
	e.register(withSecrets)
	e.register("http://127.0.0.1:1/refused?token=s3cr3t") // nothing listens on port 1
	n := e.notice(registry.NoticeNoIP, 1)
	var log logged
	e.start(func(c *notify.Config) { c.Logger = log.logger() })
	e.wait(n.ID, "tried twice", func(n *registry.Notification) bool {
		return len(n.Deliveries) == 2 && n.Deliveries[0].Attempts == 1 && n.Deliveries[1].Attempts == 1 &&
			n.Deliveries[0].LastError != "" && n.Deliveries[1].LastError != ""
	})
	e.advance(time.Second)
	got := e.wait(n.ID, "delivered to one", func(n *registry.Notification) bool {
		for _, d := range n.Deliveries {
			if d.State == registry.DeliveryDelivered {
				return true
			}
		}
		return false
	})
	for _, p := range r.got() {
		if p.user != "bot" || p.password != "hunter2" || p.token != "s3cr3t" {
			t.Errorf("post without the URL's credentials: %+v", p)
		}
	}
	record, _ := json.Marshal(got)
	for what, text := range map[string]string{"the delivery log": string(record), "the notifier's log": log.String()} {
		if strings.Contains(text, "hunter2") || strings.Contains(text, "s3cr3t") {
			t.Errorf("%s shows credentials: %s", what, text)
		}
	}
	if !strings.Contains(string(record), "connection refused") || !strings.Contains(log.String(), "redacted") {
		t.Errorf("the failures are not described: %s\n%s", record, log.String())
	}
}

// The log is bounded: finished notifications beyond Keep go, oldest
// first, and those older than Retention; pending ones stay whatever
// their age.
func TestPrunesFinishedNotifications(t *testing.T) {
	e := newEnv(t)
	ok := newReceiver(t, e.clock, always(http.StatusOK))
	e.register(ok.URL)
	var ids []string
	for i := 1; i <= 4; i++ {
		ids = append(ids, e.notice(registry.NoticeExit, i).ID)
		e.clock.Advance(time.Second)
	}
	e.start(func(c *notify.Config) { c.Keep, c.Retention = 2, time.Hour })
	e.waitStored(ids[2:])

	failing := newReceiver(t, e.clock, always(http.StatusServiceUnavailable))
	cb := e.register(failing.URL)
	pending := e.notice(registry.NoticeMissing, 5)
	e.wait(pending.ID, "tried on the failing callback", func(n *registry.Notification) bool {
		return len(n.Deliveries) == 2 && deliveryTo(n, cb.ID).LastStatus == http.StatusServiceUnavailable
	})
	e.advance(2 * time.Hour) // past the retention; a retry comes due
	e.waitStored([]string{pending.ID})
}

// waitStored waits until exactly the notifications ids are stored.
func (e *env) waitStored(ids []string) {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		stored, err := e.reg.ListNotifications(ctx)
		if err != nil {
			e.t.Fatal(err)
		}
		var got []string
		for _, n := range stored {
			got = append(got, n.ID)
		}
		if fmt.Sprint(got) == fmt.Sprint(ids) {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("stored notifications %v, want %v", got, ids)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// deliveryTo returns the delivery of a notification to a callback (its
// zero value when there is none).
func deliveryTo(n *registry.Notification, callback string) registry.Delivery {
	for _, d := range n.Deliveries {
		if d.Callback == callback {
			return d
		}
	}
	return registry.Delivery{}
}

// Bad settings are refused, naming the setting.
func TestNewRefusesNegativeSettings(t *testing.T) {
	e := newEnv(t)
	_, err := notify.New(notify.Config{Registry: e.reg, Store: e.st, MaxBackoff: -time.Second})
	if err == nil || !strings.Contains(err.Error(), "MaxBackoff -1000000000 is negative") {
		t.Errorf("New with a negative MaxBackoff: %v", err)
	}
	if _, err := notify.New(notify.Config{Store: e.st}); err == nil {
		t.Error("New without a Registry: accepted")
	}
}

// With Concurrency attempts under way, a due one waits for one of them
// to end, then goes.
func TestConcurrencyBoundsAttemptsUnderWay(t *testing.T) {
	e := newEnv(t)
	r := newReceiver(t, e.clock, always(http.StatusOK))
	release := r.hold(t)
	e.register(r.URL)
	first := e.notice(registry.NoticeExit, 1)
	second := e.notice(registry.NoticeExit, 2)
	e.start(func(c *notify.Config) { c.Concurrency = 1 })
	e.wait(first.ID, "posted", func(*registry.Notification) bool { return r.arrived() == 1 })
	if n := e.wait(second.ID, "addressed", func(n *registry.Notification) bool { return n.Addressed }); n.Deliveries[0].Attempts != 0 {
		t.Fatalf("a second attempt began while one was under way: %+v", n.Deliveries[0])
	}
	release()
	for _, id := range []string{first.ID, second.ID} {
		e.wait(id, "delivered", func(n *registry.Notification) bool { return n.State() == registry.NotificationDelivered })
	}
}

// Callbacks hold to the default rules' egress policy: a callback on
// loopback (as an agent's API or the scheduler's own is on a dev
// cluster) is refused without a request, the delivery log naming the
// address, the rule and the policy, never the callback's token.
func TestCallbacksHoldToTheEgressPolicy(t *testing.T) {
	e := newEnv(t)
	r := newReceiver(t, e.clock, always(http.StatusOK))
	e.register(r.URL + "/hook?token=s3cr3t")
	n := e.notice(registry.NoticeExit, 1)
	e.start(func(c *notify.Config) { c.Egress = nil }) // the default: loopback refused
	d := e.waitAttempts(n.ID, 1)
	want := "Post: egress to " + strings.TrimPrefix(r.URL, "http://") + " refused: loopback (egress policy of default, for notify callbacks)"
	if d.State != registry.DeliveryPending || d.LastError != want {
		t.Errorf("delivery %+v, want the error %q", d, want)
	}
	if len(r.got()) != 0 {
		t.Errorf("the refused callback got %d posts", len(r.got()))
	}
}
