package devcluster_test

import (
	"bytes"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/bcs-mesos/bcs-mesos/pkg/devcluster"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
)

// LAUNCH_GROUP validation reproduces src/master/validation.cpp and the
// facts observed on a real master (shared/reference/mesos-facts.md): every
// task of an invalid group gets TASK_ERROR / REASON_TASK_GROUP_INVALID with
// Mesos' message, from the master, without a uuid.
func TestLaunchGroupValidation(t *testing.T) {
	c := startCluster(t, func(cfg *devcluster.Config) { cfg.Agents = []devcluster.AgentSpec{{}} })
	s := subscribe(t, c, frameworkInfo(), jsonCodec)

	tests := []struct {
		name    string
		edit    func(ex *mesos.ExecutorInfo, tasks []mesos.TaskInfo) []mesos.TaskInfo
		message string
	}{
		{
			name: "executor type not set",
			edit: func(ex *mesos.ExecutorInfo, ts []mesos.TaskInfo) []mesos.TaskInfo {
				ex.Type = mesos.ExecutorInfo_UNKNOWN
				return ts
			},
			message: "'ExecutorInfo.type' must be set",
		},
		{
			name:    "custom executor without command",
			edit:    func(ex *mesos.ExecutorInfo, ts []mesos.TaskInfo) []mesos.TaskInfo { ex.Command = nil; return ts },
			message: "'ExecutorInfo.command' must be set for 'CUSTOM' executor",
		},
		{
			name: "executor cpus below 0.01",
			edit: func(ex *mesos.ExecutorInfo, ts []mesos.TaskInfo) []mesos.TaskInfo {
				ex.Resources = []mesos.Resource{scalar("cpus", 0.001), scalar("mem", 32), scalar("disk", 10)}
				return ts
			},
			message: "Executor 'e1' uses less CPUs (0.001) than the minimum required (0.01)",
		},
		{
			name: "executor without cpus",
			edit: func(ex *mesos.ExecutorInfo, ts []mesos.TaskInfo) []mesos.TaskInfo {
				ex.Resources = []mesos.Resource{scalar("mem", 32), scalar("disk", 10)}
				return ts
			},
			message: "Executor 'e1' uses less CPUs (None) than the minimum required (0.01)",
		},
		{
			name: "executor memory below 32MB",
			edit: func(ex *mesos.ExecutorInfo, ts []mesos.TaskInfo) []mesos.TaskInfo {
				ex.Resources = []mesos.Resource{scalar("cpus", 0.1), scalar("mem", 16), scalar("disk", 10)}
				return ts
			},
			message: "Executor 'e1' uses less memory (16MB) than the minimum required (32MB)",
		},
		{
			name: "executor without disk",
			edit: func(ex *mesos.ExecutorInfo, ts []mesos.TaskInfo) []mesos.TaskInfo {
				ex.Resources = []mesos.Resource{scalar("cpus", 0.1), scalar("mem", 32)}
				return ts
			},
			message: "Executor 'e1' uses no disk",
		},
		{
			name: "task with a different executor",
			edit: func(ex *mesos.ExecutorInfo, ts []mesos.TaskInfo) []mesos.TaskInfo {
				other := *ex
				name := "other"
				other.Name = &name
				ts[1].Executor = &other
				return ts
			},
			message: "The `ExecutorInfo` of task 't2' is different from executor 'e1'",
		},
		{
			name: "duplicate task IDs refused instead of aborting",
			edit: func(ex *mesos.ExecutorInfo, ts []mesos.TaskInfo) []mesos.TaskInfo {
				ts[1].TaskID = ts[0].TaskID
				return ts
			},
			message: "Task 't1' is invalid: Task has duplicate ID: t1",
		},
		{
			name: "task without resources",
			edit: func(ex *mesos.ExecutorInfo, ts []mesos.TaskInfo) []mesos.TaskInfo {
				ts[0].Resources = nil
				return ts
			},
			message: "Task 't1' is invalid: Task uses no resources",
		},
		{
			name: "executor framework_id not set",
			edit: func(ex *mesos.ExecutorInfo, ts []mesos.TaskInfo) []mesos.TaskInfo {
				ex.FrameworkID = nil
				return ts
			},
			message: "'ExecutorInfo.framework_id' must be set",
		},
		{
			name: "more resources than offered",
			edit: func(ex *mesos.ExecutorInfo, ts []mesos.TaskInfo) []mesos.TaskInfo {
				ts[0].Resources = []mesos.Resource{scalar("cpus", 100), scalar("mem", 64)}
				return ts
			},
			message: "Total resources cpus(allocated: *):100.6; mem(allocated: *):160; disk(allocated: *):10 required by task group and its executor are more than available",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s.t = t
			o := s.awaitOffer()
			ex := executorInfo(s.fwID, "e1")
			tasks := tc.edit(&ex, []mesos.TaskInfo{taskInfo(o, "t1"), taskInfo(o, "t2")})
			launchGroup(s, o, ex, tasks...)
			seen := map[string]bool{}
			for range tasks {
				st := s.await("TASK_ERROR", func(e *scheduler.Event) bool {
					return e.Type == scheduler.Event_UPDATE && e.Update.Status.GetState() == mesos.TASK_ERROR
				}).Update.Status
				seen[st.TaskID.Value] = true
				if st.GetReason() != mesos.REASON_TASK_GROUP_INVALID || st.GetSource() != mesos.SOURCE_MASTER || len(st.UUID) != 0 {
					t.Errorf("status %s reason %s source %s uuid %x", st.GetState(), st.GetReason(), st.GetSource(), st.UUID)
				}
				if !strings.HasPrefix(st.GetMessage(), tc.message) {
					t.Errorf("message %q, want %q", st.GetMessage(), tc.message)
				}
			}
			for _, ti := range tasks {
				if !seen[ti.TaskID.Value] {
					t.Errorf("no TASK_ERROR for %s", ti.TaskID.Value)
				}
			}
			s.quiet("TASK_STARTING of a rejected group", 50*time.Millisecond, func(e *scheduler.Event) bool {
				return e.Type == scheduler.Event_UPDATE && e.Update.Status.GetState() != mesos.TASK_ERROR
			})
		})
	}
}

