package main_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/bcs-mesos/bcs-mesos/internal/testlog"
	"github.com/bcs-mesos/bcs-mesos/pkg/devcluster"
	"github.com/bcs-mesos/bcs-mesos/pkg/devcluster/devclustertest"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// build compiles pkg (a main package path relative to this directory)
// into dir.
func build(t *testing.T, dir, name, pkg string) string {
	t.Helper()
	out := filepath.Join(dir, name)
	if b, err := exec.Command("go", "build", "-o", out, pkg).CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	return out
}

func tarGz(t *testing.T, files map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for name, body := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(body); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// e2e is a dev cluster with one process agent, a framework holding an
// offer, the executor binary and /tmp roots reachable by nobody.
type e2e struct {
	c                 *devcluster.Cluster
	f                 *devclustertest.Framework
	offer             mesos.Offer
	bin               string
	executorBin       string
	base              string
	workBase, runBase string
	// cgroupParent is the executors' --cgroup-parent: the test's own,
	// unless two clusters share one as two frameworks on an agent would.
	cgroupParent string
}

func setup(t *testing.T, framework ...func(*mesos.FrameworkInfo)) *e2e {
	t.Helper()
	e := &e2e{bin: t.TempDir()}
	e.executorBin = build(t, e.bin, "bcs-process-executor", ".")
	base, err := os.MkdirTemp("/tmp", "bcs-process-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	e.base, e.workBase, e.runBase = base, filepath.Join(base, "work"), filepath.Join(base, "run")
	e.cgroupParent = filepath.Join("bcs-process-e2e", filepath.Base(base))
	t.Cleanup(func() {
		killCgroupTree(filepath.Join("bcs-process-e2e", filepath.Base(base)))
		for _, ctl := range []string{"memory", "cpu", "cpuacct"} {
			os.Remove(filepath.Join("/sys/fs/cgroup", ctl, "bcs-process-e2e")) // fails while other tests use it
		}
	})
	e.c, err = devcluster.Start(context.Background(), devcluster.Config{
		ListenAddr:                  "127.0.0.1:0",
		AllocationInterval:          devcluster.Duration(50 * time.Millisecond),
		WorkDir:                     t.TempDir(),
		ExecutorMode:                devcluster.ExecutorProcess,
		Agents:                      []devcluster.AgentSpec{{Hostname: "proc-1"}},
		ExecutorShutdownGracePeriod: devcluster.Duration(5 * time.Second),
		Logger:                      testlog.New(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.c.Stop)
	workDir := e.c.WorkDir()
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		logs, _ := filepath.Glob(filepath.Join(workDir, "agents", "*", "frameworks", "*", "executors", "*", "runs", "latest", "stderr"))
		for _, l := range logs {
			b, _ := os.ReadFile(l)
			t.Logf("executor log %s:\n%s", l, b)
		}
	})
	e.f = devclustertest.Subscribe(t, e.c.MasterURL(), "process-executor-test", framework...)
	e.offer = e.f.Await("OFFERS", func(ev *scheduler.Event) bool { return ev.Type == scheduler.Event_OFFERS }).Offers.Offers[0]
	return e
}

// launch starts spec as task id on executor execID with the real binary.
func (e *e2e) launch(t *testing.T, execID, id string, spec *proto.TaskSpec) {
	t.Helper()
	data, err := spec.Encode()
	if err != nil {
		t.Fatal(err)
	}
	cmdline := fmt.Sprintf("./bcs-process-executor --work-base-dir=%s --run-base-dir=%s --cache-dir=%s --cgroup-parent=%s --liveness-interval=100ms --ack-timeout=3s",
		e.workBase, e.runBase, filepath.Join(e.base, "cache"), e.cgroupParent)
	executable := true
	ex := mesos.ExecutorInfo{
		Type:        mesos.ExecutorInfo_CUSTOM,
		ExecutorID:  mesos.ExecutorID{Value: execID},
		FrameworkID: &mesos.FrameworkID{Value: e.f.ID},
		Command:     &mesos.CommandInfo{Value: &cmdline, URIs: []mesos.CommandInfo_URI{{Value: "file://" + e.executorBin, Executable: &executable}}},
		Resources:   []mesos.Resource{devclustertest.Scalar("cpus", 0.1), devclustertest.Scalar("mem", 32), devclustertest.Scalar("disk", 10)},
	}
	task := mesos.TaskInfo{
		Name: id, TaskID: mesos.TaskID{Value: id}, AgentID: e.offer.AgentID, Data: data,
		Resources:  []mesos.Resource{devclustertest.Scalar("cpus", 0.5), devclustertest.Scalar("mem", 64)},
		KillPolicy: &mesos.KillPolicy{GracePeriod: &mesos.DurationInfo{Nanoseconds: int64(2 * time.Second)}},
	}
	e.f.Call(calls.Accept(calls.OfferOperations{calls.OpLaunchGroup(ex, task)}.WithOffers(e.offer.ID)).With(calls.RefuseSeconds(0)))
}

// gamesvc is the seed 000 process example on this cluster at revision 1:
// the gamesvr package (start.sh daemonises it on $http_port, writing
// $pid_file; stop.sh and reload.sh act on that pid) served with basic
// auth, a free host port and an HTTP check.
func (e *e2e) gamesvc(t *testing.T) *proto.TaskSpec {
	t.Helper()
	server, err := os.ReadFile(build(t, e.bin, "gamesvr", "../../pkg/process/internal/gamesvr"))
	if err != nil {
		t.Fatal(err)
	}
	pkg := tarGz(t, map[string][]byte{
		"gamesvc/gamesvr":   server,
		"gamesvc/start.sh":  []byte("#!/bin/sh\nexec ./gamesvr -daemon -addr \"127.0.0.1:$http_port\" -pidfile \"$pid_file\"\n"),
		"gamesvc/stop.sh":   []byte("#!/bin/sh\nkill \"$(cat \"$pid_file\")\"\n"),
		"gamesvc/reload.sh": []byte("#!/bin/sh\nkill -HUP \"$(cat \"$pid_file\")\" && echo reloaded\n"),
	})
	repo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "deploy" || p != "pw" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		_, _ = w.Write(pkg)
	}))
	t.Cleanup(repo.Close)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	outDir := filepath.Join(e.workBase, "ns-a.gamesvc.0")
	pidFile := filepath.Join(e.runBase, "ns-a.gamesvc.0", "pid", "gamesvc.pid")
	return &proto.TaskSpec{
		Instance: proto.Instance{Namespace: "ns-a", App: "gamesvc", Version: 1},
		Name:     "gamesvr",
		Process: &proto.ProcessSpec{
			ProcName: "gamesvr", User: "nobody", WorkPath: filepath.Join(outDir, "gamesvc"), PidFile: pidFile,
			URIs:     []proto.URI{{Value: repo.URL + "/prod/gamesvc-v1.tar.gz", User: "deploy", Password: "pw", PullPolicy: "IfNotPresent", OutputDir: outDir}},
			StartCmd: "./start.sh", StartGracePeriod: 0.5, StopCmd: "./stop.sh", ReloadCmd: "./reload.sh",
		},
		Ports:        []proto.Port{{Name: "http_port", HostPort: port, Protocol: "HTTP"}},
		Env:          []proto.EnvVar{{Name: "http_port", Value: fmt.Sprint(port)}, {Name: "pid_file", Value: pidFile}},
		HealthChecks: []proto.HealthCheck{{Type: "HTTP", PortName: "http_port", Path: "/check", IntervalSeconds: 0.2, TimeoutSeconds: 1, ConsecutiveFailures: 3}},
		Resources:    proto.Resources{CPUs: 0.5, MemMB: 64, CPULimit: 1, MemLimitMB: 128},
	}
}

