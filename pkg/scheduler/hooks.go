package scheduler

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/hook"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/rollout"
)

// PreDeleteRetry is the wait between a PreDeleteHook run that did not
// succeed and the next one (seed 004: "如果返回不 ok,那么就继续等待").
const PreDeleteRetry = 10 * time.Second

// The hook runs the core makes and waits for (seed 003/004): a canary
// hook step's, whose phase ends the rollout's wait, and an instance's
// PreDeleteHook's, which must succeed before the instance is deleted or
// restarted. The hook runner (pkg/hookrun) measures them; their phases
// come back as HookRunChanged.

func runKey(namespace, name string) string { return namespace + "/" + name }

// hookRunChanged takes a written run and wakes what waits for it.
func (c *Core) hookRunChanged(run *registry.HookRun) {
	c.hookRuns[runKey(run.Namespace, run.Name)] = run
	o := run.Spec.Owner
	if o == nil {
		return
	}
	a := c.apps[run.Namespace+"/"+o.App]
	if a == nil {
		return
	}
	switch o.Kind {
	case hook.OwnerCanaryStep:
		c.replan(a)
	case hook.OwnerPreDelete:
		if inst := a.instances[o.Instance]; inst != nil && inst.rec.PreDelete != nil && inst.rec.PreDelete.Run == run.Name {
			c.preDeleteVerdict(inst, run)
		}
	}
}

// createRun asks the driver to store a new run and remembers it.
func (c *Core) createRun(namespace, name string, spec hook.RunSpec) {
	run := &registry.HookRun{Namespace: namespace, Name: name, Spec: spec, Status: hook.RunStatus{Phase: hook.Pending}}
	c.hookRuns[runKey(namespace, name)] = run
	cp := *run
	c.write(Write{HookRun: &cp})
	c.logf("hook run created", "run", runKey(namespace, name), "template", spec.TemplateName, "owner", spec.Owner.Kind, "app", spec.Owner.App)
}

// hookArgs are a run's arguments: what the scheduler gives (see
// manifest.SchedulerArg), then the step's, which win.
func hookArgs(given map[string]string, step []manifest.HookArg) []manifest.HookArg {
	args := maps.Clone(given)
	for _, a := range step {
		args[a.Name] = a.Value
	}
	out := make([]manifest.HookArg, 0, len(args))
	for _, name := range slices.Sorted(maps.Keys(args)) {
		out = append(out, manifest.HookArg{Name: name, Value: args[name]})
	}
	return out
}

// appArgs are the arguments every run of an application gets.
func appArgs(a *app, revision uint64) map[string]string {
	return map[string]string{manifest.ArgNamespace: a.rec.Namespace, manifest.ArgAppName: a.rec.Name,
		manifest.ArgRevision: strconv.FormatUint(revision, 10)}
}

// canaryRunName names the run of a canary hook step's wait.
func canaryRunName(a *app, version uint64, w *rollout.Wait) string {
	return fmt.Sprintf("%s-r%d-step%d-%d", a.rec.Name, version, w.Step+1, w.Seq)
}

// startCanaryHook creates the run of the hook step the rollout waits at,
// once.
func (c *Core) startCanaryHook(a *app, st rollout.State) {
	w := st.Wait
	if w == nil || w.Kind != rollout.WaitHook || w.Step >= len(a.strategy.Steps) {
		return
	}
	name := canaryRunName(a, st.UpdateVersion, w)
	if c.hookRuns[runKey(a.rec.Namespace, name)] != nil {
		return
	}
	step := a.strategy.Steps[w.Step].Hook
	given := appArgs(a, st.UpdateVersion)
	given[manifest.ArgStableRevision] = strconv.FormatUint(st.StableVersion, 10)
	c.createRun(a.rec.Namespace, name, hook.RunSpec{TemplateName: step.TemplateName, Args: hookArgs(given, step.Args),
		Owner: &hook.Owner{Kind: hook.OwnerCanaryStep, App: a.rec.Name, Revision: st.UpdateVersion, Step: w.Step, Seq: w.Seq}})
}

// canaryVerdict is the verdict of the hook step the rollout waits at,
// once its run ended.
func (c *Core) canaryVerdict(a *app, st rollout.State) *rollout.HookVerdict {
	w := st.Wait
	if w == nil || w.Kind != rollout.WaitHook {
		return nil
	}
	name := canaryRunName(a, st.UpdateVersion, w)
	run := c.hookRuns[runKey(a.rec.Namespace, name)]
	if run == nil || !run.Status.Phase.Completed() {
		return nil
	}
	phase := map[hook.Phase]rollout.HookPhase{hook.Successful: rollout.HookSuccessful, hook.Failed: rollout.HookFailed,
		hook.Error: rollout.HookError, hook.Inconclusive: rollout.HookInconclusive,
		hook.Terminated: rollout.HookInconclusive}[run.Status.Phase]
	return &rollout.HookVerdict{Seq: w.Seq, Phase: phase, Message: fmt.Sprintf("run %s %s: %s", name, run.Status.Phase, run.Status.Message)}
}

// preDeleteHeld reports whether an instance must first pass its
// PreDeleteHook before it goes (reason: a kill reason, or "in-place"),
// and starts the wait. A running instance only: one that runs nothing
// serves nobody. Force (delete or scale with force) skips it.
func (c *Core) preDeleteHeld(inst *instance, reason string) bool {
	a := inst.app
	forced := a.rec.Force && (reason == string(KillScaleDown) || reason == string(KillDelete))
	if a.strategy.PreDelete == nil || inst.phase() != PhaseRunning || forced {
		return false
	}
	pd := inst.rec.PreDelete
	switch {
	case pd == nil:
		inst.rec.PreDelete = &registry.PreDeleteWait{Reason: reason, Since: c.now}
		c.preDeleting[inst] = true
		c.startPreDeleteRun(inst)
		c.persist(inst)
		return true
	case pd.Passed:
		return false
	case reason == string(KillDelete) && pd.Reason != reason:
		pd.Reason = reason // a delete wins over what waited
		c.persist(inst)
	}
	return true
}

