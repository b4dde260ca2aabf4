package devcluster_test

import (
	"fmt"
	"runtime"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/bcs-mesos/bcs-mesos/pkg/devcluster"
)

// TestHeapPerRunningTask bounds the heap the dev cluster holds per
// running, acknowledged task group of one task, as bcs-scheduler launches
// them (each with its executor): the scale benchmarks run a million on
// one machine. It held 5,500 to 6,000 bytes while an acknowledged task
// kept its update queue, its timers and a second copy of its resources;
// 3,500 to 4,200 without them (and without a second copy of its latest
// status).
func TestHeapPerRunningTask(t *testing.T) {
	const n, bound = 2000, 4800
	c := startCluster(t, func(cfg *devcluster.Config) {
		cfg.Agents = []devcluster.AgentSpec{{Resources: devcluster.ResourceSpec{CPUs: n, MemMB: 200 * n, DiskMB: 20 * n}}}
	})
	s := subscribe(t, c, frameworkInfo(), protoCodec)
	o := s.awaitOffer()
	before := heapInUse()
	ops := make(calls.OfferOperations, 0, n)
	for i := range n {
		ops = append(ops, calls.OpLaunchGroup(executorInfo(s.fwID, fmt.Sprintf("e%d", i)), taskInfo(o, fmt.Sprintf("t%d", i))))
	}
	s.mustCall(calls.Accept(ops.WithOffers(o.ID)).With(calls.RefuseSeconds(0)))
	ops = nil
	for running := 0; running < n; {
		st := s.await("an update", isType(scheduler.Event_UPDATE)).Update.Status
		s.ack(st)
		if st.GetState() == mesos.TASK_RUNNING {
			running++
		}
	}
	s.discard(isType(scheduler.Event_OFFERS))
	if held := c.AcknowledgedTasksHolding(); len(held) > 0 {
		t.Errorf("%d acknowledged tasks still hold their updates or timers, e.g. %s", len(held), held[0])
	}
	if perTask := float64(heapInUse()-before) / n; perTask > bound {
		t.Errorf("the dev cluster holds %.0f bytes per running task group; want at most %d", perTask, bound)
	} else {
		t.Logf("%.0f bytes per running task group", perTask)
	}
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
