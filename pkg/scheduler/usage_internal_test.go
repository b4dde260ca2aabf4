package scheduler

import (
	"fmt"
	"log/slog"
	"math"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/bcs-mesos/bcs-mesos/proto"
)

// usageDriver is a driver that is never run: the usage table needs no
// loop.
func usageDriver(t testing.TB) (*Driver, *clockwork.FakeClock) {
	t.Helper()
	clock := clockwork.NewFakeClock()
	d, err := NewDriver(DriverConfig{Masters: []string{"http://127.0.0.1:1"}, Clock: clock, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return d, clock
}

// task is a task's sample: CPU time used, working set.
func task(id string, cpu time.Duration, mem uint64) proto.TaskUsage {
	return proto.TaskUsage{TaskID: id, CPUNanos: uint64(cpu), MemBytes: mem}
}

// report is a usage report of group tg-1 whose samples were taken at.
func report(t *testing.T, at time.Time, tasks ...proto.TaskUsage) []byte {
	t.Helper()
	return reportOf(t, "tg-1", at, tasks...)
}

func reportOf(t *testing.T, group string, at time.Time, tasks ...proto.TaskUsage) []byte {
	t.Helper()
	r := &proto.UsageReport{TaskGroupID: group, Tasks: tasks}
	for i := range r.Tasks {
		r.Tasks[i].At = at
	}
	data, err := r.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// The rate is the CPU time between a group's last two reports over the
// time between their samples, per task, summed; memory is the last
// report's sum. A group is known once two reports of the same tasks
// came: not after one, nor when a task is new or its counter started
// again (a new container); a report older than the last is dropped.
func TestUsageTableRates(t *testing.T) {
	d, clock := usageDriver(t)
	at := time.Date(2026, 11, 28, 2, 0, 0, 0, time.UTC)
	var received time.Time // when the last report kept came
	take := func(data []byte, kept bool) {
		t.Helper()
		clock.Advance(time.Second)
		if kept {
			received = clock.Now()
		}
		if !d.offLoop(ExecutorMessage{ExecutorID: "tg-1", Data: data}) {
			t.Fatal("a usage report went to the loop")
		}
	}
	expect := func(what string, cores float64, mem uint64, window time.Duration) {
		t.Helper()
		got, ok := d.Usage([]string{"tg-1", "other"})["tg-1"]
		switch {
		case cores < 0 && ok:
			t.Errorf("%s: usage %+v, want none yet", what, got)
		case cores >= 0 && (!ok || math.Abs(got.CPUCores-cores) > 1e-9 || got.MemBytes != mem || got.Window != window || !got.Received.Equal(received)):
			t.Errorf("%s: usage %+v (known %v), want %.2f cores, %d bytes over %v received at %v", what, got, ok, cores, mem, window, received)
		}
	}
	take(report(t, at, task("a", 10*time.Second, 100), task("b", 5*time.Second, 50)), true)
	expect("one report", -1, 0, 0)
	take(report(t, at.Add(2*time.Second), task("a", 11*time.Second, 200), task("b", 7*time.Second, 60)), true)
	expect("two reports", 1.5, 260, 2*time.Second)
	take(report(t, at.Add(time.Second), task("a", 12*time.Second, 999), task("b", 8*time.Second, 999)), false)
	expect("a late report dropped", 1.5, 260, 2*time.Second)
	take(report(t, at.Add(4*time.Second), task("a", 500*time.Millisecond, 300), task("b", 7*time.Second, 60)), true)
	expect("a counter that started again", -1, 0, 0)
	take(report(t, at.Add(5*time.Second), task("a", time.Second, 300), task("b", 7*time.Second, 60), task("c", 0, 10)), true)
	expect("a task new to the group", -1, 0, 0)
	take(report(t, at.Add(6*time.Second), task("a", 1250*time.Millisecond, 300), task("c", time.Second, 10)), true)
	expect("a task gone from the group", 1.25, 310, time.Second)

	// A group that stopped reporting is forgotten after usageRetention.
	clock.Advance(usageRetention + time.Second)
	expect("after the retention", -1, 0, 0)
	if !d.offLoop(ExecutorMessage{ExecutorID: "tg-2", Data: reportOf(t, "", at, task("x", 0, 1))}) || d.usage.groups["tg-2"] == nil {
		t.Fatal("a report naming no task group not kept under its executor's ID")
	}
	if _, kept := d.usage.groups["tg-1"]; kept {
		t.Error("a group silent past the retention is still kept after a sweep")
	}

	// What is no usage report stays for the loop; a bad one is dropped.
	result, _ := (&proto.MessageResult{ID: "reload-1", Type: proto.MessageReload, OK: true}).Encode()
	if d.offLoop(ExecutorMessage{ExecutorID: "tg-1", Data: result}) || d.offLoop(Tick{}) {
		t.Error("a message result or a tick taken off the loop")
	}
	if !d.offLoop(ExecutorMessage{ExecutorID: "tg-3", Data: []byte(`{"version":"bcs/v9","type":"usage"}`)}) || d.usage.groups["tg-3"] != nil {
		t.Error("a report of another version not dropped")
	}
}

// A usage report costs the subscription's goroutine one decoding and a
// table update: 100k instances reporting every 15s are 6.7k reports a
// second, reports/s/core says how many one core takes.
func BenchmarkUsageReports(b *testing.B) {
	const groups, rounds = 1000, 20
	at := time.Date(2026, 11, 28, 2, 0, 0, 0, time.UTC)
	var msgs []ExecutorMessage
	for round := range rounds {
		for g := range groups {
			id := fmt.Sprintf("ns-a.game.%d.1-1ab2c3d4", g)
			data, err := (&proto.UsageReport{TaskGroupID: id, Tasks: []proto.TaskUsage{{TaskID: id + ".gamesvr",
				CPUNanos: uint64(round) * uint64(time.Second), MemBytes: 512 << 20, At: at.Add(time.Duration(round) * 15 * time.Second)}}}).Encode()
			if err != nil {
				b.Fatal(err)
			}
			msgs = append(msgs, ExecutorMessage{ExecutorID: id, Data: data})
		}
	}
	d, _ := usageDriver(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if i%len(msgs) == 0 && i > 0 {
			b.StopTimer()
			d, _ = usageDriver(b) // the reports of the next pass are no newer
			b.StartTimer()
		}
		d.offLoop(msgs[i%len(msgs)])
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "reports/s/core")
}
