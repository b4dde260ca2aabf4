package scheduler

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/launch"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/offer"
	"github.com/bcs-mesos/bcs-mesos/pkg/plan"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/rollout"
)

// Plan says what storing obj — a validated application, process or
// deployment manifest — would do at time now, on the cluster as the core
// knows it: the matcher places the launches on every known agent with
// what it has free (knownSnapshot), counting the running instances for
// constraints; for an update the rollout controller says which instances
// the strategy moves, and updateMode how. It reads the core's state and
// changes nothing: the driver runs it between two steps.
func (c *Core) Plan(now time.Time, obj manifest.Object) (*plan.Plan, error) {
	meta, _ := manifest.MetaOf(obj)
	replicas, ok := manifest.InstancesOf(obj)
	if !ok {
		return nil, fmt.Errorf("kind %q is not an application, process or deployment: %w", obj.Kind(), errdefs.ErrInvalidArgument)
	}
	p := &plan.Plan{Kind: obj.Kind(), Namespace: meta.Namespace, Name: meta.Name, Action: plan.Create,
		Instances: []plan.Instance{}, Warnings: []string{}}
	a := c.apps[meta.Namespace+"/"+meta.Name]
	if a != nil && a.rec.State == registry.AppDeleting {
		a = nil // gone once its instances are
	}
	rev := launch.Revision{Version: 1}
	if a != nil {
		rev = launch.Revision{Version: a.rec.Version + 1, RestartGeneration: a.rec.RestartGeneration}
	}
	tmpl, err := launch.Compile(obj, rev)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", err, errdefs.ErrInvalidArgument)
	}
	pl := &planner{core: c, now: now, snap: c.knownSnapshot(), plan: p, key: meta.Namespace + "/" + meta.Name}
	switch {
	case obj.Kind() == manifest.KindDaemonset:
		pl.daemonset(a, obj, tmpl)
	case a == nil:
		for i := range replicas {
			pl.place(plan.Instance{Index: i, Action: plan.Place, Revision: rev.Version}, tmpl, nil, "")
		}
	default:
		pl.update(a, obj, tmpl, replicas)
	}
	pl.placeAll()
	p.Warnings = append(p.Warnings, c.planWarnings()...)
	p.Summarize()
	return p, nil
}

// planner is the scratch state of one Plan.
type planner struct {
	core *Core
	now  time.Time
	snap *offer.Snapshot // the known cluster, less what the plan kills
	plan *plan.Plan
	key  string
	// strategy is the new version's update strategy.
	strategy rollout.Strategy
	// hotPatchBlocked counts the instances a hot patch cannot update.
	hotPatchBlocked int
	// launches are the plan's instances to place, with their templates.
	launches []planLaunch
}

type planLaunch struct {
	index int // in plan.Instances
	tmpl  *launch.Template
	// onlyHost is the agent a daemonset's instance is bound to.
	onlyHost string
}

// place adds an instance to launch with t on onlyHost (a daemonset's
// agent) or anywhere; gone is the launch it replaces, whose agent gets
// back what it held.
func (pl *planner) place(inst plan.Instance, t *launch.Template, gone *instance, onlyHost string) {
	if gone != nil {
		pl.release(gone)
	}
	pl.launches = append(pl.launches, planLaunch{index: len(pl.plan.Instances), tmpl: t, onlyHost: onlyHost})
	pl.plan.Instances = append(pl.plan.Instances, inst)
}

// release takes a live launch out of the snapshot: its constraints no
// longer count it, its agent has back what it took.
func (pl *planner) release(inst *instance) {
	if !inst.phase().live() || inst.rec.AgentID == "" {
		return
	}
	if i := slices.IndexFunc(pl.snap.Active, func(x offer.Instance) bool {
		return x.App == pl.key && x.AgentID == inst.rec.AgentID
	}); i >= 0 {
		pl.snap.Active = slices.Delete(pl.snap.Active, i, i+1)
	}
	held := pl.core.cfg.Executor
	for _, t := range inst.rec.Tasks {
		held.CPUs += t.CPUs
		held.Mem += t.MemMB
	}
	for _, port := range inst.rec.Ports {
		held.Ports = append(held.Ports, offer.PortRange{Begin: port.Port, End: port.Port})
	}
	for i := range pl.snap.Agents {
		if a := &pl.snap.Agents[i]; a.ID == inst.rec.AgentID && len(a.Offers) > 0 {
			a.Offers[0].Resources = a.Offers[0].Resources.Plus(held)
		}
	}
}

