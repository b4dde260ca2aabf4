package healthcheck_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/healthcheck"
	"github.com/bcs-mesos/bcs-mesos/proto"
	"github.com/jonboulle/clockwork"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Seed 000: failures are ignored during gracePeriodSeconds or until the
// task is healthy once; consecutiveFailures failures kill, 0 never kills.
func TestTracker(t *testing.T) {
	fail := errors.New("boom")
	type step struct {
		at      time.Duration
		err     error
		healthy bool
		inGrace bool
		count   int
		kill    bool
	}
	tests := []struct {
		name   string
		policy healthcheck.Policy
		steps  []step
	}{
		{"failures in grace ignored", healthcheck.Policy{Grace: 10 * time.Second, ConsecutiveFailures: 2}, []step{
			{at: time.Second, err: fail, inGrace: true},
			{at: 9 * time.Second, err: fail, inGrace: true},
			{at: 10 * time.Second, err: fail, count: 1},
			{at: 11 * time.Second, err: fail, count: 2, kill: true},
		}},
		{"healthy once ends grace", healthcheck.Policy{Grace: time.Hour, ConsecutiveFailures: 2}, []step{
			{at: time.Second, healthy: true},
			{at: 2 * time.Second, err: fail, count: 1},
			{at: 3 * time.Second, healthy: true},
			{at: 4 * time.Second, err: fail, count: 1},
			{at: 5 * time.Second, err: fail, count: 2, kill: true},
		}},
		{"zero consecutive failures never kills", healthcheck.Policy{}, []step{
			{at: time.Second, err: fail, count: 1},
			{at: 2 * time.Second, err: fail, count: 2},
			{at: 3 * time.Second, err: fail, count: 3},
		}},
		{"one failure kills at once", healthcheck.Policy{ConsecutiveFailures: 1}, []step{
			{at: time.Second, err: fail, count: 1, kill: true},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := healthcheck.NewTracker(tc.policy, t0)
			for i, s := range tc.steps {
				r := tr.Observe(t0.Add(s.at), s.err)
				if r.Healthy != s.healthy || r.InGrace != s.inGrace || r.ConsecutiveFailures != s.count || r.Kill != s.kill {
					t.Errorf("step %d: %+v", i, r)
				}
				if s.err != nil && r.Message != "boom" {
					t.Errorf("step %d message %q", i, r.Message)
				}
			}
		})
	}
}

func TestPolicyOf(t *testing.T) {
	p := healthcheck.PolicyOf(proto.HealthCheck{DelaySeconds: 1, GracePeriodSeconds: 300, ConsecutiveFailures: 3})
	want := healthcheck.Policy{Delay: time.Second, Interval: healthcheck.DefaultInterval, Timeout: healthcheck.DefaultTimeout, Grace: 300 * time.Second, ConsecutiveFailures: 3}
	if p != want {
		t.Errorf("%+v, want %+v", p, want)
	}
	p = healthcheck.PolicyOf(proto.HealthCheck{IntervalSeconds: 60, TimeoutSeconds: 0.5})
	if p.Interval != time.Minute || p.Timeout != 500*time.Millisecond {
		t.Errorf("%+v", p)
	}
}

// Seed 000 portName rule: BRIDGE uses hostPort when > 0, else
// containerPort; other modes containerPort.
func TestPortByName(t *testing.T) {
	ports := []proto.Port{{Name: "http", ContainerPort: 80, HostPort: 31000}, {Name: "metric", ContainerPort: 9090}}
	tests := []struct {
		mode, name string
		want       int
		ok         bool
	}{
		{"BRIDGE", "http", 31000, true},
		{"bridge", "metric", 9090, true},
		{"HOST", "http", 80, true},
		{"USER", "metric", 9090, true},
		{"BRIDGE", "nope", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.mode+"/"+tc.name, func(t *testing.T) {
			got, ok := healthcheck.PortByName(ports, tc.mode)(tc.name)
			if got != tc.want || ok != tc.ok {
				t.Errorf("got %d %v", got, ok)
			}
		})
	}
}

func portOf(t *testing.T, addr string) int {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(p)
	return n
}

