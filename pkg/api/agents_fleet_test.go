package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/api"
	"github.com/bcs-mesos/bcs-mesos/pkg/apiv1"
	"github.com/bcs-mesos/bcs-mesos/pkg/auth"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// The agents' list from the read view, where each application's share
// of the agents is kept until its task groups change and the instances
// are written without the reflecting encoder, is the byte-for-byte
// answer of etcd's, where every task group is folded as read — for each
// caller (instances of namespaces it may not read counted, not named),
// every page and the summary, on a fleet with moves, drains, NoExecute
// taints, instances not on an agent and strings the encoder escapes; and
// again after the fleet, an agent's taints and another's record changed;
// read again, each from the answer the view kept for the caller's scope.
// Each answer is also what the encoder writes of its own decoding.
func TestAgentsFromTheViewAsFromEtcd(t *testing.T) {
	viewed, _ := newAuthEnv(t, 0)
	etcd := newEnvOn(t, viewed.endpoints, viewed.prefix, shared.Sealer, func(c *api.Config) {
		users, err := auth.ParseTokens(strings.NewReader(tokenFile))
		if err != nil {
			t.Fatal(err)
		}
		c.Auth, c.View = &api.AuthConfig{Authenticator: &auth.Authenticator{Tokens: users}}, nil
	})
	ctx := context.Background()
	const agents = 30
	for a := range agents {
		attrs := map[string]string{"zone": fmt.Sprintf("z-%d", a%3), "rack": "<r&" + strconv.Itoa(a) + ">"}
		if err := viewed.reg.RecordAgent(ctx, fmt.Sprintf("agent-%02d", a), fmt.Sprintf("host-%02d", a), "", attrs); err != nil {
			t.Fatal(err)
		}
	}
	for _, op := range []struct{ method, path, body string }{
		{"POST", "/v1/agents/host-03/drain", ""},
		{"POST", "/v1/agents/host-05/drain", `{"force":true}`},
		{"PUT", "/v1/agents/host-04/taints", `{"taints":["dedicated=x:NoExecute","gpu=yes"]}`},
		{"POST", "/v1/agents/host-06/cordon", `{"reason":"disk \"sdb\" <failing>"}`},
	} {
		viewed.expectAs(t, adminToken, http.StatusOK, op.method, op.path, op.body, nil)
	}
	apps := []struct{ ns, name string }{{"demo", "game"}, {"staging", "lobby"}, {"secret-team", "hidden"}, {"demo", "chat"}}
	for _, a := range apps {
		if _, err := viewed.reg.CreateApp(ctx, process(a.name, a.ns)); err != nil {
			t.Fatal(err)
		}
	}
	var ops []store.Op
	for i := range 400 {
		a := apps[i%len(apps)]
		ops = append(ops, taskGroupOp(t, fleetTaskGroup(a.ns, a.name, i, agents)))
	}
	applyOps(t, viewed, ops)

	compareAgents(t, viewed, etcd)
	// One application's instances change: its share of the agents is
	// found again, the others' kept.
	g := fleetTaskGroup("demo", "game", 0, agents)
	g.Phase, g.Host, g.ID = "Running", "host-07", "demo.game.0.2"
	applyOps(t, viewed, []store.Op{taskGroupOp(t, g)})
	compareAgents(t, viewed, etcd)
	// An agent's taints and another's record change: their objects
	// are encoded again, the others' kept.
	viewed.expectAs(t, adminToken, http.StatusOK, "PUT", "/v1/agents/host-09/taints", `{"taints":["gpu=yes"]}`, nil)
	if err := viewed.reg.RecordAgent(ctx, "agent-10", "host-10", "", map[string]string{"zone": "moved"}); err != nil {
		t.Fatal(err)
	}
	compareAgents(t, viewed, etcd)
}

