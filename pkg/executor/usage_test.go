package executor_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/executor"

	bcsexec "github.com/bcs-mesos/bcs-mesos/pkg/executor"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// measuringRuntime is a fakeRuntime that measures usage: each task has
// used one more second of CPU at each sample.
type measuringRuntime struct {
	*fakeRuntime
	clock clockwork.Clock
	mu    sync.Mutex
	cpu   map[string]uint64
}

var _ bcsexec.UsageReader = (*measuringRuntime)(nil)

func (m *measuringRuntime) Usage(_ context.Context, ids []string) []proto.TaskUsage {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []proto.TaskUsage
	for _, id := range ids {
		m.cpu[id] += uint64(time.Second)
		out = append(out, proto.TaskUsage{TaskID: id, CPUNanos: m.cpu[id], MemBytes: 1 << 20, At: m.clock.Now()})
	}
	return out
}

type usageSetup struct {
	t     *testing.T
	a     *fakeAgent
	clock *clockwork.FakeClock
}

func startUsage(t *testing.T, jitter float64, measures bool) *usageSetup {
	t.Helper()
	s := &usageSetup{t: t, a: newFakeAgent(t), clock: clockwork.NewFakeClock()}
	var rt bcsexec.Runtime = newFakeRuntime()
	if measures {
		rt = &measuringRuntime{fakeRuntime: rt.(*fakeRuntime), clock: s.clock, cpu: map[string]uint64{}}
	}
	startDriver(t, s.a, rt, func(c *bcsexec.Config) {
		c.Clock, c.Jitter = s.clock, func() float64 { return jitter }
	})
	s.a.waitFor("SUBSCRIBE", func() bool { return len(s.a.subscribes) == 1 })
	return s
}

// launch launches a group of tasks ids of task group "tg-1" with a usage
// interval.
func (s *usageSetup) launch(interval float64, ids ...string) {
	var tasks []mesos.TaskInfo
	for _, id := range ids {
		spec := &proto.TaskSpec{Name: id, Instance: proto.Instance{TaskGroupID: "tg-1"},
			Process: &proto.ProcessSpec{ProcName: "sleep", StartCmd: "sleep 100"}, UsageIntervalSeconds: interval}
		data, _ := spec.Encode()
		tasks = append(tasks, mesos.TaskInfo{Name: id, TaskID: mesos.TaskID{Value: id}, Data: data})
	}
	s.a.send(launchGroupEvent(tasks...))
	s.a.awaitUpdate(len(ids) - 1)
}

// reports are the usage reports the executor sent.
func (s *usageSetup) reports() []*proto.UsageReport {
	s.a.mu.Lock()
	defer s.a.mu.Unlock()
	var out []*proto.UsageReport
	for _, data := range s.a.messages {
		r, ok, err := proto.DecodeUsageReport(data)
		if err != nil {
			s.t.Fatal(err)
		}
		if ok {
			out = append(out, r)
		}
	}
	return out
}

// untilReport advances the clock by step until the executor sent its
// nth report and returns how far it went; 0 when limit passed without
// it. A report late on a loaded machine only lengthens what it returns.
func (s *usageSetup) untilReport(n int, step, limit time.Duration) time.Duration {
	s.t.Helper()
	for went := step; went <= limit; went += step {
		s.clock.Advance(step)
		for deadline := time.Now().Add(30 * time.Millisecond); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
			if len(s.reports()) >= n {
				return went
			}
		}
	}
	return 0
}

// setInterval sends a usage-interval message for task and returns the
// executor's answer.
func (s *usageSetup) setInterval(task string, seconds float64) *proto.MessageResult {
	s.t.Helper()
	id := "iv-" + task + "-" + time.Now().Format("150405.000000000")
	data, _ := (&proto.Message{ID: id, Type: proto.MessageUsageInterval, TaskID: task, UsageIntervalSeconds: seconds}).Encode()
	s.a.send(&executor.Event{Type: executor.Event_MESSAGE, Message: &executor.Event_Message{Data: data}})
	var res *proto.MessageResult
	s.a.waitFor("the answer to "+id, func() bool {
		for _, b := range s.a.messages {
			if r, err := proto.DecodeMessageResult(b); err == nil && r.ID == id {
				res = r
				return true
			}
		}
		return false
	})
	return res
}

