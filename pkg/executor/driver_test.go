package executor_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/executor"

	"github.com/bcs-mesos/bcs-mesos/internal/testlog"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	bcsexec "github.com/bcs-mesos/bcs-mesos/pkg/executor"
	"github.com/bcs-mesos/bcs-mesos/pkg/mesoswire"
	"github.com/bcs-mesos/bcs-mesos/pkg/taskstate"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// fakeRuntime records what the driver asks; tests report states through
// the Reporter it was given.
type fakeRuntime struct {
	mu       sync.Mutex
	launched []bcsexec.Task
	reporter bcsexec.Reporter
	kills    map[string]time.Duration
	shutdown bool
	changed  chan struct{}
}

func newFakeRuntime() *fakeRuntime {
	return &fakeRuntime{kills: map[string]time.Duration{}, changed: make(chan struct{}, 16)}
}

func (f *fakeRuntime) Launch(_ context.Context, group []bcsexec.Task, r bcsexec.Reporter) {
	f.mu.Lock()
	f.launched = append(f.launched, group...)
	f.reporter = r
	f.mu.Unlock()
	for _, t := range group {
		r.Report(bcsexec.Report{TaskID: t.ID(), State: taskstate.Running, Healthy: ptr(true), Data: []byte(`{"pid":1}`),
			IPAddresses: []string{"10.254.0.9"}})
	}
}

func (f *fakeRuntime) Kill(id string, grace time.Duration) {
	f.mu.Lock()
	f.kills[id] = grace
	r := f.reporter
	f.mu.Unlock()
	r.Report(bcsexec.Report{TaskID: id, State: taskstate.Killed, Message: "stopped"})
}

func (f *fakeRuntime) Message(_ context.Context, msg *proto.Message) proto.MessageResult {
	return proto.MessageResult{OK: true, Output: "reloaded " + msg.TaskID}
}

func (f *fakeRuntime) Shutdown(time.Duration) {
	f.mu.Lock()
	f.shutdown = true
	r := f.reporter
	var ids []string
	for _, t := range f.launched {
		ids = append(ids, t.ID())
	}
	f.mu.Unlock()
	for _, id := range ids {
		r.Report(bcsexec.Report{TaskID: id, State: taskstate.Killed, Message: "executor shutdown"})
	}
}

func (f *fakeRuntime) wasShutdown() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.shutdown
}

func ptr[T any](v T) *T { return &v }

func processTask(id string, killPolicy *mesos.KillPolicy) mesos.TaskInfo {
	spec := &proto.TaskSpec{Name: id, Process: &proto.ProcessSpec{ProcName: "sleep", StartCmd: "sleep 100"}, KillGracePeriodSeconds: 7}
	data, _ := spec.Encode()
	return mesos.TaskInfo{Name: id, TaskID: mesos.TaskID{Value: id}, Data: data, KillPolicy: killPolicy}
}

func launchGroupEvent(tasks ...mesos.TaskInfo) *executor.Event {
	return &executor.Event{Type: executor.Event_LAUNCH_GROUP, LaunchGroup: &executor.Event_LaunchGroup{TaskGroup: mesos.TaskGroupInfo{Tasks: tasks}}}
}

type run struct {
	driver *bcsexec.Driver
	errc   chan error
}

func startDriver(t *testing.T, a *fakeAgent, rt bcsexec.Runtime, edit func(*bcsexec.Config)) *run {
	t.Helper()
	cfg := bcsexec.Config{Env: a.env(false), Runtime: rt, Logger: testlog.New(t), Codec: mesoswire.JSON, AckTimeout: 5 * time.Second}
	if edit != nil {
		edit(&cfg)
	}
	d := bcsexec.New(cfg)
	r := &run{driver: d, errc: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { r.errc <- d.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-r.errc:
		case <-time.After(10 * time.Second):
			t.Error("driver did not stop")
		}
	})
	return r
}

func (r *run) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-r.errc:
		r.errc <- err
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("driver did not exit")
		return nil
	}
}

