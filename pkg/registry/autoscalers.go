package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// An autoscaler is stored as an Object of kind autoscaler under
// autoscalers/<ns>/<name>, written by the API. The workload it scales is
// indexed under autoscaletargets/<ns>/<workload> in the same
// transaction, so a workload has at most one autoscaler: a second one is
// refused naming the first, rather than two deciding against each other.
// Its status is the leader's (PutAutoscalerStatuses) and goes with it.

// AutoscaleTarget is the index record of a scaled workload: the
// autoscaler of its namespace that scales it.
type AutoscaleTarget struct {
	Autoscaler string        `json:"autoscaler"`
	Kind       manifest.Kind `json:"kind"`
}

// AutoscalerStatus is the stored status of an autoscaler: what the
// leading scheduler last decided for it. Only the leader writes it,
// through its fenced store.
type AutoscalerStatus struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	manifest.AutoscalerStatus
	Revision int64 `json:"-"`
}

func (s *AutoscalerStatus) setRevision(rev int64) { s.Revision = rev }

func autoscalerKeys(namespace, name, target string) (spec, status, index string, err error) {
	if spec, err = store.Key(store.KindAutoscaler, namespace, name); err != nil {
		return
	}
	if status, err = store.Key(store.KindAutoscalerStatus, namespace, name); err != nil {
		return
	}
	index, err = store.Key(store.KindAutoscaleTarget, namespace, target)
	return
}

// autoscalerRecord is the stored form of a, with the times of rec (nil
// for a new one).
func (r *Registry) autoscalerRecord(a *manifest.Autoscaler, rec *Object) (*Object, []byte, error) {
	spec, err := json.Marshal(a)
	if err != nil {
		return nil, nil, err
	}
	now := r.now().UTC()
	out := &Object{Kind: manifest.KindAutoscaler, Namespace: a.Metadata.Namespace, Name: a.Metadata.Name, Spec: spec, CreatedAt: now, UpdatedAt: now}
	if rec != nil {
		out.CreatedAt = rec.CreatedAt
	}
	value, err := json.Marshal(out)
	return out, value, err
}

func indexValue(a *manifest.Autoscaler) ([]byte, error) {
	return json.Marshal(AutoscaleTarget{Autoscaler: a.Metadata.Name, Kind: a.Spec.Target.Kind})
}

// CreateAutoscaler stores a new autoscaler and claims its target:
// errdefs.ErrAlreadyExists when one of that name exists, ErrConflict
// naming the holder when another autoscaler scales the target. A status
// left by an earlier autoscaler of the same name is removed: the new one
// starts with no history.
func (r *Registry) CreateAutoscaler(ctx context.Context, a *manifest.Autoscaler) (*Object, error) {
	ns, name := a.Metadata.Namespace, a.Metadata.Name
	specKey, statusKey, indexKey, err := autoscalerKeys(ns, name, a.Spec.Target.Name)
	if err != nil {
		return nil, err
	}
	rec, value, err := r.autoscalerRecord(a, nil)
	if err != nil {
		return nil, err
	}
	index, err := indexValue(a)
	if err != nil {
		return nil, err
	}
	rec.Revision, err = r.store.Apply(ctx, store.CreateOp(specKey, value), store.CreateOp(indexKey, index), store.RemoveOp(statusKey))
	if err != nil {
		return nil, r.autoscalerWriteError(ctx, a, indexKey, err)
	}
	return rec, nil
}

// UpdateAutoscaler replaces the spec of an autoscaler, at revision
// expectRev (0: whatever is current). A new target is claimed and the
// old one released in the same transaction.
func (r *Registry) UpdateAutoscaler(ctx context.Context, a *manifest.Autoscaler, expectRev int64) (*Object, error) {
	ns, name := a.Metadata.Namespace, a.Metadata.Name
	current, old, err := r.GetAutoscaler(ctx, ns, name)
	if err != nil {
		return nil, err
	}
	if expectRev == 0 {
		expectRev = current.Revision
	}
	specKey, _, indexKey, err := autoscalerKeys(ns, name, a.Spec.Target.Name)
	if err != nil {
		return nil, err
	}
	rec, value, err := r.autoscalerRecord(a, current)
	if err != nil {
		return nil, err
	}
	ops := []store.Op{store.UpdateOp(specKey, value, expectRev)}
	if old.Spec.Target.Name != a.Spec.Target.Name || old.Spec.Target.Kind != a.Spec.Target.Kind {
		index, err := indexValue(a)
		if err != nil {
			return nil, err
		}
		_, _, oldIndexKey, err := autoscalerKeys(ns, name, old.Spec.Target.Name)
		if err != nil {
			return nil, err
		}
		if oldIndexKey == indexKey {
			ops = append(ops, store.PutOp(indexKey, index))
		} else {
			ops = append(ops, store.RemoveOp(oldIndexKey), store.CreateOp(indexKey, index))
		}
	}
	rec.Revision, err = r.store.Apply(ctx, ops...)
	if err != nil {
		return nil, r.autoscalerWriteError(ctx, a, indexKey, err)
	}
	return rec, nil
}

