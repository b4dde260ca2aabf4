package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// AllocationSource says who allocated an instance.
type AllocationSource string

// The sources of an allocation.
const (
	AllocatedByAPI   AllocationSource = "api"   // POST …/instances/{id}/allocate
	AllocatedByProbe AllocationSource = "probe" // the autoscaler's allocation probe
)

// Allocation marks an instance allocated: a game session runs on it
// (Agones' Allocated GameServer). Scale-downs and rollouts keep it until
// it is released. It names the launch it was made for: a relaunched
// instance lost its session, so an allocation of an older launch is
// ignored by the scheduler.
type Allocation struct {
	Namespace   string           `json:"namespace"`
	App         string           `json:"app"`
	Instance    int              `json:"instance"`
	TaskGroupID string           `json:"taskGroupId"`
	Source      AllocationSource `json:"source"`
	Since       time.Time        `json:"since"`
	// By names the caller (the API's user, or the autoscaler).
	By   string `json:"by,omitempty"`
	Note string `json:"note,omitempty"`
	// Revision is the etcd revision the record was read at.
	Revision int64 `json:"-"`
}

func (a *Allocation) setRevision(rev int64) { a.Revision = rev }

// AllocationKey returns the store key of the allocation of an instance.
func AllocationKey(namespace, app string, instance int) (string, error) {
	return store.Key(store.KindAllocation, namespace, app, strconv.Itoa(instance))
}

// Allocate allocates an instance its application wants and whose current
// launch runs; Since is set now, and TaskGroupID to that launch when
// empty. It commits only if the application's record is still as read
// (a scale that removes the instance, committed first, makes it fail with
// errdefs.ErrConflict). Allocating it again for the same launch, source
// and caller returns the allocation there; any other allocation of that
// launch is an errdefs.ErrConflict naming its holder, and one of an
// earlier launch is replaced.
func (r *Registry) Allocate(ctx context.Context, want Allocation) (*Allocation, error) {
	app, err := r.GetApp(ctx, want.Namespace, want.App)
	if err != nil {
		return nil, err
	}
	g, err := r.allocatable(ctx, app, want.Instance)
	if err != nil {
		return nil, err
	}
	if want.TaskGroupID == "" {
		want.TaskGroupID = g.ID
	}
	if want.TaskGroupID != g.ID {
		return nil, fmt.Errorf("instance %s/%s/%d runs launch %q, not %q: %w", app.Namespace, app.Name, want.Instance, g.ID, want.TaskGroupID, errdefs.ErrConflict)
	}
	key, err := AllocationKey(want.Namespace, want.App, want.Instance)
	if err != nil {
		return nil, err
	}
	write := func(value []byte) store.Op { return store.CreateOp(key, value) }
	if held, err := get[Allocation](ctx, r.store, key); err == nil {
		switch {
		case held.TaskGroupID != g.ID:
			// Of an earlier launch, whose session ended with it: replaced.
			write = func(value []byte) store.Op { return store.UpdateOp(key, value, held.Revision) }
		case held.Source == want.Source && held.By == want.By:
			return held, nil
		default:
			return nil, fmt.Errorf("instance %s/%s/%d is allocated already (%s by %q since %s): %w", app.Namespace, app.Name, want.Instance,
				held.Source, held.By, held.Since.Format(time.RFC3339), errdefs.ErrConflict)
		}
	} else if !errors.Is(err, errdefs.ErrNotFound) {
		return nil, err
	}
	want.Since = r.now().UTC()
	value, err := json.Marshal(want)
	if err != nil {
		return nil, err
	}
	check, err := unchangedApp(app)
	if err != nil {
		return nil, err
	}
	epoch, err := store.Key(store.KindAllocationEpoch, want.Namespace, want.App)
	if err != nil {
		return nil, err
	}
	rev, err := r.store.Apply(ctx, check, write(value), store.PutOp(epoch, nil))
	var pe *store.PreconditionError
	if errors.As(err, &pe) && pe.Key == key {
		return nil, fmt.Errorf("instance %s/%s/%d was allocated by another caller meanwhile: %w", app.Namespace, app.Name, want.Instance, errdefs.ErrConflict)
	}
	if err != nil {
		return nil, fmt.Errorf("allocate instance %s/%s/%d: %w", app.Namespace, app.Name, want.Instance, err)
	}
	want.Revision = rev
	return &want, nil
}

