package process_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/bcs-mesos/bcs-mesos/pkg/egress"
	"github.com/bcs-mesos/bcs-mesos/pkg/executor"
	"github.com/bcs-mesos/bcs-mesos/pkg/process"
	"github.com/bcs-mesos/bcs-mesos/pkg/taskstate"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

func processInfo(t *testing.T, rep executor.Report) proto.ProcessInfo {
	t.Helper()
	var info proto.ProcessInfo
	if err := json.Unmarshal(rep.Data, &info); err != nil {
		t.Fatalf("TaskStatus.data %q: %v", rep.Data, err)
	}
	return info
}

func cgroupDirs(id string, e *env) []string {
	return []string{
		filepath.Join("/sys/fs/cgroup/memory", e.cgroups.Parent, id),
		filepath.Join("/sys/fs/cgroup/cpu", e.cgroups.Parent, id),
	}
}

func readTrim(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// The seed 000 process example end to end on the runtime: package with
// basic auth, extracted into outputDir, started as nobody (a daemonising
// start.sh writing pidFile), procName checked, limits in the task's
// cgroup, HTTP health check on the named port, reload, restart (stop +
// start without restartCmd), kill through stop.sh within the grace
// period, cgroup removed.
func TestSeedProcessLifecycle(t *testing.T) {
	e := newEnv(t, nil)
	srv := newPackageServer(t)
	url := srv.put("/repo/gamesvc-v1.tar.gz", seedPackage(t))
	port := freePort(t)
	spec := e.seedSpec(url, srv.user, srv.pwd, port)
	e.launch(t, "gamesvc.0", spec)

	e.rec.awaitState("gamesvc.0", taskstate.Starting, 0)
	running, at := e.rec.awaitState("gamesvc.0", taskstate.Running, 0)
	info := processInfo(t, running)
	if info.Pid <= 0 || info.ProcName != "gamesvr" || info.WorkPath != spec.Process.WorkPath || info.Ports["http_port"] != port || info.StartedAt.IsZero() {
		t.Errorf("ProcessInfo %+v", info)
	}
	pidInFile, _ := strconv.Atoi(readTrim(t, spec.Process.PidFile))
	if pidInFile != info.Pid {
		t.Errorf("pid %d, pid file %d", info.Pid, pidInFile)
	}
	if uid := uidOf(t, info.Pid); uid != "65534" {
		t.Errorf("server runs as uid %s, want nobody", uid)
	}
	work := spec.Process.WorkPath
	if got := readTrim(t, filepath.Join(work, "started-as.txt")); got != "65534" {
		t.Errorf("start.sh ran as %s", got)
	}
	if got := readTrim(t, filepath.Join(work, "seen-conf.txt")); got != "level=9" {
		t.Errorf("configmap file as seen by the process: %q", got)
	}
	// Limits: 2 cores as a CFS quota, 500 MB of memory, in the task's cgroup.
	mem, cpu := cgroupDirs("gamesvc.0", e)[0], cgroupDirs("gamesvc.0", e)[1]
	if got := readTrim(t, filepath.Join(cpu, "cpu.cfs_quota_us")); got != "200000" {
		t.Errorf("cfs quota %s", got)
	}
	if got := readTrim(t, filepath.Join(mem, "memory.limit_in_bytes")); got != strconv.Itoa(500<<20) {
		t.Errorf("memory limit %s", got)
	}
	if procs := readTrim(t, filepath.Join(mem, "cgroup.procs")); !strings.Contains(procs, strconv.Itoa(info.Pid)) {
		t.Errorf("server %d not in the task cgroup: %q", info.Pid, procs)
	}
	healthy, at := e.rec.await("healthy", at, func(r executor.Report) bool { return r.Healthy != nil && *r.Healthy })
	if healthy.State != taskstate.Running || healthy.Reason == nil || *healthy.Reason != mesos.REASON_TASK_HEALTH_CHECK_STATUS_UPDATED {
		t.Errorf("healthy report %+v", healthy)
	}

	res := e.rt.Message(context.Background(), &proto.Message{ID: "m1", Type: proto.MessageReload, TaskID: "gamesvc.0"})
	if !res.OK || !strings.Contains(res.Output, fmt.Sprintf("reload-ok pid=%d port=%d", info.Pid, port)) {
		t.Errorf("reload %+v", res)
	}

	res = e.rt.Message(context.Background(), &proto.Message{ID: "m2", Type: proto.MessageRestart, TaskID: "gamesvc.0"})
	if !res.OK {
		t.Fatalf("restart %+v", res)
	}
	again, at := e.rec.awaitState("gamesvc.0", taskstate.Running, at+1)
	newInfo := processInfo(t, again)
	if newInfo.Pid == info.Pid || newInfo.Pid <= 0 {
		t.Errorf("restart kept pid %d", newInfo.Pid)
	}
	if isRunning(info.Pid) {
		t.Errorf("old server %d survived the restart", info.Pid)
	}
	if got := readTrim(t, filepath.Join(work, "stop.log")); got != "stop" {
		t.Errorf("restart did not run stop.sh: %q", got)
	}
	e.rec.await("healthy after restart", at, func(r executor.Report) bool { return r.Healthy != nil && *r.Healthy })

	start := time.Now()
	e.rt.Kill("gamesvc.0", 2*time.Second)
	killed := e.rec.awaitTerminal("gamesvc.0")
	if killed.State != taskstate.Killed {
		t.Fatalf("after kill: %+v", killed)
	}
	if d := time.Since(start); d >= 2*time.Second {
		t.Errorf("stop.sh stops the server at once, yet the kill took %v", d)
	}
	if got := readTrim(t, filepath.Join(work, "stop.log")); got != "stop\nstop" {
		t.Errorf("stop.log %q", got)
	}
	if isRunning(newInfo.Pid) {
		t.Errorf("server %d survived the kill", newInfo.Pid)
	}
	for _, d := range cgroupDirs("gamesvc.0", e) {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("cgroup %s left behind (%v)", d, err)
		}
	}
	if n := srv.downloads("/repo/gamesvc-v1.tar.gz"); n != 1 {
		t.Errorf("%d downloads", n)
	}
}

