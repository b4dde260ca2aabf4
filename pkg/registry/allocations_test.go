package registry_test

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// putInstance stores instance id of ns-a/gamesvc in phase, running its
// first launch, as the scheduler does.
func putInstance(t *testing.T, st *store.Store, id int, phase string) string {
	t.Helper()
	key, err := registry.TaskGroupKey("ns-a", "gamesvc", id)
	if err != nil {
		t.Fatal(err)
	}
	tgID := registry.TaskGroupID("ns-a", "gamesvc", "", id, 1)
	if _, err := store.CreateJSON(ctx, st, key, registry.TaskGroup{ID: tgID, Namespace: "ns-a", App: "gamesvc", Index: id, Phase: phase}); err != nil {
		t.Fatal(err)
	}
	return tgID
}

func allocation(id int) registry.Allocation {
	return registry.Allocation{Namespace: "ns-a", App: "gamesvc", Instance: id, Source: registry.AllocatedByAPI, By: "alice"}
}

func TestAllocateAndRelease(t *testing.T) {
	r, st := newRegistry(t)
	mustCreate(t, r, process(3))
	tg := putInstance(t, st, 1, "Running")
	got, err := r.Allocate(ctx, allocation(1))
	if err != nil {
		t.Fatalf("Allocate: %v", err)
	}
	if got.TaskGroupID != tg || got.Since.IsZero() {
		t.Errorf("allocation %+v: want launch %q and a time", got, tg)
	}
	again, err := r.Allocate(ctx, allocation(1))
	if err != nil || !again.Since.Equal(got.Since) {
		t.Errorf("allocating again for the same caller: %+v, %v; want the allocation there", again, err)
	}
	other := allocation(1)
	other.By = "bob"
	if _, err := r.Allocate(ctx, other); !errors.Is(err, errdefs.ErrConflict) {
		t.Errorf("another caller allocating it: %v, want a conflict", err)
	}
	list, err := r.Allocations(ctx, "ns-a", "gamesvc")
	if err != nil || len(list) != 1 || list[0].Instance != 1 {
		t.Errorf("Allocations: %+v, %v; want instance 1's", list, err)
	}
	if err := r.Release(ctx, "ns-a", "gamesvc", 1); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if err := r.Release(ctx, "ns-a", "gamesvc", 1); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("releasing again: %v, want not found", err)
	}
}

func TestAllocateRefusals(t *testing.T) {
	r, st := newRegistry(t)
	mustCreate(t, r, process(4))
	for id, phase := range []string{"Running", "Running", "Pending", "Running"} {
		putInstance(t, st, id, phase)
	}
	if _, err := r.ScaleAppRemoving(ctx, "ns-a", "gamesvc", 3, []int{1}, false); err != nil {
		t.Fatal(err)
	}
	older := allocation(3)
	older.TaskGroupID = registry.TaskGroupID("ns-a", "gamesvc", "", 3, 0)
	for _, tc := range []struct {
		name string
		want registry.Allocation
	}{
		{"removed (a hole)", allocation(1)},
		{"not running", allocation(2)},
		{"an older launch", older},
		{"never there", allocation(9)},
	} {
		if _, err := r.Allocate(ctx, tc.want); !errors.Is(err, errdefs.ErrConflict) {
			t.Errorf("%s: %v, want a conflict", tc.name, err)
		}
	}
	if list, _ := r.Allocations(ctx, "", ""); len(list) != 0 {
		t.Errorf("refusals stored %d allocations", len(list))
	}
}