// placeAll runs the matcher over the launches: where each would go, or
// why it fits no agent.
func (pl *planner) placeAll() {
	groups := make([]offer.TaskGroup, len(pl.launches))
	byID := map[string]*plan.Instance{}
	for i, l := range pl.launches {
		groups[i] = offer.TaskGroup{ID: fmt.Sprint(i), Req: l.tmpl.Req, OnlyHost: l.onlyHost}
		byID[groups[i].ID] = &pl.plan.Instances[l.index]
	}
	res := pl.core.matcher.Place(pl.snap, groups, pl.now, pl.core.cfg.Seed)
	hosts := map[string]string{}
	for _, a := range pl.snap.Agents {
		hosts[a.ID] = a.Hostname
	}
	for _, placed := range res.Placements {
		inst := byID[placed.TaskGroupID]
		inst.Agent, inst.Hostname = placed.AgentID, hosts[placed.AgentID]
	}
	for _, u := range res.Unplaced {
		byID[u.TaskGroupID].Pending = pendingOf(u.Rejections, pl.now)
	}
}

// update plans a new version of a: the rollout controller's first plan
// for it gives every instance its target revision, and the strategy how
// it gets there; instances beyond the new count go.
func (pl *planner) update(a *app, obj manifest.Object, tmpl *launch.Template, replicas int) {
	p := pl.plan
	p.Action, p.CurrentVersion = plan.Update, a.rec.Version
	if a.tmpl != nil && a.tmpl.Hash == tmpl.Hash && a.rec.Instances == replicas {
		p.Action = plan.Unchanged
	}
	pl.strategy = rollout.StrategyOf(obj)
	st := a.ro.State.Begin(tmpl.Version, rollout.CauseUpdate, 0, pl.now)
	// The update keeps the holes a scale left (registry.UpdateApp): the
	// controller sees the instances by rank (ranks.go).
	holes, _ := registry.Rescale(a.rec.Instances, a.rec.Removed, replicas, nil)
	byRank := ranks(registry.WantedIDs(replicas, holes))
	in := rollout.Input{Now: pl.now, Strategy: pl.strategy, Replicas: replicas, State: st,
		Paused: manifest.UpdateStrategyOf(obj).Paused, Instances: byRank.of(pl.core.rolloutInstances(a, tmpl.Hash))}
	res := rollout.Plan(in)
	// The rollout's status once the instances scaled away are gone.
	kept := slices.DeleteFunc(slices.Clone(in.Instances), func(x rollout.Instance) bool { return x.Index >= replicas+res.Surge })
	if len(kept) < len(in.Instances) {
		in.Instances = kept
		res = rollout.Plan(in)
	}
	p.Rollout = &plan.Rollout{Phase: res.Status.Phase, Message: res.Status.Message}
	stable := a.template(a.ro.StableTemplate)
	target := func(rank int) (*launch.Template, uint64) {
		if res.Target(rank) == rollout.RevStable && stable != nil {
			return stable, a.ro.State.StableVersion
		}
		return tmpl, tmpl.Version
	}
	last := byRank.id(replicas+res.Surge) - 1
	for _, inst := range a.instances {
		last = max(last, inst.rec.Index)
	}
	for i := 0; i <= last; i++ {
		inst := a.instances[i]
		rank, ranked := byRank.rankOf(i)
		wanted := ranked && rank < replicas+res.Surge
		t, version := target(rank)
		want := plan.Instance{Index: i, Revision: version, Surge: rank >= replicas}
		switch {
		case inst == nil && wanted:
			want.Action = plan.Place
			pl.place(want, t, nil, "")
		case inst == nil:
		case !wanted:
			want.Action, want.Revision, want.Surge = plan.Kill, inst.rec.Version, false
			want.Agent, want.Hostname = inst.rec.AgentID, inst.rec.Host
			pl.release(inst)
			p.Instances = append(p.Instances, want)
		default:
			pl.move(inst, want, t)
		}
	}
	if pl.hotPatchBlocked > 0 {
		p.Warnings = append(p.Warnings, fmt.Sprintf("%d instances cannot be hot-patched (their message says why): the rollout would wait for them", pl.hotPatchBlocked))
	}
	if pl.stalled(a, res, byRank) {
		p.Warnings = append(p.Warnings, fmt.Sprintf("the rollout cannot update any running instance now: %d of %d ready, at most %d may be unavailable (maxUnavailable); it waits until more are ready",
			res.Status.Ready, replicas, res.Status.MaxUnavailable))
	}
}

