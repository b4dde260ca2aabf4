package api

import (
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// DefaultViewWait is how long a read waits for the read view to reflect
// the writes acknowledged before it, when Config.ViewWait is unset.
const DefaultViewWait = time.Second

// reader is what the read handlers read: the registry (etcd) or the read
// view (registry.Viewed), whose records are shared and never changed.
type reader interface {
	GetApp(ctx context.Context, namespace, name string) (*registry.App, error)
	ListApps(ctx context.Context, namespace string) ([]*registry.App, error)
	TaskGroups(ctx context.Context, namespace, app string) ([]*registry.TaskGroup, error)
	EachTaskGroup(ctx context.Context, fn func(*registry.TaskGroup) error) error
	Allocations(ctx context.Context, namespace, app string) ([]*registry.Allocation, error)
	GetRollout(ctx context.Context, namespace, name string) (*registry.Rollout, error)
	ListAgents(ctx context.Context) ([]*registry.Agent, error)
	ListAgentSettings(ctx context.Context) ([]*registry.AgentSettings, error)
}

// reads is where r's handler reads: the read view once it reflects every
// write etcd acknowledged before r came (a client reads its own writes,
// on any replica), etcd when there is no view or it does not catch up
// within Config.ViewWait.
func (s *Server) reads(r *http.Request) reader {
	if s.cfg.View == nil {
		s.readsFrom.WithLabelValues("etcd").Inc()
		return s.cfg.Registry
	}
	if err := s.cfg.View.Fresh(r.Context(), s.cfg.ViewWait); err != nil {
		s.readsFrom.WithLabelValues("etcd").Inc()
		s.cfg.Logger.Debug("read from etcd: the read view is behind", "path", r.URL.Path, "err", err)
		return s.cfg.Registry
	}
	s.readsFrom.WithLabelValues("view").Inc()
	return s.cfg.View
}

func newReadsFrom() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "bcs_api_reads_total",
		Help: "Reads of applications, instances and agents, by where they were served from: the read view, or etcd (no view, or it had not caught up in time).",
	}, []string{"from"})
}
