package api_test

import (
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/api"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

const messagedGroup = "ns-a_game_0_1"

// POST /v1/taskgroups/{id}/exec|signal|env|files|resources: each body
// becomes its executor message (proto/message.go) with the task named and
// the timeout, and the executor's answer is the reply.
func TestTaskGroupMessagesReachTheExecutor(t *testing.T) {
	op := &fakeOperator{answer: proto.MessageResult{TaskID: messagedGroup + "_0", OK: true, Output: "hi\n"}}
	e := newEnv(t, func(c *api.Config) { c.Operator = op })
	for _, c := range []struct {
		route, body string
		task        string
		want        proto.Message
	}{
		{"exec", `{"task":"gamesvr","command":["sh","-c","echo hi"],"timeout":"30s"}`, "gamesvr",
			proto.Message{Type: proto.MessageExec, Command: []string{"sh", "-c", "echo hi"}, Timeout: 30 * time.Second}},
		// Without a timeout: the executors' own default, one minute.
		{"exec", `{"command":["true"]}`, "", proto.Message{Type: proto.MessageExec, Command: []string{"true"}, Timeout: time.Minute}},
		{"exec", `{"command":["env"],"env":[{"name":"A","value":"1"}],"user":"nobody","workingDir":"/tmp","privileged":true}`, "",
			proto.Message{Type: proto.MessageExec, Command: []string{"env"}, Env: []proto.EnvVar{{Name: "A", Value: "1"}},
				User: "nobody", WorkingDir: "/tmp", Privileged: true, Timeout: time.Minute}},
		{"signal", `{"task":"sidecar","signal":"SIGUSR1"}`, "sidecar", proto.Message{Type: proto.MessageSignal, Signal: int(syscall.SIGUSR1)}},
		{"signal", `{"signal":"hup"}`, "", proto.Message{Type: proto.MessageSignal, Signal: int(syscall.SIGHUP)}},
		{"signal", `{"signal":9}`, "", proto.Message{Type: proto.MessageSignal, Signal: 9}},
		{"signal", `{"signal":"15"}`, "", proto.Message{Type: proto.MessageSignal, Signal: 15}},
		{"env", `{"task":"` + messagedGroup + `_0","env":[{"name":"A","value":"1"},{"name":"B","value":""}]}`, messagedGroup + "_0",
			proto.Message{Type: proto.MessageUpdateEnv, Env: []proto.EnvVar{{Name: "A", Value: "1"}, {Name: "B"}}}},
		{"files", `{"file":{"path":"/etc/app/conf","content":"djIK","readOnly":true,"user":"nobody"}}`, "",
			proto.Message{Type: proto.MessageUpdateFile, File: &proto.File{Path: "/etc/app/conf", Content: []byte("v2\n"), ReadOnly: true, User: "nobody"}}},
		{"resources", `{"resources":{"cpus":0.5,"memMB":64,"cpuLimit":1,"memLimitMB":96}}`, "",
			proto.Message{Type: proto.MessageUpdateResources, Resources: &proto.Resources{CPUs: 0.5, MemMB: 64, CPULimit: 1, MemLimitMB: 96}}},
	} {
		op.messages = nil
		var reply api.MessageReply
		e.expect(t, http.StatusOK, "POST", "/v1/taskgroups/"+messagedGroup+"/"+c.route, c.body, &reply)
		want := c.want
		if want.Timeout == 0 {
			want.Timeout = time.Minute
		}
		if len(op.messages) != 1 || !reflect.DeepEqual(op.messages[0], sentMessage{messagedGroup, c.task, want}) {
			t.Errorf("%s %s: the operator got %+v, want %+v", c.route, c.body, op.messages, sentMessage{messagedGroup, c.task, want})
		}
		wantReply := api.MessageReply{TaskGroupID: messagedGroup, Task: messagedGroup + "_0", Type: want.Type, OK: true, Output: "hi\n"}
		if reply != wantReply {
			t.Errorf("%s: reply %+v, want %+v", c.route, reply, wantReply)
		}
	}

	// A failed command is still the executor's answer: 200, ok false.
	op.answer = proto.MessageResult{TaskID: messagedGroup + "_0", Output: "no\n", ExitCode: 3, Truncated: true}
	var reply api.MessageReply
	e.expect(t, http.StatusOK, "POST", "/v1/taskgroups/"+messagedGroup+"/exec", `{"command":["false"]}`, &reply)
	if reply.OK || reply.ExitCode != 3 || reply.Output != "no\n" || !reply.Truncated {
		t.Errorf("a failed command answered %+v", reply)
	}
}

// A bad body is a 400 naming the field, and nothing reaches the executor.
func TestTaskGroupMessagesRefuseBadBodies(t *testing.T) {
	op := &fakeOperator{}
	e := newEnv(t, func(c *api.Config) { c.Operator = op })
	for _, c := range []struct{ route, body, detail string }{
		{"exec", `{"command":["true"],"cmd":["x"]}`, "cmd: unknown field"},
		{"exec", `{"task":"a"}`, "command: required"},
		{"exec", `{"command":[]}`, "command: required"},
		{"exec", `{"command":"echo hi"}`, "command: want an array, got a string"},
		{"exec", `{"command":["true"],"timeout":"soon"}`, `timeout: want a duration such as "30s" or "2m", got "soon"`},
		{"exec", `{"command":["true"],"timeout":"-1s"}`, `timeout: want a duration such as "30s" or "2m", got "-1s"`},
		{"exec", `{"command":["true"],"timeout":"0s"}`, "timeout: 0s: want more than 0s and at most 10m0s"},
		{"exec", `{"command":["true"],"timeout":"11m"}`, "timeout: 11m0s: want more than 0s and at most 10m0s"},
		{"signal", `{}`, "signal: required"},
		{"signal", `{"signal":"SIGNOPE"}`, `signal: unknown signal "SIGNOPE" (want a name such as SIGHUP, or a number)`},
		{"signal", `{"signal":0}`, `signal: unknown signal "0" (want a name such as SIGHUP, or a number)`},
		{"signal", `{"signal":true}`, `signal: want a signal name such as "SIGHUP", or a number`},
		{"env", `{"env":[]}`, "env: required"},
		{"env", `{"env":[{"name":"A=B","value":"secret"}]}`, `env[0].name: "A=B": want a name without '='`},
		{"env", `{"env":[{"name":"A","vaule":"1"}]}`, "env[0].vaule: unknown field"},
		{"files", `{}`, "file: required"},
		{"files", `{"file":{"path":"etc/conf","content":""}}`, `file.path: "etc/conf": want an absolute file path`},
		{"files", `{"file":{"path":"/etc/conf","content":"not base64!"}}`, "file.content: want base64: illegal base64 data at input byte 3"},
		{"resources", `{}`, "resources: required"},
		{"resources", `{"resources":{"cpus":-1}}`, "resources.cpus: -1: must be ≥ 0"},
		{"resources", `{"resources":{"memMB":64,"pinCPUs":true}}`, "resources.pinCPUs: cannot change in place"},
	} {
		got := errorOf(t, e.call(t, "POST", "/v1/taskgroups/"+messagedGroup+"/"+c.route, c.body), http.StatusBadRequest, "InvalidArgument")
		if !slices.Contains(got.Details, c.detail) {
			t.Errorf("%s %s: details %q, want %q", c.route, c.body, got.Details, c.detail)
		}
	}
	if len(op.messages) != 0 {
		t.Errorf("bad bodies reached the executor: %+v", op.messages)
	}
}

// The scheduler's verdicts: 404 for an unknown task group or task, 409
// when it does not run, 504 when the executor did not answer in time,
// 503 without a scheduler in this replica; a follower redirects to the
// leader like every write.
func TestTaskGroupMessageErrors(t *testing.T) {
	op := &fakeOperator{}
	e := newEnv(t, func(c *api.Config) { c.Operator = op })
	for _, c := range []struct {
		err    error
		status int
		code   string
	}{
		{fmt.Errorf("task group %q: %w", messagedGroup, errdefs.ErrNotFound), http.StatusNotFound, "NotFound"},
		{fmt.Errorf(`task group %s has no task "web": %w`, messagedGroup, errdefs.ErrNotFound), http.StatusNotFound, "NotFound"},
		{fmt.Errorf("task group %s has 2 tasks, name one of main, sidecar: %w", messagedGroup, errdefs.ErrInvalidArgument), http.StatusBadRequest, "InvalidArgument"},
		{fmt.Errorf("task group %q is Pending, not running: %w", messagedGroup, errdefs.ErrConflict), http.StatusConflict, "Conflict"},
		{fmt.Errorf("no answer from the executor of task group %q within 35s: %w", messagedGroup, errdefs.ErrTimeout), http.StatusGatewayTimeout, "Timeout"},
		{fmt.Errorf("this replica does not lead: %w", errdefs.ErrUnavailable), http.StatusServiceUnavailable, "Unavailable"},
	} {
		op.err = c.err
		got := errorOf(t, e.call(t, "POST", "/v1/taskgroups/"+messagedGroup+"/exec", `{"command":["true"]}`), c.status, c.code)
		if got.Message != c.err.Error() {
			t.Errorf("%d says %q, want %q", c.status, got.Message, c.err.Error())
		}
	}

	none := newEnv(t)
	errorOf(t, none.call(t, "POST", "/v1/taskgroups/"+messagedGroup+"/signal", `{"signal":"HUP"}`), http.StatusServiceUnavailable, "Unavailable")

	follower := newEnv(t, func(c *api.Config) {
		c.Operator, c.Leadership = op, fakeLeadership{url: "http://10.0.0.9:8080"}
	})
	op.messages = nil
	path := "/v1/taskgroups/" + messagedGroup + "/exec"
	if r := follower.call(t, "POST", path, `{"command":["true"]}`); r.status != http.StatusTemporaryRedirect ||
		r.header.Get("Location") != "http://10.0.0.9:8080"+path || len(op.messages) != 0 {
		t.Errorf("exec on a follower = %d Location %q, sent %d; want 307 to the leader", r.status, r.header.Get("Location"), len(op.messages))
	}
}

// The original's kind command (its command.json) runs exec in
// every task of the target's running instances, or of the task groups it
// names; instances not running are answered without asking; a bad
// manifest, a task group of another application and a target of another
// kind change nothing and reach no executor.
func TestCommandsRunInEveryTask(t *testing.T) {
	op := &fakeOperator{answer: proto.MessageResult{OK: true, Output: "hi\n"}}
	e := newEnv(t, func(c *api.Config) { c.Operator = op })
	createApp(t, e, application("web", "ns-a"))
	running := []registry.TaskRecord{{ID: "ns-a_web_0_1_0", State: "TASK_RUNNING"}, {ID: "ns-a_web_0_1_1", State: "TASK_RUNNING"}}
	putTaskGroup(t, e, registry.TaskGroup{ID: "ns-a_web_0_1", Namespace: "ns-a", App: "web", Index: 0, State: "TASK_RUNNING", Tasks: running})
	putTaskGroup(t, e, registry.TaskGroup{ID: "ns-a_web_1_1", Namespace: "ns-a", App: "web", Index: 1, State: "TASK_STAGING",
		Tasks: []registry.TaskRecord{{ID: "ns-a_web_1_1_0", State: "TASK_STAGING"}}})
	command := func(kind, taskgroups, env string) string {
		return readReference(t, "command.json", `"Deployment | Application"`, `"`+kind+`"`, `"deployment-name"`, `"web"`,
			`"defaultGroup"`, `"ns-a"`, `"taskgroups":[]`, `"taskgroups":`+taskgroups, `"env":[]`, `"env":`+env)
	}

	var v api.CommandView
	e.expect(t, http.StatusOK, "POST", "/v1/commands", command("Application", `[]`, `["X=1","EMPTY="]`), &v)
	want := proto.Message{Type: proto.MessageExec, Command: []string{"/bin/bash", "-c", "ps -ef |grep game"},
		Env: []proto.EnvVar{{Name: "X", Value: "1"}, {Name: "EMPTY"}}, User: "root", Timeout: time.Minute}
	if len(op.messages) != 2 || !reflect.DeepEqual(op.messages[0].msg, want) || op.messages[0].taskGroupID != "ns-a_web_0_1" {
		t.Errorf("the executor got %+v, want %+v twice", op.messages, want)
	}
	if len(v.Results) != 3 || v.Results[0].Task != "ns-a_web_0_1_0" || !v.Results[0].OK || v.Results[0].Output != "hi\n" ||
		v.Results[1].Task != "ns-a_web_0_1_1" || v.Results[2].Instance != 1 || v.Results[2].OK || v.Results[2].Error != "not running (TASK_STAGING)" {
		t.Errorf("results %+v", v.Results)
	}

	op.messages = nil
	e.expect(t, http.StatusOK, "POST", "/v1/commands", command("Application", `["ns-a_web_1_1"]`, `[]`), &v)
	if len(op.messages) != 0 || len(v.Results) != 1 || v.Results[0].TaskGroupID != "ns-a_web_1_1" {
		t.Errorf("a command to a staging group: sent %+v, results %+v", op.messages, v.Results)
	}
	for _, c := range []struct {
		body   string
		status int
		detail string
	}{
		{command("Application", `["ns-a_other_0_1"]`, `[]`), http.StatusBadRequest, `spec.taskgroups[0]: "ns-a_other_0_1" is not a task group of the target`},
		{command("Application", `[]`, `["NOVALUE"]`), http.StatusBadRequest, `spec.env[0]: want NAME=value, got "NOVALUE"`},
		{command("Pod", `[]`, `[]`), http.StatusBadRequest, `spec.commandTargetRef.kind: want Deployment or Application, got "Pod"`},
		{command("Deployment", `[]`, `[]`), http.StatusNotFound, ""},
	} {
		r := e.call(t, "POST", "/v1/commands", c.body)
		if c.detail == "" {
			errorOf(t, r, c.status, "NotFound")
			continue
		}
		if got := errorOf(t, r, c.status, "InvalidArgument"); !slices.Contains(got.Details, c.detail) {
			t.Errorf("%s: details %q, want %q", c.body, got.Details, c.detail)
		}
	}
	if len(op.messages) != 0 {
		t.Errorf("refused commands reached the executor: %+v", op.messages)
	}
}