// allocatable returns the task group of instance id of app when it may be
// allocated: the application wants it and its current launch runs.
func (r *Registry) allocatable(ctx context.Context, app *App, id int) (*TaskGroup, error) {
	if app.State == AppDeleting {
		return nil, fmt.Errorf("application %s/%s is being deleted: %w", app.Namespace, app.Name, errdefs.ErrConflict)
	}
	if _, wanted := slices.BinarySearch(WantedIDs(app.Instances, app.Removed), id); !wanted {
		return nil, fmt.Errorf("instance %s/%s/%d is not one of the %d it wants (being removed or never there): %w", app.Namespace, app.Name, id, app.Instances, errdefs.ErrConflict)
	}
	g, err := r.GetTaskGroup(ctx, app.Namespace, app.Name, id)
	if errors.Is(err, errdefs.ErrNotFound) {
		return nil, fmt.Errorf("instance %s/%s/%d has not launched yet, not Running: %w", app.Namespace, app.Name, id, errdefs.ErrConflict)
	}
	if err != nil {
		return nil, err
	}
	if g.Phase != "Running" {
		return nil, fmt.Errorf("instance %s/%s/%d is %s, not Running: %w", app.Namespace, app.Name, id, g.Phase, errdefs.ErrConflict)
	}
	return g, nil
}

// unchangedApp makes a write commit only if nothing wrote app since it
// was read.
func unchangedApp(app *App) (store.Op, error) {
	key, err := store.Key(store.KindApplication, app.Namespace, app.Name)
	if err != nil {
		return store.Op{}, err
	}
	return store.CheckOp(key, app.Revision), nil
}

// Release removes the allocation of an instance; errdefs.ErrNotFound when
// it has none.
func (r *Registry) Release(ctx context.Context, namespace, app string, instance int) error {
	key, err := AllocationKey(namespace, app, instance)
	if err != nil {
		return err
	}
	held, err := get[Allocation](ctx, r.store, key)
	if err != nil {
		return fmt.Errorf("allocation of instance %s/%s/%d: %w", namespace, app, instance, err)
	}
	if _, err := r.store.Apply(ctx, store.DeleteOp(key, held.Revision)); err != nil {
		return fmt.Errorf("release instance %s/%s/%d: %w", namespace, app, instance, err)
	}
	return nil
}

// Allocations returns the allocations of an application's instances, or
// of every application when app is "" (and of every namespace when
// namespace is "" too).
func (r *Registry) Allocations(ctx context.Context, namespace, app string) ([]*Allocation, error) {
	prefix, err := allocationsPrefix(namespace, app)
	if err != nil {
		return nil, err
	}
	return list[Allocation](ctx, r.store, prefix)
}

// allocationsPrefix is the prefix of the allocations of app, of
// namespace when app is empty, of every namespace when both are.
func allocationsPrefix(namespace, app string) (string, error) {
	segments := []string{}
	for _, s := range []string{namespace, app} {
		if s == "" {
			break
		}
		segments = append(segments, s)
	}
	return store.Prefix(store.KindAllocation, segments...)
}

// appAllocations returns the allocations of app's instances: live, those
// of the instance's current launch, and stale, those of an earlier one
// or of an instance with no launch, which hold nothing.
func (r *Registry) appAllocations(ctx context.Context, app *App) (live, stale map[int]*Allocation, err error) {
	allocs, err := r.Allocations(ctx, app.Namespace, app.Name)
	if err != nil || len(allocs) == 0 {
		return nil, nil, err
	}
	groups, err := r.TaskGroups(ctx, app.Namespace, app.Name)
	if err != nil {
		return nil, nil, err
	}
	current := make(map[int]string, len(groups))
	for _, g := range groups {
		current[g.Index] = g.ID
	}
	live, stale = map[int]*Allocation{}, map[int]*Allocation{}
	for _, a := range allocs {
		if current[a.Instance] == a.TaskGroupID {
			live[a.Instance] = a
		} else {
			stale[a.Instance] = a
		}
	}
	return live, stale, nil
}

// deleteAllocations deletes the allocations of an application removed
// (its instances all ended), so that one created again under its name
// starts with none.
func (r *Registry) deleteAllocations(ctx context.Context, namespace, app string) error {
	allocs, err := r.Allocations(ctx, namespace, app)
	if err != nil {
		return err
	}
	keys := make([]string, 0, len(allocs)+1)
	for _, a := range allocs {
		key, err := AllocationKey(namespace, app, a.Instance)
		if err != nil {
			return err
		}
		keys = append(keys, key)
	}
	epoch, err := store.Key(store.KindAllocationEpoch, namespace, app)
	if err != nil {
		return err
	}
	for _, key := range append(keys, epoch) {
		if err := r.store.Delete(ctx, key, 0); err != nil && !errors.Is(err, errdefs.ErrNotFound) {
			return err
		}
	}
	return nil
}
