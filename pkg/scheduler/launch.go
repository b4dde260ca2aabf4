package scheduler

import (
	"fmt"
	"path"
	"slices"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/bcs-mesos/bcs-mesos/pkg/launch"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/offer"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

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
	c.launched(l.AgentID, ops)
	c.call(calls.Accept(calls.OfferOperations(ops).WithOffers(offerIDs...)).With(calls.RefuseSeconds(c.refuse())))
}

// launchOp builds the LAUNCH_GROUP of one instance and moves it to
// Launched.
func (c *Core) launchOp(inst *instance, agentID string, pl offer.Placement) (mesos.Offer_Operation, error) {
	a := inst.app
	tmpl := inst.template()
	launchNo := inst.rec.Launches + 1
	tgID := registry.TaskGroupID(a.rec.Namespace, a.rec.Name, registry.Incarnation(a.rec.CreatedAt), inst.rec.Index, launchNo)
	info := c.agents[agentID]
	id, err := c.identity(a.rec.Namespace)
	if err != nil {
		return mesos.Offer_Operation{}, err
	}
	specs, err := tmpl.Specs(launch.Instance{
		Index: inst.rec.Index, TaskGroupID: tgID, HostIP: info.ip, Ports: pl.Ports,
		WorkBaseDir: c.baseDir(c.cfg.WorkBaseDir, info.hostname), RunBaseDir: c.baseDir(c.cfg.RunBaseDir, info.hostname),
		SchedulerURL: c.cfg.SchedulerURL, Identity: id, Egress: c.egress(a.rec.Namespace),
	}, c.refs)
	if err != nil {
		return mesos.Offer_Operation{}, err
	}
	c.reportUsage(a, specs)
	exec := c.cfg.ProcessExecutor
	if tmpl.Kind == manifest.KindApplication {
		exec = c.cfg.ContainerExecutor
	}
	executor := c.executorInfo(tgID, fmt.Sprintf("bcs %s/%s instance %d", a.rec.Namespace, a.rec.Name, inst.rec.Index), exec)
	grace := &mesos.KillPolicy{GracePeriod: &mesos.DurationInfo{Nanoseconds: tmpl.KillGrace.Nanoseconds()}}
	tasks := make([]mesos.TaskInfo, len(specs))
	records := make([]registry.TaskRecord, len(specs))
	for i, spec := range specs {
		data, err := spec.Encode()
		if err != nil {
			return mesos.Offer_Operation{}, err
		}
		cpus, mem := tmpl.TaskResources(i)
		res := []mesos.Resource{scalarResource("cpus", cpus), scalarResource("mem", mem)}
		if ports := tmpl.TaskHostPorts(i, pl.Ports); len(ports) > 0 {
			res = append(res, portsResource(ports))
		}
		taskID := registry.TaskID(tgID, i)
		tasks[i] = mesos.TaskInfo{
			Name: spec.Name, TaskID: mesos.TaskID{Value: taskID}, AgentID: mesos.AgentID{Value: agentID},
			Resources: res, Data: data, KillPolicy: grace,
		}
		records[i] = registry.TaskRecord{ID: taskID, Name: spec.Name, State: mesos.TASK_STAGING.String(), CPUs: cpus, MemMB: mem}
	}
	ports := make([]registry.HostPort, len(pl.Ports))
	for i, p := range pl.Ports {
		ports[i] = registry.HostPort{Name: p.Name, Port: p.Port}
	}
	c.untrack(inst) // what is left of its last launch: the record shows this one
	c.setPhase(inst, PhaseLaunched)
	if inst.rec.ID != "" {
		inst.rec.Previous = previousLaunch(&inst.rec)
	}
	inst.rec.ID, inst.rec.Launches, inst.rec.Version, inst.rec.Template = tgID, launchNo, tmpl.Version, tmpl.Hash
	inst.rec.Network, inst.rec.Update, inst.rec.RestartGeneration = tmpl.Network(), nil, tmpl.RestartGeneration
	inst.rec.AgentID, inst.rec.Host, inst.rec.HostIP, inst.rec.Ports = info.id, info.hostname, info.ip, registry.NewHostPorts(ports)
	inst.rec.State, inst.rec.Tasks, inst.rec.Healthy = mesos.TASK_STAGING.String(), records, nil
	inst.rec.RemoteHealthy, inst.rec.RemoteMessage, inst.rec.RemoteChecks = nil, "", nil
	inst.rec.NotBefore, inst.rec.RunningSince, inst.rec.Message, inst.rec.Pending = time.Time{}, time.Time{}, "", nil
	inst.rec.Prefer = ""
	for _, t := range records {
		c.tasks[t.ID] = inst
	}
	c.persist(inst)
	c.logf("launch", "app", a.key(), "instance", inst.rec.Index, "task_group", tgID, "agent", agentID, "host", info.hostname, "revision", tmpl.Version)
	return calls.OpLaunchGroup(executor, tasks...), nil
}

// previousLaunch is what an instance's record keeps of its launch rec
// once another replaces it: where its sandbox is.
func previousLaunch(rec *registry.TaskGroup) *registry.PreviousLaunch {
	return &registry.PreviousLaunch{ID: rec.ID, AgentID: rec.AgentID, Host: rec.Host, Tasks: slices.Clone(rec.Tasks)}
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

// baseDir is a process pod's base directory (${work_base_dir},
// ${run_base_dir}) on the agent named host.
func (c *Core) baseDir(base, host string) string {
	if !c.cfg.PerAgentBaseDirs {
		return base
	}
	return path.Join(base, host)
}

// egress is the egress policy a launch in namespace carries; nil without
// one configured.
func (c *Core) egress(namespace string) *proto.Egress {
	if c.cfg.Egress == nil {
		return nil
	}
	return c.cfg.Egress(namespace)
}
