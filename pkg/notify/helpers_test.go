package notify_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/bcs-mesos/bcs-mesos/internal/testlog"
	"github.com/bcs-mesos/bcs-mesos/pkg/egress"
	"github.com/bcs-mesos/bcs-mesos/pkg/notify"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
	"github.com/bcs-mesos/bcs-mesos/pkg/store/storetest"
)

// One embedded etcd for the test binary; each test uses its own prefix.
var shared storetest.Shared

func TestMain(m *testing.M) { os.Exit(storetest.RunShared(m, &shared)) }

var ctx = context.Background()

// t0 is the fake clock's start.
var t0 = time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)

// env is a registry on a fresh prefix of the shared etcd, with a fake
// clock for notifiers to share.
type env struct {
	t      *testing.T
	prefix string
	st     *store.Store
	reg    *registry.Registry
	clock  *clockwork.FakeClock
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{t: t, prefix: shared.Prefix("notify-test"), clock: clockwork.NewFakeClockAt(t0)}
	e.st, e.reg = e.open()
	return e
}

// open is another client of the env's store, as another replica has.
func (e *env) open() (*store.Store, *registry.Registry) {
	e.t.Helper()
	openCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	st, err := store.Open(openCtx, store.Config{Endpoints: shared.Etcd.Endpoints(), Prefix: e.prefix, Sealer: shared.Sealer})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { st.Close() })
	return st, registry.New(st, e.clock.Now)
}

// start runs a notifier until the returned stop, or the test's end; stop
// returns once it has stopped. change adjusts its Config.
func (e *env) start(change func(*notify.Config)) (stop func()) {
	e.t.Helper()
	st, reg := e.open()
	cfg := notify.Config{Registry: reg, Store: st, Clock: e.clock, Logger: testlog.New(e.t), MinBackoff: time.Second, MaxBackoff: 4 * time.Second,
		Egress: loopbackAllowed(e.t)}
	if change != nil {
		change(&cfg)
	}
	n, err := notify.New(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- n.Run(runCtx) }()
	var stopped atomic.Bool
	stop = func() {
		if stopped.Swap(true) {
			return
		}
		cancel()
		if err := <-done; err != nil {
			e.t.Errorf("Run: %v", err)
		}
	}
	e.t.Cleanup(stop)
	return stop
}

// register registers a callback URL for events (every type when none).
func (e *env) register(rawURL string, events ...registry.NoticeType) *registry.NotifyCallback {
	e.t.Helper()
	u, err := registry.ParseCallbackURL("callback", rawURL)
	if err != nil {
		e.t.Fatal(err)
	}
	cb, _, err := e.reg.PutNotifyCallback(ctx, u, events)
	if err != nil {
		e.t.Fatal(err)
	}
	return cb
}

