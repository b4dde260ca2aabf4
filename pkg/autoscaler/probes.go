package autoscaler

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/hook"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// Allocation probes: an autoscaler's allocation.probe reads a value per
// instance every allocation.intervalSeconds, and allocatedCondition
// judges it. Where the verdict differs from the instance's allocation,
// the probe allocates it (source "probe") or releases its own
// allocation; an allocation made through the API is never touched. An
// instance the probe cannot judge keeps its state. In a dry run the
// status says what would change and nothing is written.
const (
	// DefaultProbeInterval is how often an allocation probe runs when
	// its spec does not say.
	DefaultProbeInterval = 10 * time.Second
	// MaxProbeFailures is how many instances a probe's status names
	// among those it could not judge or change.
	MaxProbeFailures = 5
	// staleSweepRounds is how often, in rounds, a probe looks for its
	// allocations of launches gone (a read of the workload's
	// allocations, which a round without changes does not need).
	staleSweepRounds = 6
)

// allocationProbe is an autoscaler's allocation probe as the controller
// keeps it.
type allocationProbe struct {
	// spec is the one it was made from: a new spec makes a new probe.
	spec      *manifest.AllocationProbe
	interval  time.Duration
	condition *hook.Condition
	due       time.Time
	// status is the last round's, for the autoscaler's record.
	status *manifest.AllocationProbeStatus
	// rounds counts its rounds, for the sweeps of stale allocations.
	rounds int
}

// probeStatus is the status of e's probe's last round, nil without a
// probe.
func (e *entry) probeStatus() *manifest.AllocationProbeStatus {
	if e.probe == nil {
		return nil
	}
	return e.probe.status
}

// runProbes runs the allocation probes due at now. It returns an error
// wrapping store.ErrDeposed when a write was refused because this leader
// was deposed.
func (c *Controller) runProbes(ctx context.Context, now time.Time) error {
	var due []*entry
	for _, e := range c.entries {
		if syncProbe(e, now) && e.probe.condition != nil && !e.probe.due.After(now) {
			due = append(due, e)
		}
	}
	if len(due) == 0 {
		return nil
	}
	return c.probe(ctx, due, now)
}

// syncProbe keeps e's probe as its spec says and reports whether it has
// one. A probe whose condition does not compile (a spec stored before
// the check) never runs; its status says why.
func syncProbe(e *entry, now time.Time) bool {
	spec := e.manifest.Spec.Allocation
	switch {
	case spec == nil:
		e.probe = nil
		return false
	case e.probe != nil && e.probe.spec == spec:
		return true
	}
	p := &allocationProbe{spec: spec, interval: DefaultProbeInterval}
	if spec.IntervalSeconds > 0 {
		p.interval = time.Duration(spec.IntervalSeconds) * time.Second
	}
	p.due = nextDue(e.ref, p.interval, now)
	if e.probe != nil {
		p.status = e.probe.status
	}
	condition, err := hook.CompileCondition(spec.AllocatedCondition)
	if err != nil {
		p.status = &manifest.AllocationProbeStatus{ProbedAt: now, Message: "allocatedCondition does not compile: " + err.Error()}
	}
	p.condition = condition
	e.probe = p
	return true
}

// verdict is a probe's judgement of one instance: whether its condition
// holds for the value read, or why it could not be judged.
type verdict struct {
	inst  Instance
	value any
	holds bool
	err   error
}

// probeRound is one probe's verdicts on fleet, or why it could judge
// none.
type probeRound struct {
	fleet    Fleet
	verdicts []verdict
	err      error
}

