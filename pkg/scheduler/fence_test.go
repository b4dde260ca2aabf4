package scheduler_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/scheduler"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
	"github.com/bcs-mesos/bcs-mesos/pkg/store/storetest"
)

// The driver of a leader deposed behind its back writes
// nothing. It writes through a store fenced by its term of leadership;
// the term's lease is revoked in etcd (its TTL lapsed while it was paused
// or cut off) and another replica leads, the driver not told. A task then
// fails: the driver's write of it is refused with store.ErrDeposed, Run
// returns that at once (no retry as if it were a conflict), and etcd
// records no change at all.
func TestDeposedDriverWritesNothingAndStops(t *testing.T) {
	s := newSystem(t)
	ctx := context.Background()
	endpoints := s.etcd.Endpoints()
	users := s.reg // the API's writes, made for users, are not fenced
	election, err := s.st.NewElection(ctx, "scheduler", 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := election.Campaign(ctx, "http://a"); err != nil {
		t.Fatal(err)
	}
	other, err := store.Open(ctx, store.Config{Endpoints: endpoints})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	standby, err := other.NewElection(ctx, "scheduler", 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = standby.Resign(context.Background()) })
	standbyLeads := make(chan error, 1)
	go func() { standbyLeads <- standby.Campaign(ctx, "http://b") }()

	s.st = s.st.WithFence(election.Fence())
	s.reg = s.reg.OnStore(s.st)
	s.startDriver()
	if _, err := users.CreateApp(ctx, processApp("game", 2)); err != nil {
		t.Fatal(err)
	}
	groups := s.running("game", 2)

	if leader := storetest.ExpireLeader(t, endpoints, store.DefaultPrefix, "scheduler"); leader != "http://a" {
		t.Fatalf("expired %q's lease, want the driver's leader's", leader)
	}
	select {
	case err := <-standbyLeads:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the standby did not take over")
	}
	_, before := storetest.Changes(t, endpoints, 0)
	if err := s.cluster.FailTask(s.cluster.Frameworks()[0], groups[0].Tasks[0].ID, "failed after the leader was deposed"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-s.done:
		s.cancel()
		s.cancel = nil // stopped
		if !errors.Is(err, store.ErrDeposed) || errors.Is(err, errdefs.ErrConflict) {
			t.Fatalf("driver stopped with %v, want store.ErrDeposed", err)
		}
		t.Logf("driver stopped: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the deposed driver still runs")
	}
	if changes, _ := storetest.Changes(t, endpoints, before); len(changes) > 0 {
		t.Errorf("the deposed driver wrote %q", changes)
	}
	select {
	case <-election.Fence().Refused():
	default:
		t.Error("the fence's Refused is not closed")
	}
	if g := s.groups("game")[0]; g.Phase != string(scheduler.PhaseRunning) || g.Launches != 1 {
		t.Errorf("instance 0 is %s after launch %d, want the record as the deposed leader left it: running, launch 1", g.Phase, g.Launches)
	}
}