// ACCEPT naming an unknown or already used offer: TASK_DROPPED for
// PARTITION_AWARE frameworks, TASK_LOST otherwise, REASON_INVALID_OFFERS.
func TestAcceptInvalidOffers(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  []func(*mesos.FrameworkInfo)
		state mesos.TaskState
	}{
		{"partition aware", nil, mesos.TASK_DROPPED},
		{"not partition aware", []func(*mesos.FrameworkInfo){notPartitionAware}, mesos.TASK_LOST},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := startCluster(t, func(cfg *devcluster.Config) { cfg.Agents = []devcluster.AgentSpec{{}} })
			s := subscribe(t, c, frameworkInfo(tc.opts...), protoCodec)
			o := s.awaitOffer()
			ex := executorInfo(s.fwID, "e1")

			unknown := o
			unknown.ID = mesos.OfferID{Value: "no-such-offer"}
			launchGroup(s, unknown, ex, taskInfo(o, "a"))
			st := s.await("invalid offer update", isTaskUpdate("a")).Update.Status
			if st.GetState() != tc.state || st.GetReason() != mesos.REASON_INVALID_OFFERS ||
				st.GetMessage() != "Task launched with invalid offers: Offer no-such-offer is no longer valid" {
				t.Errorf("got %s %s %q", st.GetState(), st.GetReason(), st.GetMessage())
			}

			launchGroup(s, o, ex, taskInfo(o, "b"))
			s.await("b starting", isUpdate("b", mesos.TASK_STARTING))
			launchGroup(s, o, ex, taskInfo(o, "c")) // the offer is used up
			st = s.await("used offer update", isTaskUpdate("c")).Update.Status
			if st.GetState() != tc.state || st.GetMessage() != "Task launched with invalid offers: Offer "+o.ID.Value+" is no longer valid" {
				t.Errorf("got %s %q", st.GetState(), st.GetMessage())
			}
		})
	}
}

