package scheduler_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/scheduler"
)

// Seed 002 (deployd): PATCH /api/podgroups?cmd=operation&optype=stop|start
// [&instance=N]. A stopped instance stays defined, its task killed and
// not relaunched (its restart policy would); it stays stopped across a
// scheduler restart; start brings it back on the agent it ran on. A
// stopped application's instances are all stopped, those a scale adds
// too, and start brings them all up.
func TestDriverStopsAndStartsInstances(t *testing.T) {
	s := startSystem(t)
	ctx := context.Background()
	if _, err := s.reg.CreateApp(ctx, processApp("game", 2)); err != nil {
		t.Fatal(err)
	}
	before := s.running("game", 2)
	victim := before[1]
	fwID := s.cluster.Frameworks()[0]
	operate := func(id string, op scheduler.Operation) {
		t.Helper()
		if err := s.driver.Operate(ctx, scheduler.Operate{TaskGroupID: id, Op: op}); err != nil {
			t.Fatal(err)
		}
	}
	stopped := func(what string, index, launches int) {
		t.Helper()
		s.eventually(what, func() (bool, string) {
			groups := s.groups("game")
			if len(groups) <= index {
				return false, fmt.Sprintf("%d instances", len(groups))
			}
			g := groups[index]
			return g.Phase == registry.PhaseStopped && g.Launches == launches, fmt.Sprintf("phase %s launches %d: %s", g.Phase, g.Launches, g.Message)
		})
	}

	operate(victim.ID, scheduler.OpStop)
	stopped("instance 1 stopped", 1, 1)
	if st, err := s.cluster.TaskState(fwID, victim.Tasks[0].ID); err != nil || st != mesos.TASK_KILLED {
		t.Errorf("instance 1's task is %v (%v), want TASK_KILLED", st, err)
	}
	// Its restart policy (OnFailure, 1 s) relaunches nothing, and a new
	// scheduler keeps it stopped.
	time.Sleep(1500 * time.Millisecond)
	s.stopDriver()
	s.startDriver()
	time.Sleep(time.Second) // let it subscribe, reconcile and see offers
	stopped("instance 1 still stopped after a restart", 1, 1)
	if st, msg := s.appState("game"); st != registry.AppRunning || msg != "1/2 instances stopped" {
		t.Errorf("application %s %q, want Running \"1/2 instances stopped\"", st, msg)
	}

	operate(victim.ID, scheduler.OpStart)
	s.eventually("instance 1 running again where it ran", func() (bool, string) {
		g := s.groups("game")[1]
		return g.Phase == string(scheduler.PhaseRunning) && g.Launches == 2 && g.AgentID == victim.AgentID,
			fmt.Sprintf("phase %s launches %d on %s (ran on %s)", g.Phase, g.Launches, g.AgentID, victim.AgentID)
	})

	// The whole application, and a scale while it is stopped.
	if _, err := s.reg.SetStopped(ctx, "ns-a", "game", true); err != nil {
		t.Fatal(err)
	}
	stopped("instance 0 stopped with the application", 0, 1)
	stopped("instance 1 stopped with the application", 1, 2)
	if _, err := s.reg.ScaleApp(ctx, "ns-a", "game", 3, false); err != nil {
		t.Fatal(err)
	}
	stopped("instance 2 added stopped", 2, 0)
	if _, err := s.reg.SetStopped(ctx, "ns-a", "game", false); err != nil {
		t.Fatal(err)
	}
	s.running("game", 3)
}