// autoscalerWriteError says in a's terms why a write of it failed: the
// target index taken names its holder.
func (r *Registry) autoscalerWriteError(ctx context.Context, a *manifest.Autoscaler, indexKey string, err error) error {
	var pe *store.PreconditionError
	if errors.As(err, &pe) && pe.Key == indexKey && errors.Is(err, errdefs.ErrAlreadyExists) {
		if taken := r.AutoscaleTargetFree(ctx, a); taken != nil {
			return taken
		}
	}
	return fmt.Errorf("autoscaler %s/%s: %w", a.Metadata.Namespace, a.Metadata.Name, err)
}

// AutoscaleTargetFree returns nil when no other autoscaler scales a's
// target, else errdefs.ErrConflict naming the one that does.
func (r *Registry) AutoscaleTargetFree(ctx context.Context, a *manifest.Autoscaler) error {
	ns, name, target := a.Metadata.Namespace, a.Metadata.Name, a.Spec.Target.Name
	holder, err := r.AutoscalerOf(ctx, ns, target)
	switch {
	case errors.Is(err, errdefs.ErrNotFound), err == nil && holder == name:
		return nil
	case err != nil:
		return err
	}
	return fmt.Errorf("autoscaler %s/%s: %s %s/%s is scaled by autoscaler %s/%s already; a workload has one autoscaler: %w",
		ns, name, a.Spec.Target.Kind, ns, target, ns, holder, errdefs.ErrConflict)
}

// AutoscalerOf returns the name of the autoscaler of namespace that
// scales workload; errdefs.ErrNotFound when none does.
func (r *Registry) AutoscalerOf(ctx context.Context, namespace, workload string) (string, error) {
	key, err := store.Key(store.KindAutoscaleTarget, namespace, workload)
	if err != nil {
		return "", err
	}
	t, _, err := store.GetJSON[AutoscaleTarget](ctx, r.store, key)
	if err != nil {
		return "", fmt.Errorf("autoscaler of %s/%s: %w", namespace, workload, err)
	}
	return t.Autoscaler, nil
}

// GetAutoscaler returns the record of an autoscaler and its manifest.
func (r *Registry) GetAutoscaler(ctx context.Context, namespace, name string) (*Object, *manifest.Autoscaler, error) {
	key, err := store.Key(store.KindAutoscaler, namespace, name)
	if err != nil {
		return nil, nil, err
	}
	rec, err := get[Object](ctx, r.store, key)
	if err != nil {
		return nil, nil, fmt.Errorf("autoscaler %s/%s: %w", namespace, name, err)
	}
	a, err := rec.Autoscaler()
	if err != nil {
		return nil, nil, err
	}
	return rec, a, nil
}

// Autoscaler parses the manifest of a stored autoscaler.
func (o *Object) Autoscaler() (*manifest.Autoscaler, error) {
	m, err := o.Manifest()
	if err != nil {
		return nil, fmt.Errorf("stored autoscaler %s/%s: %w", o.Namespace, o.Name, err)
	}
	a, ok := m.(*manifest.Autoscaler)
	if !ok {
		return nil, fmt.Errorf("stored autoscaler %s/%s is a %s: %w", o.Namespace, o.Name, m.Kind(), errdefs.ErrInvalidArgument)
	}
	return a, nil
}

// ListAutoscalers returns the autoscalers of namespace (every namespace
// when empty), sorted by namespace and name.
func (r *Registry) ListAutoscalers(ctx context.Context, namespace string) ([]*Object, error) {
	prefix, err := kindPrefix(store.KindAutoscaler, namespace)
	if err != nil {
		return nil, err
	}
	return list[Object](ctx, r.store, prefix)
}

