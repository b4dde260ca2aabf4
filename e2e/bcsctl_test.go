package e2e_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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

// Issue 16: bcsctl, the real binary, against a running system: apply
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

	// exec runs a command next to the process (its work path, its
	// environment) and ends with its exit code; signal reaches the
	// process (gamesvr reloads on SIGHUP and logs it); describe shows
	// the process's pid.
	r := s.bcsctl("", "exec", "gamesvr/0", "-n", "demo", "--", "sh", "-c", "echo instance $instanceid in $PWD; exit 3")
	if r.code != 3 || !strings.HasPrefix(r.out, "instance 0 in /") || !strings.HasSuffix(r.out, "/demo.gamesvr.0\n") {
		t.Errorf("exec: exit %d, stdout %q, stderr %q", r.code, r.out, r.err)
	}
	if out := s.ctl("", "signal", "demo/gamesvr/0", "SIGHUP"); !strings.HasPrefix(out, "SIGHUP sent to demo_gamesvr_0_1 (task demo_gamesvr_0_1_0)") {
		t.Errorf("signal: %q", out)
	}
	s.eventually("gamesvr to log its reload", func() (bool, string) {
		out := s.bcsctl("", "logs", "demo_gamesvr_0_1").out
		return strings.Contains(out, "reloaded (1)") && strings.Contains(out, "instance 0 serving on 127.0.0.1:"), out
	})
	out = s.ctl("", "describe", "instance", "demo/gamesvr/0")
	if !regexp.MustCompile(`Tasks:\n +NAME +STATE +HEALTHY +PID .*\n +gamesvr +Running +true +[0-9]+ `).MatchString(out) {
		t.Errorf("describe instance: no task with its pid:\n%s", out)
	}

	// events -w prints the recent changes, then the new ones as they
	// happen: the scale below.
	watch := exec.Command(filepath.Join(bin, "bcsctl"), "events", "-w", "-n", "demo", "--type", "app")
	watch.Env = s.clientEnv()
	var watched syncBuffer
	watch.Stdout, watch.Stderr = &watched, &watched
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = watch.Process.Kill(); _ = watch.Wait() }()
	s.eventually("events -w to print the recent changes", func() (bool, string) {
		return strings.Contains(watched.String(), "gamesvr                        revision 1, 3 instances: Running\n"), watched.String()
	})

	if out := s.ctl("", "scale", "app", "gamesvr", "--replicas", "1", "-n", "demo"); out != "process demo/gamesvr scaled to 1\n" {
		t.Errorf("scale: %q", out)
	}
	s.eventually("gamesvr scaled to one instance", func() (bool, string) {
		out := s.ctl("", "get", "instances", "gamesvr", "-n", "demo")
		return strings.Count(strings.TrimSpace(out), "\n") == 1, out
	})

	s.eventually("events -w to print the scale", func() (bool, string) {
		return strings.Contains(watched.String(), "gamesvr                        revision 1, 1 instances: "), watched.String()
	})
	if !strings.HasPrefix(watched.String(), "REVISION   TYPE          OBJECT                         MESSAGE\n") {
		t.Errorf("events -w:\n%s", watched.String())
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
	if out := s.ctl("", "delete", "-f", "../examples/deployment.json"); out != "deployment demo/fleet deleted\n" {
		t.Errorf("delete -f: %q", out)
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

// Issue 16: bcsctl logs prints a container's output from its sandbox,
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
