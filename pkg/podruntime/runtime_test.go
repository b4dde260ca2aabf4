package podruntime

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	docker "github.com/fsouza/go-dockerclient"
	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/bcs-mesos/bcs-mesos/pkg/executor"
	"github.com/bcs-mesos/bcs-mesos/pkg/pod"
	"github.com/bcs-mesos/bcs-mesos/pkg/pod/podtest"
	"github.com/bcs-mesos/bcs-mesos/pkg/taskstate"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// bridgePod is the two-container pod of seed 001 in BRIDGE mode: web
// (httpd, owns the network, publishes hostPort) and side (joins it).
func bridgePod(t *testing.T, checks ...proto.HealthCheck) (web, side executor.Task, hostPort int) {
	hostPort = freePort(t)
	web = containerTask("web.0", "web", httpdScript)
	web.Spec.Ports = []proto.Port{{Name: "http", ContainerPort: 8080, HostPort: hostPort}}
	web.Spec.HealthChecks = checks
	side = containerTask("side.0", "side", "exec sleep 100000")
	return web, side, hostPort
}

// Seed 001: both tasks go STARTING → RUNNING with the BcsContainerInfo
// JSON as TaskStatus.data; the HTTP check probes the published hostPort
// (BRIDGE, hostPort > 0) and reports healthy=true.
func TestBridgePodRunsHealthy(t *testing.T) {
	c := podtest.Docker(t)
	rt, cfg := newRuntime(t, c, nil)
	rep := newReporter(t)
	check := fastCheck("HTTP")
	check.PortName, check.Path = "http", "/health"
	web, side, _ := bridgePod(t, check)
	rt.Launch(context.Background(), []executor.Task{web, side}, rep)

	for _, task := range []executor.Task{web, side} {
		st := rep.awaitState(task.ID(), taskstate.Running)
		info := containerInfo(t, st)
		if info.ID == "" || info.Pid <= 0 || info.Status != "running" || info.IPAddress == "" || info.StartAt.IsZero() {
			t.Errorf("task %q RUNNING data %+v", task.ID(), info)
		}
		if want := pod.ContainerName(cfg.FrameworkID, cfg.ExecutorID, task.Spec.Name); info.Name != want {
			t.Errorf("container name %q, want %q", info.Name, want)
		}
	}
	rep.awaitHealthy(web.ID(), true)
	if got := rep.states(web.ID())[:2]; !slices.Equal(got, []taskstate.State{taskstate.Starting, taskstate.Running}) {
		t.Errorf("web states %v", got)
	}
}

// Seed 001: a container failing later fails every task and kills every
// container; once all have exited the pod is torn down.
func TestContainerExitFailsGroup(t *testing.T) {
	c := podtest.Docker(t)
	rt, cfg := newRuntime(t, c, nil)
	rep := newReporter(t)
	web, side, _ := bridgePod(t)
	rt.Launch(context.Background(), []executor.Task{web, side}, rep)
	st := rep.awaitState(side.ID(), taskstate.Running)
	if err := c.KillContainer(docker.KillContainerOptions{ID: containerInfo(t, st).ID, Signal: docker.SIGKILL}); err != nil {
		t.Fatal(err)
	}
	for _, task := range []executor.Task{web, side} {
		f := rep.awaitState(task.ID(), taskstate.Failed)
		if !strings.Contains(f.Message, `task "side.0" failed: container exited with code 137`) {
			t.Errorf("task %q FAILED message %q", task.ID(), f.Message)
		}
	}
	waitDone(t, rt)
	if left := labelledContainers(t, c, cfg.Labels[podtest.Label]); len(left) != 0 {
		t.Errorf("%d containers left after the group failed", len(left))
	}
}