// The seed 000 process example through the dev cluster and the real
// executor binary: LAUNCH_GROUP → STARTING, RUNNING with ProcessInfo,
// healthy by the HTTP check; a framework MESSAGE reload answered with a
// MessageResult; KILL → KILLED; the executor then exits (FAILURE, status
// 0: normal).
func TestSeedProcessThroughDevCluster(t *testing.T) {
	e := setup(t)
	spec := e.gamesvc(t)
	port := spec.Ports[0].HostPort
	e.launch(t, "exec-gamesvc-0", "gamesvc.0", spec)
	f, offer := e.f, e.offer

	f.AwaitAck("gamesvc.0", mesos.TASK_STARTING, nil)
	st := f.AwaitAck("gamesvc.0", mesos.TASK_RUNNING, nil)
	info := processInfo(t, st)
	if info.Pid <= 0 || info.ProcName != "gamesvr" || info.Ports["http_port"] != port || info.Revision != 1 {
		t.Errorf("RUNNING data %s", st.Data)
	}
	if st.GetSource() != mesos.SOURCE_EXECUTOR || len(st.UUID) != 16 {
		t.Errorf("RUNNING status %+v", st)
	}
	f.AwaitAck("gamesvc.0", mesos.TASK_RUNNING, func(s mesos.TaskStatus) bool { return s.GetHealthy() })

	msg := proto.Message{ID: "reload-1", Type: proto.MessageReload, TaskID: "gamesvc.0"}
	mdata, _ := msg.Encode()
	f.Call(calls.Message(offer.AgentID.Value, "exec-gamesvc-0", mdata))
	m := f.Await("MESSAGE", func(ev *scheduler.Event) bool { return ev.Type == scheduler.Event_MESSAGE }).Message
	res, err := proto.DecodeMessageResult(m.Data)
	if err != nil || !res.OK || res.ID != "reload-1" || strings.TrimSpace(res.Output) != "reloaded" {
		t.Errorf("reload result %+v (%v)", res, err)
	}

	f.Call(calls.Kill("gamesvc.0", offer.AgentID.Value))
	f.AwaitAck("gamesvc.0", mesos.TASK_KILLED, nil)
	failure := f.Await("FAILURE", func(ev *scheduler.Event) bool { return ev.Type == scheduler.Event_FAILURE }).Failure
	if failure.GetStatus() != 0 || failure.GetExecutorID().GetValue() != "exec-gamesvc-0" {
		t.Errorf("FAILURE %+v", failure)
	}
	if running(info.Pid) {
		t.Errorf("server %d still runs", info.Pid)
	}
}

