package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/autoscale"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// Every scale write checks that none of the instances it removes is
// allocated, in its own transaction: an allocation committed first makes
// the scale fail, a scale committed first makes the allocation fail
// (Allocate checks the application's revision). So an allocated instance
// is never removed, whichever wins.

// maxStaleDeletes bounds the stale allocations one scale write deletes
// beside it (etcd allows 128 operations in a transaction); those left
// hold nothing and go with the application or the next allocation.
const maxStaleDeletes = 64

// ScaleApp sets the desired instance count; force skips the
// PreDeleteHook of the instances it removes. A scale-up refills the
// lowest holes first, then adds IDs above the highest; a scale-down
// removes what an autoscaler without a scale-down order would
// (autoscale.Victims): instances not running, then not ready, then the
// highest IDs, never an allocated one.
func (r *Registry) ScaleApp(ctx context.Context, namespace, name string, instances int, force bool) (*App, error) {
	return r.ScaleAppRemoving(ctx, namespace, name, instances, nil, force)
}

// ScaleAppRemoving sets the desired instance count to instances with the
// chosen IDs removed among them: each must be wanted now and not
// allocated, and stays a hole (Removed) while it is below the highest ID
// wanted. The count is then reached as ScaleApp reaches it, from the IDs
// left. A workload an autoscaler scales is refused with
// errdefs.ErrConflict unless that autoscaler is paused; so is a
// scale-down that would have to remove an allocated instance.
func (r *Registry) ScaleAppRemoving(ctx context.Context, namespace, name string, instances int, removed []int, force bool) (*App, error) {
	if instances < 0 {
		return nil, fmt.Errorf("instances: must be ≥ 0, got %d: %w", instances, errdefs.ErrInvalidArgument)
	}
	for {
		app, err := r.GetApp(ctx, namespace, name)
		if err != nil {
			return nil, err
		}
		if err := r.notAutoscaled(ctx, app); err != nil {
			return nil, err
		}
		chosen, err := r.manualVictims(ctx, app, instances, removed)
		if err != nil {
			return nil, err
		}
		gone, err := rescaleApp(app, instances, chosen, force)
		if err != nil {
			return nil, err
		}
		app.UpdatedAt = r.now().UTC()
		ops, err := r.scaleOps(ctx, app, gone)
		if errors.Is(err, errdefs.ErrConflict) {
			continue // an instance chosen was allocated meanwhile: choose again
		}
		if err != nil {
			return nil, err
		}
		rev, err := r.store.Apply(ctx, ops...)
		if errors.Is(err, errdefs.ErrConflict) || errors.Is(err, errdefs.ErrAlreadyExists) {
			continue // the application changed or an instance was allocated: choose again
		}
		if err != nil {
			return nil, fmt.Errorf("%s %s/%s: %w", app.Kind, namespace, name, err)
		}
		app.Revision = rev
		return app, nil
	}
}

