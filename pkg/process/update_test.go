package process_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/bcs-mesos/bcs-mesos/pkg/executor"
	"github.com/bcs-mesos/bcs-mesos/pkg/process"
	"github.com/bcs-mesos/bcs-mesos/pkg/taskstate"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// revise returns a copy of spec at revision, edited.
func revise(t *testing.T, spec *proto.TaskSpec, revision uint64, edit func(*proto.TaskSpec)) *proto.TaskSpec {
	t.Helper()
	data, err := spec.Encode()
	if err != nil {
		t.Fatal(err)
	}
	next, err := proto.DecodeTaskSpec(data)
	if err != nil {
		t.Fatal(err)
	}
	next.Instance.Version = revision
	if edit != nil {
		edit(next)
	}
	return next
}

// updateOf is the GroupUpdate moving tasks to revision in mode.
func updateOf(mode proto.UpdateMode, revision uint64, tasks ...groupTask) proto.GroupUpdate {
	u := proto.GroupUpdate{Revision: revision, Mode: mode}
	for _, gt := range tasks {
		u.Tasks = append(u.Tasks, proto.TaskUpdate{TaskID: gt.id, Spec: gt.spec})
	}
	return u
}

// update sends u as the update message naming taskID.
func (e *env) update(taskID string, u proto.GroupUpdate) proto.MessageResult {
	return e.rt.Message(context.Background(), &proto.Message{ID: "u", Type: proto.MessageUpdate, TaskID: taskID, Update: &u})
}

// sleeper is a foreground task of the ns-a/gamesvc instance at revision.
func (e *env) sleeper(name string, revision uint64) *proto.TaskSpec {
	return &proto.TaskSpec{Version: proto.Version, Instance: proto.Instance{Namespace: "ns-a", App: "gamesvc", Version: revision}, Name: name,
		Process: &proto.ProcessSpec{ProcName: "sleep", User: "nobody", WorkPath: filepath.Join(e.work, "ns-a.gamesvc.0", name),
			StartCmd: "exec sleep 600", StartGracePeriod: 0.2}}
}

// show prints reports for a failure: state, message, health and data.
func show(reports ...executor.Report) string {
	var b strings.Builder
	for _, r := range reports {
		healthy := "-"
		if r.Healthy != nil {
			healthy = strconv.FormatBool(*r.Healthy)
		}
		fmt.Fprintf(&b, "\n\t%s %s %q healthy=%s %s", r.TaskID, r.State, r.Message, healthy, r.Data)
	}
	return b.String()
}

func isUnhealthy(r executor.Report) bool { return r.Healthy != nil && !*r.Healthy }
func isHealthy(r executor.Report) bool   { return r.Healthy != nil && *r.Healthy }

