package hookrun_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/hook"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// seedBody is seed 003's example answer of the web hook.
const seedBody = `{"name":"bryan","male":"yes","age":45}`

// hookServer is the web hook a test's metrics call: it answers with
// answer and remembers the requests.
type hookServer struct {
	*httptest.Server
	mu       sync.Mutex
	requests []seenRequest
}

type seenRequest struct {
	method, path, body, contentType, token string
}

func newHookServer(t *testing.T, answer http.HandlerFunc) *hookServer {
	s := &hookServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.requests = append(s.requests, seenRequest{r.Method, r.URL.Path, string(body), r.Header.Get("Content-Type"), r.Header.Get("X-Token")})
		s.mu.Unlock()
		answer(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func answerWith(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, body) }
}

func (s *hookServer) calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

// Seed 003's example: age 45 is not under 30, so the run fails, saying so.
func TestSeedExampleFails(t *testing.T) {
	e := newEnv(t)
	srv := newHookServer(t, answerWith(seedBody))
	e.putTemplate([]manifest.HookMetric{webMetric(srv.URL, manifest.HookMetric{
		Name: "webtest", Count: 2, Interval: "60s", SuccessCondition: "asInt(result) < 30"})},
		manifest.HookArg{Name: "service-name", Value: "test-gamedeployment-svc"}, manifest.HookArg{Name: "PodName"})
	e.startRunner(nil)
	// As the scheduler does: its arguments, whether the template declares
	// them or not.
	e.createRun("seed", manifest.HookArg{Name: manifest.ArgNamespace, Value: ns}, manifest.HookArg{Name: "PodName", Value: "gs-0"})

	run := e.waitPhase("seed", hook.Failed)
	const why = "metric webtest failed: measurement 1 of 2: successCondition asInt(result) < 30 is false for 45"
	if run.Status.Message != why {
		t.Errorf("message %q, want %q", run.Status.Message, why)
	}
	r := run.Status.MetricResults[0]
	if r.Phase != hook.Failed || r.Count != 1 || r.Failed != 1 || len(r.Measurements) != 1 {
		t.Fatalf("metric: %+v", r)
	}
	if m := r.Measurements[0]; m.Value != "45" || m.Phase != hook.Failed || !m.StartedAt.Equal(t0) {
		t.Errorf("measurement: %+v", m)
	}
	// The template's metrics and arguments were copied into the run, the
	// run's other arguments kept.
	wantArgs := []manifest.HookArg{{Name: "service-name", Value: "test-gamedeployment-svc"}, {Name: "PodName", Value: "gs-0"},
		{Name: manifest.ArgNamespace, Value: ns}}
	if len(run.Spec.Metrics) != 1 || run.Spec.Metrics[0].Name != "webtest" || !equalArgs(run.Spec.Args, wantArgs) {
		t.Errorf("spec: %+v", run.Spec)
	}
	if !run.Status.StartedAt.Equal(t0) || !run.Status.FinishedAt.Equal(t0) {
		t.Errorf("started %v, finished %v", run.Status.StartedAt, run.Status.FinishedAt)
	}
	if srv.calls() != 1 {
		t.Errorf("%d calls, want 1: a failed run measures no more", srv.calls())
	}
}