// probe runs the probes of entries: one fleet read for all, their
// values under MaxCalls, then the changes each calls for.
func (c *Controller) probe(ctx context.Context, entries []*entry, now time.Time) error {
	refs := make([]Ref, len(entries))
	for i, e := range entries {
		e.probe.due = nextDue(e.ref, e.probe.interval, now)
		refs[i] = Ref{e.ref.Namespace, e.spec.Target.Name}
	}
	fleets, err := c.cfg.Fleet.Fleet(ctx, refs)
	if err == nil && len(fleets) != len(refs) {
		err = fmt.Errorf("the fleet source answered %d workloads for %d", len(fleets), len(refs))
	}
	if err != nil {
		for _, e := range entries {
			e.probe.status = &manifest.AllocationProbeStatus{ProbedAt: now, Message: "the fleet could not be read; every instance keeps its state: " + err.Error()}
		}
		return nil
	}
	rounds := make([]probeRound, len(entries))
	slots := make(chan struct{}, c.cfg.MaxCalls)
	var wg sync.WaitGroup
	for i, e := range entries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rounds[i] = c.judge(ctx, e, fleets[i], slots)
		}()
	}
	wg.Wait()
	for i, e := range entries {
		status, err := c.settle(ctx, e, rounds[i], now)
		if errors.Is(err, store.ErrDeposed) {
			return err
		}
		e.probe.status = status
	}
	return nil
}

// judge probes the instances of fleet that run, but not those going
// unless allocated (releasing one lets it go).
func (c *Controller) judge(ctx context.Context, e *entry, fleet Fleet, slots chan struct{}) probeRound {
	if fleet.Problem != "" {
		return probeRound{err: errors.New(fleet.Problem)}
	}
	var probed []Instance
	for _, inst := range fleet.Instances {
		if !inst.RunningSince.IsZero() && (!inst.Going || inst.Allocated) {
			probed = append(probed, inst)
		}
	}
	readings, err := c.instanceValues(ctx, Ref{e.ref.Namespace, e.spec.Target.Name}, e.probe.spec.Probe, probed, slots)
	if err != nil {
		return probeRound{err: err}
	}
	out := make([]verdict, len(probed))
	for i, r := range readings {
		out[i] = verdict{inst: probed[i], value: r.value, err: r.err}
		switch {
		case r.err != nil:
		case r.value == nil:
			out[i].err = errors.New("no sample names it")
		default:
			out[i].holds, out[i].err = e.probe.condition.Holds(r.value)
		}
	}
	return probeRound{fleet: fleet, verdicts: out}
}

// settle writes the changes round calls for and says what it did. Every
// staleSweepRounds rounds (the first included, so that a new leader
// sweeps at once) it also releases the probe's allocations of launches
// that no longer run: the fleet shows no allocation there, and one left
// would keep the instance from ever being scaled down.
func (c *Controller) settle(ctx context.Context, e *entry, round probeRound, now time.Time) (*manifest.AllocationProbeStatus, error) {
	st := &manifest.AllocationProbeStatus{ProbedAt: now, Probed: len(round.verdicts)}
	if round.err != nil {
		st.Message = "the probe failed; every instance keeps its state: " + round.err.Error()
		return st, nil
	}
	defer keptState(st)
	changes := changesOf(st, round.verdicts)
	sweep := e.probe.rounds%staleSweepRounds == 0
	e.probe.rounds++
	if len(changes) == 0 && !sweep {
		return st, nil
	}
	if e.spec.DryRun {
		for _, v := range changes {
			st.Allocations, st.Releases = st.Allocations+boolInt(v.holds), st.Releases+boolInt(!v.holds)
		}
		if len(changes) > 0 {
			st.Message = "dry run: the allocations and releases counted were not written"
		}
		return st, nil
	}
	target := Ref{e.ref.Namespace, e.spec.Target.Name}
	list, err := c.cfg.Registry.Allocations(ctx, target.Namespace, target.Name)
	if err != nil {
		st.Message = "reading the allocations: " + err.Error()
		return st, nil
	}
	held := make(map[int]*registry.Allocation, len(list))
	for _, a := range list {
		held[a.Instance] = a
	}
	for _, v := range changes {
		changed, err := c.change(ctx, e, target, v, held[v.inst.ID])
		if err := count(st, v, changed, err); err != nil {
			return nil, err
		}
	}
	if sweep {
		return st, c.sweep(ctx, st, target, list, round.fleet)
	}
	return st, nil
}

// changesOf are the verdicts that differ from their instance's
// allocation; it counts in st those that hold and those that failed.
func changesOf(st *manifest.AllocationProbeStatus, verdicts []verdict) []verdict {
	var changes []verdict
	for _, v := range verdicts {
		switch {
		case v.err != nil:
			failed(st, v.inst.ID, v.err)
		case v.holds:
			st.Holding++
			if !v.inst.Allocated && !v.inst.Going {
				changes = append(changes, v)
			}
		case v.inst.Allocated:
			changes = append(changes, v)
		}
	}
	return changes
}

