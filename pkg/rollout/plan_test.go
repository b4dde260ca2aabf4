package rollout_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/rollout"
)

var t0 = time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)

// fleet is a model of the instances the scheduler core keeps: it applies
// a plan's moves and surge the way the core does (a moved instance is
// updating, then runs its target not yet ready, then ready), one phase
// per settle call.
type fleet struct {
	t        *testing.T
	replicas int
	state    rollout.State
	strategy rollout.Strategy
	now      time.Time
	paused   bool
	promote  int
	hook     *rollout.HookVerdict
	insts    map[int]*member
	last     rollout.Result
}

type member struct {
	rev      rollout.Rev // what it runs
	ready    bool
	updating bool
	to       rollout.Rev // where an update takes it
	down     bool        // crashed: not ready until relaunched
	held     bool        // allocated
}

// newFleet is n ready instances of stable revision 1 and a rollout to
// revision 2.
func newFleet(t *testing.T, n int, s rollout.Strategy) *fleet {
	f := &fleet{t: t, replicas: n, strategy: s, now: t0, insts: map[int]*member{},
		state: rollout.State{StableVersion: 1, UpdateVersion: 1}.Begin(2, rollout.CauseUpdate, 0, t0)}
	for i := range n {
		f.insts[i] = &member{rev: rollout.RevStable, ready: true}
	}
	return f
}

func (f *fleet) input() rollout.Input {
	in := rollout.Input{Now: f.now, Strategy: f.strategy, Replicas: f.replicas, State: f.state, Paused: f.paused,
		Promote: f.promote, Hook: f.hook}
	for _, i := range f.indexes() {
		m := f.insts[i]
		in.Instances = append(in.Instances, rollout.Instance{Index: i, ID: i, AtUpdate: m.rev == rollout.RevUpdate,
			AtStable: m.rev == rollout.RevStable, Ready: m.ready && !m.updating, Updating: m.updating, Held: m.held})
	}
	return in
}

func (f *fleet) indexes() []int {
	var out []int
	for i := range f.insts {
		out = append(out, i)
	}
	slices.Sort(out)
	return out
}

// plan runs Plan and applies its moves and surge.
func (f *fleet) plan() rollout.Result {
	f.t.Helper()
	res := rollout.Plan(f.input())
	f.state, f.last, f.promote, f.hook = res.State, res, 0, nil
	for _, mv := range res.Moves {
		m := f.insts[mv.Index]
		if m.updating {
			f.t.Fatalf("instance %d moved twice", mv.Index)
		}
		m.updating, m.to, m.ready = true, mv.To, false
	}
	for i := range f.insts {
		if i >= f.replicas+res.Surge {
			delete(f.insts, i)
		}
	}
	for i := f.replicas; i < f.replicas+res.Surge; i++ {
		if f.insts[i] == nil {
			f.insts[i] = &member{rev: res.Target(i)}
		}
	}
	f.check()
	return res
}

// settle advances every instance one phase: an update lands (not ready
// yet), a landed or new instance becomes ready.
func (f *fleet) settle() {
	for _, m := range f.insts {
		switch {
		case m.updating:
			m.updating, m.rev, m.ready, m.down = false, m.to, false, false
		case m.down:
			m.down = false // relaunched: ready next time
		default:
			m.ready = true
		}
	}
	f.check()
}

// check holds the budget at every instant (seed 004 maxUnavailable and
// maxSurge): at least replicas − maxUnavailable ready, at most replicas +
// maxSurge instances.
func (f *fleet) check() {
	f.t.Helper()
	maxU, maxS := f.strategy.Budget(f.replicas)
	ready, down := 0, 0
	for _, m := range f.insts {
		if m.ready && !m.updating {
			ready++
		}
		if m.down {
			down++
		}
	}
	if ready < f.replicas-maxU-down {
		f.t.Fatalf("%d ready of %d, maxUnavailable %d (%d crashed on their own)", ready, f.replicas, maxU, down)
	}
	if len(f.insts) > f.replicas+maxS {
		f.t.Fatalf("%d instances, replicas %d maxSurge %d", len(f.insts), f.replicas, maxS)
	}
}

