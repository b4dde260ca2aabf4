package schedulertest

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/scheduler"
)

// allocate stores an allocation of the instance key/idx for its current
// launch, or with launch=older for the launch before it, and steps it.
func (h *Harness) allocate(key, idx string, args map[string]string) []string {
	g := h.groups[key+"/"+idx]
	if g == nil {
		h.t.Fatalf("allocate %s/%s: no such instance", key, idx)
	}
	tgID := g.ID
	if args["launch"] == "older" {
		p, err := registry.ParseID(g.ID)
		if err != nil {
			h.t.Fatalf("allocate %s/%s: %v", key, idx, err)
		}
		tgID = registry.TaskGroupID(p.Namespace, p.App, p.Incarnation, p.Index, p.Launch-1)
	}
	ns, app, _ := strings.Cut(key, "/")
	al := &registry.Allocation{Namespace: ns, App: app, Instance: g.Index, TaskGroupID: tgID, Source: registry.AllocatedByAPI, Since: h.now, By: "alice"}
	h.allocations[key+"/"+idx] = al
	cp := *al
	return h.step(scheduler.AllocationChanged{Namespace: ns, App: app, Instance: g.Index, Allocation: &cp})
}

// release deletes the allocation of the instance key/idx and steps it.
func (h *Harness) release(key, idx string) []string {
	delete(h.allocations, key+"/"+idx)
	ns, app, _ := strings.Cut(key, "/")
	id, _ := strconv.Atoi(idx)
	return h.step(scheduler.AllocationChanged{Namespace: ns, App: app, Instance: id})
}

// allocationList is the stored allocations, as the driver reads them.
func (h *Harness) allocationList() []*registry.Allocation {
	var out []*registry.Allocation
	for _, k := range sortedKeys(h.allocations) {
		cp := *h.allocations[k]
		out = append(out, &cp)
	}
	return out
}

// fleet prints the core's view of an application (Core.Fleet).
func (h *Harness) fleet(key string) []string {
	ns, app, _ := strings.Cut(key, "/")
	v := h.core.Fleet([]scheduler.AppRef{{Namespace: ns, Name: app}})[0]
	if !v.Found {
		return []string{"not found"}
	}
	out := []string{fmt.Sprintf("fleet %s replicas=%d removed=%v state=%s", key, v.Replicas, v.Removed, v.State)}
	for _, x := range v.Instances {
		out = append(out, fmt.Sprintf("  %d rank=%d %s ready=%t going=%t allocated=%t cpus=%g mem=%g", x.ID, x.Rank, x.TaskGroupID,
			x.Ready, x.Going, x.Allocated, x.CPUs, x.MemMB))
	}
	return out
}
