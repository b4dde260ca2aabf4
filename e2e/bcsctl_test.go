package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// ctlResult is what one run of the bcsctl binary printed, and its exit
// code.
type ctlResult struct {
	out, err string
	code     int
}

// bcsctl runs the real bcsctl binary against the system's API (through
// BCS_SERVER), stdin given, and waits for it for at most 3 minutes.
func (s *system) bcsctl(stdin string, args ...string) ctlResult {
	s.t.Helper()
	return s.bcsctlAs("", stdin, args...)
}

// bcsctlAs runs bcsctl as bcsctl does, as the caller of token ("": the
// admin's).
func (s *system) bcsctlAs(token, stdin string, args ...string) ctlResult {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "bcsctl"), args...)
	cmd.Env = s.clientEnv()
	if token != "" {
		cmd.Env = append(cmd.Env, "BCS_TOKEN="+token)
	}
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return ctlResult{out.String(), errOut.String(), exit.ExitCode()}
	case err != nil:
		s.t.Fatalf("bcsctl %s: %v", strings.Join(args, " "), err)
	}
	return ctlResult{out.String(), errOut.String(), 0}
}

// ctl runs bcsctl and fails the test unless it exits 0; it returns what
// bcsctl printed.
func (s *system) ctl(stdin string, args ...string) string {
	s.t.Helper()
	r := s.bcsctl(stdin, args...)
	if r.code != 0 {
		s.t.Fatalf("bcsctl %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, r.out, r.err)
	}
	return r.out
}

// bcsctl, the real binary, against a running system: apply
// (JSON, and YAML from stdin) → get → rollout status until done (exit 0)
// → scale → describe; a rollout aborted while rollout status follows it
// makes it exit 1; delete waits until the application is gone.
func TestBcsctlDrivesAFleet(t *testing.T) {
	s := startSystem(t)
	if out := s.ctl("", "apply", "-f", "../examples/process.json"); out != "process demo/gamesvr created\n" {
		t.Errorf("apply JSON: %q", out)
	}
	deployment, err := os.ReadFile("../examples/deployment.json")
	if err != nil {
		t.Fatal(err)
	}
	fleetYAML, err := yaml.JSONToYAML(deployment)
	if err != nil {
		t.Fatal(err)
	}
	if out := s.ctl(string(fleetYAML), "apply", "-f", "-"); out != "deployment demo/fleet created\n" {
		t.Errorf("apply YAML: %q", out)
	}

	// rollout status follows the first deployment until every instance
	// runs and is ready: a line per change, the last one saying so.
	out := s.ctl("", "rollout", "status", "deployment", "fleet", "-n", "demo", "--timeout", "2m")
	if !strings.HasSuffix(out, "deployment demo/fleet successfully rolled out: every instance runs revision 1\n") {
		t.Errorf("rollout status deployment fleet:\n%s", out)
	}
	s.ctl("", "rollout", "status", "app/gamesvr", "-n", "demo", "--timeout", "2m")

	// plan, and apply --dry-run, say what a fourth instance would do —
	// wait, every agent holding one — and change nothing.
	process, err := os.ReadFile("../examples/process.json")
	if err != nil {
		t.Fatal(err)
	}
	four := strings.Replace(string(process), `"instance": 3`, `"instance": 4`, 1)
	planned := regexp.MustCompile(`(?m)^  3 +place +<none> +2 +<none> +pending: 0/3 agents fit: hostname UNIQUE 3\n  Summary: 3 keep, 1 pending\n`)
	if out := s.ctl(four, "plan", "-f", "-"); !strings.HasPrefix(out, "process demo/gamesvr: update (current revision 1)\n") || !planned.MatchString(out) {
		t.Errorf("plan:\n%s", out)
	}
	if out := s.ctl(four, "apply", "--dry-run", "-f", "-"); !strings.HasPrefix(out, "process demo/gamesvr configured (dry run)\n") || !planned.MatchString(out) {
		t.Errorf("apply --dry-run:\n%s", out)
	}
	if v, _ := s.app("demo", "gamesvr"); v.Version != 1 || v.Instances != 3 {
		t.Errorf("after plan and dry run: revision %d with %d instances, want 1 and 3", v.Version, v.Instances)
	}

	apps := s.ctl("", "get", "apps", "-n", "demo")
	if lines := strings.Split(strings.TrimSpace(apps), "\n"); len(lines) != 2 || !strings.Contains(lines[1], "gamesvr   process   Running   3/3") {
		t.Errorf("get apps:\n%s", apps)
	}
	instances := s.ctl("", "get", "instances", "-n", "demo")
	if n := strings.Count(instances, "   Running   true    true "); n != 7 {
		t.Errorf("get instances: %d running and ready, want 7:\n%s", n, instances)
	}
	// kubectl's habits: pods are the instances; get all shows every
	// kind, named KIND/NAME; get apps says where the deployment is.
	if pods := s.ctl("", "get", "pods", "-n", "demo"); strings.Count(pods, "   Running   true    true ") != 7 || !strings.Contains(pods, "\nfleet/3 ") {
		t.Errorf("get pods:\n%s", pods)
	}
	all := s.ctl("", "get", "all", "-n", "demo")
	for _, want := range []string{"\napp/gamesvr ", "\ndeployment/fleet ", "\ninstance/gamesvr/0 ", "\ninstance/fleet/3 "} {
		if !strings.Contains(all, want) {
			t.Errorf("get all lacks %q:\n%s", want, all)
		}
	}
	if r := s.bcsctl("", "get", "apps", "-n", "demo"); r.code != 0 || !strings.Contains(r.err, "There are deployments too, listed apart: bcsctl get deployments -n demo") {
		t.Errorf("get apps: %+v, want where the deployment is", r)
	}

	// exec runs a command next to the process (its work path, its
	// environment) and ends with its exit code; signal reaches the
	// process (gamesvr reloads on SIGHUP and logs it); describe shows
	// the process's pid.
	r := s.bcsctl("", "exec", "gamesvr/0", "-n", "demo", "--", "sh", "-c", "echo instance $instanceid in $PWD; exit 3")
	if r.code != 3 || !strings.HasPrefix(r.out, "instance 0 in /") || !strings.HasSuffix(r.out, "/demo.gamesvr.0\n") {
		t.Errorf("exec: exit %d, stdout %q, stderr %q", r.code, r.out, r.err)
	}
	signalled := regexp.MustCompile(`^SIGHUP sent to (demo_gamesvr_0_1\.[0-9a-z]+) \(task demo_gamesvr_0_1\.[0-9a-z]+_0\)`).FindStringSubmatch(s.ctl("", "signal", "demo/gamesvr/0", "SIGHUP"))
	if signalled == nil {
		t.Fatalf("signal: want it sent to the task group (with its incarnation) and its task")
	}
	s.eventually("gamesvr to log its reload", func() (bool, string) {
		out := s.bcsctl("", "logs", signalled[1]).out
		return strings.Contains(out, "reloaded (1)") && strings.Contains(out, "instance 0 serving on 127.0.0.1:"), out
	})
	out = s.ctl("", "describe", "instance", "demo/gamesvr/0")
	if !regexp.MustCompile(`Tasks:\n +NAME +STATE +HEALTHY +PID .*\n +gamesvr +Running +true +[0-9]+ `).MatchString(out) {
		t.Errorf("describe instance: no task with its pid:\n%s", out)
	}

	// Seed 002's optype=stop/start: instance stop kills gamesvr/0's
	// process and keeps the instance, Stopped; start brings it back on
	// its agent. stop and start of the deployment do so to all four.
	gamesvr0 := func() instanceView {
		v, _ := s.app("demo", "gamesvr")
		return v.Status.Instances[0]
	}
	ranOn := gamesvr0()
	if out := s.ctl("", "instance", "stop", "gamesvr/0", "-n", "demo"); out != "stop of "+ranOn.TaskGroupID+" requested\n" {
		t.Errorf("instance stop: %q", out)
	}
	s.eventually("gamesvr/0 stopped, its process killed", func() (bool, string) {
		i := gamesvr0()
		return i.Stopped && len(i.Tasks) == 1 && i.Tasks[0].State == "TASK_KILLED", fmt.Sprintf("%+v", i)
	})
	// A stopped instance holds no port, and no check of it is made.
	if out := s.ctl("", "get", "instances", "gamesvr", "-n", "demo"); !regexp.MustCompile(`\ngamesvr/0 +Stopped +false +<none> +0 +\d+ +agent-\d+ +<none> +<none>\n`).MatchString(out) {
		t.Errorf("get instances, want gamesvr/0 Stopped, not ready, no health:\n%s", out)
	}
	if i := gamesvr0(); len(i.Ports) != 0 || i.Healthy != nil {
		t.Errorf("stopped gamesvr/0 shows ports %v, healthy %v", i.Ports, i.Healthy)
	}
	if out := s.ctl("", "describe", "app", "gamesvr", "-n", "demo"); !regexp.MustCompile(`\nReplicas: +(\d+) desired, (\d+) ready, 1 stopped\n`).MatchString(out) {
		t.Errorf("describe app, want 1 stopped counted apart from the ready:\n%s", out)
	}
	s.ctl("", "instance", "start", "gamesvr/0", "-n", "demo")
	s.eventually("gamesvr/0 running again on its agent", func() (bool, string) {
		i := gamesvr0()
		return !i.Stopped && i.State == "TASK_RUNNING" && i.TaskGroupID != ranOn.TaskGroupID && i.Agent == ranOn.Agent,
			fmt.Sprintf("%s %s on %s (ran on %s)", i.TaskGroupID, i.State, i.Agent, ranOn.Agent)
	})
	if out := s.ctl("", "stop", "deployment", "fleet", "-n", "demo"); out != "deployment demo/fleet stopped\n" {
		t.Errorf("stop deployment: %q", out)
	}
	s.eventually("the fleet stopped", func() (bool, string) {
		out := s.ctl("", "get", "instances", "fleet", "-n", "demo")
		return strings.Count(out, " Stopped ") == 4, out
	})
	if out := s.ctl("", "start", "deployment", "fleet", "-n", "demo"); out != "deployment demo/fleet started\n" {
		t.Errorf("start deployment: %q", out)
	}
	s.eventuallyWithin(2*time.Minute, "the fleet running and ready again", func() (bool, string) {
		out := s.ctl("", "get", "instances", "fleet", "-n", "demo")
		return strings.Count(out, "   Running   true    true ") == 4, out
	})

	// events -w follows from now: the scale below, not what came
	// before it; with --since it shows the last minutes first. Ctrl-C
	// ends it, which the scheduler does not log as an error.
	watch := func(args ...string) (*exec.Cmd, *syncBuffer) {
		cmd := exec.Command(filepath.Join(bin, "bcsctl"), append([]string{"events", "-w", "-n", "demo", "--type", "app"}, args...)...)
		cmd.Env = s.clientEnv()
		var out syncBuffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd, &out
	}
	const header = "AGE      EVENT        TYPE          OBJECT                         MESSAGE\n"
	fromNow, watched := watch()
	_, watchedSince := watch("--since", "10m")
	s.eventually("events -w --since 10m to print the recent changes", func() (bool, string) {
		return strings.Contains(watchedSince.String(), "gamesvr                        revision 1, 3 instances: Running\n"), watchedSince.String()
	})
	s.eventually("events -w to start", func() (bool, string) { return watched.String() == header, watched.String() })

	if out := s.ctl("", "scale", "app", "gamesvr", "--replicas", "1", "-n", "demo"); out != "process demo/gamesvr scaled to 1\n" {
		t.Errorf("scale: %q", out)
	}
	s.eventually("gamesvr scaled to one instance", func() (bool, string) {
		out := s.ctl("", "get", "instances", "gamesvr", "-n", "demo")
		return strings.Count(strings.TrimSpace(out), "\n") == 1, out
	})

	for _, out := range []*syncBuffer{watched, watchedSince} {
		s.eventually("events -w to print the scale", func() (bool, string) {
			return strings.Contains(out.String(), "gamesvr                        revision 1, 1 instances: "), out.String()
		})
	}
	if !strings.HasPrefix(watched.String(), header) || strings.Contains(watched.String(), "3 instances") {
		t.Errorf("events -w, want the scale and what followed it only:\n%s", watched.String())
	}
	if err := fromNow.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := fromNow.Wait(); err != nil {
		t.Errorf("events -w after Ctrl-C: %v", err)
	}

	out = s.ctl("", "describe", "deployment", "fleet", "-n", "demo")
	for _, want := range []string{"Name:            fleet\n", "State:           Running\n", "Replicas:        4 desired, 4 ready\n",
		"  Phase:      Completed\n", "  fleet/3   Running   true    true ", "Events:\n", "Running on agent-"} {
		if !strings.Contains(out, want) {
			t.Errorf("describe deployment fleet lacks %q:\n%s", want, out)
		}
	}

	// A canary that pauses after half the fleet, aborted while rollout
	// status follows it: rollout status exits 1 and says why.
	canary := strings.Replace(string(fleetYAML), "updateStrategy:\n", "updateStrategy:\n    canary: {steps: [{partition: 2}, {pause: {}}]}\n", 1)
	canary = strings.Replace(canary, "value: v1", "value: v2", 1)
	if out := s.ctl(canary, "apply", "-f", "-"); out != "deployment demo/fleet configured\n" {
		t.Fatalf("apply of the canary: %q", out)
	}
	status := exec.Command(filepath.Join(bin, "bcsctl"), "rollout", "status", "deployment", "fleet", "-n", "demo")
	status.Env = s.clientEnv()
	var statusOut, statusErr syncBuffer
	status.Stdout, status.Stderr = &statusOut, &statusErr
	if err := status.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- status.Wait() }()
	s.eventuallyWithin(2*time.Minute, "rollout status to show the canary paused", func() (bool, string) {
		return strings.Contains(statusOut.String(), "deployment demo/fleet: Paused: canary step 2/2: paused until promote"), statusOut.String()
	})
	if out := s.ctl("", "rollout", "abort", "deployment", "fleet", "-n", "demo"); out != "deployment demo/fleet aborted\n" {
		t.Errorf("rollout abort: %q", out)
	}
	select {
	case err := <-exited:
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(statusErr.String(), "rollout of revision 2 aborted: aborted (aborted by the operator)") {
			t.Errorf("rollout status of an aborted rollout: %v\nstdout:\n%s\nstderr:\n%s", err, statusOut.String(), statusErr.String())
		}
	case <-time.After(30 * time.Second):
		_ = status.Process.Kill()
		t.Fatalf("rollout status went on after the abort:\n%s", statusOut.String())
	}

	// delete waits until the scheduler killed the instances and removed
	// the application.
	if out := s.ctl("", "delete", "app", "gamesvr", "-n", "demo"); out != "process demo/gamesvr deleted\n" {
		t.Errorf("delete: %q", out)
	}
	if _, code := s.app("demo", "gamesvr"); code != 404 {
		t.Errorf("after delete: GET answers %d", code)
	}
	// Created again under its name, it reuses none of the task IDs the
	// master saw of the one deleted (MESOS-2198: never reuse a task ID).
	s.ctl("", "apply", "-f", "../examples/process.json")
	s.running("demo", "gamesvr", 3)
	code, body := get(s.master + "/master/tasks?limit=1000")
	var seen struct {
		Tasks []struct {
			ID    string `json:"id"`
			State string `json:"state"`
		} `json:"tasks"`
	}
	if err := json.Unmarshal([]byte(body), &seen); code != http.StatusOK || err != nil {
		t.Fatalf("GET /master/tasks: %d %v %.200s", code, err, body)
	}
	states, incarnations := map[string][]string{}, map[string]bool{}
	taskID := regexp.MustCompile(`^demo_gamesvr_[0-9]+_[0-9]+\.([0-9a-z]+)_[0-9]+$`)
	for _, task := range seen.Tasks {
		if m := taskID.FindStringSubmatch(task.ID); m != nil {
			states[task.ID] = append(states[task.ID], task.State)
			incarnations[m[1]] = true
		}
	}
	for id, st := range states {
		if len(st) > 1 {
			t.Errorf("the master saw task ID %s %d times: %v", id, len(st), st)
		}
	}
	if len(incarnations) != 2 {
		t.Errorf("the master saw gamesvr's tasks of %d incarnations, want 2 (deleted, created again): %v", len(incarnations), states)
	}
	s.ctl("", "delete", "app", "gamesvr", "-n", "demo")
	if out := s.ctl("", "delete", "-f", "../examples/deployment.json"); out != "deployment demo/fleet deleted\n" {
		t.Errorf("delete -f: %q", out)
	}
	// The event streams bcsctl closed are no errors of the scheduler.
	data, _ := os.ReadFile(filepath.Join(s.dir, "bcs-scheduler.log"))
	for line := range strings.Lines(string(data)) {
		if strings.Contains(line, " ERROR ") && strings.Contains(line, "/v1/events") {
			t.Errorf("bcs-scheduler logged a closed event stream as an error: %s", line)
		}
	}
}