// run plans and settles until the rollout completes or n rounds passed,
// returning the indexes moved per round.
func (f *fleet) run(n int) [][]int {
	f.t.Helper()
	var rounds [][]int
	for range n {
		res := f.plan()
		if res.Completed || len(res.Moves) == 0 && f.quiet() && res.Status.Phase != rollout.PhaseProgressing {
			return rounds
		}
		if len(res.Moves) > 0 {
			rounds = append(rounds, rollout.Indexes(res.Moves))
		}
		f.settle()
	}
	return rounds
}

// quiet reports whether no instance is on its way anywhere.
func (f *fleet) quiet() bool {
	for _, m := range f.insts {
		if m.updating || !m.ready {
			return false
		}
	}
	return true
}

func (f *fleet) revs() string {
	s := ""
	for _, i := range f.indexes() {
		s += map[rollout.Rev]string{rollout.RevUpdate: "u", rollout.RevStable: "s"}[f.insts[i].rev]
	}
	return s
}

func rolling(maxU, maxS *manifest.IntOrPercent) rollout.Strategy {
	us := &manifest.UpdateStrategy{Type: manifest.UpdateRolling, MaxUnavailable: maxU, MaxSurge: maxS}
	return rollout.StrategyOf(&manifest.Deployment{Spec: manifest.DeploymentSpec{UpdateStrategy: us}})
}

// Seed 004: "一共有 8 个实例,maxUnavailable 设置为 2 ,那么每批滚动或原地重启
// 2 个实例" — batches of maxUnavailable, highest IDs first.
func TestRollingBatchesOfMaxUnavailable(t *testing.T) {
	f := newFleet(t, 8, rolling(manifest.Count(2), nil))
	rounds := f.run(40)
	want := [][]int{{6, 7}, {4, 5}, {2, 3}, {0, 1}}
	if !reflect.DeepEqual(rounds, want) {
		t.Errorf("rounds %v, want %v", rounds, want)
	}
	if !f.last.Completed || f.state.StableVersion != 2 || f.last.Status.Phase != rollout.PhaseCompleted {
		t.Errorf("not completed: %+v", f.last.Status)
	}
	if f.revs() != "uuuuuuuu" {
		t.Errorf("revisions %s", f.revs())
	}
}

// The default budget: maxUnavailable 25% (rounded down, at least 1 when
// maxSurge is 0), maxSurge 0.
func TestDefaultBudget(t *testing.T) {
	s := rollout.StrategyOf(&manifest.Process{})
	for _, tt := range []struct{ replicas, maxU, maxS int }{{1, 1, 0}, {3, 1, 0}, {4, 1, 0}, {8, 2, 0}, {10, 2, 0}} {
		if u, sg := s.Budget(tt.replicas); u != tt.maxU || sg != tt.maxS {
			t.Errorf("replicas %d: %d/%d, want %d/%d", tt.replicas, u, sg, tt.maxU, tt.maxS)
		}
	}
	if u, sg := rolling(manifest.Count(0), manifest.Percent(25)).Budget(3); u != 0 || sg != 1 {
		t.Errorf("surge rounds up: %d/%d", u, sg)
	}
}

// Seed 004's maxSurge: "会在滚动更新前先多创建 maxSurge 数量的 pod ...
// 最后再删掉 maxSurge 数量的 pod" — with maxUnavailable 0 every instance
// stays ready: the surge instance comes first, the old ones go one by one
// behind it, and the surge instance goes at the end.
func TestSurgeFirstKeepsEveryReplicaReady(t *testing.T) {
	f := newFleet(t, 3, rolling(manifest.Count(0), manifest.Count(1)))
	res := f.plan()
	if res.Surge != 1 || len(res.Moves) != 0 {
		t.Fatalf("first plan: surge %d moves %v", res.Surge, res.Moves)
	}
	f.settle()
	rounds := f.run(30)
	if want := [][]int{{2}, {1}, {0}}; !reflect.DeepEqual(rounds, want) {
		t.Errorf("rounds %v, want %v", rounds, want)
	}
	if len(f.insts) != 3 || !f.last.Completed {
		t.Errorf("surge left or not completed: %d instances, %+v", len(f.insts), f.last.Status)
	}
}

