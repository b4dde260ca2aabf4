package api

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/bcs-mesos/bcs-mesos/pkg/apiv1"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/field"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/strictjson"
)

// allocationRoutes serve the allocation of one instance of a workload:
// a game session runs on it, so scale-downs and rollouts keep it.
func (s *Server) allocationRoutes(wl workloads) {
	base := "/v1/" + wl.path + "/{ns}/{name}/instances/{id}"
	s.handle("POST "+base+"/allocate", s.allocate(wl))
	s.handle("POST "+base+"/release", s.release(wl))
}

// instanceOf returns the application and instance ID a request names.
func (s *Server) instanceOf(r *http.Request, wl workloads) (*registry.App, int, error) {
	id, err := strconv.Atoi(r.PathValue("id"))
	if err != nil || id < 0 {
		return nil, 0, field.ErrorList{field.Invalid("id", "want an instance ID (≥ 0), got %q", r.PathValue("id"))}
	}
	app, err := s.get(r, wl)
	return app, id, err
}

func (s *Server) allocate(wl workloads) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req apiv1.AllocateRequest
		if r.ContentLength != 0 {
			body, err := s.readBody(r)
			if err != nil {
				return err
			}
			if err := strictjson.Decode(body, &req); err != nil {
				return err
			}
		}
		app, id, err := s.instanceOf(r, wl)
		if err != nil {
			return err
		}
		caller, _ := identityOf(r)
		a, err := s.cfg.Registry.Allocate(r.Context(), registry.Allocation{Namespace: app.Namespace, App: app.Name, Instance: id,
			Source: registry.AllocatedByAPI, By: caller.User, Note: req.Note})
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, allocationView(a))
		return nil
	}
}

func (s *Server) release(wl workloads) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		app, id, err := s.instanceOf(r, wl)
		if err != nil {
			return err
		}
		held, err := s.allocationOf(r, app, id)
		if err != nil {
			return err
		}
		if held.Source != registry.AllocatedByAPI {
			return fmt.Errorf("instance %s/%s/%d was allocated by its autoscaler's probe, which releases it: %w", app.Namespace, app.Name, id, errdefs.ErrConflict)
		}
		if err := s.cfg.Registry.Release(r.Context(), app.Namespace, app.Name, id); err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, allocationView(held))
		return nil
	}
}

// allocationOf returns the allocation of instance id of app;
// errdefs.ErrNotFound when it has none.
func (s *Server) allocationOf(r *http.Request, app *registry.App, id int) (*registry.Allocation, error) {
	allocs, err := s.cfg.Registry.Allocations(r.Context(), app.Namespace, app.Name)
	if err != nil {
		return nil, err
	}
	for _, a := range allocs {
		if a.Instance == id {
			return a, nil
		}
	}
	return nil, fmt.Errorf("instance %s/%s/%d is not allocated: %w", app.Namespace, app.Name, id, errdefs.ErrNotFound)
}

func allocationView(a *registry.Allocation) *apiv1.AllocationView {
	return &apiv1.AllocationView{Source: string(a.Source), Since: a.Since, By: a.By, Note: a.Note, TaskGroupID: a.TaskGroupID}
}

// showAllocations sets each instance's allocation, as GET of its
// workload and its instances show it. An allocation of an earlier
// launch holds nothing: not shown.
func showAllocations(views []apiv1.InstanceView, allocs []*registry.Allocation) {
	if len(allocs) == 0 {
		return
	}
	byInstance := make(map[int]*registry.Allocation, len(allocs))
	for _, a := range allocs {
		byInstance[a.Instance] = a
	}
	for i := range views {
		v := &views[i]
		if a := byInstance[v.ID]; a != nil && a.TaskGroupID == v.TaskGroupID {
			v.Allocated = allocationView(a)
		}
	}
}
