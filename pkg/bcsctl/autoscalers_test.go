package bcsctl_test

import (
	"context"
	"strings"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/api"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

const fleetAutoscalerYAML = `apiVersion: v4
kind: autoscaler
metadata: {name: fleet, namespace: demo}
spec:
  target: {kind: deployment, name: fleet}
  minReplicas: 2
  maxReplicas: 20
  metrics:
  - type: buffer
    buffer: {bufferSize: 2}
`

// planner answers every autoscaler dry run with 4 desired.
type planner struct{}

func (planner) PlanAutoscaler(context.Context, *manifest.Autoscaler) (*manifest.AutoscalerStatus, error) {
	return &manifest.AutoscalerStatus{CurrentReplicas: 2, DesiredReplicas: 4, Message: "buffer below 2"}, nil
}

// An autoscaler through bcsctl against the real API: plan and apply -f
// --dry-run (the server's decision), apply (created, unchanged,
// configured), get by every alias, describe with the leader's status,
// delete.
func TestAutoscalerApplyGetDescribeDelete(t *testing.T) {
	s := newAPIServer(t, func(c *api.Config) { c.AutoscalePlanner = planner{} })
	want := "autoscaler demo/fleet created (dry run)\n  Decision: 2 current, 4 desired: buffer below 2\n"
	if out := s.must(t, fleetAutoscalerYAML, "apply", "-f", "-", "--dry-run"); out != want {
		t.Errorf("apply --dry-run:\n%s\nwant:\n%s", out, want)
	}
	if out := s.must(t, fleetAutoscalerYAML, "plan", "-f", "-"); out != "autoscaler demo/fleet\n  Decision: 2 current, 4 desired: buffer below 2\n" {
		t.Errorf("plan:\n%s", out)
	}
	if code, _ := s.get(t, "/v1/autoscalers/demo/fleet"); code != 404 {
		t.Fatalf("the dry run stored the autoscaler: %d", code)
	}
	if out := s.must(t, fleetAutoscalerYAML, "apply", "-f", "-"); out != "autoscaler demo/fleet created\n" {
		t.Errorf("apply: %q", out)
	}
	if out := s.must(t, fleetAutoscalerYAML, "apply", "-f", "-"); out != "autoscaler demo/fleet unchanged\n" {
		t.Errorf("apply again: %q", out)
	}
	raised := strings.Replace(fleetAutoscalerYAML, "maxReplicas: 20", "maxReplicas: 30", 1)
	if out := s.must(t, raised, "apply", "-f", "-"); out != "autoscaler demo/fleet configured\n" {
		t.Errorf("apply of a new max: %q", out)
	}

	status := &registry.AutoscalerStatus{Namespace: "demo", Name: "fleet"}
	status.CurrentReplicas, status.DesiredReplicas, status.Bounds = 3, 5, manifest.ScaleBounds{Min: 2, Max: 30}
	status.Message = "buffer below 2"
	if err := s.reg.PutAutoscalerStatuses(context.Background(), []*registry.AutoscalerStatus{status}); err != nil {
		t.Fatal(err)
	}
	for _, alias := range []string{"autoscalers", "autoscaler", "as", "hpa"} {
		out := s.must(t, "", "get", alias, "-n", "demo")
		if !strings.Contains(out, "fleet   deployment/fleet   2     30    3         5         buffer: <unknown>/2 free") {
			t.Errorf("get %s:\n%s", alias, out)
		}
	}
	out := s.must(t, "", "describe", "autoscaler", "demo/fleet")
	for _, line := range []string{"Target:      deployment/fleet", "Bounds:      min 2, max 30", "Replicas:    3 current, 5 desired", "Message:     buffer below 2"} {
		if !strings.Contains(out, line) {
			t.Errorf("describe lacks %q:\n%s", line, out)
		}
	}
	s.must(t, "", "delete", "autoscaler", "demo/fleet")
	if code, _ := s.get(t, "/v1/autoscalers/demo/fleet"); code != 404 {
		t.Errorf("after delete: %d", code)
	}
}

// autoscale pause and resume set the autoscaler's spec.paused through the
// API, and a paused autoscaler lets its workload be scaled by hand, which
// the API refuses while it runs.
func TestAutoscalePauseResume(t *testing.T) {
	s := newAPIServer(t)
	s.must(t, example(t, "deployment.json"), "apply", "-f", "-")
	s.must(t, fleetAutoscalerYAML, "apply", "-f", "-")
	if r := s.bcsctl(t, "", "scale", "deployment", "fleet", "-n", "demo", "--replicas", "6"); r.code != 1 || !strings.Contains(r.err, "scaled by autoscaler demo/fleet; pause it") {
		t.Fatalf("scale of an autoscaled deployment: code %d, %q; want the API's conflict", r.code, r.err)
	}
	paused := func() bool {
		t.Helper()
		_, a, err := s.reg.GetAutoscaler(context.Background(), "demo", "fleet")
		if err != nil {
			t.Fatal(err)
		}
		return a.Spec.Paused
	}
	if out := s.must(t, "", "autoscale", "pause", "fleet", "-n", "demo"); out != "autoscaler demo/fleet paused\n" || !paused() {
		t.Fatalf("pause: %q, paused %v", out, paused())
	}
	s.must(t, "", "scale", "deployment", "demo/fleet", "--replicas", "6")
	if out := s.must(t, "", "autoscale", "resume", "demo/fleet"); out != "autoscaler demo/fleet resumed\n" || paused() {
		t.Fatalf("resume: %q, paused %v", out, paused())
	}
	if r := s.bcsctl(t, "", "autoscale", "pause", "demo/nope"); r.code != 1 || !strings.Contains(r.err, "nope") {
		t.Errorf("pause of no autoscaler: code %d, %q; want the API's not found", r.code, r.err)
	}
	if r := s.bcsctl(t, "", "autoscale", "pause"); r.code != 2 {
		t.Errorf("pause without a name: code %d, %q; want a usage error", r.code, r.err)
	}
}

// A new version of an autoscaled deployment keeps the size the
// autoscaler gave it; the API says so in a Warning header, which bcsctl
// prints to stderr as kubectl does, keeping stdout to its result.
func TestApplyPrintsTheAPIsWarnings(t *testing.T) {
	s := newAPIServer(t)
	deployment := example(t, "deployment.json")
	s.must(t, deployment, "apply", "-f", "-")
	s.must(t, fleetAutoscalerYAML, "apply", "-f", "-")
	changed := strings.Replace(deployment, `"instance": 4`, `"instance": 6`, 1)
	if changed == deployment {
		t.Fatal(`examples/deployment.json has no "instance": 4 to change`)
	}
	r := s.bcsctl(t, changed, "apply", "-f", "-")
	if r.code != 0 || strings.Contains(r.out, "Warning") {
		t.Fatalf("apply: exit %d, stdout %q; want 0 and no warning there", r.code, r.out)
	}
	want := "Warning: spec.instance 6 not applied: autoscaler demo/fleet scales demo/fleet, which keeps its 4 instances\n"
	if r.err != want {
		t.Errorf("stderr %q, want %q", r.err, want)
	}
}
