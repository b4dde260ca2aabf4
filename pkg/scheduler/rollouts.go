package scheduler

import (
	"cmp"
	"maps"
	"reflect"
	"slices"

	"github.com/bcs-mesos/bcs-mesos/pkg/launch"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/rollout"
)

// progressRollouts plans the rollout of every application something
// happened to, and carries the plans out.
func (c *Core) progressRollouts() {
	dirty := slices.SortedFunc(maps.Keys(c.dirty), func(x, y *app) int { return cmp.Compare(x.key(), y.key()) })
	clear(c.dirty)
	for _, a := range dirty {
		c.progressRollout(a)
	}
	clear(c.dirty) // what the plans changed is planned already
}

// progressRollout runs the rollout controller (pkg/rollout) over one
// application: a new version begins a rollout, the plan's moves update
// instances, its surge is created or removed, and the rollout record is
// stored when it changed.
func (c *Core) progressRollout(a *app) {
	if a.tmpl == nil || a.rec.State == registry.AppDeleting || c.apps[a.key()] != a {
		return
	}
	st := a.ro.State
	if st.UpdateVersion != a.rec.Version {
		st = st.Begin(a.rec.Version, a.rec.Cause, a.rec.RolledBackTo, c.now)
		if st.StableVersion != 0 {
			c.logf("rollout begins", "app", a.key(), "revision", st.UpdateVersion, "stable", st.StableVersion,
				"strategy", a.strategy.Type, "cause", st.Cause)
		}
	}
	if a.rec.AbortVersion == st.UpdateVersion && !st.Aborted && st.StableVersion != 0 && st.StableVersion != st.UpdateVersion {
		st.Abort("aborted by the operator")
		c.logf("rollout aborted", "app", a.key(), "revision", st.UpdateVersion, "back_to", st.StableVersion)
	}
	c.compileStable(a)
	if a.labeled != [2]uint64{a.rec.Version, a.ro.State.StableVersion} {
		c.relabel(a)
		a.labeled = [2]uint64{a.rec.Version, a.ro.State.StableVersion}
	}
	if a.daemon() {
		c.reconcileDaemon(a) // the agents first: they are the replicas
	}
	var res rollout.Result
	// Moves change what the next plan sees (and its status): plan again
	// until nothing moves.
	for range 4 {
		res = rollout.Plan(c.rolloutInput(a, st))
		a.plan, st = res, res.State
		for _, mv := range res.Moves {
			c.move(a.instanceAt(mv.Index), mv.To)
		}
		if c.dropStaleUpdates(a) == 0 && len(res.Moves) == 0 {
			break
		}
	}
	c.startCanaryHook(a, res.State) // stored before the wait it is for
	if res.Completed {
		if a.ro.StableTemplate != "" {
			c.logf("rollout completed", "app", a.key(), "revision", res.State.UpdateVersion)
		}
		a.ro.StableSpec, a.ro.StableTemplate, a.ro.StableRestartGeneration = a.rec.Spec, a.tmpl.Hash, a.rec.RestartGeneration
		a.stable = nil
	}
	c.reconcileApp(a)
	if !reflect.DeepEqual(a.ro.State, res.State) || !reflect.DeepEqual(a.ro.Status, res.Status) || res.Completed {
		a.ro.State, a.ro.Status = res.State, res.Status
		ro := *a.ro
		c.write(Write{Rollout: &ro})
	}
}

// rolloutInput is what the rollout controller sees of an application.
func (c *Core) rolloutInput(a *app, st rollout.State) rollout.Input {
	in := rollout.Input{Now: c.now, Strategy: a.strategy, Replicas: a.rec.Instances, State: st, Paused: a.rec.Paused,
		Instances: c.rolloutInstances(a, a.tmpl.Hash), Hook: c.canaryVerdict(a, st)}
	a.byRank = nil
	switch {
	case a.daemon():
		ids := make([]int, 0, len(in.Instances))
		for _, x := range in.Instances {
			ids = append(ids, x.Index)
		}
		slices.Sort(ids)
		in.Instances = a.rank(in.Instances, ids)
		in.Replicas = len(in.Instances)
	case len(a.rec.Removed) > 0:
		in.Instances = a.rank(in.Instances, registry.WantedIDs(a.rec.Instances, a.rec.Removed))
	}
	if p := a.rec.Promote; p != nil && p.Version == st.UpdateVersion {
		in.Promote = p.Seq
	}
	return in
}

// rolloutInstances is what the rollout controller sees of an
// application's instances, with updateHash the update revision's
// template. What it saw of each is kept (keptRollout): only the instances
// changed since the last plan are looked at again.
func (c *Core) rolloutInstances(a *app, updateHash string) []rollout.Instance {
	k := &a.kept
	sorted := a.sortedInstances()
	if !k.holds(a, sorted, updateHash) {
		k.seen = k.seen[:0]
		for _, inst := range sorted {
			k.seen = append(k.seen, c.seenByRollout(inst, updateHash))
		}
		k.sorted, k.updateHash, k.stableHash, k.tmpl, k.stable = sorted, updateHash, a.ro.StableTemplate, a.tmpl, a.stable
	} else {
		for _, inst := range k.changed {
			i, found := slices.BinarySearchFunc(sorted, inst.rec.Index, func(x *instance, index int) int { return cmp.Compare(x.rec.Index, index) })
			if found && sorted[i] == inst {
				k.seen[i] = c.seenByRollout(inst, updateHash)
			}
		}
	}
	k.changed = k.changed[:0]
	out := make([]rollout.Instance, 0, len(k.seen))
	for _, s := range k.seen {
		if !s.goingAway {
			out = append(out, s.Instance)
		}
	}
	return out
}

