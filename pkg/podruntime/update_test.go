package podruntime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	docker "github.com/fsouza/go-dockerclient"
	"github.com/jonboulle/clockwork"

	"github.com/bcs-mesos/bcs-mesos/pkg/executor"
	"github.com/bcs-mesos/bcs-mesos/pkg/pod/podtest"
	"github.com/bcs-mesos/bcs-mesos/pkg/taskstate"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// trapped runs cmd under a shell that exits on SIGTERM: these pods run on
// a fake clock, where a kill's grace period never ends by itself.
func trapped(cmd string) string { return "trap 'exit 0' TERM; " + cmd + " & wait" }

// versionedWeb serves "$MODE <version>" on 8080, the version read from the
// image's /etc/app-version (v1 when the image has none).
const versionedWeb = `mkdir -p /www; echo "$MODE $(cat /etc/app-version 2>/dev/null || echo v1)" > /www/index.html; `

// nextSpec is task's spec at revision rev, changed by mod.
func nextSpec(task executor.Task, rev uint64, mod func(*proto.TaskSpec)) proto.TaskUpdate {
	spec := *task.Spec
	c := *spec.Container
	spec.Container = &c
	spec.Instance.Version = rev
	if mod != nil {
		mod(&spec)
	}
	return proto.TaskUpdate{TaskID: task.ID(), Spec: &spec}
}

// sendUpdate sends the update message for u, naming taskID.
func sendUpdate(rt *Runtime, taskID string, u proto.GroupUpdate) proto.MessageResult {
	m := proto.Message{ID: fmt.Sprintf("update-%d", u.Revision), Type: proto.MessageUpdate, TaskID: taskID, Update: &u}
	return rt.Message(context.Background(), &m)
}

// updateAsync sends the update on its own goroutine.
func updateAsync(rt *Runtime, taskID string, u proto.GroupUpdate) <-chan proto.MessageResult {
	out := make(chan proto.MessageResult, 1)
	go func() { out <- sendUpdate(rt, taskID, u) }()
	return out
}

func awaitResult(t *testing.T, ch <-chan proto.MessageResult) proto.MessageResult {
	t.Helper()
	select {
	case res := <-ch:
		return res
	case <-time.After(2 * time.Minute):
		t.Fatal("no result of the update")
		return proto.MessageResult{}
	}
}

// revisionReport matches a RUNNING report whose data carries rev and whose
// message contains msg.
func revisionReport(t *testing.T, rev uint64, msg string) func(executor.Report) bool {
	return func(r executor.Report) bool {
		return r.State == taskstate.Running && r.Data != nil && containerInfo(t, r).Revision == rev && strings.Contains(r.Message, msg)
	}
}

func httpGet(url string) string {
	resp, err := http.Get(url)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return string(body)
}

func inspectPid(t *testing.T, c *docker.Client, id string) int {
	t.Helper()
	ins, err := c.InspectContainerWithOptions(docker.InspectContainerOptions{ID: id})
	if err != nil {
		t.Fatalf("inspect %s: %v", id, err)
	}
	return ins.State.Pid
}

