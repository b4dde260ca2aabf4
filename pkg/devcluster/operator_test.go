package devcluster_test

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	gogotypes "github.com/gogo/protobuf/types"
	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/allocator"
	"github.com/mesos/mesos-go/api/v1/lib/encoding"
	"github.com/mesos/mesos-go/api/v1/lib/encoding/codecs"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli/httpmaster"
	"github.com/mesos/mesos-go/api/v1/lib/maintenance"
	"github.com/mesos/mesos-go/api/v1/lib/master"
	mastercalls "github.com/mesos/mesos-go/api/v1/lib/master/calls"
	"github.com/mesos/mesos-go/api/v1/lib/resources"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/bcs-mesos/bcs-mesos/pkg/devcluster"
)

// operatorCodecs are the two media types of the operator API, as
// mesos-go's own codecs speak them.
var operatorCodecs = map[string]encoding.Codec{
	"json":     codecs.ByMediaType[codecs.MediaTypeJSON],
	"protobuf": codecs.ByMediaType[codecs.MediaTypeProtobuf],
}

// operator calls the master's POST /api/v1 through mesos-go's own master
// client (httpcli + httpmaster), never through our code.
type operator struct {
	t      *testing.T
	sender mastercalls.Sender
}

func newOperator(t *testing.T, c *devcluster.Cluster, codec encoding.Codec) *operator {
	cli := httpcli.New(
		httpcli.Endpoint(c.MasterURL()+"/api/v1"),
		httpcli.Codec(codec),
		httpcli.Do(httpcli.With(httpcli.Timeout(5*time.Second))),
	)
	return &operator{t: t, sender: httpmaster.NewSender(cli.Send)}
}

// call sends a call; a call without a response body returns nil.
func (o *operator) call(call *master.Call) (*master.Response, error) {
	resp, err := o.sender.Send(context.Background(), mastercalls.NonStreaming(call))
	if err != nil || resp == nil {
		return nil, err
	}
	defer resp.Close()
	var r master.Response
	if err := resp.Decode(&r); err != nil {
		return nil, err
	}
	return &r, nil
}

func (o *operator) mustCall(call *master.Call) *master.Response {
	o.t.Helper()
	r, err := o.call(call)
	if err != nil {
		o.t.Fatalf("%s: %v", call.Type, err)
	}
	return r
}

// agent returns the GET_AGENTS entry of one agent; nil when the master
// does not list it.
func (o *operator) agent(id string) *master.Response_GetAgents_Agent {
	o.t.Helper()
	for _, a := range o.mustCall(mastercalls.GetAgents()).GetGetAgents().Agents {
		if a.AgentInfo.GetID().GetValue() == id {
			return &a
		}
	}
	return nil
}

func (o *operator) status() maintenance.ClusterStatus {
	o.t.Helper()
	return o.mustCall(mastercalls.GetMaintenanceStatus()).GetGetMaintenanceStatus().Status
}

func drainCall(agentID string, maxGrace *time.Duration, markGone bool) *master.Call {
	return mastercalls.DrainAgent(mesos.AgentID{Value: agentID}, func(d *master.Call_DrainAgent) {
		if maxGrace != nil {
			d.MaxGracePeriod = gogotypes.DurationProto(*maxGrace)
		}
		d.MarkGone = &markGone
	})
}

func durationPtr(d time.Duration) *time.Duration { return &d }

func isOfferFor(agentID string) func(*scheduler.Event) bool {
	return func(e *scheduler.Event) bool {
		if e.Type != scheduler.Event_OFFERS {
			return false
		}
		for _, o := range e.Offers.Offers {
			if o.AgentID.Value == agentID {
				return true
			}
		}
		return false
	}
}

func scalarOf(rs []mesos.Resource, name string) float64 {
	sum := 0.0
	for _, r := range rs {
		if r.Name == name {
			sum += r.GetScalar().GetValue()
		}
	}
	return sum
}

