package runtimetest

import (
	"context"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/executor"
	"github.com/bcs-mesos/bcs-mesos/pkg/taskstate"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// usageWindow is the time between the two samples the case takes the
// CPU rate from.
const usageWindow = time.Second

// usage: a busy task uses more than half a core between two samples, an
// idle one less than a tenth, both some memory; a task unknown or ended
// is left out.
func usage(t *testing.T, h Harness) {
	rt, rec := h.New(t), NewRecorder(t, h.Timeout)
	reader, ok := rt.(executor.UsageReader)
	if !ok {
		t.Fatalf("%T measures no usage (executor.UsageReader)", rt)
	}
	launch(t, rt, rec, h.Busy(t, "busy"), "busy")
	launch(t, rt, rec, h.Idle(t, "idle"), "idle")
	rec.Await("busy", taskstate.Running)
	rec.Await("idle", taskstate.Running)
	ids := []string{"busy", "idle", "nope"}
	first := sample(t, reader, ids)
	time.Sleep(usageWindow)
	second := sample(t, reader, ids)
	for _, want := range []struct {
		id       string
		min, max float64
	}{{"busy", 0.5, 1.2}, {"idle", 0, 0.1}} {
		a, b := first[want.id], second[want.id]
		if a.At.IsZero() || b.At.IsZero() {
			t.Errorf("%s not measured: %+v, %+v", want.id, a, b)
			continue
		}
		cores := float64(b.CPUNanos-a.CPUNanos) / float64(b.At.Sub(a.At).Nanoseconds())
		if b.CPUNanos < a.CPUNanos || cores < want.min || cores > want.max {
			t.Errorf("%s used %.3f cores (%d → %d ns over %v), want %.1f to %.1f", want.id, cores, a.CPUNanos, b.CPUNanos, b.At.Sub(a.At), want.min, want.max)
		}
		if b.MemBytes == 0 {
			t.Errorf("%s: no memory in %+v", want.id, b)
		}
	}
	if _, ok := second["nope"]; ok {
		t.Error("an unknown task measured")
	}
	rt.Kill("busy", 200*time.Millisecond)
	rec.AwaitTerminal("busy")
	if _, ok := sample(t, reader, []string{"busy"})["busy"]; ok {
		t.Error("a killed task measured")
	}
}

// sample measures ids, by task ID.
func sample(t *testing.T, reader executor.UsageReader, ids []string) map[string]proto.TaskUsage {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out := map[string]proto.TaskUsage{}
	for _, u := range reader.Usage(ctx, ids) {
		out[u.TaskID] = u
	}
	return out
}
