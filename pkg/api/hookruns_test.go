package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/hook"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest/manifesttest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// hooktemplate at /v1/hooktemplates; hookrun at /v1/hookruns —
// created by hand from a template (its arguments checked), read, listed
// by owner, terminated.
func TestHookTemplatesAndRuns(t *testing.T) {
	e := newEnv(t)
	tmpl := manifesttest.HookTemplate()
	e.expect(t, http.StatusCreated, "POST", "/v1/hooktemplates", tmpl, nil)
	bad := manifesttest.HookTemplate()
	bad.Metadata.Name, bad.Spec.Metrics[0].Interval = "bad", ""
	got := errorOf(t, e.call(t, "POST", "/v1/hooktemplates", bad), http.StatusBadRequest, "InvalidArgument")
	if len(got.Details) != 1 || got.Details[0] != "spec.metrics[0].interval: required when count is greater than 1 (count 2)" {
		t.Errorf("count without interval: %q", got.Details)
	}

	run := map[string]any{"kind": "hookrun", "metadata": map[string]any{"name": "by-hand", "namespace": "ns-a"},
		"spec": map[string]any{"templateName": "test", "args": []map[string]string{{"name": "PodName", "value": "pod-1"}}}}
	var created registry.HookRun
	e.expect(t, http.StatusCreated, "POST", "/v1/hookruns", run, &created)
	if created.Status.Phase != hook.Pending || created.Spec.TemplateName != "test" {
		t.Errorf("created %+v", created)
	}
	for _, tc := range []struct {
		name string
		spec map[string]any
		want string
	}{
		{"missing argument", map[string]any{"templateName": "test"}, `spec.args: hook template test needs a value for argument "PodName"`},
		{"unknown argument", map[string]any{"templateName": "test", "args": []map[string]string{{"name": "PodName", "value": "p"}, {"name": "x", "value": "1"}}},
			`spec.args[1].name: hook template test has no argument "x"`},
		{"unknown template", map[string]any{"templateName": "nope"}, "spec.templateName: hook template ns-a/nope"},
	} {
		body := map[string]any{"metadata": map[string]any{"name": "r-" + strings.ReplaceAll(tc.name, " ", "-"), "namespace": "ns-a"}, "spec": tc.spec}
		got := errorOf(t, e.call(t, "POST", "/v1/hookruns", body), http.StatusBadRequest, "InvalidArgument")
		if len(got.Details) != 1 || !strings.HasPrefix(got.Details[0], tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got.Details, tc.want)
		}
	}

	// A run the scheduler made for an application is listed by owner.
	owned := &registry.HookRun{Namespace: "ns-a", Name: "game-r2-step1-1",
		Spec: hook.RunSpec{TemplateName: "test", Owner: &hook.Owner{Kind: hook.OwnerCanaryStep, App: "game", Revision: 2}}}
	if err := e.reg.CreateHookRun(context.Background(), owned); err != nil {
		t.Fatal(err)
	}
	var list struct{ Hookruns []registry.HookRun }
	e.expect(t, http.StatusOK, "GET", "/v1/hookruns?owner=game", nil, &list)
	if len(list.Hookruns) != 1 || list.Hookruns[0].Name != "game-r2-step1-1" {
		t.Errorf("by owner: %+v", list)
	}
	e.expect(t, http.StatusOK, "GET", "/v1/hookruns?namespace=ns-a", nil, &list)
	if len(list.Hookruns) != 2 {
		t.Errorf("by namespace: %d runs", len(list.Hookruns))
	}

	var terminated registry.HookRun
	e.expect(t, http.StatusAccepted, "POST", "/v1/hookruns/ns-a/by-hand/terminate", nil, &terminated)
	if !terminated.Spec.Terminate {
		t.Errorf("terminate: %+v", terminated.Spec)
	}
	if _, err := e.reg.ModifyHookRun(context.Background(), "ns-a", "game-r2-step1-1", func(r *registry.HookRun) (bool, error) {
		r.Status.Phase = hook.Successful
		return true, nil
	}); err != nil {
		t.Fatal(err)
	}
	got = errorOf(t, e.call(t, "POST", "/v1/hookruns/ns-a/game-r2-step1-1/terminate", nil), http.StatusConflict, "Conflict")
	if !strings.Contains(got.Message, "ended Successful already") {
		t.Errorf("terminate of an ended run: %q", got.Message)
	}
	errorOf(t, e.call(t, "GET", "/v1/hookruns/ns-a/nope", nil), http.StatusNotFound, "NotFound")
}

// A hook template's conditions and jsonPath are checked by the engine's
// languages when it is stored: a typo is a 400 naming the field.
func TestHookTemplateLanguages(t *testing.T) {
	e := newEnv(t)
	tmpl := manifesttest.HookTemplate()
	tmpl.Spec.Metrics[0].SuccessCondition = "asInt(result) <"
	tmpl.Spec.Metrics[0].Provider.Web.JSONPath = "{$.age"
	got := errorOf(t, e.call(t, "POST", "/v1/hooktemplates", tmpl), http.StatusBadRequest, "InvalidArgument")
	if len(got.Details) != 2 || !strings.HasPrefix(got.Details[0], "spec.metrics[0].successCondition: ") ||
		!strings.HasPrefix(got.Details[1], "spec.metrics[0].provider.web.jsonPath: ") {
		t.Errorf("details %q", got.Details)
	}
}
