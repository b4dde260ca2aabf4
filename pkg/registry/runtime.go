package registry

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// The scheduler's own records: it is their only writer (the leader), so
// they are written unconditionally.

// PutTaskGroup stores an instance's runtime state and the notices its
// change made in one transaction (Txn.PutTaskGroup).
func (r *Registry) PutTaskGroup(ctx context.Context, tg *TaskGroup, notices ...Notice) error {
	return r.commitOne(ctx, func(t *Txn) error { return t.PutTaskGroup(tg, notices...) })
}

// DeleteTaskGroup removes an instance's record; a missing one is fine.
func (r *Registry) DeleteTaskGroup(ctx context.Context, namespace, app string, index int) error {
	return r.commitOne(ctx, func(t *Txn) error { return t.DeleteTaskGroup(namespace, app, index) })
}

// AllTaskGroups returns every task group of every application.
func (r *Registry) AllTaskGroups(ctx context.Context) ([]*TaskGroup, error) {
	prefix, err := store.Prefix(store.KindTaskGroup)
	if err != nil {
		return nil, err
	}
	return list[TaskGroup](ctx, r.store, prefix)
}

// EachTaskGroup hands fn every task group of every application, a page at
// a time: a view over a whole fleet (each agent's instances) folds them
// without holding 100,000 records at once.
func (r *Registry) EachTaskGroup(ctx context.Context, fn func(*TaskGroup) error) error {
	prefix, err := store.Prefix(store.KindTaskGroup)
	if err != nil {
		return err
	}
	return each[TaskGroup](ctx, r.store, prefix, fn)
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
	return r.commitOne(ctx, func(t *Txn) error { t.SetFrameworkID(id); return nil })
}

// RecordAgent stores what the scheduler saw of an agent in its offers;
// an offer without the agent's URL leaves the endpoint known.
func (r *Registry) RecordAgent(ctx context.Context, id, hostname, endpoint string, attributes map[string]string) error {
	seen := AgentSeen{ID: id, Hostname: hostname, Endpoint: endpoint, Attributes: attributes}
	return r.modifyAgent(ctx, id, func(a *Agent) bool {
		seen.apply(a, r.now().UTC())
		return true
	})
}

// AgentSeen is what the scheduler saw of an agent in its offers.
type AgentSeen struct {
	ID, Hostname string
	Endpoint     string // host:port of its HTTP API; "" unknown
	Attributes   map[string]string
}

func (seen AgentSeen) apply(a *Agent, now time.Time) {
	a.Hostname, a.Attributes, a.SeenAt = seen.Hostname, seen.Attributes, now
	a.Endpoint = cmp.Or(seen.Endpoint, a.Endpoint)
}

// RecordAgents records what the scheduler saw of agents, as RecordAgent
// does each, in a few round trips: their records read together, then
// written together in batched transactions, each write checked against
// the revision read. The thousands of agents of a cluster's first offers
// took two round trips each. Those a concurrent write (the agent sync,
// maintenance) changed meanwhile are recorded again one by one.
func (r *Registry) RecordAgents(ctx context.Context, seen []AgentSeen) error {
	last := map[string]int{} // an agent seen twice: its last sighting
	for i, s := range seen {
		last[s.ID] = i
	}
	var unique []AgentSeen
	for i, s := range seen {
		if last[s.ID] == i {
			unique = append(unique, s)
		}
	}
	keys := make([]string, len(unique))
	for i, s := range unique {
		key, err := store.Key(store.KindAgent, s.ID)
		if err != nil {
			return err
		}
		keys[i] = key
	}
	now := r.now().UTC()
	unwritten, err := r.writeMany(ctx, keys, func(i int, e store.Entry) ([]store.Op, error) {
		s := unique[i]
		a := &Agent{ID: s.ID}
		if e.Revision != 0 {
			if err := json.Unmarshal(e.Value, a); err != nil {
				return nil, fmt.Errorf("agent %s: %w", s.ID, err)
			}
		}
		s.apply(a, now)
		a.UpdatedAt = now
		value, err := json.Marshal(a)
		if err != nil {
			return nil, err
		}
		if e.Revision == 0 {
			return []store.Op{store.CreateOp(keys[i], value)}, nil
		}
		return []store.Op{store.UpdateOp(keys[i], value, e.Revision)}, nil
	})
	if err != nil {
		return err
	}
	for _, i := range unwritten {
		s := unique[i]
		if err := r.RecordAgent(ctx, s.ID, s.Hostname, s.Endpoint, s.Attributes); err != nil {
			return err
		}
	}
	return nil
}

