package registry_test

import (
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// runningFleet creates ns-a/gamesvc with n instances, all running their
// first launch.
func runningFleet(t *testing.T, r *registry.Registry, st *store.Store, n int) {
	t.Helper()
	mustCreate(t, r, process(n))
	for id := range n {
		putInstance(t, st, id, "Running")
	}
}

func getApp(t *testing.T, r *registry.Registry) *registry.App {
	t.Helper()
	app, err := r.GetApp(ctx, "ns-a", "gamesvc")
	if err != nil {
		t.Fatal(err)
	}
	return app
}

// decision is a scale of app to instances removing remove, by autoscaler
// ns-a/as.
func decision(app *registry.App, instances int, remove ...int) registry.ScaleWrite {
	s := &registry.AutoscalerStatus{Namespace: "ns-a", Name: "as"}
	s.CurrentReplicas, s.DesiredReplicas = app.Instances, instances
	return registry.ScaleWrite{App: app, Instances: instances, Remove: remove, Status: s}
}

// A scale decision writes the size, the holes and the status at one
// revision; written on a stale app, over an allocated victim or against
// a changed autoscaler spec it writes nothing and is a conflict.
func TestApplyScaleDecision(t *testing.T) {
	r, st := newRegistry(t)
	runningFleet(t, r, st, 5)
	spec, err := r.CreateAutoscaler(ctx, autoscaler("as", "gamesvc"))
	if err != nil {
		t.Fatal(err)
	}
	read := getApp(t, r)
	w := decision(read, 3, 1)
	w.Status.ObservedRevision = spec.Revision
	app, err := r.ApplyScaleDecision(ctx, w)
	if err != nil {
		t.Fatalf("ApplyScaleDecision: %v", err)
	}
	stored := getApp(t, r)
	if stored.Instances != 3 || !slices.Equal(stored.Removed, []int{1}) || stored.Revision != app.Revision {
		t.Fatalf("app after the decision: %d instances, removed %v at %d; want 3, [1] at %d", stored.Instances, stored.Removed, stored.Revision, app.Revision)
	}
	if read.Instances != 5 || read.Removed != nil {
		t.Errorf("the app read was changed: %d instances, removed %v", read.Instances, read.Removed)
	}
	status, err := r.GetAutoscalerStatus(ctx, "ns-a", "as")
	if err != nil || status.Revision != app.Revision || status.DesiredReplicas != 3 || w.Status.Revision != app.Revision {
		t.Fatalf("status %+v, %v; want desired 3 written with the app at %d", status, err, app.Revision)
	}

	if _, err := r.Allocate(ctx, allocation(2)); err != nil {
		t.Fatal(err)
	}
	paused, err := r.SetAutoscalerPaused(ctx, "ns-a", "as", true)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		w    registry.ScaleWrite
		want string
	}{
		{"on the app as read before", decision(read, 4), "expected revision"},
		{"removing an allocated instance", decision(stored, 2, 2), "ns-a/gamesvc/2 is allocated"},
		{"against the autoscaler's spec before its pause", func() registry.ScaleWrite {
			w := decision(stored, 2, 0)
			w.Status.ObservedRevision = spec.Revision
			return w
		}(), "autoscalers/ns-a/as"},
	} {
		_, err := r.ApplyScaleDecision(ctx, tc.w)
		if !errors.Is(err, errdefs.ErrConflict) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("decision %s: %v; want a conflict naming %q", tc.name, err, tc.want)
		}
	}
	if got := getApp(t, r); got.Revision != stored.Revision {
		t.Errorf("a refused decision wrote the app: %d instances, removed %v", got.Instances, got.Removed)
	}
	if got, _ := r.GetAutoscalerStatus(ctx, "ns-a", "as"); got.Revision != status.Revision {
		t.Errorf("a refused decision wrote the status: %+v", got)
	}
	w = decision(stored, 2, 0)
	w.Status.ObservedRevision = paused.Revision
	if _, err := r.ApplyScaleDecision(ctx, w); err != nil {
		t.Errorf("decision on the spec as it is: %v", err)
	}
}

