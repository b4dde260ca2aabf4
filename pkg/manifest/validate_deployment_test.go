package manifest_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest/manifesttest"
)

func intPtr(n int) *int { return &n }

// processDeployment is the fixture deployment with the process fixture's
// template: a deployment of processes.
func processDeployment() *manifest.Deployment {
	d := manifesttest.Deployment()
	d.Spec.Template.Spec = manifest.DeploymentTemplateSpec{Processes: manifesttest.Process().Spec.Template.Spec.Processes}
	return d
}

func TestValidateDeployment(t *testing.T) {
	const R = "spec.strategy.rollingupdate"
	const U = "spec.updateStrategy"
	seed004 := func(d *manifest.Deployment) *manifest.UpdateStrategy {
		d.Spec.Strategy = nil
		d.Spec.UpdateStrategy = &manifest.UpdateStrategy{Type: manifest.UpdateInPlace, Partition: 1, MaxUnavailable: manifest.Count(2),
			InPlaceUpdateStrategy: &manifest.InPlaceUpdateStrategy{GracePeriodSeconds: 30},
			Canary: &manifest.CanaryStrategy{Steps: []manifest.CanaryStep{
				{Partition: intPtr(3)}, {Pause: &manifest.PauseStep{}}, {Partition: intPtr(1)}, {Pause: &manifest.PauseStep{Duration: intPtr(60)}},
			}}}
		return d.Spec.UpdateStrategy
	}
	tests := []struct {
		name   string
		mutate func(d *manifest.Deployment)
		want   []string
	}{
		{"the fixture", func(*manifest.Deployment) {}, nil},
		{"metadata checked", func(d *manifest.Deployment) { d.Metadata.Namespace = "" }, []string{"metadata.namespace: required"}},
		{"restart policy checked", func(d *manifest.Deployment) { d.RestartPolicy.Backoff = -1 }, []string{"restartPolicy.backoff: must be ≥ 0, got -1"}},
		{"instance negative", func(d *manifest.Deployment) { d.Spec.Instance = -1 }, []string{"spec.instance: must be ≥ 0, got -1"}},
		{"strategy type required", func(d *manifest.Deployment) { d.Spec.Strategy.Type = "" }, []string{"spec.strategy.type: required"}},
		{"strategy type unknown", func(d *manifest.Deployment) { d.Spec.Strategy.Type = "Recreate" },
			[]string{`spec.strategy.type: want one of RollingUpdate, InplaceUpdate, HotPatchUpdate, got "Recreate"`}},
		{"rollingupdate optional", func(d *manifest.Deployment) { d.Spec.Strategy.RollingUpdate = nil }, nil},
		{"no strategy at all: RollingUpdate with defaults", func(d *manifest.Deployment) { d.Spec.Strategy = nil }, nil},
		{"maxUnavilable negative", func(d *manifest.Deployment) { d.Spec.Strategy.RollingUpdate.MaxUnavailable = manifest.Count(-1) },
			[]string{R + ".maxUnavilable: want a count ≥ 0 or a percentage from 0% to 100%, got -1"}},
		{"maxSurge over 100%", func(d *manifest.Deployment) { d.Spec.Strategy.RollingUpdate.MaxSurge = manifest.Percent(150) },
			[]string{R + ".maxSurge: want a count ≥ 0 or a percentage from 0% to 100%, got 150%"}},
		{"maxSurge and maxUnavilable 0", func(d *manifest.Deployment) {
			d.Spec.Strategy.RollingUpdate.MaxSurge, d.Spec.Strategy.RollingUpdate.MaxUnavailable = manifest.Count(0), manifest.Percent(0)
		}, []string{R + ".maxSurge: maxSurge and maxUnavilable cannot both be 0: the update could never progress"}},
		{"upgradeDuration negative", func(d *manifest.Deployment) { d.Spec.Strategy.RollingUpdate.UpgradeDuration = -1 },
			[]string{R + ".upgradeDuration: must be ≥ 0, got -1"}},
		{"rollingOrder DeleteFirst", func(d *manifest.Deployment) { d.Spec.Strategy.RollingUpdate.RollingOrder = manifest.RollingDeleteFirst }, nil},
		{"rollingOrder unknown", func(d *manifest.Deployment) { d.Spec.Strategy.RollingUpdate.RollingOrder = "Random" },
			[]string{R + `.rollingOrder: want one of CreateFirst, DeleteFirst, got "Random"`}},
		{"template namespace checked", func(d *manifest.Deployment) { d.Spec.Template.Metadata.Namespace = "NS" },
			[]string{"spec.template.metadata.namespace: " + nameRule + `"NS"`}},
		{"template containers checked", func(d *manifest.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "" },
			[]string{C + ".image: required"}},
		{"both strategy shapes", func(d *manifest.Deployment) {
			d.Spec.UpdateStrategy = &manifest.UpdateStrategy{Type: manifest.UpdateRolling}
		},
			[]string{"spec.strategy: give spec.strategy (the original's form) or spec.updateStrategy, not both"}},
		{"seed 004's example", func(d *manifest.Deployment) { seed004(d) }, nil},
		{"partition negative", func(d *manifest.Deployment) { seed004(d).Partition = -1 }, []string{U + ".partition: must be ≥ 0, got -1"}},
		{"allocatedTimeoutSeconds a day", func(d *manifest.Deployment) { seed004(d).AllocatedTimeoutSeconds = 86400 }, nil},
		{"allocatedTimeoutSeconds negative", func(d *manifest.Deployment) { seed004(d).AllocatedTimeoutSeconds = -1 },
			[]string{U + ".allocatedTimeoutSeconds: must be ≥ 0, got -1"}},
		{"allocatedTimeoutSeconds over a day", func(d *manifest.Deployment) { seed004(d).AllocatedTimeoutSeconds = 86401 },
			[]string{U + ".allocatedTimeoutSeconds: must be at most 86400, got 86401"}},
		{"grace negative", func(d *manifest.Deployment) { seed004(d).InPlaceUpdateStrategy.GracePeriodSeconds = -1 },
			[]string{U + ".inPlaceUpdateStrategy.gracePeriodSeconds: must be ≥ 0, got -1"}},
		{"step with two kinds", func(d *manifest.Deployment) { seed004(d).Canary.Steps[0].Pause = &manifest.PauseStep{} },
			[]string{U + ".canary.steps[0]: a step is exactly one of partition, pause and hook"}},
		{"empty step", func(d *manifest.Deployment) { seed004(d).Canary.Steps[0] = manifest.CanaryStep{} },
			[]string{U + ".canary.steps[0]: a step is exactly one of partition, pause and hook"}},
		{"no steps", func(d *manifest.Deployment) { seed004(d).Canary.Steps = nil }, []string{U + ".canary.steps: required"}},
		{"pause duration 0", func(d *manifest.Deployment) { seed004(d).Canary.Steps[3].Pause.Duration = intPtr(0) },
			[]string{U + ".canary.steps[3].pause.duration: want seconds > 0, or no duration to pause until promote, got 0"}},
		{"hook step (seed 004)", func(d *manifest.Deployment) {
			s := seed004(d)
			s.Canary.Steps = append(s.Canary.Steps, manifest.CanaryStep{Hook: &manifest.HookStep{TemplateName: "test"}})
			d.Spec.PreDeleteUpdateStrategy = &manifest.PreDeleteUpdateStrategy{Hook: &manifest.HookStep{TemplateName: "test"}}
		}, nil},
		{"hook template missing", func(d *manifest.Deployment) {
			s := seed004(d)
			s.Canary.Steps = append(s.Canary.Steps, manifest.CanaryStep{Hook: &manifest.HookStep{TemplateName: "nope"}})
		}, []string{U + `.canary.steps[4].hook.templateName: hook template "nope" not found in namespace "ns-a"`}},
		{"hook argument unknown", func(d *manifest.Deployment) {
			d.Spec.PreDeleteUpdateStrategy = &manifest.PreDeleteUpdateStrategy{Hook: &manifest.HookStep{TemplateName: "test",
				Args: []manifest.HookArg{{Name: "age", Value: "3"}}}}
		}, []string{`spec.preDeleteUpdateStrategy.hook.args[0].name: hook template test has no argument "age"`}},
		{"predelete timeout negative", func(d *manifest.Deployment) {
			d.Spec.PreDeleteUpdateStrategy = &manifest.PreDeleteUpdateStrategy{TimeoutSeconds: -1}
		}, []string{"spec.preDeleteUpdateStrategy.timeoutSeconds: must be ≥ 0, got -1"}},
		{"hook without template", func(d *manifest.Deployment) {
			d.Spec.PreDeleteUpdateStrategy = &manifest.PreDeleteUpdateStrategy{Hook: &manifest.HookStep{}}
		}, []string{"spec.preDeleteUpdateStrategy.hook.templateName: required"}},
		{"hot-patch signal", func(d *manifest.Deployment) {
			s := seed004(d)
			s.Type, s.HotPatchUpdateStrategy = manifest.UpdateHotPatch, &manifest.HotPatchUpdateStrategy{Signal: "hup"}
		}, nil},
		{"hot-patch unknown signal", func(d *manifest.Deployment) {
			seed004(d).HotPatchUpdateStrategy = &manifest.HotPatchUpdateStrategy{Signal: "SIGNOPE"}
		}, []string{U + `.hotPatchUpdateStrategy.signal: unknown signal "SIGNOPE" (want a name such as SIGHUP, or a number)`}},
		{"hot-patch signal and command", func(d *manifest.Deployment) {
			seed004(d).HotPatchUpdateStrategy = &manifest.HotPatchUpdateStrategy{Signal: "1", Command: []string{"reload"}}
		}, []string{U + ".hotPatchUpdateStrategy.command: give signal or command, not both"}},
		{"containers and processes", func(d *manifest.Deployment) {
			d.Spec.Template.Spec.Processes = manifesttest.Process().Spec.Template.Spec.Processes
		}, []string{"spec.template.spec.processes: a template holds containers or processes, not both"}},
		{"neither", func(d *manifest.Deployment) { d.Spec.Template.Spec.Containers = nil },
			[]string{"spec.template.spec.containers: required: containers (Docker pods) or processes"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := manifesttest.Deployment()
			tt.mutate(d)
			if got := messages(d.Validate(manifesttest.NewResolver())); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Validate:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// A deployment of processes (new with bcs-mesos) is validated as the
// process manifest it runs as, at the deployment's paths.
func TestValidateProcessDeployment(t *testing.T) {
	d := processDeployment()
	if errs := d.Validate(manifesttest.NewResolver()); len(errs) > 0 {
		t.Fatalf("valid process deployment: %v", errs)
	}
	d.Spec.Template.Spec.Processes[0].StartCmd = ""
	d.Spec.Template.Spec.NetworkMode = "BRIDGE"
	d.Spec.Template.Metadata.Name = "Bad"
	want := []string{
		"spec.template.spec.processes[0].startCmd: required",
		"spec.template.metadata.name: " + nameRule + `"Bad"`,
		"spec.template.spec.networkMode: processes run in the agent's network: networkMode, networkType and netLimit are for containers",
	}
	if got := messages(d.Validate(manifesttest.NewResolver())); !reflect.DeepEqual(got, want) {
		t.Errorf("Validate:\n got %q\nwant %q", got, want)
	}
	// Stored and shown without the containers' fields.
	if data, _ := json.Marshal(processDeployment()); strings.Contains(string(data), `"containers"`) || strings.Contains(string(data), `"networkMode"`) {
		t.Errorf("a process deployment encodes container fields: %s", data)
	}
	back, err := manifest.Parse(mustMarshal(t, processDeployment()))
	if err != nil || !reflect.DeepEqual(back.(*manifest.Deployment).Spec.Template.Spec.Processes, processDeployment().Spec.Template.Spec.Processes) {
		t.Errorf("round trip: %v", err)
	}
	w, err := manifest.Workload(d)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := w.(*manifest.Process)
	if !ok || !reflect.DeepEqual(p.Metadata, d.Metadata) || p.Spec.Instance != d.Spec.Instance || p.Spec.Template.Spec.Processes[0].ProcName != d.Spec.Template.Spec.Processes[0].ProcName {
		t.Errorf("workload %#v", w)
	}
}

// The original's deployment.json names no updateStrategy: it reads as
// RollingUpdate with its rollingupdate fields; a manifest with no
// strategy at all gets RollingUpdate, as the original's own manifests
// expect, not "spec.strategy.type: required".
func TestUpdateStrategyOf(t *testing.T) {
	dep := mustParse(t, readFixture(t, "deployment.json")).(*manifest.Deployment)
	got := manifest.UpdateStrategyOf(dep)
	want := manifest.UpdateStrategy{Type: manifest.UpdateRolling, MaxUnavailable: manifest.Count(1), MaxSurge: manifest.Count(1),
		UpgradeDuration: 60, RollingOrder: manifest.RollingCreateFirst}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("original strategy: got %+v, want %+v", got, want)
	}
	bare := mustParse(t, []byte(`{"apiVersion":"v4","kind":"deployment","metadata":{"name":"d"},
		"spec":{"instance":1,"template":{"spec":{"processes":[{"procName":"p","workPath":"${work_base_dir}/${namespace}.${processname}.${instanceid}","pidFile":"${workPath}/pid","startCmd":"s"}]}}}}`))
	if errs := bare.Validate(nil); len(errs) > 0 {
		t.Fatalf("no strategy: %v", errs)
	}
	if got := manifest.UpdateStrategyOf(bare); got.Type != manifest.UpdateRolling || got.MaxUnavailable != nil {
		t.Errorf("no strategy: %+v", got)
	}
	if got := manifest.UpdateStrategyOf(manifesttest.Process()); got.Type != manifest.UpdateRolling {
		t.Errorf("process: %+v", got)
	}
}

func TestIntOrPercent(t *testing.T) {
	for _, tt := range []struct {
		json          string
		want          manifest.IntOrPercent
		down, up, err string
	}{
		{json: `2`, want: manifest.IntOrPercent{Value: 2}},
		{json: `"25%"`, want: manifest.IntOrPercent{Value: 25, Percent: true}},
		{json: `"25"`, err: `want a number or a percentage such as "25%", got "25"`},
		{json: `true`, err: `want a number or a percentage such as "25%", got true`},
	} {
		var q manifest.IntOrPercent
		err := json.Unmarshal([]byte(tt.json), &q)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("%s: err %v, want %q", tt.json, err, tt.err)
			}
			continue
		}
		if err != nil || q != tt.want {
			t.Errorf("%s: %+v %v", tt.json, q, err)
		}
		back, _ := json.Marshal(q)
		if string(back) != tt.json {
			t.Errorf("%s: marshals as %s", tt.json, back)
		}
	}
	// Seed 004 / Kubernetes rounding: maxUnavailable down, maxSurge up.
	q := manifest.Percent(25)
	if d, u := q.Resolve(10, false), q.Resolve(10, true); d != 2 || u != 3 {
		t.Errorf("25%% of 10: down %d up %d", d, u)
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
