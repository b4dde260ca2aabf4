package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/api"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/rollout"
)

// A deployment is a workload at /v1/deployments (the same
// record as an application, its instances its own); an application of
// another kind is not found under the other route, with a pointer.
func TestDeploymentCRUD(t *testing.T) {
	e := newEnv(t)
	var created api.AppView
	e.expect(t, http.StatusCreated, "POST", "/v1/deployments", deployment("game", "ns-a"), &created)
	if created.Kind != manifest.KindDeployment || created.Version != 1 || created.Instances != 2 {
		t.Errorf("created %+v", created)
	}
	errorOf(t, e.call(t, "POST", "/v1/deployments", deployment("game", "ns-a")), http.StatusConflict, "AlreadyExists")
	errorOf(t, e.call(t, "POST", "/v1/apps", process("game", "ns-a")), http.StatusConflict, "AlreadyExists")
	e.expect(t, http.StatusCreated, "POST", "/v1/apps", process("proc", "ns-a"), nil)

	var list map[string][]api.AppView
	e.expect(t, http.StatusOK, "GET", "/v1/deployments", nil, &list)
	if len(list["deployments"]) != 1 || list["deployments"][0].Name != "game" {
		t.Errorf("deployments %+v", list)
	}
	e.expect(t, http.StatusOK, "GET", "/v1/apps", nil, &list)
	if len(list["apps"]) != 1 || list["apps"][0].Name != "proc" {
		t.Errorf("apps %+v", list)
	}
	got := errorOf(t, e.call(t, "GET", "/v1/apps/ns-a/game", nil), http.StatusNotFound, "NotFound")
	if !strings.Contains(got.Message, "ns-a/game is a deployment, served at /v1/deployments/ns-a/game") {
		t.Errorf("cross-route GET: %q", got.Message)
	}
	errorOf(t, e.call(t, "DELETE", "/v1/deployments/ns-a/proc", nil), http.StatusNotFound, "NotFound")

	changed := deployment("game", "ns-a")
	changed.Spec.Template.Spec.Containers[0].Image = "game:v2"
	var put api.AppView
	e.expect(t, http.StatusOK, "PUT", "/v1/deployments/ns-a/game", changed, &put)
	if put.Version != 2 {
		t.Errorf("PUT version %d", put.Version)
	}
	e.expect(t, http.StatusAccepted, "POST", "/v1/deployments/ns-a/game/scale", map[string]int{"instances": 5}, nil)
	var versions struct{ Versions []registry.AppVersion }
	e.expect(t, http.StatusOK, "GET", "/v1/deployments/ns-a/game/versions", nil, &versions)
	if len(versions.Versions) != 2 || versions.Versions[1].Cause != rollout.CauseUpdate {
		t.Errorf("versions %+v", versions)
	}
	e.expect(t, http.StatusAccepted, "DELETE", "/v1/deployments/ns-a/game", nil, nil)
	errorOf(t, e.call(t, "GET", "/v1/deployments/ns-a/game", nil), http.StatusNotFound, "NotFound")
}

// Seed 004's manifests name the strategy in updateStrategy;
// the original's omit it (RollingUpdate with defaults); a process
// deployment is accepted too.
func TestDeploymentStrategies(t *testing.T) {
	e := newEnv(t)
	bare := deployment("bare", "ns-a")
	bare.Spec.Strategy = nil
	var v api.AppView
	e.expect(t, http.StatusCreated, "POST", "/v1/deployments", bare, &v)
	if !strings.Contains(string(compact(t, v.Spec)), `"updateStrategy":{"type":"RollingUpdate"}`) {
		t.Errorf("no strategy: spec %s", v.Spec)
	}
	procs := processDeployment("procs", "ns-a")
	e.expect(t, http.StatusCreated, "POST", "/v1/deployments", procs, nil)
	both := deployment("both", "ns-a")
	both.Spec.UpdateStrategy = &manifest.UpdateStrategy{Type: manifest.UpdateInPlace}
	got := errorOf(t, e.call(t, "POST", "/v1/deployments", both), http.StatusBadRequest, "InvalidArgument")
	if len(got.Details) != 1 || !strings.HasPrefix(got.Details[0], "spec.strategy: give spec.strategy") {
		t.Errorf("both strategies: %q", got.Details)
	}
}

// processDeployment is a deployment of the process fixture's template.
func processDeployment(name, ns string) *manifest.Deployment {
	d := deployment(name, ns)
	p := process(name, ns)
	d.Spec.Template.Spec = manifest.DeploymentTemplateSpec{Processes: p.Spec.Template.Spec.Processes}
	d.Spec.Template.Metadata = manifest.TemplateMeta{}
	return d
}

