package pod

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/taskstate"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// UpdatePlan is a proto.GroupUpdate checked against the pod: what Update
// will do. Making it changes nothing.
type UpdatePlan struct {
	Revision uint64
	Mode     proto.UpdateMode
	// Current: every running task already runs Revision, so Update
	// would change nothing.
	Current bool
	// Changed are the tasks whose containers Update re-creates (InPlace)
	// or patches (HotPatch), in group order.
	Changed []string
	// Grace is InPlace's wait between draining and restarting.
	Grace time.Duration

	update  *proto.GroupUpdate
	base    []*proto.TaskSpec // the specs the plan was made against, by task
	next    []*proto.TaskSpec // the new specs, by task
	changed []bool            // by task
}

// PlanUpdate checks u against the running pod: every task of the pod named
// once with a container spec of the same name; for HotPatch only changes
// that can be applied to running containers (image, configmap/secret
// files, cpu and memory limits, health checks, kill grace period); for
// InPlace no change of the pod's network. A refusal names the task and the
// fields. A finished task (its container exited 0) is left as it ran, at
// its revision: only the running ones move.
func (p *Pod) PlanUpdate(u *proto.GroupUpdate) (*UpdatePlan, error) {
	if u == nil {
		return nil, fmt.Errorf("update without a revision: %w", errdefs.ErrInvalidArgument)
	}
	switch {
	case u.Revision == 0:
		return nil, fmt.Errorf("update: revision 0: %w", errdefs.ErrInvalidArgument)
	case u.Mode != proto.UpdateInPlace && u.Mode != proto.UpdateHotPatch:
		return nil, fmt.Errorf("update to revision %d: mode %q (InPlace, HotPatch): %w", u.Revision, u.Mode, errdefs.ErrInvalidArgument)
	case u.GracePeriodSeconds < 0:
		return nil, fmt.Errorf("update to revision %d: gracePeriodSeconds %g: %w", u.Revision, u.GracePeriodSeconds, errdefs.ErrInvalidArgument)
	case u.ReloadSignal < 0 || (u.ReloadSignal > 0 && len(u.ReloadCommand) > 0):
		return nil, fmt.Errorf("update to revision %d: reloadSignal %d and reloadCommand %q: at most one, a positive signal: %w",
			u.Revision, u.ReloadSignal, u.ReloadCommand, errdefs.ErrInvalidArgument)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.state != taskstate.Running {
		return nil, fmt.Errorf("update to revision %d: pod %q is %s, not running: %w", u.Revision, p.cfg.PodID, p.state, errdefs.ErrConflict)
	}
	plan := &UpdatePlan{
		Revision: u.Revision, Mode: u.Mode, Current: true, update: u,
		Grace: time.Duration(u.GracePeriodSeconds * float64(time.Second)),
		base:  make([]*proto.TaskSpec, len(p.tasks)), next: make([]*proto.TaskSpec, len(p.tasks)), changed: make([]bool, len(p.tasks)),
	}
	index := map[string]int{}
	for i, t := range p.tasks {
		index[t.id] = i
		plan.base[i] = t.spec
	}
	for _, tu := range u.Tasks {
		i, ok := index[tu.TaskID]
		switch {
		case !ok:
			return nil, fmt.Errorf("update to revision %d: task %q is not a task of pod %q: %w", u.Revision, tu.TaskID, p.cfg.PodID, errdefs.ErrInvalidArgument)
		case plan.next[i] != nil:
			return nil, fmt.Errorf("update to revision %d: task %q named twice: %w", u.Revision, tu.TaskID, errdefs.ErrInvalidArgument)
		case tu.Spec == nil || tu.Spec.Container == nil:
			return nil, fmt.Errorf("update to revision %d: task %q: not a container spec: %w", u.Revision, tu.TaskID, errdefs.ErrInvalidArgument)
		}
		plan.next[i] = tu.Spec
	}
	for i, t := range p.tasks {
		if plan.next[i] == nil {
			return nil, fmt.Errorf("update to revision %d: no spec for task %q: %w", u.Revision, t.id, errdefs.ErrInvalidArgument)
		}
		if t.state == taskstate.Finished {
			plan.next[i] = t.spec // done (seed 001): it stays as it ran
			continue
		}
		if t.state != taskstate.Running {
			return nil, fmt.Errorf("update to revision %d: task %q is %s, not running: %w", u.Revision, t.id, t.state, errdefs.ErrConflict)
		}
		plan.Current = plan.Current && t.revision == u.Revision
	}
	if plan.Current {
		return plan, nil
	}
	for i, t := range p.tasks {
		if t.state == taskstate.Finished {
			continue
		}
		fields := specChanges(t.spec, plan.next[i])
		if err := p.refusal(u, i, t, plan.next[i], fields); err != nil {
			return nil, err
		}
		plan.changed[i] = len(fields) > 0 || (u.Mode == proto.UpdateInPlace && u.Restart)
		if plan.changed[i] {
			plan.Changed = append(plan.Changed, t.id)
		}
	}
	return plan, nil
}

// hotPatchable are the fields a hot-patch changes in running containers.
var hotPatchable = map[string]bool{
	"image": true, "pullPolicy": true, "pullUser": true, "pullPassword": true,
	"files": true, "healthChecks": true, "killGracePeriodSeconds": true,
	"resources.cpus": true, "resources.memMB": true, "resources.cpuLimit": true,
	"resources.memLimitMB": true, "resources.memSwapMB": true,
}

// refusal says why task i (t) cannot move to next by u, naming the
// fields; nil when it can. Caller holds mu.
func (p *Pod) refusal(u *proto.GroupUpdate, i int, t *task, next *proto.TaskSpec, fields []string) error {
	var reasons []string
	refused := map[string][]string{} // reason → fields
	refuse := func(field, why string) {
		if refused[why] == nil {
			reasons = append(reasons, why)
		}
		refused[why] = append(refused[why], field)
	}
	inPlace, shared := u.Mode == proto.UpdateInPlace, p.netShared
	for _, f := range fields {
		switch {
		case f == "name":
			refuse(f, "a task keeps its container name")
		case f == "resources.pinCPUs", f == "resources.cpus" && t.cpuset != nil:
			refuse(f, "the CPUs pinned at launch stay")
		case !inPlace && !hotPatchable[f]:
			refuse(f, "they need a restart (use InplaceUpdate)")
		case inPlace && (f == "networkMode" || f == "networkType"):
			refuse(f, "the pod keeps its network")
		case inPlace && shared && f == "ports":
			refuse(f, "the pod's network container publishes them")
		case inPlace && shared && i == 0 && f == "hostname":
			refuse(f, "the pod's network container holds the first task's hostname")
		case inPlace && shared && i == 0 && f == "parameters" && networkParamsDiffer(t.spec, next):
			refuse("parameters net/ip", "the pod's network container holds the first task's network")
		}
	}
	if len(reasons) == 0 {
		return nil
	}
	verb := "in-place update"
	if !inPlace {
		verb = "hot-patch"
	}
	parts := make([]string, len(reasons))
	for k, why := range reasons {
		parts[k] = strings.Join(refused[why], ", ") + ": " + why
	}
	return fmt.Errorf("%s of task %q cannot change %s: %w", verb, t.id, strings.Join(parts, "; "), errdefs.ErrInvalidArgument)
}

// networkParamsDiffer tells whether the net or ip docker parameters
// differ between a and b (parameters that do not parse are refused when
// the new container's options are made).
func networkParamsDiffer(a, b *proto.TaskSpec) bool {
	pa, errA := parseParams(a.Container.Parameters)
	pb, errB := parseParams(b.Container.Parameters)
	return errA == nil && errB == nil && (pa.Net != pb.Net || pa.IP != pb.IP)
}

// specChanges names the fields in which next differs from cur, by their
// JSON names (container fields bare, "resources.<field>"), ignoring the
// instance bookkeeping (version, instance) and the egress policy (how
// the executor fetches, not what runs).
func specChanges(cur, next *proto.TaskSpec) []string {
	skip := map[string]bool{"version": true, "instance": true, "container": true, "resources": true, "egress": true}
	out := fieldChanges("", reflect.ValueOf(*cur), reflect.ValueOf(*next), skip)
	out = append(out, fieldChanges("", reflect.ValueOf(*cur.Container), reflect.ValueOf(*next.Container), nil)...)
	return append(out, fieldChanges("resources.", reflect.ValueOf(cur.Resources), reflect.ValueOf(next.Resources), nil)...)
}

// fieldChanges compares the fields of two structs of one type; an empty
// slice or map equals a nil one.
func fieldChanges(prefix string, a, b reflect.Value, skip map[string]bool) []string {
	var out []string
	for i := range a.NumField() {
		name, _, _ := strings.Cut(a.Type().Field(i).Tag.Get("json"), ",")
		if skip[name] {
			continue
		}
		x, y := a.Field(i), b.Field(i)
		if (x.Kind() == reflect.Slice || x.Kind() == reflect.Map) && x.Len() == 0 && y.Len() == 0 {
			continue
		}
		if !reflect.DeepEqual(x.Interface(), y.Interface()) {
			out = append(out, prefix+name)
		}
	}
	return out
}

// Update moves the pod to plan's revision; the tasks' ContainerInfo then
// carries it (Revision). One Update runs at a time, and Restart and
// UpdateEnv wait for none: they are refused meanwhile.
//
// InPlace pulls the changed tasks' images (per pullPolicy) and checks
// their new containers' options, calls draining (the changed tasks are
// about to restart: the caller reports them not ready), waits plan.Grace
// on the pod's clock, then re-creates the changed containers from their
// new specs in the pod's network, all or none (see recreate): on failure
// the old containers run again, every task keeps its revision and the
// error names the task and the cause. A Kill, a failure of the pod or the
// end of ctx during the wait ends the update before anything restarted.
//
// HotPatch restarts nothing; see hotPatch.
func (p *Pod) Update(ctx context.Context, plan *UpdatePlan, draining func()) error {
	if plan.Current {
		return nil
	}
	p.mu.Lock()
	switch {
	case p.updating != 0:
		p.mu.Unlock()
		return fmt.Errorf("pod %q is being updated to revision %d: %w", p.cfg.PodID, p.updating, errdefs.ErrConflict)
	case p.state != taskstate.Running:
		p.mu.Unlock()
		return fmt.Errorf("update to revision %d: pod %q is %s, not running: %w", plan.Revision, p.cfg.PodID, p.state, errdefs.ErrConflict)
	}
	for i, t := range p.tasks {
		if t.spec != plan.base[i] {
			p.mu.Unlock()
			return fmt.Errorf("update to revision %d: task %q changed since the update was planned: %w", plan.Revision, t.id, errdefs.ErrConflict)
		}
	}
	p.updating = plan.Revision
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.updating = 0
		p.mu.Unlock()
	}()
	if plan.Mode == proto.UpdateHotPatch {
		return p.hotPatch(ctx, plan)
	}
	return p.inPlace(ctx, plan, draining)
}

