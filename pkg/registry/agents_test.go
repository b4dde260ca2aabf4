package registry_test

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// An agent's record has three writers — offers, the master's list and
// maintenance windows — and none overwrites what another wrote. The
// master's list drops the agents it does not know and rewrites only what
// changed.
func TestAgentRecordsKeepEachSourcesPart(t *testing.T) {
	r, _ := newRegistry(t)
	window := &registry.AgentMaintenance{Start: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC), End: time.Date(2026, 11, 23, 11, 0, 0, 0, time.UTC), Answer: "pending"}
	if err := r.RecordAgent(ctx, "a1", "host-1", "10.0.0.1:5051", map[string]string{"idc": "sz"}); err != nil {
		t.Fatal(err)
	}
	if err := r.RecordAgent(ctx, "old", "host-9", "", nil); err != nil {
		t.Fatal(err)
	}
	if err := r.SetAgentMaintenance(ctx, "a1", "host-1", window); err != nil {
		t.Fatal(err)
	}
	master := registry.AgentMaster{Active: true, Total: registry.AgentResources{CPUs: 8, MemMB: 16384, DiskMB: 1000, Ports: 1001}}
	listed := []registry.ListedAgent{
		{ID: "a1", Hostname: "host-1", Master: master},
		// Never offered to us (all taken by another framework): recorded
		// with what the master says.
		{ID: "a2", Hostname: "host-2", Attributes: map[string]string{"idc": "sh"}, Endpoint: "host-2:5051", Master: registry.AgentMaster{Recovered: true}},
	}
	dropped, err := r.SyncAgents(ctx, listed)
	if err != nil || !reflect.DeepEqual(dropped, []string{"old"}) {
		t.Fatalf("SyncAgents = %v, %v; want the agent the master does not know dropped", dropped, err)
	}
	// An offer without the agent's URL leaves its endpoint known.
	if err := r.RecordAgent(ctx, "a1", "host-1", "", map[string]string{"idc": "sz"}); err != nil {
		t.Fatal(err)
	}
	agents, err := r.ListAgents(ctx)
	if err != nil || len(agents) != 2 {
		t.Fatalf("ListAgents = %+v, %v; want a1 and a2", agents, err)
	}
	a1, a2 := agents[0], agents[1]
	if a1.Hostname != "host-1" || a1.Attributes["idc"] != "sz" || a1.Endpoint != "10.0.0.1:5051" || a1.SeenAt.IsZero() || !reflect.DeepEqual(a1.Master, &master) || !reflect.DeepEqual(a1.Maintenance, window) {
		t.Errorf("a1 = %+v; want its offers', master's and maintenance parts", a1)
	}
	if a2.Hostname != "host-2" || a2.Attributes["idc"] != "sh" || a2.Endpoint != "host-2:5051" || !a2.SeenAt.IsZero() || a2.Master == nil || !a2.Master.Recovered {
		t.Errorf("a2 = %+v; want recorded from the master's list, never seen in an offer", a2)
	}

	// The same list again writes nothing.
	rev := a1.Revision
	if _, err := r.SyncAgents(ctx, listed); err != nil {
		t.Fatal(err)
	}
	if agents, _ := r.ListAgents(ctx); agents[0].Revision != rev {
		t.Errorf("an unchanged list rewrote a1 (revision %d → %d)", rev, agents[0].Revision)
	}
	// A window removed, and the master draining a1.
	if err := r.SetAgentMaintenance(ctx, "a1", "host-1", nil); err != nil {
		t.Fatal(err)
	}
	listed[0].Master.Drain, listed[0].Master.Active, listed[0].Master.Deactivated = "DRAINING", false, true
	if _, err := r.SyncAgents(ctx, listed); err != nil {
		t.Fatal(err)
	}
	if agents, _ := r.ListAgents(ctx); agents[0].Maintenance != nil || agents[0].Master.Drain != "DRAINING" || agents[0].Master.Active {
		t.Errorf("a1 = %+v; want no window and the master's drain", agents[0])
	}
	// The agent came back on another address.
	listed[1].Endpoint = "10.0.0.2:5052"
	if _, err := r.SyncAgents(ctx, listed); err != nil {
		t.Fatal(err)
	}
	if agents, _ := r.ListAgents(ctx); agents[1].Endpoint != "10.0.0.2:5052" {
		t.Errorf("a2 = %+v; want the master's new endpoint", agents[1])
	}
}

func TestMaintenanceWindowCurrent(t *testing.T) {
	start := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		window *registry.AgentMaintenance
		now    time.Time
		want   bool
	}{
		{nil, start, false},
		{&registry.AgentMaintenance{Start: start, End: start.Add(time.Hour)}, start.Add(-24 * time.Hour), true}, // announced: not placed on
		{&registry.AgentMaintenance{Start: start, End: start.Add(time.Hour)}, start.Add(59 * time.Minute), true},
		{&registry.AgentMaintenance{Start: start, End: start.Add(time.Hour)}, start.Add(time.Hour), false},
		{&registry.AgentMaintenance{Start: start}, start.Add(1000 * time.Hour), true}, // no end
	} {
		if got := tc.window.Current(tc.now); got != tc.want {
			t.Errorf("%+v.Current(%s) = %v, want %v", tc.window, tc.now, got, tc.want)
		}
	}
}

// RecordAgents records many agents' sightings in a few transactions, as
// RecordAgent would each: what another writer stored stays, an endpoint an
// offer does not name stays known, and an agent seen twice keeps its last
// sighting.
func TestRecordAgentsTogether(t *testing.T) {
	r, st := newRegistry(t)
	window := &registry.AgentMaintenance{Start: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC), End: time.Date(2026, 11, 23, 11, 0, 0, 0, time.UTC), Answer: "pending"}
	if err := r.RecordAgent(ctx, "a-000", "old-host", "10.0.0.1:5051", nil); err != nil {
		t.Fatal(err)
	}
	if err := r.SetAgentMaintenance(ctx, "a-000", "old-host", window); err != nil {
		t.Fatal(err)
	}
	before, err := st.Revision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var seen []registry.AgentSeen
	for i := range 300 {
		seen = append(seen, registry.AgentSeen{ID: fmt.Sprintf("a-%03d", i), Hostname: fmt.Sprintf("host-%d", i), Attributes: map[string]string{"idc": "sz"}})
	}
	seen = append(seen, registry.AgentSeen{ID: "a-001", Hostname: "host-1-again"})
	if err := r.RecordAgents(ctx, seen); err != nil {
		t.Fatal(err)
	}
	after, err := st.Revision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// 300 writes of up to 127 a transaction, each transaction a revision.
	if after-before != 3 {
		t.Errorf("300 agents recorded in %d transactions, want 3", after-before)
	}
	agents, err := r.ListAgents(ctx)
	if err != nil || len(agents) != 300 {
		t.Fatalf("ListAgents: %d agents, %v", len(agents), err)
	}
	a0, a1 := agents[0], agents[1]
	if a0.Hostname != "host-0" || a0.Endpoint != "10.0.0.1:5051" || !reflect.DeepEqual(a0.Maintenance, window) || a0.SeenAt.IsZero() {
		t.Errorf("a-000 = %+v; want its new sighting, its endpoint and maintenance kept", a0)
	}
	if a1.Hostname != "host-1-again" || a1.Attributes != nil {
		t.Errorf("a-001 = %+v; want its last sighting", a1)
	}
}