// A start script that daemonises and forks children, one of them in a
// new session (outside the process group), with no stopCmd: the kill
// (SIGTERM, grace, SIGKILL to the group and the cgroup) leaves no
// process behind, even ones that ignore SIGTERM.
func TestKillCleansUpDaemonChildren(t *testing.T) {
	e := newEnv(t, nil)
	dir := e.workDir("daemon")
	pidFile := filepath.Join(e.runDir("daemon"), "daemon.pid")
	marker := fmt.Sprintf("77%d", time.Now().UnixNano()%100000)
	start := fmt.Sprintf(`ln -sf "$(command -v sleep)" ./gamesvr
( trap '' TERM; sleep %[1]s1 & sleep %[1]s2 & setsid sleep %[1]s3 & exec ./gamesvr %[1]s4 ) &
echo $! > %[2]s`, marker, pidFile)
	spec := &proto.TaskSpec{Version: proto.Version, Name: "daemon", Instance: instanceOf("daemon"), Process: &proto.ProcessSpec{
		ProcName: "gamesvr", User: "nobody", WorkPath: dir, PidFile: pidFile, StartCmd: start, StartGracePeriod: 0.3,
	}}
	e.launch(t, "daemon.0", spec)
	e.rec.awaitState("daemon.0", taskstate.Running, 0)
	if pids := markerPids(marker); len(pids) != 4 {
		t.Fatalf("want 4 processes with marker, got %v", pids)
	}
	e.rt.Kill("daemon.0", 300*time.Millisecond)
	if rep := e.rec.awaitTerminal("daemon.0"); rep.State != taskstate.Killed {
		t.Fatalf("%+v", rep)
	}
	if pids := markerPids(marker); len(pids) != 0 {
		t.Errorf("orphans survived the kill: %v", pids)
	}
}

