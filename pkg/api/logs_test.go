package api_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/bcs-mesos/bcs-mesos/internal/testlog"
	"github.com/bcs-mesos/bcs-mesos/pkg/api"
	"github.com/bcs-mesos/bcs-mesos/pkg/devcluster"
	"github.com/bcs-mesos/bcs-mesos/pkg/devcluster/devclustertest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// logsEnv is the API over a real agent: a dev cluster agent whose files
// API serves the sandbox of executor ns-a_game_0_1, a task group of two
// tasks (web, sidecar) recorded as running there.
type logsEnv struct {
	*env
	cluster *devcluster.Cluster
	sandbox string // the executor's run directory
	group   *registry.TaskGroup
}

const (
	logsGroup = "ns-a_game_0_1"
	webTask   = "ns-a_game_0_1_0"
)

func newLogsEnv(t *testing.T) *logsEnv {
	t.Helper()
	c, err := devcluster.Start(context.Background(), devcluster.Config{
		ListenAddr: "127.0.0.1:0", AllocationInterval: devcluster.Duration(50 * time.Millisecond),
		ExecutorMode: devcluster.ExecutorProcess, WorkDir: t.TempDir(), Logger: testlog.New(t),
		Agents: []devcluster.AgentSpec{{Hostname: "logs-1"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	f := devclustertest.Subscribe(t, c.MasterURL(), "logs-test")
	o := f.AwaitOffer()
	sleep := "sleep 1000"
	ex := mesos.ExecutorInfo{Type: mesos.ExecutorInfo_CUSTOM, ExecutorID: mesos.ExecutorID{Value: logsGroup}, FrameworkID: &mesos.FrameworkID{Value: f.ID},
		Command:   &mesos.CommandInfo{Value: &sleep},
		Resources: []mesos.Resource{devclustertest.Scalar("cpus", 0.1), devclustertest.Scalar("mem", 32), devclustertest.Scalar("disk", 10)}}
	var tasks []mesos.TaskInfo
	for _, id := range []string{webTask, "ns-a_game_0_1_1"} {
		tasks = append(tasks, mesos.TaskInfo{Name: id, TaskID: mesos.TaskID{Value: id}, AgentID: o.AgentID,
			Resources: []mesos.Resource{devclustertest.Scalar("cpus", 0.1), devclustertest.Scalar("mem", 32)}})
	}
	f.Call(calls.Accept(calls.OfferOperations{calls.OpLaunchGroup(ex, tasks...)}.WithOffers(o.ID)))
	latest := filepath.Join(c.WorkDir(), "agents", o.AgentID.Value, "frameworks", f.ID, "executors", logsGroup, "runs", "latest")
	deadline := time.Now().Add(10 * time.Second)
	var sandbox string
	for sandbox == "" {
		sandbox, _ = filepath.EvalSymlinks(latest)
		if time.Now().After(deadline) {
			t.Fatalf("no sandbox %s", latest)
		}
		time.Sleep(20 * time.Millisecond)
	}
	endpoint, err := c.AgentEndpoint(o.AgentID.Value)
	if err != nil {
		t.Fatal(err)
	}

	e := newEnv(t, func(cfg *api.Config) { cfg.Logs.PollInterval = 20 * time.Millisecond })
	ctx := context.Background()
	if err := e.reg.SetFrameworkID(ctx, f.ID); err != nil {
		t.Fatal(err)
	}
	if err := e.reg.RecordAgent(ctx, o.AgentID.Value, "logs-1", endpoint, nil); err != nil {
		t.Fatal(err)
	}
	g := &registry.TaskGroup{ID: logsGroup, Namespace: "ns-a", App: "game", Index: 0, State: "TASK_RUNNING", Phase: "Running",
		AgentID: o.AgentID.Value, Host: "logs-1", Launches: 1,
		Tasks: []registry.TaskRecord{{ID: webTask, Name: "web", State: "TASK_RUNNING"}, {ID: "ns-a_game_0_1_1", Name: "sidecar", State: "TASK_RUNNING"}}}
	if err := e.reg.PutTaskGroup(ctx, g); err != nil {
		t.Fatal(err)
	}
	return &logsEnv{env: e, cluster: c, sandbox: sandbox, group: g}
}

// write appends text to a file of the sandbox, as the task would.
func (e *logsEnv) write(t *testing.T, name, text string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(e.sandbox, name), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

// GET /v1/taskgroups/{id}/logs reads a task's stdout or stderr from its
// sandbox through the agent's files API: the task by its container or
// process name or its task ID, the last tail bytes (default 1 MiB, read
// in as many reads of the agent as it takes), as text/plain.
func TestTaskLogs(t *testing.T) {
	e := newLogsEnv(t)
	e.write(t, webTask+".stdout", "line 1\nline 2\n")
	e.write(t, webTask+".stderr", "warning\n")
	big := strings.Repeat("0123456789abcdef", 1<<14) // 256 KiB: several reads of 64 KiB
	e.write(t, "ns-a_game_0_1_1.stdout", big)
	base := "/v1/taskgroups/" + logsGroup + "/logs"
	for _, c := range []struct {
		name, query, want string
	}{
		{"by name", "?task=web", "line 1\nline 2\n"},
		{"by task ID", "?task=" + webTask, "line 1\nline 2\n"},
		{"stdout named", "?task=web&stream=stdout", "line 1\nline 2\n"},
		{"stderr", "?task=web&stream=stderr", "warning\n"},
		{"tail", "?task=web&tail=7", "line 2\n"},
		{"tail 0", "?task=web&tail=0", ""},
		{"tail past the start", "?task=web&tail=1000", "line 1\nline 2\n"},
		{"follow=false", "?task=web&follow=false", "line 1\nline 2\n"},
		{"many reads", "?task=sidecar", big},
		{"tail of many reads", "?task=sidecar&tail=100000", big[len(big)-100000:]},
	} {
		r := e.call(t, http.MethodGet, base+c.query, nil)
		if r.status != http.StatusOK || string(r.body) != c.want || r.header.Get("Content-Type") != "text/plain; charset=utf-8" {
			t.Errorf("%s: GET %s = %d %q %.100q, want 200 text/plain %.100q", c.name, c.query, r.status, r.header.Get("Content-Type"), r.body, c.want)
		}
	}
	// The default tail is 1 MiB.
	e.write(t, webTask+".stdout", strings.Repeat("x", api.DefaultLogTail))
	if r := e.call(t, http.MethodGet, base+"?task=web", nil); r.status != http.StatusOK || len(r.body) != api.DefaultLogTail || r.body[0] != 'x' {
		t.Errorf("default tail: %d, %d bytes starting %q; want the last %d", r.status, len(r.body), r.body[:min(len(r.body), 10)], api.DefaultLogTail)
	}
}

// Bad requests are 400s naming the parameter, unknown task groups, tasks
// and files 404s naming what there is, and an agent that cannot be
// reached a 502 naming it — never a 500.
func TestTaskLogsErrors(t *testing.T) {
	e := newLogsEnv(t)
	e.write(t, webTask+".stdout", "hello\n")
	base := "/v1/taskgroups/" + logsGroup + "/logs"
	for _, c := range []struct {
		name, path string
		status     int
		code, want string
	}{
		{"which task", base, 400, "InvalidArgument", "query parameter task: task group ns-a_game_0_1 has 2 tasks, name one of web, sidecar"},
		{"no such task", base + "?task=db", 404, "NotFound", `task group ns-a_game_0_1 has no task "db" (it has web, sidecar)`},
		{"no such task group", "/v1/taskgroups/ns-a_game_0_9/logs?task=web", 404, "NotFound", `task group "ns-a_game_0_9"`},
		{"stream", base + "?task=web&stream=stdin", 400, "InvalidArgument", `stream: "stdin": want stdout or stderr`},
		{"tail negative", base + "?task=web&tail=-1", 400, "InvalidArgument", "tail: \"-1\": want a number of bytes from 0 to 16777216"},
		{"tail not a number", base + "?task=web&tail=lots", 400, "InvalidArgument", "tail: \"lots\""},
		{"tail too large", base + "?task=web&tail=16777217", 400, "InvalidArgument", "tail: \"16777217\""},
		{"follow", base + "?task=web&follow=maybe", 400, "InvalidArgument", `follow: "maybe": want true or false`},
		{"unknown parameter", base + "?task=web&container=web", 400, "InvalidArgument", "container: unknown parameter"},
		{"no file", base + "?task=sidecar", 404, "NotFound", "no stdout of task ns-a_game_0_1_1 on agent logs-1"},
	} {
		r := e.call(t, http.MethodGet, c.path, nil)
		got := errorOf(t, r, c.status, c.code)
		if text := got.Message + " " + strings.Join(got.Details, " "); !strings.Contains(text, c.want) {
			t.Errorf("%s: GET %s: %q, want it to say %q", c.name, c.path, text, c.want)
		}
	}

	// The agent's address unknown, then an agent that does not answer.
	ctx := context.Background()
	agents, _ := e.reg.ListAgents(ctx)
	if err := e.reg.RecordAgent(ctx, "other-agent", "logs-2", "", nil); err != nil {
		t.Fatal(err)
	}
	moved := *e.group
	moved.AgentID, moved.Host = "other-agent", "logs-2"
	if err := e.reg.PutTaskGroup(ctx, &moved); err != nil {
		t.Fatal(err)
	}
	got := errorOf(t, e.call(t, http.MethodGet, base+"?task=web", nil), http.StatusBadGateway, "BadGateway")
	if !strings.Contains(got.Message, "agent logs-2 (other-agent) cannot be reached: its address is not known") {
		t.Errorf("unknown address: %q", got.Message)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := ln.Addr().String()
	ln.Close()
	if err := e.reg.RecordAgent(ctx, agents[0].ID, "logs-1", gone, nil); err != nil {
		t.Fatal(err)
	}
	if err := e.reg.PutTaskGroup(ctx, e.group); err != nil {
		t.Fatal(err)
	}
	got = errorOf(t, e.call(t, http.MethodGet, base+"?task=web", nil), http.StatusBadGateway, "BadGateway")
	if !strings.Contains(got.Message, "agent logs-1 cannot be reached") || !strings.Contains(got.Message, gone) {
		t.Errorf("unreachable agent: %q", got.Message)
	}
}

// followed is a GET ?follow=true read as it comes.
type followed struct {
	t      *testing.T
	cancel context.CancelFunc
	text   chan string
	done   chan error
}

func follow(t *testing.T, e *logsEnv, query string) *followed {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.url+"/v1/taskgroups/"+logsGroup+"/logs"+query, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Cache-Control") != "no-cache" {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("follow: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	f := &followed{t: t, cancel: cancel, text: make(chan string, 100), done: make(chan error, 1)}
	go func() {
		defer resp.Body.Close()
		r := bufio.NewReader(resp.Body)
		for {
			line, err := r.ReadString('\n')
			if line != "" {
				f.text <- line
			}
			if err != nil {
				if err == io.EOF {
					err = nil
				}
				f.done <- err
				return
			}
		}
	}()
	return f
}

// next waits for the next line.
func (f *followed) next(want string) {
	f.t.Helper()
	select {
	case got := <-f.text:
		if got != want {
			f.t.Errorf("followed %q, want %q", got, want)
		}
	case err := <-f.done:
		f.t.Fatalf("the stream ended (%v) before %q", err, want)
	case <-time.After(10 * time.Second):
		f.t.Fatalf("nothing followed; want %q", want)
	}
}

// ended waits for the stream to end.
func (f *followed) ended(what string) {
	f.t.Helper()
	select {
	case err := <-f.done:
		if err != nil {
			f.t.Errorf("%s: the stream ended with %v", what, err)
		}
	case got := <-f.text:
		f.t.Fatalf("%s: followed %q, want the end", what, got)
	case <-time.After(10 * time.Second):
		f.t.Fatalf("%s: the stream did not end", what)
	}
}

// follow=true sends the tail, then each new piece as it is written; the
// stream ends once the task ended and its file was read to the end, when
// the server shuts down, and when the client leaves.
func TestTaskLogsFollow(t *testing.T) {
	e := newLogsEnv(t)
	e.write(t, webTask+".stdout", "old\nrecent\n")
	f := follow(t, e, "?task=web&follow=true&tail=7")
	f.next("recent\n")
	e.write(t, webTask+".stdout", "new line\n")
	f.next("new line\n")
	e.write(t, webTask+".stdout", "another\n")
	f.next("another\n")

	// The task finishes; what it wrote last still comes, then the end.
	done := *e.group
	done.State, done.Phase = "TASK_FINISHED", "Finished"
	done.Tasks = []registry.TaskRecord{{ID: webTask, Name: "web", State: "TASK_FINISHED"}, {ID: "ns-a_game_0_1_1", Name: "sidecar", State: "TASK_FINISHED"}}
	e.write(t, webTask+".stdout", "last words\n")
	if err := e.reg.PutTaskGroup(context.Background(), &done); err != nil {
		t.Fatal(err)
	}
	f.next("last words\n")
	f.ended("the task finished")

	// An ended launch's logs are still read while its record is known.
	if r := e.call(t, http.MethodGet, "/v1/taskgroups/"+logsGroup+"/logs?task=web&follow=true&tail=11", nil); r.status != http.StatusOK || string(r.body) != "last words\n" {
		t.Errorf("follow of an ended task: %d %q, want the tail and the end", r.status, r.body)
	}

	// A running task's stream ends when the server shuts down.
	if err := e.reg.PutTaskGroup(context.Background(), e.group); err != nil {
		t.Fatal(err)
	}
	e.write(t, webTask+".stderr", "")
	f = follow(t, e, "?task=web&follow=true&tail=0&stream=stderr")
	e.write(t, webTask+".stderr", "err 1\n")
	f.next("err 1\n")
	e.server.Config.Handler.(*api.Server).EndStreams()
	f.ended("the server shut down")
}

// A client that leaves ends its stream: the server closes (it waits for
// every handler) at once.
func TestTaskLogsFollowClientLeaves(t *testing.T) {
	e := newLogsEnv(t)
	e.write(t, webTask+".stdout", "hello\n")
	f := follow(t, e, "?task=web&follow=true")
	f.next("hello\n")
	f.cancel()
	closed := make(chan struct{})
	go func() {
		e.server.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the server still serves the stream of a client that left")
	}
}

// Relaunched, an instance's record keeps its previous launch: that
// launch's logs are still read by its task group ID (its sandbox stays on
// the agent until collected), and following them ends at their end.
func TestTaskLogsOfThePreviousLaunch(t *testing.T) {
	e := newLogsEnv(t)
	e.write(t, webTask+".stdout", "before the restart\n")
	next := *e.group
	next.ID, next.Launches = "ns-a_game_0_2", 2
	next.Tasks = []registry.TaskRecord{{ID: "ns-a_game_0_2_0", Name: "web", State: "TASK_STAGING"}, {ID: "ns-a_game_0_2_1", Name: "sidecar", State: "TASK_STAGING"}}
	next.Previous = &registry.PreviousLaunch{ID: logsGroup, AgentID: e.group.AgentID, Host: e.group.Host, Tasks: e.group.Tasks}
	if err := e.reg.PutTaskGroup(context.Background(), &next); err != nil {
		t.Fatal(err)
	}
	r := e.call(t, http.MethodGet, "/v1/taskgroups/"+logsGroup+"/logs?task=web&follow=true", nil)
	if r.status != http.StatusOK || string(r.body) != "before the restart\n" {
		t.Errorf("the previous launch's logs: %d %q", r.status, r.body)
	}
	// The new launch has written nothing yet.
	got := errorOf(t, e.call(t, http.MethodGet, "/v1/taskgroups/ns-a_game_0_2/logs?task=web", nil), http.StatusNotFound, "NotFound")
	if !strings.Contains(got.Message, "no stdout of task ns-a_game_0_2_0") {
		t.Errorf("the new launch's logs: %q", got.Message)
	}
}
