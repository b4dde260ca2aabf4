package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// The scheduler's own records: it is their only writer (the leader), so
// they are written unconditionally.

// PutTaskGroup stores an instance's runtime state, and in the same
// transaction the notices its change made: a notice is stored exactly
// when the change is.
func (r *Registry) PutTaskGroup(ctx context.Context, tg *TaskGroup, notices ...Notice) error {
	key, err := TaskGroupKey(tg.Namespace, tg.App, tg.Index)
	if err != nil {
		return err
	}
	what := fmt.Sprintf("task group %s/%s/%d", tg.Namespace, tg.App, tg.Index)
	if len(notices) == 0 {
		return r.put(ctx, key, tg, what)
	}
	tg.UpdatedAt = r.now().UTC()
	value, err := json.Marshal(tg)
	if err != nil {
		return err
	}
	ops := []store.Op{store.PutOp(key, value)}
	for _, n := range notices {
		nkey, err := NotificationKey(n.ID)
		if err != nil {
			return err
		}
		value, err := json.Marshal(Notification{Notice: n, Deliveries: []Delivery{}})
		if err != nil {
			return err
		}
		ops = append(ops, store.CreateOp(nkey, value))
	}
	rev, err := r.store.Apply(ctx, ops...)
	if err != nil {
		return fmt.Errorf("%s and its notices: %w", what, err)
	}
	tg.Revision = rev
	return nil
}

// DeleteTaskGroup removes an instance's record; a missing one is fine.
func (r *Registry) DeleteTaskGroup(ctx context.Context, namespace, app string, index int) error {
	key, err := TaskGroupKey(namespace, app, index)
	if err != nil {
		return err
	}
	return r.remove(ctx, key, fmt.Sprintf("task group %s/%s/%d", namespace, app, index))
}

// AllTaskGroups returns every task group of every application.
func (r *Registry) AllTaskGroups(ctx context.Context) ([]*TaskGroup, error) {
	prefix, err := store.Prefix(store.KindTaskGroup)
	if err != nil {
		return nil, err
	}
	return list[TaskGroup](ctx, r.store, prefix)
}

// FrameworkID returns the Mesos framework ID the scheduler registered
// with, or "" before the first registration.
func (r *Registry) FrameworkID(ctx context.Context) (string, error) {
	e, err := r.store.Get(ctx, store.FrameworkIDKey)
	if errors.Is(err, errdefs.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return string(e.Value), nil
}

// SetFrameworkID records the framework ID, so that every later
// subscription fails over to the same framework.
func (r *Registry) SetFrameworkID(ctx context.Context, id string) error {
	_, err := r.store.Put(ctx, store.FrameworkIDKey, []byte(id))
	return err
}

// RecordAgent stores what the scheduler saw of an agent in its offers.
func (r *Registry) RecordAgent(ctx context.Context, id, hostname string, attributes map[string]string) error {
	key, err := store.Key(store.KindAgent, id)
	if err != nil {
		return err
	}
	return r.put(ctx, key, &Agent{ID: id, Hostname: hostname, Attributes: attributes}, "agent "+id)
}

// Sweep is what the scheduler owes an agent after executors died there
// without cleaning up: a run of our executors that reaps what dead
// executors left (containers, network attachments, processes, cgroups),
// and until it finished, the host ports the dead instances held.
type Sweep struct {
	AgentID string `json:"agentID"`
	// Owed are the kinds of executor ("container", "process") that must
	// sweep and have not started to; a kind owed while its sweep runs
	// sweeps again after.
	Owed []string `json:"owed,omitempty"`
	// Running maps a kind to its sweep task in flight.
	Running map[string]string `json:"running,omitempty"`
	// HeldPorts are host ports orphans may still hold; no new instance
	// gets them on this agent before the sweep finished.
	HeldPorts []uint32 `json:"heldPorts,omitempty"`
	// Reason names the latest executor death that made it necessary.
	Reason string    `json:"reason"`
	Since  time.Time `json:"since"`
	// Attempts counts failed sweep tasks; NotBefore delays the next one.
	Attempts  int       `json:"attempts,omitempty"`
	NotBefore time.Time `json:"notBefore,omitempty"`
	LastError string    `json:"lastError,omitempty"`
	UpdatedAt time.Time `json:"updatedAt"`
	Revision  int64     `json:"-"`
}

// PutSweep stores the sweep owed an agent.
func (r *Registry) PutSweep(ctx context.Context, s *Sweep) error {
	key, err := store.Key(store.KindSweep, s.AgentID)
	if err != nil {
		return err
	}
	return r.put(ctx, key, s, "sweep of agent "+s.AgentID)
}

// DeleteSweep forgets the sweep of an agent; a missing one is fine.
func (r *Registry) DeleteSweep(ctx context.Context, agentID string) error {
	key, err := store.Key(store.KindSweep, agentID)
	if err != nil {
		return err
	}
	return r.remove(ctx, key, "sweep of agent "+agentID)
}

// ListSweeps returns the sweeps owed, by agent ID.
func (r *Registry) ListSweeps(ctx context.Context) ([]*Sweep, error) {
	prefix, err := store.Prefix(store.KindSweep)
	if err != nil {
		return nil, err
	}
	return list[Sweep](ctx, r.store, prefix)
}
