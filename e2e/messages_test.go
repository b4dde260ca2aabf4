package e2e_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// messageReply is the answer of POST /v1/taskgroups/{id}/{message}.
type messageReply struct {
	TaskGroupID string `json:"taskGroupID"`
	Task        string `json:"task"`
	Type        string `json:"type"`
	OK          bool   `json:"ok"`
	Output      string `json:"output"`
	Truncated   bool   `json:"truncated"`
	ExitCode    int    `json:"exitCode"`
	Error       string `json:"error"`
}

// message sends an executor message through the API; it fails the test
// unless the answer has status want.
func (s *system) message(taskGroupID, route string, want int, body string) messageReply {
	s.t.Helper()
	code, data := s.call("POST", "/v1/taskgroups/"+taskGroupID+"/"+route, []byte(body))
	if code != want {
		s.t.Fatalf("%s %s: %d %s, want %d", route, body, code, data, want)
	}
	var r messageReply
	_ = json.Unmarshal(data, &r)
	return r
}

// commandResult is one task's answer to POST /v1/commands.
type commandResult struct {
	messageReply
	Instance int `json:"instance"`
}

// command runs the original's kind command (the shape of its
// command.json) through the API and returns each task's answer; it fails
// the test unless the answer has status want.
func (s *system) command(want int, kind, name, command, env, user string) []commandResult {
	s.t.Helper()
	body := `{"apiVersion":"v4","kind":"Command","spec":{"commandTargetRef":{"kind":"` + kind + `","name":"` + name +
		`","namespace":"demo"},"taskgroups":[],"command":` + command + `,"env":` + env + `,"user":"` + user +
		`","workingDir":"","privileged":false,"reserveTime":60}}`
	code, data := s.call("POST", "/v1/commands", []byte(body))
	if code != want {
		s.t.Fatalf("command %s: %d %s, want %d", body, code, data, want)
	}
	var v struct {
		Results []commandResult `json:"results"`
	}
	_ = json.Unmarshal(data, &v)
	return v.Results
}

// taskView is a task of an instance view with what its executor reports.
type taskView struct {
	Name      string `json:"name"`
	ID        string `json:"id"`
	State     string `json:"state"`
	Message   string `json:"message"`
	Container *struct {
		ID        string `json:"id"`
		Pid       int    `json:"pid"`
		Status    string `json:"status"`
		ExitCode  *int   `json:"exitCode"`
		IPAddress string `json:"ipAddress"`
	} `json:"container"`
	Process *struct {
		Pid      int            `json:"pid"`
		ProcName string         `json:"procName"`
		WorkPath string         `json:"workPath"`
		Ports    map[string]int `json:"ports"`
	} `json:"process"`
}

// tasks returns the tasks of instance 0 of an application.
func (s *system) tasks(ns, name string) []taskView {
	s.t.Helper()
	_, body := s.call("GET", "/v1/apps/"+ns+"/"+name, nil)
	var v struct {
		Status struct {
			Instances []struct {
				Tasks []taskView `json:"tasks"`
			} `json:"instances"`
		} `json:"status"`
	}
	if err := json.Unmarshal(body, &v); err != nil || len(v.Status.Instances) == 0 {
		s.t.Fatalf("instances of %s/%s: %v %s", ns, name, err, body)
	}
	return v.Status.Instances[0].Tasks
}

