package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/api"
	"github.com/bcs-mesos/bcs-mesos/pkg/apiv1"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// bufferAutoscaler returns a valid autoscaler ns/name keeping a buffer of
// 2 on deployment target.
func bufferAutoscaler(name, ns, target string, change ...func(*manifest.Autoscaler)) *manifest.Autoscaler {
	a := &manifest.Autoscaler{APIVersion: "v4", KindName: "autoscaler",
		Metadata: manifest.ObjectMeta{Name: name, Namespace: ns},
		Spec: manifest.AutoscalerSpec{Target: manifest.ScaleTarget{Kind: manifest.KindDeployment, Name: target}, MaxReplicas: 10,
			Metrics: []manifest.AutoscaleMetric{{Type: manifest.MetricBuffer, Buffer: &manifest.BufferMetric{BufferSize: manifest.IntOrPercent{Value: 2}}}}}}
	for _, f := range change {
		f(a)
	}
	return a
}

// withWebMetric adds a web metric "queue" whose call carries a token.
func withWebMetric(jsonPath string) func(*manifest.Autoscaler) {
	return func(a *manifest.Autoscaler) {
		target := 100.0
		a.Spec.Metrics = append(a.Spec.Metrics, manifest.AutoscaleMetric{Type: manifest.MetricWeb, Name: "queue", TargetValue: &target,
			Web: &manifest.WebProvider{URL: "http://matchmaker.ns-a:8080/queue", JSONPath: jsonPath,
				Headers: []manifest.HookHeader{{Key: "Authorization", Value: "Bearer s3cr3t-token"}}}})
	}
}

// An autoscaler's life through the API: created (201), shown with the
// status the leader writes, listed, replaced, paused and resumed (each a
// new revision), deleted with its status; a second autoscaler of the
// same workload is a 409 naming the first and stores nothing.
func TestAutoscalerCRUD(t *testing.T) {
	e := newEnv(t)
	var created apiv1.AutoscalerView
	e.expect(t, http.StatusCreated, "POST", "/v1/autoscalers", bufferAutoscaler("game", "ns-a", "gamesvr"), &created)
	if created.Revision == 0 || created.Spec.Spec.Target.Name != "gamesvr" || created.Status != nil {
		t.Fatalf("created %+v; want a revision, the spec and no status yet", created)
	}
	r := e.call(t, "POST", "/v1/autoscalers", bufferAutoscaler("other", "ns-a", "gamesvr"))
	if got := errorOf(t, r, http.StatusConflict, "Conflict"); !strings.Contains(got.Message, "scaled by autoscaler ns-a/game") {
		t.Errorf("second autoscaler of gamesvr: %q; want it to name ns-a/game", got.Message)
	}
	e.expect(t, http.StatusNotFound, "GET", "/v1/autoscalers/ns-a/other", nil, nil)

	// The leader's decision shows in GET, the list and the event stream.
	stream := e.subscribe(t, "?type=autoscalerstatus")
	status := &registry.AutoscalerStatus{Namespace: "ns-a", Name: "game"}
	status.CurrentReplicas, status.DesiredReplicas, status.Message = 3, 5, "buffer below 2"
	if err := e.reg.PutAutoscalerStatuses(context.Background(), []*registry.AutoscalerStatus{status}); err != nil {
		t.Fatal(err)
	}
	if ev := stream.change(); ev.Namespace != "ns-a" || ev.Name != "game" || !strings.Contains(string(ev.Object), `"desiredReplicas":5`) {
		t.Errorf("status event %v %s; want game's status", ev, ev.Object)
	}
	var got apiv1.AutoscalerView
	e.expect(t, http.StatusOK, "GET", "/v1/autoscalers/ns-a/game", nil, &got)
	if got.Status == nil || got.Status.DesiredReplicas != 5 || got.Status.Message != "buffer below 2" {
		t.Fatalf("GET status %+v; want the leader's", got.Status)
	}
	var list struct{ Autoscalers []apiv1.AutoscalerView }
	e.expect(t, http.StatusOK, "GET", "/v1/autoscalers?namespace=ns-a", nil, &list)
	if len(list.Autoscalers) != 1 || list.Autoscalers[0].Status == nil || list.Autoscalers[0].Status.CurrentReplicas != 3 {
		t.Fatalf("list %+v; want game with its status", list.Autoscalers)
	}

	var updated apiv1.AutoscalerView
	e.expect(t, http.StatusOK, "PUT", "/v1/autoscalers/ns-a/game", bufferAutoscaler("game", "ns-a", "gamesvr", func(a *manifest.Autoscaler) { a.Spec.MaxReplicas = 20 }), &updated)
	if updated.Revision <= created.Revision || updated.Spec.Spec.MaxReplicas != 20 || updated.Status == nil {
		t.Fatalf("updated %+v; want a new revision with max 20 and its status", updated)
	}
	var paused, resumed apiv1.AutoscalerView
	e.expect(t, http.StatusOK, "POST", "/v1/autoscalers/ns-a/game/pause", nil, &paused)
	e.expect(t, http.StatusOK, "POST", "/v1/autoscalers/ns-a/game/resume", nil, &resumed)
	if !paused.Spec.Spec.Paused || paused.Revision <= updated.Revision || resumed.Spec.Spec.Paused || resumed.Revision <= paused.Revision {
		t.Fatalf("paused %v rev %d, resumed %v rev %d; want each a new revision", paused.Spec.Spec.Paused, paused.Revision, resumed.Spec.Spec.Paused, resumed.Revision)
	}

	e.expect(t, http.StatusNoContent, "DELETE", "/v1/autoscalers/ns-a/game", nil, nil)
	e.expect(t, http.StatusNotFound, "GET", "/v1/autoscalers/ns-a/game", nil, nil)
	e.expect(t, http.StatusNotFound, "POST", "/v1/autoscalers/ns-a/game/pause", nil, nil)
	e.expect(t, http.StatusCreated, "POST", "/v1/autoscalers", bufferAutoscaler("other", "ns-a", "gamesvr"), nil)
}

