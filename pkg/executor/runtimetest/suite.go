package runtimetest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/bcs-mesos/bcs-mesos/pkg/executor"
	"github.com/bcs-mesos/bcs-mesos/pkg/taskstate"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// Harness adapts one runtime to the suite.
type Harness struct {
	// New returns a fresh runtime for one case.
	New func(t *testing.T) executor.Runtime
	// LongRunning returns a spec that runs until killed.
	LongRunning func(t *testing.T, id string) *proto.TaskSpec
	// Failing returns a spec that fails to start.
	Failing func(t *testing.T, id string) *proto.TaskSpec
	// Busy returns a spec that keeps one core busy until killed, for a
	// runtime that measures usage (executor.UsageReader); Idle one that
	// sleeps. The usage case runs when both are set.
	Busy, Idle func(t *testing.T, id string) *proto.TaskSpec
	// Timeout bounds each wait; default 20s.
	Timeout time.Duration
}

// Run runs the suite.
func Run(t *testing.T, h Harness) {
	if h.Timeout <= 0 {
		h.Timeout = 20 * time.Second
	}
	t.Run("RunningThenKilled", func(t *testing.T) {
		rt, rec := h.New(t), NewRecorder(t, h.Timeout)
		launch(t, rt, rec, h.LongRunning(t, "a"), "a")
		rec.Await("a", taskstate.Running)
		rt.Kill("a", 500*time.Millisecond)
		if got := rec.AwaitTerminal("a"); got.State != taskstate.Killed {
			t.Errorf("after Kill: %s %q", got.State, got.Message)
		}
		rec.CheckLifecycle("a")
	})
	t.Run("FailingStartFails", func(t *testing.T) {
		rt, rec := h.New(t), NewRecorder(t, h.Timeout)
		launch(t, rt, rec, h.Failing(t, "f"), "f")
		if got := rec.AwaitTerminal("f"); got.State != taskstate.Failed || got.Message == "" {
			t.Errorf("failing task: %s %q", got.State, got.Message)
		}
		rec.CheckLifecycle("f")
	})
	t.Run("ShutdownEndsEveryTask", func(t *testing.T) {
		rt, rec := h.New(t), NewRecorder(t, h.Timeout)
		launch(t, rt, rec, h.LongRunning(t, "s1"), "s1")
		launch(t, rt, rec, h.LongRunning(t, "s2"), "s2")
		rec.Await("s1", taskstate.Running)
		rec.Await("s2", taskstate.Running)
		rt.Shutdown(2 * time.Second)
		for _, id := range []string{"s1", "s2"} {
			if s, ok := rec.Last(id); !ok || !s.State.Terminal() {
				t.Errorf("%s not terminal when Shutdown returned: %+v", id, s)
			}
			rec.CheckLifecycle(id)
		}
	})
	t.Run("KillDuringLaunch", func(t *testing.T) {
		rt, rec := h.New(t), NewRecorder(t, h.Timeout)
		launch(t, rt, rec, h.LongRunning(t, "k"), "k")
		rt.Kill("k", 200*time.Millisecond)
		if got := rec.AwaitTerminal("k"); got.State != taskstate.Killed {
			t.Errorf("killed during launch: %s %q", got.State, got.Message)
		}
		rec.CheckLifecycle("k")
	})
	if h.Busy != nil && h.Idle != nil {
		t.Run("Usage", func(t *testing.T) { usage(t, h) })
	}
	t.Run("UnknownTask", func(t *testing.T) {
		rt := h.New(t)
		rt.Kill("nope", time.Second)
		res := rt.Message(context.Background(), &proto.Message{ID: "m", Type: proto.MessageReload, TaskID: "nope"})
		if res.OK || !strings.Contains(res.Error, `"nope"`) {
			t.Errorf("message to unknown task: %+v", res)
		}
	})
}

func launch(t *testing.T, rt executor.Runtime, rec *Recorder, spec *proto.TaskSpec, id string) {
	t.Helper()
	spec.Version = proto.Version
	task := executor.Task{Info: mesos.TaskInfo{TaskID: mesos.TaskID{Value: id}}, Spec: spec, KillGrace: time.Second}
	rt.Launch(context.Background(), []executor.Task{task}, rec)
}

// Recorder is an executor.Reporter that keeps every report.
type Recorder struct {
	t       *testing.T
	timeout time.Duration
	mu      sync.Mutex
	reports []executor.Report
}

// NewRecorder returns a recorder whose waits give up after timeout.
func NewRecorder(t *testing.T, timeout time.Duration) *Recorder {
	return &Recorder{t: t, timeout: timeout}
}

// Report implements executor.Reporter.
func (r *Recorder) Report(rep executor.Report) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reports = append(r.reports, rep)
}

func (r *Recorder) of(id string) []executor.Report {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []executor.Report
	for _, rep := range r.reports {
		if rep.TaskID == id {
			out = append(out, rep)
		}
	}
	return out
}

// Last is the latest report of id.
func (r *Recorder) Last(id string) (executor.Report, bool) {
	reps := r.of(id)
	if len(reps) == 0 {
		return executor.Report{}, false
	}
	return reps[len(reps)-1], true
}

func (r *Recorder) await(what string, pred func(executor.Report) bool) executor.Report {
	r.t.Helper()
	deadline := time.Now().Add(r.timeout)
	for {
		r.mu.Lock()
		for _, rep := range r.reports {
			if pred(rep) {
				r.mu.Unlock()
				return rep
			}
		}
		r.mu.Unlock()
		if time.Now().After(deadline) {
			r.t.Fatalf("no %s within %v; reports: %s", what, r.timeout, r.describe())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Await waits for a report of id in state.
func (r *Recorder) Await(id string, state taskstate.State) executor.Report {
	r.t.Helper()
	return r.await(fmt.Sprintf("%s %s", id, state), func(rep executor.Report) bool { return rep.TaskID == id && rep.State == state })
}

// AwaitTerminal waits for the terminal report of id.
func (r *Recorder) AwaitTerminal(id string) executor.Report {
	r.t.Helper()
	return r.await(id+" terminal", func(rep executor.Report) bool { return rep.TaskID == id && rep.State.Terminal() })
}

// CheckLifecycle checks that id's reports follow taskstate.Transition from
// Staging and end with exactly one terminal report (also a moment later).
func (r *Recorder) CheckLifecycle(id string) {
	r.t.Helper()
	time.Sleep(100 * time.Millisecond)
	state := taskstate.Staging
	terminal := 0
	for _, rep := range r.of(id) {
		next, err := taskstate.Transition(state, rep.State)
		if err != nil {
			r.t.Errorf("task %s: %v; reports: %s", id, err, r.describe())
			return
		}
		state = next
		if next.Terminal() {
			terminal++
		}
	}
	if terminal != 1 {
		r.t.Errorf("task %s: %d terminal reports; reports: %s", id, terminal, r.describe())
	}
}

func (r *Recorder) describe() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var parts []string
	for _, rep := range r.reports {
		parts = append(parts, fmt.Sprintf("%s %s %q", rep.TaskID, rep.State, rep.Message))
	}
	return strings.Join(parts, "; ")
}
