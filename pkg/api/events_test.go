package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	sse "github.com/tmaxmax/go-sse"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/bcs-mesos/bcs-mesos/pkg/api"
	"github.com/bcs-mesos/bcs-mesos/pkg/changefeed"
	"github.com/bcs-mesos/bcs-mesos/pkg/hook"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/rollout"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// sseEvent is one message of an event stream as an EventSource sees it.
type sseEvent struct {
	lastID string // the client's last event ID once it has the message
	typ    string
	data   string
}

// streamed is the data of a change's event.
type streamed struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	Action    string          `json:"action"`
	Namespace string          `json:"namespace"`
	Name      string          `json:"name"`
	Revision  int64           `json:"revision"`
	Time      time.Time       `json:"time"`
	Object    json.RawMessage `json:"object"`
	lastID    string
}

func (s streamed) String() string {
	return fmt.Sprintf("%s %s %s/%s", s.Type, s.Action, s.Namespace, s.Name)
}

// eventStream is a client of GET /v1/events, reading with go-sse's
// parser, an SSE client independent of the server's code.
type eventStream struct {
	t      *testing.T
	body   *http.Response
	cancel context.CancelFunc
	once   sync.Once
	events chan sseEvent // closed when the stream ends
	err    error         // why it ended; read after events closed
}

// subscribe opens the event stream and reads it as fast as it comes.
func (e *env) subscribe(t *testing.T, query string, headers ...string) *eventStream {
	t.Helper()
	s := openEvents(t, &http.Client{}, e.url+"/v1/events"+query, headers...)
	s.start()
	return s
}

// openEvents opens the event stream; nothing is read before start.
func openEvents(t *testing.T, client *http.Client, url string, headers ...string) *eventStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET %s = %d %q, want 200 text/event-stream", url, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	s := &eventStream{t: t, body: resp, cancel: cancel, events: make(chan sseEvent, 100000)}
	t.Cleanup(s.close)
	return s
}

func (s *eventStream) start() {
	s.once.Do(func() {
		go func() {
			defer close(s.events)
			for ev, err := range sse.Read(s.body.Body, &sse.ReadConfig{MaxEventSize: 1 << 20}) {
				if err != nil {
					s.err = err
					return
				}
				s.events <- sseEvent{lastID: ev.LastEventID, typ: ev.Type, data: ev.Data}
			}
		}()
	})
}

// close disconnects the client.
func (s *eventStream) close() {
	s.cancel()
	s.body.Body.Close()
}

// next returns the next message, failing the test after 10s or at the
// end of the stream.
func (s *eventStream) next() sseEvent {
	s.t.Helper()
	s.start()
	select {
	case ev, ok := <-s.events:
		if !ok {
			s.t.Fatalf("event stream ended: %v", s.err)
		}
		return ev
	case <-time.After(10 * time.Second):
		s.t.Fatal("no event within 10s")
	}
	panic("unreachable")
}

// change returns the next change event, skipping the message that only
// sets the position.
func (s *eventStream) change() streamed {
	s.t.Helper()
	for {
		ev := s.next()
		if ev.typ == "" && ev.data == "" {
			continue
		}
		var c streamed
		if err := json.Unmarshal([]byte(ev.data), &c); err != nil {
			s.t.Fatalf("%s event data %q: %v", ev.typ, ev.data, err)
		}
		if c.Type != ev.typ || c.ID != ev.lastID {
			s.t.Fatalf("event %q id %q carries type %q id %q", ev.typ, ev.lastID, c.Type, c.ID)
		}
		c.lastID = ev.lastID
		return c
	}
}

// until reads changes up to and including the first that last accepts.
func (s *eventStream) until(last func(streamed) bool) []streamed {
	s.t.Helper()
	var got []streamed
	for {
		c := s.change()
		got = append(got, c)
		if last(c) {
			return got
		}
	}
}

// ended waits for the server to end the stream.
func (s *eventStream) ended() {
	s.t.Helper()
	s.start()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				return
			}
			s.t.Fatalf("event %q %q after the end", ev.typ, ev.data)
		case <-deadline:
			s.t.Fatal("stream still open after 10s")
		}
	}
}

func isAgent(id string) func(streamed) bool {
	return func(c streamed) bool { return c.Type == "agent" && c.Name == id }
}