// Bad autoscalers are a 400 naming the field and store nothing: manifest
// validation, autoscale.Check's languages, a target stored as a
// daemonset or as another kind than the autoscaler says.
func TestAutoscalerValidation(t *testing.T) {
	e := newEnv(t)
	e.expect(t, http.StatusCreated, "POST", "/v1/daemonsets", daemonset("agentd", "ns-a"), nil)
	e.expect(t, http.StatusCreated, "POST", "/v1/apps", process("lobby", "ns-a"), nil)
	for _, tc := range []struct {
		name string
		a    *manifest.Autoscaler
		want string
	}{
		{"bounds", bufferAutoscaler("bad", "ns-a", "gamesvr", func(a *manifest.Autoscaler) { one := 11; a.Spec.MinReplicas = &one }), "spec.minReplicas"},
		{"daemonset kind", bufferAutoscaler("bad", "ns-a", "agentd", func(a *manifest.Autoscaler) { a.Spec.Target.Kind = manifest.KindDaemonset }), "spec.target.kind"},
		{"stored daemonset", bufferAutoscaler("bad", "ns-a", "agentd"), `spec.target.kind: ns-a/agentd is a daemonset`},
		{"stored as another kind", bufferAutoscaler("bad", "ns-a", "lobby"), `spec.target.kind: ns-a/lobby is a process, not a deployment`},
		{"jsonPath", bufferAutoscaler("bad", "ns-a", "gamesvr", withWebMetric("{$.waiting")), "spec.metrics[1].web.jsonPath"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, dryRun := range []string{"", "?dryRun=true"} {
				got := errorOf(t, e.call(t, "POST", "/v1/autoscalers"+dryRun, tc.a), http.StatusBadRequest, "InvalidArgument")
				if !strings.Contains(strings.Join(got.Details, "\n"), tc.want) {
					t.Errorf("POST%s details %q; want %q", dryRun, got.Details, tc.want)
				}
			}
			e.expect(t, http.StatusNotFound, "GET", "/v1/autoscalers/ns-a/bad", nil, nil)
		})
	}
}

