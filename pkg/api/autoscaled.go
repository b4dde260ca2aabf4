package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// sizeKept is what a new version obj of app leaves of app's size: while
// an autoscaler scales app, registry.UpdateApp keeps its size and holes,
// not obj's spec.instance. It returns obj at app's size, for a plan to
// show what the update does, and the warning that says so; obj itself
// and "" when obj's instances apply.
func (s *Server) sizeKept(ctx context.Context, app *registry.App, obj manifest.Object) (manifest.Object, string, error) {
	instances, _ := manifest.InstancesOf(obj)
	if app.Kind == manifest.KindDaemonset || instances == app.Instances {
		return obj, "", nil
	}
	holder, err := s.cfg.Registry.AutoscalerOf(ctx, app.Namespace, app.Name)
	if errors.Is(err, errdefs.ErrNotFound) {
		return obj, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	warning := fmt.Sprintf("spec.instance %d not applied: autoscaler %s/%s scales %s/%s, which keeps its %d instances",
		instances, app.Namespace, holder, app.Namespace, app.Name, app.Instances)
	return withInstances(obj, app.Instances), warning, nil
}

// withInstances is a copy of the workload obj with spec.instance n.
func withInstances(obj manifest.Object, n int) manifest.Object {
	switch m := obj.(type) {
	case *manifest.Application:
		c := *m
		c.Spec.Instance = n
		return &c
	case *manifest.Process:
		c := *m
		c.Spec.Instance = n
		return &c
	case *manifest.Deployment:
		c := *m
		c.Spec.Instance = n
		return &c
	}
	return obj
}

// addWarning adds an RFC 7234 Warning header (299: a persistent
// warning), as Kubernetes' API server tells kubectl what it did not do.
func addWarning(w http.ResponseWriter, text string) {
	if text != "" {
		w.Header().Add("Warning", "299 - "+strconv.Quote(text))
	}
}