func describeAll(list []streamed) []string {
	out := make([]string, len(list))
	for i, c := range list {
		out[i] = c.String()
	}
	return out
}

// increasing checks that the IDs of list strictly increase, and that each
// names its revision.
func increasing(t *testing.T, list []streamed) {
	t.Helper()
	var prev *changefeed.ID
	for _, c := range list {
		id, err := changefeed.ParseID(c.ID)
		if err != nil {
			t.Fatalf("event %s: %v", c, err)
		}
		if id.Revision != c.Revision {
			t.Errorf("event %s: id %s, revision %d", c, c.ID, c.Revision)
		}
		if prev != nil && !prev.Before(id) {
			t.Errorf("event %s: id %s does not follow %s", c, id, prev)
		}
		prev = &id
	}
}

func taskGroup(ns, app string, index int, state string) registry.TaskGroup {
	return registry.TaskGroup{ID: fmt.Sprintf("%s.%s.%d.1", ns, app, index), Namespace: ns, App: app, Index: index, Version: 1, State: state}
}

func taskGroupOp(t *testing.T, tg registry.TaskGroup) store.Op {
	t.Helper()
	key, err := registry.TaskGroupKey(tg.Namespace, tg.App, tg.Index)
	if err != nil {
		t.Fatal(err)
	}
	return store.PutOp(key, mustJSON(t, tg))
}

func recordAgent(t *testing.T, e *env, id string) {
	t.Helper()
	if err := e.reg.RecordAgent(context.Background(), id, id+".example", "", nil); err != nil {
		t.Fatal(err)
	}
}

// callbackWithCredentials is a callback URL whose credentials no event
// shows; callbackID is its ID.
const (
	callbackWithCredentials = "http://hook:hunter5-password@cb.example/notify?token=hunter5-token"
	callbackID              = "fc46b02f10f837fc"
)

// "every state change of apps, instances, deployments, hook
// runs, agents" (and their settings, the engine's mode and configuration), each with
// its type, action and object, in order; never a secret, a configmap,
// or a password.
func TestEventStreamShowsEveryChange(t *testing.T) {
	e := newEnv(t)
	events := e.subscribe(t, "")
	start := time.Now()

	created, running := writeOneOfEachKind(t, e)

	got := events.until(isAgent("end"))
	want := []string{
		"app put ns-a/web",
		"deployment put ns-a/dep",
		"notifycallback put /" + callbackID,
		"instance put ns-a/web/0",
		"notification put ns-a/n1",
		"rollout put ns-a/web",
		"hookrun put ns-a/check",
		"agent put /agent-1",
		"agentsettings put /agent-1.example",
		"engine put /mode",
		"engine put /config",
		"app put ns-a/web",
		"instance delete ns-a/web/0",
		"deployment put ns-a/dep", // marked Deleting
		"deployment delete ns-a/dep",
		"agent put /end",
	}
	if d := describeAll(got); !reflect.DeepEqual(d, want) {
		t.Fatalf("events:\n got %q\nwant %q", d, want)
	}
	increasing(t, got)
	showsNoSecretAndItsWriteTime(t, got, start)

	// The objects are what GET shows: the application without its
	// instances (events of their own), the instance, the agent.
	var app api.AppView
	var appStatus struct{ Status map[string]json.RawMessage }
	if err := json.Unmarshal(got[0].Object, &app); err != nil || json.Unmarshal(got[0].Object, &appStatus) != nil {
		t.Fatal(err)
	}
	if app.Name != "web" || app.Kind != manifest.KindProcess || app.Revision != created.Revision || app.Revision != got[0].Revision ||
		app.Instances != 3 || app.Status.State != registry.AppDeploying || !strings.Contains(string(app.Spec), `"user":"fetcher"`) {
		t.Errorf("app object %s", got[0].Object)
	}
	if _, ok := appStatus.Status["instances"]; ok {
		t.Errorf("app object lists instances: %s", got[0].Object)
	}
	var scaled api.AppView
	if err := json.Unmarshal(got[11].Object, &scaled); err != nil || scaled.Instances != 2 {
		t.Errorf("scaled app object %s (%v)", got[11].Object, err)
	}
	var inst api.InstanceView
	if err := json.Unmarshal(got[3].Object, &inst); err != nil || inst.ID != 0 || inst.State != "TASK_RUNNING" || inst.TaskGroupID != running.ID {
		t.Errorf("instance object %s (%v)", got[3].Object, err)
	}
	var agent registry.Agent
	if err := json.Unmarshal(got[7].Object, &agent); err != nil || agent.ID != "agent-1" || agent.Hostname != "agent-1.example" {
		t.Errorf("agent object %s (%v)", got[7].Object, err)
	}
	var settings registry.AgentSettings
	if err := json.Unmarshal(got[8].Object, &settings); err != nil || !settings.Cordoned || settings.Hostname != "agent-1.example" {
		t.Errorf("agent settings object %s (%v)", got[8].Object, err)
	}
	var engine registry.Engine
	if err := json.Unmarshal(got[9].Object, &engine); err != nil || engine.Mode != registry.EngineMaintenance {
		t.Errorf("engine object %s (%v)", got[9].Object, err)
	}
	// The engine's configuration: the values set at run time.
	var engineSettings registry.EngineSettings
	if err := json.Unmarshal(got[10].Object, &engineSettings); err != nil || string(engineSettings.Values["dependsGCDelay"]) != `"1m0s"` {
		t.Errorf("engine config object %s (%v)", got[10].Object, err)
	}
	var notification struct {
		registry.Notification
		State     registry.NotificationState `json:"state"`
		TaskState string                     `json:"taskState"`
	}
	if err := json.Unmarshal(got[4].Object, &notification); err != nil || notification.ID != "n1" || notification.State != registry.NotificationPending ||
		notification.TaskState != "TASK_FAILED" {
		t.Errorf("notification object %s (%v)", got[4].Object, err)
	}
	var callback registry.NotifyCallback
	if err := json.Unmarshal(got[2].Object, &callback); err != nil || callback.ID != callbackID || !strings.Contains(callback.URL, "cb.example") {
		t.Errorf("notify callback object %s (%v)", got[2].Object, err)
	}
	var hookRun registry.HookRun
	if err := json.Unmarshal(got[6].Object, &hookRun); err != nil || hookRun.Spec.TemplateName != "test" || hookRun.Status.Phase != hook.Pending {
		t.Errorf("hook run object %s (%v)", got[6].Object, err)
	}
}