// Mesos executor API: UPDATE carries uuid (16 bytes), source
// SOURCE_EXECUTOR, a timestamp, healthy and data; KILL takes the kill
// policy's grace period from the event, else the TaskInfo, else the
// TaskSpec; the executor exits once every task is terminal and every
// update acknowledged.
func TestLaunchKillExit(t *testing.T) {
	a := newFakeAgent(t)
	rt := newFakeRuntime()
	r := startDriver(t, a, rt, nil)
	a.waitFor("SUBSCRIBE", func() bool { return len(a.subscribes) == 1 })
	a.send(launchGroupEvent(
		processTask("t1", nil),
		processTask("t2", &mesos.KillPolicy{GracePeriod: &mesos.DurationInfo{Nanoseconds: int64(3 * time.Second)}}),
		processTask("t3", nil),
	))
	running := map[string]mesos.TaskStatus{}
	for i := 0; i < 3; i++ {
		st := a.awaitUpdate(i)
		running[st.TaskID.Value] = st
		if st.GetState() != mesos.TASK_RUNNING || len(st.UUID) != 16 || st.GetSource() != mesos.SOURCE_EXECUTOR ||
			st.Timestamp == nil || !st.GetHealthy() || string(st.Data) != `{"pid":1}` ||
			st.GetExecutorID().GetValue() != "exec-1" || st.GetAgentID().GetValue() != "agent-1" {
			t.Errorf("update %d: %+v", i, st)
		}
		// Mesos reports a container's addresses in
		// TaskStatus.container_status.network_infos[].ip_addresses.
		if networks := st.GetContainerStatus().GetNetworkInfos(); len(networks) != 1 || len(networks[0].IPAddresses) != 1 ||
			networks[0].IPAddresses[0].GetIPAddress() != "10.254.0.9" {
			t.Errorf("update %d: container_status %+v, want network_infos with ip_addresses 10.254.0.9", i, st.GetContainerStatus())
		}
		a.ack(st)
	}
	a.send(&executor.Event{Type: executor.Event_KILL, Kill: &executor.Event_Kill{TaskID: mesos.TaskID{Value: "t1"}}})
	a.send(&executor.Event{Type: executor.Event_KILL, Kill: &executor.Event_Kill{TaskID: mesos.TaskID{Value: "t2"}}})
	a.send(&executor.Event{Type: executor.Event_KILL, Kill: &executor.Event_Kill{TaskID: mesos.TaskID{Value: "t3"},
		KillPolicy: &mesos.KillPolicy{GracePeriod: &mesos.DurationInfo{Nanoseconds: int64(time.Second)}}}})
	// The framework is TASK_KILLING_STATE capable: KILLING then KILLED.
	for i := 3; i < 9; i++ {
		st := a.awaitUpdate(i)
		if s := st.GetState(); s != mesos.TASK_KILLING && s != mesos.TASK_KILLED {
			t.Errorf("update %d: %s", i, s)
		}
		a.ack(st)
	}
	if err := r.wait(t); err != nil {
		t.Fatalf("Run: %v", err)
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	want := map[string]time.Duration{"t1": 7 * time.Second, "t2": 3 * time.Second, "t3": time.Second}
	for id, g := range want {
		if rt.kills[id] != g {
			t.Errorf("kill grace of %s = %v, want %v", id, rt.kills[id], g)
		}
	}
	if rt.launched[1].KillGrace != 3*time.Second {
		t.Errorf("launch KillGrace %v", rt.launched[1].KillGrace)
	}
}

// On re-subscribe the executor sends the tasks and updates the agent has
// not acknowledged (the original dropped them), with the same uuid.
func TestResubscribeSendsUnacknowledged(t *testing.T) {
	a := newFakeAgent(t)
	rt := newFakeRuntime()
	r := startDriver(t, a, rt, func(c *bcsexec.Config) { c.Env = a.env(true) })
	a.waitFor("SUBSCRIBE", func() bool { return len(a.subscribes) == 1 })
	a.send(launchGroupEvent(processTask("t1", nil), processTask("t2", nil)))
	st1 := a.awaitUpdate(0)
	st2 := a.awaitUpdate(1)
	if st1.TaskID.Value != "t1" {
		st1, st2 = st2, st1
	}
	a.ack(st1)
	a.waitFor("t1 acknowledged", func() bool {
		tasks, _ := r.driver.Unacknowledged()
		return len(tasks) == 1
	})
	a.setRefuse(true)
	a.drop()
	time.Sleep(100 * time.Millisecond) // a few refused attempts
	a.setRefuse(false)
	a.waitFor("re-SUBSCRIBE", func() bool { return len(a.subscribes) == 2 })
	a.mu.Lock()
	sub := a.subscribes[1]
	a.mu.Unlock()
	if len(sub.UnacknowledgedTasks) != 1 || sub.UnacknowledgedTasks[0].TaskID.Value != "t2" {
		t.Errorf("unacknowledged tasks %v", sub.UnacknowledgedTasks)
	}
	if len(sub.UnacknowledgedUpdates) != 1 || string(sub.UnacknowledgedUpdates[0].Status.UUID) != string(st2.UUID) {
		t.Errorf("unacknowledged updates %v, want t2's %x", sub.UnacknowledgedUpdates, st2.UUID)
	}
	if rt.wasShutdown() {
		t.Error("runtime shut down during a short outage")
	}
}

// MESOS_RECOVERY_TIMEOUT: an agent away for longer makes the executor
// kill its tasks and exit.
func TestRecoveryTimeout(t *testing.T) {
	a := newFakeAgent(t)
	rt := newFakeRuntime()
	start := time.Now()
	r := startDriver(t, a, rt, func(c *bcsexec.Config) {
		c.Env = a.env(true)
		c.Env.RecoveryTimeout = 300 * time.Millisecond
	})
	a.waitFor("SUBSCRIBE", func() bool { return len(a.subscribes) == 1 })
	a.send(launchGroupEvent(processTask("t1", nil)))
	a.awaitUpdate(0)
	a.setRefuse(true)
	a.drop()
	err := r.wait(t)
	if !errors.Is(err, bcsexec.ErrAgentGone) || !errors.Is(err, errdefs.ErrUnavailable) {
		t.Fatalf("Run: %v, want ErrAgentGone", err)
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("gave up after %v, before the recovery timeout", d)
	}
	if !rt.wasShutdown() {
		t.Error("runtime not shut down")
	}
	a.mu.Lock()
	n := len(a.subscribes)
	a.mu.Unlock()
	if n != 1 {
		t.Errorf("%d subscriptions accepted", n)
	}
}

// Without checkpointing a lost agent ends the executor at once (Mesos).
func TestNoCheckpointExitsOnDisconnect(t *testing.T) {
	a := newFakeAgent(t)
	rt := newFakeRuntime()
	r := startDriver(t, a, rt, nil)
	a.waitFor("SUBSCRIBE", func() bool { return len(a.subscribes) == 1 })
	a.drop()
	if err := r.wait(t); !errors.Is(err, bcsexec.ErrAgentGone) {
		t.Fatalf("Run: %v", err)
	}
}

// A TaskInfo.data that is not a bcs/v1 TaskSpec fails with
// REASON_TASK_INVALID naming the versions (proto/README.md); the group is
// all or nothing.
func TestInvalidSpecFailsGroup(t *testing.T) {
	a := newFakeAgent(t)
	rt := newFakeRuntime()
	startDriver(t, a, rt, nil)
	a.waitFor("SUBSCRIBE", func() bool { return len(a.subscribes) == 1 })
	bad := processTask("bad", nil)
	bad.Data = []byte(`{"version":"bcs/v0","process":{}}`)
	a.send(launchGroupEvent(processTask("good", nil), bad))
	for i := 0; i < 2; i++ {
		st := a.awaitUpdate(i)
		if st.GetState() != mesos.TASK_FAILED {
			t.Errorf("%s: %s", st.TaskID.Value, st.GetState())
		}
		if st.TaskID.Value == "bad" && (st.GetReason() != mesos.REASON_TASK_INVALID || !strings.Contains(st.GetMessage(), "bcs/v0")) {
			t.Errorf("bad: %s %q", st.GetReason(), st.GetMessage())
		}
		if st.TaskID.Value == "good" && st.GetReason() != mesos.REASON_TASK_GROUP_INVALID {
			t.Errorf("good: %s", st.GetReason())
		}
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if len(rt.launched) != 0 {
		t.Errorf("runtime launched %d tasks", len(rt.launched))
	}
}

// Framework MESSAGE (proto.Message) → runtime → executor MESSAGE
// (proto.MessageResult, same id); report-status resends the task's
// status with a new uuid; an unknown task is answered with an error.
func TestMessages(t *testing.T) {
	a := newFakeAgent(t)
	rt := newFakeRuntime()
	startDriver(t, a, rt, nil)
	a.waitFor("SUBSCRIBE", func() bool { return len(a.subscribes) == 1 })
	a.send(launchGroupEvent(processTask("t1", nil)))
	first := a.awaitUpdate(0)
	for _, m := range []proto.Message{
		{ID: "m1", Type: proto.MessageReload, TaskID: "t1"},
		{ID: "m2", Type: proto.MessageReportStatus, TaskID: "t1"},
		{ID: "m3", Type: proto.MessageReload, TaskID: "nope"},
	} {
		data, _ := m.Encode()
		a.send(&executor.Event{Type: executor.Event_MESSAGE, Message: &executor.Event_Message{Data: data}})
	}
	a.waitFor("3 results", func() bool { return len(a.messages) == 3 })
	results := map[string]*proto.MessageResult{}
	a.mu.Lock()
	for _, b := range a.messages {
		r, err := proto.DecodeMessageResult(b)
		if err != nil {
			t.Fatal(err)
		}
		results[r.ID] = r
	}
	a.mu.Unlock()
	if r := results["m1"]; r == nil || !r.OK || r.Output != "reloaded t1" || r.TaskID != "t1" || r.Type != proto.MessageReload {
		t.Errorf("m1: %+v", r)
	}
	if r := results["m2"]; r == nil || !r.OK {
		t.Errorf("m2: %+v", r)
	}
	if r := results["m3"]; r == nil || r.OK || !strings.Contains(r.Error, `"nope"`) {
		t.Errorf("m3: %+v", r)
	}
	again := a.awaitUpdate(1)
	if again.GetState() != mesos.TASK_RUNNING || string(again.UUID) == string(first.UUID) || !again.GetHealthy() {
		t.Errorf("report-status update %+v", again)
	}
}

// Terminal but never acknowledged: the executor still exits after
// AckTimeout (bounded wait).
func TestAckTimeoutBoundsExit(t *testing.T) {
	a := newFakeAgent(t)
	rt := newFakeRuntime()
	r := startDriver(t, a, rt, func(c *bcsexec.Config) { c.AckTimeout = 200 * time.Millisecond })
	a.waitFor("SUBSCRIBE", func() bool { return len(a.subscribes) == 1 })
	a.send(launchGroupEvent(processTask("t1", nil)))
	a.awaitUpdate(0)
	a.send(&executor.Event{Type: executor.Event_SHUTDOWN})
	if err := r.wait(t); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !rt.wasShutdown() {
		t.Error("runtime not shut down on SHUTDOWN")
	}
	if st := a.awaitUpdate(1); st.GetState() != mesos.TASK_KILLED {
		t.Errorf("after SHUTDOWN: %s", st.GetState())
	}
	_, updates := r.driver.Unacknowledged()
	if len(updates) != 2 {
		t.Errorf("unacknowledged %v", updates)
	}
}

// Once every task is terminal, AllTerminal gives back what they held
// at once, not after the wait for acknowledgements (the agent may kill
// the executor first); once only.
func TestAllTerminalBeforeTheAckWait(t *testing.T) {
	a := newFakeAgent(t)
	rt := newFakeRuntime()
	var calls atomic.Int32
	ended := make(chan struct{}, 2)
	r := startDriver(t, a, rt, func(c *bcsexec.Config) {
		c.AckTimeout = time.Minute
		c.AllTerminal = func() {
			calls.Add(1)
			ended <- struct{}{}
		}
	})
	a.waitFor("SUBSCRIBE", func() bool { return len(a.subscribes) == 1 })
	a.send(launchGroupEvent(processTask("t1", nil), processTask("t2", nil)))
	a.awaitUpdate(1)
	a.send(&executor.Event{Type: executor.Event_SHUTDOWN})
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("AllTerminal not called once the tasks were killed")
	}
	select {
	case err := <-r.errc:
		t.Fatalf("Run returned (%v) before the updates were acknowledged", err)
	default:
	}
	if st := a.awaitUpdate(3); st.GetState() != mesos.TASK_KILLED {
		t.Errorf("after SHUTDOWN: %s", st.GetState())
	}
	time.Sleep(100 * time.Millisecond)
	if n := calls.Load(); n != 1 {
		t.Errorf("AllTerminal called %d times, want once", n)
	}
}

// LAUNCH (one task, no group) is handled like a group of one; HEARTBEAT
// and ERROR events do not disturb the executor.
func TestLaunchSingleTaskAndNoise(t *testing.T) {
	a := newFakeAgent(t)
	rt := newFakeRuntime()
	r := startDriver(t, a, rt, nil)
	a.waitFor("SUBSCRIBE", func() bool { return len(a.subscribes) == 1 })
	a.send(&executor.Event{Type: executor.Event_HEARTBEAT})
	a.send(&executor.Event{Type: executor.Event_ERROR, Error: &executor.Event_Error{Message: "transient"}})
	a.send(&executor.Event{Type: executor.Event_LAUNCH, Launch: &executor.Event_Launch{Task: processTask("solo", nil)}})
	st := a.awaitUpdate(0)
	if st.TaskID.Value != "solo" || st.GetState() != mesos.TASK_RUNNING {
		t.Fatalf("%+v", st)
	}
	a.ack(st)
	a.send(&executor.Event{Type: executor.Event_KILL, Kill: &executor.Event_Kill{TaskID: mesos.TaskID{Value: "solo"}}})
	for i := 1; i <= 2; i++ {
		a.ack(a.awaitUpdate(i))
	}
	if err := r.wait(t); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := r.driver.Tasks()["solo"]; got != taskstate.Killed {
		t.Errorf("state %s", got)
	}
}

// autoClock is a fake clock whose After fires at once and moves time
// forward by the wait; it records every wait. (The rest of the Clock is a
// clockwork fake the driver does not use.)
type autoClock struct {
	clockwork.Clock
	mu    sync.Mutex
	now   time.Time
	waits []time.Duration
}

func (c *autoClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *autoClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.waits = append(c.waits, d)
	ch := make(chan time.Time, 1)
	ch <- c.now
	return ch
}

// Re-subscribing as Mesos' executor library does (src/executor/
// executor.cpp, 1.12: connect at once on a disconnection, then again
// after a random wait of up to MESOS_SUBSCRIPTION_BACKOFF_MAX), with a
// margin: waits of at most half of MESOS_SUBSCRIPTION_BACKOFF_MAX (2secs
// from a real agent, its default --executor_reregistration_timeout),
// so that the executor is back within 1s of the agent answering;
// MESOS_RECOVERY_TIMEOUT, counted from the disconnection, ends the
// attempts. Time and the random draws are injected: the test does not
// wait.
func TestResubscribeWaitsAreRandomAndBounded(t *testing.T) {
	const ms = time.Millisecond
	for _, tc := range []struct {
		name                 string
		backoffMax, recovery time.Duration
		draws                []float64
		want                 []time.Duration
	}{
		{"a real agent's 2secs", 2 * time.Second, 6 * time.Second, []float64{0.5, 0.999, 0, 0.25},
			[]time.Duration{0, 500 * ms, 999 * ms, 0, 250 * ms, 500 * ms, 999 * ms, 0, 250 * ms, 500 * ms, 999 * ms, 0, 250 * ms, 500 * ms, 999 * ms}},
		{"a recovery timeout shorter than the backoff", 10 * time.Second, time.Second, []float64{0.5},
			[]time.Duration{0, 250 * ms, 250 * ms, 250 * ms, 250 * ms}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newFakeAgent(t)
			rt := newFakeRuntime()
			clock := &autoClock{Clock: clockwork.NewFakeClock(), now: time.Unix(1_700_000_000, 0)}
			draw := 0
			r := startDriver(t, a, rt, func(c *bcsexec.Config) {
				c.Env = a.env(true)
				c.Env.SubscriptionBackoffMax, c.Env.RecoveryTimeout = tc.backoffMax, tc.recovery
				c.Clock = clock
				c.Jitter = func() float64 { draw++; return tc.draws[(draw-1)%len(tc.draws)] }
			})
			a.waitFor("SUBSCRIBE", func() bool { return len(a.subscribes) == 1 })
			a.setRefuse(true)
			a.drop()
			if err := r.wait(t); !errors.Is(err, bcsexec.ErrAgentGone) {
				t.Fatalf("Run: %v", err)
			}
			clock.mu.Lock()
			defer clock.mu.Unlock()
			if fmt.Sprint(clock.waits) != fmt.Sprint(tc.want) {
				t.Errorf("waits %v, want %v", clock.waits, tc.want)
			}
		})
	}
}

