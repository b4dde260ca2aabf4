package scheduler_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/bcs-mesos/bcs-mesos/pkg/devcluster"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// The driver stores a step's records in as few etcd
// transactions as etcd's limits allow (128 ops), not one each: the 300
// instances an application's creation makes are first written in a few
// transactions (a transaction is one etcd revision), and every one is
// stored.
func TestDriverBatchesAStepsWrites(t *testing.T) {
	s := startSystem(t)
	if _, err := s.reg.CreateApp(context.Background(), processApp("many", 300)); err != nil {
		t.Fatal(err)
	}
	s.eventually("300 instances stored", func() (bool, string) {
		n := len(s.groups("many"))
		return n == 300, fmt.Sprintf("%d stored", n)
	})
	prefix, err := store.Prefix(store.KindTaskGroup)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := s.st.List(context.Background(), prefix+"ns-a/many/")
	if err != nil || len(entries) != 300 {
		t.Fatalf("List: %d entries, %v", len(entries), err)
	}
	created := map[int64]int{} // instances by the revision that first stored them
	largest := 0
	for _, e := range entries {
		created[e.CreateRevision]++
		largest = max(largest, len(e.Value))
	}
	// 127 records of this size are far below etcd's 1.5 MiB a request.
	t.Logf("largest task group record: %d bytes", largest)
	if len(created) != 3 {
		t.Fatalf("300 instances created in %d transactions (%v), want 3 of up to 127 writes", len(created), created)
	}
	t.Logf("300 instances created in %d transactions: %v", len(created), created)
}

// The status updates that queue while the driver is busy are
// applied in one step: their records are stored in a few transactions
// and the application's status is written once, not once per update.
func TestDriverGathersQueuedStatusUpdates(t *testing.T) {
	const n = 300
	s := newSystemWith(t, func(cfg *devcluster.Config) {
		// From TASK_STARTING to TASK_RUNNING: time enough to see every
		// instance starting, even on a loaded machine.
		cfg.SimulatedStartDelay = devcluster.Duration(4 * time.Second)
	}, devcluster.AgentSpec{Hostname: "big", Resources: devcluster.ResourceSpec{CPUs: 64, MemMB: 64 << 10}})
	s.startDriver()
	ctx := context.Background()
	app := processApp("many", n)
	app.Constraint = nil
	app.Spec.Template.Spec.Processes[0].Resources.Limits = manifest.ResourceList{CPU: "0.1", Memory: "16"}
	if _, err := s.reg.CreateApp(ctx, app); err != nil {
		t.Fatal(err)
	}
	inState := func(state mesos.TaskState) func() (bool, string) {
		return func() (bool, string) {
			in := 0
			for _, g := range s.groups("many") {
				if g.State == state.String() {
					in++
				}
			}
			return in == n, fmt.Sprintf("%d of %d in %s", in, n, state)
		}
	}
	s.eventually("every instance starting", inState(mesos.TASK_STARTING))
	appKey, err := store.Key(store.KindApplication, "ns-a", "many")
	if err != nil {
		t.Fatal(err)
	}
	before, err := s.st.Get(ctx, appKey)
	if err != nil {
		t.Fatal(err)
	}
	// Busy while the updates to TASK_RUNNING come.
	if err := s.driver.Busy(ctx, 6*time.Second); err != nil {
		t.Fatal(err)
	}
	s.eventually("every instance running", inState(mesos.TASK_RUNNING))
	prefix, err := store.Prefix(store.KindTaskGroup)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := s.st.List(ctx, prefix+"ns-a/many/")
	if err != nil {
		t.Fatal(err)
	}
	stored := map[int64]int{} // instances by the revision that stored them running
	for _, e := range entries {
		stored[e.Revision]++
	}
	after, err := s.st.Get(ctx, appKey)
	if err != nil {
		t.Fatal(err)
	}
	statusWrites := after.Version - before.Version
	t.Logf("%d instances stored running in %d transactions; the application's record written %d times", n, len(stored), statusWrites)
	if len(stored) > 10 {
		t.Errorf("%d updates to TASK_RUNNING stored in %d transactions (%v), want a few of up to 127", n, len(stored), stored)
	}
	if statusWrites > 10 {
		t.Errorf("the application's status written %d times for %d updates, want a few", statusWrites, n)
	}
	if st := s.cluster.Stats(); st.StatusUpdatesResent != 0 {
		t.Errorf("%d status updates resent", st.StatusUpdatesResent)
	}
}

// A master offers every agent it allocates at once in one OFFERS event:
// at thousands of agents that event passes mesos-go's 4 MiB frame limit,
// and the subscription ended at each one while nothing launched. The
// driver reads it (here 200 agents with a 32 KiB attribute each: 6 MiB).
func TestDriverReadsAnOffersEventOverFourMiB(t *testing.T) {
	label := strings.Repeat("x", 32<<10)
	agents := make([]devcluster.AgentSpec, 200)
	for i := range agents {
		agents[i] = devcluster.AgentSpec{Hostname: fmt.Sprintf("agent-%d", i), Resources: devcluster.ResourceSpec{CPUs: 1, MemMB: 1024},
			Attributes: []devcluster.AttributeSpec{devcluster.TextAttribute("label", label)}}
	}
	s := newSystemWith(t, func(cfg *devcluster.Config) { cfg.ExecutorMode = devcluster.ExecutorSimulated }, agents...)
	s.startDriver()
	app := processApp("one", 1)
	app.Constraint = nil
	if _, err := s.reg.CreateApp(context.Background(), app); err != nil {
		t.Fatal(err)
	}
	// Its 6 MiB of agents' attributes are recorded first: under the race
	// detector on a busy machine that took over 15 s. Without the larger
	// frames nothing ever launches.
	eventuallyWithin(t, time.Minute, "the instance running", func() (bool, string) {
		groups := s.groups("one")
		return len(groups) == 1 && groups[0].State == mesos.TASK_RUNNING.String(), fmt.Sprintf("%d instances", len(groups))
	})
}
