package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/bcs-mesos/bcs-mesos/pkg/apiv1"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/field"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// AutoscalePlanner says what the leader would decide for an autoscaler
// now (its providers read once, nothing written): the status an
// autoscaler's ?dryRun=true and POST /v1/plan answer with. Nil where no
// autoscaler controller runs: they answer the validated autoscaler
// without a status.
type AutoscalePlanner interface {
	PlanAutoscaler(ctx context.Context, a *manifest.Autoscaler) (*manifest.AutoscalerStatus, error)
}

// autoscalersPath is where autoscalers are served.
const autoscalersPath = "autoscalers"

func (s *Server) autoscalerRoutes() {
	base := "/v1/" + autoscalersPath
	s.handle("POST "+base, s.createAutoscaler, "dryRun")
	s.handle("GET "+base, s.listAutoscalers, withListParams("namespace")...)
	s.handle("GET "+base+"/{ns}/{name}", s.getAutoscaler)
	s.handle("PUT "+base+"/{ns}/{name}", s.updateAutoscaler, "dryRun")
	s.handle("DELETE "+base+"/{ns}/{name}", s.deleteAutoscaler)
	s.handle("POST "+base+"/{ns}/{name}/pause", s.pauseAutoscaler(true))
	s.handle("POST "+base+"/{ns}/{name}/resume", s.pauseAutoscaler(false))
}

// autoscalerView shows rec and its status (nil: none yet), the manifest's
// credentials redacted.
func autoscalerView(rec *registry.Object, a *manifest.Autoscaler, status *manifest.AutoscalerStatus) apiv1.AutoscalerView {
	shown := manifest.RedactCredentials(a).(*manifest.Autoscaler)
	v := apiv1.AutoscalerView{Namespace: a.Metadata.Namespace, Name: a.Metadata.Name, Spec: *shown, Status: status}
	if rec != nil {
		v.Revision, v.CreatedAt, v.UpdatedAt = rec.Revision, rec.CreatedAt, rec.UpdatedAt
	}
	return v
}

// parseAutoscaler reads and validates the autoscaler a request sends:
// manifest validation and autoscale.Check (languages), and its target
// against what is stored.
func (s *Server) parseAutoscaler(r *http.Request) (*manifest.Autoscaler, error) {
	obj, err := s.parse(r, manifest.KindAutoscaler)
	if err != nil {
		return nil, err
	}
	a := obj.(*manifest.Autoscaler)
	return a, s.checkAutoscaleTarget(r.Context(), a)
}

// checkAutoscaleTarget refuses a target stored as another kind than the
// autoscaler says, a daemonset among them. A target not stored yet is
// accepted: manifests applied together come in any order, and the
// autoscaler's status says it cannot scale until the target exists.
func (s *Server) checkAutoscaleTarget(ctx context.Context, a *manifest.Autoscaler) error {
	t := a.Spec.Target
	app, err := s.cfg.Registry.GetApp(ctx, a.Metadata.Namespace, t.Name)
	if errors.Is(err, errdefs.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	p := field.Path("spec.target.kind")
	switch {
	case app.Kind == manifest.KindDaemonset:
		return field.ErrorList{field.Invalid(p, "%s/%s is a daemonset, which runs one instance per agent its constraint admits: nothing to scale", app.Namespace, app.Name)}
	case app.Kind != t.Kind:
		return field.ErrorList{field.Invalid(p, "%s/%s is a %s, not a %s", app.Namespace, app.Name, app.Kind, t.Kind)}
	}
	return nil
}

func (s *Server) createAutoscaler(w http.ResponseWriter, r *http.Request) error {
	dryRun, err := boolParam(r, "dryRun")
	if err != nil {
		return err
	}
	a, err := s.parseAutoscaler(r)
	if err != nil {
		return err
	}
	obj, err := manifest.KeepCredentials(a, nil)
	if err != nil {
		return err
	}
	a = obj.(*manifest.Autoscaler)
	if dryRun {
		if err := s.cfg.Registry.AutoscaleTargetFree(r.Context(), a); err != nil {
			return err
		}
		return s.writeAutoscalerPlan(w, r, a)
	}
	rec, err := s.cfg.Registry.CreateAutoscaler(r.Context(), a)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, autoscalerView(rec, a, nil))
	return nil
}

// writeAutoscalerPlan answers a dry run: 200 with a as it would be
// stored and, from the planner, the status its first decision would
// write.
func (s *Server) writeAutoscalerPlan(w http.ResponseWriter, r *http.Request, a *manifest.Autoscaler) error {
	var status *manifest.AutoscalerStatus
	if s.cfg.AutoscalePlanner != nil {
		var err error
		if status, err = s.cfg.AutoscalePlanner.PlanAutoscaler(r.Context(), a); err != nil {
			return err
		}
	}
	writeJSON(w, http.StatusOK, autoscalerView(nil, a, status))
	return nil
}

