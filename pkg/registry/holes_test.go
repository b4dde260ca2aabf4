package registry_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

func TestWantedIDsSkipsHoles(t *testing.T) {
	for _, tc := range []struct {
		name      string
		instances int
		removed   []int
		want      []int
	}{
		{"no holes: 0…n-1", 3, nil, []int{0, 1, 2}},
		{"none wanted", 0, nil, []int{}},
		{"holes skipped", 4, []int{1, 3}, []int{0, 2, 4, 5}},
		{"a hole at 0", 2, []int{0}, []int{1, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := registry.WantedIDs(tc.instances, tc.removed); !slices.Equal(got, tc.want) {
				t.Errorf("WantedIDs(%d, %v) = %v, want %v", tc.instances, tc.removed, got, tc.want)
			}
			if got := registry.Holes(registry.WantedIDs(tc.instances, tc.removed)); !slices.Equal(got, tc.removed) {
				t.Errorf("Holes(WantedIDs(%d, %v)) = %v: not the holes back", tc.instances, tc.removed, got)
			}
		})
	}
}

// Kruise-Game's reserveOrdinals: the chosen instances leave holes; a
// scale-up refills the lowest holes first, then appends; trailing holes
// are dropped.
func TestScaleAppRemovingLeavesHolesAScaleUpRefills(t *testing.T) {
	st, _ := newStore(t)
	r := registry.New(st, time.Now)
	mustCreate(t, r, process(6))
	steps := []struct {
		name        string
		instances   int
		removed     []int
		wantRemoved []int
		wantIDs     []int
	}{
		{"remove 1 and 3 of 6, keeping 4", 4, []int{1, 3}, []int{1, 3}, []int{0, 2, 4, 5}},
		{"remove the top one: its trailing hole goes", 3, []int{5}, []int{1, 3}, []int{0, 2, 4}},
		{"remove one and keep the count: the lowest earlier hole is refilled", 3, []int{0}, []int{0, 3}, []int{1, 2, 4}},
		{"scale up by 1 refills the lowest hole", 4, nil, []int{3}, []int{0, 1, 2, 4}},
		{"scale down removes the highest; trailing holes dropped", 3, nil, nil, []int{0, 1, 2}},
		{"remove one without holes to refill: a new ID above the top", 3, []int{1}, []int{1}, []int{0, 2, 3}},
		{"scale down keeps the hole below the top", 2, nil, []int{1}, []int{0, 2}},
		{"scale up refills, then appends", 4, nil, nil, []int{0, 1, 2, 3}},
	}
	for _, s := range steps {
		app, err := r.ScaleAppRemoving(ctx, "ns-a", "gamesvc", s.instances, s.removed, false)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if app.Instances != s.instances || !slices.Equal(app.Removed, s.wantRemoved) {
			t.Errorf("%s: instances %d removed %v, want %d and %v", s.name, app.Instances, app.Removed, s.instances, s.wantRemoved)
		}
		if got := registry.WantedIDs(app.Instances, app.Removed); !slices.Equal(got, s.wantIDs) {
			t.Errorf("%s: wanted %v, want %v", s.name, got, s.wantIDs)
		}
	}
}

func TestScaleAppRemovingRefusesAnInstanceNotWanted(t *testing.T) {
	st, _ := newStore(t)
	r := registry.New(st, time.Now)
	mustCreate(t, r, process(3))
	if _, err := r.ScaleAppRemoving(ctx, "ns-a", "gamesvc", 2, []int{1}, false); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		removed []int
		class   error
	}{
		{"a hole already", []int{1}, errdefs.ErrConflict},
		{"above the top", []int{7}, errdefs.ErrConflict},
		{"negative", []int{-1}, errdefs.ErrInvalidArgument},
		{"named twice", []int{0, 0}, errdefs.ErrInvalidArgument},
	} {
		_, err := r.ScaleAppRemoving(ctx, "ns-a", "gamesvc", 1, tc.removed, false)
		if !errors.Is(err, tc.class) {
			t.Errorf("%s: err %v, want %v", tc.name, err, tc.class)
		}
	}
	app, err := r.GetApp(ctx, "ns-a", "gamesvc")
	if err != nil {
		t.Fatal(err)
	}
	if app.Instances != 2 || !slices.Equal(app.Removed, []int{1}) {
		t.Errorf("refusals changed the record: %d instances, removed %v", app.Instances, app.Removed)
	}
}

// An update's spec.instance is reached as a scale reaches it: the holes
// stay holes when the count stays.
func TestUpdateAppKeepsHoles(t *testing.T) {
	st, _ := newStore(t)
	r := registry.New(st, time.Now)
	mustCreate(t, r, process(4))
	if _, err := r.ScaleAppRemoving(ctx, "ns-a", "gamesvc", 3, []int{1}, false); err != nil {
		t.Fatal(err)
	}
	app, err := r.UpdateApp(ctx, process(3), 0)
	if err != nil {
		t.Fatal(err)
	}
	if app.Instances != 3 || !slices.Equal(app.Removed, []int{1}) {
		t.Errorf("after an update to 3: %d instances, removed %v; want 3 and [1]", app.Instances, app.Removed)
	}
	if app, err = r.UpdateApp(ctx, process(4), 0); err != nil {
		t.Fatal(err)
	}
	if app.Instances != 4 || len(app.Removed) != 0 {
		t.Errorf("after an update to 4: %d instances, removed %v; want the hole refilled", app.Instances, app.Removed)
	}
}