// showsNoSecretAndItsWriteTime checks each event: no password, token or
// secret in its object, null for a delete, and the time of its write
// (none for a delete).
func showsNoSecretAndItsWriteTime(t *testing.T, got []streamed, start time.Time) {
	t.Helper()
	for _, c := range got {
		for _, hidden := range []string{"hunter2-package-password", "hunter3-pull-password", "hunter4-token", "hunter5", secretContent} {
			if strings.Contains(string(c.Object), hidden) {
				t.Errorf("event %s shows %q: %s", c, hidden, c.Object)
			}
		}
		if (c.Action == "delete") != (string(c.Object) == "null") {
			t.Errorf("event %s: object %s", c, c.Object)
		}
		// A change's time is its record's; a delete has none.
		if c.Action == "delete" && !c.Time.IsZero() || c.Action == "put" && (c.Time.Before(start) || c.Time.After(time.Now())) {
			t.Errorf("event %s at %v, want the time of its write", c, c.Time)
		}
	}
}

// writeOneOfEachKind makes a change of every kind the stream shows, and
// of those it never shows, each object holding a password or a token,
// then records agent "end"; it returns the application created and its
// instance.
func writeOneOfEachKind(t *testing.T, e *env) (created api.AppView, running registry.TaskGroup) {
	t.Helper()
	ctx := context.Background()
	web := process("web", "ns-a", func(p *manifest.Process) {
		p.Spec.Template.Spec.Processes[0].URIs[0].User = "fetcher"
		p.Spec.Template.Spec.Processes[0].URIs[0].Pwd = "hunter2-package-password"
	})
	created = createApp(t, e, web)
	dep := deployment("dep", "ns-a")
	dep.Spec.Template.Spec.Containers[0].ImagePullUser = "puller"
	dep.Spec.Template.Spec.Containers[0].ImagePullPasswd = "hunter3-pull-password"
	e.expect(t, http.StatusCreated, "POST", "/v1/deployments", dep, nil)
	e.expect(t, http.StatusCreated, "POST", "/v1/configmaps", configMap("conf", "ns-a"), nil)
	e.expect(t, http.StatusCreated, "POST", "/v1/secrets", secret("db", "ns-a"), nil)
	e.expect(t, http.StatusAccepted, "POST", "/v1/notifies?callback="+url.QueryEscape(callbackWithCredentials), nil, nil)
	running = taskGroup("ns-a", "web", 0, "TASK_RUNNING")
	notice := registry.Notice{ID: "n1", Type: registry.NoticeExit, Namespace: "ns-a", App: "web", TaskGroupID: running.ID, State: "TASK_FAILED", Time: time.Now()}
	if err := e.reg.PutTaskGroup(ctx, &running, notice); err != nil {
		t.Fatal(err)
	}
	if err := e.reg.PutRollout(ctx, &registry.Rollout{Namespace: "ns-a", Name: "web", Status: rollout.Status{Phase: "Progressing"}}); err != nil {
		t.Fatal(err)
	}
	run := &registry.HookRun{Namespace: "ns-a", Name: "check", Spec: hook.RunSpec{TemplateName: "test", Metrics: []manifest.HookMetric{{
		Name: "web", Provider: manifest.HookProvider{Web: &manifest.WebProvider{URL: "http://checker",
			Headers: []manifest.HookHeader{{Key: "Authorization", Value: "Bearer hunter4-token"}}}}}}}}
	if err := e.reg.CreateHookRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	recordAgent(t, e, "agent-1")
	e.expect(t, http.StatusOK, "POST", "/v1/agents/agent-1/cordon", nil, nil)
	e.expect(t, http.StatusOK, "PUT", "/v1/engine", map[string]string{"mode": "maintenance"}, nil)
	e.expect(t, http.StatusOK, "PATCH", "/v1/engine/config", map[string]string{"dependsGCDelay": "1m"}, nil)
	e.expect(t, http.StatusAccepted, "POST", "/v1/apps/ns-a/web/scale", map[string]int{"instances": 2}, nil)
	if err := e.reg.DeleteTaskGroup(ctx, "ns-a", "web", 0); err != nil {
		t.Fatal(err)
	}
	e.expect(t, http.StatusAccepted, "DELETE", "/v1/deployments/ns-a/dep", nil, nil)
	recordAgent(t, e, "end")
	return created, running
}

