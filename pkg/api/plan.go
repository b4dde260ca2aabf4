package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/plan"
)

// Planner says what storing a workload manifest would do on the cluster
// (pkg/plan): the leader's scheduler computes it between two of its
// steps, storing and launching nothing.
type Planner interface {
	Plan(ctx context.Context, obj manifest.Object) (*plan.Plan, error)
}

var workloadKinds = slices.Concat(appRoutes.kinds, deploymentRoutes.kinds, daemonsetRoutes.kinds)

// planKinds are the kinds POST /v1/plan takes.
var planKinds = append(slices.Clone(workloadKinds), manifest.KindAutoscaler)

// planManifest answers POST /v1/plan: a manifest as create and update
// take it, validated as they validate it (the update of an existing
// workload, its create otherwise), and the plan; of an autoscaler, what
// its dry run answers.
func (s *Server) planManifest(w http.ResponseWriter, r *http.Request) error {
	obj, err := s.parse(r, planKinds...)
	if err != nil {
		return err
	}
	if a, ok := obj.(*manifest.Autoscaler); ok {
		return s.planAutoscaler(w, r, a)
	}
	current, err := s.cfg.Registry.CheckUpdateApp(r.Context(), obj, 0)
	switch {
	case errors.Is(err, errdefs.ErrNotFound): // a create
		obj, err = manifest.KeepCredentials(obj, nil)
	case err == nil:
		obj, err = nextVersion(current, obj)
	}
	if err != nil {
		return err
	}
	var warning string
	if current != nil {
		if obj, warning, err = s.sizeKept(r.Context(), current, obj); err != nil {
			return err
		}
	}
	return s.writePlan(w, r, obj, warning)
}

// writePlan answers 200 with the plan of obj, and the warnings of the
// API's own (those empty left out) before the scheduler's.
func (s *Server) writePlan(w http.ResponseWriter, r *http.Request, obj manifest.Object, warnings ...string) error {
	if s.cfg.Planner == nil {
		return fmt.Errorf("no scheduler runs in this replica: %w", errdefs.ErrUnavailable)
	}
	p, err := s.cfg.Planner.Plan(r.Context(), obj)
	if err != nil {
		return err
	}
	for _, warning := range slices.Backward(warnings) {
		if warning != "" {
			p.Warnings = slices.Insert(p.Warnings, 0, warning)
		}
	}
	writeJSON(w, http.StatusOK, p)
	return nil
}