// GET_AGENTS (operator-http-api.md, createAgentResponse in
// src/common/protobuf_utils.cpp) lists every agent with its info, total
// resources, what its tasks and executors hold and what is offered, in
// both media types.
func TestGetAgentsShowsResourcesAndAllocations(t *testing.T) {
	for name, codec := range operatorCodecs {
		t.Run(name, func(t *testing.T) {
			c := startCluster(t, func(cfg *devcluster.Config) {
				cfg.Agents = []devcluster.AgentSpec{
					{Hostname: "game-1", Attributes: []devcluster.AttributeSpec{devcluster.TextAttribute("zone", "sz")}},
					{Hostname: "game-2"},
				}
			})
			op := newOperator(t, c, codec)
			s := subscribe(t, c, frameworkInfo(), protoCodec)
			o := s.awaitOffer()
			launchGroup(s, o, executorInfo(s.fwID, "e1"), taskInfo(o, "t1"))
			s.awaitAck("t1", mesos.TASK_STARTING)
			s.awaitAck("t1", mesos.TASK_RUNNING)

			agents := op.mustCall(mastercalls.GetAgents()).GetGetAgents().Agents
			if len(agents) != 2 {
				t.Fatalf("%d agents, want 2", len(agents))
			}
			for _, a := range agents {
				attrs := a.AgentInfo.Attributes
				if a.AgentInfo.Hostname == "game-1" && (len(attrs) != 1 || attrs[0].Name != "zone" || attrs[0].GetText().GetValue() != "sz") {
					t.Errorf("game-1 attributes %v, want zone=sz", attrs)
				}
			}
			a := op.agent(o.AgentID.Value)
			if a == nil {
				t.Fatalf("agent %s not listed", o.AgentID.Value)
			}
			if !a.Active || a.GetDeactivated() || a.DrainInfo != nil || a.Version == "" || !strings.HasPrefix(a.GetPID(), "slave(1)@") ||
				a.GetRegisteredTime().GetNanoseconds() <= 0 {
				t.Errorf("agent %+v", a)
			}
			if a.AgentInfo.Hostname != o.Hostname {
				t.Errorf("hostname %q, want the offer's %q", a.AgentInfo.Hostname, o.Hostname)
			}
			if cpus := scalarOf(a.TotalResources, "cpus"); cpus != 4 {
				t.Errorf("total cpus %v, want 4", cpus)
			}
			for _, r := range a.TotalResources {
				if r.GetRole() != "*" || r.AllocationInfo != nil {
					t.Errorf("total resource %v: want role * and no allocation_info", r)
				}
			}
			// Task 0.5 cpus and 64 MB, executor 0.1 cpus and 32 MB.
			if cpus, mem := scalarOf(a.AllocatedResources, "cpus"), scalarOf(a.AllocatedResources, "mem"); math.Abs(cpus-0.6) > 1e-9 || mem != 96 {
				t.Errorf("allocated cpus %v mem %v, want 0.6 and 96", cpus, mem)
			}
			for _, r := range a.AllocatedResources {
				if r.AllocationInfo.GetRole() != "*" {
					t.Errorf("allocated resource %v without allocation_info", r)
				}
			}
			if !slices.ContainsFunc(a.Capabilities, func(c mesos.AgentInfo_Capability) bool { return c.Type == mesos.AgentInfo_Capability_AGENT_DRAINING }) {
				t.Errorf("capabilities %v lack AGENT_DRAINING", a.Capabilities)
			}
		})
	}
}