// The original's rollingOrder DeleteFirst never goes above replicas.
func TestDeleteFirstDoesNotSurge(t *testing.T) {
	s := rolling(manifest.Count(1), manifest.Count(1))
	s.DeleteFirst = true
	f := newFleet(t, 3, s)
	if res := f.plan(); res.Surge != 0 || len(res.Moves) != 1 {
		t.Fatalf("surge %d moves %v", res.Surge, res.Moves)
	}
}

// An instance that is down anyway moves at once, whatever the budget.
func TestUnreadyInstancesMoveFree(t *testing.T) {
	f := newFleet(t, 4, rolling(manifest.Count(1), nil))
	f.insts[0].ready, f.insts[0].down = false, true
	f.insts[1].ready, f.insts[1].down = false, true
	res := f.plan()
	if got := rollout.Indexes(res.Moves); !reflect.DeepEqual(got, []int{0, 1}) {
		t.Errorf("moves %v, want the two down instances only (3 ready of 4 would break maxUnavailable 1)", got)
	}
}

// Seed 004: "partition ... 可参考 statefulset 的 partition": partition 2 of
// 4 updates exactly instances 2 and 3, and the rollout waits there.
func TestPartition(t *testing.T) {
	s := rolling(manifest.Count(1), nil)
	s.Partition = 2
	f := newFleet(t, 4, s)
	f.run(20)
	if f.revs() != "ssuu" {
		t.Errorf("revisions %s, want ssuu", f.revs())
	}
	st := f.last.Status
	if f.last.Completed || st.Phase != rollout.PhasePaused || st.CurrentRevision != 1 || st.Updated != 2 || st.Conditions[2].Reason != "PartitionReached" {
		t.Errorf("status %+v", st)
	}
	// Lowering the partition (a new revision of the same template in
	// the scheduler) lets the rest go.
	f.strategy.Partition = 0
	f.run(20)
	if f.revs() != "uuuu" || !f.last.Completed {
		t.Errorf("after partition 0: %s %+v", f.revs(), f.last.Status)
	}
}

func canary(steps ...rollout.Step) rollout.Strategy {
	s := rolling(manifest.Count(2), nil)
	s.Steps = steps
	return s
}

// Seed 004's canary: partition 3, pause {}, partition 1, pause {60},
// then the strategy's partition (0).
func TestCanarySteps(t *testing.T) {
	f := newFleet(t, 4, canary(
		rollout.Step{Kind: rollout.StepPartition, Partition: 3},
		rollout.Step{Kind: rollout.StepPause},
		rollout.Step{Kind: rollout.StepPartition, Partition: 1},
		rollout.Step{Kind: rollout.StepPause, Duration: time.Minute},
	))
	f.run(20)
	st := f.last.Status
	if f.revs() != "sssu" || st.Phase != rollout.PhasePaused || st.CurrentStep != 1 || f.state.Wait == nil || f.state.Wait.Kind != rollout.WaitPause {
		t.Fatalf("at the first pause: %s %+v", f.revs(), st)
	}
	seq := f.state.Wait.Seq
	f.promote = seq + 1 // a promote of another wait ends nothing
	f.run(5)
	if f.revs() != "sssu" {
		t.Fatalf("a stale promote moved on: %s", f.revs())
	}
	f.promote = seq
	f.run(20)
	if f.revs() != "suuu" || f.state.Step != 3 || f.state.Wait == nil || f.state.Wait.Until != f.now.Add(time.Minute) {
		t.Fatalf("at the timed pause: %s %+v", f.revs(), f.state)
	}
	f.now = f.now.Add(59 * time.Second)
	f.run(3)
	if f.state.Wait == nil {
		t.Fatal("the timed pause ended early")
	}
	f.now = f.now.Add(time.Second)
	f.run(20)
	if f.revs() != "uuuu" || !f.last.Completed || f.last.Status.Phase != rollout.PhaseCompleted {
		t.Errorf("after the steps: %s %+v", f.revs(), f.last.Status)
	}
}