// SetAutoscalerPaused pauses or resumes an autoscaler: a new spec
// revision, again on a concurrent write. Setting what is set writes
// nothing.
func (r *Registry) SetAutoscalerPaused(ctx context.Context, namespace, name string, paused bool) (*Object, error) {
	for {
		rec, a, err := r.GetAutoscaler(ctx, namespace, name)
		if err != nil {
			return nil, err
		}
		if a.Spec.Paused == paused {
			return rec, nil
		}
		a.Spec.Paused = paused
		out, err := r.UpdateAutoscaler(ctx, a, rec.Revision)
		if errors.Is(err, errdefs.ErrConflict) {
			continue
		}
		return out, err
	}
}

// DeleteAutoscaler removes an autoscaler with its target's claim and its
// status.
func (r *Registry) DeleteAutoscaler(ctx context.Context, namespace, name string) error {
	rec, a, err := r.GetAutoscaler(ctx, namespace, name)
	if err != nil {
		return err
	}
	specKey, statusKey, indexKey, err := autoscalerKeys(namespace, name, a.Spec.Target.Name)
	if err != nil {
		return err
	}
	if _, err := r.store.Apply(ctx, store.DeleteOp(specKey, rec.Revision), store.RemoveOp(indexKey), store.RemoveOp(statusKey)); err != nil {
		return fmt.Errorf("autoscaler %s/%s: %w", namespace, name, err)
	}
	return nil
}

// DeleteOrphanStatus deletes the status of an autoscaler that is gone (a
// leader's write that landed after the autoscaler's delete), only while
// no autoscaler of that name exists; nothing to delete is no error.
func (r *Registry) DeleteOrphanStatus(ctx context.Context, namespace, name string) error {
	specKey, err := store.Key(store.KindAutoscaler, namespace, name)
	if err != nil {
		return err
	}
	statusKey, err := store.Key(store.KindAutoscalerStatus, namespace, name)
	if err != nil {
		return err
	}
	_, err = r.store.Apply(ctx, store.AbsentOp(specKey), store.RemoveOp(statusKey))
	if errors.Is(err, errdefs.ErrAlreadyExists) {
		return nil // an autoscaler of that name exists again: the status is its
	}
	if err != nil {
		return fmt.Errorf("status of the deleted autoscaler %s/%s: %w", namespace, name, err)
	}
	return nil
}

// GetAutoscalerStatus returns the status of an autoscaler;
// errdefs.ErrNotFound before the leader first decided for it.
func (r *Registry) GetAutoscalerStatus(ctx context.Context, namespace, name string) (*AutoscalerStatus, error) {
	key, err := store.Key(store.KindAutoscalerStatus, namespace, name)
	if err != nil {
		return nil, err
	}
	s, err := get[AutoscalerStatus](ctx, r.store, key)
	if err != nil {
		return nil, fmt.Errorf("status of autoscaler %s/%s: %w", namespace, name, err)
	}
	return s, nil
}

// ListAutoscalerStatuses returns the statuses of the autoscalers of
// namespace (every namespace when empty), sorted by namespace and name.
func (r *Registry) ListAutoscalerStatuses(ctx context.Context, namespace string) ([]*AutoscalerStatus, error) {
	prefix, err := kindPrefix(store.KindAutoscalerStatus, namespace)
	if err != nil {
		return nil, err
	}
	return list[AutoscalerStatus](ctx, r.store, prefix)
}

// PutAutoscalerStatuses stores the statuses of autoscalers, in as few
// store transactions as etcd allows, and sets the revision each was
// written at. The leader is their only writer, through a registry
// OnStore its fenced store: after it was deposed, the write is refused
// with store.ErrDeposed and nothing is written. On another error the
// transactions before the failing one are written.
func (r *Registry) PutAutoscalerStatuses(ctx context.Context, statuses []*AutoscalerStatus) error {
	if len(statuses) == 0 {
		return nil
	}
	batch := r.store.Batch()
	now := r.now().UTC()
	for _, s := range statuses {
		key, err := store.Key(store.KindAutoscalerStatus, s.Namespace, s.Name)
		if err != nil {
			return err
		}
		s.UpdatedAt = now
		value, err := json.Marshal(s)
		if err != nil {
			return err
		}
		batch.Add(store.PutOp(key, value))
	}
	revs, err := batch.Commit(ctx)
	for i, rev := range revs {
		statuses[i].Revision = rev
	}
	if err != nil {
		return fmt.Errorf("statuses of %d autoscalers from %s/%s: %w", len(statuses), statuses[0].Namespace, statuses[0].Name, err)
	}
	return nil
}