// The JSON of GET_AGENTS has the field names of the example in Mesos'
// operator-http-api.md (written for 1.1) plus the fields 1.12 added, and
// Mesos' resource formats: agent_info keeps the resources as registered
// (post-refinement, no role), the others carry role "*" (endpoint
// format). An agent with nothing to kill is DRAINED at once, and
// max_grace_period given as {seconds: 10} is kept as 10s in nanoseconds
// (MasterAlreadyDrainedTest.DrainAgent in src/tests/master_draining_tests.cpp).
func TestGetAgentsJSONFieldNames(t *testing.T) {
	c := startCluster(t, func(cfg *devcluster.Config) { cfg.Agents = []devcluster.AgentSpec{{}} })
	id := c.Agents()[0]
	code, body := postOperator(t, c, "application/json", "application/json",
		`{"type":"DRAIN_AGENT","drain_agent":{"agent_id":{"value":"`+id+`"},"max_grace_period":{"seconds":10}}}`)
	if code != http.StatusOK || body != "" {
		t.Fatalf("DRAIN_AGENT: %d %q, want 200 and no body", code, body)
	}
	code, body = postOperator(t, c, "application/json", "application/json", `{"type":"GET_AGENTS"}`)
	if code != http.StatusOK {
		t.Fatalf("GET_AGENTS: %d %s", code, body)
	}
	var resp map[string]any
	if err := json.Unmarshal([]byte(body), &resp); err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	fields(resp, "", got)
	for _, path := range []string{
		"type", "get_agents.agents[].active", "get_agents.agents[].agent_info.hostname", "get_agents.agents[].agent_info.id.value",
		"get_agents.agents[].agent_info.port", "get_agents.agents[].agent_info.resources[].name",
		"get_agents.agents[].agent_info.resources[].scalar.value", "get_agents.agents[].agent_info.resources[].ranges.range[].begin",
		"get_agents.agents[].agent_info.resources[].type", "get_agents.agents[].pid", "get_agents.agents[].registered_time.nanoseconds",
		"get_agents.agents[].total_resources[].name", "get_agents.agents[].total_resources[].role", "get_agents.agents[].total_resources[].type",
		"get_agents.agents[].version",
		// Added since the documented example.
		"get_agents.agents[].deactivated", "get_agents.agents[].capabilities[].type", "get_agents.agents[].drain_info.state",
		"get_agents.agents[].drain_info.config.mark_gone", "get_agents.agents[].drain_info.config.max_grace_period.nanoseconds",
		"get_agents.agents[].estimated_drain_start_time.nanoseconds",
	} {
		if _, ok := got[path]; !ok {
			t.Errorf("no %s in %s", path, body)
		}
	}
	if _, ok := got["get_agents.agents[].agent_info.resources[].role"]; ok {
		t.Errorf("agent_info resources carry a role: %s", body)
	}
	if v := got["get_agents.agents[].total_resources[].role"]; !slices.Equal(v, []string{"*"}) {
		t.Errorf("total_resources roles %v, want *", v)
	}
	if v := got["type"]; !slices.Equal(v, []string{"GET_AGENTS"}) {
		t.Errorf("type %v", v)
	}
	agent := resp["get_agents"].(map[string]any)["agents"].([]any)[0].(map[string]any)
	drain := agent["drain_info"].(map[string]any)
	config := drain["config"].(map[string]any)
	if drain["state"] != "DRAINED" || config["mark_gone"] != false || config["max_grace_period"].(map[string]any)["nanoseconds"] != float64(10e9) ||
		agent["deactivated"] != true || agent["active"] != false {
		t.Errorf("drained agent %v", agent)
	}
	start := agent["estimated_drain_start_time"].(map[string]any)["nanoseconds"].(float64)
	if start <= 0 || int64(start)%int64(time.Second) != 0 {
		t.Errorf("estimated_drain_start_time %v: want whole seconds since the epoch", start)
	}
}