// notAutoscaled refuses a manual scale of a workload an autoscaler
// scales, unless it is paused: the two would undo each other.
func (r *Registry) notAutoscaled(ctx context.Context, app *App) error {
	holder, err := r.AutoscalerOf(ctx, app.Namespace, app.Name)
	if errors.Is(err, errdefs.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	_, a, err := r.GetAutoscaler(ctx, app.Namespace, holder)
	if errors.Is(err, errdefs.ErrNotFound) {
		return nil // deleted since its target index was read
	}
	if err != nil {
		return err
	}
	if a.Spec.Paused {
		return nil
	}
	return fmt.Errorf("%s/%s is scaled by autoscaler %s/%s; pause it or delete it first: %w",
		app.Namespace, app.Name, app.Namespace, holder, errdefs.ErrConflict)
}

// manualVictims returns the instances a manual scale of app to instances
// removes by choice: those named (none allocated) and, for a scale-down
// beyond them, the autoscale.Victims of the others.
func (r *Registry) manualVictims(ctx context.Context, app *App, instances int, named []int) ([]int, error) {
	wanted := WantedIDs(app.Instances, app.Removed)
	extra := len(wanted) - len(named) - instances
	if len(named) == 0 && extra <= 0 {
		return nil, nil // a scale-up or none: nothing is removed
	}
	live, _, err := r.appAllocations(ctx, app)
	if err != nil {
		return nil, err
	}
	allocated := make(map[int]bool, len(live))
	for id := range live {
		allocated[id] = true
	}
	for _, id := range named {
		if allocated[id] {
			return nil, fmt.Errorf("instance %s/%s/%d is allocated; release it first: %w", app.Namespace, app.Name, id, errdefs.ErrConflict)
		}
	}
	if extra <= 0 {
		return named, nil
	}
	cands, err := r.candidates(ctx, app, wanted, named, allocated)
	if err != nil {
		return nil, err
	}
	victims := autoscale.Victims(cands, extra)
	if len(victims) < extra {
		return nil, fmt.Errorf("%s/%s cannot go to %d instances: %d of its %d are allocated and stay until released: %w",
			app.Namespace, app.Name, instances, len(allocated), len(wanted), errdefs.ErrConflict)
	}
	chosen := slices.Clone(named)
	for _, v := range victims {
		chosen = append(chosen, v.ID)
	}
	return chosen, nil
}

// candidates describes the wanted instances of app not named for removal
// as autoscale.Victims sees them.
func (r *Registry) candidates(ctx context.Context, app *App, wanted, named []int, allocated map[int]bool) ([]autoscale.Candidate, error) {
	groups, err := r.TaskGroups(ctx, app.Namespace, app.Name)
	if err != nil {
		return nil, err
	}
	byID := make(map[int]*TaskGroup, len(groups))
	for _, g := range groups {
		byID[g.Index] = g
	}
	cands := make([]autoscale.Candidate, 0, len(wanted))
	for _, id := range wanted {
		if slices.Contains(named, id) {
			continue
		}
		c := autoscale.Candidate{ID: id, Allocated: allocated[id]}
		if g := byID[id]; g != nil {
			c.Running = g.Phase == "Running"
			c.Ready = c.Running && g.Ready
		}
		cands = append(cands, c)
	}
	return cands, nil
}

// rescaleApp sets app to want instances with the chosen IDs removed
// (Rescale) and returns the IDs it wanted and no longer does.
func rescaleApp(app *App, instances int, chosen []int, force bool) ([]int, error) {
	if err := notDependencyPod(app); err != nil {
		return nil, err
	}
	if app.State == AppDeleting {
		return nil, fmt.Errorf("application %s/%s is being deleted: %w", app.Namespace, app.Name, errdefs.ErrConflict)
	}
	if app.Kind == manifest.KindDaemonset {
		return nil, fmt.Errorf("%s/%s is a daemonset: it runs one instance on every agent its constraint admits and cannot be scaled: %w", app.Namespace, app.Name, errdefs.ErrInvalidArgument)
	}
	holes, err := Rescale(app.Instances, app.Removed, instances, chosen)
	if err != nil {
		return nil, fmt.Errorf("%s/%s: %w", app.Namespace, app.Name, err)
	}
	after := WantedIDs(instances, holes)
	gone := slices.DeleteFunc(WantedIDs(app.Instances, app.Removed), func(id int) bool {
		_, kept := slices.BinarySearch(after, id)
		return kept
	})
	app.Instances, app.Removed, app.Force = instances, holes, force
	return gone, nil
}

// scaleOps writes app at the revision it was read at, provided none of
// the instances gone is allocated: their allocations are read after the
// application's allocation epoch, which every allocation rewrites, and
// the write commits only if that epoch is unchanged — one compare
// however many instances go. The allocation of an earlier launch of one
// (its session ended with that launch) is deleted with the write.
func (r *Registry) scaleOps(ctx context.Context, app *App, gone []int) ([]store.Op, error) {
	ops, err := r.appWrite(app, app.Revision)
	if err != nil {
		return nil, err
	}
	ops = ops[:1]
	if len(gone) == 0 {
		return ops, nil
	}
	epochKey, err := store.Key(store.KindAllocationEpoch, app.Namespace, app.Name)
	if err != nil {
		return nil, err
	}
	epoch, err := r.store.Get(ctx, epochKey)
	switch {
	case err == nil:
		ops = append(ops, store.CheckOp(epochKey, epoch.Revision))
	case errors.Is(err, errdefs.ErrNotFound):
		ops = append(ops, store.AbsentOp(epochKey))
	default:
		return nil, err
	}
	live, stale, err := r.appAllocations(ctx, app)
	if err != nil {
		return nil, err
	}
	deletes := 0
	for _, id := range gone {
		if live[id] != nil {
			return nil, fmt.Errorf("instance %s/%s/%d is allocated; release it first: %w", app.Namespace, app.Name, id, errdefs.ErrConflict)
		}
		if a := stale[id]; a != nil && deletes < maxStaleDeletes {
			key, err := AllocationKey(app.Namespace, app.Name, id)
			if err != nil {
				return nil, err
			}
			ops = append(ops, store.DeleteOp(key, a.Revision))
			deletes++
		}
	}
	return ops, nil
}

// ScaleWrite is a scale an autoscaler decided.
type ScaleWrite struct {
	// App is the workload's record the decision was made on; the write
	// commits only if it is unchanged.
	App *App
	// Instances is the new size; Remove the instances chosen to go (for a
	// scale-down without them, the highest IDs go).
	Instances int
	Remove    []int
	// Status is the autoscaler's decision record, the scale in it. When
	// its ObservedRevision is set, the write commits only if the
	// autoscaler's spec is still at that revision.
	Status *AutoscalerStatus
}

// ApplyScaleDecision writes an autoscaler's scale in one transaction:
// the workload's new size and holes, the check that none of the instances
// it removes is allocated, and the autoscaler's status. Either all is
// written or nothing: errdefs.ErrConflict when the workload or the
// autoscaler changed since read or an instance to remove was allocated
// (re-read and decide again), errdefs.ErrNotFound when either is gone,
// store.ErrDeposed when r writes through a fenced store whose leadership
// ended. The write is the size, not a change of it, so retrying it after
// an ambiguous error scales no further. It returns the app as written
// and sets the status's Revision.
func (r *Registry) ApplyScaleDecision(ctx context.Context, w ScaleWrite) (*App, error) {
	if w.App == nil || w.Status == nil {
		return nil, fmt.Errorf("scale decision: app and status are required: %w", errdefs.ErrInvalidArgument)
	}
	if w.Instances < 0 {
		return nil, fmt.Errorf("instances: must be ≥ 0, got %d: %w", w.Instances, errdefs.ErrInvalidArgument)
	}
	app := *w.App
	app.Removed = slices.Clone(w.App.Removed)
	gone, err := rescaleApp(&app, w.Instances, w.Remove, false)
	if err != nil {
		return nil, err
	}
	now := r.now().UTC()
	app.UpdatedAt = now
	ops, err := r.scaleOps(ctx, &app, gone)
	if err != nil {
		return nil, err
	}
	statusOps, err := statusWrite(w.Status, now)
	if err != nil {
		return nil, err
	}
	rev, err := r.store.Apply(ctx, append(ops, statusOps...)...)
	if err != nil {
		return nil, scaleError(&app, w.Status, err)
	}
	app.Revision, w.Status.Revision = rev, rev
	return &app, nil
}

// statusWrite stores s at now and, when it names the spec revision
// decided on, checks the spec is still there.
func statusWrite(s *AutoscalerStatus, now time.Time) ([]store.Op, error) {
	specKey, err := store.Key(store.KindAutoscaler, s.Namespace, s.Name)
	if err != nil {
		return nil, err
	}
	statusKey, err := store.Key(store.KindAutoscalerStatus, s.Namespace, s.Name)
	if err != nil {
		return nil, err
	}
	s.UpdatedAt = now
	value, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	ops := []store.Op{store.PutOp(statusKey, value)}
	if s.ObservedRevision > 0 {
		ops = append(ops, store.CheckOp(specKey, s.ObservedRevision))
	}
	return ops, nil
}

// scaleError says why a scale decision was not written, an allocation
// found as a conflict of the decision.
func scaleError(app *App, s *AutoscalerStatus, err error) error {
	var pe *store.PreconditionError
	if errors.As(err, &pe) && strings.HasPrefix(pe.Key, string(store.KindAllocationEpoch)+"/") {
		return fmt.Errorf("scale of %s/%s by autoscaler %s: an instance of it was allocated since read (%s): %w",
			app.Namespace, app.Name, s.Name, pe.Key, errdefs.ErrConflict)
	}
	return fmt.Errorf("scale of %s/%s by autoscaler %s: %w", app.Namespace, app.Name, s.Name, err)
}