// An InplaceUpdate through the dev cluster and the real executor binary:
// the task stays TASK_RUNNING under its task ID, unhealthy while it
// drains, then runs a new pid on the same port with revision 2 in its
// data and is healthy again by its check; the framework MESSAGE update is
// answered OK.
func TestInPlaceUpdateThroughDevCluster(t *testing.T) {
	e := setup(t)
	v1 := e.gamesvc(t)
	e.launch(t, "exec-gamesvc-0", "gamesvc.0", v1)
	e.f.AwaitAck("gamesvc.0", mesos.TASK_STARTING, nil)
	before := processInfo(t, e.f.AwaitAck("gamesvc.0", mesos.TASK_RUNNING, nil))
	e.f.AwaitAck("gamesvc.0", mesos.TASK_RUNNING, func(s mesos.TaskStatus) bool { return s.GetHealthy() })

	data, err := v1.Encode()
	if err != nil {
		t.Fatal(err)
	}
	v2, err := proto.DecodeTaskSpec(data)
	if err != nil {
		t.Fatal(err)
	}
	v2.Instance.Version = 2
	v2.Env = append(v2.Env, proto.EnvVar{Name: "release", Value: "2"})
	msg := proto.Message{ID: "update-2", Type: proto.MessageUpdate, TaskID: "gamesvc.0", Update: &proto.GroupUpdate{
		Revision: 2, Mode: proto.UpdateInPlace, GracePeriodSeconds: 0.2, Tasks: []proto.TaskUpdate{{TaskID: "gamesvc.0", Spec: v2}},
	}}
	mdata, err := msg.Encode()
	if err != nil {
		t.Fatal(err)
	}
	e.f.Call(calls.Message(e.offer.AgentID.Value, "exec-gamesvc-0", mdata))
	e.f.AwaitAck("gamesvc.0", mesos.TASK_RUNNING, func(s mesos.TaskStatus) bool { return s.Healthy != nil && !s.GetHealthy() })
	after := processInfo(t, e.f.AwaitAck("gamesvc.0", mesos.TASK_RUNNING, func(s mesos.TaskStatus) bool { return proto.RevisionOf(s.Data) == 2 }))
	if after.Pid == before.Pid || after.Ports["http_port"] != before.Ports["http_port"] || after.WorkPath != before.WorkPath || running(before.Pid) {
		t.Errorf("before the update %+v, after %+v", before, after)
	}
	e.f.AwaitAck("gamesvc.0", mesos.TASK_RUNNING, func(s mesos.TaskStatus) bool { return s.GetHealthy() })
	m := e.f.Await("MESSAGE", func(ev *scheduler.Event) bool { return ev.Type == scheduler.Event_MESSAGE }).Message
	if res, err := proto.DecodeMessageResult(m.Data); err != nil || !res.OK || res.ID != "update-2" {
		t.Errorf("update result %+v (%v)", res, err)
	}
	e.f.Call(calls.Kill("gamesvc.0", e.offer.AgentID.Value))
	e.f.AwaitAck("gamesvc.0", mesos.TASK_KILLED, nil)
	if running(after.Pid) {
		t.Errorf("server %d still runs", after.Pid)
	}
}