// DRAIN_AGENT (Slave::drain, Slave::statusUpdate): the agent's executor is
// told to KILL every task, with the task's kill policy capped by
// max_grace_period (no kill policy when the task's own is shorter); the
// executor's TASK_KILLED reaches the scheduler with REASON_AGENT_DRAINING;
// the agent gets no offers; drain_info goes DRAINING → DRAINED once the
// terminal updates are acknowledged; REACTIVATE_AGENT is refused while
// DRAINING and afterwards brings the offers back.
func TestDrainAgentKillsTasksThroughTheExecutor(t *testing.T) {
	for name, codec := range operatorCodecs {
		t.Run(name, func(t *testing.T) {
			c := startProcessCluster(t, nil)
			op := newOperator(t, c, codec)
			s := subscribe(t, c, frameworkInfo(), jsonCodec)
			o := s.awaitOffer()
			agentID := o.AgentID.Value
			long, short := taskInfo(o, "long"), taskInfo(o, "short")
			long.KillPolicy = &mesos.KillPolicy{GracePeriod: &mesos.DurationInfo{Nanoseconds: int64(30 * time.Second)}}
			short.KillPolicy = &mesos.KillPolicy{GracePeriod: &mesos.DurationInfo{Nanoseconds: int64(time.Second)}}
			launchGroup(s, o, realExecutor(t, s.fwID, "exec-1", "run", "protobuf"), long, short)
			s.awaitAck("long", mesos.TASK_RUNNING)
			s.awaitAck("short", mesos.TASK_RUNNING)

			op.mustCall(drainCall(agentID, durationPtr(5*time.Second), false))
			var killed []mesos.TaskStatus
			for _, id := range []string{"long", "short"} {
				st := s.await(id+" TASK_KILLED", isUpdate(id, mesos.TASK_KILLED)).Update.Status
				if st.GetReason() != mesos.REASON_AGENT_DRAINING || st.GetSource() != mesos.SOURCE_EXECUTOR {
					t.Errorf("%s: %s %s, want REASON_AGENT_DRAINING from the executor", id, st.GetReason(), st.GetSource())
				}
				killed = append(killed, st)
			}
			// The stream is ordered: offers made before the drain are in
			// by now (and rescinded); none may follow.
			s.discard(isOfferFor(agentID))
			kills := strings.Join(readLines(t, filepath.Join(sandboxOf(t, c, agentID, s.fwID, "exec-1"), "kills.log")), " ")
			if !strings.Contains(kills, "long 5000000000") || !strings.Contains(kills, "short none") {
				t.Errorf("kills.log %q: want long capped to 5s, short with no kill policy", kills)
			}

			a := op.agent(agentID)
			if a.GetDrainInfo().GetState() != mesos.DrainState_DRAINING || !a.GetDeactivated() || a.Active {
				t.Errorf("before the acknowledgements: %v deactivated %v active %v", a.GetDrainInfo(), a.GetDeactivated(), a.Active)
			}
			if _, err := op.call(mastercalls.ReactivateAgent(mesos.AgentID{Value: agentID})); err == nil || !strings.Contains(err.Error(), "Agent is still in the DRAINING state") {
				t.Errorf("REACTIVATE_AGENT while draining: %v", err)
			}
			s.ack(killed[0])
			if state := op.agent(agentID).GetDrainInfo().GetState(); state != mesos.DrainState_DRAINING {
				t.Errorf("after one of two acknowledgements: %s, want DRAINING", state)
			}
			s.ack(killed[1])
			if state := op.agent(agentID).GetDrainInfo().GetState(); state != mesos.DrainState_DRAINED {
				t.Errorf("after every acknowledgement: %s, want DRAINED", state)
			}
			s.quiet("an offer for the drained agent", 300*time.Millisecond, isOfferFor(agentID))

			op.mustCall(mastercalls.ReactivateAgent(mesos.AgentID{Value: agentID}))
			s.await("an offer for the reactivated agent", isOfferFor(agentID))
			if a := op.agent(agentID); a.DrainInfo != nil || a.GetDeactivated() || !a.Active || a.EstimatedDrainStartTime != nil {
				t.Errorf("after REACTIVATE_AGENT: %+v", a)
			}
		})
	}
}

// DRAIN_AGENT with mark_gone: a PARTITION_AWARE framework sees its killed
// task as TASK_GONE_BY_OPERATOR (REASON_AGENT_DRAINING), and once that is
// acknowledged the agent is gone: removed from GET_AGENTS, a FAILURE event
// for it (MasterDrainingTest.DrainAgentMarkGone).
func TestDrainAgentMarkGone(t *testing.T) {
	c := startCluster(t, func(cfg *devcluster.Config) { cfg.Agents = []devcluster.AgentSpec{{}} })
	op := newOperator(t, c, operatorCodecs["protobuf"])
	s := subscribe(t, c, frameworkInfo(), protoCodec)
	o := s.awaitOffer()
	launchGroup(s, o, executorInfo(s.fwID, "e1"), taskInfo(o, "t1"))
	s.awaitAck("t1", mesos.TASK_STARTING)
	s.awaitAck("t1", mesos.TASK_RUNNING)

	op.mustCall(drainCall(o.AgentID.Value, nil, true))
	st := s.await("t1 TASK_GONE_BY_OPERATOR", isUpdate("t1", mesos.TASK_GONE_BY_OPERATOR)).Update.Status
	if st.GetReason() != mesos.REASON_AGENT_DRAINING {
		t.Errorf("reason %s, want REASON_AGENT_DRAINING", st.GetReason())
	}
	if a := op.agent(o.AgentID.Value); a == nil || a.DrainInfo == nil || !a.DrainInfo.Config.GetMarkGone() || a.DrainInfo.Config.MaxGracePeriod != nil {
		t.Fatalf("before the acknowledgement: %+v", a)
	}
	s.ack(st)
	// The executor's FAILURE (it exits once its task is terminal) may come
	// first; the agent's has no executor ID.
	s.await("FAILURE for the gone agent", func(e *scheduler.Event) bool {
		return e.Type == scheduler.Event_FAILURE && e.Failure.ExecutorID == nil && e.Failure.GetAgentID().GetValue() == o.AgentID.Value
	})
	if a := op.agent(o.AgentID.Value); a != nil {
		t.Errorf("a gone agent is still listed: %+v", a)
	}
}