func equalArgs(a, b []manifest.HookArg) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// POST with a templated body and headers reaches the server; the token
// header's value never reaches the log.
func TestWebPostWithArgs(t *testing.T) {
	e := newEnv(t)
	srv := newHookServer(t, answerWith(`{"ready":true}`))
	const token = "s3cret-t0ken"
	e.putTemplate([]manifest.HookMetric{{Name: "ready", SuccessCondition: `result == "true"`,
		Provider: manifest.HookProvider{Web: &manifest.WebProvider{
			URL: srv.URL + "/pods/{{ args.PodName }}/ready", Method: "POST", JSONPath: "{$.ready}",
			Body:    `{"pod":"{{ args.PodName }}","ip":"{{ args.PodIP }}"}`,
			Headers: []manifest.HookHeader{{Key: "X-Token", Value: "{{ args.token }}"}},
		}}}},
		manifest.HookArg{Name: "PodName"}, manifest.HookArg{Name: "PodIP", Value: "127.0.0.1"}, manifest.HookArg{Name: "token"})
	var logs bytes.Buffer
	stop := e.startRunner(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	e.createRun("post", manifest.HookArg{Name: "PodName", Value: "gs-1"}, manifest.HookArg{Name: "token", Value: token})

	run := e.waitPhase("post", hook.Successful)
	if m := run.Status.MetricResults[0].Measurements[0]; m.Value != "true" {
		t.Errorf("measurement %+v", m)
	}
	stop()
	want := seenRequest{"POST", "/pods/gs-1/ready", `{"pod":"gs-1","ip":"127.0.0.1"}`, "application/json", token}
	if srv.calls() != 1 || srv.requests[0] != want {
		t.Errorf("requests %+v, want [%+v]", srv.requests, want)
	}
	if strings.Contains(logs.String(), token) {
		t.Errorf("the log shows the token:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "hook run ended") {
		t.Errorf("the log does not say the run ended:\n%s", logs.String())
	}
}

// A call that errs is retried after ErrorRetryInterval; more errors in a
// row than consecutiveErrorLimit end the metric in Error, saying why.
func TestWebErrors(t *testing.T) {
	cases := []struct {
		name    string
		answer  http.HandlerFunc
		timeout int
		message string
	}{
		{name: "timeout", timeout: 1,
			answer:  func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() },
			message: "no answer within 1s (timeoutSeconds)"},
		{name: "non-2xx", answer: func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "in maintenance", http.StatusServiceUnavailable)
		}, message: ": 503 Service Unavailable"},
		{name: "not JSON", answer: answerWith("<html>"), message: "jsonPath {$.age}: the body (6 bytes) is not JSON (at byte 1)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			srv := newHookServer(t, c.answer)
			m := webMetric(srv.URL, manifest.HookMetric{Name: "flaky", ConsecutiveErrorLimit: limit(1)})
			m.Provider.Web.TimeoutSeconds = c.timeout
			e.putTemplate([]manifest.HookMetric{m})
			e.startRunner(nil)
			e.createRun("errs")

			e.waitTaken("errs", 1)
			e.advance(hook.ErrorRetryInterval)
			run := e.waitPhase("errs", hook.Error)
			r := run.Status.MetricResults[0]
			if r.Error != 2 || r.ConsecutiveError != 2 || r.Count != 0 || srv.calls() != 2 {
				t.Errorf("metric %+v after %d calls", r, srv.calls())
			}
			if !strings.HasPrefix(run.Status.Message, "metric flaky erred: 2 errors in a row, more than consecutiveErrorLimit 1; the last: GET "+srv.URL) ||
				!strings.Contains(run.Status.Message, c.message) {
				t.Errorf("message %q, want one containing %q", run.Status.Message, c.message)
			}
			// An error never quotes what the server answered.
			if record, _ := json.Marshal(run); bytes.Contains(record, []byte("maintenance")) || bytes.Contains(record, []byte("<html>")) {
				t.Errorf("the run quotes the answer's body: %s", record)
			}
			if second := r.Measurements[1]; !second.StartedAt.Equal(t0.Add(hook.ErrorRetryInterval)) {
				t.Errorf("the retry started at %v", second.StartedAt)
			}
		})
	}
}