// Executor messages through REST against the process executor (real
// bcs-process-executor, the example gamesvr): exec answers its output and
// exit code (a failing command its code, a chatty one its first 64 KiB),
// SIGHUP reaches gamesvr (it counts reloads), env reaches the next start,
// resources the cgroup; update-file is refused by the executor, which says
// so. The instance shows the process's pid.
func TestProcessExecutorMessages(t *testing.T) {
	// Any user but root passes the admission policy: the executor itself
	// keeps a process's commands to its own user.
	s := startSystem(t, admissionPolicy(t, map[string]any{"default": map[string]any{"users": []string{"*"}}}))
	m := s.manifest("process.json", func(m map[string]any) {
		m["metadata"].(map[string]any)["name"] = "msgs"
		m["spec"].(map[string]any)["instance"] = 1
	})
	if code, body := s.call("POST", "/v1/apps", m); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	inst := s.running("demo", "msgs", 1)[0]
	id, taskID := inst.TaskGroupID, inst.TaskGroupID+"_0"
	pidFile := s.runPath(inst.Host, "demo.msgs.0", "gamesvr.pid")

	tasks := s.tasks("demo", "msgs")
	if len(tasks) != 1 || tasks[0].Process == nil || tasks[0].Process.Pid != pidOf(t, pidFile) || tasks[0].Process.ProcName != "gamesvr" ||
		tasks[0].Process.Ports["http"] != int(inst.Ports["http"]) || tasks[0].Name != "gamesvr" || tasks[0].ID != taskID {
		t.Errorf("tasks %+v, want gamesvr with pid %d", tasks, pidOf(t, pidFile))
	}

	r := s.message(id, "exec", 200, `{"command":["sh","-c","echo hi; echo instance $instanceid"],"timeout":"30s"}`)
	if !r.OK || r.Output != "hi\ninstance 0\n" || r.ExitCode != 0 || r.Task != taskID || r.TaskGroupID != id || r.Type != "exec" {
		t.Errorf("exec: %+v", r)
	}
	r = s.message(id, "exec", 200, `{"task":"gamesvr","command":["sh","-c","echo no >&2; exit 3"]}`)
	if r.OK || r.ExitCode != 3 || r.Output != "no\n" {
		t.Errorf("failing exec: %+v", r)
	}
	r = s.message(id, "exec", 200, `{"command":["sh","-c","yes | head -c 100000"]}`)
	if !r.OK || !r.Truncated || len(r.Output) != 64<<10 {
		t.Errorf("chatty exec: ok %v truncated %v, %d bytes", r.OK, r.Truncated, len(r.Output))
	}
	// The executor stops a command at the timeout and says so.
	r = s.message(id, "exec", 200, `{"command":["sleep","30"],"timeout":"1s"}`)
	if r.OK || !strings.Contains(r.Error, "timed out") {
		t.Errorf("exec past its timeout: %+v", r)
	}

	r = s.message(id, "signal", 200, `{"signal":"SIGHUP"}`)
	if !r.OK || r.Type != "signal" {
		t.Errorf("signal: %+v", r)
	}
	status := fmt.Sprintf("http://127.0.0.1:%d/status", inst.Ports["http"])
	s.eventually("gamesvr got SIGHUP", func() (bool, string) {
		_, body := get(status)
		return strings.Contains(body, "reloads 1"), body
	})

	if r = s.message(id, "env", 200, `{"env":[{"name":"BUILD","value":"b42"}]}`); !r.OK {
		t.Errorf("env: %+v", r)
	}
	if code, body := s.call("POST", "/v1/taskgroups/"+id+"/restart", nil); code != 202 {
		t.Fatalf("restart: %d %s", code, body)
	}
	version := fmt.Sprintf("http://127.0.0.1:%d/version", inst.Ports["http"])
	s.eventually("gamesvr restarted with BUILD", func() (bool, string) {
		_, body := get(version)
		return strings.Contains(body, "build=b42"), body
	})
	s.eventually("the instance showing the new pid", func() (bool, string) {
		tasks := s.tasks("demo", "msgs")
		return tasks[0].Process != nil && tasks[0].Process.Pid == pidOf(t, pidFile), fmt.Sprintf("%+v", tasks[0].Process)
	})

	if r = s.message(id, "resources", 200, `{"resources":{"cpuLimit":0.5,"memLimitMB":100}}`); !r.OK {
		t.Errorf("resources: %+v", r)
	}
	executorCgroups := matching("/sys/fs/cgroup/memory/bcs-process", id+"@") // the executor's, holding its tasks'
	if len(executorCgroups) != 1 {
		t.Fatalf("cgroups of %s: %v", id, executorCgroups)
	}
	if limit, _ := os.ReadFile(filepath.Join(executorCgroups[0], taskID, "memory.limit_in_bytes")); strings.TrimSpace(string(limit)) != strconv.Itoa(100<<20) {
		t.Errorf("memory limit %q after update-resources, want %d", limit, 100<<20)
	}

	r = s.message(id, "files", 200, `{"file":{"path":"/tmp/x","content":"eA=="}}`)
	if r.OK || !strings.Contains(r.Error, "not supported by the process executor") {
		t.Errorf("update-file to a process: %+v", r)
	}
	// exec's env and working directory; a process runs commands as its
	// own user only.
	r = s.message(id, "exec", 200, `{"command":["sh","-c","echo $X $instanceid $(pwd)"],"env":[{"name":"X","value":"x1"}],"workingDir":"/tmp"}`)
	if !r.OK || r.Output != "x1 0 /tmp\n" {
		t.Errorf("exec with env and workingDir: %+v", r)
	}
	r = s.message(id, "exec", 200, `{"command":["true"],"user":"bcs-nobody-else"}`)
	if r.OK || !strings.Contains(r.Error, `runs commands as its user`) {
		t.Errorf("exec as another user: %+v", r)
	}
	// The original's kind command: every task of the application.
	results := s.command(200, "Application", "msgs", `["sh","-c","echo $X"]`, `["X=cmd"]`, "")
	if len(results) != 1 || !results[0].OK || results[0].Output != "cmd\n" || results[0].TaskGroupID != id {
		t.Errorf("command: %+v", results)
	}
	s.message("demo_nothere_0_1", "exec", 404, `{"command":["true"]}`)
	s.message(id, "exec", 404, `{"task":"web","command":["true"]}`)
}

