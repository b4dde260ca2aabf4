package registry_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// autoscaler returns a valid autoscaler ns-a/name scaling deployment
// target between 1 and 10 on a buffer of 2.
func autoscaler(name, target string) *manifest.Autoscaler {
	return &manifest.Autoscaler{APIVersion: "v4", KindName: "autoscaler",
		Metadata: manifest.ObjectMeta{Name: name, Namespace: "ns-a"},
		Spec: manifest.AutoscalerSpec{Target: manifest.ScaleTarget{Kind: manifest.KindDeployment, Name: target}, MaxReplicas: 10,
			Metrics: []manifest.AutoscaleMetric{{Type: manifest.MetricBuffer, Buffer: &manifest.BufferMetric{BufferSize: manifest.IntOrPercent{Value: 2}}}}}}
}

// One autoscaler per workload: the target index is written in the
// autoscaler's own transaction, so a second autoscaler of the same
// workload is refused naming the first and nothing of it is stored; an
// update that moves to a taken target is refused the same way, one that
// moves to a free one releases the old; a delete releases its target.
func TestAutoscalerOnePerTarget(t *testing.T) {
	r, _ := newRegistry(t)
	first, err := r.CreateAutoscaler(ctx, autoscaler("first", "gamesvr"))
	if err != nil {
		t.Fatal(err)
	}
	if first.Revision == 0 || first.Kind != manifest.KindAutoscaler || first.CreatedAt.IsZero() {
		t.Errorf("created record %+v", first)
	}
	_, err = r.CreateAutoscaler(ctx, autoscaler("second", "gamesvr"))
	if !errors.Is(err, errdefs.ErrConflict) || !strings.Contains(err.Error(), "scaled by autoscaler ns-a/first") {
		t.Fatalf("second autoscaler of gamesvr: %v; want a conflict naming ns-a/first", err)
	}
	if _, _, err := r.GetAutoscaler(ctx, "ns-a", "second"); !errors.Is(err, errdefs.ErrNotFound) {
		t.Fatalf("refused autoscaler stored: %v", err)
	}
	if _, err := r.CreateAutoscaler(ctx, autoscaler("first", "other")); !errors.Is(err, errdefs.ErrAlreadyExists) {
		t.Fatalf("same name again: %v; want AlreadyExists", err)
	}
	if holder, err := r.AutoscalerOf(ctx, "ns-a", "other"); !errors.Is(err, errdefs.ErrNotFound) {
		t.Fatalf("refused create claimed its target for %q (%v)", holder, err)
	}

	second, err := r.CreateAutoscaler(ctx, autoscaler("second", "lobby"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.UpdateAutoscaler(ctx, autoscaler("second", "gamesvr"), second.Revision); !errors.Is(err, errdefs.ErrConflict) ||
		!strings.Contains(err.Error(), "ns-a/first") {
		t.Fatalf("moving second onto gamesvr: %v; want a conflict naming ns-a/first", err)
	}
	if _, err := r.UpdateAutoscaler(ctx, autoscaler("second", "arena"), second.Revision); err != nil {
		t.Fatalf("moving second onto a free workload: %v", err)
	}
	if _, err := r.AutoscalerOf(ctx, "ns-a", "lobby"); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("old target still claimed after the move: %v", err)
	}
	if holder, err := r.AutoscalerOf(ctx, "ns-a", "arena"); err != nil || holder != "second" {
		t.Errorf("AutoscalerOf(arena) = %q, %v; want second", holder, err)
	}
	if _, err := r.UpdateAutoscaler(ctx, autoscaler("second", "arena"), second.Revision); !errors.Is(err, errdefs.ErrConflict) {
		t.Errorf("update at a stale revision: %v; want a conflict", err)
	}

	if err := r.DeleteAutoscaler(ctx, "ns-a", "first"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.CreateAutoscaler(ctx, autoscaler("third", "gamesvr")); err != nil {
		t.Fatalf("gamesvr after its autoscaler was deleted: %v", err)
	}
	list, err := r.ListAutoscalers(ctx, "ns-a")
	if err != nil || len(list) != 2 || list[0].Name != "second" || list[1].Name != "third" {
		t.Fatalf("ListAutoscalers = %v, %v; want second, third", list, err)
	}
}

// Pause and resume are spec revisions; setting what is set writes
// nothing.
func TestAutoscalerPause(t *testing.T) {
	r, _ := newRegistry(t)
	created, err := r.CreateAutoscaler(ctx, autoscaler("as", "gamesvr"))
	if err != nil {
		t.Fatal(err)
	}
	paused, err := r.SetAutoscalerPaused(ctx, "ns-a", "as", true)
	if err != nil || paused.Revision <= created.Revision {
		t.Fatalf("pause = %v, %v; want a new revision", paused, err)
	}
	again, err := r.SetAutoscalerPaused(ctx, "ns-a", "as", true)
	if err != nil || again.Revision != paused.Revision {
		t.Fatalf("pause again = rev %d, %v; want rev %d unchanged", again.Revision, err, paused.Revision)
	}
	_, a, err := r.GetAutoscaler(ctx, "ns-a", "as")
	if err != nil || !a.Spec.Paused {
		t.Fatalf("stored %+v, %v; want paused", a, err)
	}
}

// The leader writes statuses through its fenced store, in batches; once
// deposed (its leader key gone), a status write is refused with
// ErrDeposed and writes nothing. Deleting the autoscaler deletes its
// status, and a new autoscaler of the same name starts without one.
func TestAutoscalerStatusesFenced(t *testing.T) {
	r, st := newRegistry(t)
	election, err := st.NewElection(ctx, "scheduler", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := election.Campaign(ctx, "http://leader"); err != nil {
		t.Fatal(err)
	}
	leader := r.OnStore(st.WithFence(election.Fence()))

	var statuses []*registry.AutoscalerStatus
	for _, name := range []string{"a", "b", "c"} {
		if _, err := r.CreateAutoscaler(ctx, autoscaler(name, "w-"+name)); err != nil {
			t.Fatal(err)
		}
		s := &registry.AutoscalerStatus{Namespace: "ns-a", Name: name}
		s.CurrentReplicas, s.DesiredReplicas = 2, 3
		statuses = append(statuses, s)
	}
	if err := leader.PutAutoscalerStatuses(ctx, statuses); err != nil {
		t.Fatal(err)
	}
	if statuses[0].Revision == 0 || statuses[0].Revision != statuses[2].Revision {
		t.Errorf("revisions %d, %d: want the three written in one transaction", statuses[0].Revision, statuses[2].Revision)
	}
	got, err := r.GetAutoscalerStatus(ctx, "ns-a", "b")
	if err != nil || got.DesiredReplicas != 3 || got.UpdatedAt.IsZero() {
		t.Fatalf("status of b = %+v, %v", got, err)
	}

	if err := election.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	statuses[1].DesiredReplicas = 9
	if err := leader.PutAutoscalerStatuses(ctx, statuses[1:2]); !errors.Is(err, store.ErrDeposed) {
		t.Fatalf("status write after deposal: %v; want ErrDeposed", err)
	}
	if got, err := r.GetAutoscalerStatus(ctx, "ns-a", "b"); err != nil || got.DesiredReplicas != 3 {
		t.Fatalf("status of b after the refused write = %+v, %v; want desired 3 still", got, err)
	}

	if err := r.DeleteAutoscaler(ctx, "ns-a", "b"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.GetAutoscalerStatus(ctx, "ns-a", "b"); !errors.Is(err, errdefs.ErrNotFound) {
		t.Fatalf("status after delete: %v; want NotFound", err)
	}
	list, err := r.ListAutoscalerStatuses(ctx, "ns-a")
	if err != nil || len(list) != 2 {
		t.Fatalf("ListAutoscalerStatuses = %v, %v; want a and c", list, err)
	}
	// A status written as b was deleted is not the history of a new b.
	if err := r.PutAutoscalerStatuses(ctx, statuses[1:2]); err != nil {
		t.Fatal(err)
	}
	if _, err := r.CreateAutoscaler(ctx, autoscaler("b", "w-b")); err != nil {
		t.Fatal(err)
	}
	if got, err := r.GetAutoscalerStatus(ctx, "ns-a", "b"); !errors.Is(err, errdefs.ErrNotFound) {
		t.Fatalf("new b has the old b's status %+v (%v)", got, err)
	}
}

// Autoscalers of one workload created at once: the claim is in each
// create's transaction, so exactly one is stored and every other is
// refused naming a holder.
func TestAutoscalerClaimRace(t *testing.T) {
	r, _ := newRegistry(t)
	const n = 20
	errs := make(chan error, n)
	for i := range n {
		go func() {
			_, err := r.CreateAutoscaler(ctx, autoscaler(fmt.Sprintf("as-%d", i), "gamesvr"))
			errs <- err
		}()
	}
	created := 0
	for range n {
		switch err := <-errs; {
		case err == nil:
			created++
		case !errors.Is(err, errdefs.ErrConflict) || !strings.Contains(err.Error(), "scaled by autoscaler ns-a/as-"):
			t.Errorf("refused with %v; want a conflict naming the holder", err)
		}
	}
	list, err := r.ListAutoscalers(ctx, "ns-a")
	if err != nil || created != 1 || len(list) != 1 {
		t.Fatalf("%d created, %d stored (%v); want exactly one", created, len(list), err)
	}
	if holder, err := r.AutoscalerOf(ctx, "ns-a", "gamesvr"); err != nil || holder != list[0].Name {
		t.Errorf("AutoscalerOf = %q, %v; want the stored %q", holder, err, list[0].Name)
	}
}