// Simulated executors: TASK_STARTING then TASK_RUNNING, each with a uuid
// to acknowledge; framework messages both ways through the test API;
// FailTask fails a task; once the executor has no live
// task it exits and the scheduler gets FAILURE with status 0.
func TestSimulatedTaskLifecycle(t *testing.T) {
	c := startCluster(t, func(cfg *devcluster.Config) { cfg.Agents = []devcluster.AgentSpec{{}} })
	s := subscribe(t, c, frameworkInfo(), jsonCodec)
	o := s.awaitOffer()
	launchGroup(s, o, executorInfo(s.fwID, "e1"), taskInfo(o, "t1"), taskInfo(o, "t2"))
	for _, id := range []string{"t1", "t2"} {
		st := s.awaitAck(id, mesos.TASK_STARTING)
		if st.GetSource() != mesos.SOURCE_EXECUTOR || st.ExecutorID.GetValue() != "e1" || st.AgentID.GetValue() != o.AgentID.Value {
			t.Errorf("%s: source %s executor %v agent %v", id, st.GetSource(), st.ExecutorID, st.AgentID)
		}
		s.awaitAck(id, mesos.TASK_RUNNING)
	}
	// Framework messages reach the simulated executor, which a test
	// answers for it.
	s.mustCall(calls.Message(o.AgentID.Value, "e1", []byte("ping")))
	var got [][]byte
	for deadline := time.Now().Add(5 * time.Second); len(got) == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		got, _ = c.ExecutorMessages(s.fwID, o.AgentID.Value, "e1")
	}
	if len(got) != 1 || string(got[0]) != "ping" {
		t.Errorf("the executor got %q, want ping", got)
	}
	if err := c.SendExecutorMessage(s.fwID, o.AgentID.Value, "e1", []byte("pong")); err != nil {
		t.Fatal(err)
	}
	m := s.await("MESSAGE", isType(scheduler.Event_MESSAGE)).Message
	if string(m.Data) != "pong" || m.ExecutorID.Value != "e1" || m.AgentID.Value != o.AgentID.Value {
		t.Errorf("MESSAGE %q from %s on %s", m.Data, m.ExecutorID.Value, m.AgentID.Value)
	}
	if _, err := c.ExecutorMessages(s.fwID, o.AgentID.Value, "nope"); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("messages of an unknown executor: %v", err)
	}

	if err := c.FailTask(s.fwID, "t1", "boom"); err != nil {
		t.Fatal(err)
	}
	st := s.awaitAck("t1", mesos.TASK_FAILED)
	if st.GetMessage() != "boom" {
		t.Errorf("message %q", st.GetMessage())
	}
	if err := c.FinishTask(s.fwID, "t2"); err != nil {
		t.Fatal(err)
	}
	s.awaitAck("t2", mesos.TASK_FINISHED)
	f := s.await("FAILURE", isType(scheduler.Event_FAILURE)).Failure
	if f.ExecutorID.GetValue() != "e1" || f.AgentID.GetValue() != o.AgentID.Value || f.GetStatus() != 0 {
		t.Errorf("FAILURE %v", f)
	}
	if err := c.FailTask(s.fwID, "t1", "again"); err == nil {
		t.Error("FailTask of a finished task succeeded")
	}
}

