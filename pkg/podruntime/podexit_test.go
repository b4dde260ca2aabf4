package podruntime

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	docker "github.com/fsouza/go-dockerclient"

	"github.com/bcs-mesos/bcs-mesos/pkg/executor"
	"github.com/bcs-mesos/bcs-mesos/pkg/pod/podtest"
	"github.com/bcs-mesos/bcs-mesos/pkg/taskstate"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// Seed 001 ("所有容器退出后,Executor默认退出"): a container that exits 0 is
// finished, its task TASK_FINISHED with the exit code in its data; the
// others keep running: the main container stays RUNNING and healthy,
// serves on its published port (the network belongs to the pod's network
// container, not to any business container) and can still be restarted
// in place. Killing it then ends the pod: nothing left behind.
func TestFinishedSidecarLeavesMainRunning(t *testing.T) {
	c := podtest.Docker(t)
	rt, cfg := newRuntime(t, c, nil)
	rep := newReporter(t)
	check := fastCheck("HTTP")
	check.PortName, check.Path = "http", "/health"
	web, _, hostPort := bridgePod(t, check)
	side := containerTask("side.0", "side", "sleep 0.5; exit 0")
	baseline := podGoroutines()
	rt.Launch(context.Background(), []executor.Task{web, side}, rep)

	fin := rep.awaitState(side.ID(), taskstate.Finished)
	if info := containerInfo(t, fin); info.ExitCode != 0 || info.Status != "exited" || fin.Message != "container exited with code 0" {
		t.Errorf("side FINISHED %q data %+v", fin.Message, info)
	}
	rep.awaitHealthy(web.ID(), true)
	seen := len(rep.snapshot())
	time.Sleep(time.Second) // five check intervals
	for _, r := range rep.snapshot()[seen:] {
		if r.TaskID == web.ID() && (r.State != taskstate.Running || r.Healthy != nil && !*r.Healthy) {
			t.Errorf("web after the sidecar finished: %s", describe(r))
		}
	}
	if got := rt.Tasks()[web.ID()]; got != taskstate.Running {
		t.Fatalf("web %s after the sidecar finished, want running", got)
	}
	if body := httpGet(fmt.Sprintf("http://127.0.0.1:%d/health", hostPort)); body != "ok\n" {
		t.Errorf("web's published port answers %q", body)
	}

	seen = len(rep.snapshot())
	res := rt.Message(context.Background(), &proto.Message{ID: "r1", Type: proto.MessageRestart, TaskID: web.ID()})
	if !res.OK {
		t.Fatalf("restart of web after the sidecar finished: %+v", res)
	}
	rep.awaitSince(seen, web.ID(), "RUNNING restarted in place", func(r executor.Report) bool {
		return r.State == taskstate.Running && r.Message == "restarted in place"
	})
	res = rt.Message(context.Background(), &proto.Message{ID: "r2", Type: proto.MessageRestart, TaskID: side.ID()})
	if res.OK || !strings.Contains(res.Error, "is Finished, not running") {
		t.Errorf("restart of the finished sidecar: %+v, want refused", res)
	}

	rt.Kill(web.ID(), time.Second)
	rep.awaitState(web.ID(), taskstate.Killed)
	waitDone(t, rt)
	if got := rep.states(side.ID()); count(got, taskstate.Finished) != 1 || got[len(got)-1] != taskstate.Finished {
		t.Errorf("side states %v, want FINISHED once, last", got)
	}
	noneLeft(t, c, cfg, baseline)
}

// Seed 001 ("TaskGroup中共有一个失败,所有设置为失败,强杀所有容器"): a
// container exiting 3 fails its task (exit code in its data) and every
// task still running, whose containers are killed at once; a task that
// had finished before stays FINISHED. The pod is torn down.
func TestFailingContainerFailsRunningTasks(t *testing.T) {
	c := podtest.Docker(t)
	rt, cfg := newRuntime(t, c, nil)
	rep := newReporter(t)
	main := containerTask("main.0", "main", "exec sleep 100000")
	main.KillGrace, main.Spec.KillGracePeriodSeconds = 30*time.Second, 30 // the failure kill does not wait for it
	side := containerTask("side.0", "side", "exit 0")
	crash := containerTask("crash.0", "crash", "echo starting; sleep 1; echo 'listen tcp :8080: bind: address already in use' >&2; exit 3")
	baseline := podGoroutines()
	start := time.Now()
	rt.Launch(context.Background(), []executor.Task{main, side, crash}, rep)

	rep.awaitState(side.ID(), taskstate.Finished)
	f := rep.awaitState(crash.ID(), taskstate.Failed)
	// The failure quotes what the container said last: the reason is
	// usually there.
	const said = `task "crash.0" failed: container exited with code 3; last stderr: "listen tcp :8080: bind: address already in use"`
	if info := containerInfo(t, f); info.ExitCode != 3 || f.Message != said {
		t.Errorf("crash FAILED %q data %+v, want %q", f.Message, info, said)
	}
	m := rep.awaitState(main.ID(), taskstate.Failed)
	if m.Message != said {
		t.Errorf("main FAILED %q, want crash.0's failure named", m.Message)
	}
	waitDone(t, rt)
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("pod ended after %v: main was not killed at once", took)
	}
	if got := rep.states(side.ID()); got[len(got)-1] != taskstate.Finished {
		t.Errorf("side states %v, want FINISHED to stay", got)
	}
	noneLeft(t, c, cfg, baseline)
}

