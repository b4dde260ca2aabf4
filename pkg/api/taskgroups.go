package api

import (
	"context"
	"fmt"
	"net/http"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
)

// Operator carries out operator requests on a task group: "restart" and
// "reload" (sent to the executor), "reschedule" (kill and place elsewhere).
type Operator interface {
	Operate(ctx context.Context, taskGroupID, op string) error
	// Drift queues the moves a drift asks for.
	Drift(ctx context.Context, req DriftRequest) error
}

var taskGroupOps = map[string]bool{"restart": true, "reload": true, "reschedule": true}

// operateTaskGroup answers 202: the result shows on the instance (GET the
// application) once the executor or Mesos answered.
func (s *Server) operateTaskGroup(w http.ResponseWriter, r *http.Request) error {
	id, op := r.PathValue("id"), r.PathValue("op")
	if !taskGroupOps[op] {
		return &httpError{http.StatusNotFound, "NotFound", fmt.Sprintf("no operation %q (want restart, reload or reschedule)", op)}
	}
	if s.cfg.Operator == nil {
		return fmt.Errorf("no scheduler runs in this replica: %w", errdefs.ErrUnavailable)
	}
	if err := s.cfg.Operator.Operate(r.Context(), id, op); err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"taskGroupID": id, "operation": op})
	return nil
}