// syncBuffer is a buffer a process writes while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// bcsctl logs prints a container's output from its sandbox,
// the last bytes asked for, and with -f what it writes next; an
// instance of several tasks needs -c, and the error names them.
func TestBcsctlLogs(t *testing.T) {
	s := startSystem(t)
	s.ctl("", "apply", "-f", "../examples/application.json")
	s.ctl("", "rollout", "status", "app", "web", "-n", "demo", "--timeout", "2m")

	// The sidecar fetches the page every 5 s and prints it.
	s.eventually("the sidecar's first line", func() (bool, string) {
		r := s.bcsctl("", "logs", "web/0", "-n", "demo", "-c", "container-1", "--tail", "100")
		return r.code == 0 && strings.HasSuffix(r.out, "hello from web\n") && len(r.out) <= 100, fmt.Sprintf("%+v", r)
	})
	follow := exec.Command(filepath.Join(bin, "bcsctl"), "logs", "demo/web/0", "-c", "container-1", "-f", "--tail", "15")
	follow.Env = s.clientEnv()
	var followed syncBuffer
	follow.Stdout, follow.Stderr = &followed, &followed
	if err := follow.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = follow.Process.Kill(); _ = follow.Wait() }()
	s.eventuallyWithin(30*time.Second, "logs -f to print the next line", func() (bool, string) {
		return strings.Count(followed.String(), "hello from web\n") >= 2, followed.String()
	})

	r := s.bcsctl("", "logs", "web/0", "-n", "demo")
	if r.code != 1 || !strings.Contains(r.err, "container-0, container-1") {
		t.Errorf("logs of a pod without -c: %+v", r)
	}
}

