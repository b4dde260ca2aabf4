package api_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/api"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/plan"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// sizePlanner records the instance count of each manifest it plans.
type sizePlanner struct {
	mu    sync.Mutex
	sizes []int
}

func (p *sizePlanner) Plan(_ context.Context, obj manifest.Object) (*plan.Plan, error) {
	n, _ := manifest.InstancesOf(obj)
	p.mu.Lock()
	p.sizes = append(p.sizes, n)
	p.mu.Unlock()
	return &plan.Plan{Kind: obj.Kind(), Action: plan.Update, Instances: []plan.Instance{}, Warnings: []string{"the scheduler's"}}, nil
}

func (p *sizePlanner) planned() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.sizes)
}

// Applying a new version of a deployment an autoscaler scales keeps the
// size and holes the autoscaler gave it: the answer says in a Warning
// header that spec.instance was not applied and why; its dry run and
// POST /v1/plan plan the update at the kept size, saying so first among
// the plan's warnings. Without the autoscaler the manifest's count
// applies again, without a warning.
func TestUpdateOfAutoscaledWorkload(t *testing.T) {
	planner := &sizePlanner{}
	e := newEnv(t, func(c *api.Config) { c.Planner = planner })
	e.expect(t, http.StatusCreated, "POST", "/v1/deployments", processDeployment("dep", "ns-a"), nil)
	e.expect(t, http.StatusCreated, "POST", "/v1/autoscalers", bufferAutoscaler("as", "ns-a", "dep"), nil)
	ctx := context.Background()
	app, err := e.reg.GetApp(ctx, "ns-a", "dep")
	if err != nil {
		t.Fatal(err)
	}
	status := &registry.AutoscalerStatus{Namespace: "ns-a", Name: "as"}
	if _, err := e.reg.ApplyScaleDecision(ctx, registry.ScaleWrite{App: app, Instances: app.Instances + 1, Remove: []int{1}, Status: status}); err != nil {
		t.Fatal(err)
	}
	kept := app.Instances + 1
	next := processDeployment("dep", "ns-a")
	next.Spec.Instance = 1
	next.Spec.Template.Spec.Processes[0].StartCmd += " --v2"
	warning := fmt.Sprintf("spec.instance 1 not applied: autoscaler ns-a/as scales ns-a/dep, which keeps its %d instances", kept)

	for _, path := range []string{"/v1/deployments/ns-a/dep?dryRun=true", "/v1/plan"} {
		method := map[bool]string{true: "PUT", false: "POST"}[strings.Contains(path, "dryRun")]
		var p plan.Plan
		e.expect(t, http.StatusOK, method, path, next, &p)
		if len(p.Warnings) != 2 || p.Warnings[0] != warning {
			t.Errorf("%s %s: warnings %q; want %q first", method, path, p.Warnings, warning)
		}
	}
	if got := planner.planned(); !slices.Equal(got, []int{kept, kept}) {
		t.Errorf("planned sizes %v; want the kept %d twice", got, kept)
	}

	var v api.AppView
	r := e.expect(t, http.StatusOK, "PUT", "/v1/deployments/ns-a/dep", next, &v)
	if got := r.header.Get("Warning"); got != `299 - "`+warning+`"` {
		t.Errorf("Warning %q; want the kept size said", got)
	}
	stored, err := e.reg.GetApp(ctx, "ns-a", "dep")
	if err != nil {
		t.Fatal(err)
	}
	if v.Version != 2 || v.Instances != kept || stored.Instances != kept || !slices.Equal(stored.Removed, []int{1}) {
		t.Errorf("after the update: version %d, %d instances (stored %d, removed %v); want version 2, %d and [1] kept",
			v.Version, v.Instances, stored.Instances, stored.Removed, kept)
	}

	e.expect(t, http.StatusNoContent, "DELETE", "/v1/autoscalers/ns-a/as", nil, nil)
	r = e.expect(t, http.StatusOK, "PUT", "/v1/deployments/ns-a/dep", next, &v)
	if v.Instances != 1 || r.header.Get("Warning") != "" {
		t.Errorf("without the autoscaler: %d instances, Warning %q; want the manifest's 1 and none", v.Instances, r.header.Get("Warning"))
	}
}