// "An SSE client resumes without gaps". A client reads
// part of a transaction, disconnects, misses more changes, and resumes
// with Last-Event-ID: what it read in its two connections is exactly
// what a client connected all along read, each change once, in order.
func TestEventStreamResumesWithoutGaps(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	allAlong := e.subscribe(t, "")
	client := e.subscribe(t, "")
	idle := e.subscribe(t, "")
	start := idle.next() // the position message, before any change
	idle.close()

	createApp(t, e, process("web", "ns-a"))
	txn, err := e.store.Apply(ctx, taskGroupOp(t, taskGroup("ns-a", "web", 0, "TASK_STAGING")),
		taskGroupOp(t, taskGroup("ns-a", "web", 1, "TASK_STAGING")), taskGroupOp(t, taskGroup("ns-a", "web", 2, "TASK_STAGING")))
	if err != nil {
		t.Fatal(err)
	}
	first := []streamed{client.change(), client.change()}
	if first[1].Name != "web/0" || first[1].ID != fmt.Sprintf("%d.0", txn) {
		t.Fatalf("second event %s id %s, want instance web/0 at %d.0", first[1], first[1].ID, txn)
	}
	client.close()

	e.expect(t, http.StatusAccepted, "POST", "/v1/apps/ns-a/web/scale", map[string]int{"instances": 2}, nil)
	if err := e.reg.DeleteTaskGroup(ctx, "ns-a", "web", 2); err != nil {
		t.Fatal(err)
	}
	recordAgent(t, e, "end")

	want := allAlong.until(isAgent("end"))
	if len(want) != 7 {
		t.Fatalf("a client connected all along read %q, want 7 changes", describeAll(want))
	}
	increasing(t, want)
	resumed := e.subscribe(t, "", "Last-Event-ID", first[1].lastID)
	rest := resumed.until(isAgent("end"))
	if rest[0].ID != fmt.Sprintf("%d.1", txn) {
		t.Errorf("resumed at %s %s, want the rest of the transaction, %d.1", rest[0], rest[0].ID, txn)
	}
	same(t, "resumed with Last-Event-ID", append(first, rest...), want)

	// ?lastEventId= for clients that cannot set headers; the header,
	// which a reconnecting EventSource sends with the original URL, wins.
	byQuery := e.subscribe(t, "?lastEventId="+first[1].lastID)
	same(t, "resumed with ?lastEventId=", byQuery.until(isAgent("end")), rest)
	both := e.subscribe(t, "?lastEventId="+start.lastID, "Last-Event-ID", first[1].lastID)
	same(t, "resumed with both", both.until(isAgent("end")), rest)

	// A client that saw no change resumes from the position the stream
	// opened with.
	fromStart := e.subscribe(t, "", "Last-Event-ID", start.lastID)
	same(t, "resumed from the opening position", fromStart.until(isAgent("end")), want)
}