// keptRollout is what the rollout controller last saw of an
// application's instances, one per instance in index order (sorted), for
// the templates it was seen against. A plan looks again only at the
// instances changed since (persist and setPhase note them): a fleet's
// rollout plans each application at every step, and looking at each of
// its instances every time was most of what planning cost.
type keptRollout struct {
	sorted                 []*instance
	seen                   []seenInstance
	updateHash, stableHash string
	tmpl, stable           *launch.Template
	changed                []*instance
}

// seenInstance is what the rollout controller sees of an instance, and
// whether it is on its way out (not shown to the controller).
type seenInstance struct {
	rollout.Instance
	goingAway bool
}

// holds reports whether k still holds for a's instances sorted and its
// templates; it holds no longer once more instances changed than a has.
func (k *keptRollout) holds(a *app, sorted []*instance, updateHash string) bool {
	return len(sorted) > 0 && len(k.sorted) == len(sorted) && &k.sorted[0] == &sorted[0] &&
		k.updateHash == updateHash && k.stableHash == a.ro.StableTemplate && k.tmpl == a.tmpl && k.stable == a.stable &&
		len(k.changed) <= len(sorted)
}

// noteChanged has inst looked at again by its application's next plan.
func (k *keptRollout) noteChanged(inst *instance) {
	if len(k.changed) <= len(k.sorted) {
		k.changed = append(k.changed, inst)
	}
}

// forget has the next plan look at every instance again.
func (k *keptRollout) forget() { k.sorted = nil }

// seenByRollout is what the rollout controller sees of inst.
func (c *Core) seenByRollout(inst *instance, updateHash string) seenInstance {
	a := inst.app
	return seenInstance{goingAway: inst.goingAway(), Instance: rollout.Instance{
		Index: inst.rec.Index, ID: inst.rec.Index, AtUpdate: inst.rec.Template == updateHash,
		AtStable: a.ro.StableTemplate != "" && inst.rec.Template == a.ro.StableTemplate,
		// A stopped instance holds no rollout back: it takes the
		// revision on paper and launches it when started.
		Ready: c.ready(inst) || inst.phase() == PhaseStopped, Updating: inst.rec.Update != nil,
		UpdateError: updateError(inst.rec.Update), Held: inst.allocated(),
	}}
}

// relabel moves instances whose template a newer version kept (it only
// changed replicas or the strategy) to that version: nothing to update.
func (c *Core) relabel(a *app) {
	for _, inst := range a.sortedInstances() {
		if inst.rec.Update != nil {
			continue
		}
		if version := a.versionOf(inst.rec.Template, inst.rec.Version); version != inst.rec.Version {
			inst.rec.Version = version
			c.persist(inst)
		}
	}
}

// versionOf is the newest version whose template is hash: the update
// revision's or the stable one's, else version.
func (a *app) versionOf(hash string, version uint64) uint64 {
	switch {
	case hash == a.tmpl.Hash:
		return a.rec.Version
	case a.ro.StableTemplate != "" && hash == a.ro.StableTemplate:
		return a.ro.State.StableVersion
	}
	return version
}

// compileStable keeps the stable revision's template when it differs
// from the update revision's.
func (c *Core) compileStable(a *app) {
	ro := a.ro
	switch {
	case ro.StableTemplate == "" || ro.StableTemplate == a.tmpl.Hash:
		a.stable = nil
	case a.stable == nil || a.stable.Hash != ro.StableTemplate:
		t, _, err := compile(ro.StableSpec, launch.Revision{Version: ro.State.StableVersion, RestartGeneration: ro.StableRestartGeneration})
		if err != nil {
			c.logf("stable revision cannot compile; its instances move to the update revision", "app", a.key(), "err", err)
			ro.StableTemplate, a.stable = "", nil
			return
		}
		a.stable = t
	}
}

// revision returns the version and template hash of a rollout revision.
func (a *app) revision(r rollout.Rev) (uint64, string) {
	if r == rollout.RevStable && a.ro.StableTemplate != "" {
		return a.ro.State.StableVersion, a.ro.StableTemplate
	}
	return a.rec.Version, a.tmpl.Hash
}

// template returns the compiled template of a template hash: the update
// revision's or the stable one's; nil for any other.
func (a *app) template(hash string) *launch.Template {
	switch {
	case a.tmpl != nil && a.tmpl.Hash == hash:
		return a.tmpl
	case a.stable != nil && a.stable.Hash == hash:
		return a.stable
	}
	return nil
}

// template returns the template the instance runs or launches: its
// revision's, or the update revision's for a revision no longer kept
// (the rollout moves it before it launches).
func (inst *instance) template() *launch.Template {
	if t := inst.app.template(inst.rec.Template); t != nil {
		return t
	}
	return inst.app.tmpl
}

// ready reports whether an instance serves: running, not being restarted
// by an update, and healthy by every check it has.
func (c *Core) ready(inst *instance) bool {
	if inst.phase() != PhaseRunning {
		return false
	}
	if u := inst.rec.Update; u != nil && u.Mode != registry.UpdateHotPatch {
		return false
	}
	t := inst.app.template(inst.rec.Template)
	for i := range inst.rec.Tasks {
		task := &inst.rec.Tasks[i] // not copied: a rollout asks this of every instance at every plan
		unhealthy := task.Healthy != nil && !*task.Healthy
		unknown := task.Healthy == nil && t != nil && i < t.Tasks() && t.TaskHasChecks(i)
		if unhealthy || unknown {
			return false
		}
	}
	if h := inst.rec.RemoteHealthy; h != nil && !*h || h == nil && t != nil && len(t.RemoteChecks) > 0 {
		return false
	}
	return true
}

// updateError is why an instance's update cannot go on, "" when nothing
// stops it.
func updateError(u *registry.InstanceUpdate) string {
	if u == nil {
		return ""
	}
	return u.Error
}
