package devcluster_test

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/bcs-mesos/bcs-mesos/pkg/devcluster"
)

// startProcessCluster runs one agent whose executors are real processes.
func startProcessCluster(t *testing.T, edit func(*devcluster.Config)) *devcluster.Cluster {
	t.Helper()
	return startCluster(t, func(cfg *devcluster.Config) {
		cfg.ExecutorMode = devcluster.ExecutorProcess
		cfg.Agents = []devcluster.AgentSpec{{Hostname: "proc-1"}}
		cfg.ExecutorShutdownGracePeriod = devcluster.Duration(2 * time.Second)
		if edit != nil {
			edit(cfg)
		}
	})
}

// realExecutor is an ExecutorInfo that fetches the test executor binary
// with a file:// URI (executable) and runs it from the sandbox, with the
// extra environment variables env ("NAME=value").
func realExecutor(t *testing.T, fwID, id, mode, codec string, env ...string) mesos.ExecutorInfo {
	bin := buildTestExecutor(t)
	ex := executorInfo(fwID, id)
	cmd := "./testexecutor"
	executable := true
	ex.Command = &mesos.CommandInfo{
		Value: &cmd,
		URIs:  []mesos.CommandInfo_URI{{Value: "file://" + bin, Executable: &executable}},
		Environment: &mesos.Environment{Variables: []mesos.Environment_Variable{
			{Name: "TESTEXECUTOR_MODE", Value: &mode},
			{Name: "TESTEXECUTOR_CODEC", Value: &codec},
		}},
	}
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		ex.Command.Environment.Variables = append(ex.Command.Environment.Variables, mesos.Environment_Variable{Name: name, Value: &value})
	}
	return ex
}

// sandboxOf finds the run directory of an executor.
func sandboxOf(t *testing.T, c *devcluster.Cluster, agentID, fwID, execID string) string {
	t.Helper()
	runs := runDirs(filepath.Join(c.WorkDir(), "agents", agentID, "frameworks", fwID, "executors", execID, "runs"))
	if len(runs) != 1 {
		t.Fatalf("sandbox runs %v", runs)
	}
	return runs[0]
}

// runDirs are the run directories matching runsGlob (…/executors/*/runs),
// without the runs/latest links.
func runDirs(runsGlob string) []string {
	all, _ := filepath.Glob(filepath.Join(runsGlob, "*"))
	var runs []string
	for _, dir := range all {
		if filepath.Base(dir) != "latest" {
			runs = append(runs, dir)
		}
	}
	return runs
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Fields(strings.ReplaceAll(string(b), "\n", " "))
}

