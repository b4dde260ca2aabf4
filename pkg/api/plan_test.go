package api_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/api"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/plan"
)

// recordingPlanner answers every plan with a fixed one and records the
// manifests it was asked about; the scheduler core's plans are tested by
// its scenario scripts, the driver test and the e2e suite.
type recordingPlanner struct {
	mu    sync.Mutex
	asked []string // "kind ns/name"
}

func (p *recordingPlanner) Plan(_ context.Context, obj manifest.Object) (*plan.Plan, error) {
	meta, _ := manifest.MetaOf(obj)
	p.mu.Lock()
	p.asked = append(p.asked, string(obj.Kind())+" "+meta.Namespace+"/"+meta.Name)
	p.mu.Unlock()
	pl := &plan.Plan{Kind: obj.Kind(), Namespace: meta.Namespace, Name: meta.Name, Action: plan.Create,
		Instances: []plan.Instance{{Index: 0, Action: plan.Place, Agent: "agent-1", Hostname: "host-1"}}, Warnings: []string{}}
	pl.Summarize()
	return pl, nil
}

func (p *recordingPlanner) questions() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.asked)
}

// revision is the store's revision: no write may move it.
func (e *env) revision(t *testing.T) int64 {
	t.Helper()
	rev, err := e.store.Revision(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return rev
}

// POST /v1/plan and ?dryRun=true on create and update validate
// as the real request does, answer 200 with the scheduler's plan, and
// store nothing (the etcd revision stays).
func TestPlanAndDryRunStoreNothing(t *testing.T) {
	planner := &recordingPlanner{}
	e := newEnv(t, func(c *api.Config) { c.Planner = planner })
	createApp(t, e, process("running", "ns-a"))
	e.expect(t, http.StatusCreated, "POST", "/v1/deployments", processDeployment("dep", "ns-a"), nil)
	before := e.revision(t)

	for _, tt := range []struct {
		name, method, path string
		body               any
	}{
		{"plan a create", "POST", "/v1/plan", process("new", "ns-a")},
		{"plan an update", "POST", "/v1/plan", process("running", "ns-a", func(p *manifest.Process) { p.Spec.Instance = 7 })},
		{"plan a deployment", "POST", "/v1/plan", processDeployment("dep", "ns-a")},
		{"dry-run create", "POST", "/v1/apps?dryRun=true", process("new", "ns-a")},
		{"dry-run update", "PUT", "/v1/apps/ns-a/running?dryRun=true", process("running", "ns-a", func(p *manifest.Process) { p.Spec.Instance = 7 })},
		{"dry-run deployment create", "POST", "/v1/deployments?dryRun=true", processDeployment("dep2", "ns-a")},
		{"dry-run deployment update", "PUT", "/v1/deployments/ns-a/dep?dryRun=true", processDeployment("dep", "ns-a")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got plan.Plan
			e.expect(t, http.StatusOK, tt.method, tt.path, tt.body, &got)
			if got.Summary.Place != 1 || len(got.Instances) != 1 || got.Instances[0].Hostname != "host-1" {
				t.Errorf("plan %+v: want the planner's", got)
			}
		})
	}
	want := []string{"process ns-a/new", "process ns-a/running", "deployment ns-a/dep", "process ns-a/new",
		"process ns-a/running", "deployment ns-a/dep2", "deployment ns-a/dep"}
	if got := planner.questions(); !slices.Equal(got, want) {
		t.Errorf("planner asked about %q, want %q", got, want)
	}
	if after := e.revision(t); after != before {
		t.Errorf("etcd revision %d → %d: a plan or dry run wrote", before, after)
	}
	errorOf(t, e.call(t, "GET", "/v1/apps/ns-a/new", nil), http.StatusNotFound, "NotFound")
	if v := getApp(t, e, "ns-a", "running"); v.Version != 1 || v.Instances != 3 {
		t.Errorf("after the dry-run update: version %d instances %d, want 1 and 3", v.Version, v.Instances)
	}
	// ?dryRun=false is the real request.
	e.expect(t, http.StatusCreated, "POST", "/v1/apps?dryRun=false", process("new", "ns-a"), nil)
}