// planAutoscaler answers POST /v1/plan of an autoscaler: validated as
// its create or update would be, and its dry run's answer.
func (s *Server) planAutoscaler(w http.ResponseWriter, r *http.Request, a *manifest.Autoscaler) error {
	if err := s.checkAutoscaleTarget(r.Context(), a); err != nil {
		return err
	}
	var old manifest.Object
	_, stored, err := s.cfg.Registry.GetAutoscaler(r.Context(), a.Metadata.Namespace, a.Metadata.Name)
	switch {
	case err == nil:
		old = stored
	case !errors.Is(err, errdefs.ErrNotFound):
		return err
	}
	obj, err := manifest.KeepCredentials(a, old)
	if err != nil {
		return err
	}
	a = obj.(*manifest.Autoscaler)
	if err := s.cfg.Registry.AutoscaleTargetFree(r.Context(), a); err != nil {
		return err
	}
	return s.writeAutoscalerPlan(w, r, a)
}

func (s *Server) updateAutoscaler(w http.ResponseWriter, r *http.Request) error {
	dryRun, err := boolParam(r, "dryRun")
	if err != nil {
		return err
	}
	rev, err := ifMatch(r)
	if err != nil {
		return err
	}
	a, err := s.parseAutoscaler(r)
	if err != nil {
		return err
	}
	if err := matchPath(r, a); err != nil {
		return err
	}
	stored, old, err := s.cfg.Registry.GetAutoscaler(r.Context(), a.Metadata.Namespace, a.Metadata.Name)
	if err != nil {
		return err
	}
	// Credentials shown redacted are the stored ones, kept from the
	// revision they were read at.
	obj, err := manifest.KeepCredentials(a, old)
	if err != nil {
		return err
	}
	a = obj.(*manifest.Autoscaler)
	if rev == 0 {
		rev = stored.Revision
	}
	if dryRun {
		if err := s.cfg.Registry.AutoscaleTargetFree(r.Context(), a); err != nil {
			return err
		}
		return s.writeAutoscalerPlan(w, r, a)
	}
	rec, err := s.cfg.Registry.UpdateAutoscaler(r.Context(), a, rev)
	if err != nil {
		return err
	}
	return s.writeAutoscaler(w, r, http.StatusOK, rec, a)
}

// writeAutoscaler answers with rec and its current status.
func (s *Server) writeAutoscaler(w http.ResponseWriter, r *http.Request, code int, rec *registry.Object, a *manifest.Autoscaler) error {
	status, err := s.cfg.Registry.GetAutoscalerStatus(r.Context(), rec.Namespace, rec.Name)
	switch {
	case errors.Is(err, errdefs.ErrNotFound):
		writeJSON(w, code, autoscalerView(rec, a, nil))
		return nil
	case err != nil:
		return err
	}
	writeJSON(w, code, autoscalerView(rec, a, &status.AutoscalerStatus))
	return nil
}

func (s *Server) getAutoscaler(w http.ResponseWriter, r *http.Request) error {
	rec, a, err := s.cfg.Registry.GetAutoscaler(r.Context(), r.PathValue("ns"), r.PathValue("name"))
	if err != nil {
		return err
	}
	return s.writeAutoscaler(w, r, http.StatusOK, rec, a)
}

// listAutoscalers lists the autoscalers of ?namespace= (every one the
// caller reads when unset), each with its status.
func (s *Server) listAutoscalers(w http.ResponseWriter, r *http.Request) error {
	p, err := readListPage(r)
	if err != nil {
		return err
	}
	ns := r.URL.Query().Get("namespace")
	recs, err := s.cfg.Registry.ListAutoscalers(r.Context(), ns)
	if err != nil {
		return err
	}
	statuses, err := s.cfg.Registry.ListAutoscalerStatuses(r.Context(), ns)
	if err != nil {
		return err
	}
	byKey := make(map[string]*manifest.AutoscalerStatus, len(statuses))
	for _, st := range statuses {
		byKey[namespacedKey(st.Namespace, st.Name)] = &st.AutoscalerStatus
	}
	recs, next := pageOf(p, recs, objectKey)
	views := make([]apiv1.AutoscalerView, 0, len(recs))
	for _, rec := range recs {
		a, err := rec.Autoscaler()
		if err != nil {
			return err
		}
		views = append(views, autoscalerView(rec, a, byKey[objectKey(rec)]))
	}
	writeList(w, autoscalersPath, views, next)
	return nil
}

func (s *Server) deleteAutoscaler(w http.ResponseWriter, r *http.Request) error {
	if err := s.cfg.Registry.DeleteAutoscaler(r.Context(), r.PathValue("ns"), r.PathValue("name")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// pauseAutoscaler pauses (it decides and reports, never scales) or
// resumes an autoscaler: a new spec revision.
func (s *Server) pauseAutoscaler(paused bool) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		rec, err := s.cfg.Registry.SetAutoscalerPaused(r.Context(), r.PathValue("ns"), r.PathValue("name"), paused)
		if err != nil {
			return err
		}
		a, err := rec.Autoscaler()
		if err != nil {
			return err
		}
		return s.writeAutoscaler(w, r, http.StatusOK, rec, a)
	}
}

// autoscalerEvent shows a stored autoscaler as GET does, without its
// status; a record that does not parse (none is stored) shows its name
// only, never its unredacted spec.
func autoscalerEvent(rec *registry.Object) apiv1.AutoscalerView {
	a, err := rec.Autoscaler()
	if err != nil {
		return apiv1.AutoscalerView{Namespace: rec.Namespace, Name: rec.Name}
	}
	return autoscalerView(rec, a, nil)
}