// A rollback goes back without the canary steps, under the same budget.
func TestRollbackSkipsCanary(t *testing.T) {
	f := newFleet(t, 4, canary(rollout.Step{Kind: rollout.StepPartition, Partition: 3}, rollout.Step{Kind: rollout.StepPause}))
	f.state = rollout.State{StableVersion: 1, UpdateVersion: 1}.Begin(2, rollout.CauseRollback, 1, t0)
	f.run(20)
	if f.revs() != "uuuu" || f.last.Status.Phase != rollout.PhaseRolledBack {
		t.Errorf("rollback: %s %+v", f.revs(), f.last.Status)
	}
}

// A first deployment has no stable revision to canary against: the
// steps are skipped.
func TestFirstDeploymentSkipsCanary(t *testing.T) {
	f := newFleet(t, 2, canary(rollout.Step{Kind: rollout.StepPause}))
	f.state = rollout.State{}.Begin(1, rollout.CauseUpdate, 0, t0)
	for _, m := range f.insts {
		m.rev, m.ready = rollout.RevUpdate, false
	}
	f.settle()
	if res := f.plan(); !res.Completed || res.State.StableVersion != 1 {
		t.Errorf("first deployment: %+v", res.Status)
	}
}

// Hook steps (seed 003 in seed 004's canary): Successful goes on, Failed
// aborts back to the stable revision, Inconclusive pauses until promote.
func TestHookVerdicts(t *testing.T) {
	hook := rollout.Step{Kind: rollout.StepHook, Hook: &manifest.HookStep{TemplateName: "check"}}
	for _, tt := range []struct {
		phase     rollout.HookPhase
		wantPhase rollout.Phase
		wantRevs  string
	}{
		{rollout.HookSuccessful, rollout.PhaseCompleted, "uuuu"},
		{rollout.HookFailed, rollout.PhaseAborted, "ssss"},
		{rollout.HookError, rollout.PhaseAborted, "ssss"},
		{rollout.HookInconclusive, rollout.PhasePaused, "sssu"},
	} {
		t.Run(string(tt.phase), func(t *testing.T) {
			f := newFleet(t, 4, canary(rollout.Step{Kind: rollout.StepPartition, Partition: 3}, hook))
			f.run(10)
			if f.state.Wait == nil || f.state.Wait.Kind != rollout.WaitHook {
				t.Fatalf("no hook wait: %+v", f.state)
			}
			f.hook = &rollout.HookVerdict{Seq: f.state.Wait.Seq, Phase: tt.phase, Message: "value 45"}
			f.run(30)
			if f.last.Status.Phase != tt.wantPhase || f.revs() != tt.wantRevs {
				t.Errorf("%s: %s %+v", tt.phase, f.revs(), f.last.Status)
			}
			if tt.phase == rollout.HookFailed && f.state.AbortReason != "hook check of step 2 failed: value 45" {
				t.Errorf("abort reason %q", f.state.AbortReason)
			}
			if tt.phase == rollout.HookInconclusive {
				f.promote = f.state.Wait.Seq
				f.run(30)
				if f.revs() != "uuuu" {
					t.Errorf("promote after inconclusive: %s", f.revs())
				}
			}
		})
	}
}

// Abort sends every instance back to the stable revision under the same
// budget, and the stable revision stays.
func TestAbort(t *testing.T) {
	f := newFleet(t, 4, rolling(manifest.Count(1), nil))
	f.run(4)
	if f.revs() == "ssss" {
		t.Fatal("nothing updated before the abort")
	}
	f.state.Aborted, f.state.AbortReason = true, "aborted by the operator"
	f.run(30)
	st := f.last.Status
	if f.revs() != "ssss" || st.Phase != rollout.PhaseAborted || f.state.StableVersion != 1 ||
		st.Message != "aborted (aborted by the operator): every instance back on revision 1" {
		t.Errorf("%s %+v", f.revs(), st)
	}
}

