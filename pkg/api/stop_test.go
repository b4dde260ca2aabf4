package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/api"
)

// Seed 002 (deployd): optype=stop/start of a podgroup or one instance.
// POST …/{ns}/{name}/stop and start set the application's stopped flag
// (the scheduler stops and starts its instances); an instance of a
// stopped application is started with it, not alone; a daemonset's
// instances follow the agents and are refused, naming the daemonset.
func TestStopAndStartRoutes(t *testing.T) {
	e := newEnv(t)
	e.expect(t, http.StatusCreated, "POST", "/v1/deployments", deployment("game", "ns-a"), nil)
	e.expect(t, http.StatusCreated, "POST", "/v1/daemonsets", daemonset("logs", "ns-a"), nil)

	var v api.AppView
	e.expect(t, http.StatusAccepted, "POST", "/v1/deployments/ns-a/game/stop", nil, &v)
	if !v.Stopped {
		t.Errorf("after stop: %+v", v)
	}
	e.expect(t, http.StatusOK, "GET", "/v1/deployments/ns-a/game", nil, &v)
	if !v.Stopped {
		t.Errorf("GET after stop: stopped %v", v.Stopped)
	}
	got := errorOf(t, e.call(t, "POST", "/v1/taskgroups/ns-a_game_0_1/start", nil), http.StatusConflict, "Conflict")
	if !strings.Contains(got.Message, "deployment ns-a/game is stopped: start it") {
		t.Errorf("start of an instance of a stopped deployment: %q", got.Message)
	}
	var started api.AppView
	e.expect(t, http.StatusAccepted, "POST", "/v1/deployments/ns-a/game/start", nil, &started)
	if started.Stopped {
		t.Errorf("after start: stopped %v", started.Stopped)
	}

	for _, path := range []string{"/v1/daemonsets/ns-a/logs/stop", "/v1/taskgroups/ns-a_logs_0_1/stop"} {
		got := errorOf(t, e.call(t, "POST", path, nil), http.StatusBadRequest, "InvalidArgument")
		if !strings.Contains(got.Message, "daemonset ns-a/logs runs on every eligible agent") {
			t.Errorf("POST %s: %q", path, got.Message)
		}
	}
	var logs api.AppView
	e.expect(t, http.StatusOK, "GET", "/v1/daemonsets/ns-a/logs", nil, &logs)
	if logs.Stopped {
		t.Error("a refused stop stopped the daemonset")
	}
	got = errorOf(t, e.call(t, "POST", "/v1/taskgroups/ns-a_game_0_1/halt", nil), http.StatusNotFound, "NotFound")
	if !strings.Contains(got.Message, "want restart, reload, reschedule, stop or start") {
		t.Errorf("unknown operation: %q", got.Message)
	}
}