// A group launched with a usage interval reports its running tasks every
// interval, ±10 % at random on the driver's clock: one MESSAGE for the
// group, each task's sample in it.
func TestUsageReportsAtTheSpecsInterval(t *testing.T) {
	for _, tc := range []struct {
		jitter float64
		want   time.Duration
	}{
		{0, 9 * time.Second},
		{0.5, 10 * time.Second},
		{0.99, 10*time.Second + 980*time.Millisecond},
	} {
		s := startUsage(t, tc.jitter, true)
		s.launch(10, "t1", "t2")
		if err := s.clock.BlockUntilContext(context.Background(), 1); err != nil {
			t.Fatal(err)
		}
		s.clock.Advance(tc.want - 100*time.Millisecond)
		if went := s.untilReport(1, 100*time.Millisecond, 3*time.Second); went < 100*time.Millisecond || went > 500*time.Millisecond {
			t.Errorf("jitter %v: the first report %v after launch, want %v", tc.jitter, tc.want-100*time.Millisecond+went, tc.want)
		}
		r := s.reports()[0]
		if r.TaskGroupID != "tg-1" || len(r.Tasks) != 2 || r.Tasks[0].TaskID != "t1" || r.Tasks[1].TaskID != "t2" ||
			r.Tasks[0].CPUNanos != uint64(time.Second) || r.Tasks[0].MemBytes != 1<<20 || !r.Tasks[0].At.Equal(s.clock.Now()) {
			t.Errorf("report %+v", r)
		}
	}
}

// The usage-interval message retimes the reports of its task's group,
// 0 stops them, a group launched without reports starts them; a bad
// interval is refused naming the field; a killed task leaves the
// report.
func TestUsageIntervalMessage(t *testing.T) {
	const step = 250 * time.Millisecond
	s := startUsage(t, 0.5, true)
	s.launch(10, "t1", "t2")
	if err := s.clock.BlockUntilContext(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	if went := s.untilReport(1, step, 12*time.Second); went < 10*time.Second || went > 10*time.Second+2*step {
		t.Fatalf("first report after %v, want 10s", went)
	}

	if res := s.setInterval("t2", 3); !res.OK || res.Type != proto.MessageUsageInterval || res.TaskID != "t2" {
		t.Fatalf("retime: %+v", res)
	}
	s.a.send(&executor.Event{Type: executor.Event_KILL, Kill: &executor.Event_Kill{TaskID: mesos.TaskID{Value: "t2"}}})
	s.a.awaitUpdate(2)
	if went := s.untilReport(2, step, 12*time.Second); went < 3*time.Second || went > 3*time.Second+2*step {
		t.Errorf("retimed to 3s: the next report after %v", went)
	}
	if r := s.reports()[1]; len(r.Tasks) != 1 || r.Tasks[0].TaskID != "t1" || r.Tasks[0].CPUNanos != 2*uint64(time.Second) {
		t.Errorf("report after t2 was killed: %+v", r)
	}

	if res := s.setInterval("t1", -1); res.OK || !strings.Contains(res.Error, "usageIntervalSeconds -1: want 0 (no usage reports) or at least 0.1 seconds") {
		t.Errorf("a negative interval: %+v", res)
	}
	if res := s.setInterval("t1", 0); !res.OK {
		t.Fatalf("stop: %+v", res)
	}
	if went := s.untilReport(3, 5*time.Second, 60*time.Second); went != 0 {
		t.Errorf("a report %v after the reports were stopped", went)
	}
	if res := s.setInterval("nope", 1); res.OK || !strings.Contains(res.Error, `"nope"`) {
		t.Errorf("unknown task: %+v", res)
	}

	// Without an interval at launch nothing reports, until asked.
	quiet := startUsage(t, 0.5, true)
	quiet.launch(0, "q1")
	if went := quiet.untilReport(1, 5*time.Second, 60*time.Second); went != 0 {
		t.Errorf("a group launched without an interval reported after %v", went)
	}
	if res := quiet.setInterval("q1", 2); !res.OK {
		t.Fatalf("start: %+v", res)
	}
	if went := quiet.untilReport(1, step, 10*time.Second); went < 2*time.Second || went > 2*time.Second+2*step {
		t.Errorf("started at 2s: the first report after %v", went)
	}
	if got := quiet.reports()[0]; len(got.Tasks) != 1 || got.Tasks[0].TaskID != "q1" {
		t.Errorf("report %+v", got)
	}
}

// A runtime that does not measure usage sends no report and answers the
// interval message with an error.
func TestUsageNotMeasured(t *testing.T) {
	s := startUsage(t, 0.5, false)
	s.launch(1, "t1")
	if went := s.untilReport(1, time.Second, 10*time.Second); went != 0 {
		t.Errorf("a report after %v from a runtime that measures nothing", went)
	}
	if res := s.setInterval("t1", 1); res.OK || !strings.Contains(res.Error, "does not measure") {
		t.Errorf("interval message: %+v", res)
	}
	if got := s.reports(); len(got) != 0 {
		t.Errorf("reports %+v", got)
	}
}