// same checks that two reads of the stream are the same changes.
func same(t *testing.T, what string, got, want []streamed) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %q\nwant %q", what, describeAll(got), describeAll(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.ID != w.ID || g.String() != w.String() || string(g.Object) != string(w.Object) {
			t.Fatalf("%s: event %d is %s %s %s\nwant %s %s %s", what, i, g.ID, g, g.Object, w.ID, w, w.Object)
		}
	}
}

// "a type filter"; and ?namespace=, and ?workload= in it (not
// another workload's instances, nor the same name's in another
// namespace). A deployment's deletion is still a deployment event,
// though its record is gone.
func TestEventStreamFilters(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	appsOfA := e.subscribe(t, "?type=instance,app&namespace=ns-a")
	webOfA := e.subscribe(t, "?type=instance,app,agent&namespace=ns-a&workload=web")
	agents := e.subscribe(t, "?type=agent")
	deployments := e.subscribe(t, "?type=deployment&type=agent")

	createApp(t, e, process("web", "ns-a"))
	createApp(t, e, process("web", "ns-b"))
	e.expect(t, http.StatusCreated, "POST", "/v1/deployments", deployment("dep", "ns-a"), nil)
	for _, tg := range []registry.TaskGroup{taskGroup("ns-a", "web", 0, "TASK_RUNNING"), taskGroup("ns-b", "web", 0, "TASK_RUNNING"),
		taskGroup("ns-a", "zz-end", 0, "TASK_RUNNING"), taskGroup("ns-a", "web", 1, "TASK_RUNNING")} {
		if err := e.reg.PutTaskGroup(ctx, &tg); err != nil {
			t.Fatal(err)
		}
	}
	recordAgent(t, e, "agent-1")
	e.expect(t, http.StatusAccepted, "DELETE", "/v1/deployments/ns-a/dep", nil, nil)
	createApp(t, e, process("zz-end", "ns-a"))
	recordAgent(t, e, "end")

	for _, tc := range []struct {
		stream *eventStream
		last   func(streamed) bool
		want   []string
	}{
		{appsOfA, func(c streamed) bool { return c.Name == "zz-end" },
			[]string{"app put ns-a/web", "instance put ns-a/web/0", "instance put ns-a/zz-end/0", "instance put ns-a/web/1", "app put ns-a/zz-end"}},
		{webOfA, func(c streamed) bool { return c.Name == "web/1" }, []string{"app put ns-a/web", "instance put ns-a/web/0", "instance put ns-a/web/1"}},
		{agents, isAgent("end"), []string{"agent put /agent-1", "agent put /end"}},
		{deployments, isAgent("end"), []string{"deployment put ns-a/dep", "agent put /agent-1",
			"deployment put ns-a/dep", "deployment delete ns-a/dep", "agent put /end"}},
	} {
		if got := describeAll(tc.stream.until(tc.last)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.stream.body.Request.URL.RawQuery, got, tc.want)
		}
	}
}

