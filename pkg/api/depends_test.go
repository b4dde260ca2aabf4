package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/api"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest/manifesttest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// gameReferencing is a process application in ns-a that needs refs.
func gameReferencing(name string, refs ...manifest.DependsRef) *manifest.Process {
	p := manifesttest.Process()
	p.Metadata.Name = name
	p.Spec.Template.Spec.Processes[0].ConfigMaps, p.Spec.Template.Spec.Processes[0].Secrets = nil, nil
	p.Spec.Template.Spec.Depends = refs
	return p
}

// depends objects at /v1/depends; a reference to one that is
// not stored is refused at POST naming the field; a referenced one is
// not deleted (409 naming the users) unless force; GET shows its pods.
func TestDependsAPI(t *testing.T) {
	e := newEnv(t)
	logagent := manifesttest.Depends()
	e.expect(t, http.StatusCreated, "POST", "/v1/depends", logagent, nil)
	errorOf(t, e.call(t, "POST", "/v1/depends", logagent), http.StatusConflict, "AlreadyExists")

	// A reference to a depends object that does not exist: 400, nothing stored.
	ref := manifest.DependsRef{Name: "logagent", Policy: manifest.DependsPerNode}
	missing := manifest.DependsRef{Name: "dns", Policy: manifest.DependsPerNamespace}
	got := errorOf(t, e.call(t, "POST", "/v1/apps", gameReferencing("game-a", ref, missing)), http.StatusBadRequest, "InvalidArgument")
	if want := []string{`spec.template.spec.depends[1].name: depends "dns" not found in namespace "ns-a"`}; !reflect.DeepEqual(got.Details, want) {
		t.Errorf("details %q, want %q", got.Details, want)
	}
	errorOf(t, e.call(t, "GET", "/v1/apps/ns-a/game-a", nil), http.StatusNotFound, "NotFound")
	e.expect(t, http.StatusCreated, "POST", "/v1/apps", gameReferencing("game-a", ref), nil)
	e.expect(t, http.StatusCreated, "POST", "/v1/apps", gameReferencing("game-b", ref), nil)

	// Referenced: DELETE is refused, naming the applications.
	got = errorOf(t, e.call(t, "DELETE", "/v1/depends/ns-a/logagent", nil), http.StatusConflict, "Conflict")
	if !strings.Contains(got.Message, "referenced by ns-a/game-a, ns-a/game-b") {
		t.Errorf("message %q does not name the users", got.Message)
	}
	errorOf(t, e.call(t, "DELETE", "/v1/depends/ns-a/logagent?force=maybe", nil), http.StatusBadRequest, "InvalidArgument")

	// The scheduler's pod (written as the driver would) shows in GET.
	spec, _ := json.Marshal(logagent.Pod(manifest.ObjectMeta{Name: "logagent-host-1-0a1b2c3d", Namespace: "ns-a"}, "host-1"))
	if err := e.reg.PutDependencyPod(context.Background(), &registry.App{Namespace: "ns-a", Name: "logagent-host-1-0a1b2c3d", Spec: spec,
		DependencyPod: &registry.DependencyPod{DependsNamespace: "ns-a", DependsName: "logagent", Node: "host-1", Policy: manifest.DependsPerNode, Users: 2}}); err != nil {
		t.Fatal(err)
	}
	var v api.DependsView
	e.expect(t, http.StatusOK, "GET", "/v1/depends/ns-a/logagent", nil, &v)
	if !reflect.DeepEqual(v.Status.ReferencedBy, []string{"ns-a/game-a", "ns-a/game-b"}) || len(v.Status.Pods) != 1 {
		t.Fatalf("status %+v", v.Status)
	}
	if p := v.Status.Pods[0]; p.Name != "logagent-host-1-0a1b2c3d" || p.Node != "host-1" || p.Users != 2 || p.Policy != manifest.DependsPerNode ||
		p.State != registry.AppDeploying || p.Version != 1 {
		t.Errorf("pod %+v", p)
	}
	var list struct {
		Depends []api.DependsView `json:"depends"`
	}
	e.expect(t, http.StatusOK, "GET", "/v1/depends?namespace=ns-a", nil, &list)
	if len(list.Depends) != 1 || len(list.Depends[0].Status.Pods) != 1 {
		t.Errorf("list %+v", list)
	}

	// The pod is the scheduler's: an operator's change is refused.
	var pod api.AppView
	e.expect(t, http.StatusOK, "GET", "/v1/deployments/ns-a/logagent-host-1-0a1b2c3d", nil, &pod)
	if pod.DependencyPod == nil || pod.DependencyPod.Depends() != "ns-a/logagent" {
		t.Errorf("the pod's view: %+v", pod.DependencyPod)
	}
	for _, call := range []struct{ method, path, body string }{
		{"POST", "/v1/deployments/ns-a/logagent-host-1-0a1b2c3d/scale", `{"instances": 3}`},
		{"POST", "/v1/deployments/ns-a/logagent-host-1-0a1b2c3d/restart", "{}"},
		{"POST", "/v1/deployments/ns-a/logagent-host-1-0a1b2c3d/stop", "{}"},
		{"POST", "/v1/taskgroups/ns-a_logagent-host-1-0a1b2c3d_0_1/stop", ""},
		{"PUT", "/v1/deployments/ns-a/logagent-host-1-0a1b2c3d", string(spec)},
		{"DELETE", "/v1/deployments/ns-a/logagent-host-1-0a1b2c3d?force=true", ""},
	} {
		var body any
		if call.body != "" {
			body = call.body
		}
		got := errorOf(t, e.call(t, call.method, call.path, body), http.StatusConflict, "Conflict")
		if !strings.Contains(got.Message, "dependency pod of depends ns-a/logagent") {
			t.Errorf("%s %s: %q", call.method, call.path, got.Message)
		}
	}

	// A new spec is a PUT; a bad one is refused and changes nothing.
	bad := manifesttest.Depends()
	bad.Spec.Template.Spec.Processes[0].PidFile = ""
	got = errorOf(t, e.call(t, "PUT", "/v1/depends/ns-a/logagent", bad), http.StatusBadRequest, "InvalidArgument")
	if want := []string{"spec.template.spec.processes[0].pidFile: required"}; !reflect.DeepEqual(got.Details, want) {
		t.Errorf("details %q, want %q", got.Details, want)
	}
	v2 := manifesttest.Depends()
	v2.Spec.Template.Spec.Processes[0].StartCmd = "./logagent --v2"
	e.expect(t, http.StatusOK, "PUT", "/v1/depends/ns-a/logagent", v2, nil)
	e.expect(t, http.StatusOK, "GET", "/v1/depends/ns-a/logagent", nil, &v)
	if !strings.Contains(string(v.Spec), "--v2") {
		t.Errorf("spec after PUT: %s", v.Spec)
	}

	// force deletes it in use (the scheduler then stops its pods).
	e.expect(t, http.StatusNoContent, "DELETE", "/v1/depends/ns-a/logagent?force=true", nil, nil)
	errorOf(t, e.call(t, "GET", "/v1/depends/ns-a/logagent", nil), http.StatusNotFound, "NotFound")
	errorOf(t, e.call(t, "DELETE", "/v1/depends/ns-a/logagent", nil), http.StatusNotFound, "NotFound")
}