// fakeAutoscalePlanner answers every dry run with the same decision.
type fakeAutoscalePlanner struct{ desired int }

func (f fakeAutoscalePlanner) PlanAutoscaler(_ context.Context, a *manifest.Autoscaler) (*manifest.AutoscalerStatus, error) {
	return &manifest.AutoscalerStatus{DesiredReplicas: f.desired, Message: "planned " + a.Metadata.Name}, nil
}

// A dry run (?dryRun=true, POST /v1/plan) answers 200 with the
// autoscaler and the planner's decision, stores nothing, and refuses as
// the real write would (a taken target).
func TestAutoscalerDryRun(t *testing.T) {
	e := newEnv(t, func(c *api.Config) { c.AutoscalePlanner = fakeAutoscalePlanner{desired: 7} })
	var plan apiv1.AutoscalerView
	e.expect(t, http.StatusOK, "POST", "/v1/autoscalers?dryRun=true", bufferAutoscaler("game", "ns-a", "gamesvr"), &plan)
	if plan.Revision != 0 || plan.Status == nil || plan.Status.DesiredReplicas != 7 || plan.Status.Message != "planned game" {
		t.Fatalf("dry run %+v; want revision 0 and the planner's status", plan)
	}
	e.expect(t, http.StatusNotFound, "GET", "/v1/autoscalers/ns-a/game", nil, nil)
	e.expect(t, http.StatusOK, "POST", "/v1/plan", bufferAutoscaler("game", "ns-a", "gamesvr"), &plan)
	if plan.Status == nil || plan.Status.DesiredReplicas != 7 {
		t.Fatalf("POST /v1/plan %+v; want the planner's status", plan)
	}
	e.expect(t, http.StatusCreated, "POST", "/v1/autoscalers", bufferAutoscaler("game", "ns-a", "gamesvr"), nil)
	errorOf(t, e.call(t, "POST", "/v1/autoscalers?dryRun=true", bufferAutoscaler("second", "ns-a", "gamesvr")), http.StatusConflict, "Conflict")
	errorOf(t, e.call(t, "POST", "/v1/plan", bufferAutoscaler("second", "ns-a", "gamesvr")), http.StatusConflict, "Conflict")
	e.expect(t, http.StatusOK, "PUT", "/v1/autoscalers/ns-a/game?dryRun=true", bufferAutoscaler("game", "ns-a", "gamesvr", func(a *manifest.Autoscaler) { a.Spec.MaxReplicas = 30 }), nil)
	var stored apiv1.AutoscalerView
	e.expect(t, http.StatusOK, "GET", "/v1/autoscalers/ns-a/game", nil, &stored)
	if stored.Spec.Spec.MaxReplicas != 10 {
		t.Errorf("PUT ?dryRun=true stored max %d", stored.Spec.Spec.MaxReplicas)
	}
}