// Executor messages through REST against the container executor (real
// dockerd): exec in a container answers its output and exit code, a signal
// reaches the container's process (its trap writes a file, read back by
// exec), a file written into the web container is served by its httpd. A
// pod of two containers needs the task named. The instance shows each
// container's ID, pid and the pod's IP.
func TestContainerExecutorMessages(t *testing.T) {
	// Commands and execs may run as nobody: the default policy lets them
	// run as the task's own user only.
	s := startSystem(t, admissionPolicy(t, map[string]any{"default": map[string]any{"users": []string{"nobody"}}}))
	m := s.manifest("application.json", func(m map[string]any) {
		m["metadata"].(map[string]any)["name"] = "msgs"
		containers := m["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)
		containers[1].(map[string]any)["args"] = []string{"-c", `trap "echo usr1 >> /tmp/signals" USR1; while true; do sleep 0.2; done`}
	})
	if code, body := s.call("POST", "/v1/apps", m); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	inst := s.running("demo", "msgs", 1)[0]
	id := inst.TaskGroupID

	web, sidecar := taskContainer(t, id+"_0"), taskContainer(t, id+"_1")
	tasks := s.tasks("demo", "msgs")
	if len(tasks) != 2 {
		t.Fatalf("tasks %+v", tasks)
	}
	for i, container := range []string{web, sidecar} {
		c := tasks[i].Container
		pid, _ := strconv.Atoi(docker(t, "inspect", "-f", "{{.State.Pid}}", container))
		if c == nil || !strings.HasPrefix(c.ID, container) || c.Pid != pid || c.Status != "running" || c.IPAddress == "" {
			t.Errorf("task %d shows %+v, want container %s with pid %d and an IP", i, c, container, pid)
		}
	}

	s.message(id, "exec", 400, `{"command":["true"]}`) // which container?
	r := s.message(id, "exec", 200, `{"task":"container-0","command":["cat","/tmp/www/index.html"]}`)
	if !r.OK || r.Output != "hello from web\n" || r.Task != id+"_0" {
		t.Errorf("exec: %+v", r)
	}
	r = s.message(id, "exec", 200, `{"task":"container-0","command":["sh","-c","echo bad; exit 7"]}`)
	if r.OK || r.ExitCode != 7 || r.Output != "bad\n" {
		t.Errorf("failing exec: %+v", r)
	}

	if r = s.message(id, "signal", 200, `{"task":"container-1","signal":"USR1"}`); !r.OK {
		t.Errorf("signal: %+v", r)
	}
	s.eventually("the sidecar's trap ran", func() (bool, string) {
		r := s.message(id, "exec", 200, `{"task":"container-1","command":["cat","/tmp/signals"]}`)
		return r.Output == "usr1\n", fmt.Sprintf("%+v", r)
	})

	content := base64.StdEncoding.EncodeToString([]byte("v2\n"))
	if r = s.message(id, "files", 200, `{"task":"container-0","file":{"path":"/tmp/www/conf.txt","content":"`+content+`"}}`); !r.OK {
		t.Errorf("files: %+v", r)
	}
	if code, body := get(fmt.Sprintf("http://127.0.0.1:%d/conf.txt", inst.Ports["http"])); code != 200 || body != "v2\n" {
		t.Errorf("the written file served: %d %q", code, body)
	}
	s.message(id, "signal", 404, `{"task":"container-9","signal":"USR1"}`)

	// exec's env, user and working directory are docker exec's.
	r = s.message(id, "exec", 200, `{"task":"container-0","command":["sh","-c","echo $X $(id -u) $(pwd)"],`+
		`"env":[{"name":"X","value":"x1"}],"user":"nobody","workingDir":"/tmp"}`)
	if !r.OK || r.Output != "x1 65534 /tmp\n" {
		t.Errorf("exec with env, user and workingDir: %+v", r)
	}
	// The original's kind command runs in every container of every
	// running instance (as a user the admission policy allows: nobody,
	// not root); a target of the wrong kind is not found.
	results := s.command(200, "Application", "msgs", `["sh","-c","echo $X $(id -un)"]`, `["X=cmd"]`, "nobody")
	if len(results) != 2 || results[0].Task != id+"_0" || results[1].Task != id+"_1" {
		t.Fatalf("command: %+v", results)
	}
	for _, res := range results {
		if !res.OK || res.Output != "cmd nobody\n" || res.Instance != 0 {
			t.Errorf("command in %s: %+v", res.Task, res)
		}
	}
	s.command(404, "Deployment", "msgs", `["true"]`, `[]`, "")

	if code, body := s.call("DELETE", "/v1/apps/demo/msgs", nil); code != 202 {
		t.Fatalf("delete: %d %s", code, body)
	}
	s.eventually("no container of the application left", func() (bool, string) {
		left := s.podContainers("demo_msgs_")
		return len(left) == 0, strings.Join(left, " ")
	})
}