// KILL: SIGTERM, then SIGKILL once the grace period is over; one task's
// KILL stops the pod (seed 001: shared lifecycle). The task the driver
// reported KILLING for is not reported KILLING again.
func TestKillWithGrace(t *testing.T) {
	c := podtest.Docker(t)
	rt, cfg := newRuntime(t, c, nil)
	rep := newReporter(t)
	stubborn := containerTask("stubborn.0", "stubborn", `trap "echo term" TERM; while true; do sleep 0.1; done`)
	polite := containerTask("polite.0", "polite", "exec sleep 100000")
	rt.Launch(context.Background(), []executor.Task{stubborn, polite}, rep)
	rep.awaitState(stubborn.ID(), taskstate.Running)
	rep.awaitState(polite.ID(), taskstate.Running)

	rep.Report(executor.Report{TaskID: stubborn.ID(), State: taskstate.Killing}) // as the driver does
	start := time.Now()
	rt.Kill(stubborn.ID(), 2*time.Second)
	rep.awaitState(stubborn.ID(), taskstate.Killed)
	if took := time.Since(start); took < 2*time.Second || took > 10*time.Second {
		t.Errorf("stubborn task killed after %v, want the 2s grace then SIGKILL", took)
	}
	rep.awaitState(polite.ID(), taskstate.Killed)
	if got := rep.states(polite.ID()); !slices.Contains(got, taskstate.Killing) {
		t.Errorf("polite states %v, want KILLING reported", got)
	}
	if got := rep.states(stubborn.ID()); count(got, taskstate.Killing) != 1 {
		t.Errorf("stubborn states %v: KILLING twice", got)
	}
	waitDone(t, rt)
	if left := labelledContainers(t, c, cfg.Labels[podtest.Label]); len(left) != 0 {
		t.Errorf("%d containers left after KILL", len(left))
	}
}

// proto/README.md: after consecutiveFailures failed checks the executor
// kills the task (and its pod) and reports TASK_FAILED with the health
// check's reason; the unhealthy task carries healthy=false.
func TestUnhealthyChecksFailGroup(t *testing.T) {
	for _, tc := range []struct {
		name  string
		check func(hostPort int) proto.HealthCheck
		want  string
	}{
		{"http wrong path", func(int) proto.HealthCheck {
			h := fastCheck("HTTP")
			h.PortName, h.Path = "http", "/missing"
			return h
		}, "status 404"},
		{"tcp closed port", func(int) proto.HealthCheck {
			h := fastCheck("TCP")
			h.Port = 9 // explicit port in BRIDGE: the container's own address
			return h
		}, "connect"},
		{"command exit 1", func(int) proto.HealthCheck {
			h := fastCheck("COMMAND")
			h.Command = "test -f /www/nothing"
			return h
		}, "exited with 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := podtest.Docker(t)
			rt, cfg := newRuntime(t, c, nil)
			rep := newReporter(t)
			web, side, hostPort := bridgePod(t)
			web.Spec.HealthChecks = []proto.HealthCheck{tc.check(hostPort)}
			rt.Launch(context.Background(), []executor.Task{web, side}, rep)
			rep.awaitState(web.ID(), taskstate.Running)
			f := rep.awaitState(web.ID(), taskstate.Failed)
			if f.Reason == nil || *f.Reason != mesos.REASON_TASK_HEALTH_CHECK_STATUS_UPDATED ||
				!strings.Contains(f.Message, "failed 3 times in a row") || !strings.Contains(f.Message, tc.want) {
				t.Errorf("FAILED reason %v message %q", f.Reason, f.Message)
			}
			if f.Healthy == nil || *f.Healthy {
				t.Errorf("FAILED healthy %v, want false", f.Healthy)
			}
			s := rep.awaitState(side.ID(), taskstate.Failed)
			if s.Message != f.Message {
				t.Errorf("side FAILED message %q, want the health reason", s.Message)
			}
			waitDone(t, rt)
			if left := labelledContainers(t, c, cfg.Labels[podtest.Label]); len(left) != 0 {
				t.Errorf("%d containers left", len(left))
			}
		})
	}
}

// TCP by port name and COMMAND through docker exec turn healthy.
func TestTCPAndCommandChecksHealthy(t *testing.T) {
	c := podtest.Docker(t)
	rt, _ := newRuntime(t, c, nil)
	rep := newReporter(t)
	tcp := fastCheck("TCP")
	tcp.PortName = "http"
	cmd := fastCheck("COMMAND")
	cmd.Command = "test -f /www/health"
	web, side, _ := bridgePod(t, tcp, cmd)
	rt.Launch(context.Background(), []executor.Task{web, side}, rep)
	rep.awaitHealthy(web.ID(), true)
}

