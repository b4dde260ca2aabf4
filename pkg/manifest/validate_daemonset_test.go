package manifest_test

import (
	"reflect"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/constraint"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest/manifesttest"
)

// A daemonset is validated as a deployment, and refuses what one
// instance per agent rules out: a count, surge, constraint operators that
// count instances.
func TestValidateDaemonset(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(d *manifest.Daemonset)
		want   []string
	}{
		{"the fixture", func(*manifest.Daemonset) {}, nil},
		{"processes", func(d *manifest.Daemonset) {
			d.Spec.Template.Spec = manifest.DeploymentTemplateSpec{Processes: manifesttest.Process().Spec.Template.Spec.Processes}
		}, nil},
		{"template checked as a deployment's", func(d *manifest.Daemonset) { d.Spec.Template.Spec.Containers[0].Image = "" },
			[]string{C + ".image: required"}},
		{"metadata checked", func(d *manifest.Daemonset) { d.Metadata.Name = "" }, []string{"metadata.name: required"}},
		// The original's daemonsets carried spec.instance and ignored it.
		{"an instance count", func(d *manifest.Daemonset) { d.Spec.Instance = 3 }, nil},
		{"maxSurge", func(d *manifest.Daemonset) { d.Spec.UpdateStrategy.MaxSurge = manifest.Percent(25) },
			[]string{"spec.updateStrategy.maxSurge: a daemonset runs one instance per agent, leaving no room for a surge instance: want 0, got 25%"}},
		{"maxSurge 0", func(d *manifest.Daemonset) { d.Spec.UpdateStrategy.MaxSurge = manifest.Count(0) }, nil},
		{"the original's strategy with maxSurge", func(d *manifest.Daemonset) {
			d.Spec.UpdateStrategy = nil
			d.Spec.Strategy = &manifest.Strategy{Type: manifest.UpdateRolling, RollingUpdate: &manifest.RollingUpdate{MaxSurge: manifest.Count(1)}}
		}, []string{"spec.strategy.rollingupdate.maxSurge: a daemonset runs one instance per agent, leaving no room for a surge instance: want 0, got 1"}},
		{"in place with a partition", func(d *manifest.Daemonset) {
			d.Spec.UpdateStrategy = &manifest.UpdateStrategy{Type: manifest.UpdateInPlace, Partition: 1}
		}, nil},
		{"UNIQUE counts instances", func(d *manifest.Daemonset) { d.Constraint = manifesttest.Unique() },
			[]string{"constraint.intersectionItem[0].unionData[0].operate: UNIQUE counts instances; a daemonset runs one on every agent it admits: choose agents with CLUSTER, LIKE, UNLIKE, EXCLUDE, GREATER or TOLERATION"}},
		{"a preferred item chooses nothing", func(d *manifest.Daemonset) {
			d.Constraint = &constraint.Constraint{IntersectionItems: []constraint.IntersectionItem{{Weight: 10, UnionData: []constraint.UnionData{{
				Name: "zone", Operate: constraint.Cluster, Type: constraint.TypeText, Text: &constraint.TextValue{Value: "a"}}}}}}
		}, []string{"constraint.intersectionItem[0].weight: a daemonset runs on every agent it admits: a preferred item chooses none; drop the weight to require the item"}},
		{"CLUSTER chooses agents", func(d *manifest.Daemonset) {
			d.Constraint = &constraint.Constraint{IntersectionItems: []constraint.IntersectionItem{{UnionData: []constraint.UnionData{{
				Name: "zone", Operate: constraint.Cluster, Type: constraint.TypeText, Text: &constraint.TextValue{Value: "a"}}}}}}
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := manifesttest.Daemonset()
			tt.mutate(d)
			if got := messages(d.Validate(manifesttest.NewResolver())); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Validate:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// The original's daemonset shape parses: kind in any case, spec.template
// of containers, no strategy (RollingUpdate with the defaults), and its
// workload is the template's application with no instances.
func TestParseDaemonset(t *testing.T) {
	obj, err := manifest.Parse([]byte(`{"apiVersion": "v4", "kind": "DaemonSet",
		"metadata": {"name": "logagent", "namespace": "ns-a"},
		"restartPolicy": {"policy": "Always"}, "killPolicy": {"gracePeriod": 5},
		"spec": {"template": {"metadata": {"labels": {"app": "logagent"}},
			"spec": {"containers": [{"image": "bcs-test/busybox", "resources": {"limits": {"cpu": "0.1", "memory": "32"}}}], "networkMode": "HOST"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	d, ok := obj.(*manifest.Daemonset)
	if !ok {
		t.Fatalf("Parse gave a %T", obj)
	}
	if errs := d.Validate(nil); len(errs) > 0 {
		t.Errorf("Validate: %v", errs)
	}
	if us := manifest.UpdateStrategyOf(d); us.Type != manifest.UpdateRolling {
		t.Errorf("strategy %q, want RollingUpdate", us.Type)
	}
	w, err := manifest.Workload(d)
	if err != nil {
		t.Fatal(err)
	}
	app, ok := w.(*manifest.Application)
	if !ok || app.Spec.Instance != 0 || app.Metadata.Name != "logagent" || app.Spec.Template.Spec.Containers[0].Image != "bcs-test/busybox" {
		t.Errorf("Workload = %+v", w)
	}
	if n, ok := manifest.InstancesOf(d); !ok || n != 0 {
		t.Errorf("InstancesOf = %d, %t; want 0, true", n, ok)
	}
}