// stalled reports whether the rollout would begin without touching any
// of the ready instances it has to update, for want of budget (and no
// surge instance to make room).
func (pl *planner) stalled(a *app, res rollout.Result, byRank ranks) bool {
	if res.Status.Phase != rollout.PhaseProgressing || res.Surge > 0 {
		return false // paused, waiting for a step, or surging first
	}
	moved := map[int]bool{}
	for _, mv := range res.Moves {
		moved[byRank.id(mv.Index)] = true
	}
	due := 0
	for _, inst := range pl.plan.Instances {
		if inst.Action != plan.UpdateInstance && inst.Action != plan.Recreate {
			continue
		}
		if running := a.instances[inst.Index]; running != nil && pl.core.ready(running) {
			if moved[inst.Index] {
				return false
			}
			due++
		}
	}
	return due > 0
}

// move plans what the rollout does to an instance whose target template
// is t: one that runs nothing launches it, one at t stays, one running
// another is updated by the strategy, one starting or stopping is
// replaced.
func (pl *planner) move(inst *instance, want plan.Instance, t *launch.Template) {
	atTarget := inst.rec.Template == t.Hash
	switch {
	case inst.phase() == PhasePending, !atTarget && (inst.phase() == PhaseFailed || inst.phase() == PhaseFinished):
		want.Action = plan.Place
		pl.place(want, t, nil, inst.rec.Node)
		return
	case atTarget, inst.phase() == PhaseFailed, inst.phase() == PhaseFinished, inst.phase() == PhaseStopped:
		want.Action = plan.Keep
	case inst.phase() != PhaseRunning:
		want.Action, want.UpdateMode = plan.Recreate, registry.UpdateReplace
	default:
		mode, blocker := updateMode(pl.strategy, inst, t)
		want.Action, want.UpdateMode = plan.UpdateInstance, mode
		switch {
		case mode == registry.UpdateReplace:
			want.Action, want.Message = plan.Recreate, replaceReason(want.Revision, blocker)
		case blocker != "":
			want.Message = "cannot hot-patch: " + blocker
			pl.hotPatchBlocked++
		}
	}
	if want.Action == plan.Recreate {
		pl.place(want, t, inst, inst.rec.Node)
		return
	}
	want.Agent, want.Hostname = inst.rec.AgentID, inst.rec.Host
	pl.plan.Instances = append(pl.plan.Instances, want)
}

// planWarnings are what keeps any plan from happening as planned.
func (c *Core) planWarnings() []string {
	var out []string
	if !c.acting() {
		out = append(out, fmt.Sprintf("the engine is %s: nothing is launched, killed or updated until it runs", c.engine.Mode))
	}
	if len(c.agents) == 0 {
		out = append(out, "no agent has offered since the scheduler started: no placement is known")
	}
	return out
}

// daemonset plans a daemonset (a, stored, nil for a create) with the
// template tmpl: an instance on every eligible agent, at the new
// revision (a rollout's budget and partition are not simulated), and
// the instances of agents no longer eligible killed.
func (pl *planner) daemonset(a *app, obj manifest.Object, tmpl *launch.Template) {
	hosts := pl.core.daemonAgents(tmpl.Req)
	bound := map[string]*instance{}
	next := 0
	if a != nil {
		pl.plan.Action, pl.plan.CurrentVersion = plan.Update, a.rec.Version
		pl.strategy = rollout.StrategyOf(obj)
		for _, inst := range a.sortedInstances() {
			want := plan.Instance{Index: inst.rec.Index, Revision: tmpl.Version}
			if _, ok := hosts[inst.rec.Node]; !ok {
				want.Action, want.Revision = plan.Kill, inst.rec.Version
				want.Agent, want.Hostname = inst.rec.AgentID, inst.rec.Host
				pl.release(inst)
				pl.plan.Instances = append(pl.plan.Instances, want)
				continue
			}
			bound[inst.rec.Node] = inst
			pl.move(inst, want, tmpl)
		}
	}
	for _, host := range slices.Sorted(maps.Keys(hosts)) {
		if bound[host] != nil {
			continue
		}
		for a != nil && a.instances[next] != nil {
			next++
		}
		pl.place(plan.Instance{Index: next, Action: plan.Place, Revision: tmpl.Version}, tmpl, nil, host)
		next++
	}
}