// Seed 000 HTTP check: GET scheme://host:port/path with headers; status
// 200–399 is healthy; https is not verified.
func TestHTTPProbe(t *testing.T) {
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Token") != "t0ken" || r.Host != "game.example.com" {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		switch r.URL.Path {
		case "/ok":
			w.WriteHeader(http.StatusOK)
		case "/moved":
			http.Redirect(w, r, "/broken", http.StatusFound)
		case "/missing":
			w.WriteHeader(http.StatusNotFound)
		default:
			w.WriteHeader(http.StatusInternalServerError)
		}
	})
	plain := httptest.NewServer(handler)
	defer plain.Close()
	tlsSrv := httptest.NewTLSServer(handler)
	defer tlsSrv.Close()
	headers := map[string]string{"X-Token": "t0ken", "Host": "game.example.com"}
	tests := []struct {
		name, scheme, path string
		srv                *httptest.Server
		headers            map[string]string
		wantErr            string
	}{
		{"200", "http", "/ok", plain, headers, ""},
		{"302 is healthy and not followed", "http", "/moved", plain, headers, ""},
		{"404", "http", "/missing", plain, headers, "status 404"},
		{"500", "http", "/fail", plain, headers, "status 500"},
		{"headers missing", "http", "/ok", plain, nil, "status 403"},
		{"https unverified", "https", "ok", tlsSrv, headers, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			check := proto.HealthCheck{Type: "HTTP", PortName: "web", Scheme: tc.scheme, Path: tc.path, Headers: tc.headers}
			ports := func(name string) (int, bool) { return portOf(t, tc.srv.Listener.Addr().String()), name == "web" }
			p, err := healthcheck.NewProber(check, "127.0.0.1", ports, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			err = p.Probe(context.Background())
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("Probe: %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestTCPProbe(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := portOf(t, ln.Addr().String())
	p, err := healthcheck.NewProber(proto.HealthCheck{Type: "TCP", Port: port}, "127.0.0.1", nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Probe(context.Background()); err != nil {
		t.Errorf("open port: %v", err)
	}
	ln.Close()
	if err := p.Probe(context.Background()); err == nil || !strings.Contains(err.Error(), "connect 127.0.0.1:") {
		t.Errorf("closed port: %v", err)
	}
}

// HTTP and TCP probes connect only through the dial function they were
// given (the runtimes give an egress policy's): what it refuses fails the
// probe with its error, and the server sees nothing.
func TestProbesDialThroughTheirDialer(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer srv.Close()
	port := portOf(t, srv.Listener.Addr().String())
	var dialed []string
	refuse := func(_ context.Context, network, address string) (net.Conn, error) {
		dialed = append(dialed, network+" "+address)
		return nil, errors.New("egress to " + address + " refused: a Mesos agent's API")
	}
	want := "egress to 127.0.0.1:" + strconv.Itoa(port) + " refused: a Mesos agent's API"
	for _, check := range []proto.HealthCheck{{Type: "HTTP", Port: port, Path: "/files/debug"}, {Type: "TCP", Port: port}} {
		p, err := healthcheck.NewProber(check, "127.0.0.1", nil, nil, refuse)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Probe(context.Background()); err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("%s probe: %v, want an error ending %q", check.Type, err, want)
		}
	}
	if len(dialed) != 2 || hits.Load() != 0 {
		t.Errorf("dialed %q; the server had %d requests, want none", dialed, hits.Load())
	}
	p, err := healthcheck.NewProber(proto.HealthCheck{Type: "HTTP", Port: port}, "127.0.0.1", nil, nil, (&net.Dialer{}).DialContext)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Probe(context.Background()); err != nil || hits.Load() != 1 {
		t.Errorf("through a plain dialer: %v, %d requests", err, hits.Load())
	}
}

// COMMAND checks run through the injected exec function; Shell runs them
// with /bin/sh -c in the work dir with the task's env; exit 0 is healthy;
// the timeout kills the command.
func TestCommandProbeShell(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "check.sh"), []byte("#!/bin/sh\n[ \"$MODE\" = ok ] || { echo \"mode $MODE\"; exit 3; }\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, command, mode string
		timeout             time.Duration
		wantErr             string
	}{
		{"exit 0", "./check.sh", "ok", time.Second, ""},
		{"exit 3 with output", "./check.sh", "bad", time.Second, `exited with 3: mode bad`},
		{"timeout", "sleep 5", "ok", 100 * time.Millisecond, "timed out"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			run := healthcheck.Shell(dir, []string{"MODE=" + tc.mode, "PATH=/usr/bin:/bin"}, nil)
			p, err := healthcheck.NewProber(proto.HealthCheck{Type: "COMMAND", Command: tc.command}, "127.0.0.1", nil, run, nil)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), tc.timeout)
			defer cancel()
			start := time.Now()
			err = p.Probe(ctx)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("Probe: %v, want %q", err, tc.wantErr)
			}
			if time.Since(start) > 3*time.Second {
				t.Errorf("took %v", time.Since(start))
			}
		})
	}
}

