package e2e_test

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// operatorCall POSTs a JSON call to the master's operator API.
func (s *system) operatorCall(body string) {
	s.t.Helper()
	resp, err := http.Post(s.master+"/api/v1", "application/json", strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	if msg, _ := io.ReadAll(resp.Body); resp.StatusCode != http.StatusOK {
		s.t.Fatalf("operator call %s: %s %s", body, resp.Status, msg)
	}
}

// Mesos maintenance primitives (inverse offers, DRAIN_AGENT) are
// honoured, and the dev cluster implements the same calls — through the
// real scheduler, the dev cluster's master and agents and the real process
// executor. A maintenance window moves the instance off its agent and the
// inverse offer is accepted; the master's drain of another agent kills its
// instance through the executor with REASON_AGENT_DRAINING, which is
// placed again with no restart counted once the window is cleared.
func TestMesosMaintenanceAndDrainAgent(t *testing.T) {
	s := startSystem(t) // the default --agent-sync-interval (30s): the drain shows through the events that hint at it
	app := s.manifest("process.json", func(m map[string]any) { m["spec"].(map[string]any)["instance"] = 2 })
	s.mustCall("POST", "/v1/apps", string(app), 201)
	running := s.running("demo", "gamesvr", 2)
	s.eventually("the master's view of the agents", func() (bool, string) {
		a := s.agent(running[0].Host)
		return a.Master != nil && a.Master.Active && a.Master.Total.CPUs > 0, fmt.Sprintf("%+v", a.Master)
	})
	hosts := []string{"agent-1", "agent-2", "agent-3"}
	free := slices.DeleteFunc(hosts, func(h string) bool { return h == running[0].Host || h == running[1].Host })[0]

	window := func(host string) string {
		return fmt.Sprintf(`{"type":"UPDATE_MAINTENANCE_SCHEDULE","update_maintenance_schedule":{"schedule":{"windows":[`+
			`{"machine_ids":[{"hostname":%q,"ip":"127.0.0.1"}],"unavailability":{"start":{"nanoseconds":%d},"duration":{"nanoseconds":%d}}}]}}}`,
			host, time.Now().Add(time.Hour).UnixNano(), int64(time.Hour))
	}
	maintained := running[0].Host
	s.operatorCall(window(maintained))
	s.eventuallyWithin(60*time.Second, "instance 0 moved off the agent in maintenance, the inverse offer accepted", func() (bool, string) {
		v, _ := s.app("demo", "gamesvr")
		a := s.agent(maintained)
		i := v.Status.Instances[0]
		return i.Host == free && i.State == "TASK_RUNNING" && i.Move == nil && a.Maintenance != nil && a.Maintenance.Answer == "accepted" && !a.Schedulable,
			fmt.Sprintf("instance 0 %s on %s; agent %+v %+v", i.State, i.Host, a.Maintenance, a.Schedulable)
	})

	drained := running[1]
	s.operatorCall(fmt.Sprintf(`{"type":"DRAIN_AGENT","drain_agent":{"agent_id":{"value":%q}}}`, drained.Agent))
	// Well within the 30s between reads of the master's agents: its kills
	// hint that the agent changed.
	s.eventuallyWithin(15*time.Second, "instance 1 evicted by the master's drain, the agent shown DRAINED", func() (bool, string) {
		v, _ := s.app("demo", "gamesvr")
		i := v.Status.Instances[1]
		a := s.agent(drained.Host)
		return strings.Contains(i.Message, "REASON_AGENT_DRAINING") && i.Restarts == 0 && a.Master != nil && a.Master.Drain == "DRAINED",
			fmt.Sprintf("instance 1 %s restarts=%d %q; master view %+v", i.State, i.Restarts, i.Message, a.Master)
	})
	s.operatorCall(`{"type":"UPDATE_MAINTENANCE_SCHEDULE","update_maintenance_schedule":{"schedule":{}}}`)
	for _, i := range s.running("demo", "gamesvr", 2) {
		if i.Restarts != 0 || i.ID == 1 && i.Host != maintained {
			t.Errorf("instance %d on %s restarts=%d: want no restart, instance 1 on %s (out of maintenance)", i.ID, i.Host, i.Restarts, maintained)
		}
	}
	if code, body := s.call("GET", "/v1/notifications?type=exit", nil); code != 200 || strings.Contains(string(body), `"id"`) {
		t.Errorf("exit notifications %d %s: a move and an eviction are no exit", code, body)
	}
}