// Kill grace period: without stopCmd the process gets SIGTERM, and
// SIGKILL only when it ignores SIGTERM for the grace period.
func TestKillGracePeriod(t *testing.T) {
	e := newEnv(t, nil)
	spec := &proto.TaskSpec{Version: proto.Version, Name: "stubborn", Instance: instanceOf("stubborn"), Process: &proto.ProcessSpec{
		ProcName: "sh", WorkPath: e.workDir("stubborn"), StartGracePeriod: 0.2,
		StartCmd: `trap 'echo term >> term.log' TERM; while :; do sleep 0.05; done`,
	}}
	e.launch(t, "stubborn.0", spec)
	e.rec.awaitState("stubborn.0", taskstate.Running, 0)
	start := time.Now()
	e.rt.Kill("stubborn.0", 700*time.Millisecond)
	e.rec.awaitTerminal("stubborn.0")
	if d := time.Since(start); d < 700*time.Millisecond || d > 3*time.Second {
		t.Errorf("kill took %v, want the 700ms grace period", d)
	}
	if got := readTrim(t, filepath.Join(spec.Process.WorkPath, "term.log")); got != "term" {
		t.Errorf("SIGTERM not delivered first: %q", got)
	}
}

// Download failure → TASK_FAILED naming the URL and the HTTP status;
// credentials appear nowhere.
func TestDownloadFailureNamesURLNotCredentials(t *testing.T) {
	e := newEnv(t, nil)
	srv := newPackageServer(t)
	url := srv.put("/repo/gamesvc-v1.tar.gz", seedPackage(t))
	spec := e.seedSpec(url, srv.user, "wrong-password-xyz", freePort(t))
	e.launch(t, "gamesvc.0", spec)
	rep := e.rec.awaitTerminal("gamesvc.0")
	if rep.State != taskstate.Failed || rep.Reason == nil || *rep.Reason != mesos.REASON_CONTAINER_LAUNCH_FAILED {
		t.Fatalf("%+v", rep)
	}
	if !strings.Contains(rep.Message, url) || !strings.Contains(rep.Message, "401") {
		t.Errorf("message %q lacks URL or status", rep.Message)
	}
	for _, secret := range []string{"wrong-password-xyz", srv.user} {
		if strings.Contains(rep.Message, secret) {
			t.Errorf("message %q leaks %q", rep.Message, secret)
		}
	}
}

// After startGracePeriod the pid in pidFile must run as procName.
func TestWrongProcNameFails(t *testing.T) {
	e := newEnv(t, nil)
	pidFile := filepath.Join(e.runDir("wrong"), "app.pid")
	spec := &proto.TaskSpec{Version: proto.Version, Name: "wrong", Instance: instanceOf("wrong"), Process: &proto.ProcessSpec{
		ProcName: "gamesvr", WorkPath: e.workDir("wrong"), PidFile: pidFile, StartGracePeriod: 0.2,
		StartCmd: "sleep 30 & printf '%s\\n' $! > " + pidFile,
	}}
	e.launch(t, "wrong.0", spec)
	rep := e.rec.awaitTerminal("wrong.0")
	if rep.State != taskstate.Failed || !strings.Contains(rep.Message, `"sleep"`) || !strings.Contains(rep.Message, `not procName "gamesvr"`) {
		t.Errorf("%+v", rep)
	}
}

// A start command whose own processes have not written the pid file, or
// not exec'd procName, by the end of startGracePeriod (a busy machine)
// gets another one, and one that has not exited yet is waited for: it
// runs.
func TestLateStartWithinASecondGracePeriod(t *testing.T) {
	for name, cmd := range map[string]string{
		"late-exec":          "sh -c 'sleep 0.7; exec sleep 30' & printf '%s\\n' $! > PIDFILE",
		"late-pidfile":       "sh -c 'sleep 0.7; printf \"%s\\n\" $$ > PIDFILE; exec sleep 30' &",
		"slow-start-command": "sleep 1.5; sh -c 'exec sleep 30' & printf '%s\\n' $! > PIDFILE",
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, nil)
			pidFile := filepath.Join(e.runDir(name), "app.pid")
			spec := &proto.TaskSpec{Version: proto.Version, Name: name, Instance: instanceOf(name), Process: &proto.ProcessSpec{
				ProcName: "sleep", WorkPath: e.workDir(name), PidFile: pidFile, StartGracePeriod: 0.5,
				StartCmd: strings.ReplaceAll(cmd, "PIDFILE", pidFile),
			}}
			e.launch(t, name+".0", spec)
			if rep, _ := e.rec.awaitState(name+".0", taskstate.Running, 0); rep.State != taskstate.Running {
				t.Errorf("%+v", rep)
			}
		})
	}
}