// count counts in st a change written (or not, or failed); it returns
// only an error that must end the round, a refusal of the fence.
func count(st *manifest.AllocationProbeStatus, v verdict, changed bool, err error) error {
	switch {
	case errors.Is(err, store.ErrDeposed):
		return err
	case err != nil:
		failed(st, v.inst.ID, err)
	case changed && v.holds:
		st.Allocations++
	case changed:
		st.Releases++
	}
	return nil
}

// sweep releases the probe's allocations, of list, whose launch is not
// the one fleet runs on their instance, or whose instance fleet no
// longer has.
func (c *Controller) sweep(ctx context.Context, st *manifest.AllocationProbeStatus, target Ref, list []*registry.Allocation, fleet Fleet) error {
	launches := make(map[int]string, len(fleet.Instances))
	for _, inst := range fleet.Instances {
		launches[inst.ID] = inst.TaskGroupID
	}
	for _, a := range list {
		launch, ok := launches[a.Instance]
		if a.Source != registry.AllocatedByProbe || ok && (launch == "" || launch == a.TaskGroupID) {
			continue
		}
		changed, err := release(ctx, c.cfg.Registry, target, a.Instance)
		if err := count(st, verdict{inst: Instance{ID: a.Instance}}, changed, err); err != nil {
			return err
		}
	}
	return nil
}

// change writes v's verdict on its instance, whose allocation is held
// (nil: none): allocates it, or releases the probe's allocation of it.
// An allocation made through the API is left alone, and so is one
// already as wanted (the fleet's view may lag the store). It reports
// whether it wrote.
func (c *Controller) change(ctx context.Context, e *entry, target Ref, v verdict, held *registry.Allocation) (bool, error) {
	ours := held != nil && held.Source == registry.AllocatedByProbe
	current := held != nil && held.TaskGroupID == v.inst.TaskGroupID
	switch {
	case held != nil && !ours && v.holds && !current:
		return false, fmt.Errorf("an allocation made through the API for its earlier launch %s is in the way; release it through the API", held.TaskGroupID)
	case held != nil && !ours:
		return false, nil
	case !v.holds && !current:
		return false, nil
	case !v.holds:
		return release(ctx, c.cfg.Registry, target, v.inst.ID)
	case current:
		return false, nil
	}
	if held != nil { // the probe's, of an earlier launch: its session ended with it
		if _, err := release(ctx, c.cfg.Registry, target, v.inst.ID); err != nil {
			return false, err
		}
	}
	note := fmt.Sprintf("allocatedCondition %s holds for %s", e.probe.spec.AllocatedCondition, shorten(fmt.Sprint(v.value)))
	_, err := c.cfg.Registry.Allocate(ctx, registry.Allocation{Namespace: target.Namespace, App: target.Name, Instance: v.inst.ID,
		TaskGroupID: v.inst.TaskGroupID, Source: registry.AllocatedByProbe, By: "autoscaler " + e.ref.String(), Note: note})
	return err == nil, err
}

// release releases an instance; one released meanwhile is no change.
func release(ctx context.Context, r Registry, target Ref, id int) (bool, error) {
	err := r.Release(ctx, target.Namespace, target.Name, id)
	if errors.Is(err, errdefs.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// failed counts an instance the probe could not judge or change.
func failed(st *manifest.AllocationProbeStatus, id int, err error) {
	st.FailedCount++
	if len(st.Failed) < MaxProbeFailures {
		st.Failed = append(st.Failed, manifest.ProbeFailure{Instance: id, Message: shorten(err.Error())})
	}
}

// keptState says in st's message that the instances counted failed kept
// their state.
func keptState(st *manifest.AllocationProbeStatus) {
	if st.FailedCount > 0 && st.Message == "" {
		st.Message = fmt.Sprintf("%d of the %d instances probed could not be judged or changed and keep their state", st.FailedCount, st.Probed)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// shorten keeps a value or an error quoted in a status readable.
func shorten(s string) string {
	const limit = 200
	if len(s) <= limit {
		return s
	}
	return s[:limit] + "…"
}
