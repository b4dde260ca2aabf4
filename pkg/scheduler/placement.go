package scheduler

import (
	"cmp"
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/bcs-mesos/bcs-mesos/pkg/constraint"
	"github.com/bcs-mesos/bcs-mesos/pkg/launch"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/offer"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// learnAgent remembers what an offer tells about its agent, and records
// an agent that is new or changed.
func (c *Core) learnAgent(o mesos.Offer) {
	info := &agentInfo{id: o.AgentID.Value, hostname: o.Hostname, ip: o.Hostname, attributes: o.Attributes}
	if u := o.GetURL(); u != nil && u.Address.GetIP() != "" {
		info.ip = u.Address.GetIP()
	}
	old := c.agents[info.id]
	c.agents[info.id] = info
	if old != nil && old.hostname == info.hostname && slices.EqualFunc(old.attributes, info.attributes,
		func(x, y mesos.Attribute) bool { return x.Equal(&y) }) {
		return
	}
	attrs := map[string]string{}
	for name, v := range attributes(info.attributes) {
		attrs[name] = v.String()
	}
	c.write(Write{Agent: &AgentRecord{ID: info.id, Hostname: info.hostname, Attributes: attrs}})
}

// pending returns the instances waiting for a launch, in their backoff
// or not.
func (c *Core) pending() []*instance {
	var out []*instance
	for _, a := range c.sortedApps() {
		if a.tmpl == nil || a.rec.State == registry.AppDeleting {
			continue
		}
		for _, inst := range a.sortedInstances() {
			if inst.phase == PhasePending && inst.rec.WaitingFor == "" {
				out = append(out, inst)
			}
		}
	}
	return out
}

// launchable reports whether an instance could be launched now.
func (c *Core) launchable() bool {
	for _, inst := range c.pending() {
		if !inst.rec.NotBefore.After(c.now) {
			return true
		}
	}
	return false
}

// waiting reports whether any instance waits for a launch, now or after
// its backoff.
func (c *Core) waiting() bool {
	for _, a := range c.apps {
		if a.tmpl == nil || a.rec.State == registry.AppDeleting {
			continue
		}
		for _, inst := range a.instances {
			if inst.phase == PhasePending && inst.rec.WaitingFor == "" {
				return true
			}
		}
	}
	return false
}

// schedule launches the sweeps owed to agents that offer, and places the
// pending instances on what is left of the offers; the matcher defers
// instances still in their restart backoff.
func (c *Core) schedule() {
	if len(c.offers) == 0 {
		return
	}
	_, sweepDue := c.sweepsWanted()
	launchable := c.launchable()
	if !launchable && !sweepDue {
		return
	}
	snap := c.snapshot()
	sweeps := c.reserveSweeps(snap)
	defer c.acceptSweeps(sweeps) // those of agents no instance goes to
	if !launchable {
		return
	}
	pending := c.pending()
	byID := map[string]*instance{}
	var groups []offer.TaskGroup
	for _, inst := range pending {
		id := fmt.Sprintf("%s/%d", inst.app.key(), inst.rec.Index)
		byID[id] = inst
		groups = append(groups, offer.TaskGroup{ID: id, Req: inst.app.tmpl.Req, NotBefore: inst.rec.NotBefore, Avoid: inst.avoid})
	}
	plan := c.matcher.Place(snap, groups, c.now, c.cfg.Seed+c.passes)
	c.passes++
	for _, l := range plan.Launches() {
		c.accept(l, byID, sweeps[l.AgentID])
		delete(sweeps, l.AgentID)
	}
	unplaced := map[*app]string{}
	for _, u := range plan.Unplaced {
		a := byID[u.TaskGroupID].app
		if _, seen := unplaced[a]; !seen {
			unplaced[a] = u.Rejections.String()
		}
	}
	deferred := map[string]bool{}
	for _, id := range plan.Deferred {
		deferred[id] = true
	}
	for id, inst := range byID {
		if !deferred[id] {
			inst.app.unplaced = unplaced[inst.app]
		}
	}
}

// snapshot is the cluster as the matcher sees it: agents with their
// offers, less the ports orphans may hold, and every live instance.
func (c *Core) snapshot() *offer.Snapshot {
	snap := &offer.Snapshot{}
	byAgent := map[string][]mesos.Offer{}
	for _, o := range c.offers {
		byAgent[o.AgentID.Value] = append(byAgent[o.AgentID.Value], o)
	}
	for _, id := range slices.Sorted(maps.Keys(c.agents)) {
		info := c.agents[id]
		a := offer.Agent{Agent: constraint.Agent{ID: id, Hostname: info.hostname, Attributes: attributes(info.attributes)}}
		offers := byAgent[id]
		slices.SortFunc(offers, func(x, y mesos.Offer) int { return cmp.Compare(x.ID.Value, y.ID.Value) })
		for _, o := range offers {
			a.Offers = append(a.Offers, offer.Offer{ID: o.ID.Value, Resources: offeredResources(o.Resources)})
		}
		snap.Agents = append(snap.Agents, a)
	}
	for _, a := range c.sortedApps() {
		var labels []string
		if a.tmpl != nil {
			labels = a.tmpl.Req.Labels
		}
		for _, inst := range a.sortedInstances() {
			if inst.phase.live() && inst.rec.AgentID != "" {
				snap.Active = append(snap.Active, offer.Instance{App: a.key(), AgentID: inst.rec.AgentID, Labels: labels})
			}
		}
	}
	c.holdPorts(snap)
	return snap
}

func attributes(attrs []mesos.Attribute) map[string]constraint.Value {
	out := map[string]constraint.Value{}
	for _, a := range attrs {
		switch a.Type {
		case mesos.SCALAR:
			out[a.Name] = constraint.Scalar(a.GetScalar().GetValue())
		case mesos.SET:
			out[a.Name] = constraint.Set(a.GetSet().GetItem()...)
		case mesos.RANGES:
			var rs []constraint.Range
			for _, r := range a.GetRanges().GetRange() {
				rs = append(rs, constraint.Range{Begin: r.Begin, End: r.End})
			}
			out[a.Name] = constraint.Ranges(rs...)
		default:
			out[a.Name] = constraint.Text(a.GetText().GetValue())
		}
	}
	return out
}

func offeredResources(rs []mesos.Resource) offer.Resources {
	var out offer.Resources
	for _, r := range rs {
		switch r.Name {
		case "cpus":
			out.CPUs += r.GetScalar().GetValue()
		case "mem":
			out.Mem += r.GetScalar().GetValue()
		case "disk":
			out.Disk += r.GetScalar().GetValue()
		case "ports":
			for _, pr := range r.GetRanges().GetRange() {
				out.Ports = append(out.Ports, offer.PortRange{Begin: uint32(pr.Begin), End: uint32(pr.End)})
			}
		}
	}
	return out
}

// accept launches the placements of one agent, after the agent's sweeps
// (whose resources came out of its offers), in one ACCEPT.
func (c *Core) accept(l offer.Launch, byID map[string]*instance, sweeps []mesos.Offer_Operation) {
	ops := slices.Clone(sweeps)
	for _, pl := range l.Placements {
		inst := byID[pl.TaskGroupID]
		op, err := c.launchOp(inst, l.AgentID, pl)
		if err != nil {
			c.launchBlocked(inst, err)
			continue
		}
		ops = append(ops, op)
	}
	offerIDs := make([]mesos.OfferID, len(l.OfferIDs))
	for i, id := range l.OfferIDs {
		offerIDs[i] = mesos.OfferID{Value: id}
	}
	if len(sweeps) > 0 {
		offerIDs = c.agentOffers(l.AgentID) // the sweep took from whichever
	}
	for _, id := range offerIDs {
		delete(c.offers, id.Value)
	}
	if len(ops) == 0 {
		c.call(calls.Decline(offerIDs...).With(calls.RefuseSeconds(c.refuse())))
		return
	}
	c.call(calls.Accept(calls.OfferOperations(ops).WithOffers(offerIDs...)).With(calls.RefuseSeconds(c.refuse())))
}

// launchOp builds the LAUNCH_GROUP of one instance and moves it to
// Launched.
func (c *Core) launchOp(inst *instance, agentID string, pl offer.Placement) (mesos.Offer_Operation, error) {
	a := inst.app
	launchNo := inst.rec.Launches + 1
	tgID := TaskGroupID(a.rec.Namespace, a.rec.Name, inst.rec.Index, launchNo)
	info := c.agents[agentID]
	specs, err := a.tmpl.Specs(launch.Instance{
		Index: inst.rec.Index, TaskGroupID: tgID, HostIP: info.ip, Ports: pl.Ports,
		WorkBaseDir: c.cfg.WorkBaseDir, RunBaseDir: c.cfg.RunBaseDir, SchedulerURL: c.cfg.SchedulerURL,
	}, c.refs)
	if err != nil {
		return mesos.Offer_Operation{}, err
	}
	exec := c.cfg.ProcessExecutor
	if a.tmpl.Kind == manifest.KindApplication {
		exec = c.cfg.ContainerExecutor
	}
	executor := c.executorInfo(tgID, fmt.Sprintf("bcs %s/%s instance %d", a.rec.Namespace, a.rec.Name, inst.rec.Index), exec)
	grace := &mesos.KillPolicy{GracePeriod: &mesos.DurationInfo{Nanoseconds: a.tmpl.KillGrace.Nanoseconds()}}
	tasks := make([]mesos.TaskInfo, len(specs))
	records := make([]registry.TaskRecord, len(specs))
	for i, spec := range specs {
		data, err := spec.Encode()
		if err != nil {
			return mesos.Offer_Operation{}, err
		}
		cpus, mem := a.tmpl.TaskResources(i)
		res := []mesos.Resource{scalarResource("cpus", cpus), scalarResource("mem", mem)}
		if ports := a.tmpl.TaskHostPorts(i, pl.Ports); len(ports) > 0 {
			res = append(res, portsResource(ports))
		}
		taskID := TaskID(tgID, i)
		tasks[i] = mesos.TaskInfo{
			Name: spec.Name, TaskID: mesos.TaskID{Value: taskID}, AgentID: mesos.AgentID{Value: agentID},
			Resources: res, Data: data, KillPolicy: grace,
		}
		records[i] = registry.TaskRecord{ID: taskID, Name: spec.Name, State: mesos.TASK_STAGING.String()}
	}
	ports := map[string]uint32{}
	for _, p := range pl.Ports {
		ports[p.Name] = p.Port
	}
	c.setPhase(inst, PhaseLaunched)
	inst.rec.ID, inst.rec.Launches, inst.rec.Version = tgID, launchNo, a.rec.Version
	inst.rec.AgentID, inst.rec.Host, inst.rec.HostIP, inst.rec.Ports = agentID, info.hostname, info.ip, ports
	inst.rec.State, inst.rec.Tasks, inst.rec.Healthy = mesos.TASK_STAGING.String(), records, nil
	inst.rec.RemoteHealthy, inst.rec.RemoteMessage = nil, ""
	inst.rec.NotBefore, inst.rec.RunningSince, inst.rec.Message = time.Time{}, time.Time{}, ""
	inst.avoid = ""
	for _, t := range records {
		c.tasks[t.ID] = inst
	}
	c.persist(inst)
	return calls.OpLaunchGroup(executor, tasks...), nil
}

// executorInfo describes one of our executors: the agent fetches the
// binary and runs it with its arguments.
func (c *Core) executorInfo(id, name string, exec ExecutorBinary) mesos.ExecutorInfo {
	return mesos.ExecutorInfo{
		Type:        mesos.ExecutorInfo_CUSTOM,
		ExecutorID:  mesos.ExecutorID{Value: id},
		FrameworkID: &mesos.FrameworkID{Value: c.frameworkID},
		Name:        strPtr(name),
		Command: &mesos.CommandInfo{
			Value:     strPtr("./" + path.Base(exec.URI)),
			Arguments: append([]string{path.Base(exec.URI)}, exec.Args...),
			Shell:     boolPtr(false),
			URIs:      []mesos.CommandInfo_URI{{Value: exec.URI, Executable: boolPtr(true), Extract: boolPtr(false)}},
		},
		Resources: []mesos.Resource{
			scalarResource("cpus", c.cfg.Executor.CPUs), scalarResource("mem", c.cfg.Executor.Mem),
			scalarResource("disk", c.cfg.Executor.Disk),
		},
	}
}

func strPtr(s string) *string { return &s }

func boolPtr(b bool) *bool { return &b }

func scalarResource(name string, v float64) mesos.Resource {
	return mesos.Resource{Name: name, Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: v}}
}