// A real executor (mesos-go's executor client) subscribes, receives
// LAUNCH_GROUP, reports TASK_RUNNING then TASK_FINISHED; each update comes
// with the executor's uuid, and the executor is told ACKNOWLEDGED once the
// scheduler acknowledges. When it exits the scheduler gets FAILURE with
// status 0. Its environment is the one Mesos gives custom executors.
func TestRealExecutorLaunchGroup(t *testing.T) {
	for _, codec := range []string{"protobuf", "json"} {
		t.Run(codec, func(t *testing.T) {
			c := startProcessCluster(t, nil)
			s := subscribe(t, c, frameworkInfo(), jsonCodec)
			o := s.awaitOffer()
			ex := realExecutor(t, s.fwID, "exec-1", "finish", codec)
			launchGroup(s, o, ex, taskInfo(o, "t1"), taskInfo(o, "t2"))

			var uuids []string
			for _, id := range []string{"t1", "t2"} {
				st := s.awaitAck(id, mesos.TASK_RUNNING)
				if st.GetSource() != mesos.SOURCE_EXECUTOR || !st.GetHealthy() || st.ExecutorID.GetValue() != "exec-1" {
					t.Errorf("%s RUNNING: source %s healthy %v executor %v", id, st.GetSource(), st.GetHealthy(), st.ExecutorID)
				}
				uuids = append(uuids, hex.EncodeToString(st.UUID))
				st = s.awaitAck(id, mesos.TASK_FINISHED)
				uuids = append(uuids, hex.EncodeToString(st.UUID))
			}
			f := s.await("FAILURE", isType(scheduler.Event_FAILURE)).Failure
			if f.ExecutorID.GetValue() != "exec-1" || f.AgentID.GetValue() != o.AgentID.Value || f.GetStatus() != 0 {
				t.Errorf("FAILURE %v", f)
			}

			sandbox := sandboxOf(t, c, o.AgentID.Value, s.fwID, "exec-1")
			acks := strings.Join(readLines(t, filepath.Join(sandbox, "acks.log")), " ")
			for _, u := range uuids {
				if !strings.Contains(acks, u) {
					t.Errorf("executor never got ACKNOWLEDGED for %s (acks: %s)", u, acks)
				}
			}
			env := map[string]string{}
			for _, kv := range readLines(t, filepath.Join(sandbox, "env.txt")) {
				k, v, _ := strings.Cut(kv, "=")
				env[k] = v
			}
			want := map[string]string{
				"MESOS_FRAMEWORK_ID":                   s.fwID,
				"MESOS_EXECUTOR_ID":                    "exec-1",
				"MESOS_DIRECTORY":                      sandbox,
				"MESOS_SANDBOX":                        sandbox,
				"MESOS_SLAVE_ID":                       o.AgentID.Value,
				"MESOS_CHECKPOINT":                     "0",
				"MESOS_HTTP_COMMAND_EXECUTOR":          "0",
				"MESOS_EXECUTOR_SHUTDOWN_GRACE_PERIOD": "2secs",
				"TESTEXECUTOR_MODE":                    "finish",
				"PWD":                                  sandbox,
			}
			for k, v := range want {
				if env[k] != v {
					t.Errorf("%s=%q, want %q", k, env[k], v)
				}
			}
			if ep := env["MESOS_AGENT_ENDPOINT"]; !strings.HasPrefix(ep, "127.0.0.1:") || env["MESOS_SLAVE_PID"] != "slave(1)@"+ep {
				t.Errorf("MESOS_AGENT_ENDPOINT=%q MESOS_SLAVE_PID=%q", ep, env["MESOS_SLAVE_PID"])
			}
			for _, k := range []string{"MESOS_RECOVERY_TIMEOUT", "MESOS_SUBSCRIPTION_BACKOFF_MAX"} {
				if _, ok := env[k]; ok {
					t.Errorf("%s set without checkpointing", k)
				}
			}
			if fi, err := os.Stat(filepath.Join(sandbox, "testexecutor")); err != nil || fi.Mode()&0o100 == 0 {
				t.Errorf("fetched executor not executable: %v %v", fi, err)
			}
		})
	}
}

// Checkpointing frameworks' executors also get MESOS_RECOVERY_TIMEOUT and
// MESOS_SUBSCRIPTION_BACKOFF_MAX.
func TestRealExecutorCheckpointEnv(t *testing.T) {
	c := startProcessCluster(t, nil)
	s := subscribe(t, c, frameworkInfo(func(i *mesos.FrameworkInfo) { b := true; i.Checkpoint = &b }), jsonCodec)
	o := s.awaitOffer()
	launchGroup(s, o, realExecutor(t, s.fwID, "exec-1", "finish", "protobuf"), taskInfo(o, "t1"))
	s.awaitAck("t1", mesos.TASK_RUNNING)
	s.awaitAck("t1", mesos.TASK_FINISHED)
	s.await("FAILURE", isType(scheduler.Event_FAILURE))
	env := strings.Join(readLines(t, filepath.Join(sandboxOf(t, c, o.AgentID.Value, s.fwID, "exec-1"), "env.txt")), " ")
	for _, kv := range []string{"MESOS_CHECKPOINT=1", "MESOS_RECOVERY_TIMEOUT=15mins", "MESOS_SUBSCRIPTION_BACKOFF_MAX=2secs"} {
		if !strings.Contains(env, kv) {
			t.Errorf("env lacks %s: %s", kv, env)
		}
	}
}

