package devcluster_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/bcs-mesos/bcs-mesos/internal/testlog"
	"github.com/bcs-mesos/bcs-mesos/pkg/devcluster"
)

// devclusterBinary is cmd/devcluster, built once per test binary: a dev
// cluster in a process of its own, which a test can kill -9.
var devclusterBinary struct {
	once sync.Once
	path string
	err  error
}

func buildDevcluster(t *testing.T) string {
	t.Helper()
	devclusterBinary.once.Do(func() {
		dir, err := os.MkdirTemp("", "devcluster-bin-")
		if err != nil {
			devclusterBinary.err = err
			return
		}
		path := filepath.Join(dir, "devcluster")
		if out, err := exec.Command("go", "build", "-o", path, "../../cmd/devcluster").CombinedOutput(); err != nil {
			devclusterBinary.err = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		devclusterBinary.path = path
	})
	if devclusterBinary.err != nil {
		t.Fatalf("build cmd/devcluster: %v", devclusterBinary.err)
	}
	return devclusterBinary.path
}

// clusterProcess is a process-mode dev cluster of one agent, proc-1, run
// by cmd/devcluster on a work dir.
type clusterProcess struct {
	cmd    *exec.Cmd
	master string
	exited chan struct{}
}

func startClusterProcess(t *testing.T, workDir string) *clusterProcess {
	t.Helper()
	dir := t.TempDir()
	config, _ := json.Marshal(map[string]any{
		"agents":              []map[string]any{{"hostname": "proc-1"}},
		"allocation_interval": "50ms", "executor_shutdown_grace_period": "2s",
	})
	configFile := filepath.Join(dir, "cluster.json")
	if err := os.WriteFile(configFile, config, 0o644); err != nil {
		t.Fatal(err)
	}
	logFile, err := os.Create(filepath.Join(dir, "devcluster.log"))
	if err != nil {
		t.Fatal(err)
	}
	p := &clusterProcess{exited: make(chan struct{})}
	p.cmd = exec.Command(buildDevcluster(t), "-config", configFile, "-listen", "127.0.0.1:0", "-executors", "process", "-work-dir", workDir)
	p.cmd.Stderr = logFile
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			data, _ := os.ReadFile(logFile.Name())
			t.Logf("devcluster process log:\n%s", data)
		}
	})
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		if url, ok := strings.CutPrefix(lines.Text(), "master: "); ok {
			p.master = url
			go func() {
				for lines.Scan() {
				}
			}()
			return p
		}
	}
	t.Fatalf("cmd/devcluster printed no master URL")
	return nil
}