// count and interval on the fake clock: initialDelay, then one call per
// interval, no call before it is due.
func TestIntervalAndCount(t *testing.T) {
	e := newEnv(t)
	srv := newHookServer(t, answerWith(`{"age":12}`))
	e.putTemplate([]manifest.HookMetric{webMetric(srv.URL, manifest.HookMetric{
		Name: "steady", Count: 3, Interval: "60s", InitialDelay: "30s", SuccessCondition: "asInt(result) < 30"})})
	e.startRunner(nil)
	e.createRun("steady")

	e.waitPhase("steady", hook.Pending)
	e.waitRun("steady", "started", func(r *registry.HookRun) bool { return !r.Status.StartedAt.IsZero() })
	e.advance(29 * time.Second)
	e.advance(0) // the runner waits again: the first call is not due yet
	if srv.calls() != 0 {
		t.Fatalf("%d calls before initialDelay", srv.calls())
	}
	e.advance(time.Second)
	for n := 1; n <= 3; n++ {
		run := e.waitTaken("steady", n)
		if n < 3 && run.Status.Phase != hook.Running {
			t.Fatalf("after %d: %s", n, run.Status.Phase)
		}
		if got, want := run.Status.MetricResults[0].Measurements[n-1].StartedAt, t0.Add(30*time.Second+time.Duration(n-1)*time.Minute); !got.Equal(want) {
			t.Errorf("measurement %d started at %v, want %v", n, got, want)
		}
		if n < 3 {
			e.advance(59 * time.Second)
			e.advance(0)
			if srv.calls() != n {
				t.Fatalf("%d calls before the interval passed, want %d", srv.calls(), n)
			}
			e.advance(time.Second)
		}
	}
	run := e.waitPhase("steady", hook.Successful)
	if r := run.Status.MetricResults[0]; r.Count != 3 || r.Successful != 3 || srv.calls() != 3 {
		t.Errorf("metric %+v after %d calls", r, srv.calls())
	}
}

// Terminate stops a run: no call after it, one under way cancelled.
func TestTerminate(t *testing.T) {
	e := newEnv(t)
	hold := make(chan struct{})
	var held sync.WaitGroup
	srv := newHookServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hold" {
			held.Done()
			select {
			case <-hold:
			case <-r.Context().Done():
			}
		}
		io.WriteString(w, `{"age":12}`)
	})
	e.putTemplate([]manifest.HookMetric{
		webMetric(srv.URL, manifest.HookMetric{Name: "forever", Interval: "60s"}),
		webMetric(srv.URL+"/hold", manifest.HookMetric{Name: "held", InitialDelay: "90s"}),
	})
	e.startRunner(nil)
	e.createRun("stop")
	e.waitTaken("stop", 1)
	e.advance(60 * time.Second)
	e.waitTaken("stop", 2)
	held.Add(1)
	e.advance(30 * time.Second) // "held" is called and does not answer
	held.Wait()

	terminate(t, e.reg, "stop")
	run := e.waitPhase("stop", hook.Terminated)
	close(hold)
	for _, r := range run.Status.MetricResults {
		if r.Phase != hook.Terminated || r.Message != "stopped: the run was terminated" {
			t.Errorf("metric %s: %s %q", r.Name, r.Phase, r.Message)
		}
	}
	if run.Status.MetricResults[1].Taken() != 0 {
		t.Errorf("the call under way was recorded: %+v", run.Status.MetricResults[1])
	}
	calls := srv.calls()
	e.clock.Advance(time.Hour)
	time.Sleep(200 * time.Millisecond) // what a runner would do, it would have done by now
	if srv.calls() != calls {
		t.Errorf("%d calls after Terminate", srv.calls()-calls)
	}
}

// terminate does what the API's terminate does.
func terminate(t *testing.T, reg *registry.Registry, name string) {
	t.Helper()
	if _, err := reg.ModifyHookRun(context.Background(), ns, name, func(run *registry.HookRun) (bool, error) {
		run.Spec.Terminate = true
		return true, nil
	}); err != nil {
		t.Fatal(err)
	}
}