func portsResource(ports []uint32) mesos.Resource {
	ranges := make([]mesos.Value_Range, len(ports))
	for i, p := range ports {
		ranges[i] = mesos.Value_Range{Begin: uint64(p), End: uint64(p)}
	}
	return mesos.Resource{Name: "ports", Type: mesos.RANGES.Enum(), Ranges: &mesos.Value_Ranges{Range: ranges}}
}

func (c *Core) refuse() time.Duration {
	return time.Duration(c.cfg.RefuseSeconds * float64(time.Second))
}

// adjustOffers keeps no offer it has no use for and tells the master
// whether we want offers at all: SUPPRESS with nothing to launch, REVIVE
// when something waits.
func (c *Core) adjustOffers() {
	if !c.connected {
		return
	}
	c.schedule()
	if len(c.offers) > 0 {
		ids := slices.Sorted(maps.Keys(c.offers))
		offerIDs := make([]mesos.OfferID, len(ids))
		for i, id := range ids {
			offerIDs[i] = mesos.OfferID{Value: id}
		}
		clear(c.offers)
		c.call(calls.Decline(offerIDs...).With(calls.RefuseSeconds(c.refuse())))
	}
	sweepWaiting, sweepDue := c.sweepsWanted()
	switch waiting := c.waiting() || sweepWaiting; {
	case waiting && c.suppressed && (c.launchable() || sweepDue):
		c.call(calls.Revive())
		c.suppressed = false
	case !waiting && !c.suppressed:
		c.call(calls.Suppress())
		c.suppressed = true
	}
}