// The scheduler messages of proto/message.go against a running pod.
func TestMessages(t *testing.T) {
	c := podtest.Docker(t)
	rt, cfg := newRuntime(t, c, nil)
	rep := newReporter(t)
	web, side, _ := bridgePod(t)
	side.Spec.Container.Args = []string{"-c", `trap "echo hup >> /tmp/signals" HUP; while true; do sleep 0.1; done`}
	rt.Launch(context.Background(), []executor.Task{web, side}, rep)
	rep.awaitState(web.ID(), taskstate.Running)
	before := containerInfo(t, rep.awaitState(side.ID(), taskstate.Running))
	ctx := context.Background()
	send := func(m proto.Message) proto.MessageResult {
		t.Helper()
		m.ID = string(m.Type)
		return rt.Message(ctx, &m)
	}

	res := send(proto.Message{Type: proto.MessageExec, TaskID: web.ID(), Command: []string{"sh", "-c", "echo hi; exit 3"}})
	if res.OK || res.ExitCode != 3 || res.Output != "hi\n" || res.Error != "" {
		t.Errorf("exec: %+v", res)
	}
	res = send(proto.Message{Type: proto.MessageExec, TaskID: web.ID(), Command: []string{"sh", "-c", "yes | head -c 100000"}})
	if !res.OK || !res.Truncated || len(res.Output) != proto.MaxOutputBytes {
		t.Errorf("exec of 100000 bytes: ok %v truncated %v, %d bytes of output", res.OK, res.Truncated, len(res.Output))
	}
	if res := send(proto.Message{Type: proto.MessageSignal, TaskID: side.ID(), Signal: int(syscall.SIGHUP)}); !res.OK {
		t.Errorf("signal: %+v", res)
	}
	eventually(t, 10*time.Second, func() string {
		res := send(proto.Message{Type: proto.MessageExec, TaskID: side.ID(), Command: []string{"cat", "/tmp/signals"}})
		if res.Output != "hup\n" {
			return fmt.Sprintf("signal not seen: %+v", res)
		}
		return ""
	})
	file := &proto.File{Path: "/www/conf.txt", Content: []byte("v2\n")}
	if res := send(proto.Message{Type: proto.MessageUpdateFile, TaskID: web.ID(), File: file}); !res.OK {
		t.Errorf("update-file: %+v", res)
	}
	if res := send(proto.Message{Type: proto.MessageExec, TaskID: web.ID(), Command: []string{"cat", "/www/conf.txt"}}); res.Output != "v2\n" {
		t.Errorf("file after update-file: %+v", res)
	}
	if res := send(proto.Message{Type: proto.MessageUpdateResources, TaskID: web.ID(), Resources: &proto.Resources{CPUs: 0.5, MemMB: 64, MemLimitMB: 96}}); !res.OK {
		t.Errorf("update-resources: %+v", res)
	}
	ins, err := c.InspectContainerWithOptions(docker.InspectContainerOptions{ID: pod.ContainerName(cfg.FrameworkID, cfg.ExecutorID, "web")})
	if err != nil || ins.HostConfig.CPUShares != 512 || ins.HostConfig.Memory != 96<<20 || ins.HostConfig.MemorySwap != 2*96<<20 {
		t.Errorf("after update-resources: shares %d memory %d swap %d (%v), want swap as docker sets it, twice the memory",
			ins.HostConfig.CPUShares, ins.HostConfig.Memory, ins.HostConfig.MemorySwap, err)
	}
	// A swap limit set is kept by an update that does not name one.
	for _, r := range []proto.Resources{{MemMB: 64, MemLimitMB: 96, MemSwapMB: 300}, {MemMB: 64, MemLimitMB: 80}} {
		if res := send(proto.Message{Type: proto.MessageUpdateResources, TaskID: web.ID(), Resources: &r}); !res.OK {
			t.Errorf("update-resources %+v: %+v", r, res)
		}
	}
	ins, err = c.InspectContainerWithOptions(docker.InspectContainerOptions{ID: pod.ContainerName(cfg.FrameworkID, cfg.ExecutorID, "web")})
	if err != nil || ins.HostConfig.Memory != 80<<20 || ins.HostConfig.MemorySwap != 300<<20 {
		t.Errorf("after updates with and then without a swap limit: memory %d swap %d (%v), want the swap limit kept at %d",
			ins.HostConfig.Memory, ins.HostConfig.MemorySwap, err, 300<<20)
	}

	// Restart in place: same container, new process, a fresh RUNNING.
	if res := send(proto.Message{Type: proto.MessageRestart, TaskID: side.ID()}); !res.OK {
		t.Fatalf("restart: %+v", res)
	}
	after := containerInfo(t, rep.await(side.ID(), "RUNNING after restart", func(r executor.Report) bool {
		return r.State == taskstate.Running && r.Message == "restarted in place"
	}))
	if after.ID != before.ID || after.Pid == before.Pid || after.IPAddress != before.IPAddress {
		t.Errorf("restart: before %+v after %+v", before, after)
	}
	// The first container restarts in place too: the pod's network
	// container keeps the network.
	webBefore, _ := rt.group(web.ID()).getPod().Info(web.ID())
	if res := send(proto.Message{Type: proto.MessageRestart, TaskID: web.ID()}); !res.OK {
		t.Errorf("restart of the first container: %+v", res)
	}
	webAfter := containerInfo(t, rep.await(web.ID(), "RUNNING after restart", func(r executor.Report) bool {
		return r.State == taskstate.Running && r.Message == "restarted in place"
	}))
	if webAfter.ID != webBefore.ID || webAfter.Pid == webBefore.Pid || webAfter.IPAddress != webBefore.IPAddress {
		t.Errorf("restart of the first container: before %+v after %+v", webBefore, webAfter)
	}
	if res := send(proto.Message{Type: proto.MessageReportStatus, TaskID: web.ID()}); !res.OK {
		t.Errorf("report-status: %+v", res)
	}
	for _, m := range []proto.Message{
		{Type: proto.MessageReload, TaskID: web.ID()},
		{Type: proto.MessageSignal, TaskID: web.ID()},
		{Type: proto.MessageUpdateFile, TaskID: web.ID()},
		{Type: proto.MessageExec, TaskID: "nope"},
	} {
		if res := send(m); res.OK || res.Error == "" {
			t.Errorf("%s of %q: %+v, want an error", m.Type, m.TaskID, res)
		}
	}
}