// DEACTIVATE_AGENT rescinds the agent's offer and stops new ones without
// touching its tasks; REACTIVATE_AGENT brings the offers back. Errors are
// Mesos': 400 with the reason.
func TestDeactivateAndReactivateAgent(t *testing.T) {
	c := startCluster(t, func(cfg *devcluster.Config) { cfg.Agents = []devcluster.AgentSpec{{}} })
	op := newOperator(t, c, operatorCodecs["json"])
	s := subscribe(t, c, frameworkInfo(), jsonCodec)
	o := s.awaitOffer()
	id := mesos.AgentID{Value: o.AgentID.Value}

	if _, err := op.call(mastercalls.ReactivateAgent(id)); err == nil || !strings.Contains(err.Error(), "Agent is not deactivated") {
		t.Errorf("REACTIVATE_AGENT of an active agent: %v", err)
	}
	op.mustCall(mastercalls.DeactivateAgent(id))
	r := s.await("RESCIND", isType(scheduler.Event_RESCIND)).Rescind
	if r.OfferID.Value != o.ID.Value {
		t.Errorf("rescinded %s, want %s", r.OfferID.Value, o.ID.Value)
	}
	s.quiet("an offer for the deactivated agent", 300*time.Millisecond, isOfferFor(id.Value))
	if a := op.agent(id.Value); a.Active || !a.GetDeactivated() || a.DrainInfo != nil {
		t.Errorf("deactivated agent %+v", a)
	}
	op.mustCall(mastercalls.ReactivateAgent(id))
	s.await("an offer for the reactivated agent", isOfferFor(id.Value))

	for _, call := range []*master.Call{mastercalls.DeactivateAgent(mesos.AgentID{Value: "nope"}), drainCall("nope", nil, false)} {
		if _, err := op.call(call); err == nil || !strings.Contains(err.Error(), "Unknown agent") {
			t.Errorf("%s of an unknown agent: %v", call.Type, err)
		}
	}
}

