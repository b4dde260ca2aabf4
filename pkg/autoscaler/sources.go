package autoscaler

import (
	"context"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// Ref names a workload, or an autoscaler, in its namespace.
type Ref struct{ Namespace, Name string }

func (r Ref) String() string { return r.Namespace + "/" + r.Name }

// Fleet is what the scheduler knows of one workload's instances.
type Fleet struct {
	// Problem says why the workload cannot be scaled (not found, a
	// daemonset, being deleted); empty when it can.
	Problem string
	// Replicas is its wanted instance count.
	Replicas int
	// Instances are those wanted and those still going.
	Instances []Instance
	// App is the workload's record the fleet was read with (nil with a
	// Problem): a scale decided on the fleet is written against it.
	App *registry.App
}

// Instance is one instance of a Fleet.
type Instance struct {
	ID          int
	TaskGroupID string
	// Ready: running and healthy; Going: no longer wanted; Allocated:
	// its current launch is.
	Ready, Going, Allocated bool
	// RunningSince is zero when it does not run.
	RunningSince time.Time
	// HostIP and Ports are where it runs, for the calls made per
	// instance (its PodIP is its HostIP, as PreDeleteHook gets it).
	HostIP string
	Ports  registry.HostPorts
	// CPUs and MemMB are what its launch requests.
	CPUs, MemMB float64
}

// FleetSource is the scheduler's view of workloads, in refs' order.
type FleetSource interface {
	Fleet(ctx context.Context, refs []Ref) ([]Fleet, error)
}

// Usage is a task group's last reported use.
type Usage struct {
	// CPUCores is its CPU rate over its last report window.
	CPUCores float64
	MemBytes uint64
	// Received is when the report came, on the scheduler's clock.
	Received time.Time
}

// UsageSource is the executors' last usage reports, by task group ID;
// groups without one are left out.
type UsageSource interface {
	Usage(taskGroupIDs []string) map[string]Usage
}

// Scaler acts on a decision in one write, as registry.ApplyScaleDecision
// does: the workload's record the decision was made on (Fleet.App)
// scaled, the instances removed made holes and the status stored with
// it (its Revision set), or nothing written: errdefs.ErrConflict when
// the record changed since. A refusal because the leader was deposed
// wraps store.ErrDeposed.
type Scaler interface {
	ApplyScaleDecision(ctx context.Context, w registry.ScaleWrite) (*registry.App, error)
}

// StatusWriter stores statuses that come without a scale, as
// registry.PutAutoscalerStatuses does.
type StatusWriter interface {
	PutAutoscalerStatuses(ctx context.Context, statuses []*registry.AutoscalerStatus) error
}

// Registry is where the autoscalers and their statuses are read.
type Registry interface {
	ListAutoscalers(ctx context.Context, namespace string) ([]*registry.Object, error)
	ListAutoscalerStatuses(ctx context.Context, namespace string) ([]*registry.AutoscalerStatus, error)
	// GetAutoscalerStatus wraps errdefs.ErrNotFound before the first
	// decision.
	GetAutoscalerStatus(ctx context.Context, namespace, name string) (*registry.AutoscalerStatus, error)
	// DeleteOrphanStatus deletes the status of an autoscaler deleted
	// after a round began, which that round's write left behind.
	DeleteOrphanStatus(ctx context.Context, namespace, name string) error
	// Allocations, Allocate and Release are the allocation probe's: its
	// writes go through the leader's fenced store too.
	Allocations(ctx context.Context, namespace, app string) ([]*registry.Allocation, error)
	Allocate(ctx context.Context, want registry.Allocation) (*registry.Allocation, error)
	Release(ctx context.Context, namespace, app string, instance int) error
	// SetUsageReport and AppsReportingUsage keep the workloads' usage
	// reports (usagereports.go); the writes go through the leader's
	// fenced store.
	SetUsageReport(ctx context.Context, namespace, name string, on bool, expectRev int64) (*registry.App, error)
	AppsReportingUsage(ctx context.Context) ([]*registry.App, error)
}

var _ Registry = (*registry.Registry)(nil)
var _ StatusWriter = (*registry.Registry)(nil)
var _ Scaler = (*registry.Registry)(nil)