func processInfo(t *testing.T, st mesos.TaskStatus) proto.ProcessInfo {
	t.Helper()
	var info proto.ProcessInfo
	if err := json.Unmarshal(st.Data, &info); err != nil {
		t.Fatalf("TaskStatus.data %q: %v", st.Data, err)
	}
	return info
}

// SHUTDOWN of the executor (scheduler SHUTDOWN call) kills a task whose
// start script daemonised and forked children, one in its own session:
// TASK_KILLED, the executor exits, and no process of the task survives.
func TestShutdownLeavesNoOrphans(t *testing.T) {
	e := setup(t)
	marker := fmt.Sprintf("88%d", time.Now().UnixNano()%100000)
	pidFile := filepath.Join(e.runBase, "ns.orphans.0", "app.pid")
	spec := &proto.TaskSpec{Name: "orphans", Instance: proto.Instance{Namespace: "ns", App: "orphans"}, Process: &proto.ProcessSpec{
		ProcName: "gamesvr", WorkPath: filepath.Join(e.workBase, "ns.orphans.0"), PidFile: pidFile, StartGracePeriod: 0.3,
		StartCmd: fmt.Sprintf(`ln -sf "$(command -v sleep)" ./gamesvr; ( sleep %[1]s1 & setsid sleep %[1]s2 & exec ./gamesvr %[1]s3 ) & echo $! > %[2]s`, marker, pidFile),
	}}
	e.launch(t, "exec-orphans", "orphans.0", spec)
	// The agent forwards a task's updates one at a time, each after the
	// previous one is acknowledged (Mesos status update manager).
	e.f.AwaitAck("orphans.0", mesos.TASK_STARTING, nil)
	e.f.AwaitAck("orphans.0", mesos.TASK_RUNNING, nil)
	if pids := markerPids(marker); len(pids) != 3 {
		t.Fatalf("want 3 task processes, have %v", pids)
	}
	e.f.Call(calls.Shutdown("exec-orphans", e.offer.AgentID.Value))
	e.f.AwaitAck("orphans.0", mesos.TASK_KILLED, nil)
	failure := e.f.Await("FAILURE", func(ev *scheduler.Event) bool { return ev.Type == scheduler.Event_FAILURE }).Failure
	if failure.GetStatus() != 0 {
		t.Errorf("executor exit status %d", failure.GetStatus())
	}
	if pids := markerPids(marker); len(pids) != 0 {
		t.Errorf("orphans survived SHUTDOWN: %v", pids)
	}
}

func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	return err == nil && !strings.Contains(string(b), ") Z ")
}

// markerPids lists live processes whose command line holds marker.
func markerPids(marker string) []string {
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, d := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err != nil || !strings.Contains(strings.ReplaceAll(string(b), "\x00", " "), marker) {
			continue
		}
		if pid, err := strconv.Atoi(d.Name()); err == nil && running(pid) {
			out = append(out, d.Name())
		}
	}
	return out
}

