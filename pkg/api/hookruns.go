package api

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/bcs-mesos/bcs-mesos/pkg/apiv1"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/field"
	"github.com/bcs-mesos/bcs-mesos/pkg/hook"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/strictjson"
)

// createHookRun starts a run of a template; the hook runner takes its
// measurements and GET shows them.
func (s *Server) createHookRun(w http.ResponseWriter, r *http.Request) error {
	body, err := s.readBody(r)
	if err != nil {
		return err
	}
	var req apiv1.HookRunRequest
	if err := strictjson.Decode(body, &req); err != nil {
		return err
	}
	if req.Metadata.Namespace == "" {
		req.Metadata.Namespace = manifest.DefaultNamespace
	}
	var errs field.ErrorList
	if req.Kind != "" && !strings.EqualFold(req.Kind, "hookrun") {
		errs = append(errs, field.Invalid("kind", "want hookrun, got %q", req.Kind))
	}
	if req.Metadata.Name == "" {
		errs = append(errs, field.Required("metadata.name"))
	}
	if req.Spec.TemplateName == "" {
		errs = append(errs, field.Required("spec.templateName"))
	} else if len(errs) == 0 {
		errs = append(errs, s.checkHookArgs(r, req.Metadata.Namespace, req.Spec.TemplateName, req.Spec.Args)...)
	}
	if len(errs) > 0 {
		return errs
	}
	run := &registry.HookRun{Namespace: req.Metadata.Namespace, Name: req.Metadata.Name,
		Spec: hook.RunSpec{TemplateName: req.Spec.TemplateName, Args: req.Spec.Args}}
	if err := s.cfg.Registry.CreateHookRun(r.Context(), run); err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, hookRunView(run))
	return nil
}

// hookRunView is a hook run as the API and its events show it: the
// metrics it copied from its template with their credentials (web
// calls' headers) redacted, as the template is shown.
func hookRunView(run *registry.HookRun) *registry.HookRun {
	shown := *run
	shown.Spec.Metrics = manifest.RedactHookMetrics(run.Spec.Metrics)
	return &shown
}

// checkHookArgs checks a run's arguments against its template: the
// template exists, every argument is one it declares, and every one it
// declares without a value is given.
func (s *Server) checkHookArgs(r *http.Request, namespace, templateName string, args []manifest.HookArg) field.ErrorList {
	obj, err := s.cfg.Registry.GetObject(r.Context(), manifest.KindHookTemplate, namespace, templateName)
	if err != nil {
		return field.ErrorList{field.Invalid("spec.templateName", "hook template %s/%s: %v", namespace, templateName, err)}
	}
	m, err := obj.Manifest()
	if err != nil {
		return field.ErrorList{field.Invalid("spec.templateName", "stored hook template %s/%s: %v", namespace, templateName, err)}
	}
	template, ok := m.(*manifest.HookTemplate)
	if !ok {
		return field.ErrorList{field.Invalid("spec.templateName", "stored hook template %s/%s is a %s", namespace, templateName, m.Kind())}
	}
	return manifest.HookArgProblems(template, args, "spec", nil)
}

func (s *Server) getHookRun(w http.ResponseWriter, r *http.Request) error {
	run, err := s.cfg.Registry.GetHookRun(r.Context(), r.PathValue("ns"), r.PathValue("name"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, hookRunView(run))
	return nil
}

// listHookRuns lists runs, of one namespace and of one owner (the
// application whose rollout or instances wait for them) when asked.
func (s *Server) listHookRuns(w http.ResponseWriter, r *http.Request) error {
	p, err := readListPage(r)
	if err != nil {
		return err
	}
	runs, err := s.cfg.Registry.ListHookRuns(r.Context(), r.URL.Query().Get("namespace"))
	if err != nil {
		return err
	}
	owner := r.URL.Query().Get("owner")
	runs = slices.DeleteFunc(runs, func(run *registry.HookRun) bool {
		return owner != "" && (run.Spec.Owner == nil || run.Spec.Owner.App != owner)
	})
	runs, next := pageOf(p, runs, func(run *registry.HookRun) string { return namespacedKey(run.Namespace, run.Name) })
	views := make([]*registry.HookRun, len(runs))
	for i, run := range runs {
		views[i] = hookRunView(run)
	}
	writeList(w, "hookruns", views, next)
	return nil
}

// terminateHookRun stops a run: no more measurements, phase Terminated.
func (s *Server) terminateHookRun(w http.ResponseWriter, r *http.Request) error {
	run, err := s.cfg.Registry.ModifyHookRun(r.Context(), r.PathValue("ns"), r.PathValue("name"), func(run *registry.HookRun) (bool, error) {
		if run.Status.Phase.Completed() || run.Spec.Terminate {
			return false, nil
		}
		run.Spec.Terminate = true
		return true, nil
	})
	if err != nil {
		return err
	}
	if run.Status.Phase.Completed() {
		return fmt.Errorf("hook run %s/%s ended %s already: %w", run.Namespace, run.Name, run.Status.Phase, errdefs.ErrConflict)
	}
	writeJSON(w, http.StatusAccepted, hookRunView(run))
	return nil
}