// A start command that neither exits nor writes its pid file fails the
// launch once CommandTimeout has passed, naming why.
func TestHungStartCommandFails(t *testing.T) {
	e := newEnv(t, func(c *process.Config) { c.CommandTimeout = time.Second })
	pidFile := filepath.Join(e.runDir("hung"), "app.pid")
	spec := &proto.TaskSpec{Version: proto.Version, Name: "hung", Instance: instanceOf("hung"), Process: &proto.ProcessSpec{
		ProcName: "sleep", WorkPath: e.workDir("hung"), PidFile: pidFile, StartGracePeriod: 0.2, StartCmd: "sleep 30",
	}}
	e.launch(t, "hung.0", spec)
	rep := e.rec.awaitTerminal("hung.0")
	if rep.State != taskstate.Failed || !strings.Contains(rep.Message, "the start command still runs 1s later") || !strings.Contains(rep.Message, "no such file") {
		t.Errorf("%+v", rep)
	}
}

// A foreground process that dies is TASK_FAILED with its exit code in
// TaskStatus.data.
func TestForegroundDeathReportsExitCode(t *testing.T) {
	e := newEnv(t, nil)
	spec := &proto.TaskSpec{Version: proto.Version, Name: "fg", Instance: instanceOf("fg"), Process: &proto.ProcessSpec{
		ProcName: "sh", WorkPath: e.workDir("fg"), StartGracePeriod: 0.2, StartCmd: "sleep 0.5; exit 3",
	}}
	e.launch(t, "fg.0", spec)
	e.rec.awaitState("fg.0", taskstate.Running, 0)
	rep := e.rec.awaitTerminal("fg.0")
	info := processInfo(t, rep)
	if rep.State != taskstate.Failed || info.ExitCode == nil || *info.ExitCode != 3 || !strings.Contains(rep.Message, "exited with status 3") {
		t.Errorf("%+v %+v", rep, info)
	}
}

// limits.memory is enforced by the task's memory cgroup: a process that
// grows beyond it is OOM-killed and the task fails with
// REASON_CONTAINER_LIMITATION_MEMORY.
func TestMemoryLimitKill(t *testing.T) {
	e := newEnv(t, nil)
	spec := &proto.TaskSpec{Version: proto.Version, Name: "hog", Instance: instanceOf("hog"), Process: &proto.ProcessSpec{
		ProcName: "sh", WorkPath: e.workDir("hog"), StartGracePeriod: 0.2,
		StartCmd: "sleep 0.4; head -c 200000000 /dev/zero | tail",
	}, Resources: proto.Resources{MemLimitMB: 32}}
	e.launch(t, "hog.0", spec)
	e.rec.awaitState("hog.0", taskstate.Running, 0)
	rep := e.rec.awaitTerminal("hog.0")
	if rep.State != taskstate.Failed || rep.Reason == nil || *rep.Reason != mesos.REASON_CONTAINER_LIMITATION_MEMORY || !strings.Contains(rep.Message, "memory limit of 32 MB") {
		t.Errorf("%+v", rep)
	}
}

// Seed 000 health checks: after consecutiveFailures failed checks the
// task is killed and reported TASK_FAILED, unhealthy, with the reason.
func TestHealthCheckKillsAfterFailures(t *testing.T) {
	e := newEnv(t, nil)
	closed := freePort(t)
	spec := &proto.TaskSpec{Version: proto.Version, Name: "sick", Instance: instanceOf("sick"), Process: &proto.ProcessSpec{
		ProcName: "sleep", WorkPath: e.workDir("sick"), StartGracePeriod: 0.1, StartCmd: "exec sleep 60",
	}, Ports: []proto.Port{{Name: "metric_port", HostPort: closed}},
		HealthChecks:           []proto.HealthCheck{{Type: "TCP", PortName: "metric_port", IntervalSeconds: 0.05, TimeoutSeconds: 0.5, ConsecutiveFailures: 3}},
		KillGracePeriodSeconds: 0.2}
	e.launch(t, "sick.0", spec)
	unhealthy, _ := e.rec.await("unhealthy", 0, func(r executor.Report) bool { return r.Healthy != nil && !*r.Healthy && r.State == taskstate.Running })
	if !strings.Contains(unhealthy.Message, fmt.Sprintf("connect 127.0.0.1:%d", closed)) {
		t.Errorf("unhealthy message %q", unhealthy.Message)
	}
	rep := e.rec.awaitTerminal("sick.0")
	if rep.State != taskstate.Failed || rep.Reason == nil || *rep.Reason != mesos.REASON_TASK_HEALTH_CHECK_STATUS_UPDATED ||
		rep.Healthy == nil || *rep.Healthy || !strings.Contains(rep.Message, "failed 3 times in a row") {
		t.Errorf("%+v", rep)
	}
}

