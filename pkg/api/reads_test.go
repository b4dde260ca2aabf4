package api_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/api"
	"github.com/bcs-mesos/bcs-mesos/pkg/readview"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// Each read right after a write, the client's own through the API or the
// scheduler's straight to the store, sees it: the read view answers only
// once it reflects every write etcd acknowledged before the read. Done
// many times over, a view read without waiting would show an old state.
func TestReadsSeeTheWritesBeforeThem(t *testing.T) {
	e := newEnv(t)
	createApp(t, e, process("gamesvc", "ns-a"))
	for i := range 30 {
		e.expect(t, http.StatusAccepted, "POST", "/v1/apps/ns-a/gamesvc/scale", fmt.Sprintf(`{"instances":%d}`, i), nil)
		var v api.AppView
		e.expect(t, http.StatusOK, "GET", "/v1/apps/ns-a/gamesvc?summary=true", nil, &v)
		if v.Instances != i {
			t.Fatalf("GET after scaling to %d: instances %d", i, v.Instances)
		}

		putTaskGroup(t, e, registry.TaskGroup{ID: "tg-" + strconv.Itoa(i), Namespace: "ns-a", App: "gamesvc", Index: i, State: "TASK_RUNNING",
			Phase: "Running", Host: "host-a"})
		var page struct{ Instances []api.InstanceView }
		path := "/v1/apps/ns-a/gamesvc/instances?limit=1"
		if i > 0 {
			path += "&after=" + strconv.Itoa(i-1)
		}
		e.expect(t, http.StatusOK, "GET", path, nil, &page)
		if len(page.Instances) != 1 || page.Instances[0].TaskGroupID != "tg-"+strconv.Itoa(i) {
			t.Fatalf("instance page after the scheduler wrote tg-%d: %+v", i, page.Instances)
		}

		op := []string{"cordon", "uncordon"}[i%2]
		e.expect(t, http.StatusOK, "POST", "/v1/agents/host-a/"+op, nil, nil)
		var agent struct{ Cordoned bool }
		e.expect(t, http.StatusOK, "GET", "/v1/agents/host-a", nil, &agent)
		var list struct{ Agents []struct{ Cordoned bool } }
		e.expect(t, http.StatusOK, "GET", "/v1/agents", nil, &list)
		if agent.Cordoned != (op == "cordon") || len(list.Agents) != 1 || list.Agents[0].Cordoned != agent.Cordoned {
			t.Fatalf("GET after %s: cordoned %v, in the list %+v", op, agent.Cordoned, list.Agents)
		}
	}
	if !*etcdReads {
		if got := readsFrom(t, e, "etcd"); got != 0 {
			t.Errorf("%v reads from etcd, want all from the view", got)
		}
		if got := readsFrom(t, e, "view"); got < 120 {
			t.Errorf("%v reads from the view, want every one of the 120", got)
		}
	}
}

// A view that does not catch up in time (here: never started) leaves the
// read to etcd, which answers it.
func TestReadsFallBackToEtcdWhenTheViewIsBehind(t *testing.T) {
	prefix := shared.Prefix("api-test")
	st, err := store.Open(t.Context(), store.Config{Endpoints: shared.Etcd.Endpoints(), Prefix: prefix, Sealer: shared.Sealer})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	view, err := readview.New(st, registry.ViewConfig(readview.Config{}))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvOn(t, shared.Etcd.Endpoints(), prefix, shared.Sealer, func(cfg *api.Config) {
		cfg.View, cfg.ViewWait = registry.NewViewed(view), 50*time.Millisecond
	})
	createApp(t, e, process("gamesvc", "ns-a"))
	if v := getApp(t, e, "ns-a", "gamesvc"); v.Name != "gamesvc" || v.Status.State != "Deploying" {
		t.Fatalf("GET from etcd: %s in state %s, want gamesvc Deploying", v.Name, v.Status.State)
	}
	if got := readsFrom(t, e, "etcd"); got != 1 {
		t.Errorf("%v reads from etcd, want the one", got)
	}
}

// readsFrom is bcs_api_reads_total{from=from}.
func readsFrom(t *testing.T, e *env, from string) float64 {
	t.Helper()
	r := e.expect(t, http.StatusOK, "GET", "/metrics", nil, nil)
	m := regexp.MustCompile(`(?m)^bcs_api_reads_total\{from="` + from + `"\} (\S+)$`).FindSubmatch(r.body)
	if m == nil {
		return 0
	}
	v, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
