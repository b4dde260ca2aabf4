package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/apiv1"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// runningInstances stores instances 0…n-1 of ns/app running their first
// launch, as the scheduler does.
func runningInstances(t *testing.T, e *env, ns, app string, n int) {
	t.Helper()
	if _, err := e.reg.ScaleApp(context.Background(), ns, app, n, false); err != nil {
		t.Fatal(err)
	}
	for id := range n {
		tg := taskGroup(ns, app, id, "TASK_RUNNING")
		tg.Phase = "Running"
		if _, err := e.store.Apply(context.Background(), taskGroupOp(t, tg)); err != nil {
			t.Fatal(err)
		}
	}
}

// An instance allocated through the API by its caller: shown on the
// instance, kept by a manual scale-down, refused to another caller and
// for an instance not wanted, released once; a co-tenant of another
// namespace may not allocate there.
func TestAllocateInstanceAPI(t *testing.T) {
	e, _ := newAuthEnv(t, 0)
	e.expectAs(t, adminToken, http.StatusCreated, "POST", "/v1/apps", process("game", "demo"), nil)
	e.expectAs(t, adminToken, http.StatusCreated, "POST", "/v1/apps", process("game", "prod"), nil)
	runningInstances(t, e, "demo", "game", 3)
	runningInstances(t, e, "prod", "game", 3)
	base := "/v1/apps/demo/game/instances/"

	var got apiv1.AllocationView
	for range 2 { // the same caller again gets the same allocation
		e.expectAs(t, operatorToken, http.StatusOK, "POST", base+"1/allocate", apiv1.AllocateRequest{Note: "match 7"}, &got)
		if got.Source != "api" || got.By != "ci" || got.Note != "match 7" || got.Since.IsZero() {
			t.Fatalf("allocation %+v; want by ci through the API with its note", got)
		}
	}
	for _, tc := range []struct {
		path, token string
		status      int
		want        string
	}{
		{base + "1/allocate", adminToken, http.StatusConflict, "allocated already (api by"},
		{base + "7/allocate", operatorToken, http.StatusConflict, "not one of the 3 it wants"},
		{base + "x/allocate", operatorToken, http.StatusBadRequest, "id"},
		{base + "0/release", operatorToken, http.StatusNotFound, "not allocated"},
		{"/v1/apps/prod/game/instances/0/allocate", operatorToken, http.StatusForbidden, "may not write namespace"},
		{"/v1/deployments/demo/game/instances/0/allocate", operatorToken, http.StatusNotFound, "served at /v1/apps/demo/game"},
	} {
		r := e.call(t, "POST", tc.path, nil, bearer(tc.token)...)
		if r.status != tc.status || !strings.Contains(string(r.body), tc.want) {
			t.Errorf("POST %s = %d %s; want %d naming %q", tc.path, r.status, r.body, tc.status, tc.want)
		}
	}
	if list, _ := e.reg.Allocations(context.Background(), "prod", ""); len(list) != 0 {
		t.Fatalf("the co-tenant's allocation was stored: %+v", list)
	}

	// The instances list and the workload's GET (bcsctl get instances
	// reads it) show it alike.
	var page struct{ Instances []apiv1.InstanceView }
	e.expectAs(t, operatorToken, http.StatusOK, "GET", "/v1/apps/demo/game/instances", nil, &page)
	var whole apiv1.AppView
	e.expectAs(t, operatorToken, http.StatusOK, "GET", "/v1/apps/demo/game", nil, &whole)
	for _, v := range append(page.Instances, whole.Status.Instances...) {
		if (v.Allocated != nil) != (v.ID == 1) || v.Allocated != nil && v.Allocated.By != "ci" {
			t.Errorf("instance %d allocated %+v; want only 1, by ci", v.ID, v.Allocated)
		}
	}
	if len(page.Instances) != 3 || len(whole.Status.Instances) != 3 {
		t.Errorf("%d instances listed, %d in GET; want 3", len(page.Instances), len(whole.Status.Instances))
	}

	one := 1
	e.expectAs(t, operatorToken, http.StatusAccepted, "POST", "/v1/apps/demo/game/scale", apiv1.ScaleRequest{Instances: &one}, nil)
	app, err := e.reg.GetApp(context.Background(), "demo", "game")
	if err != nil || !slices.Equal(registry.WantedIDs(app.Instances, app.Removed), []int{1}) {
		t.Fatalf("scale to 1 kept %v (%v); want the allocated 1", registry.WantedIDs(app.Instances, app.Removed), err)
	}

	e.expectAs(t, operatorToken, http.StatusOK, "POST", base+"1/release", nil, &got)
	if r := e.call(t, "POST", base+"1/release", nil, bearer(operatorToken)...); r.status != http.StatusNotFound {
		t.Errorf("releasing again = %d %s; want 404", r.status, r.body)
	}
}

// Allocations stream as events of their own, named as their instance and
// showing what the instance shows, to the readers of their namespace
// only: an operator of demo follows demo's allocation and release, never
// prod's, which the admin's stream shows.
func TestAllocationEvents(t *testing.T) {
	e, _ := newAuthEnv(t, 0)
	e.expectAs(t, adminToken, http.StatusCreated, "POST", "/v1/apps", process("game", "demo"), nil)
	e.expectAs(t, adminToken, http.StatusCreated, "POST", "/v1/apps", process("game", "prod"), nil)
	runningInstances(t, e, "demo", "game", 2)
	runningInstances(t, e, "prod", "game", 2)
	operator := e.subscribe(t, "?type=allocation", bearer(operatorToken)...)
	admin := e.subscribe(t, "?type=allocation", bearer(adminToken)...)
	start := time.Now()

	e.expectAs(t, adminToken, http.StatusOK, "POST", "/v1/apps/prod/game/instances/0/allocate", nil, nil)
	e.expectAs(t, operatorToken, http.StatusOK, "POST", "/v1/apps/demo/game/instances/1/allocate", apiv1.AllocateRequest{Note: "match 7"}, nil)
	e.expectAs(t, operatorToken, http.StatusOK, "POST", "/v1/apps/demo/game/instances/1/release", nil, nil)

	released := func(c streamed) bool { return c.Action == "delete" && c.Namespace == "demo" }
	got := operator.until(released)
	if d := describeAll(got); !slices.Equal(d, []string{"allocation put demo/game/1", "allocation delete demo/game/1"}) {
		t.Fatalf("operator's events %q; want demo's allocation and release only", d)
	}
	var shown apiv1.AllocationView
	if err := json.Unmarshal(got[0].Object, &shown); err != nil || shown.Source != "api" || shown.By != "ci" || shown.Note != "match 7" ||
		shown.TaskGroupID != taskGroup("demo", "game", 1, "").ID {
		t.Errorf("allocation object %s (%v); want the instance's allocation by ci", got[0].Object, err)
	}
	showsNoSecretAndItsWriteTime(t, got, start)
	if d := describeAll(admin.until(released)); !slices.Equal(d, []string{"allocation put prod/game/0", "allocation put demo/game/1", "allocation delete demo/game/1"}) {
		t.Errorf("admin's events %q; want every namespace's", d)
	}
}
