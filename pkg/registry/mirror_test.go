package registry_test

import (
	"fmt"
	"log/slog"
	"reflect"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

func putGroups(t *testing.T, r *registry.Registry, app string, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		tg := &registry.TaskGroup{ID: fmt.Sprintf("ns-a_%s_%d_1", app, i), Namespace: "ns-a", App: app, Index: i, State: "TASK_RUNNING"}
		if err := r.PutTaskGroup(ctx, tg); err != nil {
			t.Fatal(err)
		}
	}
}

// wantAllTaskGroups checks that got is what AllTaskGroups reads now,
// revisions and order included.
func wantAllTaskGroups(t *testing.T, r *registry.Registry, got []*registry.TaskGroup) {
	t.Helper()
	want, err := r.AllTaskGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Take returned %d task groups, AllTaskGroups %d, or they differ:\n got %v\nwant %v", len(got), len(want), got, want)
	}
}

// The mirror follows puts, changes and deletions through the watch: by
// the takeover it lacks nothing, and Take answers as AllTaskGroups.
func TestTaskGroupMirrorFollowsTheStore(t *testing.T) {
	r, _ := newRegistry(t)
	putGroups(t, r, "game", 0, 30)
	mirror, err := r.MirrorTaskGroups(ctx, slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	putGroups(t, r, "game", 25, 35) // 5 changed, 5 new
	for _, i := range []int{3, 7} {
		if err := r.DeleteTaskGroup(ctx, "ns-a", "game", i); err != nil {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		missing, err := mirror.Missing(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if missing == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the mirror still lacks %d task groups 10s after the writes", missing)
		}
	}
	got, err := mirror.Take(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 33 {
		t.Fatalf("Take returned %d task groups, want 33", len(got))
	}
	wantAllTaskGroups(t, r, got)
}

// A mirror whose watch stopped is corrected at the takeover: the records
// it lacks are read by key (a few) or all of them are (most).
func TestTaskGroupMirrorBehindIsCorrected(t *testing.T) {
	for _, changed := range []int{3, 30} {
		t.Run(fmt.Sprintf("%d of 40 changed", changed), func(t *testing.T) {
			r, _ := newRegistry(t)
			putGroups(t, r, "game", 0, 40)
			mirror, err := r.MirrorTaskGroups(ctx, slog.Default())
			if err != nil {
				t.Fatal(err)
			}
			mirror.StopFollowing()
			putGroups(t, r, "game", 40-changed+1, 41) // one more than before
			if err := r.DeleteTaskGroup(ctx, "ns-a", "game", 0); err != nil {
				t.Fatal(err)
			}
			if missing, err := mirror.Missing(ctx); err != nil || missing != changed {
				t.Fatalf("Missing = %d, %v; want %d", missing, err, changed)
			}
			got, err := mirror.Take(ctx)
			if err != nil {
				t.Fatal(err)
			}
			wantAllTaskGroups(t, r, got)
			putGroups(t, r, "other", 0, 1)
			if got, err = mirror.Take(ctx); err != nil { // taken: it reads the store
				t.Fatal(err)
			}
			wantAllTaskGroups(t, r, got)
		})
	}
}