// kill kills the cluster's process with SIGKILL, as a crash would: its
// executors, in sessions of their own, live on.
func (p *clusterProcess) kill() {
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// A dev cluster killed -9 and started again on its work dir is a Mesos
// master and agent restarted on theirs (Mesos' registrar and agent
// recovery with --recover=reconnect): the agent keeps its ID and address,
// the framework is known again before it subscribes, and subscribing with
// its ID is a failover that keeps its tasks; reconciliation meanwhile
// answers their latest states, never TASK_GONE. The executor that
// subscribes again keeps its task (a KILL reaches it through the new
// agent, and its exit is noticed although it is not the new process's
// child); the one that does not is killed with its session and its task
// becomes TASK_GONE with REASON_EXECUTOR_REREGISTRATION_TIMEOUT (Mesos'
// Slave::reregisterExecutorTimeout). Once their tasks' last updates are
// acknowledged nothing of them is left checkpointed.
func TestKilledClusterRecoversExecutorsThatComeBack(t *testing.T) {
	work := t.TempDir()
	first := startClusterProcess(t, work)
	checkpoint := true
	info := frameworkInfo(func(info *mesos.FrameworkInfo) { info.Checkpoint = &checkpoint })
	s := subscribeAt(t, first.master, info, jsonCodec)
	o := s.awaitOffer()
	back := realExecutor(t, s.fwID, "exec-back", "run", "protobuf", "TESTEXECUTOR_RESUBSCRIBE=1")
	hung := realExecutor(t, s.fwID, "exec-hung", "run", "protobuf", "TESTEXECUTOR_STAY=1", "TESTEXECUTOR_CHILDREN=1")
	hungTask := taskInfo(o, "t-hung")
	hungTask.Resources = []mesos.Resource{scalar("cpus", 0.1), scalar("mem", 32)}
	s.mustCall(calls.Accept(calls.OfferOperations{calls.OpLaunchGroup(back, taskInfo(o, "t-back")), calls.OpLaunchGroup(hung, hungTask)}.WithOffers(o.ID)))
	s.awaitAck("t-back", mesos.TASK_RUNNING)
	s.awaitAck("t-hung", mesos.TASK_RUNNING)
	agentID := o.AgentID.Value
	hungSandbox := runDirs(filepath.Join(work, "agents", agentID, "frameworks", s.fwID, "executors", "exec-hung", "runs"))[0]
	child, daemon := pidIn(t, hungSandbox, "child.pid"), pidIn(t, hungSandbox, "daemon.pid")
	t.Cleanup(func() { _ = syscall.Kill(daemon, syscall.SIGKILL) })

	first.kill()
	c := startProcessCluster(t, func(cfg *devcluster.Config) {
		cfg.WorkDir = work
		cfg.ExecutorReregistrationTimeout = devcluster.Duration(3 * time.Second)
	})
	if got := c.Agents(); !slices.Equal(got, []string{agentID}) {
		t.Fatalf("agents after the restart %v, want the agent of the last run %s", got, agentID)
	}
	if ep, _ := c.AgentEndpoint(agentID); ep != fmt.Sprintf("127.0.0.1:%d", o.GetURL().Address.Port) {
		t.Errorf("the agent listens on %s after the restart, want its address of the last run, port %d", ep, o.GetURL().Address.Port)
	}
	if fws := c.Frameworks(); !slices.Equal(fws, []string{s.fwID}) {
		t.Fatalf("frameworks after the restart %v, want %s known again before it subscribes", fws, s.fwID)
	}
	if mismatches := c.LeftToOfferMismatches(); len(mismatches) > 0 {
		t.Errorf("after the restart the allocator does not count what the recovered tasks hold: %v", mismatches)
	}

	info.ID = &mesos.FrameworkID{Value: s.fwID}
	s2 := subscribe(t, c, info, jsonCodec)
	if s2.fwID != s.fwID {
		t.Fatalf("subscribed as %s, want a failover of %s", s2.fwID, s.fwID)
	}
	s2.mustCall(calls.Reconcile(calls.ReconcileTasks(map[string]string{"t-back": agentID, "t-hung": agentID})))
	for _, id := range []string{"t-back", "t-hung"} {
		st := s2.await(id+" reconciled", func(e *scheduler.Event) bool {
			return e.Type == scheduler.Event_UPDATE && e.Update.Status.TaskID.Value == id && e.Update.Status.GetReason() == mesos.REASON_RECONCILIATION
		}).Update.Status
		if st.GetState() != mesos.TASK_RUNNING {
			t.Errorf("reconciliation of %s while the agent recovers: %s, want its latest state TASK_RUNNING", id, st.GetState())
		}
	}

	st := s2.awaitAck("t-hung", mesos.TASK_GONE)
	if st.GetReason() != mesos.REASON_EXECUTOR_REREGISTRATION_TIMEOUT || st.GetSource() != mesos.SOURCE_AGENT {
		t.Errorf("t-hung: %s from %s, want REASON_EXECUTOR_REREGISTRATION_TIMEOUT from the agent", st.GetReason(), st.GetSource())
	}
	if processAlive(child) {
		t.Errorf("the child %d of the executor that did not come back outlived its session", child)
	}
	if state, err := c.TaskState(s.fwID, "t-back"); err != nil || state != mesos.TASK_RUNNING {
		t.Fatalf("t-back after the agent's recovery: %v %v, want TASK_RUNNING", state, err)
	}
	s2.mustCall(calls.Kill("t-back", agentID))
	s2.awaitAck("t-back", mesos.TASK_KILLED)
	if err := c.KillExecutor(s.fwID, agentID, "exec-back"); err != nil {
		t.Fatal(err)
	}
	s2.await("FAILURE of exec-back", func(e *scheduler.Event) bool {
		return e.Type == scheduler.Event_FAILURE && e.Failure.GetExecutorID().GetValue() == "exec-back"
	})
	checkpoints := filepath.Join(work, "meta", "agents", agentID)
	deadline := time.Now().Add(waitTimeout)
	for left := dirEntries(t, checkpoints); len(left) > 0; left = dirEntries(t, checkpoints) {
		if time.Now().After(deadline) {
			t.Fatalf("checkpoints left after every executor ended and every update was acknowledged: %v", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Launches the kill interrupts are resumed after the restart, under
// the same task IDs: an executor still fetching its binary (its process
// not started yet) is launched again; one started but not yet subscribed
// gets its tasks when it subscribes to the restarted agent.
func TestLaunchesInterruptedByTheKillAreResumed(t *testing.T) {
	work := t.TempDir()
	first := startClusterProcess(t, work)
	checkpoint := true
	info := frameworkInfo(func(info *mesos.FrameworkInfo) { info.Checkpoint = &checkpoint })
	s := subscribeAt(t, first.master, info, jsonCodec)
	o := s.awaitOffer()

	// The executor binary comes over HTTP, held until the kill.
	release := make(chan struct{})
	binary := buildTestExecutor(t)
	files := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
			http.ServeFile(w, r, binary)
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(files.Close)
	fetching := realExecutor(t, s.fwID, "exec-fetching", "run", "protobuf", "TESTEXECUTOR_RESUBSCRIBE=1")
	fetching.Command.URIs[0].Value = files.URL + "/testexecutor"
	slow := realExecutor(t, s.fwID, "exec-slow", "run", "protobuf", "TESTEXECUTOR_RESUBSCRIBE=1")
	cmd := "sleep 2 && exec ./testexecutor"
	slow.Command.Value = &cmd
	small := func(id string) mesos.TaskInfo {
		ti := taskInfo(o, id)
		ti.Resources = []mesos.Resource{scalar("cpus", 0.1), scalar("mem", 32)}
		return ti
	}
	s.mustCall(calls.Accept(calls.OfferOperations{calls.OpLaunchGroup(fetching, small("t-fetching")), calls.OpLaunchGroup(slow, small("t-slow"))}.WithOffers(o.ID)))
	// exec-slow's process started (its pid checkpointed), exec-fetching's
	// not.
	checkpoints := filepath.Join(work, "meta", "agents", o.AgentID.Value)
	deadline := time.Now().Add(waitTimeout)
	for strings.Count(readAll(t, checkpoints), `"session":`) != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("checkpoints: %s", readAll(t, checkpoints))
		}
		time.Sleep(20 * time.Millisecond)
	}
	first.kill()
	close(release)

	c := startProcessCluster(t, func(cfg *devcluster.Config) {
		cfg.WorkDir = work
		cfg.ExecutorReregistrationTimeout = devcluster.Duration(10 * time.Second)
	})
	info.ID = &mesos.FrameworkID{Value: s.fwID}
	s2 := subscribe(t, c, info, jsonCodec)
	s2.awaitAck("t-fetching", mesos.TASK_RUNNING)
	s2.awaitAck("t-slow", mesos.TASK_RUNNING)
}

// A task launched on a subscribed executor that never got it (the event
// lost as the cluster died): when the executor subscribes again without
// listing it among its unacknowledged tasks, it becomes TASK_DROPPED with
// REASON_AGENT_RESTARTED ("Task launched during agent restart", Mesos'
// Slave::subscribe), and the executor, left without tasks, is shut down.
func TestTaskTheExecutorNeverGotIsDropped(t *testing.T) {
	work := t.TempDir()
	first := startClusterProcess(t, work)
	checkpoint := true
	info := frameworkInfo(func(info *mesos.FrameworkInfo) { info.Checkpoint = &checkpoint })
	s := subscribeAt(t, first.master, info, jsonCodec)
	o := s.awaitOffer()
	launchGroup(s, o, realExecutor(t, s.fwID, "exec-deaf", "deaf", "protobuf", "TESTEXECUTOR_RESUBSCRIBE=1"), taskInfo(o, "t-lost"))
	checkpoints := filepath.Join(work, "meta", "agents", o.AgentID.Value)
	deadline := time.Now().Add(waitTimeout)
	for strings.Contains(readAll(t, checkpoints), `"queued":`) || !strings.Contains(readAll(t, checkpoints), `"session":`) {
		if time.Now().After(deadline) {
			t.Fatalf("the launch was not delivered: %s", readAll(t, checkpoints))
		}
		time.Sleep(20 * time.Millisecond)
	}
	first.kill()
	c := startProcessCluster(t, func(cfg *devcluster.Config) {
		cfg.WorkDir = work
		cfg.ExecutorReregistrationTimeout = devcluster.Duration(10 * time.Second)
	})
	info.ID = &mesos.FrameworkID{Value: s.fwID}
	s2 := subscribe(t, c, info, jsonCodec)
	st := s2.awaitAck("t-lost", mesos.TASK_DROPPED)
	if st.GetReason() != mesos.REASON_AGENT_RESTARTED || st.GetMessage() != "Task launched during agent restart" {
		t.Errorf("t-lost: %s %q, want REASON_AGENT_RESTARTED", st.GetReason(), st.GetMessage())
	}
	s2.await("FAILURE of exec-deaf (shut down)", func(e *scheduler.Event) bool {
		return e.Type == scheduler.Event_FAILURE && e.Failure.GetExecutorID().GetValue() == "exec-deaf"
	})
}

// The agents of a restarted cluster take back their addresses, which
// their executors know: one taken meanwhile is an error naming it, and
// the cluster does not start (its executors, if any, are left for the
// next start, once the address is free).
func TestRestartWithAnAgentAddressTaken(t *testing.T) {
	work := t.TempDir()
	c := startProcessCluster(t, func(cfg *devcluster.Config) { cfg.WorkDir = work })
	agentID := c.Agents()[0]
	endpoint, _ := c.AgentEndpoint(agentID)
	c.Stop()

	ln, err := net.Listen("tcp", endpoint)
	if err != nil {
		t.Fatal(err)
	}
	cfg := devcluster.Config{ListenAddr: "127.0.0.1:0", WorkDir: work, ExecutorMode: devcluster.ExecutorProcess,
		Agents: []devcluster.AgentSpec{{Hostname: "proc-1"}}, Logger: testlog.New(t)}
	if _, err := devcluster.Start(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "listen on "+endpoint+", its address in the last run") ||
		!strings.Contains(err.Error(), filepath.Join(work, "meta", "registry.json")) {
		t.Fatalf("Start with the agent's address %s taken: %v, want an error naming it and the registry", endpoint, err)
	}
	ln.Close()
	again := startProcessCluster(t, func(cfg *devcluster.Config) { cfg.WorkDir = work })
	if got, _ := again.AgentEndpoint(agentID); got != endpoint {
		t.Errorf("agent %s on %q once its address is free, want %s", agentID, got, endpoint)
	}
}

// A framework of the last run is known again, disconnected, until its
// failover timeout — counted from the restart — expires: then it is
// removed, also from the registry.
func TestRecoveredFrameworkFailoverTimeoutRunsFromTheRestart(t *testing.T) {
	work := t.TempDir()
	clock := clockwork.NewFakeClock()
	onClock := func(clock clockwork.Clock) func(*devcluster.Config) {
		return func(cfg *devcluster.Config) { cfg.WorkDir, cfg.Clock = work, clock }
	}
	c := startProcessCluster(t, onClock(clock))
	s := subscribe(t, c, frameworkInfo(failoverTimeout(time.Minute)), jsonCodec)
	s.disconnect()
	deadline := time.Now().Add(waitTimeout)
	for c.State()["frameworks"].([]any)[0].(map[string]any)["connected"] != false {
		if time.Now().After(deadline) {
			t.Fatal("the master did not notice the framework's disconnection")
		}
		time.Sleep(10 * time.Millisecond)
	}
	clock.Advance(50 * time.Second) // of its failover timeout in the last run: not counted
	c.Stop()

	clock = clockwork.NewFakeClock()
	c = startProcessCluster(t, onClock(clock))
	if fws := c.Frameworks(); !slices.Equal(fws, []string{s.fwID}) {
		t.Fatalf("frameworks after the restart %v, want %s", fws, s.fwID)
	}
	clock.Advance(59 * time.Second)
	if fws := c.Frameworks(); !slices.Equal(fws, []string{s.fwID}) {
		t.Fatalf("frameworks 59s after the restart %v, want %s still within its failover timeout", fws, s.fwID)
	}
	clock.Advance(time.Second)
	deadline = time.Now().Add(waitTimeout)
	for len(c.Frameworks()) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("framework %s not removed when its failover timeout expired", s.fwID)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if reg := readAll(t, filepath.Join(work, "meta")); strings.Contains(reg, s.fwID) {
		t.Errorf("the registry still lists the removed framework: %s", reg)
	}
}

// Stop (SIGTERM of cmd/devcluster or bcs-scheduler --dev) still stops
// everything, and keeps nothing of it: the executors and what their
// sessions ran are killed and their checkpoints removed, so the next
// start recovers no task; the registry keeps the framework and the
// agent's ID and address.
func TestStoppedClusterKeepsItsRegistryNotItsContainers(t *testing.T) {
	work := t.TempDir()
	c := startProcessCluster(t, func(cfg *devcluster.Config) { cfg.WorkDir = work })
	checkpoint := true
	info := frameworkInfo(func(info *mesos.FrameworkInfo) { info.Checkpoint = &checkpoint })
	s := subscribe(t, c, info, jsonCodec)
	o := s.awaitOffer()
	launchGroup(s, o, realExecutor(t, s.fwID, "exec-1", "run", "protobuf", "TESTEXECUTOR_RESUBSCRIBE=1", "TESTEXECUTOR_CHILDREN=1"), taskInfo(o, "t1"))
	s.awaitAck("t1", mesos.TASK_RUNNING)
	sandbox := sandboxOf(t, c, o.AgentID.Value, s.fwID, "exec-1")
	child, daemon := pidIn(t, sandbox, "child.pid"), pidIn(t, sandbox, "daemon.pid")
	t.Cleanup(func() { _ = syscall.Kill(daemon, syscall.SIGKILL) })
	checkpoints := filepath.Join(work, "meta", "agents", o.AgentID.Value)
	files, _ := filepath.Glob(filepath.Join(checkpoints, "*.json"))
	if len(files) != 1 {
		t.Fatalf("checkpoints of the running executor: %v", dirEntries(t, checkpoints))
	}
	// The task infos it keeps carry the instances' secrets: the
	// cluster's user only.
	for path, want := range map[string]os.FileMode{filepath.Join(work, "meta"): 0o700 | os.ModeDir, files[0]: 0o600} {
		if fi, err := os.Stat(path); err != nil || fi.Mode() != want {
			t.Errorf("%s: %v %v, want mode %v", path, fi.Mode(), err, want)
		}
	}
	c.Stop()
	if processAlive(child) {
		t.Errorf("the executor's child %d outlived Stop", child)
	}
	if left := dirEntries(t, checkpoints); len(left) > 0 {
		t.Errorf("checkpoints left after Stop: %v", left)
	}
	reg := readAll(t, filepath.Join(work, "meta"))
	if !strings.Contains(reg, s.fwID) || !strings.Contains(reg, o.AgentID.Value) {
		t.Errorf("the registry after Stop lacks the framework or the agent: %s", reg)
	}

	again := startProcessCluster(t, func(cfg *devcluster.Config) { cfg.WorkDir = work })
	info.ID = &mesos.FrameworkID{Value: s.fwID}
	s2 := subscribe(t, again, info, jsonCodec)
	s2.mustCall(calls.Reconcile(calls.ReconcileTasks(map[string]string{"t1": o.AgentID.Value})))
	if st := s2.await("t1 reconciled", isTaskUpdate("t1")).Update.Status; st.GetState() != mesos.TASK_GONE {
		t.Errorf("t1, killed by Stop, reconciled as %s, want TASK_GONE (its agent is back and does not know it)", st.GetState())
	}
}

// Simulated mode keeps nothing: 100,000 simulated tasks must not pay for
// checkpoints, and nothing of them could be recovered anyway.
func TestSimulatedClusterWritesNothing(t *testing.T) {
	work := t.TempDir()
	c := startCluster(t, func(cfg *devcluster.Config) { cfg.WorkDir = work })
	s := subscribe(t, c, frameworkInfo(), jsonCodec)
	o := s.awaitOffer()
	launchGroup(s, o, executorInfo(s.fwID, "exec-1"), taskInfo(o, "t1"))
	s.awaitAck("t1", mesos.TASK_STARTING)
	s.awaitAck("t1", mesos.TASK_RUNNING)
	c.Stop()
	if left := dirEntries(t, work); len(left) > 0 {
		t.Errorf("a simulated cluster wrote %v", left)
	}
}

// dirEntries lists what is under dir (none when it does not exist).
func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && path != dir {
			out = append(out, strings.TrimPrefix(path, dir+"/"))
		}
		return err
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return out
}

// readAll concatenates the files under dir.
func readAll(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	for _, name := range dirEntries(t, dir) {
		if data, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
			b.Write(data)
		}
	}
	return b.String()
}
