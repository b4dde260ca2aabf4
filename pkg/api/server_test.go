package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/bcs-mesos/bcs-mesos/pkg/api"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// "GET /v1/agents"; cordon, taints, drain settings by
// ID or hostname, bad taints named, the engine's mode.
func TestAgents(t *testing.T) {
	e := newEnv(t)
	r := e.expect(t, http.StatusOK, "GET", "/v1/agents", nil, nil)
	if !strings.Contains(string(r.body), `"agents": []`) {
		t.Errorf("no agents: body %s, want an empty list", r.body)
	}
	reg := registry.New(e.store, time.Now)
	for _, a := range []registry.Agent{{ID: "agent-b", Hostname: "host-b", Attributes: map[string]string{"idc": "sz"}}, {ID: "agent-a", Hostname: "host-a"}} {
		if err := reg.RecordAgent(context.Background(), a.ID, a.Hostname, a.Endpoint, a.Attributes); err != nil {
			t.Fatal(err)
		}
	}
	e.expect(t, http.StatusOK, "POST", "/v1/agents/agent-a/cordon", nil, nil)
	e.expect(t, http.StatusOK, "PUT", "/v1/agents/host-b/taints", map[string]any{"taints": []string{"gpu=true:NoSchedule", "zone=x", "spot=true:PreferNoSchedule"}}, nil)
	e.expect(t, http.StatusOK, "POST", "/v1/agents/host-b/drain", map[string]any{"force": true, "reason": "kernel"}, nil)
	type view struct {
		ID, Hostname string
		Schedulable  bool
		Cordoned     bool
		Taints       []string
		Reason       string
		Drain        *struct{ State string }
		Attributes   map[string]string
	}
	var got struct{ Agents []view }
	e.expect(t, http.StatusOK, "GET", "/v1/agents", nil, &got)
	if len(got.Agents) != 2 {
		t.Fatalf("agents %+v, want 2", got.Agents)
	}
	a, b := got.Agents[0], got.Agents[1] // sorted by hostname
	if a.ID != "agent-a" || !a.Cordoned || a.Schedulable || len(a.Taints) != 0 {
		t.Errorf("host-a %+v: want cordoned, unschedulable, untainted", a)
	}
	if b.ID != "agent-b" || b.Schedulable || b.Cordoned || b.Reason != "kernel" || b.Drain == nil || b.Drain.State != "drained" ||
		!reflect.DeepEqual(b.Taints, []string{"gpu=true:NoSchedule", "zone=x:NoSchedule", "spot=true:PreferNoSchedule"}) || b.Attributes["idc"] != "sz" {
		t.Errorf("host-b %+v: want draining (nothing on it: drained), the taints, the reason", b)
	}
	// Bad input names the field and changes nothing.
	bad := errorOf(t, e.call(t, "PUT", "/v1/agents/agent-b/taints", map[string]any{"taints": []string{"gpu=true:Evict"}}), http.StatusBadRequest, "InvalidArgument")
	if !strings.Contains(strings.Join(bad.Details, " "), "taints[0]") {
		t.Errorf("bad taint: %+v, want taints[0] named", bad)
	}
	errorOf(t, e.call(t, "POST", "/v1/agents/nowhere/cordon", nil), http.StatusNotFound, "NotFound")
	errorOf(t, e.call(t, "POST", "/v1/agents/agent-b/explode", nil), http.StatusNotFound, "NotFound")
	var one view
	e.expect(t, http.StatusOK, "GET", "/v1/agents/host-b", nil, &one)
	if len(one.Taints) != 3 {
		t.Errorf("after a bad PUT host-b has taints %v, want the 3 it had", one.Taints)
	}
	// Undone, the settings go.
	e.expect(t, http.StatusOK, "POST", "/v1/agents/host-a/uncordon", nil, nil)
	e.expect(t, http.StatusOK, "POST", "/v1/agents/host-b/undrain", nil, nil)
	e.expect(t, http.StatusOK, "PUT", "/v1/agents/host-b/taints", map[string]any{"taints": []string{}}, nil)
	settings, err := reg.ListAgentSettings(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(settings) != 1 || settings[0].Hostname != "host-b" || settings[0].Reason != "kernel" {
		t.Errorf("settings left: %+v, want only host-b's reason", settings)
	}

	var engine struct{ Mode string }
	e.expect(t, http.StatusOK, "GET", "/v1/engine", nil, &engine)
	if engine.Mode != "running" {
		t.Errorf("engine %+v, want running", engine)
	}
	bad = errorOf(t, e.call(t, "PUT", "/v1/engine", map[string]any{"mode": "asleep"}), http.StatusBadRequest, "InvalidArgument")
	if !strings.Contains(strings.Join(bad.Details, " "), "mode") {
		t.Errorf("bad mode: %+v, want mode named", bad)
	}
	e.expect(t, http.StatusOK, "PUT", "/v1/engine", map[string]any{"mode": "maintenance", "reason": "upgrade"}, nil)
	e.expect(t, http.StatusOK, "GET", "/v1/engine", nil, &engine)
	if engine.Mode != "maintenance" {
		t.Errorf("engine %+v, want maintenance", engine)
	}
}

// "GET /v1/agents shows per agent … resources total/used";
// the master's view (its state, its own drain, total resources) and a
// maintenance window show, and each makes the agent unschedulable until
// the window ends: the list read again then, the fleet unchanged, shows
// the agent schedulable (not the answer kept from before).
func TestAgentsShowTheMastersViewAndMaintenance(t *testing.T) {
	now := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	clock := clockwork.NewFakeClockAt(now)
	e := newEnv(t, func(c *api.Config) { c.Clock = clock })
	ctx := context.Background()
	active := registry.AgentMaster{Active: true, Total: registry.AgentResources{CPUs: 8, MemMB: 16384, DiskMB: 1000, Ports: 1001}}
	drained := registry.AgentMaster{Deactivated: true, Drain: "DRAINED", Total: active.Total}
	if _, err := e.reg.SyncAgents(ctx, []registry.ListedAgent{
		{ID: "a1", Hostname: "h1", Master: active}, {ID: "a2", Hostname: "h2", Master: drained},
		{ID: "a3", Hostname: "h3", Master: active}, {ID: "a4", Hostname: "h4", Master: active},
	}); err != nil {
		t.Fatal(err)
	}
	if err := e.reg.SetAgentMaintenance(ctx, "a3", "h3", &registry.AgentMaintenance{Start: now.Add(time.Hour), End: now.Add(2 * time.Hour), Answer: "accepted"}); err != nil {
		t.Fatal(err)
	}
	if err := e.reg.SetAgentMaintenance(ctx, "a4", "h4", &registry.AgentMaintenance{Start: now.Add(-2 * time.Hour), End: now.Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	type view struct {
		ID          string
		Schedulable bool
		LastSeen    *time.Time
		Master      *registry.AgentMaster
		Maintenance *registry.AgentMaintenance
	}
	type want struct {
		schedulable bool
		master      registry.AgentMaster
		answer      string
	}
	check := func(wants ...want) {
		t.Helper()
		var got struct{ Agents []view }
		e.expect(t, http.StatusOK, "GET", "/v1/agents", nil, &got)
		if len(got.Agents) != len(wants) {
			t.Fatalf("agents %+v, want %d", got.Agents, len(wants))
		}
		for i, want := range wants {
			a := got.Agents[i]
			if a.Schedulable != want.schedulable || a.Master == nil || *a.Master != want.master || a.LastSeen != nil ||
				want.answer != "" && (a.Maintenance == nil || a.Maintenance.Answer != want.answer) {
				t.Errorf("at %s, agent %s: %+v (master %+v, maintenance %+v); want schedulable=%v, master %+v, answer %q",
					clock.Now(), a.ID, a, a.Master, a.Maintenance, want.schedulable, want.master, want.answer)
			}
		}
	}
	inWindow := []want{{true, active, ""}, {false, drained, ""}, {false, active, "accepted"}, {true, active, ""}} // a4's window is over
	check(inWindow...)
	clock.Advance(2*time.Hour - time.Second)
	check(inWindow...)
	clock.Advance(time.Second)
	check(want{true, active, ""}, want{false, drained, ""}, want{true, active, "accepted"}, want{true, active, ""})
}

// fakeLeadership is a replica that follows (or leads) as told.
type fakeLeadership struct {
	url  string
	self bool
}

func (f fakeLeadership) Leader() (string, bool) { return f.url, f.self }

// "GET /v1/leader"; doc: "On a follower replica, writes are
// redirected to the leader with 307", reads are served locally.
func TestLeaderAndFollowerRedirect(t *testing.T) {
	leader := newEnv(t, func(c *api.Config) { c.Leadership = fakeLeadership{url: "http://10.0.0.9:8080", self: true} })
	var got struct {
		Leader string
		Self   bool
	}
	leader.expect(t, http.StatusOK, "GET", "/v1/leader", nil, &got)
	if got.Leader != "http://10.0.0.9:8080" || !got.Self {
		t.Errorf("leader answers %+v", got)
	}

	follower := newEnv(t, func(c *api.Config) { c.Leadership = fakeLeadership{url: "http://10.0.0.9:8080"} })
	follower.expect(t, http.StatusOK, "GET", "/v1/leader", nil, &got)
	if got.Leader != "http://10.0.0.9:8080" || got.Self {
		t.Errorf("follower answers %+v", got)
	}
	writes := []struct{ method, path string }{
		{"POST", "/v1/apps"},
		{"PUT", "/v1/apps/ns-a/gamesvc"},
		{"DELETE", "/v1/apps/ns-a/gamesvc"},
		{"POST", "/v1/apps/ns-a/gamesvc/scale?dry=1"},
		{"POST", "/v1/secrets"},
	}
	for _, w := range writes {
		r := follower.call(t, w.method, w.path, process("gamesvc", "ns-a"))
		if r.status != http.StatusTemporaryRedirect || r.header.Get("Location") != "http://10.0.0.9:8080"+w.path {
			t.Errorf("%s %s on a follower = %d Location %q, want 307 to the leader", w.method, w.path, r.status, r.header.Get("Location"))
		}
	}
	if keys := follower.storedKeys(t); len(keys) != 0 {
		t.Errorf("a follower wrote %q", keys)
	}
	// Reads are served locally.
	follower.expect(t, http.StatusOK, "GET", "/v1/apps", nil, nil)
	errorOf(t, follower.call(t, "GET", "/v1/apps/ns-a/gamesvc", nil), http.StatusNotFound, "NotFound")

	// No leader elected: a write waits 5s for one, then is unavailable
	// (Retry-After); reads are still served.
	clock := clockwork.NewFakeClock()
	orphan := newEnv(t, func(c *api.Config) { c.Leadership, c.Clock = fakeLeadership{}, clock })
	answered := make(chan response, 1)
	go func() { answered <- orphan.call(t, "POST", "/v1/apps", process("gamesvc", "ns-a")) }()
	if err := clock.BlockUntilContext(t.Context(), 2); err != nil { // the deadline and the ticker
		t.Fatal(err)
	}
	clock.Advance(5 * time.Second)
	r := <-answered
	errorOf(t, r, http.StatusServiceUnavailable, "Unavailable")
	if r.header.Get("Retry-After") != "1" {
		t.Errorf("Retry-After %q", r.header.Get("Retry-After"))
	}
	orphan.expect(t, http.StatusOK, "GET", "/v1/apps", nil, nil)

	// A write that comes while the election is under way waits for it.
	electing := newEnv(t, func(c *api.Config) { c.Leadership = &electedAfter{calls: 3} })
	electing.expect(t, http.StatusCreated, "POST", "/v1/apps", process("gamesvc", "ns-a"), nil)
}

// electedAfter is a replica that leads from its calls-th Leader call on.
type electedAfter struct {
	mu    sync.Mutex
	calls int
}

func (e *electedAfter) Leader() (string, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.calls--
	return "", e.calls <= 0
}

// "GET /healthz": it reports whether the store answers.
func TestHealthz(t *testing.T) {
	ctx := context.Background()
	etcd, err := store.StartEmbedded(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(etcd.Close)
	e := newEnvOn(t, etcd.Endpoints(), "/healthz-test/", shared.Sealer)
	var ok map[string]string
	e.expect(t, http.StatusOK, "GET", "/healthz", nil, &ok)
	if ok["status"] != "ok" {
		t.Errorf("healthz = %v", ok)
	}
	etcd.Close()
	start := time.Now()
	got := errorOf(t, e.call(t, "GET", "/healthz", nil), http.StatusServiceUnavailable, "Unavailable")
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("healthz took %v to notice etcd is gone", elapsed)
	}
	if !strings.Contains(got.Message, "unavailable") {
		t.Errorf("message %q", got.Message)
	}
}

// "GET /metrics (Prometheus client_golang)".
func TestMetrics(t *testing.T) {
	e := newEnv(t)
	createApp(t, e, process("gamesvc", "ns-a"))
	e.call(t, "POST", "/v1/apps", process("gamesvc", "ns-a")) // 409
	e.call(t, "GET", "/no/such/route", nil)
	r := e.expect(t, http.StatusOK, "GET", "/metrics", nil, nil)
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("Content-Type = %q, want the Prometheus text format", ct)
	}
	for _, want := range []string{
		"# TYPE bcs_api_requests_total counter",
		`bcs_api_requests_total{code="201",route="POST /v1/apps"} 1`,
		`bcs_api_requests_total{code="409",route="POST /v1/apps"} 1`,
		`bcs_api_requests_total{code="404",route="unmatched"} 1`,
		`bcs_api_request_duration_seconds_count{route="POST /v1/apps"} 2`,
		"go_goroutines",
	} {
		if !strings.Contains(string(r.body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// "Body size limit; wrong content type → 415".
func TestRequestBodyRules(t *testing.T) {
	e := newEnv(t, func(c *api.Config) { c.MaxBodyBytes = 512 })
	body := mustJSON(t, process("gamesvc", "ns-a"))
	if len(body) <= 512 {
		t.Fatalf("test manifest is only %d bytes", len(body))
	}
	errorOf(t, e.call(t, "POST", "/v1/apps", body), http.StatusRequestEntityTooLarge, "PayloadTooLarge")

	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "", "application/json;;"} {
		r := e.call(t, "POST", "/v1/configmaps", `{}`, "Content-Type", ct)
		got := errorOf(t, r, http.StatusUnsupportedMediaType, "UnsupportedMediaType")
		if !strings.Contains(got.Message, "application/json") {
			t.Errorf("415 message %q does not say what is wanted", got.Message)
		}
	}
	errorOf(t, e.call(t, "POST", "/v1/apps/ns-a/x/scale", `{"instances":1}`, "Content-Type", "text/json"),
		http.StatusUnsupportedMediaType, "UnsupportedMediaType")
	// Parameters are fine.
	r := e.call(t, "POST", "/v1/configmaps", mustJSON(t, configMap("c", "ns-a")), "Content-Type", "application/json; charset=utf-8")
	if r.status != http.StatusCreated {
		t.Errorf("POST with charset = %d, want 201; %s", r.status, r.body)
	}
	if keys := e.storedKeys(t); len(keys) != 1 {
		t.Errorf("stored %q, want only the configmap", keys)
	}
}

// "Errors: one JSON shape" for unknown routes (404) and methods
// (405, with Allow).
func TestUnmatchedRoutes(t *testing.T) {
	e := newEnv(t)
	got := errorOf(t, e.call(t, "GET", "/v1/nothing", nil), http.StatusNotFound, "NotFound")
	if !strings.Contains(got.Message, "/v1/nothing") || len(got.Details) != 0 {
		t.Errorf("404 = %+v", got)
	}
	tests := []struct {
		method, path string
		allow        []string
	}{
		{"PATCH", "/v1/apps/ns-a/x", []string{"DELETE", "GET", "HEAD", "PUT"}},
		{"DELETE", "/v1/apps", []string{"GET", "HEAD", "POST"}},
		{"GET", "/v1/apps/ns-a/x/scale", []string{"POST"}},
		{"POST", "/healthz", []string{"GET", "HEAD"}},
	}
	for _, tt := range tests {
		r := e.call(t, tt.method, tt.path, nil)
		got := errorOf(t, r, http.StatusMethodNotAllowed, "MethodNotAllowed")
		allow := strings.Split(strings.ReplaceAll(r.header.Get("Allow"), " ", ""), ",")
		if !sameSet(allow, tt.allow) {
			t.Errorf("%s %s: Allow %q, want %q", tt.method, tt.path, allow, tt.allow)
		}
		if !strings.Contains(got.Message, tt.method) {
			t.Errorf("405 message %q does not name the method", got.Message)
		}
	}
}

// "?dryRun=true created the application for real (unknown
// query parameters are ignored)" — an unknown query parameter is a 400
// naming it and what the route takes, and nothing is written; the
// parameters a route takes still work.
func TestUnknownQueryParametersAreRefused(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		method, path string
		want         string
	}{
		{"POST", "/v1/apps?dryrun=true", "dryrun: unknown parameter (want dryRun)"},
		{"POST", "/v1/apps/ns-a/gamesvc/scale?dryRun=true", "dryRun: unknown parameter (this route takes none)"},
		{"GET", "/v1/apps?namespce=ns-a", "namespce: unknown parameter (want namespace, summary, limit, after)"},
		{"DELETE", "/v1/apps/ns-a/gamesvc?forse=true", "force"},
		{"GET", "/v1/notifications?sate=failed", "sate: unknown parameter (want namespace, app, type, state, limit, before)"},
		{"POST", "/v1/secrets?x=1&a=2", "a: unknown parameter (this route takes none)"},
	} {
		got := errorOf(t, e.call(t, tc.method, tc.path, process("gamesvc", "ns-a")), http.StatusBadRequest, "InvalidArgument")
		if got.Message != "invalid query parameters" || len(got.Details) == 0 || !strings.Contains(got.Details[0], tc.want) {
			t.Errorf("%s %s: %q %q, want invalid query parameters, %q", tc.method, tc.path, got.Message, got.Details, tc.want)
		}
	}
	if keys := e.storedKeys(t); len(keys) != 0 {
		t.Errorf("refused requests wrote %q", keys)
	}
	createApp(t, e, process("gamesvc", "ns-a"))
	var list struct{ Apps []map[string]any }
	e.expect(t, http.StatusOK, "GET", "/v1/apps?namespace=ns-a", nil, &list)
	if len(list.Apps) != 1 {
		t.Errorf("GET ?namespace=ns-a: %d apps, want 1", len(list.Apps))
	}
}

// The error body is exactly {"error":{"code","message","details"}} for
// every class the API maps (errorOf checks the keys).
func TestErrorShape(t *testing.T) {
	e := newEnv(t)
	createApp(t, e, process("gamesvc", "ns-a"))
	r := e.call(t, "POST", "/v1/apps", `{"kind":"process","metadata":{"name":"1bad"},"extra":1}`)
	got := errorOf(t, r, http.StatusBadRequest, "InvalidArgument")
	if got.Message != "invalid manifest" || len(got.Details) < 2 {
		t.Errorf("400 = %+v, want every problem in details", got)
	}
	var raw map[string]map[string]any
	if err := json.Unmarshal(r.body, &raw); err != nil {
		t.Fatal(err)
	}
	for _, d := range raw["error"]["details"].([]any) {
		if s, ok := d.(string); !ok || !strings.Contains(s, ": ") {
			t.Errorf("detail %v is not `field path: message`", d)
		}
	}
	errorOf(t, e.call(t, "POST", "/v1/apps", process("gamesvc", "ns-a")), http.StatusConflict, "AlreadyExists")
	errorOf(t, e.call(t, "GET", "/v1/configmaps/ns-a/none", nil), http.StatusNotFound, "NotFound")
	errorOf(t, e.call(t, "GET", "/v1/apps?namespace=a%20b", nil), http.StatusBadRequest, "InvalidArgument")
}

// fakeOperator records the task group operations asked of it; Message
// answers as an executor would (answer), or fails with err.
type fakeOperator struct {
	mu       sync.Mutex // commands send messages at once
	calls    []string
	err      error
	messages []sentMessage
	answer   proto.MessageResult
}

// sentMessage is a message as Operator.Message got it.
type sentMessage struct {
	taskGroupID, task string
	msg               proto.Message
}

func (f *fakeOperator) Message(_ context.Context, taskGroupID, task string, msg proto.Message) (*proto.MessageResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.messages = append(f.messages, sentMessage{taskGroupID, task, msg})
	if f.err != nil {
		return nil, f.err
	}
	res := f.answer
	res.Type = msg.Type
	return &res, nil
}

func (f *fakeOperator) Operate(_ context.Context, taskGroupID, op string) error {
	f.calls = append(f.calls, op+" "+taskGroupID)
	return f.err
}

func (f *fakeOperator) Drift(_ context.Context, req api.DriftRequest) error {
	f.calls = append(f.calls, fmt.Sprintf("drift %s→%s %s/%s", req.FromHost, req.To, req.Namespace, req.App))
	return f.err
}

// POST /v1/taskgroups/{id}/{op}: restart, reload and reschedule are handed
// to the scheduler and answered 202 ("Async operations return 202");
// anything else is 404, and a replica without a scheduler is unavailable.
func TestTaskGroupOperations(t *testing.T) {
	op := &fakeOperator{}
	e := newEnv(t, func(c *api.Config) { c.Operator = op })
	for _, name := range []string{"restart", "reload", "reschedule"} {
		var got map[string]string
		e.expect(t, http.StatusAccepted, "POST", "/v1/taskgroups/0.game.ns-a.1/"+name, nil, &got)
		if got["taskGroupID"] != "0.game.ns-a.1" || got["operation"] != name {
			t.Errorf("%s answered %v", name, got)
		}
	}
	errorOf(t, e.call(t, "POST", "/v1/taskgroups/0.game.ns-a.1/explode", nil), http.StatusNotFound, "NotFound")
	want := []string{"restart 0.game.ns-a.1", "reload 0.game.ns-a.1", "reschedule 0.game.ns-a.1"}
	if !reflect.DeepEqual(op.calls, want) {
		t.Errorf("operator calls %q, want %q", op.calls, want)
	}
	op.err = fmt.Errorf("task group %q: %w", "9.none", errdefs.ErrNotFound)
	errorOf(t, e.call(t, "POST", "/v1/taskgroups/9.none/restart", nil), http.StatusNotFound, "NotFound")

	none := newEnv(t)
	errorOf(t, none.call(t, "POST", "/v1/taskgroups/0.game.ns-a.1/restart", nil), http.StatusServiceUnavailable, "Unavailable")
}

// NoExecute taints (Kubernetes' taint manager): accepted, set at the
// clock's time and kept when set again, and the agent shows the running
// instances they move off and when — at once without a toleration.
func TestNoExecuteTaintShowsPendingEvictions(t *testing.T) {
	set := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	clock := clockwork.NewFakeClockAt(set)
	e := newEnv(t, func(c *api.Config) { c.Clock = clock })
	if err := e.reg.RecordAgent(context.Background(), "agent-b", "host-b", "", nil); err != nil {
		t.Fatal(err)
	}
	createApp(t, e, miniProcess)
	putTaskGroup(t, e, registry.TaskGroup{ID: "defaultGroup_mini_0_1", Namespace: "defaultGroup", App: "mini", Index: 0,
		State: "TASK_RUNNING", Phase: "Running", Host: "host-b", AgentID: "agent-b"})
	type view struct {
		Taints    []string
		Evictions []struct {
			Instance string
			At       time.Time
		}
	}
	var v view
	e.expect(t, http.StatusOK, "PUT", "/v1/agents/host-b/taints", map[string]any{"taints": []string{"kernel=old:NoExecute"}}, &v)
	if len(v.Evictions) != 1 || v.Evictions[0].Instance != "defaultGroup/mini/0" || !v.Evictions[0].At.Equal(set) {
		t.Fatalf("agent %+v: want defaultGroup/mini/0 evicted at %v", v, set)
	}
	clock.Advance(time.Minute)
	v = view{}
	e.expect(t, http.StatusOK, "PUT", "/v1/agents/host-b/taints", map[string]any{"taints": []string{"kernel=old:NoExecute", "zone=x"}}, &v)
	if len(v.Evictions) != 1 || !v.Evictions[0].At.Equal(set) || !reflect.DeepEqual(v.Taints, []string{"kernel=old:NoExecute", "zone=x:NoSchedule"}) {
		t.Errorf("agent %+v: set again, the NoExecute taint keeps its time %v", v, set)
	}
	v = view{}
	e.expect(t, http.StatusOK, "PUT", "/v1/agents/host-b/taints", map[string]any{"taints": []string{"zone=x"}}, &v)
	if len(v.Evictions) != 0 {
		t.Errorf("agent %+v: without a NoExecute taint nothing is evicted", v)
	}
}