func TestNewProberInvalid(t *testing.T) {
	tests := []struct {
		name  string
		check proto.HealthCheck
	}{
		{"unknown port name", proto.HealthCheck{Type: "TCP", PortName: "nope"}},
		{"no port", proto.HealthCheck{Type: "HTTP"}},
		{"bad scheme", proto.HealthCheck{Type: "HTTP", Port: 80, Scheme: "ftp"}},
		{"command without exec", proto.HealthCheck{Type: "COMMAND", Command: "true"}},
		{"remote stays with the scheduler", proto.HealthCheck{Type: "REMOTE_HTTP", Port: 80}},
	}
	ports := healthcheck.PortByName(nil, "HOST")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := healthcheck.NewProber(tc.check, "127.0.0.1", ports, nil, nil); !errors.Is(err, errdefs.ErrInvalidArgument) {
				t.Errorf("err %v, want ErrInvalidArgument", err)
			}
		})
	}
}

// fakeClock fires After channels only when the test advances it. (The
// rest of the Clock is a clockwork fake the checker does not use.)
type fakeClock struct {
	clockwork.Clock
	mu      sync.Mutex
	now     time.Time
	waiters []fakeWaiter
	added   chan struct{}
}

type fakeWaiter struct {
	at time.Time
	ch chan time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{Clock: clockwork.NewFakeClock(), now: t0, added: make(chan struct{}, 16)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	c.waiters = append(c.waiters, fakeWaiter{c.now.Add(d), ch})
	c.added <- struct{}{}
	return ch
}

// advance waits for a pending After, checks its deadline and fires it.
func (c *fakeClock) advance(t *testing.T, want time.Duration) {
	t.Helper()
	select {
	case <-c.added:
	case <-time.After(5 * time.Second):
		t.Fatal("checker never waited")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.waiters[0]
	c.waiters = c.waiters[1:]
	if got := w.at.Sub(c.now); got != want {
		t.Errorf("waited %v, want %v", got, want)
	}
	c.now = w.at
	w.ch <- c.now
}

type scriptedProber struct {
	mu      sync.Mutex
	results []error
}

func (p *scriptedProber) Probe(context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	err := p.results[0]
	p.results = p.results[1:]
	return err
}

// delaySeconds before the first check, intervalSeconds between checks,
// on the injected clock: the test never sleeps for an interval.
func TestCheckerSchedule(t *testing.T) {
	clock := newFakeClock()
	fail := errors.New("down")
	c := &healthcheck.Checker{
		Prober: &scriptedProber{results: []error{fail, nil, fail, fail, fail}},
		Policy: healthcheck.Policy{Delay: 15 * time.Second, Interval: time.Minute, Timeout: time.Second, Grace: 20 * time.Second, ConsecutiveFailures: 3},
		Clock:  clock,
	}
	results := make(chan healthcheck.Result, 10)
	done := make(chan healthcheck.Result)
	go func() { done <- c.Run(context.Background(), func(r healthcheck.Result) { results <- r }) }()
	clock.advance(t, 15*time.Second)
	if r := <-results; !r.InGrace {
		t.Errorf("first failure at 15s should be in grace: %+v", r)
	}
	clock.advance(t, time.Minute)
	if r := <-results; !r.Healthy || !r.Time.Equal(t0.Add(75*time.Second)) {
		t.Errorf("second check %+v", r)
	}
	for i := 1; i <= 3; i++ {
		clock.advance(t, time.Minute)
		if r := <-results; r.ConsecutiveFailures != i || r.Kill != (i == 3) || r.Message != "down" {
			t.Errorf("failure %d: %+v", i, r)
		}
	}
	if last := <-done; !last.Kill {
		t.Errorf("Run returned %+v", last)
	}
}

// Run stops when its context ends.
func TestCheckerStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	c := &healthcheck.Checker{Prober: &scriptedProber{}, Policy: healthcheck.Policy{Delay: time.Hour}, Clock: newFakeClock()}
	done := make(chan struct{})
	go func() { c.Run(ctx, func(healthcheck.Result) { t.Error("no check expected") }); close(done) }()
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not stop")
	}
}
