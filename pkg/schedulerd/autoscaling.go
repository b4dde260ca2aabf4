package schedulerd

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/autoscaler"
	"github.com/bcs-mesos/bcs-mesos/pkg/egress"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/scheduler"
)

// newAutoscaler is a term's autoscaler controller: it reads the fleets
// and the usage from the term's driver, and writes its scales and
// statuses through the term's fenced registry, so that a deposed leader
// neither scales nor records; its provider calls hold to each
// namespace's egress policy, as the hook runs do.
func newAutoscaler(driver *scheduler.Driver, leaderReg *registry.Registry, policies *egress.Set, usageInterval time.Duration, log *slog.Logger) (*autoscaler.Controller, error) {
	sources := driverSources{driver: driver}
	return autoscaler.New(autoscaler.Config{Registry: leaderReg, Fleet: sources, Usage: sources, Scaler: leaderReg,
		StatusWriter: leaderReg, Egress: policies, UsageInterval: usageInterval, Logger: log})
}

// driverSources read the driver for the autoscaler controller.
type driverSources struct{ driver *scheduler.Driver }

var (
	_ autoscaler.FleetSource = driverSources{}
	_ autoscaler.UsageSource = driverSources{}
)

func (s driverSources) Fleet(ctx context.Context, refs []autoscaler.Ref) ([]autoscaler.Fleet, error) {
	apps := make([]scheduler.AppRef, len(refs))
	for i, ref := range refs {
		apps[i] = scheduler.AppRef{Namespace: ref.Namespace, Name: ref.Name}
	}
	views, err := s.driver.Fleet(ctx, apps)
	if err != nil {
		return nil, err
	}
	fleets := make([]autoscaler.Fleet, len(views))
	for i, v := range views {
		fleets[i] = fleetOf(v)
	}
	return fleets, nil
}

// fleetOf is the controller's view of v, or why it cannot be scaled.
func fleetOf(v scheduler.FleetView) autoscaler.Fleet {
	name := v.App.Namespace + "/" + v.App.Name
	switch {
	case !v.Found:
		return autoscaler.Fleet{Problem: fmt.Sprintf("workload %s not found", name)}
	case v.Kind == manifest.KindDaemonset:
		return autoscaler.Fleet{Problem: fmt.Sprintf("%s is a daemonset: it runs one instance per agent its constraint admits", name)}
	case v.State == registry.AppDeleting:
		return autoscaler.Fleet{Problem: fmt.Sprintf("%s is being deleted", name)}
	case v.Stopped:
		// Its instances do not run: every metric would ask for more.
		return autoscaler.Fleet{Problem: fmt.Sprintf("%s is stopped; start it to scale it", name)}
	}
	f := autoscaler.Fleet{Replicas: v.Replicas, App: v.Record, Instances: make([]autoscaler.Instance, len(v.Instances))}
	for i, inst := range v.Instances {
		f.Instances[i] = autoscaler.Instance{ID: inst.ID, TaskGroupID: inst.TaskGroupID, Ready: inst.Ready, Going: inst.Going,
			Allocated: inst.Allocated, RunningSince: inst.RunningSince, HostIP: inst.HostIP, Ports: inst.Ports, CPUs: inst.CPUs, MemMB: inst.MemMB}
	}
	return f
}

func (s driverSources) Usage(taskGroupIDs []string) map[string]autoscaler.Usage {
	reports := s.driver.Usage(taskGroupIDs)
	out := make(map[string]autoscaler.Usage, len(reports))
	for id, u := range reports {
		out[id] = autoscaler.Usage{CPUCores: u.CPUCores, MemBytes: u.MemBytes, Received: u.Received}
	}
	return out
}
