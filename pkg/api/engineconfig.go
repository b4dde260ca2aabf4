package api

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/strictjson"
)

// engineConfigView is what GET and PATCH /v1/engine/config answer (and
// seed 002's /api/engine/config): the configuration the engine runs by,
// its values at the top level as seed 002's EngineConfig has them.
type engineConfigView struct {
	registry.EngineConfig
	// Set names the values set at run time, which the leading scheduler
	// holds to over its flags; the others are this replica's flags'.
	Set []string `json:"set"`
	// By set them last, at UpdatedAt.
	By        string     `json:"by,omitempty"`
	UpdatedAt *time.Time `json:"updatedAt,omitempty"`
}

// engineConfigRequest is what PATCH takes: any of the configuration's
// values, or null for the flag's.
type engineConfigRequest registry.EngineConfig

func (s *Server) engineConfigView(settings *registry.EngineSettings) (*engineConfigView, error) {
	cfg, err := settings.Over(s.cfg.EngineDefaults)
	if err != nil {
		return nil, err
	}
	v := &engineConfigView{EngineConfig: cfg, Set: slices.Sorted(maps.Keys(settings.Values)), By: settings.By}
	if v.Set == nil {
		v.Set = []string{}
	}
	if !settings.UpdatedAt.IsZero() {
		v.UpdatedAt = &settings.UpdatedAt
	}
	return v, nil
}

func (s *Server) getEngineConfig(w http.ResponseWriter, r *http.Request) error {
	settings, err := s.cfg.Registry.GetEngineSettings(r.Context())
	if err != nil {
		return err
	}
	return s.writeEngineConfig(w, settings)
}

// writeEngineConfig answers with the configuration in force.
func (s *Server) writeEngineConfig(w http.ResponseWriter, settings *registry.EngineSettings) error {
	v, err := s.engineConfigView(settings)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

// patchEngineConfig takes a JSON merge patch (RFC 7386) of the
// configuration: a value sets it over the flag, null gives it back to the
// flag. Any value refused is a 400 naming it, and nothing is stored.
func (s *Server) patchEngineConfig(w http.ResponseWriter, r *http.Request) error {
	body, err := s.readBody(r)
	if err != nil {
		return err
	}
	var patch map[string]json.RawMessage
	if err := strictjson.Decode(body, &patch); err != nil {
		return err
	}
	caller, _ := identityOf(r)
	settings, err := s.cfg.Registry.PatchEngineSettings(r.Context(), patch, caller.User)
	if err != nil {
		return err
	}
	return s.writeEngineConfig(w, settings)
}