// An executor's update is resent to the scheduler until acknowledged, and
// the executor hears ACKNOWLEDGED only after the scheduler's ACK.
func TestRealExecutorUpdateRetry(t *testing.T) {
	c := startProcessCluster(t, func(cfg *devcluster.Config) { cfg.StatusUpdateRetry = devcluster.Duration(100 * time.Millisecond) })
	s := subscribe(t, c, frameworkInfo(), jsonCodec)
	o := s.awaitOffer()
	launchGroup(s, o, realExecutor(t, s.fwID, "exec-1", "run", "protobuf"), taskInfo(o, "t1"))
	first := s.await("TASK_RUNNING", isUpdate("t1", mesos.TASK_RUNNING)).Update.Status
	again := s.await("resent TASK_RUNNING", isUpdate("t1", mesos.TASK_RUNNING)).Update.Status
	if !bytes.Equal(first.UUID, again.UUID) {
		t.Errorf("resent uuid %x, want %x", again.UUID, first.UUID)
	}
	acksLog := filepath.Join(sandboxOf(t, c, o.AgentID.Value, s.fwID, "exec-1"), "acks.log")
	if lines := readLines(t, acksLog); len(lines) != 0 {
		t.Fatalf("executor acknowledged before the scheduler: %v", lines)
	}
	s.ack(first)
	want := hex.EncodeToString(first.UUID)
	deadline := time.Now().Add(waitTimeout)
	for !strings.Contains(strings.Join(readLines(t, acksLog), " "), want) {
		if time.Now().After(deadline) {
			t.Fatal("executor never got ACKNOWLEDGED")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// MESSAGE goes scheduler → executor (the test executor echoes it back as
// an executor MESSAGE); KILL is forwarded and answered with TASK_KILLED;
// SHUTDOWN makes the executor exit.
func TestRealExecutorMessageKillShutdown(t *testing.T) {
	c := startProcessCluster(t, nil)
	s := subscribe(t, c, frameworkInfo(), jsonCodec)
	o := s.awaitOffer()
	launchGroup(s, o, realExecutor(t, s.fwID, "exec-1", "run", "json"), taskInfo(o, "t1"), taskInfo(o, "t2"))
	s.awaitAck("t1", mesos.TASK_RUNNING)
	s.awaitAck("t2", mesos.TASK_RUNNING)

	s.mustCall(calls.Message(o.AgentID.Value, "exec-1", []byte("hi")))
	m := s.await("MESSAGE", isType(scheduler.Event_MESSAGE)).Message
	if string(m.Data) != "echo:hi" || m.ExecutorID.Value != "exec-1" || m.AgentID.Value != o.AgentID.Value {
		t.Errorf("MESSAGE %q from %s on %s", m.Data, m.ExecutorID.Value, m.AgentID.Value)
	}

	s.mustCall(calls.Kill("t1", o.AgentID.Value))
	s.awaitAck("t1", mesos.TASK_KILLED)

	s.mustCall(calls.Shutdown("exec-1", o.AgentID.Value))
	s.awaitAck("t2", mesos.TASK_KILLED)
	f := s.await("FAILURE", isType(scheduler.Event_FAILURE)).Failure
	if f.ExecutorID.GetValue() != "exec-1" || f.GetStatus() != 0 {
		t.Errorf("FAILURE %v", f)
	}
}

// An executor that exits with live tasks leaves them TASK_FAILED with
// REASON_EXECUTOR_TERMINATED; FAILURE carries the wait status.
func TestRealExecutorCrash(t *testing.T) {
	c := startProcessCluster(t, nil)
	s := subscribe(t, c, frameworkInfo(), jsonCodec)
	o := s.awaitOffer()
	launchGroup(s, o, realExecutor(t, s.fwID, "exec-1", "crash", "protobuf"), taskInfo(o, "t1"))
	s.awaitAck("t1", mesos.TASK_RUNNING)
	st := s.awaitAck("t1", mesos.TASK_FAILED)
	if st.GetReason() != mesos.REASON_EXECUTOR_TERMINATED || st.GetSource() != mesos.SOURCE_AGENT {
		t.Errorf("got %s %s", st.GetReason(), st.GetSource())
	}
	f := s.await("FAILURE", isType(scheduler.Event_FAILURE)).Failure
	if ws := syscall.WaitStatus(f.GetStatus()); !ws.Exited() || ws.ExitStatus() != 3 {
		t.Errorf("FAILURE status %d, want exit 3", f.GetStatus())
	}
}

// KillExecutor (test API) kills the executor as kill -9 would; the agent
// then destroys its container like Mesos' posix launcher (mesos-facts.md):
// a process it started in a process group of its own dies with it, a
// setsid daemon survives.
func TestKillExecutorAPI(t *testing.T) {
	c := startProcessCluster(t, nil)
	s := subscribe(t, c, frameworkInfo(), jsonCodec)
	o := s.awaitOffer()
	launchGroup(s, o, realExecutor(t, s.fwID, "exec-1", "run", "protobuf", "TESTEXECUTOR_CHILDREN=1"), taskInfo(o, "t1"))
	s.awaitAck("t1", mesos.TASK_RUNNING)
	sandbox := sandboxOf(t, c, o.AgentID.Value, s.fwID, "exec-1")
	child, daemon := pidIn(t, sandbox, "child.pid"), pidIn(t, sandbox, "daemon.pid")
	t.Cleanup(func() { _ = syscall.Kill(daemon, syscall.SIGKILL) })
	if err := c.KillExecutor(s.fwID, o.AgentID.Value, "exec-1"); err != nil {
		t.Fatal(err)
	}
	st := s.awaitAck("t1", mesos.TASK_FAILED)
	if st.GetReason() != mesos.REASON_EXECUTOR_TERMINATED {
		t.Errorf("reason %s", st.GetReason())
	}
	f := s.await("FAILURE", isType(scheduler.Event_FAILURE)).Failure
	if ws := syscall.WaitStatus(f.GetStatus()); !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Errorf("FAILURE status %d, want SIGKILL", f.GetStatus())
	}
	// The kill is sent with the FAILURE; the child's exit and its reaping by
	// init follow asynchronously.
	for deadline := time.Now().Add(5 * time.Second); processAlive(child) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if processAlive(child) {
		t.Errorf("the executor's child %d outlived its container by 5s", child)
	}
	if !processAlive(daemon) {
		t.Errorf("the setsid daemon %d died with the container; Mesos' posix launcher leaves it", daemon)
	}
}

func pidIn(t *testing.T, dir, name string) int {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
			if pid, err := strconv.Atoi(string(b)); err == nil {
				return pid
			}
		}
	}
	t.Fatalf("no %s in %s", name, dir)
	return 0
}

