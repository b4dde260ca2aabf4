package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/field"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// EngineConfig is the engine's configuration that may change at run time
// (seed 002's EngineConfig): bcs-scheduler's flags give its defaults, and
// the values set through the API (EngineSettings) win over them.
type EngineConfig struct {
	// ReconcileInterval between implicit reconciliations
	// (--reconcile-interval).
	ReconcileInterval Duration `json:"reconcileInterval"`
	// AgentSyncInterval between reads of the master's agents
	// (--agent-sync-interval).
	AgentSyncInterval Duration `json:"agentSyncInterval"`
	// DependsGCDelay is how long a dependency pod outlives its last user
	// on its agent (--depends-gc-delay).
	DependsGCDelay Duration `json:"dependsGCDelay"`
	// MaxLaunching bounds the instances launched and not yet running
	// (--max-launching).
	MaxLaunching int `json:"maxLaunching"`
	// FlappingRestarts within FlappingWindow make an instance flap
	// (--notify-flapping-restarts, --notify-flapping-window).
	FlappingRestarts int      `json:"flappingRestarts"`
	FlappingWindow   Duration `json:"flappingWindow"`
}

// Duration is a time.Duration written in JSON as Go writes it ("30s",
// "10m0s").
type Duration time.Duration

// MarshalJSON writes d as "1m30s".
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads a duration string such as "30s".
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("want a duration such as \"30s\", got %s", b)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("want a duration such as \"30s\", got %q", s)
	}
	*d = Duration(v)
	return nil
}

// EngineSettings are the engine's configuration values set at run time,
// by their JSON names in EngineConfig (store.EngineConfigKey); a name not
// set takes the flag's value.
type EngineSettings struct {
	Values map[string]json.RawMessage `json:"values"`
	// By is the user who set them last, as the API authenticated them.
	By        string    `json:"by,omitempty"`
	UpdatedAt time.Time `json:"updatedAt"`
	Revision  int64     `json:"-"`
}

// Over is defaults with the settings' values in their place.
func (s *EngineSettings) Over(defaults EngineConfig) (EngineConfig, error) {
	if len(s.Values) == 0 {
		return defaults, nil
	}
	base, err := json.Marshal(defaults)
	if err != nil {
		return defaults, err
	}
	merged := map[string]json.RawMessage{}
	if err := json.Unmarshal(base, &merged); err != nil {
		return defaults, err
	}
	maps.Copy(merged, s.Values)
	b, err := json.Marshal(merged)
	if err != nil {
		return defaults, err
	}
	var c EngineConfig
	if err := json.Unmarshal(b, &c); err != nil {
		return defaults, fmt.Errorf("stored engine settings: %w", err)
	}
	return c, nil
}

// engineKnob checks one value of EngineConfig and gives its canonical
// form.
type engineKnob func(raw json.RawMessage) (json.RawMessage, error)

// engineKnobs are the names of EngineConfig and their rules. Durations
// under a second would do nothing more: the driver ticks every second.
var engineKnobs = map[string]engineKnob{
	"reconcileInterval": durationKnob(time.Second),
	"agentSyncInterval": durationKnob(time.Second),
	"dependsGCDelay":    durationKnob(time.Second),
	"maxLaunching":      countKnob(1),
	"flappingRestarts":  countKnob(1),
	"flappingWindow":    durationKnob(time.Second),
}

func durationKnob(least time.Duration) engineKnob {
	return func(raw json.RawMessage) (json.RawMessage, error) {
		var d Duration
		if err := d.UnmarshalJSON(raw); err != nil {
			return nil, err
		}
		if time.Duration(d) < least {
			return nil, fmt.Errorf("%s: must be at least %s", time.Duration(d), least)
		}
		return d.MarshalJSON()
	}
}

func countKnob(least int) engineKnob {
	return func(raw json.RawMessage) (json.RawMessage, error) {
		var n int
		if err := json.Unmarshal(raw, &n); err != nil {
			return nil, fmt.Errorf("want a whole number, got %s", raw)
		}
		if n < least {
			return nil, fmt.Errorf("%d: must be at least %d", n, least)
		}
		return json.Marshal(n)
	}
}

// GetEngineSettings returns the values set at run time; none when never
// set.
func (r *Registry) GetEngineSettings(ctx context.Context) (*EngineSettings, error) {
	s, rev, err := store.GetJSON[EngineSettings](ctx, r.store, store.EngineConfigKey)
	if errors.Is(err, errdefs.ErrNotFound) {
		return &EngineSettings{}, nil
	}
	if err != nil {
		return nil, err
	}
	s.Revision = rev
	return &s, nil
}

// Patch applies a JSON merge patch (RFC 7386) of EngineConfig to the
// values: a value sets its name, null gives it back to its flag. A name
// EngineConfig does not have, or a value its rule refuses, is a field
// error naming it, and s is left unchanged.
func (s *EngineSettings) Patch(patch map[string]json.RawMessage) error {
	values := map[string]json.RawMessage{}
	var errs field.ErrorList
	for _, name := range slices.Sorted(maps.Keys(patch)) {
		knob, ok := engineKnobs[name]
		switch raw := patch[name]; {
		case !ok:
			errs = append(errs, field.Invalid(field.Path(name), "unknown setting (want one of %s)", strings.Join(slices.Sorted(maps.Keys(engineKnobs)), ", ")))
		case bytes.Equal(bytes.TrimSpace(raw), []byte("null")):
			values[name] = nil
		default:
			v, err := knob(raw)
			if err != nil {
				errs = append(errs, field.Invalid(field.Path(name), "%v", err))
				continue
			}
			values[name] = v
		}
	}
	if err := errs.ToError(); err != nil {
		return err
	}
	if s.Values == nil {
		s.Values = map[string]json.RawMessage{}
	}
	for name, v := range values {
		if v == nil {
			delete(s.Values, name)
		} else {
			s.Values[name] = v
		}
	}
	return nil
}

// PatchEngineSettings applies patch (EngineSettings.Patch) to the stored
// values, by a user; a refused patch stores nothing.
func (r *Registry) PatchEngineSettings(ctx context.Context, patch map[string]json.RawMessage, by string) (*EngineSettings, error) {
	for {
		s, err := r.GetEngineSettings(ctx)
		if err != nil {
			return nil, err
		}
		if err := s.Patch(patch); err != nil {
			return nil, err
		}
		s.By, s.UpdatedAt = by, r.now().UTC()
		if s.Revision == 0 {
			s.Revision, err = store.CreateJSON(ctx, r.store, store.EngineConfigKey, s)
		} else {
			s.Revision, err = store.UpdateJSON(ctx, r.store, store.EngineConfigKey, s, s.Revision)
		}
		if errors.Is(err, errdefs.ErrConflict) || errors.Is(err, errdefs.ErrAlreadyExists) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("engine settings: %w", err)
		}
		return s, nil
	}
}
