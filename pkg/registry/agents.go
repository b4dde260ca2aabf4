package registry

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/constraint"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// AgentSettings are the operator's settings of an agent, by hostname (an
// agent that comes back with a new Mesos ID keeps them): seed 002's node
// constraints and drift, as cordon, taints and drain.
type AgentSettings struct {
	Hostname string `json:"hostname"`
	// Cordoned: no new instance is placed on the agent; those running
	// stay.
	Cordoned bool `json:"cordoned,omitempty"`
	// Taints keep instances off unless their constraint tolerates them.
	Taints []constraint.Taint `json:"taints,omitempty"`
	// Drain moves every instance off the agent, one at a time, each
	// placed elsewhere before it is killed (a move that fits on no agent
	// waits without holding up the others). A drained agent stays cordoned
	// until the drain is cancelled.
	Drain *DrainRequest `json:"drain,omitempty"`
	// Reason is the operator's note ("kernel upgrade").
	Reason    string    `json:"reason,omitempty"`
	UpdatedAt time.Time `json:"updatedAt"`
	Revision  int64     `json:"-"`
}

// DrainRequest asks the scheduler to move every instance off an agent.
type DrainRequest struct {
	Since time.Time `json:"since"`
	// Force moves the instances of stateful applications too.
	Force bool `json:"force,omitempty"`
}

// Schedulable reports whether new instances may be placed on the agent
// (taints aside).
func (s *AgentSettings) Schedulable() bool { return s == nil || !s.Cordoned && s.Drain == nil }

// empty reports whether the settings say nothing: their record goes.
func (s *AgentSettings) empty() bool {
	return !s.Cordoned && len(s.Taints) == 0 && s.Drain == nil && s.Reason == ""
}

func (s *AgentSettings) setRevision(rev int64) { s.Revision = rev }

// GetAgentSettings returns the settings of the agent named hostname; an
// agent nobody set anything for has empty settings.
func (r *Registry) GetAgentSettings(ctx context.Context, hostname string) (*AgentSettings, error) {
	key, err := store.Key(store.KindAgentSettings, hostname)
	if err != nil {
		return nil, err
	}
	s, err := get[AgentSettings](ctx, r.store, key)
	if errors.Is(err, errdefs.ErrNotFound) {
		return &AgentSettings{Hostname: hostname}, nil
	}
	return s, err
}

// ListAgentSettings returns every agent's settings, by hostname.
func (r *Registry) ListAgentSettings(ctx context.Context) ([]*AgentSettings, error) {
	prefix, err := store.Prefix(store.KindAgentSettings)
	if err != nil {
		return nil, err
	}
	return list[AgentSettings](ctx, r.store, prefix)
}

// ModifyAgentSettings reads an agent's settings, applies change and writes
// them back (again on a concurrent write); settings that say nothing are
// removed.
func (r *Registry) ModifyAgentSettings(ctx context.Context, hostname string, change func(*AgentSettings) error) (*AgentSettings, error) {
	key, err := store.Key(store.KindAgentSettings, hostname)
	if err != nil {
		return nil, err
	}
	for {
		s, err := r.GetAgentSettings(ctx, hostname)
		if err != nil {
			return nil, err
		}
		if err := change(s); err != nil {
			return nil, err
		}
		s.UpdatedAt = r.now().UTC()
		switch {
		case s.empty() && s.Revision == 0:
			return s, nil
		case s.empty():
			err = r.store.Delete(ctx, key, s.Revision)
			s.Revision = 0
		case s.Revision == 0:
			s.Revision, err = store.CreateJSON(ctx, r.store, key, s)
		default:
			s.Revision, err = store.UpdateJSON(ctx, r.store, key, s, s.Revision)
		}
		if errors.Is(err, errdefs.ErrConflict) || errors.Is(err, errdefs.ErrAlreadyExists) || errors.Is(err, errdefs.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("agent %s settings: %w", hostname, err)
		}
		return s, nil
	}
}

// EngineMode is what the scheduling engine does (seed 002's engine
// maintenance and start/stop).
type EngineMode string

// The engine modes.
const (
	// EngineRunning: launches, kills, restarts and rollouts as usual.
	EngineRunning EngineMode = "running"
	// EngineMaintenance: no new launches and no kills by the engine;
	// running instances are left alone, status updates are still taken,
	// and API writes are stored and acted on when the mode ends.
	EngineMaintenance EngineMode = "maintenance"
	// EngineStopped: maintenance, and the scheduler also stops taking
	// offers (it declines them and suppresses).
	EngineStopped EngineMode = "stopped"
)

// Engine is the engine's mode and who set it why.
type Engine struct {
	Mode   EngineMode `json:"mode"`
	Reason string     `json:"reason,omitempty"`
	// By is the user who set it, as the API authenticated them; "" when
	// it does not authenticate.
	By        string    `json:"by,omitempty"`
	Since     time.Time `json:"since"`
	UpdatedAt time.Time `json:"updatedAt"`
	Revision  int64     `json:"-"`
}

// ParseEngineMode checks a mode's name.
func ParseEngineMode(s string) (EngineMode, error) {
	switch m := EngineMode(s); m {
	case EngineRunning, EngineMaintenance, EngineStopped:
		return m, nil
	}
	return "", fmt.Errorf("mode %q: want one of running, maintenance, stopped: %w", s, errdefs.ErrInvalidArgument)
}

// GetEngine returns the engine's mode; running when never set.
func (r *Registry) GetEngine(ctx context.Context) (*Engine, error) {
	e, rev, err := store.GetJSON[Engine](ctx, r.store, store.EngineKey)
	if errors.Is(err, errdefs.ErrNotFound) {
		return &Engine{Mode: EngineRunning}, nil
	}
	if err != nil {
		return nil, err
	}
	e.Revision = rev
	return &e, nil
}

// SetEngine sets the engine's mode, for reason, by a user (as
// Engine.By); Since is kept when the mode does not change.
func (r *Registry) SetEngine(ctx context.Context, mode EngineMode, reason, by string) (*Engine, error) {
	for {
		e, err := r.GetEngine(ctx)
		if err != nil {
			return nil, err
		}
		now := r.now().UTC()
		if e.Mode != mode || e.Since.IsZero() {
			e.Since = now
		}
		e.Mode, e.Reason, e.By, e.UpdatedAt = mode, reason, by, now
		if e.Revision == 0 {
			e.Revision, err = store.CreateJSON(ctx, r.store, store.EngineKey, e)
		} else {
			e.Revision, err = store.UpdateJSON(ctx, r.store, store.EngineKey, e, e.Revision)
		}
		if errors.Is(err, errdefs.ErrConflict) || errors.Is(err, errdefs.ErrAlreadyExists) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("engine mode: %w", err)
		}
		return e, nil
	}
}