// notice stores a notice about launch n of instance 0 of ns-a/game, with
// its task group, as the scheduler's driver does; it is made at the fake
// clock's now.
func (e *env) notice(t registry.NoticeType, launch int) registry.Notice {
	e.t.Helper()
	tgID := fmt.Sprintf("ns-a_game_0_%d", launch)
	at := e.clock.Now()
	n := registry.Notice{ID: registry.NoticeID(at, tgID, t), Type: t, Namespace: "ns-a", App: "game", TaskGroupID: tgID,
		AgentID: "agent-1", Host: "host-1", State: "TASK_FAILED", Time: at, Message: "task " + tgID + "_0 TASK_FAILED"}
	tg := &registry.TaskGroup{ID: tgID, Namespace: "ns-a", App: "game", Launches: launch, State: "TASK_FAILED", Phase: "Pending"}
	if err := e.reg.PutTaskGroup(ctx, tg, n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

// wait waits until the notification satisfies ok, and returns it.
func (e *env) wait(id, what string, ok func(*registry.Notification) bool) *registry.Notification {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		n, err := e.reg.GetNotification(ctx, id)
		if err != nil {
			e.t.Fatal(err)
		}
		if ok(n) {
			return n
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("notification %s: not %s after 30s: %+v", id, what, n)
		}
		time.Sleep(10 * time.Millisecond) // the notifier works in other goroutines
	}
}

// waitAttempts waits until the notification's only delivery made n
// attempts and is not under way.
func (e *env) waitAttempts(id string, n int) registry.Delivery {
	e.t.Helper()
	got := e.wait(id, fmt.Sprintf("tried %d times", n), func(note *registry.Notification) bool {
		return len(note.Deliveries) == 1 && note.Deliveries[0].Attempts == n && note.Deliveries[0].LastError != "" &&
			note.Deliveries[0].NextAttempt.Sub(note.Deliveries[0].LastAttempt) < 5*time.Second
	})
	return got.Deliveries[0]
}

// advance moves the fake clock once a notifier waits on it.
func (e *env) advance(d time.Duration) {
	e.t.Helper()
	waitCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := e.clock.BlockUntilContext(waitCtx, 1); err != nil {
		e.t.Fatalf("no notifier waits on the clock: %v", err)
	}
	e.clock.Advance(d)
}

// loopbackAllowed is the callbacks' egress policy of these tests: the
// receivers listen on loopback, which the default rules allow here, as
// a user's policy opens a receiver on 127.0.0.1.
func loopbackAllowed(t *testing.T) *egress.Policy {
	t.Helper()
	set, err := egress.NewSet(egress.Networks(), nil, map[string][]string{"": {"127.0.0.0/8"}})
	if err != nil {
		t.Fatal(err)
	}
	return set.Default("notify callbacks")
}

// receiver is a callback server: it records every POST and answers
// with what answer says for its arrival number.
type receiver struct {
	*httptest.Server
	answer func(n int) int // status for the post that arrived n-th (from 1)
	// holdFirst, when set, keeps the first post waiting until it closes.
	holdFirst chan struct{}
	// delay makes every answer wait, so posts could overlap.
	delay    time.Duration
	mu       sync.Mutex
	arrivals int
	posts    []post
	inflight map[string]int // posts of an event ID under way
	overlaps int            // posts of one event ID that overlapped
}

// post is one POST a receiver got.
type post struct {
	n                                    int // arrival number
	id, eventType, user, password, token string
	notice                               registry.Notice
	status                               int
	at                                   time.Time // the fake clock's time
}

func newReceiver(t *testing.T, clock clockwork.Clock, answer func(n int) int) *receiver {
	r := &receiver{answer: answer, inflight: map[string]int{}}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		p := post{id: req.Header.Get(notify.EventIDHeader), eventType: req.Header.Get(notify.EventTypeHeader),
			token: req.URL.Query().Get("token"), at: clock.Now()}
		p.user, p.password, _ = req.BasicAuth()
		if err := json.Unmarshal(body, &p.notice); err != nil || req.Header.Get("Content-Type") != "application/json" {
			t.Errorf("POST %s: body %q (%v), Content-Type %q", req.URL.Path, body, err, req.Header.Get("Content-Type"))
		}
		r.mu.Lock()
		r.arrivals++
		p.n, p.status = r.arrivals, r.answer(r.arrivals)
		r.inflight[p.id]++
		if r.inflight[p.id] > 1 {
			r.overlaps++
		}
		r.mu.Unlock()
		if p.n == 1 && r.holdFirst != nil {
			<-r.holdFirst
		}
		time.Sleep(r.delay)
		r.mu.Lock()
		r.inflight[p.id]--
		r.posts = append(r.posts, p)
		r.mu.Unlock()
		w.WriteHeader(p.status)
		fmt.Fprintf(w, "answer %d", p.status)
	}))
	t.Cleanup(r.Close)
	return r
}

// hold keeps the first post waiting until release (or the test's end,
// before the server closes: Close waits for it).
func (r *receiver) hold(t *testing.T) (release func()) {
	r.holdFirst = make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(r.holdFirst) }) }
	t.Cleanup(release)
	return release
}

// arrived counts the posts that arrived, answered or not.
func (r *receiver) arrived() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.arrivals
}

func (r *receiver) got() []post {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]post(nil), r.posts...)
}

// delivered counts the 2xx answers per event ID.
func (r *receiver) delivered() map[string]int {
	counts := map[string]int{}
	for _, p := range r.got() {
		if p.status >= 200 && p.status < 300 {
			counts[p.id]++
		}
	}
	return counts
}

func always(status int) func(int) int { return func(int) int { return status } }

// logged is a logger that also keeps what it wrote, to check it.
type logged struct {
	mu  sync.Mutex
	buf []byte
}

func (l *logged) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	return len(p), nil
}

func (l *logged) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.buf)
}

func (l *logged) logger() *slog.Logger { return slog.New(slog.NewTextHandler(l, nil)) }