// An operator's pause holds every new move; resume goes on.
func TestOperatorPause(t *testing.T) {
	f := newFleet(t, 4, rolling(manifest.Count(1), nil))
	f.paused = true
	f.run(5)
	if f.revs() != "ssss" || f.last.Status.Phase != rollout.PhasePaused || f.last.Status.Conditions[2].Reason != "PausedByOperator" {
		t.Errorf("paused: %s %+v", f.revs(), f.last.Status)
	}
	f.paused = false
	f.run(30)
	if f.revs() != "uuuu" {
		t.Errorf("resumed: %s", f.revs())
	}
}

// The original's upgradeDuration waits between batches; rollingManually
// waits for promote after each.
func TestBatchPacing(t *testing.T) {
	s := rolling(manifest.Count(2), nil)
	s.UpgradeDuration = time.Minute
	f := newFleet(t, 4, s)
	f.run(10)
	if f.revs() != "ssuu" || f.last.Status.Conditions[1].Reason != "UpgradeDuration" {
		t.Fatalf("after the first batch: %s %+v", f.revs(), f.last.Status)
	}
	f.now = f.now.Add(time.Minute)
	f.run(10)
	if f.revs() != "uuuu" || !f.last.Completed {
		t.Errorf("after upgradeDuration: %s %+v", f.revs(), f.last.Status)
	}

	s.UpgradeDuration, s.Manual = 0, true
	f = newFleet(t, 4, s)
	f.run(10)
	if f.revs() != "ssuu" || f.state.Wait == nil || f.state.Wait.Kind != rollout.WaitBatch {
		t.Fatalf("rollingManually: %s %+v", f.revs(), f.state)
	}
	f.promote = f.state.Wait.Seq
	f.run(10)
	if f.revs() != "uuuu" || !f.last.Completed {
		t.Errorf("after promote: %s %+v", f.revs(), f.last.Status)
	}
}

// Property: whatever the budget, partition, surge and crashes, every
// instant keeps the budget (fleet.check) and the rollout ends with every
// instance at or above the partition updated.
func TestRandomRolloutsKeepTheBudget(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 500 {
		n := 1 + r.IntN(12)
		maxU := manifest.Count(r.IntN(4))
		maxS := manifest.Count(r.IntN(3))
		if maxU.Value == 0 && maxS.Value == 0 {
			maxU = manifest.Percent(25)
		}
		s := rolling(maxU, maxS)
		s.Partition = r.IntN(n + 1)
		s.DeleteFirst = r.IntN(4) == 0
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			f := newFleet(t, n, s)
			for range 200 {
				res := f.plan()
				if res.Completed || res.Status.Phase == rollout.PhasePaused {
					break
				}
				f.settle()
				if r.IntN(10) == 0 { // a crash relaunches at the instance's own revision
					m := f.insts[r.IntN(n)]
					m.ready, m.down = false, true
				}
			}
			for j := 0; j < n; j++ {
				want := rollout.RevStable
				if j >= s.Partition {
					want = rollout.RevUpdate
				}
				if f.insts[j].rev != want {
					t.Fatalf("n %d %+v: instance %d runs %d (%s)", n, s, j, f.insts[j].rev, f.revs())
				}
			}
			if len(f.insts) != n {
				t.Fatalf("surge left: %d instances", len(f.insts))
			}
		})
	}
}