// InplaceUpdate of the FIRST container of a BRIDGE pod of two (seed 004 on
// our pods): it reports RUNNING healthy=false with the drain message, waits
// the grace period on the runtime's clock, and is re-created from its new
// spec (new image, new env) in the same pod: new container ID, the same
// published host port answering with the new version, the same network
// namespace, and the second container neither restarted nor re-created.
// Every task's data then carries the new revision and the re-created one
// is healthy again (no checks: explicitly true). Restart re-creates every
// container, changed or not.
func TestInPlaceUpdateFirstContainer(t *testing.T) {
	c := podtest.Docker(t)
	v2 := podtest.CommitImage(t, c, "bcs-test/inplace:v2", map[string]string{"/etc/app-version": "v2"})
	clock := clockwork.NewFakeClock()
	rt, cfg := newRuntime(t, c, func(cfg *Config) { cfg.Clock = clock })
	rep := newReporter(t)
	web, side, hostPort := bridgePod(t)
	web.Spec.Instance.Version, side.Spec.Instance.Version = 1, 1
	web.Spec.Env = []proto.EnvVar{{Name: "MODE", Value: "old"}}
	web.Spec.Container.Args = []string{"-c", versionedWeb + trapped("httpd -f -p 8080 -h /www")}
	side.Spec.Container.Args = []string{"-c", trapped("sleep 100000")}
	rt.Launch(context.Background(), []executor.Task{web, side}, rep)
	webBefore := containerInfo(t, rep.awaitState(web.ID(), taskstate.Running))
	sideBefore := containerInfo(t, rep.awaitState(side.ID(), taskstate.Running))
	if webBefore.Revision != 1 || sideBefore.Revision != 1 {
		t.Errorf("revisions at launch: web %d side %d, want 1 (instance version)", webBefore.Revision, sideBefore.Revision)
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/", hostPort)
	eventually(t, 10*time.Second, func() string {
		if got := httpGet(url); got != "old v1\n" {
			return "before the update: " + got
		}
		return ""
	})
	podNetns := netns(t, sideBefore.Pid)

	u := proto.GroupUpdate{Revision: 2, Mode: proto.UpdateInPlace, GracePeriodSeconds: 30, Tasks: []proto.TaskUpdate{
		nextSpec(web, 2, func(s *proto.TaskSpec) {
			s.Container.Image = "bcs-test/inplace:v2"
			s.Env = []proto.EnvVar{{Name: "MODE", Value: "new"}}
		}),
		nextSpec(side, 2, nil),
	}}
	result := updateAsync(rt, side.ID(), u)
	drain := rep.await(web.ID(), "healthy=false before the restart", func(r executor.Report) bool {
		return r.Healthy != nil && !*r.Healthy && r.Message == "in-place update to revision 2: not ready, restarting in 30s"
	})
	if info := containerInfo(t, drain); info.ID != webBefore.ID || info.Revision != 1 {
		t.Errorf("drain report data %+v, want the old container at revision 1", info)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := clock.BlockUntilContext(ctx, 1); err != nil {
		t.Fatalf("the update does not wait on the clock: %v", err)
	}
	if got := httpGet(url); got != "old v1\n" {
		t.Errorf("during the grace period: %q, want the old container still serving", got)
	}
	start := time.Now()
	clock.Advance(30 * time.Second)
	if res := awaitResult(t, result); !res.OK || res.Error != "" || res.Type != proto.MessageUpdate || res.TaskID != side.ID() {
		t.Fatalf("update: %+v", res)
	}
	t.Logf("in-place update of one container (BRIDGE, pod of two): %v after the grace period", time.Since(start))
	upd := rep.await(web.ID(), "RUNNING after the re-creation", revisionReport(t, 2, "in-place update to revision 2: container re-created"))
	if upd.Healthy == nil || !*upd.Healthy {
		t.Errorf("web after the update: healthy %v, want true (no checks)", upd.Healthy)
	}
	webAfter := containerInfo(t, upd)
	if webAfter.ID == webBefore.ID || webAfter.Name != webBefore.Name || webAfter.IPAddress != webBefore.IPAddress || webAfter.Status != "running" {
		t.Errorf("web: before %+v after %+v, want a new container of the same name and address", webBefore, webAfter)
	}
	sideAfter := containerInfo(t, rep.await(side.ID(), "side at revision 2", revisionReport(t, 2, "")))
	if sideAfter.ID != sideBefore.ID || sideAfter.Pid != sideBefore.Pid || inspectPid(t, c, sideBefore.ID) != sideBefore.Pid {
		t.Errorf("side: before %+v after %+v, want the same container and process", sideBefore, sideAfter)
	}
	if got := netns(t, webAfter.Pid); got != podNetns {
		t.Errorf("new web in netns %s, the pod's is %s", got, podNetns)
	}
	eventually(t, 10*time.Second, func() string {
		if got := httpGet(url); got != "new v2\n" {
			return "host port after the update: " + got
		}
		return ""
	})
	var nsc *docker.NoSuchContainer
	if _, err := c.InspectContainerWithOptions(docker.InspectContainerOptions{ID: webBefore.ID}); !errors.As(err, &nsc) {
		t.Errorf("old web container: %v, want it removed", err)
	}
	if ins, err := c.InspectContainerWithOptions(docker.InspectContainerOptions{ID: webAfter.ID}); err != nil || ins.Image != v2 {
		t.Errorf("new web container's image: %v, want %s", err, v2)
	}

	// Restart: every container re-created, changed or not, in the same
	// network.
	u = proto.GroupUpdate{Revision: 3, Mode: proto.UpdateInPlace, Restart: true, Tasks: []proto.TaskUpdate{nextSpec(web, 3, func(s *proto.TaskSpec) {
		s.Container.Image = "bcs-test/inplace:v2"
		s.Env = []proto.EnvVar{{Name: "MODE", Value: "new"}}
	}), nextSpec(side, 3, nil)}}
	if res := sendUpdate(rt, web.ID(), u); !res.OK {
		t.Fatalf("restart update: %+v", res)
	}
	for _, before := range []struct {
		task executor.Task
		info proto.ContainerInfo
	}{{web, webAfter}, {side, sideAfter}} {
		now := containerInfo(t, rep.await(before.task.ID(), "re-created by Restart", revisionReport(t, 3, "container re-created")))
		if now.ID == before.info.ID || netns(t, now.Pid) != podNetns {
			t.Errorf("task %q after Restart: %+v, want a new container in netns %s", before.task.ID(), now, podNetns)
		}
	}
	if got := httpGet(url); got != "new v2\n" {
		t.Errorf("host port after Restart: %q", got)
	}
	if n := len(labelledContainers(t, c, cfg.Labels[podtest.Label])); n != 3 {
		t.Errorf("%d containers, want web, side and the network container", n)
	}
}

// The update is idempotent per revision: the same update sent twice while
// it runs and once more afterwards re-creates the changed container once;
// the duplicate shares the outcome, the late one re-reports every task
// with the revision; another revision is refused meanwhile.
func TestUpdateIsIdempotent(t *testing.T) {
	c := podtest.Docker(t)
	clock := clockwork.NewFakeClock()
	rt, _ := newRuntime(t, c, func(cfg *Config) { cfg.Clock = clock })
	rep := newReporter(t)
	web, side, _ := bridgePod(t)
	web.Spec.Container.Args = []string{"-c", "mkdir -p /www; " + trapped("httpd -f -p 8080 -h /www")}
	side.Spec.Container.Args = []string{"-c", trapped("sleep 100000")}
	rt.Launch(context.Background(), []executor.Task{web, side}, rep)
	webBefore := containerInfo(t, rep.awaitState(web.ID(), taskstate.Running))
	sideBefore := containerInfo(t, rep.awaitState(side.ID(), taskstate.Running))

	u := proto.GroupUpdate{Revision: 7, Mode: proto.UpdateInPlace, GracePeriodSeconds: 5, Tasks: []proto.TaskUpdate{
		nextSpec(web, 7, nil),
		nextSpec(side, 7, func(s *proto.TaskSpec) { s.Env = []proto.EnvVar{{Name: "MODE", Value: "seven"}} }),
	}}
	first := updateAsync(rt, web.ID(), u)
	rep.awaitHealthy(side.ID(), false)
	duplicate := updateAsync(rt, side.ID(), u)
	other := u
	other.Revision = 8
	if res := sendUpdate(rt, web.ID(), other); res.OK || !strings.Contains(res.Error, "revision 7 is under way") {
		t.Errorf("another revision during the update: %+v", res)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := clock.BlockUntilContext(ctx, 1); err != nil {
		t.Fatal(err)
	}
	clock.Advance(5 * time.Second)
	for _, ch := range []<-chan proto.MessageResult{first, duplicate} {
		if res := awaitResult(t, ch); !res.OK {
			t.Errorf("update: %+v", res)
		}
	}
	sideAfter := containerInfo(t, rep.await(side.ID(), "re-created", revisionReport(t, 7, "container re-created")))
	if sideAfter.ID == sideBefore.ID {
		t.Fatalf("side not re-created: %+v", sideAfter)
	}

	rt.queue.flush() // every report of the first update is in
	seen := len(rep.snapshot())
	if res := sendUpdate(rt, side.ID(), u); !res.OK {
		t.Errorf("the same update again: %+v", res)
	}
	for _, task := range []executor.Task{web, side} {
		rep.awaitSince(seen, task.ID(), "a fresh report at revision 7", revisionReport(t, 7, ""))
	}
	recreated := 0
	for _, r := range rep.snapshot() {
		if r.TaskID == side.ID() && strings.Contains(r.Message, "container re-created") {
			recreated++
		}
	}
	if recreated != 1 {
		t.Errorf("side re-created %d times, want once", recreated)
	}
	g := rt.group(web.ID()).getPod()
	if now, _ := g.Info(side.ID()); now.ID != sideAfter.ID || now.Revision != 7 {
		t.Errorf("side after the repeated update: %+v, want %s at revision 7", now, sideAfter.ID)
	}
	if now, _ := g.Info(web.ID()); now.ID != webBefore.ID || now.Pid != webBefore.Pid || now.Revision != 7 {
		t.Errorf("web (unchanged) after the updates: %+v, want %s untouched at revision 7", now, webBefore.ID)
	}
}

// CNI mode: the network container keeps the CNI attachment, so the first
// container re-created by an in-place update has the pod's IP again, and
// its health checks are those of its new spec, against that IP (the old
// check's path is gone from the new container: the old check would kill
// the pod). KILL then leaves no container and no IP reservation.
func TestInPlaceUpdateCNIKeepsIP(t *testing.T) {
	c := podtest.Docker(t)
	var ipamDir string
	rt, cfg := newRuntime(t, c, func(cfg *Config) { ipamDir = withCNI(t, cfg) })
	rep := newReporter(t)
	web, side := cniPod()
	rt.Launch(context.Background(), []executor.Task{web, side}, rep)
	before := containerInfo(t, rep.awaitState(web.ID(), taskstate.Running))
	rep.awaitState(side.ID(), taskstate.Running)
	rep.awaitHealthy(web.ID(), true)
	if net.ParseIP(before.IPAddress) == nil {
		t.Fatalf("web has no CNI address: %+v", before)
	}
	u := proto.GroupUpdate{Revision: 2, Mode: proto.UpdateInPlace, Tasks: []proto.TaskUpdate{
		nextSpec(web, 2, func(s *proto.TaskSpec) {
			s.Container.Args = []string{"-c", "mkdir -p /www && echo ready > /www/ready && exec httpd -f -p 8080 -h /www"}
			next := web.Spec.HealthChecks[0]
			next.Path = "/ready"
			s.HealthChecks = []proto.HealthCheck{next}
		}),
		nextSpec(side, 2, nil),
	}}
	if res := sendUpdate(rt, web.ID(), u); !res.OK {
		t.Fatalf("update: %+v", res)
	}
	recreated := rep.await(web.ID(), "re-created", revisionReport(t, 2, "container re-created"))
	seen := slices.IndexFunc(rep.snapshot(), func(r executor.Report) bool { return r.TaskID == web.ID() && r.Message == recreated.Message }) + 1
	after := containerInfo(t, recreated)
	if after.ID == before.ID || after.IPAddress != before.IPAddress || after.NetworkMode != "cni" {
		t.Errorf("web: before %+v after %+v, want a new container with the same CNI address", before, after)
	}
	if recreated.Healthy == nil || *recreated.Healthy {
		t.Errorf("re-created web reported healthy %v, want false until its checks pass", recreated.Healthy)
	}
	rep.awaitSince(seen, web.ID(), "healthy by the new check", func(r executor.Report) bool { return r.Healthy != nil && *r.Healthy })
	time.Sleep(time.Second) // five check intervals: the old check would have failed three times
	if st := rt.Tasks(); st[web.ID()] != taskstate.Running {
		t.Fatalf("web %s after the update, want running", st[web.ID()])
	}
	rep.Report(executor.Report{TaskID: web.ID(), State: taskstate.Killing})
	rt.Kill(web.ID(), time.Second)
	rep.awaitState(side.ID(), taskstate.Killed)
	waitDone(t, rt)
	if left := labelledContainers(t, c, cfg.Labels[podtest.Label]); len(left) != 0 {
		t.Errorf("%d containers left", len(left))
	}
	if ips := reservationsIn(t, ipamDir); len(ips) != 0 {
		t.Errorf("host-local reservations left: %v", ips)
	}
}

// A new container that cannot start fails the update: the old container
// runs again (same container), every task keeps its revision, the error
// names the task and the cause, and the task is healthy again.
func TestInPlaceUpdateFailureKeepsOldRevision(t *testing.T) {
	c := podtest.Docker(t)
	rt, _ := newRuntime(t, c, nil)
	rep := newReporter(t)
	web, side, _ := bridgePod(t)
	web.Spec.Instance.Version, side.Spec.Instance.Version = 4, 4
	rt.Launch(context.Background(), []executor.Task{web, side}, rep)
	rep.awaitState(web.ID(), taskstate.Running)
	before := containerInfo(t, rep.awaitState(side.ID(), taskstate.Running))
	u := proto.GroupUpdate{Revision: 5, Mode: proto.UpdateInPlace, Tasks: []proto.TaskUpdate{
		nextSpec(web, 5, nil),
		nextSpec(side, 5, func(s *proto.TaskSpec) { s.Container.Command, s.Container.Args = "/no/such/binary", nil }),
	}}
	res := sendUpdate(rt, web.ID(), u)
	if res.OK || !strings.Contains(res.Error, `task "side.0"`) || !strings.Contains(res.Error, "/no/such/binary") || !strings.Contains(res.Error, "the old containers run again") {
		t.Fatalf("update with a bad command: %+v, want an error naming the task and the cause", res)
	}
	back := rep.await(side.ID(), "healthy again at revision 4", func(r executor.Report) bool {
		return revisionReport(t, 4, "failed, running revision 4")(r) && r.Healthy != nil && *r.Healthy
	})
	if info := containerInfo(t, back); info.ID != before.ID || info.Status != "running" {
		t.Errorf("side after the failed update: %+v, want the old container %s running", info, before.ID)
	}
	g := rt.group(web.ID()).getPod()
	for _, task := range []executor.Task{web, side} {
		if info, _ := g.Info(task.ID()); info.Revision != 4 {
			t.Errorf("task %q at revision %d after the failed update, want 4", task.ID(), info.Revision)
		}
	}
	time.Sleep(300 * time.Millisecond) // an exit of the old container would fail the pod
	if st := rt.Tasks(); st[web.ID()] != taskstate.Running || st[side.ID()] != taskstate.Running {
		t.Errorf("tasks %v after the failed update, want running", st)
	}
}

// A KILL, or the executor's shutdown, during the grace period ends the
// update before anything restarted: the result says so, the pod is killed
// and nothing is left.
func TestKillDuringInPlaceUpdate(t *testing.T) {
	for _, stop := range []string{"kill", "shutdown"} {
		t.Run(stop, func(t *testing.T) {
			c := podtest.Docker(t)
			clock := clockwork.NewFakeClock()
			rt, cfg := newRuntime(t, c, func(cfg *Config) { cfg.Clock = clock })
			rep := newReporter(t)
			web, side, _ := bridgePod(t)
			web.Spec.Container.Args = []string{"-c", "mkdir -p /www; " + trapped("httpd -f -p 8080 -h /www")}
			side.Spec.Container.Args = []string{"-c", trapped("sleep 100000")}
			rt.Launch(context.Background(), []executor.Task{web, side}, rep)
			rep.awaitState(side.ID(), taskstate.Running)
			u := proto.GroupUpdate{Revision: 2, Mode: proto.UpdateInPlace, GracePeriodSeconds: 60, Tasks: []proto.TaskUpdate{
				nextSpec(web, 2, func(s *proto.TaskSpec) { s.Env = []proto.EnvVar{{Name: "MODE", Value: "x"}} }),
				nextSpec(side, 2, nil),
			}}
			result := updateAsync(rt, web.ID(), u)
			rep.awaitHealthy(web.ID(), false)
			if stop == "kill" {
				rep.Report(executor.Report{TaskID: web.ID(), State: taskstate.Killing})
				rt.Kill(web.ID(), time.Second)
			} else {
				go rt.Shutdown(time.Second)
			}
			if res := awaitResult(t, result); res.OK || !strings.Contains(res.Error, "killed or failed before its containers restarted") {
				t.Errorf("update: %+v", res)
			}
			for _, task := range []executor.Task{web, side} {
				rep.awaitState(task.ID(), taskstate.Killed)
			}
			waitDone(t, rt)
			if left := labelledContainers(t, c, cfg.Labels[podtest.Label]); len(left) != 0 {
				t.Errorf("%d containers left", len(left))
			}
		})
	}
}

// HotPatchUpdate restarts nothing: same container, same process. The files
// the new image changed are in the running container, those it deleted
// are gone, a file the process wrote is kept, limits and configmap files
// change, the reload signal reaches the process, and the data carries the
// new revision. A change that needs a restart (env, args) refuses the
// whole update, naming the fields, and changes nothing. A reload command
// that fails leaves the new files in place and the revision moved, and
// the result says so.
func TestHotPatchUpdate(t *testing.T) {
	c := podtest.Docker(t)
	podtest.CommitImage(t, c, "bcs-test/hotpatch:v1", map[string]string{
		"/app/conf.txt": "conf v1\n", "/app/old.txt": "old\n", "/app/dir/a": "a\n", "/app/same.txt": "same\n",
	})
	podtest.CommitImage(t, c, "bcs-test/hotpatch:v2", map[string]string{
		"/app/conf.txt": "conf v2\n", "/app/new.txt": "new\n", "/app/same.txt": "same\n",
	})
	rt, _ := newRuntime(t, c, nil)
	rep := newReporter(t)
	game := containerTask("game.0", "game", `echo state > /app/runtime.txt; trap 'echo hup >> /tmp/reloads' HUP; trap 'exit 0' TERM; while true; do sleep 0.1; done`)
	game.Spec.Container.Image = "bcs-test/hotpatch:v1"
	game.Spec.Instance.Version = 1
	game.Spec.Files = []proto.File{{Path: "/etc/game/game.conf", Content: []byte("level=1\n")}, {Path: "/etc/game/dropped.conf", Content: []byte("x\n")}}
	side := containerTask("side.0", "side", trapped("sleep 100000"))
	side.Spec.Instance.Version = 1
	rt.Launch(context.Background(), []executor.Task{game, side}, rep)
	before := containerInfo(t, rep.awaitState(game.ID(), taskstate.Running))
	sideBefore := containerInfo(t, rep.awaitState(side.ID(), taskstate.Running))
	exec := func(task executor.Task, script string) string {
		t.Helper()
		m := proto.Message{ID: "exec", Type: proto.MessageExec, TaskID: task.ID(), Command: []string{"sh", "-c", script}}
		return rt.Message(context.Background(), &m).Output
	}
	eventually(t, 10*time.Second, func() string {
		if got := exec(game, "cat /app/runtime.txt"); got != "state\n" {
			return "the process has not started: " + got
		}
		return ""
	})

	// Refused: env and args need a restart; nothing is touched.
	refused := proto.GroupUpdate{Revision: 2, Mode: proto.UpdateHotPatch, ReloadSignal: int(syscall.SIGHUP), Tasks: []proto.TaskUpdate{
		nextSpec(game, 2, func(s *proto.TaskSpec) {
			s.Container.Image = "bcs-test/hotpatch:v2"
			s.Env = []proto.EnvVar{{Name: "MODE", Value: "x"}}
			s.Container.Args = []string{"-c", "sleep 1"}
		}),
		nextSpec(side, 2, nil),
	}}
	if res := sendUpdate(rt, game.ID(), refused); res.OK || !strings.Contains(res.Error, `hot-patch of task "game.0" cannot change env, args: they need a restart (use InplaceUpdate)`) {
		t.Errorf("hot-patch changing env and args: %+v", res)
	}
	if got := exec(game, "cat /app/conf.txt; ls /app"); got != "conf v1\nconf.txt\ndir\nold.txt\nruntime.txt\nsame.txt\n" {
		t.Errorf("files after the refused hot-patch: %q", got)
	}
	if info, _ := rt.group(game.ID()).getPod().Info(game.ID()); info.Revision != 1 || info.ID != before.ID {
		t.Errorf("after the refused hot-patch: %+v", info)
	}

	u := proto.GroupUpdate{Revision: 2, Mode: proto.UpdateHotPatch, ReloadSignal: int(syscall.SIGHUP), Tasks: []proto.TaskUpdate{
		nextSpec(game, 2, func(s *proto.TaskSpec) {
			s.Container.Image = "bcs-test/hotpatch:v2"
			s.Files = []proto.File{{Path: "/etc/game/game.conf", Content: []byte("level=2\n")}}
			s.Resources.MemLimitMB = 96
		}),
		nextSpec(side, 2, nil),
	}}
	start := time.Now()
	if res := sendUpdate(rt, game.ID(), u); !res.OK {
		t.Fatalf("hot-patch: %+v", res)
	}
	t.Logf("hot-patch of one container (image, limits, files, signal): %v", time.Since(start))
	after := containerInfo(t, rep.await(game.ID(), "hot-patched", revisionReport(t, 2, "hot-patched to revision 2")))
	if after.ID != before.ID || after.Pid != before.Pid || inspectPid(t, c, before.ID) != before.Pid {
		t.Errorf("hot-patch restarted the container: before %+v after %+v", before, after)
	}
	if got := exec(game, "cat /app/conf.txt /app/new.txt /app/same.txt /app/runtime.txt /etc/game/game.conf; ls /app; test -e /etc/game/dropped.conf || echo dropped"); got != "conf v2\nnew\nsame\nstate\nlevel=2\nconf.txt\nnew.txt\nruntime.txt\nsame.txt\ndropped\n" {
		t.Errorf("files after the hot-patch: %q", got)
	}
	eventually(t, 10*time.Second, func() string {
		if got := exec(game, "cat /tmp/reloads"); got != "hup\n" {
			return "reload signal: " + got
		}
		return ""
	})
	if ins, err := c.InspectContainerWithOptions(docker.InspectContainerOptions{ID: before.ID}); err != nil || ins.HostConfig.Memory != 96<<20 {
		t.Errorf("memory limit after the hot-patch: %v", err)
	}
	sideAfter := containerInfo(t, rep.await(side.ID(), "side at revision 2", revisionReport(t, 2, "")))
	if sideAfter.ID != sideBefore.ID || sideAfter.Pid != sideBefore.Pid || strings.Contains(exec(side, "cat /tmp/reloads 2>/dev/null"), "hup") {
		t.Errorf("side after the hot-patch: %+v, want it untouched and not signalled", sideAfter)
	}

	// Back to v1 with a reload command that fails: the files are v1's,
	// the revision moves on, the result says both.
	back := proto.GroupUpdate{Revision: 3, Mode: proto.UpdateHotPatch, ReloadCommand: []string{"sh", "-c", "echo cmd >> /tmp/reload-cmd; exit 3"}, Tasks: []proto.TaskUpdate{
		nextSpec(game, 3, func(s *proto.TaskSpec) {
			s.Container.Image = "bcs-test/hotpatch:v1"
			s.Files = []proto.File{{Path: "/etc/game/game.conf", Content: []byte("level=2\n")}}
			s.Resources.MemLimitMB = 96
		}),
		nextSpec(side, 3, nil),
	}}
	res := sendUpdate(rt, game.ID(), back)
	if res.OK || !strings.Contains(res.Error, "applied") || !strings.Contains(res.Error, `reload of task "game.0"`) || !strings.Contains(res.Error, "exited with 3") {
		t.Errorf("hot-patch with a failing reload: %+v", res)
	}
	if got := exec(game, "cat /app/conf.txt /app/old.txt /app/dir/a /tmp/reload-cmd; ls /app"); got != "conf v1\nold\na\ncmd\nconf.txt\ndir\nold.txt\nruntime.txt\nsame.txt\n" {
		t.Errorf("files after the hot-patch back to v1: %q", got)
	}
	if info := containerInfo(t, rep.await(game.ID(), "revision 3", revisionReport(t, 3, "failed"))); info.ID != before.ID || info.Pid != before.Pid {
		t.Errorf("after the hot-patch back: %+v", info)
	}
}
