package api

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"

	"github.com/bcs-mesos/bcs-mesos/pkg/apiv1"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/strictjson"
)

func (s *Server) engineConfigView(settings *registry.EngineSettings) (*apiv1.EngineConfigView, error) {
	cfg, err := settings.Over(s.cfg.EngineDefaults)
	if err != nil {
		return nil, err
	}
	v := &apiv1.EngineConfigView{EngineConfig: engineConfigWire(cfg), Set: slices.Sorted(maps.Keys(settings.Values)), By: settings.By}
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
