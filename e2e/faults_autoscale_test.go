package e2e_test

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// Kill -9 of the leader mid-autoscale. A process fleet of 5, every
// instance allocated, gets an autoscaler with a buffer of 20: the leader
// writes the scale 5→25 (size and status in one transaction) and is
// killed -9 at the first sight of a new task group on the master, while
// it launches the others; the standby takes over from the stored status.
// Then exactly 25 instances run, the master runs exactly their task
// groups and 25 game servers live on the machine; two intervals on, the
// status shows one scale-up of 20 by the dead leader. One more instance
// allocated, the new leader scales 25→26: it decides from the stored
// record and size. The workload's record never asked for more (a leader
// adding the buffer twice would ask for 45).
func TestLeaderKilledMidAutoscale(t *testing.T) {
	s, leader, standby := startReplicas(t, embeddedEtcd(t).Endpoints()[0])
	const path, allocated, buffer = "/v1/apps/demo/fleet", 5, 20
	never := func(m, _ map[string]any) { m["restartPolicy"] = map[string]any{"policy": "Never"} }
	if code, body := s.call("POST", "/v1/apps", s.processApp("fleet", allocated, never)); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	s.settled(path, allocated)
	for id := range allocated {
		s.allocation(path, id, "allocate")
	}
	// The standby's stream goes on through the leader's death.
	s.api = standby.api
	follow := s.followScaling("app", "fleet")
	s.api = leader.api
	s.createAutoscaler("fleet", map[string]any{
		"target":      map[string]any{"kind": "process", "name": "fleet"},
		"minReplicas": allocated, "maxReplicas": 40, "intervalSeconds": int(autoscaleInterval.Seconds()),
		"metrics": []any{map[string]any{"type": "buffer", "buffer": map[string]any{"bufferSize": buffer}}},
		// One scale-up of any size in 10 minutes: the status keeps it
		// that long, and a second one would be refused by the policy
		// before it could double the fleet.
		"behavior": map[string]any{"scaleUp": map[string]any{"policies": []any{
			map[string]any{"type": "Pods", "value": 100, "periodSeconds": 600}}}},
	})

	var launched int
	for deadline := time.Now().Add(30 * time.Second); launched <= allocated; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no new task group on the master 30s after the autoscaler's creation")
		}
		launched = len(s.masterGroups("demo_fleet_"))
	}
	killed := s.killLeader(leader, standby)
	t.Logf("killed the leader with %d task groups of %d on the master", launched, allocated+buffer)
	s.answersAfter(killed, electionTTL+5*time.Second)
	s.settled(path, allocated+buffer)
	s.serversAlive("fleet", allocated+buffer)

	// The new leader decides twice more meanwhile: a fleet at its size
	// stays there.
	time.Sleep(2 * autoscaleInterval)
	st := s.autoscalerStatus("fleet")
	if st == nil {
		t.Fatal("no status")
	}
	t.Logf("status: %s; last scale %+v; scale-ups %+v", describeStatus(*st), st.LastScale, st.ScaleUp)
	if ls := st.LastScale; ls == nil || ls.From != allocated || ls.To != allocated+buffer || !ls.At.Before(killed) {
		t.Errorf("last scale %+v, want %d→%d by the killed leader", ls, allocated, allocated+buffer)
	}
	if len(st.ScaleUp) != 1 || st.ScaleUp[0].Change != buffer || st.DesiredReplicas != allocated+buffer {
		t.Errorf("status %s, scale-ups %+v; want one scale-up of %d, %d instances", describeStatus(*st), st.ScaleUp, buffer, allocated+buffer)
	}
	if groups := s.masterGroups("demo_fleet_"); len(groups) != allocated+buffer {
		t.Errorf("the master runs %d task groups of fleet, want %d", len(groups), allocated+buffer)
	}
	s.serversAlive("fleet", allocated+buffer)

	// The new leader scales, from the size the dead one wrote: one more
	// allocated, one more instance.
	s.allocation(path, allocated, "allocate")
	if more := follow.scaledTo(allocated + buffer + 1); more.From != allocated+buffer {
		t.Errorf("the new leader scaled %d→%d, want %d→%d", more.From, more.To, allocated+buffer, allocated+buffer+1)
	}
	s.settled(path, allocated+buffer+1)
	s.serversAlive("fleet", allocated+buffer+1)
	follow.withinBounds(allocated, allocated+buffer+1)
	want := []string{fmt.Sprintf("%d→%d", allocated, allocated+buffer), fmt.Sprintf("%d→%d", allocated+buffer, allocated+buffer+1)}
	if steps := follow.steps(); !slices.Equal(steps, want) {
		t.Errorf("scales %v, want exactly %v", steps, want)
	}
}