// A maintenance window (UPDATE_MAINTENANCE_SCHEDULE naming the agent's
// hostname and IP) makes the master send INVERSE_OFFERS, with the
// unavailability, to the frameworks using the agent, and put the
// unavailability on its offers; a new schedule rescinds them
// (RESCIND_INVERSE_OFFER) and sends new ones; ACCEPT_INVERSE_OFFERS and
// DECLINE_INVERSE_OFFERS show in GET_MAINTENANCE_STATUS. START_MAINTENANCE
// takes the machine DOWN (its agent removed, the task gone by operator),
// STOP_MAINTENANCE brings it UP and out of the schedule.
func TestMaintenanceInverseOffers(t *testing.T) {
	for name, codec := range operatorCodecs {
		t.Run(name, func(t *testing.T) {
			c := startCluster(t, func(cfg *devcluster.Config) {
				cfg.Agents = []devcluster.AgentSpec{{Hostname: "game-1"}, {Hostname: "game-2"}}
			})
			op := newOperator(t, c, codec)
			s := subscribe(t, c, frameworkInfo(), protoCodec)
			var o mesos.Offer
			for _, offer := range s.await("OFFERS", isType(scheduler.Event_OFFERS)).Offers.Offers {
				if offer.Hostname == "game-1" {
					o = offer
				}
			}
			launchGroup(s, o, executorInfo(s.fwID, "e1"), taskInfo(o, "t1"))
			s.awaitAck("t1", mesos.TASK_STARTING)
			s.awaitAck("t1", mesos.TASK_RUNNING)

			host, ip := "game-1", "127.0.0.1"
			machine := mesos.MachineID{Hostname: &host, IP: &ip}
			start := time.Now().Add(time.Hour).UnixNano()
			window := func(start int64) maintenance.Schedule {
				return maintenance.Schedule{Windows: []maintenance.Window{{
					MachineIDs:     []mesos.MachineID{machine},
					Unavailability: mesos.Unavailability{Start: mesos.TimeInfo{Nanoseconds: start}, Duration: &mesos.DurationInfo{Nanoseconds: int64(time.Hour)}},
				}}}
			}
			op.mustCall(mastercalls.UpdateMaintenanceSchedule(window(start)))
			first := s.await("INVERSE_OFFERS", isType(scheduler.Event_INVERSE_OFFERS)).InverseOffers.InverseOffers
			if len(first) != 1 || first[0].AgentID.GetValue() != o.AgentID.Value || first[0].Unavailability.Start.Nanoseconds != start ||
				len(first[0].Resources) != 0 {
				t.Fatalf("inverse offers %+v, want one for %s starting at %d", first, o.AgentID.Value, start)
			}
			// Offers made before the schedule are rescinded; the new one
			// carries the unavailability.
			s.await("an offer for game-1 with its unavailability", func(e *scheduler.Event) bool {
				return isOfferFor(o.AgentID.Value)(e) && slices.ContainsFunc(e.Offers.Offers, func(of mesos.Offer) bool {
					return of.AgentID.Value == o.AgentID.Value && of.Unavailability != nil && of.Unavailability.Start.Nanoseconds == start
				})
			})
			if sched := op.mustCall(mastercalls.GetMaintenanceSchedule()).GetGetMaintenanceSchedule().Schedule; !sched.Equal(window(start)) {
				t.Errorf("schedule %v: %v", sched, sched.VerboseEqual(window(start)))
			}
			if _, err := op.call(drainCall(o.AgentID.Value, nil, false)); err == nil ||
				!strings.Contains(err.Error(), "Agent "+o.AgentID.Value+" is part of a maintenance schedule under Machine game-1 (127.0.0.1)") {
				t.Errorf("DRAIN_AGENT of a scheduled agent: %v", err)
			}

			// A new window: the outstanding inverse offer is rescinded,
			// a new one carries the new start.
			op.mustCall(mastercalls.UpdateMaintenanceSchedule(window(start + int64(time.Hour))))
			rescinded := s.await("RESCIND_INVERSE_OFFER", isType(scheduler.Event_RESCIND_INVERSE_OFFER)).RescindInverseOffer
			if rescinded.InverseOfferID.Value != first[0].OfferID.Value {
				t.Errorf("rescinded %s, want %s", rescinded.InverseOfferID.Value, first[0].OfferID.Value)
			}
			second := s.await("INVERSE_OFFERS", isType(scheduler.Event_INVERSE_OFFERS)).InverseOffers.InverseOffers
			if len(second) != 1 || second[0].Unavailability.Start.Nanoseconds != start+int64(time.Hour) {
				t.Fatalf("inverse offers %+v after the new schedule", second)
			}
			status := op.status()
			if len(status.DrainingMachines) != 1 || !status.DrainingMachines[0].ID.Equal(&machine) || len(status.DrainingMachines[0].Statuses) != 0 {
				t.Fatalf("status before any answer %+v", status)
			}

			s.mustCall(calls.AcceptInverseOffers(second[0].OfferID).With(func(c *scheduler.Call) {
				refuse := 0.0
				c.AcceptInverseOffers.Filters = &mesos.Filters{RefuseSeconds: &refuse}
			}))
			answered := op.status().DrainingMachines[0].Statuses
			if len(answered) != 1 || answered[0].GetStatus() != allocator.InverseOfferStatus_ACCEPT || answered[0].FrameworkID.Value != s.fwID ||
				answered[0].Timestamp.Nanoseconds <= 0 {
				t.Errorf("after ACCEPT_INVERSE_OFFERS: %+v", answered)
			}
			// No filter: the next allocation asks again.
			third := s.await("INVERSE_OFFERS again", isType(scheduler.Event_INVERSE_OFFERS)).InverseOffers.InverseOffers
			s.mustCall(calls.DeclineInverseOffers(third[0].OfferID))
			if answered := op.status().DrainingMachines[0].Statuses; len(answered) != 1 || answered[0].GetStatus() != allocator.InverseOfferStatus_DECLINE {
				t.Errorf("after DECLINE_INVERSE_OFFERS: %+v", answered)
			}
			// The default filter (5s) holds the next one back.
			s.quiet("INVERSE_OFFERS within the decline's filter", 300*time.Millisecond, isType(scheduler.Event_INVERSE_OFFERS))

			op.mustCall(mastercalls.StartMaintenance(machine))
			st := s.await("t1 gone", isTaskUpdate("t1")).Update.Status
			if st.GetState() != mesos.TASK_GONE_BY_OPERATOR || st.GetReason() != mesos.REASON_AGENT_REMOVED_BY_OPERATOR || st.GetMessage() != "Operator initiated 'Machine DOWN'" {
				t.Errorf("t1 after START_MAINTENANCE: %s %s %q", st.GetState(), st.GetReason(), st.GetMessage())
			}
			if a := op.agent(o.AgentID.Value); a != nil {
				t.Errorf("the agent of a DOWN machine is listed: %+v", a)
			}
			if status := op.status(); len(status.DrainingMachines) != 0 || len(status.DownMachines) != 1 || !status.DownMachines[0].Equal(&machine) {
				t.Errorf("status after START_MAINTENANCE %+v", status)
			}
			if _, err := op.call(mastercalls.UpdateMaintenanceSchedule(maintenance.Schedule{})); err == nil ||
				!strings.Contains(err.Error(), `Machine '{"hostname":"game-1","ip":"127.0.0.1"}' is deactivated and cannot be removed from the schedule`) {
				t.Errorf("dropping a DOWN machine from the schedule: %v", err)
			}
			op.mustCall(mastercalls.StopMaintenance(machine))
			if status := op.status(); len(status.DrainingMachines) != 0 || len(status.DownMachines) != 0 {
				t.Errorf("status after STOP_MAINTENANCE %+v", status)
			}
			if sched := op.mustCall(mastercalls.GetMaintenanceSchedule()).GetGetMaintenanceSchedule().Schedule; len(sched.Windows) != 0 {
				t.Errorf("schedule after STOP_MAINTENANCE %v", sched)
			}
		})
	}
}

