package api

import (
	"fmt"
	"net/http"

	"github.com/bcs-mesos/bcs-mesos/pkg/apiv1"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/field"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/strictjson"
)

// rolloutOps are the operations on an application's rollout, each
// answering 202 with the application: the scheduler carries them out and
// GET shows the progress.
var rolloutOps = map[string]func(s *Server, r *http.Request, app *registry.App) (*registry.App, error){
	"pause": func(s *Server, r *http.Request, app *registry.App) (*registry.App, error) {
		return s.setPaused(r, app, true)
	},
	"resume": func(s *Server, r *http.Request, app *registry.App) (*registry.App, error) {
		return s.setPaused(r, app, false)
	},
	"promote":  (*Server).promote,
	"abort":    (*Server).abort,
	"rollback": (*Server).rollback,
	"restart": func(s *Server, r *http.Request, app *registry.App) (*registry.App, error) {
		return s.cfg.Registry.RestartApp(r.Context(), app.Namespace, app.Name)
	},
	// stop and start every instance (seed 002, optype=stop/start).
	"stop": func(s *Server, r *http.Request, app *registry.App) (*registry.App, error) {
		return s.cfg.Registry.SetStopped(r.Context(), app.Namespace, app.Name, true)
	},
	"start": func(s *Server, r *http.Request, app *registry.App) (*registry.App, error) {
		return s.cfg.Registry.SetStopped(r.Context(), app.Namespace, app.Name, false)
	},
}

func (s *Server) operateRollout(wl workloads) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		op, ok := rolloutOps[r.PathValue("op")]
		if !ok {
			return &httpError{http.StatusNotFound, "NotFound",
				fmt.Sprintf("no operation %q (want pause, resume, promote, abort, rollback, restart, stop or start)", r.PathValue("op"))}
		}
		app, err := s.get(r, wl)
		if err != nil {
			return err
		}
		if app, err = op(s, r, app); err != nil {
			return err
		}
		return s.writeApp(w, r, http.StatusAccepted, app)
	}
}

func (s *Server) setPaused(r *http.Request, app *registry.App, paused bool) (*registry.App, error) {
	return s.cfg.Registry.SetPaused(r.Context(), app.Namespace, app.Name, paused)
}

// started returns the rollout of the application's current version, or a
// conflict when the scheduler has not begun it yet.
func (s *Server) started(r *http.Request, app *registry.App) (*registry.Rollout, error) {
	ro, err := s.rollout(r, app)
	if err != nil {
		return nil, err
	}
	if ro == nil || ro.State.UpdateVersion != app.Version {
		return nil, fmt.Errorf("the scheduler has not begun the rollout of revision %d of %s/%s yet; try again: %w",
			app.Version, app.Namespace, app.Name, errdefs.ErrConflict)
	}
	return ro, nil
}

// promote ends what the rollout waits for: a canary pause, a batch of
// rollingManually, an inconclusive hook.
func (s *Server) promote(r *http.Request, app *registry.App) (*registry.App, error) {
	ro, err := s.started(r, app)
	if err != nil {
		return nil, err
	}
	if w := ro.State.Wait; !w.Promotable() {
		return nil, fmt.Errorf("nothing to promote: the rollout of %s/%s is %s (%s): %w",
			app.Namespace, app.Name, ro.Status.Phase, ro.Status.Message, errdefs.ErrConflict)
	}
	return s.cfg.Registry.PromoteApp(r.Context(), app.Namespace, app.Name, ro.State.UpdateVersion, ro.State.Wait.Seq)
}

// abort sends the instances back to the stable revision.
func (s *Server) abort(r *http.Request, app *registry.App) (*registry.App, error) {
	ro, err := s.started(r, app)
	if err != nil {
		return nil, err
	}
	switch st := ro.State; {
	case st.StableVersion == 0 || st.StableVersion == st.UpdateVersion:
		return nil, fmt.Errorf("no rollout to abort: %s/%s runs revision %d everywhere it can (%s): %w",
			app.Namespace, app.Name, st.UpdateVersion, ro.Status.Message, errdefs.ErrConflict)
	case st.Aborted:
		return nil, fmt.Errorf("the rollout of revision %d of %s/%s is aborted already: %w", st.UpdateVersion, app.Namespace, app.Name, errdefs.ErrConflict)
	}
	return s.cfg.Registry.AbortApp(r.Context(), app.Namespace, app.Name, ro.State.UpdateVersion)
}

// rollback makes a new version with the spec of an earlier one.
func (s *Server) rollback(r *http.Request, app *registry.App) (*registry.App, error) {
	body, err := s.readBody(r)
	if err != nil {
		return nil, err
	}
	var req apiv1.RollbackRequest
	if err := strictjson.Decode(body, &req); err != nil {
		return nil, err
	}
	switch {
	case req.Revision == nil:
		return nil, field.ErrorList{field.Required("revision")}
	case *req.Revision == 0:
		return nil, field.ErrorList{field.Invalid("revision", "want a revision ≥ 1, got 0")}
	}
	return s.cfg.Registry.RollbackApp(r.Context(), app.Namespace, app.Name, *req.Revision)
}