// LAUNCH with a command and no executor runs as a simulated command task;
// two tasks with one ID in one LAUNCH: the second is TASK_ERROR.
func TestLaunchCommandTasks(t *testing.T) {
	c := startCluster(t, func(cfg *devcluster.Config) { cfg.Agents = []devcluster.AgentSpec{{}} })
	s := subscribe(t, c, frameworkInfo(), jsonCodec)
	o := s.awaitOffer()
	cmd := "true"
	task := taskInfo(o, "cmd-1")
	task.Command = &mesos.CommandInfo{Value: &cmd}
	s.mustCall(calls.Accept(calls.OfferOperations{calls.OpLaunch(task, task)}.WithOffers(o.ID)))
	s.awaitAck("cmd-1", mesos.TASK_STARTING)
	st := s.await("duplicate TASK_ERROR", isUpdate("cmd-1", mesos.TASK_ERROR)).Update.Status
	if st.GetReason() != mesos.REASON_TASK_INVALID || st.GetMessage() != "Task has duplicate ID: cmd-1" {
		t.Errorf("got %s %q", st.GetReason(), st.GetMessage())
	}
	s.awaitAck("cmd-1", mesos.TASK_RUNNING)
	s.mustCall(calls.Kill("cmd-1", o.AgentID.Value))
	s.awaitAck("cmd-1", mesos.TASK_KILLED)
}

// Status updates are resent until acknowledged (the agent's status update
// manager), with the same uuid; the next update of the task waits. Stats
// count them.
func TestStatusUpdateRetryUntilAck(t *testing.T) {
	c := startCluster(t, func(cfg *devcluster.Config) {
		cfg.Agents = []devcluster.AgentSpec{{}}
		cfg.StatusUpdateRetry = devcluster.Duration(100 * time.Millisecond)
	})
	s := subscribe(t, c, frameworkInfo(), jsonCodec)
	o := s.awaitOffer()
	launchGroup(s, o, executorInfo(s.fwID, "e1"), taskInfo(o, "t1"))
	first := s.await("TASK_STARTING", isUpdate("t1", mesos.TASK_STARTING)).Update.Status
	again := s.await("resent TASK_STARTING", isUpdate("t1", mesos.TASK_STARTING)).Update.Status
	if !bytes.Equal(first.UUID, again.UUID) {
		t.Errorf("resent with uuid %x, first had %x", again.UUID, first.UUID)
	}
	s.quiet("TASK_RUNNING before the ack", 150*time.Millisecond, isUpdate("t1", mesos.TASK_RUNNING))
	s.ack(first)
	s.awaitAck("t1", mesos.TASK_RUNNING)
	s.quiet("resend after the ack", 300*time.Millisecond, isUpdate("t1", mesos.TASK_RUNNING))
	// Stats count each update once, its resends apart, and time its
	// acknowledgement from its first sending.
	st := c.Stats()
	if st.TasksLaunched != 1 || st.TasksRunning != 1 || st.StatusUpdates != 2 || st.StatusUpdatesResent < 1 || st.AckLatency.Count() != 2 {
		t.Errorf("stats: %d launched, %d running, %d updates, %d resent, %d acknowledged; want 1, 1, 2, at least 1, 2",
			st.TasksLaunched, st.TasksRunning, st.StatusUpdates, st.StatusUpdatesResent, st.AckLatency.Count())
	}
	if slowest := st.AckLatency.Quantile(1); slowest < 100*time.Millisecond {
		t.Errorf("the resent update was acknowledged %v after its first sending, want at least its retry interval", slowest)
	}
	if held := c.AcknowledgedTasksHolding(); len(held) > 0 {
		t.Errorf("acknowledged tasks still hold their updates or timers: %v", held)
	}
}