// The first day with bcsctl, as a new user met it: run from a
// subdirectory of the checkout it finds the admin token `make run`
// wrote at the top, and where there is none it says each file it
// looked at and how to give one; a manifest's syntax error is named by
// line and column, by bcsctl and by the API; an object created twice,
// or updated from a stale read, is refused with what to do, never with
// the store's words ("apply op 1 of 2 … revision 279").
func TestBcsctlFirstDay(t *testing.T) {
	s := startSystem(t)
	// A checkout whose top holds bcs-data/admin.token, as make run
	// leaves it, and bcsctl run two directories below, with no token
	// given.
	checkout := t.TempDir()
	if err := os.MkdirAll(filepath.Join(checkout, "bcs-data"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(checkout, "bcs-data", "admin.token"), []byte(s.token()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	below := filepath.Join(checkout, "examples", "gamesvr")
	if err := os.MkdirAll(below, 0o755); err != nil {
		t.Fatal(err)
	}
	elsewhere := filepath.Join(t.TempDir(), "notes")
	if err := os.MkdirAll(elsewhere, 0o755); err != nil {
		t.Fatal(err)
	}
	tokenless := func(dir string, args ...string) ctlResult {
		cmd := exec.Command(filepath.Join(bin, "bcsctl"), args...)
		cmd.Dir = dir
		cmd.Env = append(withoutVar(os.Environ(), "BCS_TOKEN"), "BCS_SERVER="+s.api)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatal(err)
		}
		return ctlResult{out.String(), errOut.String(), cmd.ProcessState.ExitCode()}
	}
	configmap := "kind: configmap\napiVersion: v4\nmetadata: {name: settings, namespace: demo}\ndatas: {a: {type: file, content: eA==}}\n"
	if r := tokenless(below, "get", "configmaps", "-A"); r.code != 0 || r.err != "No resources found\n" {
		t.Errorf("bcsctl below the checkout's top: %+v", r)
	}
	r := tokenless(elsewhere, "get", "configmaps", "-A")
	looked := ""
	for dir := elsewhere; ; dir = filepath.Dir(dir) {
		looked += "  " + filepath.Join(dir, "bcs-data", "admin.token") + "\n"
		if dir == "/" {
			break
		}
	}
	if r.code != 1 || !strings.Contains(r.err, "bcsctl sent no token: --token and $BCS_TOKEN are not set, and none of these files exists:\n"+looked+
		"give one with --token TOKEN, or export BCS_TOKEN=$(cat DATA/admin.token)") {
		t.Errorf("bcsctl with no token anywhere: %+v, want the files it looked at:\n%s", r, looked)
	}

	// Syntax errors, by line and column: bcsctl's own parse of JSON and
	// YAML, and the API's of JSON it is sent.
	broken := "{\"kind\": \"configmap\",\n \"metadata\": {\"name\": \"x\",}\n}"
	file := filepath.Join(t.TempDir(), "broken.json")
	if err := os.WriteFile(file, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := s.bcsctl("", "apply", "-f", file); r.code != 1 ||
		r.err != "error: "+file+": invalid JSON at line 2, column 27 (offset 48): invalid character '}' looking for beginning of object key string\n" {
		t.Errorf("apply of broken JSON: %+v", r)
	}
	if r := s.bcsctl("kind: configmap\nmetadata:\n  name: x\n   namespace: demo\n", "apply", "-f", "-"); r.code != 1 ||
		r.err != "error: stdin: invalid YAML at line 4, column 13: mapping values are not allowed in this context\n" {
		t.Errorf("apply of broken YAML: %+v", r)
	}
	code, body := s.call("POST", "/v1/configmaps", []byte(broken))
	if code != 400 || !strings.Contains(string(body), `"invalid JSON at line 2, column 27 (offset 48): invalid character '}' looking for beginning of object key string"`) {
		t.Errorf("POST of broken JSON: %d %s", code, body)
	}

	// Created twice, updated from a stale read: what to do, in the
	// API's terms.
	s.ctl(configmap, "create", "-f", "-")
	if r := s.bcsctl(configmap, "create", "-f", "-"); r.code != 1 ||
		r.err != "error: stdin: configmap demo/settings exists already: change it with PUT (bcsctl apply), or delete it first\n" {
		t.Errorf("create of an existing configmap: %+v", r)
	}
	var read struct {
		Revision int64 `json:"revision"`
	}
	if err := json.Unmarshal([]byte(s.ctl("", "get", "configmap", "settings", "-n", "demo", "-o", "json")), &read); err != nil {
		t.Fatal(err)
	}
	if out := s.ctl(strings.Replace(configmap, "eA==", "eQ==", 1), "apply", "-f", "-", "-o", "json"); !strings.Contains(out, `"revision": `) {
		t.Errorf("apply -o json: %s", out)
	}
	manifest, err := yaml.YAMLToJSON([]byte(configmap))
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest("PUT", s.api+"/v1/configmaps/demo/settings", bytes.NewReader(manifest))
	if err != nil {
		t.Fatal(err)
	}
	s.authorize(req)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("If-Match", fmt.Sprint(read.Revision))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	stale, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 409 || !regexp.MustCompile(fmt.Sprintf(`"message": "configmap demo/settings changed since revision %d \(it is at revision \d+ now\): read it again and retry"`, read.Revision)).Match(stale) {
		t.Errorf("PUT with a stale If-Match: %d %s", resp.StatusCode, stale)
	}
	for _, internal := range []string{"apply op", "configmaps/demo", "expected revision"} {
		if strings.Contains(string(stale), internal) {
			t.Errorf("the 409 shows the store's %q: %s", internal, stale)
		}
	}
}