// SetAgentMaintenance stores the maintenance window announced for an
// agent (nil: none) and the scheduler's answer.
func (r *Registry) SetAgentMaintenance(ctx context.Context, id, hostname string, m *AgentMaintenance) error {
	return r.modifyAgent(ctx, id, func(a *Agent) bool {
		if reflect.DeepEqual(a.Maintenance, m) {
			return false
		}
		a.Hostname = cmp.Or(a.Hostname, hostname)
		a.Maintenance = m
		return true
	})
}

// ListedAgent is one agent of the master's list (GET_AGENTS).
type ListedAgent struct {
	ID, Hostname string
	Attributes   map[string]string
	// Endpoint is the agent's host:port ("" when the master does not
	// say).
	Endpoint string
	Master   AgentMaster
}

// SyncAgents takes the master's list of agents: each listed agent's
// record gets its master view and endpoint (written only when they
// changed; an agent that never offered is recorded with its hostname and
// attributes), and
// the records of agents the master does not list are deleted — agents of
// an old master, gone meanwhile. It returns the IDs of those deleted.
func (r *Registry) SyncAgents(ctx context.Context, listed []ListedAgent) (dropped []string, err error) {
	stored, err := r.ListAgents(ctx)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]*Agent, len(stored))
	for _, a := range stored {
		byID[a.ID] = a
	}
	current := func(a *Agent, l ListedAgent) bool {
		return a.Master != nil && *a.Master == l.Master && (l.Endpoint == "" || a.Endpoint == l.Endpoint)
	}
	for _, l := range listed {
		if a := byID[l.ID]; a != nil && current(a, l) {
			delete(byID, l.ID)
			continue
		}
		delete(byID, l.ID)
		if err := r.modifyAgent(ctx, l.ID, func(a *Agent) bool {
			if current(a, l) {
				return false
			}
			if a.Hostname == "" {
				a.Hostname, a.Attributes = l.Hostname, l.Attributes
			}
			master := l.Master
			a.Master = &master
			a.Endpoint = cmp.Or(l.Endpoint, a.Endpoint)
			return true
		}); err != nil {
			return dropped, err
		}
	}
	for _, id := range slices.Sorted(maps.Keys(byID)) {
		key, err := store.Key(store.KindAgent, id)
		if err != nil {
			return dropped, err
		}
		if err := r.store.Delete(ctx, key, byID[id].Revision); err != nil && !errors.Is(err, errdefs.ErrConflict) && !errors.Is(err, errdefs.ErrNotFound) {
			return dropped, fmt.Errorf("agent %s: %w", id, err)
		} else if err == nil {
			dropped = append(dropped, id)
		}
	}
	return dropped, nil
}

// modifyAgent applies change to the agent's record (a new one when there
// is none) and writes it when change says so, again on a concurrent
// write.
func (r *Registry) modifyAgent(ctx context.Context, id string, change func(*Agent) bool) error {
	key, err := store.Key(store.KindAgent, id)
	if err != nil {
		return err
	}
	for {
		a, err := get[Agent](ctx, r.store, key)
		switch {
		case errors.Is(err, errdefs.ErrNotFound):
			a = &Agent{ID: id}
		case err != nil:
			return fmt.Errorf("agent %s: %w", id, err)
		}
		if !change(a) {
			return nil
		}
		a.UpdatedAt = r.now().UTC()
		if a.Revision == 0 {
			_, err = store.CreateJSON(ctx, r.store, key, a)
		} else {
			_, err = store.UpdateJSON(ctx, r.store, key, a, a.Revision)
		}
		if errors.Is(err, errdefs.ErrConflict) || errors.Is(err, errdefs.ErrAlreadyExists) || errors.Is(err, errdefs.ErrNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("agent %s: %w", id, err)
		}
		return nil
	}
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
	return r.commitOne(ctx, func(t *Txn) error { return t.PutSweep(s) })
}

// DeleteSweep forgets the sweep of an agent; a missing one is fine.
func (r *Registry) DeleteSweep(ctx context.Context, agentID string) error {
	return r.commitOne(ctx, func(t *Txn) error { return t.DeleteSweep(agentID) })
}

// ListSweeps returns the sweeps owed, by agent ID.
func (r *Registry) ListSweeps(ctx context.Context) ([]*Sweep, error) {
	prefix, err := store.Prefix(store.KindSweep)
	if err != nil {
		return nil, err
	}
	return list[Sweep](ctx, r.store, prefix)
}