// A tenant's reach is its namespace: an operator of demo and staging
// writes autoscalers there, and neither reads, writes, pauses nor
// deletes prod's, nor lists every namespace's.
func TestAutoscalerNamespaceAuthorization(t *testing.T) {
	e, _ := newAuthEnv(t, 0)
	e.expectAs(t, adminToken, http.StatusCreated, "POST", "/v1/autoscalers", bufferAutoscaler("game", "prod", "gamesvr"), nil)
	e.expectAs(t, operatorToken, http.StatusCreated, "POST", "/v1/autoscalers", bufferAutoscaler("game", "demo", "gamesvr"), nil)
	for _, tc := range []struct {
		method, path string
		body         any
		denied       string
	}{
		{"GET", "/v1/autoscalers/prod/game", nil, `may not read namespace "prod"`},
		{"GET", "/v1/autoscalers", nil, "reads only its namespaces"},
		{"POST", "/v1/autoscalers", bufferAutoscaler("mine", "prod", "other"), `may not write namespace "prod"`},
		{"PUT", "/v1/autoscalers/prod/game", bufferAutoscaler("game", "prod", "gamesvr"), `may not write namespace "prod"`},
		{"POST", "/v1/autoscalers/prod/game/pause", nil, `may not write namespace "prod"`},
		{"DELETE", "/v1/autoscalers/prod/game", nil, `may not write namespace "prod"`},
	} {
		got := errorOf(t, e.call(t, tc.method, tc.path, tc.body, bearer(operatorToken)...), http.StatusForbidden, "Forbidden")
		if !strings.Contains(got.Message, tc.denied) {
			t.Errorf("%s %s: %q; want %q", tc.method, tc.path, got.Message, tc.denied)
		}
	}
	var prod apiv1.AutoscalerView
	e.expectAs(t, adminToken, http.StatusOK, "GET", "/v1/autoscalers/prod/game", nil, &prod)
	if prod.Spec.Spec.Paused || prod.Spec.Spec.MaxReplicas != 10 {
		t.Errorf("prod's autoscaler changed by the refused writes: %+v", prod.Spec.Spec)
	}
	var list struct{ Autoscalers []apiv1.AutoscalerView }
	e.expectAs(t, operatorToken, http.StatusOK, "GET", "/v1/autoscalers?namespace=demo", nil, &list)
	if len(list.Autoscalers) != 1 || list.Autoscalers[0].Namespace != "demo" {
		t.Errorf("operator's list %+v; want demo's only", list.Autoscalers)
	}
}

// A web metric's headers are credentials: never shown by GET, the list
// or the event stream, and not in the audit log; sent back redacted, the
// stored ones are kept.
func TestAutoscalerCredentialsNeverShown(t *testing.T) {
	e, logs := newAuthEnv(t, 0, func(c *api.Config) {})
	stream := e.subscribe(t, "?type=autoscaler", bearer(adminToken)...)
	a := bufferAutoscaler("game", "ns-a", "gamesvr", withWebMetric("{$.waiting}"))
	r := e.call(t, "POST", "/v1/autoscalers", a, bearer(adminToken)...)
	if r.status != http.StatusCreated {
		t.Fatalf("create = %d %s", r.status, r.body)
	}
	shown := []string{string(r.body)}
	for _, path := range []string{"/v1/autoscalers/ns-a/game", "/v1/autoscalers?namespace=ns-a", "/v1/audit"} {
		shown = append(shown, string(e.call(t, "GET", path, nil, bearer(adminToken)...).body))
	}
	event := stream.change()
	shown = append(shown, string(event.Object), logs.String())
	for i, s := range shown {
		if strings.Contains(s, "s3cr3t") {
			t.Errorf("shown %d holds the header's token: %s", i, s)
		}
	}
	if !strings.Contains(string(event.Object), manifest.Redacted) || !strings.Contains(shown[1], manifest.Redacted) {
		t.Errorf("GET or the event does not show the header redacted: %s / %s", shown[1], event.Object)
	}

	// Sent back as shown, with a change, the token stays.
	var got apiv1.AutoscalerView
	e.expectAs(t, adminToken, http.StatusOK, "GET", "/v1/autoscalers/ns-a/game", nil, &got)
	got.Spec.Spec.MaxReplicas = 12
	e.expectAs(t, adminToken, http.StatusOK, "PUT", "/v1/autoscalers/ns-a/game", got.Spec, nil)
	_, stored, err := e.reg.GetAutoscaler(context.Background(), "ns-a", "game")
	if err != nil || stored.Spec.MaxReplicas != 12 || stored.Spec.Metrics[1].Web.Headers[0].Value != "Bearer s3cr3t-token" {
		t.Fatalf("stored after the PUT: %+v, %v; want max 12 and the token kept", stored, err)
	}
	_ = time.Second
}