// fleetTaskGroup is the i-th instance of a fleet on agents agents: most
// running, some launched, killing, stopped or pending (on no agent),
// some moving (drain, eviction) with a successor on another agent.
func fleetTaskGroup(ns, app string, i, agents int) registry.TaskGroup {
	host := fmt.Sprintf("host-%02d", i*7%agents)
	g := registry.TaskGroup{ID: fmt.Sprintf("%s.%s.%d.1", ns, app, i), Namespace: ns, App: app, Index: i, State: "TASK_RUNNING",
		Phase: "Running", Host: host, Tasks: []registry.TaskRecord{{ID: "t", Name: "svr", CPUs: 0.1, MemMB: 33.3}, {ID: "s", Name: "side", CPUs: 0.07, MemMB: 7}}}
	switch i % 11 {
	case 1:
		g.Phase = "Launched"
	case 2:
		g.Phase = "Killing"
	case 3:
		g.Phase, g.Host = "Pending", ""
	case 4:
		g.Phase = registry.PhaseStopped
	case 5, 6:
		reason := map[int]string{5: "drain", 6: registry.EvictionMove}[i%11]
		g.Move = &registry.InstanceMove{Reason: reason, FromHost: host, Since: time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC),
			Successor: &registry.TaskGroup{ID: g.ID + ".next", Namespace: ns, App: app, Index: i, Phase: "Launched",
				Host: fmt.Sprintf("host-%02d", (i+1)%agents), Tasks: []registry.TaskRecord{{CPUs: 0.3, MemMB: 64}}}}
	case 7:
		g.Move = &registry.InstanceMove{Reason: "drift", FromHost: "old<host>&"}
	case 8:
		g.Move = &registry.InstanceMove{Reason: "drift", FromHost: `"quoted"\ ünï`}
	}
	return g
}

func applyOps(t *testing.T, e *env, ops []store.Op) {
	t.Helper()
	for len(ops) > 0 {
		n := min(len(ops), 100)
		if _, err := e.store.Apply(context.Background(), ops[:n]...); err != nil {
			t.Fatal(err)
		}
		ops = ops[n:]
	}
}

// compareAgents checks that viewed answers the agents' reads as etcd
// does, and as the encoder writes them.
func compareAgents(t *testing.T, viewed, etcd *env) {
	t.Helper()
	for _, token := range []string{adminToken, operatorToken, readerToken} {
		for _, path := range []string{"/v1/agents", "/v1/agents?limit=7", "/v1/agents?limit=7&after=agent-13", "/v1/agents?summary=true",
			"/v1/agents/host-03", "/v1/agents/host-04", "/v1/agents/host-07", "/v1/agents/agent-08"} {
			want := etcd.call(t, "GET", path, nil, bearer(token)...)
			for range 2 { // the second read of the unchanged view is the answer kept from the first
				got := viewed.call(t, "GET", path, nil, bearer(token)...)
				if got.status != http.StatusOK || want.status != http.StatusOK {
					t.Fatalf("GET %s: %d %s from the view, %d %s from etcd", path, got.status, got.body, want.status, want.body)
				}
				if !bytes.Equal(got.body, want.body) {
					t.Fatalf("GET %s as %s from the view:\n%s\nfrom etcd:\n%s", path, token, got.body, want.body)
				}
				if !strings.HasPrefix(path, "/v1/agents/") {
					checkEncoded(t, path, got.body)
				}
			}
		}
	}
	var list struct{ Agents []apiv1.AgentView }
	viewed.expectAs(t, operatorToken, http.StatusOK, "GET", "/v1/agents", nil, &list)
	for _, a := range list.Agents {
		var one apiv1.AgentView
		viewed.expectAs(t, operatorToken, http.StatusOK, "GET", "/v1/agents/"+a.Hostname, nil, &one)
		if !reflect.DeepEqual(one, a) {
			t.Fatalf("GET /v1/agents/%s:\n%+v\nin the list:\n%+v", a.Hostname, one, a)
		}
	}
	named, others := 0, 0
	for _, a := range list.Agents {
		for _, i := range a.Instances {
			if strings.HasPrefix(i.App, "secret-team/") {
				t.Fatalf("the operator of demo and staging sees %s on %s", i.App, a.Hostname)
			}
		}
		named, others = named+len(a.Instances), others+a.Others
	}
	if named == 0 || others == 0 {
		t.Errorf("the operator of demo and staging sees %d instances named and %d counted: want some of each", named, others)
	}
}

// checkEncoded checks that body is what the encoder, indenting by two
// spaces, writes of body's decoding.
func checkEncoded(t *testing.T, path string, body []byte) {
	t.Helper()
	var list struct {
		Agents []*apiv1.AgentView `json:"agents"`
		Next   string             `json:"next,omitempty"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetIndent("", "  ")
	if err := enc.Encode(list); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(body, want.Bytes()) {
		t.Fatalf("GET %s:\n%s\nwant as the encoder writes it:\n%s", path, body, want.Bytes())
	}
}