// A process's HTTP and TCP checks may name any port of the
// agent's address, declared or not, but never the control plane: its own
// agent's API (Config.AgentEndpoint) and the endpoints its spec's egress
// policy refuses fail the check without connecting, naming the rule.
func TestHealthChecksSpareTheControlPlane(t *testing.T) {
	hits := map[int]*atomic.Int32{}
	serve := func() int {
		var n atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { n.Add(1) }))
		t.Cleanup(srv.Close)
		port := srv.Listener.Addr().(*net.TCPAddr).Port
		hits[port] = &n
		return port
	}
	agent, master, undeclared := serve(), serve(), serve()
	e := newEnv(t, func(c *process.Config) { c.AgentEndpoint = fmt.Sprintf("127.0.0.1:%d", agent) })
	refused := egress.ControlPlane{Masters: []string{fmt.Sprintf("127.0.0.1:%d", master)}}.Refused()
	launch := func(name string, check proto.HealthCheck) {
		check.IntervalSeconds, check.TimeoutSeconds, check.ConsecutiveFailures = 0.05, 0.5, 100
		e.launch(t, name+".0", &proto.TaskSpec{Version: proto.Version, Name: name, Instance: instanceOf(name), Process: &proto.ProcessSpec{
			ProcName: "sleep", WorkPath: e.workDir(name), StartGracePeriod: 0.1, StartCmd: "exec sleep 60",
		}, Egress: &proto.Egress{Refused: refused}, HealthChecks: []proto.HealthCheck{check}, KillGracePeriodSeconds: 0.2})
	}
	launch("agent", proto.HealthCheck{Type: "HTTP", Port: agent, Path: "/files/debug"})
	launch("master", proto.HealthCheck{Type: "TCP", Port: master})
	launch("own", proto.HealthCheck{Type: "HTTP", Port: undeclared, Path: "/"})
	for task, want := range map[string]string{
		"agent.0":  fmt.Sprintf("egress to 127.0.0.1:%d refused: a Mesos agent's API", agent),
		"master.0": fmt.Sprintf("egress to 127.0.0.1:%d refused: a Mesos master", master),
	} {
		rep, _ := e.rec.await(task+" unhealthy", 0, func(r executor.Report) bool {
			return r.TaskID == task && r.Healthy != nil && !*r.Healthy
		})
		if !strings.Contains(rep.Message, want) {
			t.Errorf("%s: %q, want it to name %q", task, rep.Message, want)
		}
	}
	e.rec.await("own.0 healthy", 0, func(r executor.Report) bool { return r.TaskID == "own.0" && r.Healthy != nil && *r.Healthy })
	if hits[agent].Load() != 0 || hits[master].Load() != 0 || hits[undeclared].Load() == 0 {
		t.Errorf("requests: agent %d, master %d, undeclared port %d; want 0, 0, some",
			hits[agent].Load(), hits[master].Load(), hits[undeclared].Load())
	}
}