// Bad input is a 400 naming the parameter (and the valid
// values); nothing is streamed.
func TestEventStreamRejectsBadParameters(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		query   string
		headers []string
		want    []string
	}{
		{"?type=bogus", nil, []string{`type: unknown event type "bogus" (want one or more of agent, agentsettings, allocation, app, autoscaler, autoscalerstatus, daemonset, deployment, engine, hookrun, instance, notification, notifycallback, rollout)`}},
		{"?type=app,", nil, []string{`type: unknown event type "" (want one or more of agent, agentsettings, allocation, app, autoscaler, autoscalerstatus, daemonset, deployment, engine, hookrun, instance, notification, notifycallback, rollout)`}},
		{"?since=5&type=app", nil, []string{"since: unknown parameter (want lastEventId, namespace, type, workload)"}},
		{"?namespace=a%2Fb", nil, []string{`namespace: key segment "a/b": character '/' is not one of [A-Za-z0-9._-]: invalid argument`}},
		{"?namespace=a&namespace=b", nil, []string{`namespace: give one namespace, got ["a" "b"]`}},
		{"?workload=web", nil, []string{`workload: needs namespace: a workload is named in its namespace`}},
		{"?namespace=a&workload=web&workload=api", nil, []string{`workload: give one workload, got ["web" "api"]`}},
		{"?namespace=a&workload=a%2Fb", nil, []string{`workload: key segment "a/b": character '/' is not one of [A-Za-z0-9._-]: invalid argument`}},
		{"?lastEventId=12.x", nil, []string{`lastEventId: event ID "12.x": want <revision>.<index>, index a number ≥ 0: invalid argument`}},
		{"", []string{"Last-Event-ID", "abc"}, []string{`Last-Event-ID: event ID "abc": want <revision> or <revision>.<index>, revision a number ≥ 0: invalid argument`}},
		{"?type=x&foo=1", nil, []string{"foo: unknown parameter (want lastEventId, namespace, type, workload)"}}, // checked first
	} {
		got := errorOf(t, e.call(t, "GET", "/v1/events"+tc.query, nil, tc.headers...), http.StatusBadRequest, "InvalidArgument")
		if !reflect.DeepEqual(got.Details, tc.want) {
			t.Errorf("%s %q: details %q, want %q", tc.query, tc.headers, got.Details, tc.want)
		}
	}
}

// "If the revision was compacted, send an explicit event:
// reset (with the current revision, telling the client to re-list)
// instead of silently skipping"; likewise for an ID this store never
// reached. The stream goes on after the reset. Its own etcd: compaction
// drops the history of every test's keys.
func TestEventStreamResetsWhenItCannotReplay(t *testing.T) {
	etcd, err := store.StartEmbedded(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(etcd.Close)
	e := newEnvOn(t, etcd.Endpoints(), "/events-reset/", shared.Sealer)
	ctx := context.Background()
	first := e.subscribe(t, "")
	createApp(t, e, process("web", "ns-a"))
	seen := first.change()
	first.close()
	createApp(t, e, process("missed", "ns-a"))
	current, err := e.store.Revision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := clientv3.New(clientv3.Config{Endpoints: etcd.Endpoints(), DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Compact(ctx, current); err != nil {
		t.Fatal(err)
	}

	for name, lastID := range map[string]string{"compacted": seen.lastID, "beyond the store": strconv.FormatInt(current+1000, 10) + ".0"} {
		resumed := e.subscribe(t, "", "Last-Event-ID", lastID)
		resumed.next() // the position message
		reset := resumed.next()
		var data struct {
			ID       string
			Type     string
			Revision int64
			Message  string
		}
		if err := json.Unmarshal([]byte(reset.data), &data); err != nil || reset.typ != "reset" || data.Type != "reset" ||
			data.ID != reset.lastID || data.ID != strconv.FormatInt(data.Revision, 10) || data.Revision < current ||
			!strings.Contains(data.Message, "list the state again") {
			t.Fatalf("%s: after %s got %q %q id %q, want a reset at the current revision ≥ %d", name, lastID, reset.typ, reset.data, reset.lastID, current)
		}
		createApp(t, e, process("after-"+strings.ReplaceAll(name, " ", "-"), "ns-a"))
		if c := resumed.change(); c.Name != "after-"+strings.ReplaceAll(name, " ", "-") {
			t.Errorf("%s: after the reset came %s, want the next change", name, c)
		}
	}
}

// smallBuffers makes every accepted connection's send buffer small, so a
// client that does not read blocks the server's writes at once.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		err = c.(*net.TCPConn).SetWriteBuffer(4096)
	}
	return c, err
}

// "bounded memory per client": each client's buffer is
// bounded. A client that takes nothing while its buffer is full is
// disconnected with an overflow event carrying the last delivered ID,
// and resumes from it without a gap; a client that keeps up meanwhile
// gets every change, unhindered; a client catching up on more changes
// than its buffer holds is paced, not disconnected.
func TestEventStreamOverflowsAStalledClient(t *testing.T) {
	clock := clockwork.NewFakeClock()
	e := newEnv(t, func(c *api.Config) { c.Events.Buffer, c.Events.Clock = 32, clock })
	slowServer := httptest.NewUnstartedServer(e.server.Config.Handler)
	slowServer.Listener = smallBuffers{slowServer.Listener}
	slowServer.Start()
	t.Cleanup(slowServer.Close)
	smallReads := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err == nil {
			err = c.(*net.TCPConn).SetReadBuffer(4096)
		}
		return c, err
	}}}
	stalled := openEvents(t, smallReads, slowServer.URL+"/v1/events")
	fast := e.subscribe(t, "")

	const n = 200
	padding := strings.Repeat("x", 2000)
	for i := range n {
		tg := taskGroup("ns-a", "web", i, "TASK_RUNNING")
		tg.Message = padding
		if err := e.reg.PutTaskGroup(context.Background(), &tg); err != nil {
			t.Fatal(err)
		}
	}
	recordAgent(t, e, "end")
	all := fast.until(isAgent("end")) // while the stalled client reads nothing
	if len(all) != n+1 {
		t.Fatalf("the fast client read %d changes, want %d", len(all), n+1)
	}
	// Two heartbeat tickers and the stalled stream's wait for room.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := clock.BlockUntilContext(ctx, 3); err != nil {
		t.Fatal(err)
	}
	clock.Advance(api.DefaultEventStallTimeout)

	var got []streamed
	var overflow sseEvent
	for overflow.typ == "" {
		switch ev := stalled.next(); ev.typ {
		case "overflow":
			overflow = ev
		case "":
		default:
			var c streamed
			if err := json.Unmarshal([]byte(ev.data), &c); err != nil {
				t.Fatal(err)
			}
			got = append(got, c)
		}
	}
	stalled.ended()
	var data struct{ Type, LastEventID, Message string }
	if err := json.Unmarshal([]byte(overflow.data), &data); err != nil || data.Type != "overflow" || len(got) == 0 ||
		data.LastEventID != got[len(got)-1].ID || overflow.lastID != data.LastEventID || len(got) >= n {
		t.Fatalf("stalled client read %d changes then %q (last event ID %q); want fewer than %d, then overflow at the last one",
			len(got), overflow.data, overflow.lastID, n)
	}
	// It resumes, catching up on more than its buffer holds.
	resumed := e.subscribe(t, "", "Last-Event-ID", data.LastEventID)
	got = append(got, resumed.until(isAgent("end"))...)
	same(t, "stalled client, resumed after its overflow", got, all)
}

