package e2e_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// ticker is the program of both applications: a line on stderr, then a
// numbered line on stdout every second.
const ticker = `echo started >&2; i=0; while true; do i=$((i+1)); echo tick $i; sleep 1; done`

var (
	tickerProcess = `{"apiVersion": "v4", "kind": "process", "metadata": {"name": "ticker", "namespace": "logs"},
		"restartPolicy": {"policy": "Never"}, "killPolicy": {"gracePeriod": 1},
		"spec": {"instance": 1, "template": {"spec": {"processes": [{
			"procName": "ticker", "workPath": "${work_base_dir}/${namespace}.${processname}.${instanceid}",
			"pidFile": "${run_base_dir}/${namespace}.${processname}.${instanceid}/ticker.pid",
			"startCmd": "mkdir -p $(dirname ${pidFile}) && cp /bin/sh ./ticker && echo $$ >${pidFile} && exec ./ticker -c '` + ticker + `'",
			"resources": {"limits": {"cpu": "0.1", "memory": "32"}}}]}}}}`
	tickerContainers = `{"apiVersion": "v4", "kind": "application", "metadata": {"name": "ticker", "namespace": "logs-c"},
		"restartPolicy": {"policy": "Never"}, "killPolicy": {"gracePeriod": 1},
		"spec": {"instance": 1, "template": {"spec": {"networkMode": "BRIDGE", "containers": [
			{"image": "bcs-test/busybox:latest", "imagePullPolicy": "IfNotPresent", "command": "/bin/sh", "args": ["-c", "` + ticker + `"],
			 "resources": {"limits": {"cpu": "0.1", "memory": "16"}}},
			{"image": "bcs-test/busybox:latest", "imagePullPolicy": "IfNotPresent", "command": "/bin/sh", "args": ["-c", "echo sidecar; exec sleep 100000"],
			 "resources": {"limits": {"cpu": "0.1", "memory": "16"}}}]}}}}`
)

var tickLine = regexp.MustCompile(`tick (\d+)\n`)

// lastTick is the number of the last tick line in text, 0 for none.
func lastTick(text string) int {
	m := tickLine.FindAllStringSubmatch(text, -1)
	if len(m) == 0 {
		return 0
	}
	n, _ := strconv.Atoi(m[len(m)-1][1])
	return n
}

// `bcsctl logs` reads an instance's stdout and stderr from its
// sandbox through the agent's files API, for a process and for a
// container alike: what the application wrote, stderr apart, and with
// follow=true the lines it writes next; a task the instance does not
// have is a 404 naming those it has.
func TestLogs(t *testing.T) {
	s := startSystem(t)
	for _, m := range []string{tickerProcess, tickerContainers} {
		if code, body := s.call("POST", "/v1/apps", []byte(m)); code != 201 {
			t.Fatalf("create: %d %s", code, body)
		}
	}
	process := s.running("logs", "ticker", 1)[0]
	pod := s.running("logs-c", "ticker", 1)[0]

	for _, c := range []struct{ what, taskGroupID, task string }{
		{"process", process.TaskGroupID, "ticker"},
		{"container", pod.TaskGroupID, "container-0"},
	} {
		logs := "/v1/taskgroups/" + c.taskGroupID + "/logs?task=" + c.task
		var seen string
		s.eventually(c.what+" stdout with two ticks", func() (bool, string) {
			code, body := s.call("GET", logs, nil)
			seen = string(body)
			return code == 200 && strings.HasPrefix(seen, "tick 1\ntick 2\n"), fmt.Sprintf("%d %q", code, body)
		})
		if code, body := s.call("GET", logs+"&stream=stderr", nil); code != 200 || string(body) != "started\n" {
			t.Errorf("%s stderr: %d %q, want started", c.what, code, body)
		}
		if code, body := s.call("GET", logs+"&tail=7", nil); code != 200 || !tickLine.Match(body) || len(body) != 7 {
			t.Errorf("%s tail=7: %d %q", c.what, code, body)
		}

		// follow: from the end, the next tick comes.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		req, _ := http.NewRequestWithContext(ctx, "GET", s.api+logs+"&tail=0&follow=true", nil)
		s.authorize(req)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			cancel()
			t.Fatalf("%s follow: %v", c.what, err)
		}
		line, err := bufio.NewReader(resp.Body).ReadString('\n')
		cancel()
		resp.Body.Close()
		if err != nil || lastTick(line) <= lastTick(seen) {
			t.Errorf("%s follow: %q, %v; want a tick after %d", c.what, line, err, lastTick(seen))
		}
	}
	if code, body := s.call("GET", "/v1/taskgroups/"+pod.TaskGroupID+"/logs?task=container-1", nil); code != 200 || string(body) != "sidecar\n" {
		t.Errorf("the sidecar's stdout: %d %q", code, body)
	}

	// Which task: the pod has two.
	code, body := s.call("GET", "/v1/taskgroups/"+pod.TaskGroupID+"/logs?task=db", nil)
	if code != 404 || !strings.Contains(string(body), `has no task \"db\" (it has container-0, container-1)`) {
		t.Errorf("unknown task: %d %s", code, body)
	}
	if code, body := s.call("GET", "/v1/taskgroups/"+pod.TaskGroupID+"/logs", nil); code != 400 || !strings.Contains(string(body), "query parameter task") {
		t.Errorf("no task named: %d %s", code, body)
	}

	if code, body := s.call("DELETE", "/v1/apps/logs-c/ticker", nil); code != 202 {
		t.Fatalf("delete: %d %s", code, body)
	}
	s.eventually("no container of the application left", func() (bool, string) {
		left := s.podContainers("logs-c_ticker_")
		_, code := s.app("logs-c", "ticker")
		return len(left) == 0 && code == 404, strings.Join(left, " ")
	})
}