// RECONCILE: explicit reconciliation answers each named task's latest
// state, TASK_UNKNOWN (or TASK_LOST without PARTITION_AWARE) for tasks the
// master never heard of; implicit answers every task. No uuids.
func TestReconcile(t *testing.T) {
	c := startCluster(t, func(cfg *devcluster.Config) { cfg.Agents = []devcluster.AgentSpec{{}} })
	s := subscribe(t, c, frameworkInfo(), jsonCodec)
	o := s.awaitOffer()
	launchGroup(s, o, executorInfo(s.fwID, "e1"), taskInfo(o, "t1"), taskInfo(o, "t2"))
	for _, id := range []string{"t1", "t2"} {
		s.awaitAck(id, mesos.TASK_STARTING)
		s.awaitAck(id, mesos.TASK_RUNNING)
	}
	s.mustCall(calls.Reconcile(calls.ReconcileTasks(map[string]string{"t1": o.AgentID.Value, "ghost": ""})))
	st := s.await("t1 reconciled", isTaskUpdate("t1")).Update.Status
	if st.GetState() != mesos.TASK_RUNNING || st.GetReason() != mesos.REASON_RECONCILIATION || len(st.UUID) != 0 {
		t.Errorf("t1: %s %s uuid %x", st.GetState(), st.GetReason(), st.UUID)
	}
	st = s.await("ghost reconciled", isTaskUpdate("ghost")).Update.Status
	if st.GetState() != mesos.TASK_UNKNOWN || st.GetMessage() != "Reconciliation: Task is unknown" {
		t.Errorf("ghost: %s %q", st.GetState(), st.GetMessage())
	}
	s.quiet("t2 in explicit reconciliation", 100*time.Millisecond, isTaskUpdate("t2"))

	s.mustCall(calls.Reconcile())
	s.await("t1 implicit", isUpdate("t1", mesos.TASK_RUNNING))
	s.await("t2 implicit", isUpdate("t2", mesos.TASK_RUNNING))

	c2 := startCluster(t, func(cfg *devcluster.Config) { cfg.NoAgents = true })
	s2 := subscribe(t, c2, frameworkInfo(notPartitionAware), jsonCodec)
	s2.mustCall(calls.Reconcile(calls.ReconcileTasks(map[string]string{"ghost": ""})))
	if st := s2.await("ghost", isTaskUpdate("ghost")).Update.Status; st.GetState() != mesos.TASK_LOST {
		t.Errorf("non partition-aware ghost: %s", st.GetState())
	}
}

// KILL of a running simulated task answers TASK_KILLED; KILL of an unknown
// task is reconciled. Both count as kills received.
func TestKill(t *testing.T) {
	c := startCluster(t, func(cfg *devcluster.Config) { cfg.Agents = []devcluster.AgentSpec{{}} })
	s := subscribe(t, c, frameworkInfo(), jsonCodec)
	o := s.awaitOffer()
	launchGroup(s, o, executorInfo(s.fwID, "e1"), taskInfo(o, "t1"))
	s.awaitAck("t1", mesos.TASK_STARTING)
	s.awaitAck("t1", mesos.TASK_RUNNING)
	s.mustCall(calls.Kill("t1", o.AgentID.Value))
	s.awaitAck("t1", mesos.TASK_KILLED)
	s.mustCall(calls.Kill("ghost", ""))
	if st := s.await("ghost", isTaskUpdate("ghost")).Update.Status; st.GetState() != mesos.TASK_UNKNOWN {
		t.Errorf("kill of unknown task: %s", st.GetState())
	}
	if n := c.Stats().KillsReceived; n != 2 {
		t.Errorf("KillsReceived %d, want 2", n)
	}
}