func (p *Pod) inPlace(ctx context.Context, plan *UpdatePlan, draining func()) error {
	var recs []recreation
	var changed []*task
	for i, t := range p.tasks {
		if !plan.changed[i] {
			continue
		}
		next := plan.next[i]
		if err := p.pull(ctx, next.Container); err != nil {
			return fmt.Errorf("in-place update of task %q: %w", t.id, err)
		}
		c, err := p.createOptions(ctx, t, next)
		if err != nil {
			return fmt.Errorf("in-place update of task %q: %w", t.id, err)
		}
		recs = append(recs, recreation{t: t, spec: next, plan: c})
		changed = append(changed, t)
	}
	if len(recs) > 0 {
		if draining != nil {
			draining()
		}
		if err := p.drain(ctx, plan); err != nil {
			return err
		}
		release, err := p.claim(changed, true)
		if err != nil {
			return fmt.Errorf("in-place update to revision %d: %w", plan.Revision, err)
		}
		err = p.recreate(ctx, recs)
		release()
		if err != nil {
			return fmt.Errorf("in-place update to revision %d: %w", plan.Revision, err)
		}
	}
	p.mu.Lock()
	for i, t := range p.tasks {
		if t.state != taskstate.Finished {
			t.spec = plan.next[i]
			p.setRevision(t, plan.Revision)
		}
	}
	p.mu.Unlock()
	return nil
}

// drain waits plan.Grace, unless the pod is killed or fails, or ctx ends.
func (p *Pod) drain(ctx context.Context, plan *UpdatePlan) error {
	if plan.Grace <= 0 {
		return nil
	}
	select {
	case <-p.cfg.Clock.After(plan.Grace):
		return nil
	case <-p.halted:
		return fmt.Errorf("in-place update to revision %d: pod %q was killed or failed before its containers restarted: %w", plan.Revision, p.cfg.PodID, errdefs.ErrConflict)
	case <-ctx.Done():
		return fmt.Errorf("in-place update to revision %d: %w before the containers restarted", plan.Revision, ctx.Err())
	}
}

// setRevision records that t runs revision rev. Caller holds mu.
func (p *Pod) setRevision(t *task, rev uint64) {
	t.revision = rev
	t.info.Revision = rev
}