// Seed 001: cannot reach dockerd → every task TASK_FAILED with a clear
// message.
func TestDockerUnreachableFailsEveryTask(t *testing.T) {
	c, err := docker.NewClient("unix://" + filepath.Join(t.TempDir(), "no-docker.sock"))
	if err != nil {
		t.Fatal(err)
	}
	rt, err := New(context.Background(), Config{Docker: c, ExecutorID: "exec-1", SandboxDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	rep := newReporter(t)
	a, b := containerTask("a.0", "a", "true"), containerTask("b.0", "b", "true")
	rt.Launch(context.Background(), []executor.Task{a, b}, rep)
	for _, task := range []executor.Task{a, b} {
		f := rep.awaitState(task.ID(), taskstate.Failed)
		if !strings.Contains(f.Message, "cannot reach dockerd") || f.Reason == nil || *f.Reason != mesos.REASON_CONTAINER_LAUNCH_FAILED {
			t.Errorf("task %q: %s", task.ID(), describe(f))
		}
	}
}

// A group that can never run fails before anything is created:
// REASON_TASK_INVALID for every task.
func TestInvalidGroups(t *testing.T) {
	c := podtest.Docker(t)
	for _, tc := range []struct {
		name string
		mod  func(a *executor.Task)
		want string
	}{
		{"process task", func(a *executor.Task) { a.Spec.Container, a.Spec.Process = nil, &proto.ProcessSpec{} }, "container tasks only"},
		{"unknown port name", func(a *executor.Task) {
			h := fastCheck("HTTP")
			h.PortName = "nope"
			a.Spec.HealthChecks = []proto.HealthCheck{h}
		}, `port name "nope"`},
		{"http in NONE", func(a *executor.Task) {
			h := fastCheck("HTTP")
			h.Port = 80
			a.Spec.HealthChecks = []proto.HealthCheck{h}
			a.Spec.Container.NetworkMode = "NONE"
		}, "network mode NONE"},
		{"remote check", func(a *executor.Task) { a.Spec.HealthChecks = []proto.HealthCheck{{Type: "REMOTE_HTTP"}} }, "REMOTE_"},
		{"bad container name", func(a *executor.Task) { a.Spec.Name = "bad/name" }, "container name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt, cfg := newRuntime(t, c, nil)
			rep := newReporter(t)
			a, b := containerTask("a.0", "a", "sleep 100"), containerTask("b.0", "b", "sleep 100")
			tc.mod(&a)
			rt.Launch(context.Background(), []executor.Task{a, b}, rep)
			for _, task := range []executor.Task{a, b} {
				f := rep.awaitState(task.ID(), taskstate.Failed)
				if f.Reason == nil || *f.Reason != mesos.REASON_TASK_INVALID || !strings.Contains(f.Message, tc.want) {
					t.Errorf("task %q: %s", task.ID(), describe(f))
				}
			}
			if left := labelledContainers(t, c, cfg.Labels[podtest.Label]); len(left) != 0 {
				t.Errorf("%d containers created for an invalid group", len(left))
			}
		})
	}
}

// An executor killed mid-run leaves its pod behind (two containers and the
// network container holding their network); the next executor of the
// framework on the agent (a new run directory, maybe a new executor ID)
// tears it down because the owner is dead, and leaves a live executor's
// pod alone.
func TestRecoverTearsDownDeadExecutorsPods(t *testing.T) {
	c := podtest.Docker(t)
	executors := filepath.Join(t.TempDir(), "frameworks", "fw-1", "executors")
	sandbox := func(exec, run string) string { return filepath.Join(executors, exec, "runs", run) }
	id := testID(t)
	removeLabelled(t, c, id)
	t.Cleanup(func() { removeLabelled(t, c, id) })
	labels := map[string]string{podtest.Label: id}

	// Two pods started by hand in two sandboxes; one owner is dead.
	startPod := func(exec, run string) string {
		dir := sandbox(exec, run)
		cfg := pod.Config{Docker: c, PodID: exec, SandboxDir: dir, NodeAddr: "127.0.0.1", Labels: labels,
			NetworkImage: podtest.Image, NetworkCommand: podtest.NetworkCommand()}
		main, side := containerTask(exec+".0", "main", "exec sleep 100000"), containerTask(exec+".1", "side", "exec sleep 100000")
		p, err := pod.New(cfg, []pod.Task{{ID: main.ID(), Spec: main.Spec}, {ID: side.ID(), Spec: side.Spec}})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	dead := startPod("dead-exec", "run-1")
	if err := os.WriteFile(filepath.Join(dead, OwnerFile), []byte(`{"pid": 999999999, "startTime": "1"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	alive := startPod("live-exec", "run-1")
	if err := writeOwner(alive); err != nil { // this test process is its owner
		t.Fatal(err)
	}
	if n := len(labelledContainers(t, c, id)); n != 6 {
		t.Fatalf("%d containers, want 2 pods of 2 and their network containers", n)
	}

	_, err := New(context.Background(), Config{Docker: c, ExecutorID: "next-exec", SandboxDir: sandbox("next-exec", "run-1"), Labels: labels})
	if err != nil {
		t.Fatal(err)
	}
	// The dead pod's goroutines still run in this process and race the
	// recovery to remove its containers: a removal in progress ends soon.
	eventually(t, 10*time.Second, func() string {
		var dead []string
		left := labelledContainers(t, c, id)
		for _, ct := range left {
			if ct.Labels[pod.LabelPod] != "live-exec" {
				dead = append(dead, fmt.Sprintf("%v of pod %q (%s)", ct.Names, ct.Labels[pod.LabelPod], ct.State))
			}
		}
		if len(dead) > 0 || len(left) != 3 {
			return fmt.Sprintf("after recovery: %d containers, want live-exec's 3; dead pod's: %v", len(left), dead)
		}
		return ""
	})
	if _, err := os.Stat(filepath.Join(dead, "bcs-pod-dead-exec.json")); !os.IsNotExist(err) {
		t.Errorf("dead pod's state file: %v", err)
	}
}

// eventually retries f until it returns "" or d passes.
func eventually(t *testing.T, d time.Duration, f func() string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		msg := f()
		if msg == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(msg)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func count(states []taskstate.State, s taskstate.State) int {
	n := 0
	for _, x := range states {
		if x == s {
			n++
		}
	}
	return n
}