// A dry run is refused as the real request would be — the same
// 400s naming fields, 404s and 409s — and a misspelt or malformed dryRun
// is a 400 that stores nothing.
func TestDryRunRefusesAsTheRealRequest(t *testing.T) {
	planner := &recordingPlanner{}
	e := newEnv(t, func(c *api.Config) { c.Planner = planner })
	first := createApp(t, e, process("gamesvc", "ns-a"))
	hot := processDeployment("hot", "ns-a")
	hot.Spec.Strategy = &manifest.Strategy{Type: manifest.UpdateHotPatch}
	e.expect(t, http.StatusCreated, "POST", "/v1/deployments", hot, nil)
	before := e.revision(t)

	invalid := process("bad", "ns-a", func(p *manifest.Process) { p.Spec.Instance = -2 })
	restarting := processDeployment("hot", "ns-a")
	restarting.Spec.Strategy = &manifest.Strategy{Type: manifest.UpdateHotPatch}
	restarting.Spec.Template.Spec.Processes[0].StartCmd = "./start.sh --v2"
	for _, tt := range []struct {
		name, method, path string
		body               any
		headers            []string
		status             int
		code, detail       string
	}{
		{"invalid create", "POST", "/v1/apps?dryRun=true", invalid, nil, 400, "InvalidArgument", "spec.instance: must be ≥ 0, got -2"},
		{"invalid plan", "POST", "/v1/plan", invalid, nil, 400, "InvalidArgument", "spec.instance: must be ≥ 0, got -2"},
		{"kind of another route", "POST", "/v1/deployments?dryRun=true", process("p", "ns-a"), nil, 400, "InvalidArgument", `kind: want deployment here, got "process"`},
		{"not a workload", "POST", "/v1/plan", `{"apiVersion":"v4","kind":"configmap","metadata":{"name":"c","namespace":"ns-a"},"data":{}}`,
			nil, 400, "InvalidArgument", `kind: want application or process or deployment or daemonset or autoscaler here, got "configmap"`},
		{"create of an existing one", "POST", "/v1/apps?dryRun=true", process("gamesvc", "ns-a"), nil, 409, "AlreadyExists", ""},
		{"update of a missing one", "PUT", "/v1/apps/ns-a/nothere?dryRun=true", process("nothere", "ns-a"), nil, 404, "NotFound", ""},
		{"stale If-Match", "PUT", "/v1/apps/ns-a/gamesvc?dryRun=true", process("gamesvc", "ns-a"), []string{"If-Match", "1"}, 409, "Conflict", ""},
		{"kind change", "POST", "/v1/plan", application("gamesvc", "ns-a"), nil, 400, "InvalidArgument", ""},
		{"hot patch needing a restart", "POST", "/v1/plan", restarting, nil, 400, "InvalidArgument",
			"spec.template.spec.processes[0].startCmd: HotPatchUpdate cannot change it without a restart (use InplaceUpdate, or RollingUpdate)"},
		{"misspelt dryRun", "POST", "/v1/apps?dryrun=true", process("typo", "ns-a"), nil, 400, "InvalidArgument", "dryrun: unknown parameter (want dryRun)"},
		{"dryRun not a boolean", "PUT", "/v1/apps/ns-a/gamesvc?dryRun=yes", process("gamesvc", "ns-a"), nil, 400, "InvalidArgument", `dryRun: want true or false, got "yes"`},
		{"plan takes no parameters", "POST", "/v1/plan?dryRun=true", process("p", "ns-a"), nil, 400, "InvalidArgument", "dryRun: unknown parameter (this route takes none)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := e.call(t, tt.method, tt.path, tt.body, tt.headers...)
			got := errorOf(t, r, tt.status, tt.code)
			if tt.detail != "" && !slices.Contains(got.Details, tt.detail) {
				t.Errorf("details %q do not hold %q", got.Details, tt.detail)
			}
		})
	}
	if after := e.revision(t); after != before {
		t.Errorf("etcd revision %d → %d: a refused request wrote", before, after)
	}
	if asked := planner.questions(); len(asked) != 0 {
		t.Errorf("the planner was asked about %q: refused requests must not reach it", asked)
	}
	// The current revision in If-Match is accepted.
	e.expect(t, http.StatusOK, "PUT", "/v1/apps/ns-a/gamesvc?dryRun=true", process("gamesvc", "ns-a"), nil)
	r := e.call(t, "PUT", "/v1/apps/ns-a/gamesvc?dryRun=true", process("gamesvc", "ns-a"), "If-Match", fmt.Sprint(first.Revision))
	if r.status != http.StatusOK {
		t.Errorf("dry run with the current If-Match = %d, want 200; %s", r.status, r.body)
	}
}

// A replica that runs no scheduler cannot plan: 503, and the
// real create still works there.
func TestPlanWithoutSchedulerIsUnavailable(t *testing.T) {
	e := newEnv(t)
	errorOf(t, e.call(t, "POST", "/v1/plan", process("p", "ns-a")), http.StatusServiceUnavailable, "Unavailable")
	errorOf(t, e.call(t, "POST", "/v1/apps?dryRun=true", process("p", "ns-a")), http.StatusServiceUnavailable, "Unavailable")
	unavailable := planFunc(func(context.Context, manifest.Object) (*plan.Plan, error) {
		return nil, errdefs.ErrUnavailable
	})
	e = newEnv(t, func(c *api.Config) { c.Planner = unavailable })
	errorOf(t, e.call(t, "PUT", "/v1/apps/ns-a/p?dryRun=true", process("p", "ns-a")), http.StatusNotFound, "NotFound")
	createApp(t, e, process("p", "ns-a"))
	errorOf(t, e.call(t, "PUT", "/v1/apps/ns-a/p?dryRun=true", process("p", "ns-a")), http.StatusServiceUnavailable, "Unavailable")
}

type planFunc func(context.Context, manifest.Object) (*plan.Plan, error)

func (f planFunc) Plan(ctx context.Context, obj manifest.Object) (*plan.Plan, error) {
	return f(ctx, obj)
}
