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

// An agent is the cluster's, its instances their namespaces': an
// operator of demo sees demo's instances on an agent named and the
// others counted — in the agent's used resources, its instance count and
// its drain's remaining — never their application or task group ID;
// the read-only caller and the admin see every one named.
func TestAgentsNameOnlyReadableInstances(t *testing.T) {
	e, _ := newAuthEnv(t, 0)
	if err := e.reg.RecordAgent(context.Background(), "agent-1", "host-1", "", nil); err != nil {
		t.Fatal(err)
	}
	for _, tg := range []registry.TaskGroup{
		{ID: "demo.game.0.1", Namespace: "demo", App: "game", Phase: "Running", Host: "host-1", Tasks: []registry.TaskRecord{{CPUs: 1, MemMB: 64}}},
		{ID: "secret-team.hidden-app.0.1", Namespace: "secret-team", App: "hidden-app", Phase: "Running", Host: "host-1",
			Tasks: []registry.TaskRecord{{CPUs: 2, MemMB: 128}}},
	} {
		putTaskGroup(t, e, tg)
	}
	e.expectAs(t, adminToken, http.StatusOK, "POST", "/v1/agents/host-1/drain", nil, nil)
	type view struct {
		Used      struct{ CPUs, MemMB float64 }
		Instances []struct{ App, TaskGroupID string }
		Others    int
		Drain     *struct{ Remaining int }
	}
	for _, tc := range []struct {
		token  string
		named  []string
		others int
	}{
		{operatorToken, []string{"demo/game"}, 1},
		{readerToken, []string{"demo/game", "secret-team/hidden-app"}, 0},
		{adminToken, []string{"demo/game", "secret-team/hidden-app"}, 0},
	} {
		var list struct{ Agents []view }
		e.expectAs(t, tc.token, http.StatusOK, "GET", "/v1/agents", nil, &list)
		r := e.call(t, "GET", "/v1/agents/host-1", nil, bearer(tc.token)...)
		var one view
		if err := json.Unmarshal(r.body, &one); r.status != http.StatusOK || err != nil {
			t.Fatalf("GET /v1/agents/host-1: %d %s", r.status, r.body)
		}
		if len(list.Agents) != 1 || !reflect.DeepEqual(list.Agents[0], one) {
			t.Fatalf("list %+v, one %+v: want the same one agent", list.Agents, one)
		}
		var named []string
		for _, i := range one.Instances {
			named = append(named, i.App)
		}
		if !reflect.DeepEqual(named, tc.named) || one.Others != tc.others || one.Used.CPUs != 3 || one.Used.MemMB != 192 ||
			one.Drain == nil || one.Drain.Remaining != 2 {
			t.Errorf("%s sees %+v; want %q named, %d others, every instance's 3 cpus, 192 MB and 2 to move", tc.token, one, tc.named, tc.others)
		}
		if tc.token == operatorToken && (strings.Contains(string(r.body), "secret-team") || strings.Contains(string(r.body), "hidden-app")) {
			t.Errorf("the operator of demo reads another namespace's instance: %s", r.body)
		}
		if strings.Contains(string(r.body), "instanceCount") {
			t.Errorf("GET /v1/agents/host-1 without ?summary= counts its instances: %s", r.body)
		}
		checkAgentSummary(t, e, tc.token, len(tc.named), tc.others)
	}
}

// checkAgentSummary checks that ?summary=true, in the list and of the
// agent, shows host-1 as GET does but its instances counted, not named.
func checkAgentSummary(t *testing.T, e *env, token string, named, others int) {
	t.Helper()
	type summary struct {
		Used          struct{ CPUs, MemMB float64 }
		Instances     json.RawMessage // absent
		InstanceCount int
		Others        int
	}
	var list struct{ Agents []summary }
	e.expectAs(t, token, http.StatusOK, "GET", "/v1/agents?summary=true&limit=1", nil, &list)
	var one summary
	e.expectAs(t, token, http.StatusOK, "GET", "/v1/agents/host-1?summary=true", nil, &one)
	if len(list.Agents) != 1 || !reflect.DeepEqual(list.Agents[0], one) {
		t.Fatalf("summary list %+v, one %+v: want the same one agent", list.Agents, one)
	}
	if one.Instances != nil || one.InstanceCount != named || one.Others != others || one.Used.CPUs != 3 || one.Used.MemMB != 192 {
		t.Errorf("%s's summary of host-1 %+v: want no instances listed, %d counted, %d others, 3 cpus and 192 MB used", token, one, named, others)
	}
}

// Another namespace's application may name a depends object: its
// owner's operator sees it counted, not named, in GET and in the 409 of
// a delete.
func TestDependsNameOnlyReadableUsers(t *testing.T) {
	e, _ := newAuthEnv(t, 0)
	logagent := manifesttest.Depends()
	logagent.Metadata.Namespace = "demo"
	e.expectAs(t, adminToken, http.StatusCreated, "POST", "/v1/depends", logagent, nil)
	ref := manifest.DependsRef{Name: "logagent", Namespace: "demo", Policy: manifest.DependsPerNode}
	for _, ns := range []string{"demo", "secret-team"} {
		game := gameReferencing("game", ref)
		game.Metadata.Namespace = ns
		e.expectAs(t, adminToken, http.StatusCreated, "POST", "/v1/apps", game, nil)
	}
	var v api.DependsView
	e.expectAs(t, operatorToken, http.StatusOK, "GET", "/v1/depends/demo/logagent", nil, &v)
	if !reflect.DeepEqual(v.Status.ReferencedBy, []string{"demo/game"}) || v.Status.ReferencedByOthers != 1 {
		t.Errorf("the operator of demo sees %+v; want demo/game named and 1 other", v.Status)
	}
	e.expectAs(t, readerToken, http.StatusOK, "GET", "/v1/depends/demo/logagent", nil, &v)
	if !reflect.DeepEqual(v.Status.ReferencedBy, []string{"demo/game", "secret-team/game"}) || v.Status.ReferencedByOthers != 0 {
		t.Errorf("the reader sees %+v; want both named", v.Status)
	}
	got := errorOf(t, e.call(t, "DELETE", "/v1/depends/demo/logagent", nil, bearer(operatorToken)...), http.StatusConflict, "Conflict")
	if strings.Contains(got.Message, "secret-team") || !strings.Contains(got.Message, "referenced by demo/game, 1 application(s) of namespaces you may not read") {
		t.Errorf("the 409 to the operator of demo: %q", got.Message)
	}
}
