package manifest_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/constraint"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest/manifesttest"
)

// Seed 002: a Dependency is a pod spec ("Dependency用来描述被依赖的Pod基本运行参数、资源等").
func TestValidateDepends(t *testing.T) {
	const T = "spec.template.spec"
	tests := []struct {
		name   string
		mutate func(d *manifest.Depends)
		want   []string
	}{
		{"the fixture", func(*manifest.Depends) {}, nil},
		{"containers", func(d *manifest.Depends) {
			d.Spec.Template.Spec = manifest.DeploymentTemplateSpec{PodSpec: manifesttest.PodSpec()}
		}, nil},
		{"no template", func(d *manifest.Depends) { d.Spec.Template.Spec.Processes = nil },
			[]string{T + ".containers: required: containers (Docker pods) or processes"}},
		{"containers and processes", func(d *manifest.Depends) { d.Spec.Template.Spec.PodSpec = manifesttest.PodSpec() },
			[]string{T + ".processes: a template holds containers or processes, not both"}},
		{"a dependency of a dependency", func(d *manifest.Depends) {
			d.Spec.Template.Spec.Depends = []manifest.DependsRef{{Name: "logagent", Policy: manifest.DependsPerNode}}
		}, []string{T + ".depends: a dependency pod cannot depend on other pods"}},
		{"name and policies", func(d *manifest.Depends) {
			d.Metadata.Name = "Log_Agent"
			d.RestartPolicy.Policy = "Sometimes"
			d.Spec.Template.Spec.Processes[0].StartCmd = ""
		}, []string{
			"metadata.name: " + nameRule + `"Log_Agent"`,
			`restartPolicy.policy: want one of Never, Always, OnFailure, got "Sometimes"`,
			T + ".processes[0].startCmd: required",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := manifesttest.Depends()
			tt.mutate(d)
			if got := messages(d.Validate(manifesttest.NewResolver())); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Validate:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// Parse gives a depends object and its references their defaults:
// restartPolicy Always (a dependency is kept running), policy node (seed
// 002 names node first; deployd's podgroups default to it too).
func TestParseDependsDefaults(t *testing.T) {
	obj := mustParse(t, []byte(`{"apiVersion": "v4", "kind": "depends", "metadata": {"name": "logagent"},
		"spec": {"template": {"spec": {"processes": [{"procName": "logagent", "workPath": "${work_base_dir}/${namespace}.${processname}.${instanceid}", "pidFile": "${workPath}/pid", "startCmd": "./run"}]}}}}`))
	d, ok := obj.(*manifest.Depends)
	if !ok {
		t.Fatalf("parsed a %T", obj)
	}
	if d.Metadata.Namespace != manifest.DefaultNamespace || d.RestartPolicy.Policy != manifest.RestartAlways || d.KillPolicy.GracePeriod != 1 {
		t.Errorf("defaults: namespace %q, restartPolicy %q, grace %d", d.Metadata.Namespace, d.RestartPolicy.Policy, d.KillPolicy.GracePeriod)
	}
	if errs := d.Validate(nil); len(errs) > 0 {
		t.Errorf("Validate: %q", errs.Messages())
	}
	app := mustParse(t, []byte(`{"apiVersion": "v4", "kind": "process", "metadata": {"name": "game", "namespace": "ns-a"},
		"spec": {"instance": 1, "template": {"spec": {"depends": [{"name": "logagent"}, {"name": "dns", "namespace": "infra", "policy": "namespace"}],
		"processes": [{"procName": "game", "workPath": "${work_base_dir}/${namespace}.${processname}.${instanceid}", "pidFile": "${workPath}/pid", "startCmd": "./run"}]}}}}`))
	want := []manifest.DependsRef{{Name: "logagent", Namespace: "ns-a", Policy: manifest.DependsPerNode},
		{Name: "dns", Namespace: "infra", Policy: manifest.DependsPerNamespace}}
	if got := manifest.DependsOf(app); !reflect.DeepEqual(got, want) {
		t.Errorf("DependsOf:\n got %+v\nwant %+v", got, want)
	}
}

// An application, a process and a deployment name their dependencies in
// spec.template.spec.depends; a reference to a depends object that is not
// stored is refused at the field, like a missing hook template.
func TestValidateDependsRefs(t *testing.T) {
	const D = "spec.template.spec.depends"
	tests := []struct {
		name string
		refs []manifest.DependsRef
		want []string
	}{
		{"stored, both policies", []manifest.DependsRef{{Name: "logagent", Policy: manifest.DependsPerNode},
			{Name: "logagent", Namespace: "infra", Policy: manifest.DependsPerNamespace}}, nil},
		{"not stored", []manifest.DependsRef{{Name: "nope", Policy: manifest.DependsPerNode}},
			[]string{D + `[0].name: depends "nope" not found in namespace "ns-a"`}},
		{"not stored in the namespace named", []manifest.DependsRef{{Name: "logagent", Namespace: "ns-b", Policy: manifest.DependsPerNode}},
			[]string{D + `[0].name: depends "logagent" not found in namespace "ns-b"`}},
		{"policy", []manifest.DependsRef{{Name: "logagent", Policy: "cluster"}},
			[]string{D + `[0].policy: want one of node, namespace, got "cluster"`}},
		{"names", []manifest.DependsRef{{Policy: manifest.DependsPerNode}, {Name: "logagent", Namespace: "NS", Policy: manifest.DependsPerNode}},
			[]string{D + "[0].name: required", D + "[1].namespace: " + nameRule + `"NS"`, D + `[1].name: depends "logagent" not found in namespace "NS"`}},
		{"twice", []manifest.DependsRef{{Name: "logagent", Policy: manifest.DependsPerNode}, {Name: "logagent", Namespace: "ns-a", Policy: manifest.DependsPerNamespace}},
			[]string{D + `[1].name: duplicate reference to depends ns-a/logagent (also ` + D + `[0])`}},
	}
	r := manifesttest.NewResolver()
	infra := manifesttest.Depends()
	infra.Metadata.Namespace = "infra"
	r.DependsList = append(r.DependsList, infra)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := manifesttest.Application()
			app.Spec.Template.Spec.Depends = tt.refs
			proc := manifesttest.Process()
			proc.Spec.Template.Spec.Depends = tt.refs
			dep := processDeployment()
			dep.Spec.Template.Spec.Depends = tt.refs
			for _, obj := range []manifest.Object{app, proc, dep, manifesttest.Deployment()} {
				want := tt.want
				if d, ok := obj.(*manifest.Deployment); ok && len(d.Spec.Template.Spec.Processes) == 0 {
					want = nil // the container deployment names none
				}
				if got := messages(obj.Validate(r)); !reflect.DeepEqual(got, want) {
					t.Errorf("%s: Validate:\n got %q\nwant %q", obj.Kind(), got, want)
				}
			}
		})
	}
	// Without a resolver (the stored manifest read back) only the shape
	// is checked.
	proc := manifesttest.Process()
	proc.Spec.Template.Spec.Depends = []manifest.DependsRef{{Name: "nope", Policy: manifest.DependsPerNode}}
	if errs := proc.Validate(nil); len(errs) > 0 {
		t.Errorf("without a resolver: %q", errs.Messages())
	}
}

// A process deployment keeps its depends through JSON (its template is
// written without the containers' fields).
func TestDeploymentDependsRoundTrip(t *testing.T) {
	d := processDeployment()
	d.Spec.Template.Spec.Depends = []manifest.DependsRef{{Name: "logagent", Namespace: "ns-a", Policy: manifest.DependsPerNamespace}}
	data, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	back := mustParse(t, data)
	if got := manifest.DependsOf(back); !reflect.DeepEqual(got, d.Spec.Template.Spec.Depends) {
		t.Errorf("after a round trip: %+v", got)
	}
	w, _ := manifest.Workload(back)
	if got := manifest.DependsOf(w); !reflect.DeepEqual(got, d.Spec.Template.Spec.Depends) {
		t.Errorf("its workload: %+v", got)
	}
}

// Pod is the deployment of one dependency pod: one instance on the named
// agent, updated in place, its own template without depends.
func TestDependsPod(t *testing.T) {
	d := manifesttest.Depends()
	pod := d.Pod(manifest.ObjectMeta{Name: "logagent-host-1-abc123", Namespace: "ns-a"}, "host-1")
	if errs := pod.Validate(nil); len(errs) > 0 {
		t.Fatalf("Validate: %q", errs.Messages())
	}
	want := []constraint.UnionData{{Name: "hostname", Operate: constraint.Cluster, Type: constraint.TypeText, Text: &constraint.TextValue{Value: "host-1"}}}
	if pod.Constraint == nil || !reflect.DeepEqual(pod.Constraint.IntersectionItems[0].UnionData, want) {
		t.Errorf("constraint: %+v", pod.Constraint)
	}
	us := manifest.UpdateStrategyOf(pod)
	if pod.Spec.Instance != 1 || us.Type != manifest.UpdateInPlace || us.MaxUnavailable.Resolve(1, false) != 1 {
		t.Errorf("instances %d, strategy %+v", pod.Spec.Instance, us)
	}
	if pod.RestartPolicy.Policy != manifest.RestartAlways || !reflect.DeepEqual(pod.Spec.Template.Spec.Processes, d.Spec.Template.Spec.Processes) {
		t.Errorf("the depends object's policy and template: %+v", pod)
	}
	pod.Spec.Template.Spec.Processes[0].StartCmd = "changed"
	if d.Spec.Template.Spec.Processes[0].StartCmd == "changed" {
		t.Error("Pod shares the depends object's template")
	}
}
