package scheduler_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	sched "github.com/mesos/mesos-go/api/v1/lib/scheduler"

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

// benchProcess is the benchmarks' process application of n instances.
func benchProcess(n int) *manifest.Process {
	p := manifesttest.Process()
	p.Metadata.Namespace, p.Metadata.Name = "bench", "game"
	p.Spec.Instance = n
	p.Constraint = nil
	proc := &p.Spec.Template.Spec.Processes[0]
	proc.Ports, proc.Env, proc.HealthChecks, proc.Secrets, proc.ConfigMaps = nil, nil, nil, nil, nil
	proc.StartCmd = "./start.sh"
	proc.Resources.Limits = manifest.ResourceList{CPU: "0.01", Memory: "1"}
	return p
}

// BenchmarkRollingUpdate100k is the core's cost of a rolling update of
// 100 applications of 1,000 running instances on 5,000 agents (at most
// 25 % of each unavailable, within the default launch budget), driven as
// the driver and the dev master would: every kill answered TASK_KILLED,
// every launch TASK_STARTING then TASK_RUNNING, 256 status updates a step
// (what a gathering takes at a rollout's pace), each step followed by an
// offer of each agent a task ended on (the master's allocation after
// resources were freed), or of every agent when none did. It reports the core's time per
// replacement (ns/replacement) — a rollout's CPU in bcs-scheduler,
// without the store, the API or the master — and the task group records
// it wrote per replacement (writes/replacement).
func BenchmarkRollingUpdate100k(b *testing.B) {
	const agents, apps, n = 5000, 100, 1000
	core, _ := launchedCoreOn(b, agents, apps, n, false)
	r := &rollingDriver{core: core, now: time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC), agents: agents, freed: map[string]bool{}}
	r.step(scheduler.LaunchBudget{Max: scheduler.DefaultMaxLaunching})
	r.writes = 0
	b.ResetTimer()
	for it := range b.N {
		p := benchProcess(n)
		p.Spec.Template.Spec.Processes[0].Env = []manifest.EnvVar{{Name: "BUILD", Value: fmt.Sprint(it + 2)}}
		spec, _ := json.Marshal(p)
		for i := range apps {
			r.step(scheduler.AppChanged{App: &registry.App{Namespace: "bench", Name: fmt.Sprint("game-", i), Kind: manifest.KindProcess,
				Version: uint64(it + 2), Instances: n, Spec: spec, State: registry.AppDeploying}})
		}
		r.until(b, (it+1)*apps*n)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*apps*n), "ns/replacement")
	b.ReportMetric(float64(r.writes)/float64(b.N*apps*n), "writes/replacement")
}

// rollingDriver answers a core's kills and launches as a master whose
// tasks start at once would.
type rollingDriver struct {
	core     *scheduler.Core
	now      time.Time
	agents   int
	statuses []mesos.TaskStatus
	freed    map[string]bool // agents a task ended on since the last offers
	offers   int
	running  int // launches answered TASK_RUNNING
	writes   int // task group records written
}

func (r *rollingDriver) step(in scheduler.Input) {
	r.now = r.now.Add(time.Millisecond)
	out := r.core.Step(r.now, in)
	status := func(task string, agent *mesos.AgentID, state mesos.TaskState) {
		r.statuses = append(r.statuses, mesos.TaskStatus{TaskID: mesos.TaskID{Value: task}, AgentID: agent, State: state.Enum(), UUID: []byte{1}})
	}
	for _, w := range out.Writes {
		if w.TaskGroup != nil {
			r.writes++
		}
	}
	for _, c := range out.Calls {
		switch c.Type {
		case sched.Call_KILL:
			status(c.Kill.TaskID.Value, c.Kill.AgentID, mesos.TASK_KILLED)
			r.freed[c.Kill.AgentID.Value] = true
		case sched.Call_ACCEPT:
			for _, op := range c.Accept.Operations {
				if op.LaunchGroup == nil {
					continue
				}
				for _, t := range op.LaunchGroup.TaskGroup.Tasks {
					status(t.TaskID.Value, &t.AgentID, mesos.TASK_STARTING)
					status(t.TaskID.Value, &t.AgentID, mesos.TASK_RUNNING)
					r.running++
				}
			}
		}
	}
}

// until steps the status updates and offers until running launches were
// answered, failing when a round of offers of every agent launches
// nothing.
func (r *rollingDriver) until(b *testing.B, running int) {
	for idle := 0; r.running < running || len(r.statuses) > 0; {
		before := r.running
		if len(r.statuses) > 0 {
			batch := r.statuses[:min(len(r.statuses), 256)]
			r.statuses = r.statuses[len(batch):]
			r.step(scheduler.StatusUpdates{Statuses: batch})
		}
		agents := slices.Sorted(maps.Keys(r.freed))
		clear(r.freed)
		if len(agents) == 0 && len(r.statuses) > 0 {
			continue
		}
		if len(agents) == 0 {
			for i := range r.agents {
				agents = append(agents, fmt.Sprint("agent-", i))
			}
			idle++
		}
		var offers []mesos.Offer
		for _, agent := range agents {
			r.offers++
			offers = append(offers, agentOffer(fmt.Sprint("r", r.offers), agent))
		}
		r.step(scheduler.OffersIn{Offers: offers})
		if r.running > before || len(r.statuses) > 0 {
			idle = 0
		}
		if idle > 3 {
			b.Fatalf("%d of %d launches answered, and offers launch nothing more", r.running, running)
		}
	}
}

// agentOffer is an offer of the benchmarks' agent, ample for every
// instance it could be given.
func agentOffer(id, agent string) mesos.Offer {
	return mesos.Offer{
		ID: mesos.OfferID{Value: id}, AgentID: mesos.AgentID{Value: agent},
		FrameworkID: mesos.FrameworkID{Value: "fw"}, Hostname: strings.Replace(agent, "agent-", "host-", 1),
		Resources: []mesos.Resource{
			{Name: "cpus", Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: 1000}},
			{Name: "mem", Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: 1 << 20}},
			{Name: "disk", Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: 1 << 20}},
		},
	}
}

// launchedCore is a core with apps process applications of n instances
// each, every one launched on one of 100 agents and running; with
// depends, each uses the dependency pod of its agent, stored.
func launchedCore(b testing.TB, apps, n int, depends bool) (*scheduler.Core, []launchedTask) {
	b.Helper()
	return launchedCoreOn(b, 100, apps, n, depends)
}

// launchedCoreOn is launchedCore on agents agents.
func launchedCoreOn(b testing.TB, agents, apps, n int, depends bool) (*scheduler.Core, []launchedTask) {
	b.Helper()
	core, err := scheduler.NewCore(scheduler.Config{ProcessExecutor: scheduler.ExecutorBinary{URI: "file:///bcs-process-executor"},
		MaxLaunching: max(apps*n, scheduler.DefaultMaxLaunching)})
	if err != nil {
		b.Fatal(err)
	}
	now := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	p := benchProcess(n)
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
	for i := range agents {
		offers = append(offers, agentOffer(fmt.Sprint("o", i), fmt.Sprint("agent-", i)))
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