// A work directory its user cannot reach (the base under a
// 0700 directory, as a checkout in root's home) fails the launch naming
// the directory in the way, not as "fork/exec /bin/sh: permission denied".
func TestUnreachableWorkPathNamesTheDirectory(t *testing.T) {
	var private string
	e := newEnv(t, func(c *process.Config) {
		private = filepath.Join(filepath.Dir(c.WorkBaseDir), "home")
		if err := os.Mkdir(private, 0o700); err != nil {
			t.Fatal(err)
		}
		c.WorkBaseDir = filepath.Join(private, "work")
	})
	e.work = filepath.Join(private, "work")
	e.launch(t, "lost.0", &proto.TaskSpec{Version: proto.Version, Name: "lost", Instance: instanceOf("lost"), Process: &proto.ProcessSpec{
		ProcName: "sleep", User: "nobody", WorkPath: e.workDir("lost"), StartCmd: "exec sleep 60",
	}})
	rep := e.rec.awaitTerminal("lost.0")
	want := fmt.Sprintf("workPath: user nobody (uid 65534 cannot reach %s: %s is mode 0700, uid 0's)", e.workDir("lost"), private)
	if rep.State != taskstate.Failed || !strings.Contains(rep.Message, want) {
		t.Errorf("%s %q, want FAILED saying %q", rep.State, rep.Message, want)
	}
}