// killCgroupTree ends every process under parent (in the memory, cpu
// and cpuacct hierarchies) and removes the cgroups: a failed test may leave an
// executor killed and its tasks running.
func killCgroupTree(parent string) {
	for _, ctl := range []string{"memory", "cpu", "cpuacct"} {
		root := filepath.Join("/sys/fs/cgroup", ctl, parent)
		var dirs []string
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		for i := len(dirs) - 1; i >= 0; i-- { // deepest first
			for try := 0; try < 50; try++ {
				b, _ := os.ReadFile(filepath.Join(dirs[i], "cgroup.procs"))
				pids := strings.Fields(string(b))
				if len(pids) == 0 {
					break
				}
				for _, p := range pids {
					if pid, err := strconv.Atoi(p); err == nil {
						_ = syscall.Kill(pid, syscall.SIGKILL)
					}
				}
				time.Sleep(20 * time.Millisecond)
			}
			os.Remove(dirs[i])
		}
	}
}

// An executor killed outright (here by the agent, as a crash) cannot stop
// its task, whose daemonised processes keep running; the next executor on
// the agent finds their cgroups without a live owner and ends them.
func TestCrashedExecutorTasksAreSwept(t *testing.T) {
	e := setup(t)
	marker := fmt.Sprintf("99%d", time.Now().UnixNano()%100000)
	daemon := func(name string) *proto.TaskSpec {
		pidFile := filepath.Join(e.runBase, "ns."+name+".0", "app.pid")
		return &proto.TaskSpec{Name: name, Instance: proto.Instance{Namespace: "ns", App: name}, Process: &proto.ProcessSpec{
			ProcName: "gamesvr", WorkPath: filepath.Join(e.workBase, "ns."+name+".0"), PidFile: pidFile, StartGracePeriod: 0.3,
			StartCmd: fmt.Sprintf(`ln -sf "$(command -v sleep)" ./gamesvr; ( setsid sleep %[1]s1 & exec ./gamesvr %[1]s2 ) & echo $! > %[2]s`, marker+name, pidFile),
		}}
	}
	e.launch(t, "exec-1", "crashy.0", daemon("5"))
	e.f.AwaitAck("crashy.0", mesos.TASK_STARTING, nil)
	e.f.AwaitAck("crashy.0", mesos.TASK_RUNNING, nil)
	if err := e.c.KillExecutor(e.f.ID, e.offer.AgentID.Value, "exec-1"); err != nil {
		t.Fatal(err)
	}
	e.f.Await("FAILURE", func(ev *scheduler.Event) bool { return ev.Type == scheduler.Event_FAILURE })
	// The agent destroyed the executor's container (its session, like
	// Mesos' posix launcher): only the setsid'd process is left, once the
	// killed one is gone (FAILURE comes when the executor itself exited;
	// its session's processes die at their own pace on a busy machine).
	pids := markerPids(marker + "5")
	for deadline := time.Now().Add(5 * time.Second); len(pids) > 1 && time.Now().Before(deadline); pids = markerPids(marker + "5") {
		time.Sleep(20 * time.Millisecond)
	}
	if len(pids) != 1 {
		t.Fatalf("the crashed executor's task processes: %v (want the setsid one still running)", pids)
	}
	e.offer = e.f.Await("OFFERS", func(ev *scheduler.Event) bool { return ev.Type == scheduler.Event_OFFERS }).Offers.Offers[0]
	e.launch(t, "exec-2", "next.0", daemon("6"))
	e.f.AwaitAck("next.0", mesos.TASK_STARTING, nil)
	e.f.AwaitAck("next.0", mesos.TASK_RUNNING, nil)
	if pids := markerPids(marker + "5"); len(pids) != 0 {
		t.Errorf("orphans of the crashed executor survived: %v", pids)
	}
	if pids := markerPids(marker + "6"); len(pids) != 2 {
		t.Errorf("the new executor's task: %v", pids)
	}
}

