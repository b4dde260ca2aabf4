package api_test

import (
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/api"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// engineConfigAnswer is what GET and PATCH /v1/engine/config answer.
type engineConfigAnswer struct {
	ReconcileInterval string   `json:"reconcileInterval"`
	AgentSyncInterval string   `json:"agentSyncInterval"`
	DependsGCDelay    string   `json:"dependsGCDelay"`
	MaxLaunching      int      `json:"maxLaunching"`
	FlappingRestarts  int      `json:"flappingRestarts"`
	FlappingWindow    string   `json:"flappingWindow"`
	Set               []string `json:"set"`
	By                string   `json:"by"`
}

// flagDefaults stand for bcs-scheduler's flags.
var flagDefaults = registry.EngineConfig{
	ReconcileInterval: registry.Duration(10 * time.Minute), AgentSyncInterval: registry.Duration(30 * time.Second),
	DependsGCDelay: registry.Duration(5 * time.Minute), MaxLaunching: 10000,
	FlappingRestarts: 3, FlappingWindow: registry.Duration(30 * time.Minute),
}

func withEngineDefaults(d registry.EngineConfig) func(*api.Config) {
	return func(c *api.Config) { c.EngineDefaults = d }
}

// Seed 002's Engine Api (GET/PATCH /api/engine/config): the engine's
// configuration is the flags' until a PATCH sets a value
// over them (a JSON merge patch: null gives it back); a value refused is
// a 400 naming it and nothing is stored; what is set is in etcd, so
// another replica (with its own flags) shows it too; seed 002's route
// answers the same.
func TestEngineConfigSetOverTheFlags(t *testing.T) {
	e := newEnv(t, withEngineDefaults(flagDefaults))
	var got engineConfigAnswer
	e.expect(t, http.StatusOK, "GET", "/v1/engine/config", nil, &got)
	want := engineConfigAnswer{ReconcileInterval: "10m0s", AgentSyncInterval: "30s", DependsGCDelay: "5m0s", MaxLaunching: 10000,
		FlappingRestarts: 3, FlappingWindow: "30m0s", Set: []string{}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("GET before any PATCH = %+v, want the flags' %+v", got, want)
	}

	for _, tc := range []struct {
		name  string
		body  any
		named []string // the fields the 400 names
	}{
		{"unknown setting", map[string]any{"refreshInterval": "1m"}, []string{"refreshInterval: unknown setting (want one of agentSyncInterval, dependsGCDelay, flappingRestarts, flappingWindow, maxLaunching, reconcileInterval)"}},
		{"not a duration", map[string]any{"dependsGCDelay": "soon"}, []string{`dependsGCDelay: want a duration such as "30s", got "soon"`}},
		{"a number of nanoseconds", map[string]any{"reconcileInterval": 60000000000}, []string{`reconcileInterval: want a duration such as "30s", got 60000000000`}},
		{"too short", map[string]any{"agentSyncInterval": "100ms"}, []string{"agentSyncInterval: 100ms: must be at least 1s"}},
		{"no budget", map[string]any{"maxLaunching": 0}, []string{"maxLaunching: 0: must be at least 1"}},
		{"not a count", map[string]any{"flappingRestarts": "3"}, []string{`flappingRestarts: want a whole number, got "3"`}},
		// One good value beside a bad one: neither is stored.
		{"one bad among good", map[string]any{"maxLaunching": 50, "flappingWindow": "-1m"}, []string{"flappingWindow: -1m0s: must be at least 1s"}},
		{"not an object", []string{"maxLaunching"}, []string{"want an object, got an array"}},
		{"broken JSON", `{"maxLaunching":`, []string{"invalid JSON at line 1, column 17"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := errorOf(t, e.call(t, "PATCH", "/v1/engine/config", tc.body), http.StatusBadRequest, "InvalidArgument")
			if len(bad.Details) != len(tc.named) {
				t.Fatalf("details %q, want %q", bad.Details, tc.named)
			}
			for i, d := range tc.named {
				if !strings.HasPrefix(bad.Details[i], d) {
					t.Errorf("detail %q, want %q", bad.Details[i], d)
				}
			}
		})
	}
	if keys := e.storedKeys(t); slices.Contains(keys, "engine/config") {
		t.Fatalf("refused patches stored the settings: %q", keys)
	}

	e.expect(t, http.StatusOK, "PATCH", "/v1/engine/config", map[string]any{"reconcileInterval": "90s", "maxLaunching": 50}, &got)
	want.ReconcileInterval, want.MaxLaunching, want.Set = "1m30s", 50, []string{"maxLaunching", "reconcileInterval"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("PATCH answered %+v, want %+v", got, want)
	}
	var seed engineConfigAnswer
	e.expect(t, http.StatusOK, "GET", "/api/engine/config", nil, &seed)
	if !reflect.DeepEqual(seed, want) {
		t.Errorf("GET /api/engine/config = %+v, want %+v", seed, want)
	}

	// Another replica, whose flags differ, shows the values set over its
	// own.
	other := flagDefaults
	other.DependsGCDelay = registry.Duration(time.Minute)
	replica := newEnvOn(t, e.endpoints, e.prefix, shared.Sealer, withEngineDefaults(other))
	replica.expect(t, http.StatusOK, "GET", "/v1/engine/config", nil, &got)
	if got.ReconcileInterval != "1m30s" || got.MaxLaunching != 50 || got.DependsGCDelay != "1m0s" {
		t.Errorf("another replica shows %+v, want the values set over its flags", got)
	}

	// null gives a value back to the flag; the seed's route takes the
	// same patch.
	e.expect(t, http.StatusOK, "PATCH", "/api/engine/config", map[string]any{"reconcileInterval": nil, "dependsGCDelay": "2s"}, &got)
	if got.ReconcileInterval != "10m0s" || got.DependsGCDelay != "2s" || !reflect.DeepEqual(got.Set, []string{"dependsGCDelay", "maxLaunching"}) {
		t.Errorf("after null: %+v, want reconcileInterval the flag's, dependsGCDelay and maxLaunching set", got)
	}
	stored, err := e.reg.GetEngineSettings(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if string(stored.Values["dependsGCDelay"]) != `"2s"` || len(stored.Values) != 2 {
		t.Errorf("stored %s, want dependsGCDelay and maxLaunching", stored.Values)
	}
}

// The engine's configuration is the cluster's: every role reads it, only
// an admin changes it (as the engine's mode), and each change is in the
// audit log with who made it, who the answer names.
func TestEngineConfigIsAdminOnly(t *testing.T) {
	e, logs := newAuthEnv(t, 0, withEngineDefaults(flagDefaults))
	for _, path := range []string{"/v1/engine/config", "/api/engine/config"} {
		for _, token := range []string{readerToken, operatorToken} {
			e.expectAs(t, token, http.StatusOK, "GET", path, nil, nil)
			r := e.call(t, "PATCH", path, map[string]any{"maxLaunching": 5}, bearer(token)...)
			if got := errorOf(t, r, http.StatusForbidden, "Forbidden"); !strings.Contains(got.Message, "admin only") && !strings.Contains(got.Message, "writes nothing") {
				t.Errorf("PATCH %s by a non-admin: %q", path, got.Message)
			}
		}
	}
	if keys := e.storedKeys(t); slices.Contains(keys, "engine/config") {
		t.Fatalf("refused patches stored the settings: %q", keys)
	}
	var got engineConfigAnswer
	e.expectAs(t, adminToken, http.StatusOK, "PATCH", "/v1/engine/config", map[string]any{"maxLaunching": 5}, &got)
	if got.MaxLaunching != 5 || got.By != "alice" {
		t.Errorf("PATCH by the admin answered %+v, want maxLaunching 5 by alice", got)
	}
	var page auditPage
	e.expectAs(t, adminToken, http.StatusOK, "GET", "/v1/audit", nil, &page)
	if len(page.Entries) != 5 || page.Entries[0].User != "alice" || page.Entries[0].Route != "PATCH /v1/engine/config" || page.Entries[0].Status != 200 {
		t.Errorf("audit %+v, want the admin's PATCH on top of the four refused", page.Entries)
	}
	if !strings.Contains(logs.String(), `"route":"PATCH /v1/engine/config"`) {
		t.Errorf("no audit line of the PATCH:\n%s", logs)
	}
}