// A scale that removes the instance, committed between Allocate's read
// and its write, makes the allocation fail: never an allocated instance
// the application no longer wants.
func TestAllocateLosesToAScaleCommittedFirst(t *testing.T) {
	st, _ := newStore(t)
	other := registry.New(st, time.Now)
	mustCreate(t, other, process(3))
	putInstance(t, st, 2, "Running")
	r := registry.New(st, writeOnFirstCall(func() {
		if _, err := other.ScaleAppRemoving(ctx, "ns-a", "gamesvc", 2, []int{2}, false); err != nil {
			t.Errorf("interfering scale: %v", err)
		}
	}))
	if _, err := r.Allocate(ctx, allocation(2)); !errors.Is(err, errdefs.ErrConflict) {
		t.Fatalf("Allocate after the scale committed: %v, want a conflict", err)
	}
	if list, _ := r.Allocations(ctx, "ns-a", ""); len(list) != 0 {
		t.Errorf("the allocation was stored: %+v", list)
	}
}

// relaunch makes instance id of ns-a/gamesvc run its launch-th launch, as
// the scheduler does when the instance failed and was launched again.
func relaunch(t *testing.T, st *store.Store, id, launch int) string {
	t.Helper()
	key, err := registry.TaskGroupKey("ns-a", "gamesvc", id)
	if err != nil {
		t.Fatal(err)
	}
	tgID := registry.TaskGroupID("ns-a", "gamesvc", "", id, launch)
	value, err := json.Marshal(registry.TaskGroup{ID: tgID, Namespace: "ns-a", App: "gamesvc", Index: id, Phase: "Running"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Put(ctx, key, value); err != nil {
		t.Fatal(err)
	}
	return tgID
}

// An allocation names the launch its session ran on: once the instance
// was relaunched it holds nothing, so it neither blocks a new allocation
// of the instance nor its removal, and it is gone with the application.
func TestStaleAllocationsHoldNothing(t *testing.T) {
	r, st := newRegistry(t)
	mustCreate(t, r, process(4))
	for id := range 4 {
		putInstance(t, st, id, "Running")
	}
	for _, id := range []int{1, 2, 3} {
		if _, err := r.Allocate(ctx, allocation(id)); err != nil {
			t.Fatal(err)
		}
	}
	second := relaunch(t, st, 1, 2)
	relaunch(t, st, 2, 2)

	other := allocation(1)
	other.By = "bob"
	got, err := r.Allocate(ctx, other)
	if err != nil || got.TaskGroupID != second || got.By != "bob" {
		t.Fatalf("allocating the relaunched instance: %+v, %v; want bob's allocation of %s", got, err, second)
	}
	// Instance 3's allocation is live: a scale to 2 removes 2 (stale) and 0.
	app, err := r.ScaleApp(ctx, "ns-a", "gamesvc", 2, false)
	if err != nil {
		t.Fatalf("scale-down past a stale allocation: %v", err)
	}
	if want := []int{1, 3}; !slices.Equal(registry.WantedIDs(app.Instances, app.Removed), want) {
		t.Errorf("wanted after the scale-down: %v, want %v", registry.WantedIDs(app.Instances, app.Removed), want)
	}
	list, err := r.Allocations(ctx, "ns-a", "gamesvc")
	if err != nil {
		t.Fatal(err)
	}
	var held []int
	for _, a := range list {
		held = append(held, a.Instance)
	}
	if want := []int{1, 3}; !slices.Equal(held, want) {
		t.Errorf("allocations after the scale-down: %v, want %v (the stale one of 2 deleted with it)", held, want)
	}
	if _, err := r.ScaleAppRemoving(ctx, "ns-a", "gamesvc", 1, []int{3}, false); !errors.Is(err, errdefs.ErrConflict) {
		t.Errorf("removing the live allocated instance 3: %v, want a conflict", err)
	}

	for id := range 4 {
		key, _ := registry.TaskGroupKey("ns-a", "gamesvc", id)
		_ = st.Delete(ctx, key, 0)
	}
	markDeleting(t, r)
	if err := r.RemoveApp(ctx, "ns-a", "gamesvc"); err != nil {
		t.Fatal(err)
	}
	if list, err := r.Allocations(ctx, "ns-a", ""); err != nil || len(list) != 0 {
		t.Errorf("allocations after the application was removed: %+v, %v", list, err)
	}
}