// HotPatchUpdate: a PUT whose change needs a restart is a 400
// naming the fields; nothing is stored. So is one whose resources take
// more from Mesos than the running launches took (a limits.memory that
// grows, with no requests): no instance could apply it.
func TestHotPatchPutRefusesRestartingChanges(t *testing.T) {
	e := newEnv(t)
	d := deployment("hot", "ns-a")
	d.Spec.Strategy = &manifest.Strategy{Type: manifest.UpdateHotPatch}
	d.Spec.Template.Spec.Containers[0].Resources = manifest.Resources{Limits: manifest.ResourceList{CPU: "0.5", Memory: "64"}}
	e.expect(t, http.StatusCreated, "POST", "/v1/deployments", d, nil)
	d.Spec.Template.Spec.Containers[0].Resources.Limits.Memory = "128"
	got := errorOf(t, e.call(t, "PUT", "/v1/deployments/ns-a/hot", d), http.StatusBadRequest, "InvalidArgument")
	want := "spec.template.spec.containers[0].resources.limits.memory: HotPatchUpdate cannot grow what a running task took from Mesos (64 MB) to 128 MB"
	if len(got.Details) != 1 || !strings.HasPrefix(got.Details[0], want) {
		t.Errorf("details %q, want %q…", got.Details, want)
	}
	var stored api.AppView
	e.expect(t, http.StatusOK, "GET", "/v1/deployments/ns-a/hot", nil, &stored)
	if stored.Version != 1 {
		t.Errorf("after the refused PUT: version %d, want 1", stored.Version)
	}
	d.Spec.Template.Spec.Containers[0].Resources.Limits.Memory = "32"
	d.Spec.Template.Spec.Containers[0].Image = "game:v2"
	d.Spec.Template.Spec.Containers[0].Args = []string{"--v2"}
	got = errorOf(t, e.call(t, "PUT", "/v1/deployments/ns-a/hot", d), http.StatusBadRequest, "InvalidArgument")
	want = "spec.template.spec.containers[0].args: HotPatchUpdate cannot change it without a restart (use InplaceUpdate, or RollingUpdate)"
	if len(got.Details) != 1 || got.Details[0] != want {
		t.Errorf("details %q, want %q", got.Details, want)
	}
	d.Spec.Template.Spec.Containers[0].Args = deployment("hot", "ns-a").Spec.Template.Spec.Containers[0].Args
	var v api.AppView
	e.expect(t, http.StatusOK, "PUT", "/v1/deployments/ns-a/hot", d, &v)
	if v.Version != 2 {
		t.Errorf("image-only PUT: version %d", v.Version)
	}
}

// The rollout operations: each answers 202 with the application, or a 409
// that says why there is nothing to do; rollback needs a revision of the
// history; restart and rollback make new versions with their cause.
func TestRolloutOperations(t *testing.T) {
	e := newEnv(t)
	e.expect(t, http.StatusCreated, "POST", "/v1/deployments", deployment("game", "ns-a"), nil)
	base := "/v1/deployments/ns-a/game/"
	got := errorOf(t, e.call(t, "POST", base+"promote", nil), http.StatusConflict, "Conflict")
	if !strings.Contains(got.Message, "has not begun the rollout of revision 1") {
		t.Errorf("promote before the scheduler: %q", got.Message)
	}
	// The scheduler's record of a completed first rollout.
	ro := &registry.Rollout{Namespace: "ns-a", Name: "game",
		State:  rollout.State{StableVersion: 1, UpdateVersion: 1},
		Status: rollout.Status{Phase: rollout.PhaseCompleted, Message: "every instance runs revision 1"}}
	if err := e.reg.PutRollout(context.Background(), ro); err != nil {
		t.Fatal(err)
	}
	got = errorOf(t, e.call(t, "POST", base+"promote", nil), http.StatusConflict, "Conflict")
	if got.Message != "nothing to promote: the rollout of ns-a/game is Completed (every instance runs revision 1): conflict" {
		t.Errorf("promote: %q", got.Message)
	}
	got = errorOf(t, e.call(t, "POST", base+"abort", nil), http.StatusConflict, "Conflict")
	if !strings.HasPrefix(got.Message, "no rollout to abort: ns-a/game runs revision 1") {
		t.Errorf("abort: %q", got.Message)
	}
	var v api.AppView
	e.expect(t, http.StatusAccepted, "POST", base+"pause", nil, &v)
	if app, _ := e.reg.GetApp(context.Background(), "ns-a", "game"); !app.Paused {
		t.Error("pause did not pause")
	}
	e.expect(t, http.StatusAccepted, "POST", base+"resume", nil, nil)
	e.expect(t, http.StatusAccepted, "POST", base+"restart", nil, &v)
	if v.Version != 2 {
		t.Errorf("restart: version %d", v.Version)
	}
	errorOf(t, e.call(t, "POST", base+"rollback", map[string]any{}), http.StatusBadRequest, "InvalidArgument")
	errorOf(t, e.call(t, "POST", base+"rollback", map[string]any{"revision": 7}), http.StatusNotFound, "NotFound")
	errorOf(t, e.call(t, "POST", base+"rollback", map[string]any{"revision": 2}), http.StatusConflict, "Conflict")
	e.expect(t, http.StatusAccepted, "POST", base+"rollback", map[string]any{"revision": 1}, &v)
	app, err := e.reg.GetApp(context.Background(), "ns-a", "game")
	if err != nil || app.Version != 3 || app.Cause != rollout.CauseRollback || app.RolledBackTo != 1 || app.RestartGeneration != 0 {
		t.Errorf("after rollback: %+v %v", app, err)
	}

	// A rollout waiting at a pause: promote names that wait; abort names
	// the version.
	ro.State = rollout.State{StableVersion: 1, UpdateVersion: 3, Seq: 4, Wait: &rollout.Wait{Kind: rollout.WaitPause, Seq: 4, Step: 1}}
	if err := e.reg.PutRollout(context.Background(), ro); err != nil {
		t.Fatal(err)
	}
	e.expect(t, http.StatusAccepted, "POST", base+"promote", nil, nil)
	e.expect(t, http.StatusAccepted, "POST", base+"abort", nil, nil)
	app, _ = e.reg.GetApp(context.Background(), "ns-a", "game")
	if app.Promote == nil || *app.Promote != (registry.Promote{Version: 3, Seq: 4}) || app.AbortVersion != 3 {
		t.Errorf("promote %+v abort %d", app.Promote, app.AbortVersion)
	}
	errorOf(t, e.call(t, "POST", base+"nope", nil), http.StatusNotFound, "NotFound")
}