// A failure quotes the end of what this start wrote (stderr,
// else stdout; at most 5 lines and 512 bytes), where the reason usually
// is; an earlier start's output in the same log files is not quoted.
func TestFailureQuotesTheLastOutput(t *testing.T) {
	e := newEnv(t, nil)
	for _, tc := range []struct {
		name, start, want string
		grace             float64
	}{
		{"exit within the grace", `echo starting; echo "listen tcp :8080: bind: address already in use" >&2; exit 1`,
			`start command exited with status 1 within startGracePeriod 1s; last stderr: "listen tcp :8080: bind: address already in use"`, 1},
		{"stdout only", `echo "config.yaml: no such file"; exit 3`,
			`start command exited with status 3 within startGracePeriod 1s; last stdout: "config.yaml: no such file"`, 1},
		{"died after running", `sleep 0.3; seq 1 100 >&2; exit 2`, `exited with status 2; last stderr: "…96\n97\n98\n99\n100"`, 0.1},
		{"silent", `exit 4`, `start command exited with status 4 within startGracePeriod 1s`, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := strings.ReplaceAll(tc.name, " ", "-")
			spec := &proto.TaskSpec{Version: proto.Version, Name: name, Instance: instanceOf(name), Process: &proto.ProcessSpec{
				ProcName: "sh", WorkPath: e.workDir(name), StartGracePeriod: tc.grace, StartCmd: tc.start,
			}}
			// An earlier start's output, which is not this one's.
			if err := os.WriteFile(filepath.Join(e.logs, name+".0.stderr"), []byte("an earlier start\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			e.launch(t, name+".0", spec)
			rep := e.rec.awaitTerminal(name + ".0")
			if rep.State != taskstate.Failed || !strings.HasSuffix(rep.Message, tc.want) {
				t.Errorf("%s %q, want FAILED ending %q", rep.State, rep.Message, tc.want)
			}
		})
	}
}

// restartCmd replaces stop + start; exec (its output bounded),
// update-resources and signal messages act on the task; unknown tasks, missing commands and
// unsupported messages are errors.
func TestMessages(t *testing.T) {
	e := newEnv(t, nil)
	pidFile := filepath.Join(e.runDir("msg"), "app.pid")
	start := `ln -sf "$(command -v sleep)" ./gamesvr; ./gamesvr 300 & echo $! > ` + pidFile
	spec := &proto.TaskSpec{Version: proto.Version, Name: "msg", Instance: instanceOf("msg"), Process: &proto.ProcessSpec{
		ProcName: "gamesvr", User: "nobody", WorkPath: e.workDir("msg"), PidFile: pidFile, StartGracePeriod: 0.2,
		StartCmd: start, RestartCmd: `kill "$(cat ` + pidFile + `)"; echo restarted >> restart.log; ` + start,
	}, Env: []proto.EnvVar{{Name: "GREETING", Value: "hi"}}}
	e.launch(t, "msg.0", spec)
	first, at := e.rec.awaitState("msg.0", taskstate.Running, 0)
	ctx := context.Background()

	res := e.rt.Message(ctx, &proto.Message{Type: proto.MessageExec, TaskID: "msg.0", Command: []string{"sh", "-c", "echo $GREETING; id -u; exit 4"}})
	if res.OK || res.ExitCode != 4 || res.Output != "hi\n65534\n" {
		t.Errorf("exec %+v", res)
	}
	// A chatty command's output is cut at proto.MaxOutputBytes, and says so.
	res = e.rt.Message(ctx, &proto.Message{Type: proto.MessageExec, TaskID: "msg.0", Command: []string{"sh", "-c", "yes | head -c 100000"}})
	if !res.OK || !res.Truncated || len(res.Output) != proto.MaxOutputBytes {
		t.Errorf("exec of 100000 bytes: ok %v truncated %v, %d bytes of output", res.OK, res.Truncated, len(res.Output))
	}
	res = e.rt.Message(ctx, &proto.Message{Type: proto.MessageRestart, TaskID: "msg.0"})
	if !res.OK {
		t.Fatalf("restart %+v", res)
	}
	second, _ := e.rec.awaitState("msg.0", taskstate.Running, at+1)
	oldPid, newPid := processInfo(t, first).Pid, processInfo(t, second).Pid
	if oldPid == newPid || readTrim(t, filepath.Join(spec.Process.WorkPath, "restart.log")) != "restarted" {
		t.Errorf("restartCmd: pid %d → %d", oldPid, newPid)
	}
	res = e.rt.Message(ctx, &proto.Message{Type: proto.MessageUpdateResources, TaskID: "msg.0", Resources: &proto.Resources{CPULimit: 0.25, MemLimitMB: 100}})
	mem, cpu := cgroupDirs("msg.0", e)[0], cgroupDirs("msg.0", e)[1]
	if !res.OK || readTrim(t, filepath.Join(cpu, "cpu.cfs_quota_us")) != "25000" || readTrim(t, filepath.Join(mem, "memory.limit_in_bytes")) != strconv.Itoa(100<<20) {
		t.Errorf("update-resources %+v", res)
	}
	res = e.rt.Message(ctx, &proto.Message{Type: proto.MessageSignal, TaskID: "msg.0", Signal: int(syscall.SIGKILL)})
	if !res.OK {
		t.Errorf("signal %+v", res)
	}
	if rep := e.rec.awaitTerminal("msg.0"); rep.State != taskstate.Failed || !strings.Contains(rep.Message, strconv.Itoa(newPid)) {
		t.Errorf("after SIGKILL of the main process: %+v", rep)
	}
	for _, m := range []proto.Message{
		{Type: proto.MessageReload, TaskID: "msg.0"},
		{Type: proto.MessageReload, TaskID: "nope"},
		{Type: proto.MessageUpdateResources, TaskID: "msg.0"},
		{Type: proto.MessageUpdateFile, TaskID: "msg.0"},
	} {
		if res := e.rt.Message(ctx, &m); res.OK || res.Error == "" {
			t.Errorf("%s %s: %+v", m.Type, m.TaskID, res)
		}
	}
}

// A spec whose package tries to write outside outputDir fails the task
// and writes nothing outside.
func TestPathTraversalPackageFailsTask(t *testing.T) {
	e := newEnv(t, nil)
	srv := newPackageServer(t)
	url := srv.put("/repo/evil.tgz", tarGz(t, member{Name: "gamesvc/start.sh", Body: "#!/bin/sh\n"}, member{Name: "../../escaped.txt", Body: "pwned"}))
	spec := e.seedSpec(url, srv.user, srv.pwd, freePort(t))
	e.launch(t, "evil.0", spec)
	rep := e.rec.awaitTerminal("evil.0")
	if rep.State != taskstate.Failed || !strings.Contains(rep.Message, "escapes the output directory") {
		t.Errorf("%+v", rep)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(e.work), "escaped.txt")); !os.IsNotExist(err) {
		t.Errorf("escaped.txt written: %v", err)
	}
}

func TestResourceLimitsNeedCgroups(t *testing.T) {
	e := newEnv(t, func(c *process.Config) { c.Cgroups = nil })
	spec := &proto.TaskSpec{Version: proto.Version, Name: "lim", Instance: instanceOf("lim"), Process: &proto.ProcessSpec{
		ProcName: "sleep", WorkPath: e.workDir("lim"), StartCmd: "exec sleep 10",
	}, Resources: proto.Resources{MemLimitMB: 64}}
	e.launch(t, "lim.0", spec)
	if rep := e.rec.awaitTerminal("lim.0"); rep.State != taskstate.Failed || !strings.Contains(rep.Message, "need cgroups") {
		t.Errorf("%+v", rep)
	}
}
