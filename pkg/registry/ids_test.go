package registry_test

import (
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// Task IDs are unique, readable, and parse without splitting on dots
// (names may contain dots); unique across incarnations of one
// application name too (MESOS-2198: never reuse a task ID).
func TestIDsParseBack(t *testing.T) {
	created := time.Date(2026, 11, 27, 21, 0, 0, 0, time.UTC)
	inc := registry.Incarnation(created)
	tg := registry.TaskGroupID("ns.a", "game.svc", inc, 12, 3)
	task := registry.TaskID(tg, 1)
	if inc != "mwzgt9c0" || tg != "ns.a_game.svc_12_3.mwzgt9c0" || task != "ns.a_game.svc_12_3.mwzgt9c0_1" {
		t.Fatalf("incarnation %q ids %q %q", inc, tg, task)
	}
	if again := registry.Incarnation(created.Add(time.Millisecond)); again == inc {
		t.Errorf("created a millisecond apart, two incarnations are both %q", inc)
	}
	p, err := registry.ParseID(task)
	if err != nil || p != (registry.ParsedID{Namespace: "ns.a", App: "game.svc", Index: 12, Launch: 3, Incarnation: inc, Task: 1}) {
		t.Fatalf("ParseID(%q) = %+v, %v", task, p, err)
	}
	if p.TaskGroupID() != tg {
		t.Errorf("the task group of %q is %q, want %q", task, p.TaskGroupID(), tg)
	}
	p, err = registry.ParseID(tg)
	if err != nil || p.Task != -1 || p.Launch != 3 || p.Incarnation != inc {
		t.Fatalf("ParseID(%q) = %+v, %v", tg, p, err)
	}
	// IDs the version before incarnations wrote: their tasks run on
	// after an upgrade.
	p, err = registry.ParseID("ns.a_game.svc_12_3_1")
	if err != nil || p != (registry.ParsedID{Namespace: "ns.a", App: "game.svc", Index: 12, Launch: 3, Task: 1}) || p.TaskGroupID() != "ns.a_game.svc_12_3" {
		t.Fatalf("ParseID of an ID without incarnation = %+v (group %q), %v", p, p.TaskGroupID(), err)
	}
	for _, bad := range []string{"", "a_b_c", "a_b_x_1", "a_b_1_2_3_4", "_b_1_2", "a_b_-1_2", "a_b_1_2.", "a_b_1_2.AB", "a_b_1_.k2", "a_b_1_2.k2.k3"} {
		if _, err := registry.ParseID(bad); err == nil {
			t.Errorf("ParseID(%q) accepted", bad)
		}
	}
}

// A record the version before incarnations wrote (its launches' IDs
// without one) still loads, and LaunchByID finds its old launch and the
// new one launched after the upgrade.
func TestLaunchByIDAcrossTheUpgrade(t *testing.T) {
	r, _ := newRegistry(t)
	app := mustCreate(t, r, process(1))
	current := registry.TaskGroupID(app.Namespace, app.Name, registry.Incarnation(app.CreatedAt), 0, 3)
	old := registry.TaskGroupID(app.Namespace, app.Name, "", 0, 2)
	tg := &registry.TaskGroup{Namespace: app.Namespace, App: app.Name, Index: 0, ID: current, Launches: 3, Phase: "Running",
		Previous: &registry.PreviousLaunch{ID: old, AgentID: "agent-1"}}
	if err := r.PutTaskGroup(ctx, tg); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{current, old} {
		inst, launch, err := r.LaunchByID(ctx, id)
		if err != nil || inst.ID != current || launch.ID != id {
			t.Errorf("LaunchByID(%q) = %+v, %+v, %v", id, inst, launch, err)
		}
	}
	if _, _, err := r.LaunchByID(ctx, registry.TaskGroupID(app.Namespace, app.Name, "k0", 0, 3)); err == nil {
		t.Errorf("LaunchByID found the launch of another incarnation")
	}
}