func sweepTask(id string) mesos.TaskInfo {
	data, _ := (&proto.TaskSpec{Name: "sweep", Sweep: &proto.SweepSpec{Reason: "executor x died"}}).Encode()
	return mesos.TaskInfo{Name: "sweep", TaskID: mesos.TaskID{Value: id}, Data: data}
}

// A sweep task runs the executor's Sweep, not the runtime, and
// finishes with what it reaped; it cannot share a group with real tasks;
// an executor without Sweep fails it.
func TestSweepTasks(t *testing.T) {
	t.Run("finishes with the summary", func(t *testing.T) {
		a := newFakeAgent(t)
		rt := newFakeRuntime()
		swept := 0
		r := startDriver(t, a, rt, func(c *bcsexec.Config) {
			c.Sweep = func(context.Context) (string, error) { swept++; return "reaped 2 containers", nil }
		})
		a.waitFor("SUBSCRIBE", func() bool { return len(a.subscribes) == 1 })
		a.send(launchGroupEvent(sweepTask("s1")))
		running, finished := a.awaitUpdate(0), a.awaitUpdate(1)
		if running.GetState() != mesos.TASK_RUNNING || finished.GetState() != mesos.TASK_FINISHED || finished.GetMessage() != "reaped 2 containers" {
			t.Errorf("updates %s, %s %q", running.GetState(), finished.GetState(), finished.GetMessage())
		}
		a.ack(running)
		a.ack(finished)
		if err := r.wait(t); err != nil {
			t.Fatal(err)
		}
		rt.mu.Lock()
		defer rt.mu.Unlock()
		if swept != 1 || len(rt.launched) != 0 {
			t.Errorf("swept %d times, runtime launched %d tasks", swept, len(rt.launched))
		}
	})
	t.Run("alone in its group", func(t *testing.T) {
		a := newFakeAgent(t)
		startDriver(t, a, newFakeRuntime(), func(c *bcsexec.Config) {
			c.Sweep = func(context.Context) (string, error) { return "", nil }
		})
		a.waitFor("SUBSCRIBE", func() bool { return len(a.subscribes) == 1 })
		a.send(launchGroupEvent(processTask("t1", nil), sweepTask("s1")))
		for i := 0; i < 2; i++ {
			if st := a.awaitUpdate(i); st.GetState() != mesos.TASK_FAILED || st.GetReason() != mesos.REASON_TASK_GROUP_INVALID {
				t.Errorf("update %d: %s %s %q", i, st.TaskID.Value, st.GetState(), st.GetMessage())
			}
		}
	})
	t.Run("an executor that cannot sweep", func(t *testing.T) {
		a := newFakeAgent(t)
		startDriver(t, a, newFakeRuntime(), nil)
		a.waitFor("SUBSCRIBE", func() bool { return len(a.subscribes) == 1 })
		a.send(launchGroupEvent(sweepTask("s1")))
		if st := a.awaitUpdate(1); st.GetState() != mesos.TASK_FAILED || st.GetMessage() != "this executor cannot sweep" {
			t.Errorf("update: %s %q", st.GetState(), st.GetMessage())
		}
	})
}