// Two frameworks (two clusters) on one agent, sharing its
// cgroup parent, run executors and tasks of the same IDs — the same
// namespace and application names — at once. One framework's executor
// killed outright leaves a daemonised process; the other framework's next
// executor leaves it alone (its task IDs may be ours, its framework may
// still want it reported), and the crashed one's own framework's next
// executor sweeps it.
func TestTwoFrameworksShareAnAgentsCgroups(t *testing.T) {
	one, two := setup(t), setup(t)
	two.cgroupParent = one.cgroupParent
	marker := fmt.Sprintf("98%d", time.Now().UnixNano()%100000)
	daemon := func(e *e2e, tag string) *proto.TaskSpec {
		pidFile := filepath.Join(e.runBase, "demo.gamesvr.0", "app.pid")
		return &proto.TaskSpec{Name: "gamesvr", Instance: proto.Instance{Namespace: "demo", App: "gamesvr"}, Process: &proto.ProcessSpec{
			ProcName: "gamesvr", WorkPath: filepath.Join(e.workBase, "demo.gamesvr.0"), PidFile: pidFile, StartGracePeriod: 0.3,
			StartCmd: fmt.Sprintf(`ln -sf "$(command -v sleep)" ./gamesvr; ( setsid sleep %[1]s1 & exec ./gamesvr %[1]s2 ) & echo $! > %[2]s`, marker+tag, pidFile),
		}}
	}
	const execID, taskID = "demo_gamesvr_0_1.mwzgt9c0", "demo_gamesvr_0_1.mwzgt9c0_0"
	for _, e := range []*e2e{one, two} {
		e.launch(t, execID, taskID, daemon(e, map[*e2e]string{one: "1", two: "2"}[e]))
		e.f.AwaitAck(taskID, mesos.TASK_STARTING, nil)
		e.f.AwaitAck(taskID, mesos.TASK_RUNNING, nil)
	}
	if err := one.c.KillExecutor(one.f.ID, one.offer.AgentID.Value, execID); err != nil {
		t.Fatal(err)
	}
	one.f.Await("FAILURE", func(ev *scheduler.Event) bool { return ev.Type == scheduler.Event_FAILURE })
	orphans := markerPids(marker + "1")
	for deadline := time.Now().Add(5 * time.Second); len(orphans) > 1 && time.Now().Before(deadline); orphans = markerPids(marker + "1") {
		time.Sleep(20 * time.Millisecond)
	}
	if len(orphans) != 1 {
		t.Fatalf("the crashed executor's task processes: %v (want the setsid one still running)", orphans)
	}

	two.offer = two.f.Await("OFFERS", func(ev *scheduler.Event) bool { return ev.Type == scheduler.Event_OFFERS }).Offers.Offers[0]
	two.launch(t, "demo_gamesvr_1_1.mwzgt9c0", "demo_gamesvr_1_1.mwzgt9c0_0", daemon(two, "3"))
	two.f.AwaitAck("demo_gamesvr_1_1.mwzgt9c0_0", mesos.TASK_RUNNING, nil)
	if pids := markerPids(marker + "1"); len(pids) != 1 {
		t.Errorf("another framework's executor swept the crashed one's orphan: %v left", pids)
	}
	if pids := markerPids(marker + "2"); len(pids) != 2 {
		t.Errorf("the other framework's running task: %v, want its 2 processes", pids)
	}

	one.offer = one.f.Await("OFFERS", func(ev *scheduler.Event) bool { return ev.Type == scheduler.Event_OFFERS }).Offers.Offers[0]
	one.launch(t, "demo_gamesvr_0_2.mwzgt9c0", "demo_gamesvr_0_2.mwzgt9c0_0", daemon(one, "4"))
	one.f.AwaitAck("demo_gamesvr_0_2.mwzgt9c0_0", mesos.TASK_RUNNING, nil)
	if pids := markerPids(marker + "1"); len(pids) != 0 {
		t.Errorf("its own framework's next executor left the orphan: %v", pids)
	}
	if pids := markerPids(marker + "2"); len(pids) != 2 {
		t.Errorf("the other framework's running task after the sweep: %v, want its 2 processes", pids)
	}
}