func httpGet(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// InplaceUpdate of a two-task group: the changed task reports not ready,
// drains, stops through stop.sh and starts again with its new package,
// environment, configmap file and limits — a new pid on the same work
// path and port, revision 2 in its data — while the unchanged task keeps
// its process and only takes the revision. The same update again
// restarts nothing; Restart restarts both.
func TestInPlaceUpdate(t *testing.T) {
	e := newEnv(t, nil)
	srv := newPackageServer(t)
	port := freePort(t)
	game1 := e.seedSpec(srv.put("/repo/gamesvc-v1.tar.gz", seedPackage(t, member{Name: "gamesvc/VERSION", Body: "1\n"})), srv.user, srv.pwd, port)
	game1.Instance.Version = 1
	side1 := e.sleeper("sidecar", 1)
	e.launchGroup(t, groupTask{"gamesvc.0", game1}, groupTask{"sidecar.0", side1})
	running, at := e.rec.awaitState("gamesvc.0", taskstate.Running, 0)
	game := processInfo(t, running)
	e.rec.await("gamesvc healthy", at, isHealthy)
	sideRunning, _ := e.rec.awaitState("sidecar.0", taskstate.Running, 0)
	side := processInfo(t, sideRunning)
	if game.Revision != 1 || side.Revision != 1 {
		t.Fatalf("revisions at launch: %d, %d", game.Revision, side.Revision)
	}

	v2url := srv.put("/repo/gamesvc-v2.tar.gz", seedPackage(t, member{Name: "gamesvc/VERSION", Body: "2\n"}))
	game2 := revise(t, game1, 2, func(s *proto.TaskSpec) {
		s.Instance.TaskGroupID = "the-next-group"
		s.Process.URIs[0].Value = v2url
		s.Env = append(s.Env, proto.EnvVar{Name: "release", Value: "2"})
		s.Files[0].Content = []byte("level=10\n")
		s.Resources.MemLimitMB = 600
	})
	side2 := revise(t, side1, 2, func(s *proto.TaskSpec) { s.Instance.TaskGroupID = "the-next-group" })
	u := updateOf(proto.UpdateInPlace, 2, groupTask{"gamesvc.0", game2}, groupTask{"sidecar.0", side2})
	u.GracePeriodSeconds = 0.2
	from := e.rec.next()
	if res := e.update("sidecar.0", u); !res.OK {
		t.Fatalf("in-place update: %+v", res)
	}

	reports := e.rec.of("gamesvc.0", from)
	first := reports[0]
	if first.State != taskstate.Running || !isUnhealthy(first) || first.Message != "in-place update to revision 2: not ready, restarting in 200ms" ||
		processInfo(t, first).Pid != game.Pid || processInfo(t, first).Revision != 1 {
		t.Errorf("first report of the update: %s", show(first))
	}
	restarted, at := e.rec.await("gamesvc restarted", from, func(r executor.Report) bool {
		return r.TaskID == "gamesvc.0" && r.State == taskstate.Running && processInfo(t, r).Pid != game.Pid
	})
	now := processInfo(t, restarted)
	if now.Revision != 2 || now.WorkPath != game.WorkPath || now.Ports["http_port"] != port || now.Pid <= 0 {
		t.Errorf("after the in-place update: %+v", now)
	}
	if isRunning(game.Pid) {
		t.Errorf("the old server %d survived the in-place update", game.Pid)
	}
	e.rec.await("healthy on the same port again", at, func(r executor.Report) bool { return r.TaskID == "gamesvc.0" && isHealthy(r) })
	work := game1.Process.WorkPath
	for file, want := range map[string]string{"seen-version.txt": "2", "seen-release.txt": "2", "seen-conf.txt": "level=10", "stop.log": "stop"} {
		if got := readTrim(t, filepath.Join(work, file)); got != want {
			t.Errorf("%s: %q, want %q", file, got, want)
		}
	}
	mem := cgroupDirs("gamesvc.0", e)[0]
	if got := readTrim(t, filepath.Join(mem, "memory.limit_in_bytes")); got != strconv.Itoa(600<<20) {
		t.Errorf("memory limit after the update: %s", got)
	}
	if procs := readTrim(t, filepath.Join(mem, "cgroup.procs")); !strings.Contains(procs, strconv.Itoa(now.Pid)) {
		t.Errorf("new server %d not in the task cgroup: %q", now.Pid, procs)
	}
	sideReports := e.rec.of("sidecar.0", from)
	if len(sideReports) != 1 || sideReports[0].Healthy != nil || processInfo(t, sideReports[0]).Pid != side.Pid ||
		processInfo(t, sideReports[0]).Revision != 2 || !isRunning(side.Pid) {
		t.Errorf("the unchanged sidecar: %s", show(sideReports...))
	}

	// The same update again: every task reports revision 2 again, nothing
	// restarts.
	from = e.rec.next()
	if res := e.update("gamesvc.0", u); !res.OK {
		t.Fatalf("repeated update: %+v", res)
	}
	for id, pid := range map[string]int{"gamesvc.0": now.Pid, "sidecar.0": side.Pid} {
		again := e.rec.of(id, from)
		if len(again) != 1 || again[0].State != taskstate.Running || again[0].Healthy != nil ||
			processInfo(t, again[0]).Pid != pid || processInfo(t, again[0]).Revision != 2 {
			t.Errorf("%s after the repeated update: %s", id, show(again...))
		}
	}

	// Restart: every task restarts, changed or not.
	u = updateOf(proto.UpdateInPlace, 3, groupTask{"gamesvc.0", revise(t, game2, 3, nil)}, groupTask{"sidecar.0", revise(t, side2, 3, nil)})
	u.Restart = true
	from = e.rec.next()
	if res := e.update("gamesvc.0", u); !res.OK {
		t.Fatalf("restart update: %+v", res)
	}
	for id, pid := range map[string]int{"gamesvc.0": now.Pid, "sidecar.0": side.Pid} {
		reports := e.rec.of(id, from)
		last := reports[len(reports)-1]
		if !isUnhealthy(reports[0]) || processInfo(t, last).Pid == pid || processInfo(t, last).Revision != 3 || isRunning(pid) {
			t.Errorf("%s after the restart update: %s", id, show(reports...))
		}
	}
	if last := e.rec.of("sidecar.0", from); !isHealthy(last[len(last)-1]) {
		t.Errorf("the sidecar has no checks: healthy again at once, got %s", show(last...))
	}
	// Sent again, the restart is not repeated.
	restartedPids := map[string]int{}
	for _, id := range []string{"gamesvc.0", "sidecar.0"} {
		reports := e.rec.of(id, from)
		restartedPids[id] = processInfo(t, reports[len(reports)-1]).Pid
	}
	from = e.rec.next()
	if res := e.update("sidecar.0", u); !res.OK {
		t.Fatalf("repeated restart update: %+v", res)
	}
	for id, pid := range restartedPids {
		again := e.rec.of(id, from)
		if len(again) != 1 || again[0].Message != "revision 3 applied already" || processInfo(t, again[0]).Pid != pid || !isRunning(pid) {
			t.Errorf("%s after the repeated restart update: %s", id, show(again...))
		}
	}
}

// The grace period of an InplaceUpdate runs on the runtime's clock: the
// process runs until it is over, then restarts (healthy at once: no
// checks).
// A duplicate sent meanwhile answers with the same outcome, and one sent
// after it restarts nothing: one restart in all.
func TestInPlaceUpdateWaitsGracePeriod(t *testing.T) {
	clock := clockwork.NewFakeClock()
	e := newEnv(t, func(c *process.Config) { c.Clock, c.LivenessInterval = clock, time.Hour })
	ctx := t.Context()
	v1 := e.sleeper("drain", 1)
	v1.Process.StartGracePeriod = 1
	e.launch(t, "drain.0", v1)
	if err := clock.BlockUntilContext(ctx, 1); err != nil { // the start grace period
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	running, _ := e.rec.awaitState("drain.0", taskstate.Running, 0)
	oldPid := processInfo(t, running).Pid

	v2 := revise(t, v1, 2, func(s *proto.TaskSpec) { s.Env = []proto.EnvVar{{Name: "release", Value: "2"}} })
	u := updateOf(proto.UpdateInPlace, 2, groupTask{"drain.0", v2})
	u.GracePeriodSeconds = 30
	from := e.rec.next()
	results := make(chan proto.MessageResult, 2)
	go func() { results <- e.update("drain.0", u) }()
	notReady, _ := e.rec.await("not ready", from, isUnhealthy)
	if notReady.Message != "in-place update to revision 2: not ready, restarting in 30s" {
		t.Errorf("not-ready message %q", notReady.Message)
	}
	go func() { results <- e.update("drain.0", u) }()
	// Waiting: the liveness monitor and the grace period. Had the update
	// not waited, the old process would be gone by the time the new start
	// waited for its own grace period.
	if err := clock.BlockUntilContext(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if !isRunning(oldPid) {
		t.Fatalf("process %d stopped before the grace period began to run", oldPid)
	}
	clock.Advance(30*time.Second - time.Millisecond)
	if !isRunning(oldPid) || len(e.rec.of("drain.0", from)) != 1 {
		t.Fatalf("restarted before the grace period was over: %s", show(e.rec.of("drain.0", from)...))
	}
	clock.Advance(time.Millisecond)
	if err := clock.BlockUntilContext(ctx, 2); err != nil { // the new start's grace period
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	restarted, _ := e.rec.await("restarted", from, func(r executor.Report) bool { return processInfo(t, r).Pid != oldPid })
	info := processInfo(t, restarted)
	if restarted.State != taskstate.Running || !isHealthy(restarted) || info.Revision != 2 || isRunning(oldPid) {
		t.Errorf("after the grace period: %s", show(restarted))
	}
	for range 2 {
		if res := <-results; !res.OK {
			t.Errorf("update or its duplicate: %+v", res)
		}
	}
	from = e.rec.next()
	if res := e.update("drain.0", u); !res.OK {
		t.Fatalf("update once applied: %+v", res)
	}
	if again := e.rec.of("drain.0", from); len(again) != 1 || processInfo(t, again[0]).Pid != info.Pid || processInfo(t, again[0]).Revision != 2 {
		t.Errorf("update once applied: %s", show(again...))
	}
}

// Executor shutdown during the grace period of an InplaceUpdate kills the
// task at once; the update answers that it was interrupted and nothing
// restarted.
func TestShutdownDuringInPlaceGracePeriod(t *testing.T) {
	e := newEnv(t, nil)
	v1 := e.sleeper("drain", 1)
	e.launch(t, "drain.0", v1)
	running, _ := e.rec.awaitState("drain.0", taskstate.Running, 0)
	pid := processInfo(t, running).Pid
	u := updateOf(proto.UpdateInPlace, 2, groupTask{"drain.0", revise(t, v1, 2, func(s *proto.TaskSpec) { s.Process.StartCmd = "exec sleep 601" })})
	u.GracePeriodSeconds = 600
	from := e.rec.next()
	result := make(chan proto.MessageResult, 1)
	go func() { result <- e.update("drain.0", u) }()
	e.rec.await("not ready", from, isUnhealthy)
	start := time.Now()
	e.rt.Shutdown(2 * time.Second)
	if rep := e.rec.awaitTerminal("drain.0"); rep.State != taskstate.Killed || processInfo(t, rep).Revision != 1 {
		t.Errorf("after shutdown: %s", show(rep))
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("shutdown waited %v for the grace period", d)
	}
	if res := <-result; res.OK || !strings.Contains(res.Error, "interrupted") {
		t.Errorf("update result %+v", res)
	}
	if reports := e.rec.of("drain.0", from); len(reports) != 2 || isRunning(pid) {
		t.Errorf("reports since the update: %s", show(reports...))
	}
}

// A new startCmd that fails fails the task, naming the update; the
// scheduler relaunches it.
func TestInPlaceUpdateStartFailureFailsTask(t *testing.T) {
	e := newEnv(t, nil)
	v1 := e.sleeper("broken", 1)
	e.launch(t, "broken.0", v1)
	e.rec.awaitState("broken.0", taskstate.Running, 0)
	u := updateOf(proto.UpdateInPlace, 2, groupTask{"broken.0", revise(t, v1, 2, func(s *proto.TaskSpec) { s.Process.StartCmd = "exit 3" })})
	res := e.update("broken.0", u)
	if res.OK || !strings.Contains(res.Error, `task "broken.0" failed: in-place update to revision 2: start command exited with status 3`) {
		t.Errorf("update result %+v", res)
	}
	rep := e.rec.awaitTerminal("broken.0")
	if rep.State != taskstate.Failed || rep.Reason == nil || *rep.Reason != mesos.REASON_CONTAINER_LAUNCH_FAILED ||
		!strings.HasPrefix(rep.Message, "in-place update to revision 2: start command exited with status 3") {
		t.Errorf("%s", show(rep))
	}
}

// HotPatchUpdate: the new package is unpacked over the old one, the
// configmap file rewritten, the limits changed and the new reloadCmd
// run, all under the same process, which reports revision 2. A failing
// reloadCmd is an error, yet the revision moves on; a change that needs
// a restart refuses the update and changes nothing.
func TestHotPatch(t *testing.T) {
	e := newEnv(t, nil)
	srv := newPackageServer(t)
	port := freePort(t)
	v1 := e.seedSpec(srv.put("/repo/gamesvc-v1.tar.gz", seedPackage(t, member{Name: "gamesvc/VERSION", Body: "1\n"})), srv.user, srv.pwd, port)
	v1.Instance.Version = 1
	e.launch(t, "gamesvc.0", v1)
	running, at := e.rec.awaitState("gamesvc.0", taskstate.Running, 0)
	pid := processInfo(t, running).Pid
	e.rec.await("healthy", at, isHealthy)

	v2url := srv.put("/repo/gamesvc-v2.tar.gz", seedPackage(t, member{Name: "gamesvc/VERSION", Body: "2\n"}))
	v2 := revise(t, v1, 2, func(s *proto.TaskSpec) {
		s.Process.URIs[0].Value = v2url
		s.Files[0].Content = []byte("level=10\n")
		s.Resources.CPULimit = 1
		s.Process.ReloadCmd += " && echo patched > patched.txt"
		s.HealthChecks[0].IntervalSeconds = 0.3
	})
	from := e.rec.next()
	if res := e.update("gamesvc.0", updateOf(proto.UpdateHotPatch, 2, groupTask{"gamesvc.0", v2})); !res.OK {
		t.Fatalf("hot-patch: %+v", res)
	}
	patched, _ := e.rec.await("patched", from, func(r executor.Report) bool { return strings.HasPrefix(r.Message, "hot-patch") })
	if info := processInfo(t, patched); patched.Message != "hot-patch to revision 2: applied" || info.Pid != pid || info.Revision != 2 {
		t.Errorf("hot-patch report %s", show(patched))
	}
	work := v1.Process.WorkPath
	cpu := cgroupDirs("gamesvc.0", e)[1]
	for file, want := range map[string]string{
		filepath.Join(work, "VERSION"): "2", filepath.Join(work, "conf/game.conf"): "level=10",
		filepath.Join(work, "patched.txt"): "patched", filepath.Join(cpu, "cpu.cfs_quota_us"): "100000",
	} {
		if got := readTrim(t, file); got != want {
			t.Errorf("%s: %q, want %q", file, got, want)
		}
	}
	// The reloadCmd signals the server and returns: it counts the reload
	// when it has taken the signal.
	var got string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if got = httpGet(t, fmt.Sprintf("http://127.0.0.1:%d/", port)); strings.Contains(got, "reloads=1") || time.Now().After(deadline) {
			break
		}
	}
	if !strings.Contains(got, "reloads=1") || !isRunning(pid) {
		t.Errorf("the server after the hot-patch: %q", got)
	}
	for _, r := range e.rec.of("gamesvc.0", from) {
		if isUnhealthy(r) || r.State != taskstate.Running {
			t.Errorf("hot-patch report %s", show(r))
		}
	}

	v3 := revise(t, v2, 3, func(s *proto.TaskSpec) { s.Process.ReloadCmd = "echo broken; exit 7" })
	from = e.rec.next()
	res := e.update("gamesvc.0", updateOf(proto.UpdateHotPatch, 3, groupTask{"gamesvc.0", v3}))
	if res.OK || !strings.Contains(res.Error, "the files are in place and the task runs revision 3, but reloadCmd failed: exit status 7: broken") {
		t.Errorf("failing reloadCmd: %+v", res)
	}
	if reports := e.rec.of("gamesvc.0", from); len(reports) != 1 || processInfo(t, reports[0]).Revision != 3 {
		t.Errorf("after a failing reloadCmd: %s", show(reports...))
	}

	v4url := srv.put("/repo/gamesvc-v4.tar.gz", seedPackage(t, member{Name: "gamesvc/VERSION", Body: "4\n"}))
	v4 := revise(t, v3, 4, func(s *proto.TaskSpec) {
		s.Process.URIs[0].Value = v4url
		s.Env = append(s.Env, proto.EnvVar{Name: "release", Value: "4"})
		s.Process.StartCmd += " --verbose"
	})
	from = e.rec.next()
	res = e.update("gamesvc.0", updateOf(proto.UpdateHotPatch, 4, groupTask{"gamesvc.0", v4}))
	want := `update to revision 4 refused, nothing changed: hot-patch of task "gamesvc.0" cannot change env, startCmd: they need a restart (use InplaceUpdate)`
	if res.OK || !strings.HasPrefix(res.Error, want) {
		t.Errorf("refused hot-patch: %+v", res)
	}
	if got := readTrim(t, filepath.Join(work, "VERSION")); got != "2" || !isRunning(pid) || len(e.rec.of("gamesvc.0", from)) != 0 || srv.downloads("/repo/gamesvc-v4.tar.gz") != 0 {
		t.Errorf("the refused hot-patch changed something: VERSION %q, reports %s", got, show(e.rec.of("gamesvc.0", from)...))
	}
}

// Updates that cannot apply are refused whole, naming the task and the
// field, and change nothing; a task that is not running is a conflict.
func TestUpdateRefusals(t *testing.T) {
	e := newEnv(t, nil)
	a1, b1 := e.sleeper("a", 1), e.sleeper("b", 1)
	e.launchGroup(t, groupTask{"a.0", a1}, groupTask{"b.0", b1})
	ra, _ := e.rec.awaitState("a.0", taskstate.Running, 0)
	rb, _ := e.rec.awaitState("b.0", taskstate.Running, 0)
	pids := []int{processInfo(t, ra).Pid, processInfo(t, rb).Pid}
	a2 := func(edit func(*proto.TaskSpec)) groupTask { return groupTask{"a.0", revise(t, a1, 2, edit)} }
	b2 := groupTask{"b.0", revise(t, b1, 2, nil)}
	restart := updateOf(proto.UpdateHotPatch, 2, a2(nil), b2)
	restart.Restart = true
	from := e.rec.next()
	for _, tc := range []struct {
		name string
		u    proto.GroupUpdate
		want string
	}{
		{"unknown mode", updateOf("Rolling", 2, a2(nil), b2), `mode "Rolling": want InPlace or HotPatch`},
		{"task missing", updateOf(proto.UpdateInPlace, 2, a2(nil)), `tasks: task "b.0" of the group is missing`},
		{"stranger", updateOf(proto.UpdateInPlace, 2, a2(nil), b2, groupTask{"c.0", e.sleeper("c", 2)}), `tasks: task "c.0" is not in this group`},
		{"spec of another revision", updateOf(proto.UpdateInPlace, 2, a2(func(s *proto.TaskSpec) { s.Instance.Version = 3 }), b2),
			`tasks: task "a.0": instance.version 3 is not the update's revision 2`},
		{"work path", updateOf(proto.UpdateInPlace, 2, a2(func(s *proto.TaskSpec) { s.Process.WorkPath += "-new" }), b2),
			`update of task "a.0" cannot change workPath: they need a new launch`},
		{"unknown user", updateOf(proto.UpdateInPlace, 2, a2(func(s *proto.TaskSpec) { s.Process.User = "no-such-user-bcs" }), b2),
			`task "a.0": user "no-such-user-bcs"`},
		{"hot-patch restart", restart, "restart: a hot-patch restarts nothing"},
		{"hot-patch of the user", updateOf(proto.UpdateHotPatch, 2, a2(func(s *proto.TaskSpec) { s.Process.User = "root" }), b2),
			`hot-patch of task "a.0" cannot change user: they need a restart (use InplaceUpdate)`},
	} {
		res := e.update("a.0", tc.u)
		if res.OK || !strings.HasPrefix(res.Error, "update to revision 2 refused, nothing changed: ") || !strings.Contains(res.Error, tc.want) {
			t.Errorf("%s: %+v, want %q", tc.name, res, tc.want)
		}
	}
	if res := e.rt.Message(context.Background(), &proto.Message{Type: proto.MessageUpdate, TaskID: "a.0"}); res.OK || !strings.Contains(res.Error, "without an update") {
		t.Errorf("update message without an update: %+v", res)
	}
	for i, id := range []string{"a.0", "b.0"} {
		if reports := e.rec.of(id, from); len(reports) != 0 || !isRunning(pids[i]) {
			t.Errorf("%s after refused updates: %s", id, show(reports...))
		}
	}

	e.rt.Kill("b.0", time.Second)
	e.rec.awaitTerminal("b.0")
	from = e.rec.next()
	res := e.update("a.0", updateOf(proto.UpdateInPlace, 2, a2(nil), b2))
	if res.OK || !strings.Contains(res.Error, `update: task "b.0" is not running: conflict`) || len(e.rec.of("a.0", from)) != 0 {
		t.Errorf("update of a group with a killed task: %+v", res)
	}
}
