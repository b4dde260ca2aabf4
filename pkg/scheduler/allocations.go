package scheduler

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// Allocations (Agones' Allocated GameServer): an instance allocated —
// a game session runs on it — is never killed for a scale-down. One the
// application no longer wants is held, running, its message saying so,
// until it is released; then it goes. An allocation names the launch it
// was made for: one of an older launch (the instance was relaunched and
// lost its session) holds nothing. A delete kills allocated instances
// too. Rollouts leave an allocated instance be until it is released, or
// until the strategy's allocatedTimeoutSeconds passed (pkg/rollout).

// AllocationChanged: an instance was allocated, or released (Allocation
// nil).
type AllocationChanged struct {
	Namespace, App string
	Instance       int
	Allocation     *registry.Allocation
}

// allocatedMessage is the message of an instance a scale-down holds.
const allocatedMessage = "allocated: kept until released"

func (c *Core) restoreAllocations(allocations []*registry.Allocation) {
	for _, al := range allocations {
		if a := c.apps[al.Namespace+"/"+al.App]; a != nil {
			a.allocate(al.Instance, al)
		}
	}
}

// allocationChanged takes an allocation or release: a released instance
// the application no longer wants goes now.
func (c *Core) allocationChanged(in AllocationChanged) {
	a := c.apps[in.Namespace+"/"+in.App]
	if a == nil {
		return
	}
	a.allocate(in.Instance, in.Allocation)
	c.replan(a) // its rollout may wait for the instance, or leave it be now
	if inst := a.instances[in.Instance]; inst != nil && !inst.allocated() {
		c.unhold(inst)
	}
	c.reconcileApp(a)
}

// unhold clears the message of an instance a scale-down held, released
// or wanted again.
func (c *Core) unhold(inst *instance) {
	if inst.rec.Message == allocatedMessage {
		inst.rec.Message = ""
		c.persist(inst)
	}
}

// unholdWanted clears the message of the held instances a wants again.
func (c *Core) unholdWanted(a *app) {
	for id := range a.allocated {
		if inst := a.instances[id]; inst != nil && a.wants(id) {
			c.unhold(inst)
		}
	}
}

// allocate records the allocation of instance id; nil releases it.
func (a *app) allocate(id int, al *registry.Allocation) {
	a.kept.forget() // what its rollout sees of the instance changes
	if al == nil {
		delete(a.allocated, id)
		return
	}
	if a.allocated == nil {
		a.allocated = map[int]*registry.Allocation{}
	}
	a.allocated[id] = al
}

// allocated reports whether inst's current launch is allocated.
func (inst *instance) allocated() bool {
	al := inst.app.allocated[inst.rec.Index]
	return al != nil && al.TaskGroupID == inst.rec.ID
}

// allocationHeld reports whether a scale-down holds inst, allocated, and
// says so on it.
func (c *Core) allocationHeld(inst *instance) bool {
	if !inst.allocated() || !inst.phase().live() {
		return false
	}
	if inst.rec.Message != allocatedMessage {
		inst.rec.Message = allocatedMessage
		c.logf("scale-down holds an allocated instance", "app", inst.app.key(), "instance", inst.rec.Index, "task_group", inst.rec.ID)
		c.persist(inst)
	}
	return true
}

// allocationChange: an allocation was written or deleted.
func (d *Driver) allocationChange(_ context.Context, we store.Event) (Input, error) {
	in, err := allocationInput(we)
	if err != nil {
		d.log.Error("stored record", "what", "allocation", "key", we.Entry.Key, "err", err)
		return nil, nil
	}
	return in, nil
}

func allocationInput(we store.Event) (Input, error) {
	if we.Type == store.EventDelete {
		parts := strings.Split(we.Entry.Key, "/")
		if len(parts) != 4 {
			return nil, fmt.Errorf("unexpected key %q", we.Entry.Key)
		}
		id, err := strconv.Atoi(parts[3])
		if err != nil {
			return nil, fmt.Errorf("unexpected key %q", we.Entry.Key)
		}
		return AllocationChanged{Namespace: parts[1], App: parts[2], Instance: id}, nil
	}
	var al registry.Allocation
	if err := json.Unmarshal(we.Entry.Value, &al); err != nil {
		return nil, err
	}
	al.Revision = we.Entry.Revision
	return AllocationChanged{Namespace: al.Namespace, App: al.App, Instance: al.Instance, Allocation: &al}, nil
}