// processAlive: the pid runs and is no zombie.
func processAlive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	return err == nil && !strings.Contains(string(stat), ") Z ")
}

// A LAUNCH of a command task in process mode runs the shell command in a
// sandbox: exit 0 is TASK_FINISHED, anything else TASK_FAILED.
func TestProcessCommandTasks(t *testing.T) {
	c := startProcessCluster(t, nil)
	s := subscribe(t, c, frameworkInfo(), jsonCodec)
	o := s.awaitOffer()
	ok, bad := taskInfo(o, "ok"), taskInfo(o, "bad")
	okCmd, badCmd := `test -n "$MESOS_SANDBOX" && test "$PWD" = "$MESOS_SANDBOX"`, "exit 7"
	ok.Command = &mesos.CommandInfo{Value: &okCmd}
	bad.Command = &mesos.CommandInfo{Value: &badCmd}
	s.mustCall(calls.Accept(calls.OfferOperations{calls.OpLaunch(ok, bad)}.WithOffers(o.ID)))
	s.awaitAck("ok", mesos.TASK_STARTING)
	s.awaitAck("ok", mesos.TASK_RUNNING)
	s.awaitAck("ok", mesos.TASK_FINISHED)
	s.awaitAck("bad", mesos.TASK_STARTING)
	s.awaitAck("bad", mesos.TASK_RUNNING)
	st := s.awaitAck("bad", mesos.TASK_FAILED)
	if st.GetMessage() != "Command exited with status 7" {
		t.Errorf("message %q", st.GetMessage())
	}
}

