package apiv1

import (
	"encoding/json"
	"fmt"
	"time"
)

// Engine is the engine's mode and who set it why.
type Engine struct {
	// Mode is running, maintenance or stopped.
	Mode   string `json:"mode"`
	Reason string `json:"reason,omitempty"`
	// By is the user who set it, as the API authenticated them; "" when
	// it does not authenticate.
	By        string    `json:"by,omitempty"`
	Since     time.Time `json:"since"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// EngineRequest sets the engine's mode (seed 002's engine maintenance
// and start/stop).
type EngineRequest struct {
	Mode   string `json:"mode"`
	Reason string `json:"reason"`
}

// EngineConfigView is what GET and PATCH /v1/engine/config answer (and
// seed 002's /api/engine/config): the configuration the engine runs by,
// its values at the top level as seed 002's EngineConfig has them.
type EngineConfigView struct {
	EngineConfig
	// Set names the values set at run time, which the leading scheduler
	// holds to over its flags; the others are this replica's flags'.
	Set []string `json:"set"`
	// By set them last, at UpdatedAt.
	By        string     `json:"by,omitempty"`
	UpdatedAt *time.Time `json:"updatedAt,omitempty"`
}

// EngineConfig is the engine's configuration, each value named after its
// flag.
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

// EngineConfigRequest is what PATCH takes: any of the configuration's
// values, or null for the flag's.
type EngineConfigRequest EngineConfig

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