// A runner started after another stopped mid-run carries on from the
// stored measurements: none lost, none repeated, the count continues;
// an overdue measurement is taken once.
func TestResume(t *testing.T) {
	e := newEnv(t)
	srv := newHookServer(t, answerWith(`{"age":12}`))
	e.putTemplate([]manifest.HookMetric{webMetric(srv.URL, manifest.HookMetric{
		Name: "steady", Count: 3, Interval: "60s", SuccessCondition: "asInt(result) < 30"})})
	stop := e.startRunner(nil)
	e.createRun("resume")
	first := e.waitTaken("resume", 1).Status.MetricResults[0].Measurements[0]
	stop()

	e.clock.Advance(5 * time.Minute) // the new leader comes late
	e.startRunner(nil)
	run := e.waitTaken("resume", 2)
	r := run.Status.MetricResults[0]
	if r.Measurements[0] != first || !r.Measurements[1].StartedAt.Equal(t0.Add(5*time.Minute)) {
		t.Errorf("measurements after the restart: %+v", r.Measurements)
	}
	e.advance(0)
	if srv.calls() != 2 {
		t.Fatalf("%d calls, want 2: one before the restart, one overdue after it", srv.calls())
	}
	e.advance(time.Minute)
	run = e.waitPhase("resume", hook.Successful)
	if r := run.Status.MetricResults[0]; r.Count != 3 || srv.calls() != 3 {
		t.Errorf("metric %+v after %d calls", r, srv.calls())
	}
}

// A run that cannot start ends in Error, saying why, and calls nothing.
func TestCannotStart(t *testing.T) {
	e := newEnv(t)
	srv := newHookServer(t, answerWith(seedBody))
	e.putTemplate([]manifest.HookMetric{webMetric(srv.URL, manifest.HookMetric{Name: "webtest", SuccessCondition: "asInt(result) <"})},
		manifest.HookArg{Name: "PodName"})
	e.startRunner(nil)

	e.createRun("no-value")
	run := e.waitPhase("no-value", hook.Error)
	if want := `cannot run: spec.args: hook template test needs a value for argument "PodName"`; run.Status.Message != want {
		t.Errorf("message %q, want %q", run.Status.Message, want)
	}
	e.createRun("bad-condition", manifest.HookArg{Name: "PodName", Value: "gs-0"})
	run = e.waitPhase("bad-condition", hook.Error)
	if want := "cannot run: spec.metrics[0].successCondition: unexpected token EOF (column 15)"; run.Status.Message != want {
		t.Errorf("message %q, want %q", run.Status.Message, want)
	}
	missing := &registry.HookRun{Namespace: ns, Name: "no-template", Spec: hook.RunSpec{TemplateName: "nope"}}
	if err := e.reg.CreateHookRun(context.Background(), missing); err != nil {
		t.Fatal(err)
	}
	run = e.waitPhase("no-template", hook.Error)
	if want := "cannot run: hook template ns-a/nope not found"; run.Status.Message != want {
		t.Errorf("message %q, want %q", run.Status.Message, want)
	}
	// A record under the template's key that holds another kind (written
	// past the API, which reads every body as its own kind).
	key, err := store.Key(store.KindHookTemplate, ns, "not-a-template")
	if err != nil {
		t.Fatal(err)
	}
	configMap := `{"apiVersion":"v4","kind":"configmap","metadata":{"name":"not-a-template","namespace":"ns-a"},"datas":{}}`
	if _, err := store.CreateJSON(context.Background(), e.st, key, registry.Object{Kind: manifest.KindHookTemplate, Namespace: ns,
		Name: "not-a-template", Spec: []byte(configMap)}); err != nil {
		t.Fatal(err)
	}
	e.createRunOf("mis-kinded", "not-a-template")
	run = e.waitPhase("mis-kinded", hook.Error)
	if want := "cannot run: stored hook template ns-a/not-a-template is a configmap"; run.Status.Message != want {
		t.Errorf("message %q, want %q", run.Status.Message, want)
	}
	// A run given its metrics (no template) that uses an argument it
	// does not give.
	given := &registry.HookRun{Namespace: ns, Name: "given-metrics", Spec: hook.RunSpec{
		Metrics: []manifest.HookMetric{webMetric(srv.URL+"/{{ args.PodIP }}", manifest.HookMetric{Name: "webtest"})}}}
	if err := e.reg.CreateHookRun(context.Background(), given); err != nil {
		t.Fatal(err)
	}
	run = e.waitPhase("given-metrics", hook.Error)
	if want := "cannot run: spec.metrics[0].provider.web.url: no value for PodIP"; run.Status.Message != want {
		t.Errorf("message %q, want %q", run.Status.Message, want)
	}
	// A started run whose results do not match its metrics (written by
	// hand) ends rather than crash the runner.
	handMade := &registry.HookRun{Namespace: ns, Name: "by-hand",
		Spec:   hook.RunSpec{Metrics: []manifest.HookMetric{webMetric(srv.URL, manifest.HookMetric{Name: "webtest"})}},
		Status: hook.RunStatus{Phase: hook.Running, StartedAt: t0}}
	if err := e.reg.CreateHookRun(context.Background(), handMade); err != nil {
		t.Fatal(err)
	}
	run = e.waitPhase("by-hand", hook.Error)
	if want := "the status has 0 metric results for 1 metrics: the record was changed outside the hook runner"; run.Status.Message != want {
		t.Errorf("message %q, want %q", run.Status.Message, want)
	}
	if srv.calls() != 0 {
		t.Errorf("%d calls", srv.calls())
	}
}