// Framework removal after the failover timeout shuts its executors down.
func TestFailoverTimeoutKillsExecutor(t *testing.T) {
	c := startProcessCluster(t, func(cfg *devcluster.Config) {
		cfg.ExecutorShutdownGracePeriod = devcluster.Duration(200 * time.Millisecond)
	})
	s := subscribe(t, c, frameworkInfo(failoverTimeout(100*time.Millisecond)), jsonCodec)
	o := s.awaitOffer()
	launchGroup(s, o, realExecutor(t, s.fwID, "exec-1", "run", "protobuf"), taskInfo(o, "t1"))
	s.awaitAck("t1", mesos.TASK_RUNNING)
	sandbox := sandboxOf(t, c, o.AgentID.Value, s.fwID, "exec-1")
	s.disconnect()
	deadline := time.Now().Add(waitTimeout)
	for {
		if st, ok := c.State()["slaves"].([]any); ok && len(st) == 1 {
			used := st[0].(map[string]any)["used_resources"].(map[string]any)
			if used["cpus"] == 0.0 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("executor resources still in use after the failover timeout")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := os.Stat(sandbox); err != nil {
		t.Errorf("sandbox gone: %v", err)
	}
}

// sleeperExecutor never subscribes: it exercises the agent's timeouts.
func sleeperExecutor(fwID, id string) mesos.ExecutorInfo {
	ex := executorInfo(fwID, id)
	cmd := "sleep 1000 & sleep 1000"
	ex.Command = &mesos.CommandInfo{Value: &cmd}
	return ex
}

// SHUTDOWN of an executor that does not react: after the shutdown grace
// period the agent kills its process group; its tasks end TASK_KILLED.
func TestShutdownGracePeriodKillsProcessGroup(t *testing.T) {
	c := startProcessCluster(t, func(cfg *devcluster.Config) {
		cfg.ExecutorShutdownGracePeriod = devcluster.Duration(300 * time.Millisecond)
	})
	s := subscribe(t, c, frameworkInfo(), jsonCodec)
	o := s.awaitOffer()
	launchGroup(s, o, sleeperExecutor(s.fwID, "sleeper"), taskInfo(o, "t1"))
	time.Sleep(100 * time.Millisecond) // let the process start
	start := time.Now()
	s.mustCall(calls.Shutdown("sleeper", o.AgentID.Value))
	st := s.awaitAck("t1", mesos.TASK_KILLED)
	if waited := time.Since(start); waited < 300*time.Millisecond {
		t.Errorf("killed after %v, before the 300ms grace period", waited)
	}
	if st.GetReason() != mesos.REASON_EXECUTOR_TERMINATED {
		t.Errorf("reason %s", st.GetReason())
	}
	f := s.await("FAILURE", isType(scheduler.Event_FAILURE)).Failure
	if ws := syscall.WaitStatus(f.GetStatus()); !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Errorf("FAILURE status %d, want SIGKILL", f.GetStatus())
	}
}

// An executor that never subscribes is killed after the registration
// timeout: REASON_EXECUTOR_REGISTRATION_TIMEOUT.
func TestExecutorRegistrationTimeout(t *testing.T) {
	c := startProcessCluster(t, func(cfg *devcluster.Config) {
		cfg.ExecutorRegistrationTimeout = devcluster.Duration(200 * time.Millisecond)
	})
	s := subscribe(t, c, frameworkInfo(), jsonCodec)
	o := s.awaitOffer()
	launchGroup(s, o, sleeperExecutor(s.fwID, "sleeper"), taskInfo(o, "t1"))
	st := s.awaitAck("t1", mesos.TASK_FAILED)
	if st.GetReason() != mesos.REASON_EXECUTOR_REGISTRATION_TIMEOUT {
		t.Errorf("reason %s", st.GetReason())
	}
}

// A URI that cannot be fetched fails the launch:
// REASON_CONTAINER_LAUNCH_FAILED.
func TestFetchFailureFailsLaunch(t *testing.T) {
	c := startProcessCluster(t, nil)
	s := subscribe(t, c, frameworkInfo(), jsonCodec)
	o := s.awaitOffer()
	ex := sleeperExecutor(s.fwID, "e1")
	ex.Command.URIs = []mesos.CommandInfo_URI{{Value: "file:///nonexistent/devcluster/artifact.tgz"}}
	launchGroup(s, o, ex, taskInfo(o, "t1"))
	st := s.awaitAck("t1", mesos.TASK_FAILED)
	if st.GetReason() != mesos.REASON_CONTAINER_LAUNCH_FAILED || !strings.Contains(st.GetMessage(), "artifact.tgz") {
		t.Errorf("got %s %q", st.GetReason(), st.GetMessage())
	}
}

// TEARDOWN removes the framework at once: its stream ends, its executors
// are shut down and its ID cannot subscribe again.
func TestTeardown(t *testing.T) {
	c := startProcessCluster(t, nil)
	info := frameworkInfo()
	s := subscribe(t, c, info, jsonCodec)
	o := s.awaitOffer()
	launchGroup(s, o, realExecutor(t, s.fwID, "exec-1", "run", "protobuf"), taskInfo(o, "t1"))
	s.awaitAck("t1", mesos.TASK_RUNNING)
	sandbox := sandboxOf(t, c, o.AgentID.Value, s.fwID, "exec-1")
	s.mustCall(&scheduler.Call{Type: scheduler.Call_TEARDOWN})
	s.streamEnded()
	if got := c.Frameworks(); len(got) != 0 {
		t.Errorf("frameworks after TEARDOWN: %v", got)
	}
	deadline := time.Now().Add(waitTimeout)
	for {
		// The test executor logs SHUTDOWN handling by exiting; its stderr
		// ends and the agent frees its resources.
		slaves := c.State()["slaves"].([]any)
		if slaves[0].(map[string]any)["used_resources"].(map[string]any)["cpus"] == 0.0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("executor still holds resources after TEARDOWN")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := os.Stat(filepath.Join(sandbox, "stderr")); err != nil {
		t.Errorf("executor stderr: %v", err)
	}
	info.ID = &mesos.FrameworkID{Value: s.fwID}
	s2, err := trySubscribe(t, c.MasterURL(), info, jsonCodec)
	if err != nil {
		t.Fatal(err)
	}
	if e := s2.await("ERROR", isType(scheduler.Event_ERROR)); e.Error.Message != "Framework has been removed" {
		t.Errorf("ERROR %q", e.Error.Message)
	}
}

// LAUNCH (not LAUNCH_GROUP) with a custom executor delivers a LAUNCH
// event; a second LAUNCH reuses the running executor.
func TestRealExecutorLaunch(t *testing.T) {
	c := startProcessCluster(t, nil)
	s := subscribe(t, c, frameworkInfo(), jsonCodec)
	o := s.awaitOffer()
	ex := realExecutor(t, s.fwID, "exec-1", "run", "protobuf")
	t1 := taskInfo(o, "t1")
	t1.Executor = &ex
	s.mustCall(calls.Accept(calls.OfferOperations{calls.OpLaunch(t1)}.WithOffers(o.ID)).With(calls.RefuseSeconds(0)))
	s.awaitAck("t1", mesos.TASK_RUNNING)

	o = s.awaitOffer()
	found := false
	for _, id := range o.ExecutorIDs {
		found = found || id.Value == "exec-1"
	}
	if !found {
		t.Errorf("offer executor_ids %v lacks the running executor", o.ExecutorIDs)
	}
	t2 := taskInfo(o, "t2")
	t2.Executor = &ex
	s.mustCall(calls.Accept(calls.OfferOperations{calls.OpLaunch(t2)}.WithOffers(o.ID)))
	s.awaitAck("t2", mesos.TASK_RUNNING)
	if runs := runDirs(filepath.Join(c.WorkDir(), "agents", "*", "frameworks", s.fwID, "executors", "exec-1", "runs")); len(runs) != 1 {
		t.Errorf("%d executor runs, want 1", len(runs))
	}
}

// KILL of a task the executor has not received yet (it has not
// subscribed): the agent drops it, TASK_KILLED /
// REASON_TASK_KILLED_DURING_LAUNCH.
func TestKillBeforeExecutorSubscribes(t *testing.T) {
	c := startProcessCluster(t, nil)
	s := subscribe(t, c, frameworkInfo(), jsonCodec)
	o := s.awaitOffer()
	launchGroup(s, o, sleeperExecutor(s.fwID, "sleeper"), taskInfo(o, "t1"), taskInfo(o, "t2"))
	s.mustCall(calls.Kill("t1", o.AgentID.Value))
	st := s.awaitAck("t1", mesos.TASK_KILLED)
	if st.GetReason() != mesos.REASON_TASK_KILLED_DURING_LAUNCH || st.GetSource() != mesos.SOURCE_AGENT {
		t.Errorf("got %s %s", st.GetReason(), st.GetSource())
	}
	if state, err := c.TaskState(s.fwID, "t2"); err != nil || state != mesos.TASK_STAGING {
		t.Errorf("t2: %s %v, want TASK_STAGING", state, err)
	}
}

// The agent's executor API answers bad calls like the Mesos agent: 400
// with the reason, and 202 for accepted calls.
func TestExecutorHTTPContract(t *testing.T) {
	c := startProcessCluster(t, nil)
	s := subscribe(t, c, frameworkInfo(), jsonCodec)
	o := s.awaitOffer()
	launchGroup(s, o, realExecutor(t, s.fwID, "exec-1", "run", "protobuf"), taskInfo(o, "t1"))
	s.awaitAck("t1", mesos.TASK_RUNNING)
	ep, err := c.AgentEndpoint(o.AgentID.Value)
	if err != nil {
		t.Fatal(err)
	}
	ids := `"framework_id":{"value":"` + s.fwID + `"},"executor_id":{"value":"exec-1"}`
	tests := []struct {
		name, body string
		code       int
		want       string
	}{
		{"update without uuid", `{"type":"UPDATE",` + ids + `,"update":{"status":{"task_id":{"value":"t1"},"state":"TASK_RUNNING","source":"SOURCE_EXECUTOR"}}}`, http.StatusBadRequest, "Failed to validate executor::Call: Expecting 'uuid' to be present"},
		{"unknown executor", `{"type":"HEARTBEAT","framework_id":{"value":"` + s.fwID + `"},"executor_id":{"value":"nope"}}`, http.StatusBadRequest, "Executor cannot be found"},
		{"no type", `{` + ids + `}`, http.StatusBadRequest, "Failed to validate executor::Call: Expecting 'type' to be present"},
		{"heartbeat", `{"type":"HEARTBEAT",` + ids + `}`, http.StatusAccepted, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := http.Post("http://"+ep+"/api/v1/executor", "application/json", strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.code || string(b) != tc.want {
				t.Errorf("got %d %q, want %d %q", resp.StatusCode, b, tc.code, tc.want)
			}
		})
	}
}

// RestartAgent (Mesos agent recovery): an executor of a checkpointing
// framework that does not subscribe again within the agent's
// re-registration timeout is killed and its task becomes TASK_GONE with
// REASON_EXECUTOR_REREGISTRATION_TIMEOUT (Mesos'
// Slave::reregisterExecutorTimeout: the task was started and is gone); an
// executor of a framework without checkpointing is not recovered at all.
// (The real executor that does come back is tested in
// cmd/bcs-process-executor.)
func TestRestartAgentRecoversOnlyExecutorsThatComeBack(t *testing.T) {
	c := startProcessCluster(t, func(cfg *devcluster.Config) {
		cfg.ExecutorReregistrationTimeout = devcluster.Duration(300 * time.Millisecond)
	})
	checkpoint := true
	s := subscribe(t, c, frameworkInfo(func(info *mesos.FrameworkInfo) { info.Checkpoint = &checkpoint }), jsonCodec)
	o := s.awaitOffer()
	launchGroup(s, o, realExecutor(t, s.fwID, "exec-hung", "run", "protobuf", "TESTEXECUTOR_STAY=1"), taskInfo(o, "t1"))
	s.awaitAck("t1", mesos.TASK_RUNNING)
	if err := c.RestartAgent(o.AgentID.Value, 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	st := s.awaitAck("t1", mesos.TASK_GONE)
	if st.GetReason() != mesos.REASON_EXECUTOR_REREGISTRATION_TIMEOUT || st.GetSource() != mesos.SOURCE_AGENT {
		t.Errorf("t1: %s from %s, want REASON_EXECUTOR_REREGISTRATION_TIMEOUT from the agent", st.GetReason(), st.GetSource())
	}

	s.mustCall(&scheduler.Call{Type: scheduler.Call_TEARDOWN}) // its offers go to the next framework
	plain := subscribe(t, c, frameworkInfo(), jsonCodec)
	o = plain.awaitOffer()
	launchGroup(plain, o, realExecutor(t, plain.fwID, "exec-plain", "run", "protobuf"), taskInfo(o, "t2"))
	plain.awaitAck("t2", mesos.TASK_RUNNING)
	if err := c.RestartAgent(o.AgentID.Value, 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if st := plain.awaitAck("t2", mesos.TASK_FAILED); st.GetReason() != mesos.REASON_EXECUTOR_TERMINATED {
		t.Errorf("t2: %s, want REASON_EXECUTOR_TERMINATED", st.GetReason())
	}
}

// Stop returns, from every caller, only once the cluster has stopped: the
// devcluster command stops on a signal both from Start's context and from
// its own deferred Stop, and used to exit while the first Stop still
// waited for executors, leaving them and their tasks running.
func TestConcurrentStopsWaitForTheExecutors(t *testing.T) {
	c := startProcessCluster(t, nil)
	s := subscribe(t, c, frameworkInfo(), jsonCodec)
	o := s.awaitOffer()
	// A child to outlive, and no exit after SHUTDOWN: Stop must kill.
	launchGroup(s, o, realExecutor(t, s.fwID, "exec-1", "run", "protobuf", "TESTEXECUTOR_CHILDREN=1", "TESTEXECUTOR_STAY=1"), taskInfo(o, "t1"))
	s.awaitAck("t1", mesos.TASK_RUNNING)
	sandbox := sandboxOf(t, c, o.AgentID.Value, s.fwID, "exec-1")
	child, daemon := pidIn(t, sandbox, "child.pid"), pidIn(t, sandbox, "daemon.pid")
	t.Cleanup(func() { _ = syscall.Kill(daemon, syscall.SIGKILL) })
	first := make(chan struct{})
	go func() { c.Stop(); close(first) }()
	time.Sleep(10 * time.Millisecond)
	c.Stop()
	if processAlive(child) {
		t.Errorf("a second Stop returned while the executor's child %d still ran", child)
	}
	<-first
}

// A process-mode agent offers no port another program on the
// machine holds (here a listener of the test's), as a real agent's
// --resources would leave it out: its instance would fail with "address
// already in use".
func TestProcessAgentOffersNoBusyPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	busy := uint64(ln.Addr().(*net.TCPAddr).Port)
	c := startProcessCluster(t, func(cfg *devcluster.Config) {
		cfg.Agents[0].Resources.Ports = []devcluster.PortRange{{Begin: busy - 1, End: busy + 1}}
	})
	s := subscribe(t, c, frameworkInfo(), jsonCodec)
	o := s.awaitOffer()
	var offered []string
	for _, r := range o.Resources {
		if r.Name == "ports" {
			for _, rg := range r.GetRanges().GetRange() {
				offered = append(offered, fmt.Sprintf("%d-%d", rg.Begin, rg.End))
			}
		}
	}
	if want := []string{fmt.Sprintf("%d-%d", busy-1, busy-1), fmt.Sprintf("%d-%d", busy+1, busy+1)}; !slices.Equal(offered, want) {
		t.Errorf("offered ports %v, want %v: not %d, which the test holds", offered, want, busy)
	}
}