// An unreferenced depends object is deleted without force.
func TestDeleteUnreferencedDepends(t *testing.T) {
	e := newEnv(t)
	e.expect(t, http.StatusCreated, "POST", "/v1/depends", manifesttest.Depends(), nil)
	game := gameReferencing("game-a", manifest.DependsRef{Name: "logagent", Policy: manifest.DependsPerNode})
	e.expect(t, http.StatusCreated, "POST", "/v1/apps", game, nil)
	errorOf(t, e.call(t, "DELETE", "/v1/depends/ns-a/logagent", nil), http.StatusConflict, "Conflict")
	// The application drops the reference: the depends object may go.
	game.Spec.Template.Spec.Depends = nil
	e.expect(t, http.StatusOK, "PUT", "/v1/apps/ns-a/game-a", game, nil)
	e.expect(t, http.StatusNoContent, "DELETE", "/v1/depends/ns-a/logagent", nil, nil)
}

// Seed 002's Dependency API answers at /api/depends, the object named by
// ?name= (and ?namespace=, default defaultGroup) or, for PUT, by the body.
func TestSeedDependsRoutes(t *testing.T) {
	e := newEnv(t)
	d := manifesttest.Depends()
	d.Metadata.Namespace = manifest.DefaultNamespace
	e.expect(t, http.StatusCreated, "POST", "/api/depends", d, nil)
	var v api.DependsView
	e.expect(t, http.StatusOK, "GET", "/api/depends?name=logagent", nil, &v)
	if v.Namespace != manifest.DefaultNamespace || v.Name != "logagent" {
		t.Errorf("GET: %+v", v.ObjectView)
	}
	got := errorOf(t, e.call(t, "GET", "/api/depends", nil), http.StatusBadRequest, "InvalidArgument")
	if !reflect.DeepEqual(got.Details, []string{"name: required"}) {
		t.Errorf("without a name: %q", got.Details)
	}
	errorOf(t, e.call(t, "GET", "/api/depends?name=logagent&namespace=ns-a", nil), http.StatusNotFound, "NotFound")
	d.Spec.Template.Spec.Processes[0].StartCmd = "./logagent --v2"
	e.expect(t, http.StatusOK, "PUT", "/api/depends", d, nil)
	e.expect(t, http.StatusOK, "GET", "/v1/depends/defaultGroup/logagent", nil, &v)
	if !strings.Contains(string(v.Spec), "--v2") {
		t.Errorf("spec after PUT: %s", v.Spec)
	}
	e.expect(t, http.StatusNoContent, "DELETE", "/api/depends?name=logagent&force=false", nil, nil)
	errorOf(t, e.call(t, "GET", "/api/depends?name=logagent", nil), http.StatusNotFound, "NotFound")
}
