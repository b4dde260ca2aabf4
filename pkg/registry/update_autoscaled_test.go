package registry_test

import (
	"bytes"
	"slices"
	"sync"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// A new version of a workload an autoscaler scales keeps the size and
// the holes the autoscaler gave it, paused or not, as Kubernetes keeps
// the replicas of a Deployment an HPA scales: the manifest's instance
// count is not applied, the rest of it is. Without the autoscaler, the
// manifest's count is applied again.
func TestUpdateAppKeepsAutoscaledSize(t *testing.T) {
	r, st := newRegistry(t)
	runningFleet(t, r, st, 5)
	if _, err := r.CreateAutoscaler(ctx, autoscaler("as", "gamesvc")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.ApplyScaleDecision(ctx, decision(getApp(t, r), 4, 1)); err != nil {
		t.Fatal(err)
	}
	// update applies a version of the manifest with instances whose
	// start command names build.
	update := func(instances int, build string) *registry.App {
		t.Helper()
		p := process(instances)
		p.Spec.Template.Spec.Processes[0].StartCmd = "./start.sh " + build
		app, err := r.UpdateApp(ctx, p, 0)
		if err != nil {
			t.Fatalf("UpdateApp: %v", err)
		}
		if !bytes.Contains(app.Spec, []byte("./start.sh "+build)) {
			t.Fatalf("the new version's spec was not stored: %s", app.Spec)
		}
		return app
	}
	app := update(2, "v2")
	if app.Instances != 4 || !slices.Equal(app.Removed, []int{1}) || app.Version != 2 {
		t.Errorf("update of an autoscaled workload to 2: version %d, %d instances, removed %v; want version 2, 4 and [1] kept",
			app.Version, app.Instances, app.Removed)
	}
	if _, err := r.SetAutoscalerPaused(ctx, "ns-a", "as", true); err != nil {
		t.Fatal(err)
	}
	if app := update(7, "v3"); app.Instances != 4 || !slices.Equal(app.Removed, []int{1}) {
		t.Errorf("update with the autoscaler paused: %d instances, removed %v; want 4 and [1] kept", app.Instances, app.Removed)
	}
	if err := r.DeleteAutoscaler(ctx, "ns-a", "as"); err != nil {
		t.Fatal(err)
	}
	if app := update(2, "v4"); app.Instances != 2 || !slices.Equal(registry.WantedIDs(app.Instances, app.Removed), []int{0, 2}) {
		t.Errorf("update without an autoscaler: %d instances, removed %v; want 2, the manifest's, the hole kept", app.Instances, app.Removed)
	}
}

// An update racing with the creation of an autoscaler of its workload
// keeps the size whenever it commits after the autoscaler: the write
// holds to the claim as read.
func TestUpdateAppRacesAutoscalerCreate(t *testing.T) {
	r, st := newRegistry(t)
	runningFleet(t, r, st, 4)
	for round := range 20 {
		var wg sync.WaitGroup
		var spec *registry.Object
		var updated *registry.App
		var createErr, updateErr error
		wg.Add(2)
		go func() { defer wg.Done(); spec, createErr = r.CreateAutoscaler(ctx, autoscaler("as", "gamesvc")) }()
		go func() { defer wg.Done(); updated, updateErr = r.UpdateApp(ctx, process(2), 0) }()
		wg.Wait()
		if createErr != nil || updateErr != nil {
			t.Fatalf("round %d: create %v, update %v", round, createErr, updateErr)
		}
		if updated.Revision > spec.Revision && updated.Instances != 4 {
			t.Fatalf("round %d: the update committed after the autoscaler (%d > %d) and set %d instances; want 4 kept",
				round, updated.Revision, spec.Revision, updated.Instances)
		}
		if updated.Revision < spec.Revision && updated.Instances != 2 {
			t.Fatalf("round %d: the update committed before the autoscaler and kept %d instances; want the manifest's 2", round, updated.Instances)
		}
		if err := r.DeleteAutoscaler(ctx, "ns-a", "as"); err != nil {
			t.Fatal(err)
		}
		if _, err := r.ScaleApp(ctx, "ns-a", "gamesvc", 4, false); err != nil {
			t.Fatal(err)
		}
	}
}