// Framework failover: re-subscribing with the framework ID within
// failover_timeout keeps the tasks; after it the framework is removed, its
// tasks killed, and its ID refused.
func TestFrameworkFailover(t *testing.T) {
	c := startCluster(t, func(cfg *devcluster.Config) { cfg.Agents = []devcluster.AgentSpec{{}} })

	info := frameworkInfo(failoverTimeout(time.Minute))
	s := subscribe(t, c, info, jsonCodec)
	o := s.awaitOffer()
	launchGroup(s, o, executorInfo(s.fwID, "e1"), taskInfo(o, "t1"))
	s.awaitAck("t1", mesos.TASK_STARTING)
	s.awaitAck("t1", mesos.TASK_RUNNING)

	// Within the timeout.
	s.disconnect()
	info.ID = &mesos.FrameworkID{Value: s.fwID}
	s2 := subscribe(t, c, info, protoCodec)
	if s2.fwID != s.fwID {
		t.Fatalf("re-subscribed as %s, want %s", s2.fwID, s.fwID)
	}
	if st, err := c.TaskState(s.fwID, "t1"); err != nil || st != mesos.TASK_RUNNING {
		t.Fatalf("t1 after failover: %v %v", st, err)
	}
	// A second subscription takes over; the first stream gets an ERROR.
	s3 := subscribe(t, c, info, jsonCodec)
	s2.await("ERROR on the replaced stream", isType(scheduler.Event_ERROR))

	// After the timeout.
	upd := *info
	upd.FailoverTimeout = new(float64)
	*upd.FailoverTimeout = 0.2
	s3.mustCall(calls.UpdateFramework(upd))
	s3.disconnect()
	deadline := time.Now().Add(waitTimeout)
	for len(c.Frameworks()) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("framework not removed after its failover timeout")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if st, err := c.TaskState(s.fwID, "t1"); err == nil {
		t.Errorf("t1 still known after removal: %s", st)
	}
	state := c.State()
	done := state["completed_frameworks"].([]any)
	if len(done) != 1 {
		t.Fatalf("completed_frameworks %v", done)
	}
	tasks := done[0].(map[string]any)["completed_tasks"].([]any)
	if len(tasks) != 1 || tasks[0].(map[string]any)["state"] != "TASK_KILLED" {
		t.Errorf("completed tasks %v", tasks)
	}
	s4, err := trySubscribe(t, c.MasterURL(), info, jsonCodec)
	if err != nil {
		t.Fatal(err)
	}
	e := s4.await("ERROR", isType(scheduler.Event_ERROR))
	if e.Error.Message != "Framework has been removed" {
		t.Errorf("ERROR %q", e.Error.Message)
	}
}

// Removing an agent reports its tasks TASK_UNREACHABLE to PARTITION_AWARE
// frameworks and TASK_LOST to the others.
func TestAgentRemovalTaskStates(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  []func(*mesos.FrameworkInfo)
		state mesos.TaskState
	}{
		{"partition aware", nil, mesos.TASK_UNREACHABLE},
		{"not partition aware", []func(*mesos.FrameworkInfo){notPartitionAware}, mesos.TASK_LOST},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := startCluster(t, func(cfg *devcluster.Config) { cfg.Agents = []devcluster.AgentSpec{{}} })
			s := subscribe(t, c, frameworkInfo(tc.opts...), jsonCodec)
			o := s.awaitOffer()
			launchGroup(s, o, executorInfo(s.fwID, "e1"), taskInfo(o, "t1"))
			s.awaitAck("t1", mesos.TASK_STARTING)
			s.awaitAck("t1", mesos.TASK_RUNNING)
			if err := c.RemoveAgent(o.AgentID.Value); err != nil {
				t.Fatal(err)
			}
			st := s.await("t1 after agent removal", isTaskUpdate("t1")).Update.Status
			if st.GetState() != tc.state || st.GetReason() != mesos.REASON_AGENT_REMOVED || st.GetSource() != mesos.SOURCE_MASTER {
				t.Errorf("got %s %s %s", st.GetState(), st.GetReason(), st.GetSource())
			}
			s.await("FAILURE for the agent", isType(scheduler.Event_FAILURE))
			if n := c.Stats().TasksRunning; n != 0 {
				t.Errorf("%d tasks counted running after their agent was removed", n)
			}
			if err := c.RemoveAgent(o.AgentID.Value); err == nil {
				t.Error("removing a removed agent succeeded")
			}
		})
	}
}

