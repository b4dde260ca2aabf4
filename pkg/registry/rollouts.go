package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/rollout"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// Rollout is the scheduler's record of an application's updates: the
// rollout controller's state, its last status, and the stable revision's
// spec, so that instances of the stable revision relaunch as they were
// whatever the history keeps. Only the scheduler writes it.
type Rollout struct {
	Namespace string         `json:"namespace"`
	Name      string         `json:"name"`
	State     rollout.State  `json:"state"`
	Status    rollout.Status `json:"status"`
	// StableSpec and StableTemplate are the stable revision's manifest
	// and template hash; empty until a first rollout completed.
	StableSpec     json.RawMessage `json:"stableSpec,omitempty"`
	StableTemplate string          `json:"stableTemplate,omitempty"`
	// StableRestartGeneration is the stable revision's restart generation.
	StableRestartGeneration int       `json:"stableRestartGeneration,omitempty"`
	UpdatedAt               time.Time `json:"updatedAt"`
	Revision                int64     `json:"-"`
}

func (r *Rollout) setRevision(rev int64) { r.Revision = rev }

// PutRollout stores an application's rollout.
func (r *Registry) PutRollout(ctx context.Context, ro *Rollout) error {
	return r.commitOne(ctx, func(t *Txn) error { return t.PutRollout(ro) })
}

// GetRollout returns the rollout of an application.
func (r *Registry) GetRollout(ctx context.Context, namespace, name string) (*Rollout, error) {
	key, err := store.Key(store.KindRollout, namespace, name)
	if err != nil {
		return nil, err
	}
	ro, err := get[Rollout](ctx, r.store, key)
	if err != nil {
		return nil, fmt.Errorf("rollout of %s/%s: %w", namespace, name, err)
	}
	return ro, nil
}

// ListRollouts returns every rollout, sorted by namespace and name.
func (r *Registry) ListRollouts(ctx context.Context) ([]*Rollout, error) {
	prefix, err := store.Prefix(store.KindRollout)
	if err != nil {
		return nil, err
	}
	return list[Rollout](ctx, r.store, prefix)
}

// DeleteRollout removes an application's rollout; a missing one is fine.
func (r *Registry) DeleteRollout(ctx context.Context, namespace, name string) error {
	return r.commitOne(ctx, func(t *Txn) error { return t.DeleteRollout(namespace, name) })
}