// A deleted run is measured no more.
func TestDeleted(t *testing.T) {
	e := newEnv(t)
	srv := newHookServer(t, answerWith(`{"age":12}`))
	e.putTemplate([]manifest.HookMetric{webMetric(srv.URL, manifest.HookMetric{Name: "forever", Interval: "60s"})})
	e.startRunner(nil)
	e.createRun("gone")
	e.waitTaken("gone", 1)
	if err := e.reg.DeleteHookRun(context.Background(), ns, "gone"); err != nil {
		t.Fatal(err)
	}
	// A run of the same name made afresh is a new run.
	e.createRun("gone")
	e.waitRun("gone", "measured afresh", func(r *registry.HookRun) bool {
		return len(r.Status.MetricResults) > 0 && r.Status.MetricResults[0].Taken() == 1 && r.Status.StartedAt.Equal(t0)
	})
	e.clock.Advance(time.Minute)
	e.waitTaken("gone", 2)
	if srv.calls() != 3 {
		t.Errorf("%d calls, want 3: the deleted run's one, the new run's two", srv.calls())
	}
}

// Two runners at once (an old leader not yet stopped and the new one)
// both measure a metric: the run counts the measurement once.
func TestTwoRunnersCountOnce(t *testing.T) {
	e := newEnv(t)
	var bothCalled sync.WaitGroup
	bothCalled.Add(2)
	srv := newHookServer(t, func(w http.ResponseWriter, _ *http.Request) {
		bothCalled.Done()
		bothCalled.Wait() // neither answers before both runners called
		io.WriteString(w, `{"age":12}`)
	})
	e.putTemplate([]manifest.HookMetric{webMetric(srv.URL, manifest.HookMetric{Name: "steady", Count: 3, Interval: "60s"})})
	dropped := &lineWatch{want: "measurement dropped", seen: make(chan struct{})}
	logger := slog.New(slog.NewTextHandler(dropped, nil))
	e.startRunner(logger)
	e.startRunner(logger)
	e.createRun("twice")

	run := e.waitRun("twice", "judged by both runners", func(r *registry.HookRun) bool {
		select {
		case <-dropped.seen:
			return true
		default:
			return len(r.Status.MetricResults) > 0 && r.Status.MetricResults[0].Taken() > 1
		}
	})
	if r := run.Status.MetricResults[0]; srv.calls() != 2 || r.Count != 1 || len(r.Measurements) != 1 {
		t.Errorf("after %d calls: %+v", srv.calls(), r)
	}
}

// lineWatch closes seen once a log line contains want.
type lineWatch struct {
	want string
	seen chan struct{}
	once sync.Once
}

func (l *lineWatch) Write(p []byte) (int, error) {
	if strings.Contains(string(p), l.want) {
		l.once.Do(func() { close(l.seen) })
	}
	return len(p), nil
}
