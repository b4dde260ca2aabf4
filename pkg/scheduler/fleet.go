package scheduler

import (
	"context"
	"slices"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// FleetView is what the core knows of one workload's instances, for
// those who decide its size (the autoscaler): read on the loop between
// two steps, so that nobody decodes the fleet's records from the store.
type FleetView struct {
	App AppRef
	// Found: the core has the application; the rest is zero otherwise.
	Found bool
	Kind  manifest.Kind
	// Replicas and Removed are the record's Instances and Removed.
	Replicas int
	Removed  []int
	State    registry.AppState
	Stopped  bool
	// Instances are by ID: those wanted first (surge ones included),
	// then those on their way out.
	Instances []FleetInstance
	// Record is a copy of the application's record the view was taken
	// from, its Revision included: a scale decided on the view writes
	// against it, so that it commits only if the record is unchanged.
	Record *registry.App
}

// FleetInstance is one instance of a FleetView.
type FleetInstance struct {
	ID int
	// Rank is its place among the IDs wanted (-1 for one going).
	Rank        int
	TaskGroupID string
	// Ready: running and healthy; Going: no longer wanted (killed, or
	// held by its PreDeleteHook or its allocation); Allocated: its
	// current launch is.
	Ready, Going, Allocated bool
	RunningSince            time.Time
	HostIP                  string
	Ports                   registry.HostPorts
	// CPUs and MemMB are what its launch takes from an offer (its
	// template's tasks together).
	CPUs, MemMB float64
}

// Fleet returns the views of the applications refs, in their order: the
// work is that of their instances, on the loop's goroutine.
func (d *Driver) Fleet(ctx context.Context, refs []AppRef) ([]FleetView, error) {
	var views []FleetView
	if err := d.query(ctx, func(c *Core, _ time.Time) { views = c.Fleet(refs) }); err != nil {
		return nil, err
	}
	return views, nil
}

// Fleet returns the views of the applications refs, in their order.
func (c *Core) Fleet(refs []AppRef) []FleetView {
	views := make([]FleetView, len(refs))
	for i, ref := range refs {
		views[i].App = ref
		if a := c.apps[ref.Namespace+"/"+ref.Name]; a != nil && a.rec != nil {
			views[i] = c.fleetView(a, ref)
		}
	}
	return views
}

func (c *Core) fleetView(a *app, ref AppRef) FleetView {
	v := FleetView{App: ref, Found: true, Kind: a.rec.Kind, Replicas: a.rec.Instances, Removed: slices.Clone(a.rec.Removed),
		State: a.rec.State, Stopped: a.rec.Stopped, Instances: make([]FleetInstance, 0, len(a.instances))}
	rec := *a.rec
	rec.Removed = slices.Clone(a.rec.Removed)
	v.Record = &rec
	requests := map[string][2]float64{}
	span, rank := a.span(), 0
	if a.daemon() { // its IDs have holes where agents left: every one is wanted
		span = 0
		for id := range a.instances {
			span = max(span, id+1)
		}
	}
	for id := 0; id < span; id++ {
		if inst := a.instances[id]; inst != nil && !a.hole(id) {
			v.Instances = append(v.Instances, c.fleetInstance(inst, rank, requests))
			rank++
		}
	}
	first := len(v.Instances)
	if len(a.instances) > first {
		for id, inst := range a.instances {
			if id >= span || a.hole(id) {
				v.Instances = append(v.Instances, c.fleetInstance(inst, -1, requests))
			}
		}
		slices.SortFunc(v.Instances[first:], func(x, y FleetInstance) int { return x.ID - y.ID })
	}
	return v
}

// fleetInstance is the view of inst at rank (-1: going); requests keeps
// the resources of the templates met, by hash.
func (c *Core) fleetInstance(inst *instance, rank int, requests map[string][2]float64) FleetInstance {
	req, ok := requests[inst.rec.Template]
	if !ok {
		if t := inst.template(); t != nil {
			for i := range t.Tasks() {
				cpus, mem := t.TaskResources(i)
				req[0], req[1] = req[0]+cpus, req[1]+mem
			}
		}
		requests[inst.rec.Template] = req
	}
	return FleetInstance{ID: inst.rec.Index, Rank: rank, TaskGroupID: inst.rec.ID, Ready: c.ready(inst),
		Going: rank < 0 || inst.goingAway(), Allocated: inst.allocated(), RunningSince: inst.rec.RunningSince,
		HostIP: inst.rec.HostIP, Ports: inst.rec.Ports, CPUs: req[0], MemMB: req[1]}
}