// A machine named by hostname alone is not the agent's machine (Mesos
// compares hostname and IP, both present or not): no inverse offers.
func TestMaintenanceNeedsHostnameAndIP(t *testing.T) {
	c := startCluster(t, func(cfg *devcluster.Config) { cfg.Agents = []devcluster.AgentSpec{{Hostname: "game-1"}} })
	op := newOperator(t, c, operatorCodecs["json"])
	s := subscribe(t, c, frameworkInfo(), protoCodec)
	s.awaitOffer()
	host := "GAME-1"
	op.mustCall(mastercalls.UpdateMaintenanceSchedule(maintenance.Schedule{Windows: []maintenance.Window{{
		MachineIDs: []mesos.MachineID{{Hostname: &host}},
	}}}))
	s.quiet("INVERSE_OFFERS", 300*time.Millisecond, isType(scheduler.Event_INVERSE_OFFERS))
	if status := op.status(); len(status.DrainingMachines) != 1 || status.DrainingMachines[0].ID.GetHostname() != "GAME-1" {
		t.Errorf("status %+v: want the scheduled machine DRAINING", status)
	}
}

func postOperator(t *testing.T, c *devcluster.Cluster, contentType, accept, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, c.MasterURL()+"/api/v1", strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// The HTTP contract of POST /api/v1 (src/master/http.cpp "api",
// validation::master::call, maintenance::validation): status codes and
// the text Mesos answers with.
func TestOperatorHTTPContract(t *testing.T) {
	c := startCluster(t, func(cfg *devcluster.Config) { cfg.Agents = []devcluster.AgentSpec{{Hostname: "game-1"}} })
	const js = "application/json"
	for _, tc := range []struct {
		name, contentType, accept, body string
		wantCode                        int
		wantBody                        string
	}{
		{"no content type", "", js, `{"type":"GET_AGENTS"}`, http.StatusBadRequest, "Expecting 'Content-Type' to be present"},
		{"no type", js, js, `{}`, http.StatusBadRequest, "Failed to validate master::Call: Expecting 'type' to be present"},
		{"drain without drain_agent", js, js, `{"type":"DRAIN_AGENT"}`, http.StatusBadRequest, "Failed to validate master::Call: Expecting 'drain_agent' to be present"},
		{"drain without agent_id", js, js, `{"type":"DRAIN_AGENT","drain_agent":{}}`, http.StatusBadRequest, "Failed to validate master::Call: Missing required fields: drain_agent.agent_id"},
		{"unacceptable response type", js, "text/html", `{"type":"GET_AGENTS"}`, http.StatusNotAcceptable, "Expecting 'Accept' to allow 'application/x-protobuf' or 'application/json'"},
		{"call the dev cluster lacks", js, js, `{"type":"GET_FLAGS"}`, http.StatusNotImplemented, "The dev cluster does not implement GET_FLAGS calls"},
		{"machine without hostname or ip", js, js, `{"type":"UPDATE_MAINTENANCE_SCHEDULE","update_maintenance_schedule":{"schedule":{"windows":[{"machine_ids":[{}],"unavailability":{"start":{"nanoseconds":1}}}]}}}`,
			http.StatusBadRequest, "Both 'hostname' and 'ip' for a machine are empty"},
		{"bad ip", js, js, `{"type":"UPDATE_MAINTENANCE_SCHEDULE","update_maintenance_schedule":{"schedule":{"windows":[{"machine_ids":[{"ip":"game-1"}],"unavailability":{"start":{"nanoseconds":1}}}]}}}`,
			http.StatusBadRequest, "Failed to parse IPv4: game-1"},
		{"empty window", js, js, `{"type":"UPDATE_MAINTENANCE_SCHEDULE","update_maintenance_schedule":{"schedule":{"windows":[{"unavailability":{"start":{"nanoseconds":1}}}]}}}`,
			http.StatusBadRequest, "List of machines in the maintenance window is empty"},
		{"start maintenance of an UP machine", js, js, `{"type":"START_MAINTENANCE","start_maintenance":{"machines":[{"hostname":"game-1","ip":"127.0.0.1"}]}}`,
			http.StatusBadRequest, `Machine '{"hostname":"game-1","ip":"127.0.0.1"}' is not in DRAINING mode and cannot be brought down`},
		{"stop maintenance of an unknown machine", js, js, `{"type":"STOP_MAINTENANCE","stop_maintenance":{"machines":[{"hostname":"elsewhere"}]}}`,
			http.StatusBadRequest, `Machine '{"hostname":"elsewhere"}' is not part of a maintenance schedule`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := postOperator(t, c, tc.contentType, tc.accept, tc.body)
			if code != tc.wantCode || body != tc.wantBody {
				t.Errorf("got %d %q, want %d %q", code, body, tc.wantCode, tc.wantBody)
			}
		})
	}

	resp, err := http.Get(c.MasterURL() + "/api/v1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET /api/v1: %d, want 405", resp.StatusCode)
	}

	// The response follows Accept: protobuf when asked, JSON otherwise.
	req, _ := http.NewRequest(http.MethodPost, c.MasterURL()+"/api/v1", strings.NewReader(`{"type":"GET_AGENTS"}`))
	req.Header.Set("Content-Type", js)
	req.Header.Set("Accept", "application/x-protobuf")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var r master.Response
	if ct := resp.Header.Get("Content-Type"); ct != "application/x-protobuf" {
		t.Errorf("Content-Type %q", ct)
	}
	if err := r.Unmarshal(b); err != nil || r.Type != master.Response_GET_AGENTS || len(r.GetGetAgents().Agents) != 1 {
		t.Errorf("protobuf GET_AGENTS: %v %+v", err, r)
	}
	if _, ok := resources.CPUs(r.GetGetAgents().Agents[0].TotalResources...); !ok {
		t.Errorf("no cpus in %v", r.GetGetAgents().Agents[0].TotalResources)
	}
}