// The race between an allocation and a scale-down removing its instance,
// each order: whichever commits second fails and writes nothing.
func TestAllocateAndScaleDecisionRace(t *testing.T) {
	t.Run("allocation first", func(t *testing.T) {
		r, st := newRegistry(t)
		runningFleet(t, r, st, 3)
		read := getApp(t, r)
		if _, err := r.Allocate(ctx, allocation(2)); err != nil {
			t.Fatal(err)
		}
		if _, err := r.ApplyScaleDecision(ctx, decision(read, 2)); !errors.Is(err, errdefs.ErrConflict) {
			t.Fatalf("scale-down of the instance allocated since read: %v; want a conflict", err)
		}
		if app := getApp(t, r); app.Instances != 3 {
			t.Fatalf("app at %d instances after the refused scale-down", app.Instances)
		}
	})
	t.Run("scale-down first", func(t *testing.T) {
		st, _ := newStore(t)
		other := registry.New(st, time.Now)
		runningFleet(t, other, st, 3)
		r := registry.New(st, writeOnFirstCall(func() {
			if _, err := other.ApplyScaleDecision(ctx, decision(getApp(t, other), 2)); err != nil {
				t.Errorf("interfering scale-down: %v", err)
			}
		}))
		if _, err := r.Allocate(ctx, allocation(2)); !errors.Is(err, errdefs.ErrConflict) {
			t.Fatalf("allocation of the instance scaled down since read: %v; want a conflict", err)
		}
		if list, _ := r.Allocations(ctx, "ns-a", ""); len(list) != 0 {
			t.Fatalf("the allocation was stored: %+v", list)
		}
	})
}

