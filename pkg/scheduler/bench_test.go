package scheduler_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest/manifesttest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/scheduler"
)

// BenchmarkStatusUpdate is the core's cost of one status update of an
// instance of a large application: the update itself, the instance's
// write, and the rollout planned again (pkg/rollout), which is linear in
// the application's instances. Run with -bench StatusUpdate.
func BenchmarkStatusUpdate(b *testing.B) {
	benchmarkStatusUpdate(b, false)
}

// The same with every instance using a dependency pod on its
// agent (100 pods): the users are counted every step.
func BenchmarkStatusUpdateWithDepends(b *testing.B) {
	benchmarkStatusUpdate(b, true)
}

func benchmarkStatusUpdate(b *testing.B, depends bool) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			core, tasks := launchedCore(b, 1, n, depends)
			now := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
			healthy := []bool{true, false}
			b.ResetTimer()
			for i := range b.N {
				h := healthy[i%2]
				t := tasks[i%len(tasks)]
				core.Step(now, scheduler.StatusUpdates{Statuses: []mesos.TaskStatus{{
					TaskID: mesos.TaskID{Value: t.task}, AgentID: &mesos.AgentID{Value: t.agent},
					State: mesos.TASK_RUNNING.Enum(), Healthy: &h, UUID: []byte{1},
				}}})
			}
		})
	}
}

// BenchmarkFleetStatusUpdate is one status update in a large fleet: 100
// applications of 100 instances each, all running. A step's cost should
// follow what it changed (one instance, its application), not the fleet.
func BenchmarkFleetStatusUpdate(b *testing.B) {
	core, tasks := launchedCore(b, 100, 100, false)
	now := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	healthy := []bool{true, false}
	b.ResetTimer()
	for i := range b.N {
		h := healthy[i%2]
		t := tasks[(i*7919)%len(tasks)]
		core.Step(now, scheduler.StatusUpdates{Statuses: []mesos.TaskStatus{{
			TaskID: mesos.TaskID{Value: t.task}, AgentID: &mesos.AgentID{Value: t.agent},
			State: mesos.TASK_RUNNING.Enum(), Healthy: &h, UUID: []byte{1},
		}}})
	}
}

// BenchmarkFleetSnapshot100k: the view of 1,000 applications of 100
// running instances each, as the autoscaler asks for it every interval
// (Driver.Fleet runs Core.Fleet on the loop).
func BenchmarkFleetSnapshot100k(b *testing.B) {
	core, _ := launchedCore(b, 1000, 100, false)
	refs := make([]scheduler.AppRef, 1000)
	for i := range refs {
		refs[i] = scheduler.AppRef{Namespace: "bench", Name: fmt.Sprint("game-", i)}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		views := core.Fleet(refs)
		if n := len(views[999].Instances); n != 100 || !views[999].Instances[99].Ready {
			b.Fatalf("%d instances in the last view, want 100 ready", n)
		}
	}
}

type launchedTask struct{ task, agent string }

// launchedCore is a core with apps process applications of n instances
// each, every one launched on one of 100 agents and running; with
// depends, each uses the dependency pod of its agent, stored.
func launchedCore(b testing.TB, apps, n int, depends bool) (*scheduler.Core, []launchedTask) {
	b.Helper()
	core, err := scheduler.NewCore(scheduler.Config{ProcessExecutor: scheduler.ExecutorBinary{URI: "file:///bcs-process-executor"},
		MaxLaunching: max(apps*n, scheduler.DefaultMaxLaunching)})
	if err != nil {
		b.Fatal(err)
	}
	now := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	p := manifesttest.Process()
	p.Metadata.Namespace, p.Metadata.Name = "bench", "game"
	p.Spec.Instance = n
	p.Constraint = nil
	proc := &p.Spec.Template.Spec.Processes[0]
	proc.Ports, proc.Env, proc.HealthChecks, proc.Secrets, proc.ConfigMaps = nil, nil, nil, nil, nil
	proc.StartCmd = "./start.sh"
	proc.Resources.Limits = manifest.ResourceList{CPU: "0.01", Memory: "1"}
	restore := scheduler.Restore{}
	if depends {
		d := manifesttest.Depends()
		d.Metadata.Namespace = "bench"
		restore.Objects = []manifest.Object{d}
		p.Spec.Template.Spec.Depends = []manifest.DependsRef{{Name: "logagent", Policy: manifest.DependsPerNode}}
	}
	spec, _ := json.Marshal(p)
	core.Step(now, restore)
	for i := range apps {
		name := "game"
		if apps > 1 {
			name = fmt.Sprint("game-", i)
		}
		core.Step(now, scheduler.AppChanged{App: &registry.App{Namespace: "bench", Name: name, Kind: manifest.KindProcess,
			Version: 1, Instances: n, Spec: spec, State: registry.AppDeploying}})
	}
	core.Step(now, scheduler.Subscribed{FrameworkID: "fw"})
	var offers []mesos.Offer
	for i := range 100 {
		offers = append(offers, mesos.Offer{
			ID: mesos.OfferID{Value: fmt.Sprint("o", i)}, AgentID: mesos.AgentID{Value: fmt.Sprint("agent-", i)},
			FrameworkID: mesos.FrameworkID{Value: "fw"}, Hostname: fmt.Sprint("host-", i),
			Resources: []mesos.Resource{
				{Name: "cpus", Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: 1000}},
				{Name: "mem", Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: 1 << 20}},
				{Name: "disk", Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: 1 << 20}},
			},
		})
	}
	out := core.Step(now, scheduler.OffersIn{Offers: offers})
	var tasks []launchedTask
	for _, w := range out.Writes {
		if tg := w.TaskGroup; tg != nil && tg.AgentID != "" {
			tasks = append(tasks, launchedTask{tg.Tasks[0].ID, tg.AgentID})
		}
		if pod := w.DependencyPod; pod != nil { // stored, as the driver would
			rec := *pod
			rec.Version, rec.State = 1, registry.AppDeploying
			core.Step(now, scheduler.AppChanged{App: &rec})
		}
	}
	if len(tasks) != apps*n {
		b.Fatalf("%d of %d launched", len(tasks), apps*n)
	}
	for _, t := range tasks {
		core.Step(now, scheduler.StatusUpdates{Statuses: []mesos.TaskStatus{{TaskID: mesos.TaskID{Value: t.task},
			AgentID: &mesos.AgentID{Value: t.agent}, State: mesos.TASK_RUNNING.Enum(), UUID: []byte{1}}}})
	}
	return core, tasks
}
