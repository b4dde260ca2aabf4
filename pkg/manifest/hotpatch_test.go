package manifest_test

import (
	"reflect"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest/manifesttest"
)

// HotPatchUpdate: a PUT whose change needs a restart is refused
// up front, naming the fields, instead of stalling the rollout.
func TestHotPatchChanges(t *testing.T) {
	const why = ": HotPatchUpdate cannot change it without a restart (use InplaceUpdate, or RollingUpdate)"
	tests := []struct {
		name   string
		change func(d *manifest.Deployment)
		want   []string
	}{
		{"image and resources", func(d *manifest.Deployment) {
			c := &d.Spec.Template.Spec.Containers[0]
			c.Image, c.Resources.Limits.CPU = "game:v2", "2"
		}, nil},
		{"env and args", func(d *manifest.Deployment) {
			c := &d.Spec.Template.Spec.Containers[0]
			c.Env, c.Args = append(c.Env, manifest.ContainerEnv{Name: "X", Value: "1"}), []string{"--v2"}
		}, []string{C + ".args" + why, C + ".env" + why}},
		{"network", func(d *manifest.Deployment) { d.Spec.Template.Spec.NetworkMode = "HOST" },
			[]string{"spec.template.spec.networkMode" + why}},
		{"a container more", func(d *manifest.Deployment) {
			d.Spec.Template.Spec.Containers = append(d.Spec.Template.Spec.Containers, d.Spec.Template.Spec.Containers[0])
		}, []string{"spec.template.spec.containers" + why + ": 1 entries become 2"}},
		{"replicas and strategy", func(d *manifest.Deployment) { d.Spec.Instance, d.Spec.Strategy = 9, nil }, nil},
		// What a task took from Mesos (its requests, else a bounded
		// limit, else the defaults) cannot grow in its launch.
		{"limits grow above the requests", func(d *manifest.Deployment) {
			d.Spec.Template.Spec.Containers[0].Resources.Limits = manifest.ResourceList{CPU: "4", Memory: "2048"}
		}, nil},
		{"requests shrink", func(d *manifest.Deployment) {
			d.Spec.Template.Spec.Containers[0].Resources.Requests = manifest.ResourceList{CPU: "0.25", Memory: "256"}
		}, nil},
		{"requests.memory grows", func(d *manifest.Deployment) {
			d.Spec.Template.Spec.Containers[0].Resources.Requests.Memory = "600"
		}, []string{C + ".resources.requests.memory" + growth("512 MB", "600 MB")}},
		{"without requests, limits.memory is taken", func(d *manifest.Deployment) {
			r := &d.Spec.Template.Spec.Containers[0].Resources
			r.Requests, r.Limits.CPU = manifest.ResourceList{}, "0.5"
		}, []string{C + ".resources.limits.memory" + growth("512 MB", "1024 MB")}},
		{"requests dropped: the defaults", func(d *manifest.Deployment) {
			d.Spec.Template.Spec.Containers[0].Resources = manifest.Resources{}
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old, new := manifesttest.Deployment(), manifesttest.Deployment()
			tt.change(new)
			if got := messages(manifest.HotPatchChanges(old, new)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q\nwant %q", got, tt.want)
			}
		})
	}
	old, new := processDeployment(), processDeployment()
	p := &new.Spec.Template.Spec.Processes[0]
	p.URIs[0].Value, p.ReloadCmd = "http://repo/v2.tar.gz", "./reload2.sh"
	if errs := manifest.HotPatchChanges(old, new); len(errs) > 0 {
		t.Errorf("package and reloadCmd: %v", errs)
	}
	p.StartCmd, p.Resources.Requests.Memory = "./start2.sh", "600"
	want := []string{"spec.template.spec.processes[0].startCmd" + why,
		"spec.template.spec.processes[0].resources.requests.memory" + growth("500 MB", "600 MB")}
	if got := messages(manifest.HotPatchChanges(old, new)); !reflect.DeepEqual(got, want) {
		t.Errorf("startCmd and requests.memory: got %q\nwant %q", got, want)
	}
}

func growth(from, to string) string {
	return ": HotPatchUpdate cannot grow what a running task took from Mesos (" + from + ") to " + to +
		": it keeps its launch (use InplaceUpdate, which relaunches an instance that needs more, or RollingUpdate)"
}