// AddAgent at run time: the new agent is offered.
func TestAddAgent(t *testing.T) {
	c := startCluster(t, func(cfg *devcluster.Config) { cfg.NoAgents = true })
	s := subscribe(t, c, frameworkInfo(), jsonCodec)
	id, err := c.AddAgent(devcluster.AgentSpec{Hostname: "late", Attributes: []devcluster.AttributeSpec{devcluster.SetAttribute("tags", "a", "b")}})
	if err != nil {
		t.Fatal(err)
	}
	o := s.awaitOffer()
	if o.AgentID.Value != id || o.Hostname != "late" {
		t.Errorf("offer for %s (%s), want %s", o.AgentID.Value, o.Hostname, id)
	}
	if _, err := c.AddAgent(devcluster.AgentSpec{ID: id}); err == nil {
		t.Error("duplicate agent ID accepted")
	}
}

// Scale: 5,000 simulated agents register and one offer round covers them
// all.
func TestFiveThousandAgents(t *testing.T) {
	const n = 5000
	agents := make([]devcluster.AgentSpec, n)
	start := time.Now()
	c := startCluster(t, func(cfg *devcluster.Config) {
		cfg.Agents = agents
		cfg.AllocationInterval = devcluster.Duration(time.Second)
	})
	if got := len(c.Agents()); got != n {
		t.Fatalf("%d agents registered, want %d", got, n)
	}
	s := subscribe(t, c, frameworkInfo(), protoCodec)
	offers := s.await("OFFERS", isType(scheduler.Event_OFFERS)).Offers.Offers
	if len(offers) != n {
		t.Fatalf("%d offers in the round, want %d", len(offers), n)
	}
	seen := make(map[string]bool, n)
	for _, o := range offers {
		seen[o.AgentID.Value] = true
	}
	if len(seen) != n {
		t.Errorf("offers cover %d agents, want %d", len(seen), n)
	}
	t.Logf("%d agents registered and offered in %v", n, time.Since(start))
	resp, err := http.Get(c.MasterURL() + "/master/state")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("state with %d agents: %d", n, resp.StatusCode)
	}
}

// MULTI_ROLE frameworks must name the allocation role on the resources
// they launch with, as the offer carried them.
func TestMultiRoleLaunch(t *testing.T) {
	c := startCluster(t, func(cfg *devcluster.Config) { cfg.Agents = []devcluster.AgentSpec{{}} })
	s := subscribe(t, c, frameworkInfo(func(i *mesos.FrameworkInfo) {
		i.Roles = []string{"game"}
		i.Capabilities = append(i.Capabilities, mesos.FrameworkInfo_Capability{Type: mesos.FrameworkInfo_Capability_MULTI_ROLE})
	}), jsonCodec)
	allocate := func(rs []mesos.Resource) []mesos.Resource { return mesos.Resources(rs).Allocate("game") }

	o := s.awaitOffer()
	ex := executorInfo(s.fwID, "e1")
	ex.Resources = allocate(ex.Resources)
	bare := taskInfo(o, "bare")
	launchGroup(s, o, ex, bare)
	st := s.await("bare TASK_ERROR", isUpdate("bare", mesos.TASK_ERROR)).Update.Status
	if !strings.Contains(st.GetMessage(), "not allocated to a role") {
		t.Errorf("message %q", st.GetMessage())
	}

	o = s.awaitOffer()
	task := taskInfo(o, "t1")
	task.Resources = allocate(task.Resources)
	launchGroup(s, o, ex, task)
	s.awaitAck("t1", mesos.TASK_STARTING)
	s.awaitAck("t1", mesos.TASK_RUNNING)
}