// startPreDeleteRun starts the next run of an instance's PreDeleteHook
// with the instance's arguments, and deletes the previous run.
func (c *Core) startPreDeleteRun(inst *instance) {
	a, pd := inst.app, inst.rec.PreDelete
	if pd.Run != "" {
		c.write(Write{DeleteHook: &HookRunRef{a.rec.Namespace, pd.Run}})
		delete(c.hookRuns, runKey(a.rec.Namespace, pd.Run))
	}
	pd.Attempt++
	pd.Run = fmt.Sprintf("%s-%d-l%d-predelete-%d", a.rec.Name, inst.rec.Index, inst.rec.Launches, pd.Attempt)
	pd.NotBefore = time.Time{}
	step := a.strategy.PreDelete
	given := appArgs(a, inst.rec.Version)
	given[manifest.ArgPodName], given[manifest.ArgInstanceID] = inst.rec.ID, strconv.Itoa(inst.rec.Index)
	given[manifest.ArgHostIP], given[manifest.ArgPodIP] = inst.rec.HostIP, inst.rec.HostIP
	for _, port := range inst.rec.Ports {
		given[manifest.ArgPortPrefix+port.Name] = strconv.FormatUint(uint64(port.Port), 10)
	}
	pd.Message = fmt.Sprintf("waiting for PreDeleteHook %s (run %s)", step.TemplateName, pd.Run)
	c.createRun(a.rec.Namespace, pd.Run, hook.RunSpec{TemplateName: step.TemplateName, Args: hookArgs(given, step.Args),
		Owner: &hook.Owner{Kind: hook.OwnerPreDelete, App: a.rec.Name, Revision: inst.rec.Version, Instance: inst.rec.Index, TaskGroupID: inst.rec.ID}})
}

// preDeleteVerdict takes the end of an instance's PreDeleteHook run: a
// success lets it go, anything else waits for the next run.
func (c *Core) preDeleteVerdict(inst *instance, run *registry.HookRun) {
	pd := inst.rec.PreDelete
	switch {
	case pd.Passed || !run.Status.Phase.Completed():
		return
	case run.Status.Phase == hook.Successful:
		pd.Message = fmt.Sprintf("PreDeleteHook passed (run %s)", run.Name)
		c.preDeletePassed(inst)
	default:
		pd.NotBefore = c.now.Add(PreDeleteRetry)
		pd.Message = fmt.Sprintf("PreDeleteHook run %s %s: %s; another run in %s", run.Name, run.Status.Phase, run.Status.Message, PreDeleteRetry)
		c.persist(inst)
	}
}

// preDeletePassed lets an instance go the way it waited to.
func (c *Core) preDeletePassed(inst *instance) {
	pd := inst.rec.PreDelete
	pd.Passed = true
	delete(c.preDeleting, inst)
	c.logf("PreDeleteHook passed", "app", inst.app.key(), "instance", inst.rec.Index, "reason", pd.Reason, "message", pd.Message)
	if u := inst.rec.Update; pd.Reason == preDeleteInPlace && u != nil && u.Mode == registry.UpdateInPlace {
		c.sendUpdate(inst)
		c.persist(inst)
		return
	}
	c.persist(inst)
	c.kill(inst, KillReason(pd.Reason))
}

// preDeleteInPlace is the reason an in-place update waits for the hook.
const preDeleteInPlace = "in-place"

// preDeleteTick runs the next PreDeleteHook runs due, and lets the
// instances whose wait timed out go.
func (c *Core) preDeleteTick() {
	for _, inst := range slices.SortedFunc(maps.Keys(c.preDeleting), func(x, y *instance) int {
		return cmp.Or(cmp.Compare(x.app.key(), y.app.key()), cmp.Compare(x.rec.Index, y.rec.Index))
	}) {
		pd := inst.rec.PreDelete
		if pd == nil || pd.Passed || inst.app.instances[inst.rec.Index] != inst {
			delete(c.preDeleting, inst)
			continue
		}
		if timeout := inst.app.strategy.PreDeleteTimeout; timeout > 0 && c.now.Sub(pd.Since) >= timeout {
			pd.Message = fmt.Sprintf("PreDeleteHook did not pass within %s: going anyway", timeout)
			c.preDeletePassed(inst)
			continue
		}
		if !pd.NotBefore.IsZero() && !c.now.Before(pd.NotBefore) {
			c.startPreDeleteRun(inst)
			c.persist(inst)
		}
	}
}

// endPreDelete forgets an instance's wait: it went, or it ended on its
// own.
func (c *Core) endPreDelete(inst *instance) {
	if inst.rec.PreDelete != nil {
		inst.rec.PreDelete = nil
		delete(c.preDeleting, inst)
	}
}

// removeRuns deletes the hook runs of a removed application.
func (c *Core) removeRuns(a *app) {
	for _, key := range slices.Sorted(maps.Keys(c.hookRuns)) {
		run := c.hookRuns[key]
		if o := run.Spec.Owner; o != nil && run.Namespace == a.rec.Namespace && o.App == a.rec.Name {
			c.write(Write{DeleteHook: &HookRunRef{run.Namespace, run.Name}})
			delete(c.hookRuns, key)
		}
	}
}