// Usage reports through the dev cluster and the real executor binary: a
// task group launched with a usage interval sends the framework one
// MESSAGE per interval with its busy task's samples, more than half a
// core between two; the usage-interval message stops them (after those
// already under way) and starts them again.
func TestUsageReportsThroughDevCluster(t *testing.T) {
	e := setup(t)
	spec := &proto.TaskSpec{
		Instance: proto.Instance{Namespace: "ns-a", App: "busy", TaskGroupID: "tg-busy"},
		Name:     "busy",
		Process: &proto.ProcessSpec{ProcName: "sh", User: "nobody", WorkPath: filepath.Join(e.workBase, "ns-a.busy.0", "busy"),
			StartCmd: "exec sh -c 'while :; do :; done'", StartGracePeriod: 0.3},
		Resources:            proto.Resources{CPUs: 0.5, MemMB: 64},
		UsageIntervalSeconds: 0.5,
	}
	e.launch(t, "exec-busy-0", "busy.0", spec)
	e.f.AwaitAck("busy.0", mesos.TASK_STARTING, nil)
	e.f.AwaitAck("busy.0", mesos.TASK_RUNNING, nil)

	first, second := e.usageReport(t), e.usageReport(t)
	for _, r := range []*proto.UsageReport{first, second} {
		if r.TaskGroupID != "tg-busy" || len(r.Tasks) != 1 || r.Tasks[0].TaskID != "busy.0" || r.Tasks[0].MemBytes == 0 {
			t.Fatalf("report %+v", r)
		}
	}
	a, b := first.Tasks[0], second.Tasks[0]
	window := b.At.Sub(a.At)
	if cores := float64(b.CPUNanos-a.CPUNanos) / float64(window.Nanoseconds()); cores < 0.5 || window < 400*time.Millisecond || window > 2*time.Second {
		t.Errorf("%.2f cores over %v between two reports, want > 0.5 over about 0.5s", cores, window)
	}

	if res, _ := e.setUsageInterval(t, "stop", 0); !res.OK {
		t.Fatalf("stop: %+v", res)
	}
	time.Sleep(300 * time.Millisecond) // a report measured before the stop may still come
	e.setUsageInterval(t, "drain", 0)
	time.Sleep(1500 * time.Millisecond)
	if _, n := e.setUsageInterval(t, "still-stopped", 0); n != 0 {
		t.Errorf("%d reports in 1.5s after the reports were stopped", n)
	}
	if res, _ := e.setUsageInterval(t, "again", 0.3); !res.OK {
		t.Fatalf("start again: %+v", res)
	}
	if r := e.usageReport(t); len(r.Tasks) != 1 || r.Tasks[0].CPUNanos <= b.CPUNanos {
		t.Errorf("report after the restart %+v", r)
	}
	e.f.Call(calls.Kill("busy.0", e.offer.AgentID.Value))
	e.f.AwaitAck("busy.0", mesos.TASK_KILLED, nil)
}

// usageReport waits for the executor's next usage report.
func (e *e2e) usageReport(t *testing.T) *proto.UsageReport {
	t.Helper()
	m := e.f.Await("usage report", func(ev *scheduler.Event) bool {
		return ev.Type == scheduler.Event_MESSAGE && isUsageReport(ev.Message.Data)
	}).Message
	r, _, err := proto.DecodeUsageReport(m.Data)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func isUsageReport(data []byte) bool {
	_, ok, _ := proto.DecodeUsageReport(data)
	return ok
}

// setUsageInterval sends the executor of busy.0 a usage-interval message
// with ID id and returns its answer and how many usage reports came
// before it, which it removes: the framework's events keep the order the
// executor sent them in.
func (e *e2e) setUsageInterval(t *testing.T, id string, seconds float64) (*proto.MessageResult, int) {
	t.Helper()
	data, err := (&proto.Message{ID: id, Type: proto.MessageUsageInterval, TaskID: "busy.0", UsageIntervalSeconds: seconds}).Encode()
	if err != nil {
		t.Fatal(err)
	}
	e.f.Call(calls.Message(e.offer.AgentID.Value, "exec-busy-0", data))
	for reports := 0; ; reports++ {
		m := e.f.Await("the answer to "+id, func(ev *scheduler.Event) bool {
			if ev.Type != scheduler.Event_MESSAGE {
				return false
			}
			res, err := proto.DecodeMessageResult(ev.Message.Data)
			return isUsageReport(ev.Message.Data) || err == nil && res.ID == id
		}).Message
		if !isUsageReport(m.Data) {
			res, _ := proto.DecodeMessageResult(m.Data)
			return res, reports
		}
	}
}