// Many allocations and scale-downs at once against etcd: none of the
// instances allocated is ever removed (in Removed or above the size).
func TestAllocateAndScaleDecisionConcurrently(t *testing.T) {
	const instances, workers = 60, 200
	r, st := newRegistry(t)
	runningFleet(t, r, st, instances)
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		allocated []int
		scaled    int
	)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(w)))
			if w%2 == 0 {
				a := allocation(rng.Intn(instances))
				a.By = fmt.Sprintf("player-%d", w)
				for range 20 { // a scale committed between its read and write: again
					_, err := r.Allocate(ctx, a)
					if err == nil {
						mu.Lock()
						allocated = append(allocated, a.Instance)
						mu.Unlock()
						return
					}
					if !errors.Is(err, errdefs.ErrConflict) {
						t.Errorf("Allocate: %v", err)
						return
					}
				}
				return
			}
			for range 20 {
				app := getApp(t, r)
				wanted := registry.WantedIDs(app.Instances, app.Removed)
				if len(wanted) == 0 {
					return
				}
				victim := wanted[rng.Intn(len(wanted))]
				_, err := r.ApplyScaleDecision(ctx, decision(app, len(wanted)-1, victim))
				if err == nil {
					mu.Lock()
					scaled++
					mu.Unlock()
					return
				}
				if !errors.Is(err, errdefs.ErrConflict) {
					t.Errorf("ApplyScaleDecision: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	app := getApp(t, r)
	wanted := registry.WantedIDs(app.Instances, app.Removed)
	stored, err := r.Allocations(ctx, "ns-a", "gamesvc")
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) == 0 || scaled == 0 || len(stored) != len(slices.Compact(slices.Sorted(slices.Values(allocated)))) {
		t.Fatalf("%d allocations stored, %d made (%v), %d scale-downs: want some of each and every one made stored", len(stored), len(allocated), allocated, scaled)
	}
	for _, a := range stored {
		if _, ok := slices.BinarySearch(wanted, a.Instance); !ok {
			t.Errorf("allocated instance %d removed: the app wants %v (removed %v)", a.Instance, wanted, app.Removed)
		}
	}
	if app.Instances != instances-scaled {
		t.Errorf("app at %d instances after %d scale-downs by one from %d", app.Instances, scaled, instances)
	}
}

// A decision written through the leader's fenced store after it was
// deposed is refused with ErrDeposed and writes nothing.
func TestApplyScaleDecisionFenced(t *testing.T) {
	r, st := newRegistry(t)
	runningFleet(t, r, st, 3)
	election, err := st.NewElection(ctx, "scheduler", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := election.Campaign(ctx, "http://leader"); err != nil {
		t.Fatal(err)
	}
	leader := r.OnStore(st.WithFence(election.Fence()))
	if _, err := leader.ApplyScaleDecision(ctx, decision(getApp(t, r), 4)); err != nil {
		t.Fatalf("decision of the leader: %v", err)
	}
	if err := election.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	before := getApp(t, r)
	if _, err := leader.ApplyScaleDecision(ctx, decision(before, 1)); !errors.Is(err, store.ErrDeposed) {
		t.Fatalf("decision after deposal: %v; want ErrDeposed", err)
	}
	if app := getApp(t, r); app.Revision != before.Revision || app.Instances != 4 {
		t.Fatalf("app after the refused decision: %d instances; want 4 unchanged", app.Instances)
	}
	if s, err := r.GetAutoscalerStatus(ctx, "ns-a", "as"); err != nil || s.DesiredReplicas != 4 {
		t.Fatalf("status after the refused decision: %+v, %v; want the leader's desired 4", s, err)
	}
}

// A manual scale of a workload an autoscaler scales is refused naming it
// until the autoscaler is paused.
func TestManualScaleOfAutoscaledWorkload(t *testing.T) {
	r, st := newRegistry(t)
	runningFleet(t, r, st, 3)
	if _, err := r.CreateAutoscaler(ctx, autoscaler("as", "gamesvc")); err != nil {
		t.Fatal(err)
	}
	_, err := r.ScaleApp(ctx, "ns-a", "gamesvc", 5, false)
	if !errors.Is(err, errdefs.ErrConflict) || !strings.Contains(err.Error(), "scaled by autoscaler ns-a/as; pause it or delete it first") {
		t.Fatalf("manual scale of an autoscaled workload: %v; want a conflict naming ns-a/as", err)
	}
	if _, err := r.ScaleAppRemoving(ctx, "ns-a", "gamesvc", 2, []int{0}, false); !errors.Is(err, errdefs.ErrConflict) {
		t.Fatalf("manual removal on an autoscaled workload: %v; want a conflict", err)
	}
	if app := getApp(t, r); app.Instances != 3 {
		t.Fatalf("a refused scale wrote %d instances", app.Instances)
	}
	if _, err := r.SetAutoscalerPaused(ctx, "ns-a", "as", true); err != nil {
		t.Fatal(err)
	}
	if app, err := r.ScaleApp(ctx, "ns-a", "gamesvc", 5, false); err != nil || app.Instances != 5 {
		t.Fatalf("manual scale with the autoscaler paused: %v", err)
	}
}

// A manual scale-down removes instances not running first, then the
// highest IDs, never an allocated one: named, it is refused; when too
// few others are left, the scale is refused saying how many are
// allocated.
func TestManualScaleDownKeepsAllocated(t *testing.T) {
	r, st := newRegistry(t)
	mustCreate(t, r, process(5))
	for id, phase := range []string{"Running", "Running", "Pending", "Running", "Running"} {
		putInstance(t, st, id, phase)
	}
	if _, err := r.Allocate(ctx, allocation(4)); err != nil {
		t.Fatal(err)
	}
	app, err := r.ScaleApp(ctx, "ns-a", "gamesvc", 3, false)
	if err != nil {
		t.Fatalf("ScaleApp to 3: %v", err)
	}
	if got := registry.WantedIDs(app.Instances, app.Removed); !slices.Equal(got, []int{0, 1, 4}) {
		t.Fatalf("wanted after the scale-down %v (removed %v); want 0 1 4: the pending 2, then the highest not allocated", got, app.Removed)
	}
	if _, err := r.ScaleAppRemoving(ctx, "ns-a", "gamesvc", 2, []int{4}, false); !errors.Is(err, errdefs.ErrConflict) ||
		!strings.Contains(err.Error(), "instance ns-a/gamesvc/4 is allocated") {
		t.Fatalf("removing the allocated instance by name: %v; want a conflict naming it", err)
	}
	_, err = r.ScaleApp(ctx, "ns-a", "gamesvc", 0, false)
	if !errors.Is(err, errdefs.ErrConflict) || !strings.Contains(err.Error(), "1 of its 3 are allocated") {
		t.Fatalf("scale to 0 with one allocated: %v; want a conflict counting it", err)
	}
	if got := getApp(t, r); got.Revision != app.Revision {
		t.Fatalf("a refused scale wrote the app: %d instances", got.Instances)
	}
	if app, err := r.ScaleApp(ctx, "ns-a", "gamesvc", 1, false); err != nil || !slices.Equal(registry.WantedIDs(app.Instances, app.Removed), []int{4}) {
		t.Fatalf("scale to 1 with one allocated: %v; want only the allocated 4 left", err)
	}
}

// A scale-down removes any number of instances in one write: it checks
// the application's allocation epoch once, not each instance it removes
// (etcd allows 128 operations in a transaction); it still never removes
// an allocated instance, even one allocated after the decision was made.
func TestLargeScaleDownChecksAllocationsOnce(t *testing.T) {
	r, st := newRegistry(t)
	runningFleet(t, r, st, 300)
	if _, err := r.Allocate(ctx, allocation(7)); err != nil {
		t.Fatal(err)
	}
	app, err := r.ScaleApp(ctx, "ns-a", "gamesvc", 2, false)
	if err != nil {
		t.Fatalf("scale-down of 298 instances: %v", err)
	}
	if wanted := registry.WantedIDs(app.Instances, app.Removed); !slices.Contains(wanted, 7) || len(wanted) != 2 {
		t.Errorf("wanted after the scale-down: %v, want 2 with the allocated 7", wanted)
	}

	read := getApp(t, r)
	if _, err := r.Allocate(ctx, allocation(0)); err != nil {
		t.Fatal(err)
	}
	w := decision(read, 1)
	w.Remove = []int{0}
	if _, err := r.ApplyScaleDecision(ctx, w); !errors.Is(err, errdefs.ErrConflict) {
		t.Errorf("scale-down of an instance allocated since read: %v, want a conflict", err)
	}
}