// refreshStatuses writes the applications' summary state when it changed.
func (c *Core) refreshStatuses() {
	for _, a := range c.sortedApps() {
		st := c.appStatus(a)
		if st != a.status {
			a.status = st
			c.write(Write{AppStatus: &st})
		}
	}
}

func (c *Core) appStatus(a *app) AppStatus {
	st := AppStatus{Namespace: a.rec.Namespace, Name: a.rec.Name}
	running := 0
	var failed []string
	for _, inst := range a.sortedInstances() {
		switch {
		case inst.phase == PhaseRunning:
			running++
		case inst.phase == PhaseFailed, inst.rec.WaitingFor != "":
			failed = append(failed, "instance "+strconv.Itoa(inst.rec.Index)+": "+inst.rec.Message)
		}
	}
	switch {
	case a.rec.State == registry.AppDeleting:
		st.State = registry.AppDeleting
	case a.tmplErr != nil:
		st.State, st.Message = registry.AppAbnormal, a.tmplErr.Error()
	case a.unplaced != "":
		st.State, st.Message = registry.AppAbnormal, a.unplaced
	case len(failed) > 0:
		st.State, st.Message = registry.AppAbnormal, failed[0]
	case running == a.rec.Instances:
		st.State = registry.AppRunning
	default:
		st.State, st.Message = registry.AppDeploying, fmt.Sprintf("%d/%d instances running", running, a.rec.Instances)
	}
	return st
}

// operate restarts, reloads or reschedules an instance.
func (c *Core) operate(op Operate) {
	p, err := ParseID(op.TaskGroupID)
	if err != nil {
		return
	}
	a := c.apps[p.Namespace+"/"+p.App]
	if a == nil {
		return
	}
	inst := a.instances[p.Index]
	if inst == nil || inst.rec.ID != op.TaskGroupID || !inst.phase.live() {
		return
	}
	switch op.Op {
	case OpReschedule:
		c.kill(inst, KillReschedule)
	case OpRestart, OpReload:
		for _, t := range inst.rec.Tasks {
			msg := &proto.Message{ID: fmt.Sprintf("%s-%d", op.Op, c.now.UnixNano()), Type: proto.MessageType(op.Op), TaskID: t.ID}
			data, err := msg.Encode()
			if err != nil {
				continue
			}
			c.call(calls.Message(inst.rec.AgentID, inst.rec.ID, data))
		}
	}
}
