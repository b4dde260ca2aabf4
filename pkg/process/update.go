package process

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/executor"
	"github.com/bcs-mesos/bcs-mesos/pkg/taskstate"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// group is one task group as launched: what a proto.GroupUpdate moves to
// a new revision.
type group struct {
	rt      *Runtime
	tasks   []*task // in launch order
	updates executor.Updates
}

// update moves the group to u.Revision (proto.MessageUpdate), one update
// at a time (executor.Updates); one to the revision every task runs
// already only reports the tasks again, since the scheduler resends an
// update whose answer or statuses it lost.
func (g *group) update(ctx context.Context, u *proto.GroupUpdate) error {
	if u == nil {
		return fmt.Errorf("update message without an update: %w", errdefs.ErrInvalidArgument)
	}
	return g.updates.Do(ctx, u.Revision, func() error { return g.apply(ctx, u) })
}

// apply checks the whole update before touching any task, then moves
// every task at once.
func (g *group) apply(ctx context.Context, u *proto.GroupUpdate) error {
	if g.runs(u.Revision) {
		for _, t := range g.tasks {
			t.reportAgain(fmt.Sprintf("revision %d applied already", u.Revision))
		}
		return nil
	}
	resolved, err := g.rt.cfg.Remote.ResolveUpdate(ctx, u)
	if err != nil {
		return fmt.Errorf("update to revision %d refused, nothing changed: %w", u.Revision, err)
	}
	u = resolved
	steps, err := g.plan(u)
	if err != nil {
		return fmt.Errorf("update to revision %d refused, nothing changed: %w", u.Revision, err)
	}
	errs := make([]error, len(steps))
	var wg sync.WaitGroup
	for i, s := range steps {
		wg.Go(func() { errs[i] = s.run(ctx, u) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// runs reports whether every task of the group runs revision.
func (g *group) runs(revision uint64) bool {
	for _, t := range g.tasks {
		t.mu.Lock()
		at := t.info.Revision
		t.mu.Unlock()
		if at != revision {
			return false
		}
	}
	return true
}

// step is one task's part of an update.
type step struct {
	t       *task
	spec    *proto.TaskSpec
	changed []string // the spec's fields that differ, by JSON name
}

// plan pairs every task of the group with its new spec and refuses the
// update, naming every task and field at fault, when it is malformed or
// when a task cannot take its new spec in u.Mode.
func (g *group) plan(u *proto.GroupUpdate) ([]step, error) {
	var errs []error
	invalid := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf(format+": %w", append(args, errdefs.ErrInvalidArgument)...))
	}
	if u.Mode != proto.UpdateInPlace && u.Mode != proto.UpdateHotPatch {
		invalid("mode %q: want %s or %s", u.Mode, proto.UpdateInPlace, proto.UpdateHotPatch)
	}
	if u.GracePeriodSeconds < 0 {
		invalid("gracePeriodSeconds %v is negative", u.GracePeriodSeconds)
	}
	if u.Restart && u.Mode == proto.UpdateHotPatch {
		invalid("restart: a hot-patch restarts nothing (use InplaceUpdate)")
	}
	listed := map[string]bool{}
	specs := map[string]*proto.TaskSpec{}
	for _, tu := range u.Tasks {
		spec := tu.Spec
		switch {
		case !slices.ContainsFunc(g.tasks, func(t *task) bool { return t.id == tu.TaskID }):
			invalid("tasks: task %q is not in this group", tu.TaskID)
		case listed[tu.TaskID]:
			invalid("tasks: task %q is listed twice", tu.TaskID)
		case spec == nil || spec.Process == nil || spec.Container != nil || spec.Sweep != nil:
			listed[tu.TaskID] = true
			invalid("tasks: task %q: the spec must be a process spec", tu.TaskID)
		case spec.Instance.Version != u.Revision:
			listed[tu.TaskID] = true
			invalid("tasks: task %q: instance.version %d is not the update's revision %d", tu.TaskID, spec.Instance.Version, u.Revision)
		default:
			listed[tu.TaskID] = true
			specs[tu.TaskID] = spec
		}
	}
	var steps []step
	for _, t := range g.tasks {
		if !listed[t.id] {
			invalid("tasks: task %q of the group is missing", t.id)
		}
		spec := specs[t.id]
		if spec == nil {
			continue
		}
		if err := t.checkRunning("update"); err != nil {
			errs = append(errs, err)
			continue
		}
		s := step{t: t, spec: spec, changed: specChanges(t.currentSpec(), spec)}
		if err := s.check(u); err != nil {
			errs = append(errs, err)
			continue
		}
		steps = append(steps, s)
	}
	return steps, errors.Join(errs...)
}

// identityFields make a task what it is in its group and on the host:
// an update keeps them (the scheduler relaunches to change them).
var identityFields = []string{"name", "instance", "ports", "workPath", "pidFile"}

// hotPatchable are the fields a hot-patch applies to a running process:
// files, packages and limits change under it, the checks restart, and
// reloadCmd is what runs next. Any other change needs a restart.
var hotPatchable = []string{"uris", "files", "resources", "healthChecks", "reloadCmd"}

// check refuses what s.t cannot take in u.Mode, and a new spec that
// could not be prepared.
func (s step) check(u *proto.GroupUpdate) error {
	var fixed, restart []string
	for _, f := range s.changed {
		switch {
		case slices.Contains(identityFields, f):
			fixed = append(fixed, f)
		case !slices.Contains(hotPatchable, f):
			restart = append(restart, f)
		}
	}
	if len(fixed) > 0 {
		return fmt.Errorf("update of task %q cannot change %s: they need a new launch: %w", s.t.id, strings.Join(fixed, ", "), errdefs.ErrInvalidArgument)
	}
	if u.Mode == proto.UpdateHotPatch && len(restart) > 0 {
		return fmt.Errorf("hot-patch of task %q cannot change %s: they need a restart (use InplaceUpdate): %w", s.t.id, strings.Join(restart, ", "), errdefs.ErrInvalidArgument)
	}
	if len(s.changed) > 0 || u.Restart {
		if _, _, err := s.t.rt.checkSpec(s.spec); err != nil {
			return fmt.Errorf("task %q: %w", s.t.id, err)
		}
	}
	return nil
}

// run moves s.t to u.Revision: changed tasks are restarted in place or
// hot-patched, the others only take the revision.
func (s step) run(ctx context.Context, u *proto.GroupUpdate) error {
	switch {
	case u.Mode == proto.UpdateInPlace && (len(s.changed) > 0 || u.Restart):
		return s.t.restartInPlace(s.spec, u.Revision, time.Duration(u.GracePeriodSeconds*float64(time.Second)))
	case u.Mode == proto.UpdateHotPatch && len(s.changed) > 0:
		return s.t.hotPatch(ctx, s.spec, u.Revision)
	}
	return s.t.adopt(s.spec, u.Revision)
}

// specChanges names the fields of a process task's spec (by their JSON
// names, ProcessSpec's unqualified) that differ between old and new.
// Instance.Version and TaskGroupID are the revision's bookkeeping, and
// the egress policy how the executor fetches, not what runs.
func specChanges(old, new *proto.TaskSpec) []string {
	o, n := *old, *new
	o.Instance.Version, o.Instance.TaskGroupID = 0, ""
	n.Instance.Version, n.Instance.TaskGroupID = 0, ""
	changed := fieldChanges(reflect.ValueOf(o), reflect.ValueOf(n), "version", "container", "process", "sweep", "egress")
	return append(changed, fieldChanges(reflect.ValueOf(*o.Process), reflect.ValueOf(*n.Process))...)
}

// fieldChanges compares two structs of one type field by field, but for
// skip; an empty list equals a missing one (JSON omits both).
func fieldChanges(a, b reflect.Value, skip ...string) []string {
	var changed []string
	for i := range a.NumField() {
		name, _, _ := strings.Cut(a.Type().Field(i).Tag.Get("json"), ",")
		if slices.Contains(skip, name) {
			continue
		}
		fa, fb := a.Field(i), b.Field(i)
		if fa.Kind() == reflect.Slice && fa.Len() == 0 && fb.Len() == 0 {
			continue
		}
		if !reflect.DeepEqual(fa.Interface(), fb.Interface()) {
			changed = append(changed, name)
		}
	}
	return changed
}

// checkRunning says why what cannot act on the task now: it is not
// running (launching, stopping, ended). Callers hold opMu to act on a
// nil answer.
func (t *task) checkRunning(what string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.life != lifeRunning || t.ctx.Err() != nil {
		return fmt.Errorf("%s: task %q is not running: %w", what, t.id, errdefs.ErrConflict)
	}
	return nil
}

// restartInPlace moves the task to spec with a new process, keeping its
// task ID, work path, host ports and cgroup: it reports itself not
// ready, waits grace so that traffic drains, stops the process as a kill
// would but stays RUNNING, prepares spec (packages, files, environment,
// limits) and starts it. A start that fails fails the task; a kill
// during any of it wins.
func (t *task) restartInPlace(spec *proto.TaskSpec, revision uint64, grace time.Duration) error {
	what := fmt.Sprintf("in-place update to revision %d", revision)
	t.opMu.Lock()
	defer t.opMu.Unlock()
	if err := t.checkRunning(what); err != nil {
		return err
	}
	// Checks of a process about to stop would only race the verdict.
	t.stopHealthChecks()
	notReady := false
	t.report(taskstate.Running, nil, fmt.Sprintf("%s: not ready, restarting in %v", what, grace), &notReady)
	interrupted := fmt.Errorf("%s of task %q: interrupted, the task is ending: %w", what, t.id, errdefs.ErrConflict)
	select {
	case <-t.rt.cfg.Clock.After(grace):
	case <-t.ctx.Done():
		return interrupted
	}
	t.mu.Lock()
	if t.ctx.Err() != nil || !t.advance(lifeStopping) {
		t.mu.Unlock()
		return interrupted
	}
	old := t.inst
	t.mu.Unlock()
	t.stop(old, t.killGrace)
	if err := t.ctx.Err(); err != nil { // killed while stopping: nothing to prepare
		return t.failRestart(what, err)
	}
	t.mu.Lock()
	t.setSpec(spec)
	t.mu.Unlock()
	if err := t.prepare(); err != nil {
		return t.failRestart(what, err)
	}
	inst, err := t.start(t.proc.StartCmd)
	if err != nil {
		return t.failRestart(what, err)
	}
	t.mu.Lock()
	t.info.Revision = revision
	t.mu.Unlock()
	// The checks' verdicts follow; without checks nothing else would
	// take back the explicit not-ready.
	var healthy *bool
	if len(spec.HealthChecks) == 0 {
		ready := true
		healthy = &ready
	}
	t.running(inst, what+": restarted", healthy)
	return nil
}

// hotPatch moves the running process to spec without restarting it:
// configmap and secret files and packages over the old ones, the new
// cgroup limits, the health checks restarted when they changed; then the
// new reloadCmd tells the process. The revision moves on once the files
// are in place, even when reloadCmd fails.
func (t *task) hotPatch(ctx context.Context, spec *proto.TaskSpec, revision uint64) error {
	what := fmt.Sprintf("hot-patch to revision %d", revision)
	t.opMu.Lock()
	defer t.opMu.Unlock()
	if err := t.checkRunning(what); err != nil {
		return err
	}
	t.mu.Lock()
	acct, cg, old, runs := t.acct, t.cg, t.spec, t.info.Revision
	t.mu.Unlock()
	sb, err := t.rt.sandbox(spec, acct)
	if err == nil {
		err = t.install(spec, sb)
	}
	if err == nil && cg != nil {
		err = cg.SetLimits(spec.Resources)
	}
	if err != nil {
		return fmt.Errorf("%s of task %q: %w (some files may be replaced already; the task still runs revision %d)", what, t.id, err, runs)
	}
	checksChanged := slices.Contains(specChanges(old, spec), "healthChecks")
	if checksChanged {
		t.stopHealthChecks()
	}
	t.mu.Lock()
	t.setSpec(spec)
	t.info.Revision = revision
	if checksChanged {
		t.healthy, t.lastHealthy = map[int]bool{}, nil
	}
	t.mu.Unlock()
	var healthy *bool
	if checksChanged {
		t.startHealthChecks()
		if len(spec.HealthChecks) == 0 {
			ready := true
			healthy = &ready
		}
	}
	msg := what + ": applied"
	if spec.Process.ReloadCmd != "" {
		if err = t.reload(ctx, spec.Process.ReloadCmd); err != nil {
			msg = fmt.Sprintf("%s: the files are in place and the task runs revision %d, but reloadCmd failed: %v", what, revision, err)
			err = fmt.Errorf("task %q: %s", t.id, msg)
		}
	}
	t.report(taskstate.Running, nil, msg, healthy)
	return err
}

// reload runs command (a reloadCmd) bounded by ctx, CommandTimeout and
// a kill of the task; a non-zero exit is an error quoting the output.
func (t *task) reload(ctx context.Context, command string) error {
	ctx, cancel := t.rt.commandContext(ctx)
	defer cancel()
	defer context.AfterFunc(t.ctx, cancel)()
	out, code, err := t.runCommand(ctx, command)
	if err != nil {
		return err
	}
	if code != 0 {
		const keep = 512
		text := strings.TrimSpace(out.String())
		if len(text) > keep {
			text = "…" + text[len(text)-keep:]
		}
		return fmt.Errorf("exit status %d: %s", code, text)
	}
	return nil
}

// adopt moves a task the update does not change to revision: it takes
// the new spec (only the bookkeeping differs) and restarts nothing.
func (t *task) adopt(spec *proto.TaskSpec, revision uint64) error {
	what := fmt.Sprintf("update to revision %d", revision)
	t.opMu.Lock()
	defer t.opMu.Unlock()
	if err := t.checkRunning(what); err != nil {
		return err
	}
	t.mu.Lock()
	t.setSpec(spec)
	t.info.Revision = revision
	t.mu.Unlock()
	t.report(taskstate.Running, nil, what+": unchanged, nothing restarted", nil)
	return nil
}

// reportAgain reports a running task's status again, with msg.
func (t *task) reportAgain(msg string) {
	t.opMu.Lock()
	defer t.opMu.Unlock()
	if t.checkRunning("report") == nil {
		t.report(taskstate.Running, nil, msg, nil)
	}
}
