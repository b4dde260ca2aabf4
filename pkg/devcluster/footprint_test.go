package devcluster_test

import (
	"fmt"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/bcs-mesos/bcs-mesos/internal/heaptest"
	"github.com/bcs-mesos/bcs-mesos/pkg/devcluster"
)

// TestHeapPerRunningTask bounds the heap the dev cluster holds per
// running, acknowledged task group of one task, as bcs-scheduler launches
// them (each with its executor): the scale benchmarks run a million on
// one machine. With a kilobyte of data per task, as bcs-scheduler's
// carry, it held 4,600 to 5,100 bytes while a simulated task kept that
// data, 3,500 to 4,300 since (the most in a test binary's first run);
// 1,500 to 2,000 more went with the update queue, the timers and the
// second copies of its resources and latest status an acknowledged task
// kept. The bound leaves a fifth for a busy machine's noise: what it
// catches is a task keeping its data or its updates again.
func TestHeapPerRunningTask(t *testing.T) {
	const n, bound = 4000, 5200
	c := startCluster(t, func(cfg *devcluster.Config) {
		cfg.Agents = []devcluster.AgentSpec{{Resources: devcluster.ResourceSpec{CPUs: n, MemMB: 200 * n, DiskMB: 20 * n}}}
	})
	s := subscribe(t, c, frameworkInfo(), protoCodec)
	o := s.awaitOffer()
	before := heaptest.Live()
	ops := make(calls.OfferOperations, 0, n)
	for i := range n {
		task := taskInfo(o, fmt.Sprintf("t%d", i))
		task.Data = make([]byte, 1024) // as bcs-scheduler's tasks carry their pod
		ops = append(ops, calls.OpLaunchGroup(executorInfo(s.fwID, fmt.Sprintf("e%d", i)), task))
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
	if perTask := float64(heaptest.Live()-before) / n; perTask > bound {
		t.Errorf("the dev cluster holds %.0f bytes per running task group; want at most %d", perTask, bound)
	} else {
		t.Logf("%.0f bytes per running task group", perTask)
	}
}