// "Heartbeat comment line (`: keepalive`) every 15 s".
func TestEventStreamHeartbeat(t *testing.T) {
	clock := clockwork.NewFakeClock()
	e := newEnv(t, func(c *api.Config) { c.Events.Clock = clock })
	resp, err := http.Get(e.url + "/v1/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if got := resp.Header.Get("Cache-Control"); got != "no-cache" {
		t.Errorf("Cache-Control %q", got)
	}
	lines := bufio.NewReader(resp.Body)
	readLine := func() string {
		line, err := lines.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		return line
	}
	if got := readLine() + readLine(); !strings.HasPrefix(got, "id: ") || !strings.HasSuffix(got, "\n\n") {
		t.Fatalf("stream opens with %q, want its position", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := clock.BlockUntilContext(ctx, 1); err != nil {
		t.Fatal(err)
	}
	clock.Advance(api.DefaultEventHeartbeat)
	if got := readLine() + readLine(); got != ": keepalive\n\n" {
		t.Errorf("after 15s idle: %q, want the keepalive comment", got)
	}
}

// "Works on followers (GET isn't redirected)"; and the stream
// ends when the server shuts down rather than holding it up.
func TestEventStreamOnAFollowerAndAtShutdown(t *testing.T) {
	e := newEnv(t, func(c *api.Config) { c.Leadership = fakeLeadership{url: "http://10.0.0.9:8080"} })
	events := e.subscribe(t, "?type=app")
	if _, err := e.reg.CreateApp(context.Background(), process("web", "ns-a")); err != nil {
		t.Fatal(err)
	}
	if c := events.change(); c.String() != "app put ns-a/web" {
		t.Errorf("follower streamed %s", c)
	}
	e.server.Config.Handler.(*api.Server).EndStreams()
	events.ended()
}