// Failing one simulated task of a group while it is starting leaves the
// others to reach TASK_RUNNING.
func TestSimulatedGroupPartialFailure(t *testing.T) {
	c := startCluster(t, func(cfg *devcluster.Config) {
		cfg.Agents = []devcluster.AgentSpec{{}}
		cfg.SimulatedStartDelay = devcluster.Duration(200 * time.Millisecond)
	})
	s := subscribe(t, c, frameworkInfo(), jsonCodec)
	o := s.awaitOffer()
	launchGroup(s, o, executorInfo(s.fwID, "e1"), taskInfo(o, "t1"), taskInfo(o, "t2"))
	s.awaitAck("t1", mesos.TASK_STARTING)
	s.awaitAck("t2", mesos.TASK_STARTING)
	if err := c.FailTask(s.fwID, "t1", "bad map"); err != nil {
		t.Fatal(err)
	}
	s.awaitAck("t1", mesos.TASK_FAILED)
	s.awaitAck("t2", mesos.TASK_RUNNING)
	s.quiet("t1 running after failure", 100*time.Millisecond, isUpdate("t1", mesos.TASK_RUNNING))
}

// LAUNCH validation (validation::task::internal): each bad task gets
// TASK_ERROR / REASON_TASK_INVALID with Mesos' message.
func TestLaunchValidation(t *testing.T) {
	c := startCluster(t, func(cfg *devcluster.Config) { cfg.Agents = []devcluster.AgentSpec{{}} })
	s := subscribe(t, c, frameworkInfo(), jsonCodec)
	cmd := "true"
	tests := []struct {
		name    string
		edit    func(fwID string, ti *mesos.TaskInfo)
		message string
	}{
		{"neither command nor executor", func(string, *mesos.TaskInfo) {}, "Task should have at least one (but not both) of CommandInfo or ExecutorInfo present"},
		{"both command and executor", func(fwID string, ti *mesos.TaskInfo) {
			ex := executorInfo(fwID, "e1")
			ti.Executor, ti.Command = &ex, &mesos.CommandInfo{Value: &cmd}
		}, "Task should have at least one (but not both) of CommandInfo or ExecutorInfo present"},
		{"default executor in LAUNCH", func(fwID string, ti *mesos.TaskInfo) {
			ex := executorInfo(fwID, "e1")
			ex.Type, ex.Command = mesos.ExecutorInfo_DEFAULT, nil
			ti.Executor = &ex
		}, "'ExecutorInfo.type' must be 'CUSTOM'"},
		{"invalid task ID", func(_ string, ti *mesos.TaskInfo) {
			ti.TaskID.Value, ti.Command = "a/b", &mesos.CommandInfo{Value: &cmd}
		}, "Task has an invalid TaskID: 'a/b' contains invalid characters"},
		{"wrong agent", func(_ string, ti *mesos.TaskInfo) {
			ti.AgentID.Value, ti.Command = "elsewhere", &mesos.CommandInfo{Value: &cmd}
		}, "Task uses invalid agent elsewhere while agent "},
		{"too many resources", func(_ string, ti *mesos.TaskInfo) {
			ti.Resources, ti.Command = []mesos.Resource{scalar("cpus", 64)}, &mesos.CommandInfo{Value: &cmd}
		}, "Task uses more resources cpus(allocated: *):64 than available"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s.t = t
			o := s.awaitOffer()
			ti := taskInfo(o, "t-"+strings.ReplaceAll(tc.name, " ", "-"))
			tc.edit(s.fwID, &ti)
			s.mustCall(calls.Accept(calls.OfferOperations{calls.OpLaunch(ti)}.WithOffers(o.ID)).With(calls.RefuseSeconds(0)))
			st := s.await("TASK_ERROR", isUpdate(ti.TaskID.Value, mesos.TASK_ERROR)).Update.Status
			if st.GetReason() != mesos.REASON_TASK_INVALID || !strings.HasPrefix(st.GetMessage(), tc.message) {
				t.Errorf("got %s %q, want REASON_TASK_INVALID %q", st.GetReason(), st.GetMessage(), tc.message)
			}
		})
	}
}
