package devcluster_test

import (
	"slices"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/master/calls"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	schedcalls "github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/bcs-mesos/bcs-mesos/pkg/devcluster"
)

// The allocator keeps what each agent has left to offer as resources are
// offered, accepted in part, declined, rescinded and freed by tasks and
// executors that end, and agents deactivated and reactivated: after each
// step it agrees with the agent's records (total less tasks, executors and
// offers) in amounts and order, as offers carry them.
func TestAllocatorKeepsWhatIsLeftToOffer(t *testing.T) {
	c := startCluster(t, func(cfg *devcluster.Config) { cfg.Agents = []devcluster.AgentSpec{{}, {}} })
	agrees := func(step string) {
		t.Helper()
		var mismatches []string
		for deadline := time.Now().Add(waitTimeout); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			// An offer being made shows for a moment as neither left nor
			// offered.
			if mismatches = c.LeftToOfferMismatches(); len(mismatches) == 0 {
				return
			}
		}
		t.Fatalf("after %s: %v", step, mismatches)
	}
	s := subscribe(t, c, frameworkInfo(), jsonCodec)
	o := s.awaitOffer()
	agrees("the first offers")

	// Part of an offer used by a task group with a new executor, a port
	// included; the rest comes back.
	t1, t2 := taskInfo(o, "t1"), taskInfo(o, "t2")
	t1.Resources = append(t1.Resources, mesos.Resource{Name: "ports", Type: mesos.RANGES.Enum(),
		Ranges: &mesos.Value_Ranges{Range: []mesos.Value_Range{{Begin: 31005, End: 31005}}}})
	launchGroup(s, o, executorInfo(s.fwID, "e1"), t1, t2)
	for _, id := range []string{"t1", "t2"} {
		s.awaitAck(id, mesos.TASK_STARTING)
		s.awaitAck(id, mesos.TASK_RUNNING)
	}
	agrees("a LAUNCH_GROUP")

	// A command task on the same agent's next offer, declined rest.
	next := s.await("the agent offered again", offerFor(s, o.AgentID.Value)).Offers.Offers
	i := slices.IndexFunc(next, func(x mesos.Offer) bool { return x.AgentID == o.AgentID })
	cmd := "true"
	ct := taskInfo(next[i], "cmd-1")
	ct.Command = &mesos.CommandInfo{Value: &cmd}
	s.mustCall(schedcalls.Accept(schedcalls.OfferOperations{schedcalls.OpLaunch(ct)}.WithOffers(next[i].ID)).With(schedcalls.RefuseSeconds(time.Hour)))
	s.awaitAck("cmd-1", mesos.TASK_STARTING)
	s.awaitAck("cmd-1", mesos.TASK_RUNNING)
	agrees("a LAUNCH with a refusal filter")

	// Tasks end one by one; the last takes its executor with it.
	s.mustCall(schedcalls.Kill("t1", o.AgentID.Value))
	s.awaitAck("t1", mesos.TASK_KILLED)
	agrees("a task killed")
	if err := c.FinishTask(s.fwID, "t2"); err != nil {
		t.Fatal(err)
	}
	s.awaitAck("t2", mesos.TASK_FINISHED)
	s.await("the executor's FAILURE", isType(scheduler.Event_FAILURE))
	agrees("the executor exited")

	// A deactivated agent's offer is rescinded; reactivated, it is
	// offered again.
	op := newOperator(t, c, operatorCodecs["json"])
	other := c.Agents()[1]
	op.mustCall(calls.DeactivateAgent(mesos.AgentID{Value: other}))
	s.await("RESCIND", isType(scheduler.Event_RESCIND))
	agrees("an agent deactivated")
	op.mustCall(calls.ReactivateAgent(mesos.AgentID{Value: other}))
	s.await("an offer for the reactivated agent", offerFor(s, other))
	agrees("the agent reactivated")

	// A framework that goes away gives back its offers.
	s.mustCall(&scheduler.Call{Type: scheduler.Call_TEARDOWN})
	agrees("TEARDOWN")
}

// A refusal filter keeps an agent's resources from the framework only
// while what the agent has left is contained in what was refused (Mesos'
// RefusedOfferFilter): the rest of an offer refused for an hour is not
// offered again, but once a task ends and frees more, the agent is.
func TestRefusalLiftsWhenMoreIsFree(t *testing.T) {
	c := startCluster(t, func(cfg *devcluster.Config) { cfg.Agents = []devcluster.AgentSpec{{}} })
	s := subscribe(t, c, frameworkInfo(), jsonCodec)
	o := s.awaitOffer()
	cmd := "sleep 3600"
	task := taskInfo(o, "t1")
	task.Command = &mesos.CommandInfo{Value: &cmd}
	s.mustCall(schedcalls.Accept(schedcalls.OfferOperations{schedcalls.OpLaunch(task)}.WithOffers(o.ID)).With(schedcalls.RefuseSeconds(time.Hour)))
	s.awaitAck("t1", mesos.TASK_STARTING)
	s.awaitAck("t1", mesos.TASK_RUNNING)
	// Passes come every AllocationInterval; each finds the refused rest.
	s.quiet("an offer of the refused rest", 500*time.Millisecond, offerFor(s, o.AgentID.Value))
	s.mustCall(schedcalls.Kill("t1", o.AgentID.Value))
	s.awaitAck("t1", mesos.TASK_KILLED)
	s.await("the agent offered again, with the task's resources", offerFor(s, o.AgentID.Value))
}