// An instance whose update cannot go on (the executor refused a hot
// patch, its launch cannot take the revision) stalls the rollout: the
// status names the instances and their errors, the first few by index,
// and Progressing is False with reason InstanceUpdateFailed at once,
// rather than WaitingForReady forever. Paused, it says so as well.
func TestInstanceUpdateErrorsStallTheRollout(t *testing.T) {
	in := rollout.Input{Now: t0, Strategy: rolling(manifest.Count(6), nil), Replicas: 6,
		State: rollout.State{StableVersion: 1, UpdateVersion: 1}.Begin(2, rollout.CauseUpdate, 0, t0)}
	for i := range 6 {
		in.Instances = append(in.Instances, rollout.Instance{Index: 5 - i, ID: 5 - i, AtStable: true, Updating: true,
			UpdateError: fmt.Sprintf("cannot hot-patch: task web%d grows", 5-i)})
	}
	st := rollout.Plan(in).Status
	want := "updating to revision 2: 0/6 updated, 0 ready; 6/6 instances failed to update (instance 0: cannot hot-patch: task web0 grows; " +
		"instance 1: cannot hot-patch: task web1 grows; instance 2: cannot hot-patch: task web2 grows; and 3 more)"
	progressing := st.Conditions[1]
	if st.Phase != rollout.PhaseProgressing || st.Message != want || progressing.Type != "Progressing" ||
		progressing.Status != "False" || progressing.Reason != "InstanceUpdateFailed" || progressing.Message != want {
		t.Errorf("status %+v\nwant message %q", st, want)
	}

	in.Paused = true
	st = rollout.Plan(in).Status
	if st.Phase != rollout.PhasePaused || !strings.HasSuffix(st.Message, "and 3 more)") || st.Conditions[1].Status != "True" {
		t.Errorf("paused: %+v", st)
	}

	in.Paused = false
	for i := range in.Instances {
		in.Instances[i].UpdateError = ""
	}
	st = rollout.Plan(in).Status
	if st.Conditions[1].Status != "True" || st.Conditions[1].Reason != "WaitingForReady" || strings.Contains(st.Message, "failed") {
		t.Errorf("without errors: %+v", st)
	}
}

func progressing(res rollout.Result) rollout.Condition {
	for _, c := range res.Status.Conditions {
		if c.Type == "Progressing" {
			return c
		}
	}
	return rollout.Condition{}
}

// Allocated instances (a game session runs on them) are left be until
// released: the others update, and the status names those waiting.
func TestAllocatedInstancesWaitForRelease(t *testing.T) {
	f := newFleet(t, 4, rollout.Strategy{MaxUnavailable: *manifest.Count(1)})
	f.insts[1].held, f.insts[3].held = true, true
	if got := f.run(10); !reflect.DeepEqual(got, [][]int{{2}, {0}}) {
		t.Fatalf("rounds %v, want 2 then 0: 3 and 1 are allocated", got)
	}
	res := f.plan()
	if c := progressing(res); res.Completed || c.Reason != "AllocatedInstancesHeld" ||
		!strings.Contains(c.Message, "2 allocated instances wait for release (1, 3)") {
		t.Fatalf("status %s %+v, want it waiting for instances 1 and 3", res.Status.Phase, c)
	}
	f.insts[3].held = false // released
	if got := f.run(10); !reflect.DeepEqual(got, [][]int{{3}}) {
		t.Fatalf("after 3's release: rounds %v, want 3 alone", got)
	}
	if res := f.plan(); res.Completed {
		t.Fatal("completed with instance 1 still held on the stable revision")
	}
}

// updateStrategy.allocatedTimeoutSeconds: past the deadline, counted from
// the rollout's start, held instances update anyway, and the status says
// so.
func TestAllocatedTimeoutMovesHeldInstancesAnyway(t *testing.T) {
	f := newFleet(t, 3, rollout.Strategy{MaxUnavailable: *manifest.Count(1), AllocatedTimeout: time.Minute})
	f.insts[2].held = true
	if got := f.run(10); !reflect.DeepEqual(got, [][]int{{1}, {0}}) {
		t.Fatalf("before the deadline: rounds %v, want 1 then 0", got)
	}
	f.now = t0.Add(time.Minute - time.Nanosecond)
	if res := f.plan(); len(res.Moves) != 0 {
		t.Fatalf("moved %v before the deadline", rollout.Indexes(res.Moves))
	}
	f.now = t0.Add(time.Minute)
	res := f.plan()
	if !reflect.DeepEqual(rollout.Indexes(res.Moves), []int{2}) || !strings.Contains(progressing(res).Message, "allocated instances 2 updated anyway: allocatedTimeoutSeconds passed") {
		t.Fatalf("at the deadline: moves %v, status %q; want 2 moved, and said so", rollout.Indexes(res.Moves), progressing(res).Message)
	}
	f.settle()
	f.settle()
	if res := f.plan(); !res.Completed {
		t.Errorf("not completed after the held instance updated: %s", res.Status.Message)
	}
}
