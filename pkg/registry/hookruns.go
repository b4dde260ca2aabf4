package registry

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/hook"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// HookRun is the stored record of a hook run: its spec (written when it
// is created, and Terminate by a request) and its status (written by the
// hook runner). Writes compare revisions, so neither loses the other's.
type HookRun struct {
	Namespace string         `json:"namespace"`
	Name      string         `json:"name"`
	Spec      hook.RunSpec   `json:"spec"`
	Status    hook.RunStatus `json:"status"`
	CreatedAt time.Time      `json:"createdAt"`
	UpdatedAt time.Time      `json:"updatedAt"`
	Revision  int64          `json:"-"`
}

func (h *HookRun) setRevision(rev int64) { h.Revision = rev }

// CreateHookRun stores a new run (phase Pending); errdefs.ErrAlreadyExists
// when one of that name exists.
func (r *Registry) CreateHookRun(ctx context.Context, run *HookRun) error {
	key, err := store.Key(store.KindHookRun, run.Namespace, run.Name)
	if err != nil {
		return err
	}
	now := r.now().UTC()
	run.CreatedAt, run.UpdatedAt = now, now
	if run.Status.Phase == "" {
		run.Status.Phase = hook.Pending
	}
	rev, err := store.CreateJSON(ctx, r.store, key, run)
	if err != nil {
		return fmt.Errorf("hook run %s/%s: %w", run.Namespace, run.Name, err)
	}
	run.Revision = rev
	return nil
}

// GetHookRun returns one run.
func (r *Registry) GetHookRun(ctx context.Context, namespace, name string) (*HookRun, error) {
	key, err := store.Key(store.KindHookRun, namespace, name)
	if err != nil {
		return nil, err
	}
	run, err := get[HookRun](ctx, r.store, key)
	if err != nil {
		return nil, fmt.Errorf("hook run %s/%s: %w", namespace, name, err)
	}
	return run, nil
}

// ListHookRuns returns the runs of namespace (every namespace when
// empty), sorted by namespace and name.
func (r *Registry) ListHookRuns(ctx context.Context, namespace string) ([]*HookRun, error) {
	prefix, err := kindPrefix(store.KindHookRun, namespace)
	if err != nil {
		return nil, err
	}
	return list[HookRun](ctx, r.store, prefix)
}

// ModifyHookRun reads a run, applies change and writes it back, again on
// a concurrent write; change returns false to write nothing.
func (r *Registry) ModifyHookRun(ctx context.Context, namespace, name string, change func(*HookRun) (bool, error)) (*HookRun, error) {
	key, err := store.Key(store.KindHookRun, namespace, name)
	if err != nil {
		return nil, err
	}
	for {
		run, err := r.GetHookRun(ctx, namespace, name)
		if err != nil {
			return nil, err
		}
		write, err := change(run)
		if err != nil || !write {
			return run, err
		}
		run.UpdatedAt = r.now().UTC()
		rev, err := store.UpdateJSON(ctx, r.store, key, run, run.Revision)
		if errors.Is(err, errdefs.ErrConflict) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("hook run %s/%s: %w", namespace, name, err)
		}
		run.Revision = rev
		return run, nil
	}
}

// DeleteHookRun removes a run; a missing one is fine.
func (r *Registry) DeleteHookRun(ctx context.Context, namespace, name string) error {
	return r.commitOne(ctx, func(t *Txn) error { return t.DeleteHookRun(namespace, name) })
}