// Seed 001: once every container exited 0, every task is TASK_FINISHED
// and the pod is done (the executor then exits: cmd/bcs-container-executor).
func TestAllContainersExitFinishesGroup(t *testing.T) {
	c := podtest.Docker(t)
	rt, cfg := newRuntime(t, c, nil)
	rep := newReporter(t)
	first := containerTask("first.0", "first", "sleep 1; exit 0")
	second := containerTask("second.0", "second", "exit 0")
	baseline := podGoroutines()
	rt.Launch(context.Background(), []executor.Task{first, second}, rep)
	waitDone(t, rt)
	for _, task := range []executor.Task{first, second} {
		got := rep.states(task.ID())
		if len(got) == 0 || got[len(got)-1] != taskstate.Finished || count(got, taskstate.Killed)+count(got, taskstate.Failed) != 0 {
			t.Errorf("task %q states %v, want FINISHED", task.ID(), got)
		}
	}
	noneLeft(t, c, cfg, baseline)
}

// An update leaves a finished task as it ran: InPlace re-creates the
// running web from its new spec while the finished sidecar gets no
// container and no report (it stays FINISHED at its revision); the same
// update again is current (reports web only), and a hot patch applies to
// web alone.
func TestUpdateLeavesFinishedTask(t *testing.T) {
	c := podtest.Docker(t)
	rt, cfg := newRuntime(t, c, nil)
	rep := newReporter(t)
	web, _, hostPort := bridgePod(t)
	side := containerTask("side.0", "side", "exit 0")
	web.Spec.Instance.Version, side.Spec.Instance.Version = 1, 1
	web.Spec.Env = []proto.EnvVar{{Name: "MODE", Value: "old"}}
	web.Spec.Container.Args = []string{"-c", versionedWeb + trapped("httpd -f -p 8080 -h /www")}
	baseline := podGoroutines()
	rt.Launch(context.Background(), []executor.Task{web, side}, rep)
	before := containerInfo(t, rep.awaitState(web.ID(), taskstate.Running))
	rep.awaitState(side.ID(), taskstate.Finished)

	u := proto.GroupUpdate{Revision: 2, Mode: proto.UpdateInPlace, Tasks: []proto.TaskUpdate{
		nextSpec(web, 2, func(s *proto.TaskSpec) { s.Env = []proto.EnvVar{{Name: "MODE", Value: "new"}} }),
		nextSpec(side, 2, func(s *proto.TaskSpec) { s.Env = []proto.EnvVar{{Name: "MODE", Value: "new"}} }),
	}}
	if res := sendUpdate(rt, side.ID(), u); !res.OK {
		t.Fatalf("in-place update of a pod with a finished task: %+v", res)
	}
	after := containerInfo(t, rep.await(web.ID(), "web at revision 2", revisionReport(t, 2, "in-place update to revision 2: container re-created")))
	if after.ID == before.ID {
		t.Errorf("web not re-created: %s", after.ID)
	}
	eventually(t, 10*time.Second, func() string {
		if got := httpGet(fmt.Sprintf("http://127.0.0.1:%d/", hostPort)); got != "new v1\n" {
			return "after the update: " + got
		}
		return ""
	})
	seen := len(rep.snapshot())
	if res := sendUpdate(rt, web.ID(), u); !res.OK {
		t.Errorf("the same update again: %+v", res)
	}
	rep.awaitSince(seen, web.ID(), "web reported at revision 2", revisionReport(t, 2, ""))
	hot := proto.GroupUpdate{Revision: 3, Mode: proto.UpdateHotPatch, Tasks: []proto.TaskUpdate{
		nextSpec(web, 3, func(s *proto.TaskSpec) {
			s.Env = []proto.EnvVar{{Name: "MODE", Value: "new"}}
			s.KillGracePeriodSeconds = 2
		}),
		nextSpec(side, 3, nil),
	}}
	if res := sendUpdate(rt, web.ID(), hot); !res.OK {
		t.Errorf("hot patch of a pod with a finished task: %+v", res)
	}
	rep.awaitSince(seen, web.ID(), "web at revision 3", revisionReport(t, 3, "hot-patched to revision 3"))
	if got := rep.states(side.ID()); got[len(got)-1] != taskstate.Finished || count(got, taskstate.Finished) != 1 || count(got, taskstate.Running) != 1 {
		t.Errorf("side states %v, want one RUNNING, then FINISHED and nothing more", got)
	}
	if info, _ := rt.groups[0].getPod().Info(side.ID()); info.Revision != 1 {
		t.Errorf("side revision %d, want 1: it never ran another", info.Revision)
	}
	rt.Kill(web.ID(), time.Second)
	waitDone(t, rt)
	noneLeft(t, c, cfg, baseline)
}

// noneLeft fails t if a container of the test or a goroutine of the pod
// (beyond baseline) is left.
func noneLeft(t *testing.T, c *docker.Client, cfg Config, baseline int) {
	t.Helper()
	if left := labelledContainers(t, c, cfg.Labels[podtest.Label]); len(left) != 0 {
		t.Errorf("%d containers left", len(left))
	}
	eventually(t, 5*time.Second, func() string {
		if n := podGoroutines(); n > baseline {
			return fmt.Sprintf("%d goroutines of the pod left (%d before)", n, baseline)
		}
		return ""
	})
}

// podGoroutines counts the goroutines, the caller's excepted, running
// code of pkg/pod, pkg/podruntime or pkg/healthcheck.
func podGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	n := 0
	for _, g := range strings.Split(string(buf), "\n\n")[1:] { // the caller's is first
		for _, pkg := range []string{"bcs-mesos/pkg/pod.", "bcs-mesos/pkg/podruntime.", "bcs-mesos/pkg/healthcheck."} {
			if strings.Contains(g, pkg) {
				n++
				break
			}
		}
	}
	return n
}
