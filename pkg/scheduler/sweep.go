package scheduler

import (
	"fmt"
	"maps"
	"slices"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/offer"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// An executor that dies (kill -9, OOM, a crash) cannot clean up: the
// Docker containers it created through dockerd, with their CNI network
// containers, IPs, veths and host ports, and processes that left its
// session outlive it, on real Mesos as on the dev cluster. So when the
// agent reports that an executor ended under its tasks, the scheduler owes
// that agent a sweep: on the next offer from it, it launches the same
// executor binary with a sweep task (proto.SweepSpec), which reaps what
// every dead executor of the framework left there and finishes. Until the
// sweep finished, the host ports the dead instance held are kept out of
// that agent's offers, so no new instance is given a port an orphan may
// still hold.

// The kinds of executor a sweep runs.
const (
	sweepContainer = "container"
	sweepProcess   = "process"
)

// Sweep task resources (besides the executor's): Mesos refuses a task
// without resources.
var sweepTaskResources = offer.Resources{CPUs: 0.01, Mem: 16}

// sweepBackoff is the wait before sweeping again after the n-th failure.
func sweepBackoff(n int) time.Duration {
	return min(5*time.Second<<min(n-1, 10), 5*time.Minute)
}

// executorDied reports whether st says its executor ended under the task:
// the agent reports what the executor could not, because it was killed,
// crashed, ran out of a limit or did not come back after an agent
// restart. A sweep too many is cheap; an orphan is not.
func executorDied(st mesos.TaskStatus) bool {
	if !terminal(st.GetState()) || st.GetSource() != mesos.SOURCE_AGENT {
		return false
	}
	switch st.GetReason() {
	case mesos.REASON_EXECUTOR_TERMINATED, mesos.REASON_EXECUTOR_REREGISTRATION_TIMEOUT, mesos.REASON_EXECUTOR_UNREGISTERED,
		mesos.REASON_CONTAINER_LIMITATION, mesos.REASON_CONTAINER_LIMITATION_DISK, mesos.REASON_CONTAINER_LIMITATION_MEMORY,
		mesos.REASON_CONTAINER_PREEMPTED:
		return true
	}
	return false
}

// oweSweep records that the executor of st's task died on its agent; inst
// is the task's instance when the task is of its current launch.
func (c *Core) oweSweep(st mesos.TaskStatus, inst *instance) {
	agentID := st.GetAgentID().GetValue()
	s := c.sweeps[agentID]
	if s == nil {
		s = &registry.Sweep{AgentID: agentID, Since: c.now}
		c.sweeps[agentID] = s
	}
	before := snapshotSweep(s)
	for _, kind := range c.executorKinds(st.TaskID.Value, inst) {
		if !slices.Contains(s.Owed, kind) {
			s.Owed = append(s.Owed, kind)
		}
	}
	slices.Sort(s.Owed)
	if inst != nil {
		for _, port := range inst.rec.Ports {
			if !slices.Contains(s.HeldPorts, port.Port) {
				s.HeldPorts = append(s.HeldPorts, port.Port)
			}
		}
		slices.Sort(s.HeldPorts)
	}
	executor := st.GetExecutorID().GetValue()
	if id, err := registry.ParseID(st.TaskID.Value); executor == "" && err == nil {
		executor = id.TaskGroupID()
	}
	s.Reason = fmt.Sprintf("executor %s ended under task %s (%s)", executor, st.TaskID.Value, statusMessage(st))
	if snapshotSweep(s) != before {
		c.writeSweep(s)
		c.logf("executor died; sweep owed", "agent", agentID, "executor", executor, "held_ports", s.HeldPorts)
	}
}

// snapshotSweep is what of s matters for deciding to write it again.
func snapshotSweep(s *registry.Sweep) string {
	return fmt.Sprint(s.Owed, s.HeldPorts, s.Running)
}

// executorKinds names the executors that ran taskID: its application's,
// or both when the application is unknown.
func (c *Core) executorKinds(taskID string, inst *instance) []string {
	a := (*app)(nil)
	if inst != nil {
		a = inst.app
	} else if id, err := registry.ParseID(taskID); err == nil {
		a = c.apps[id.Namespace+"/"+id.App]
	}
	if a == nil || a.tmpl == nil {
		return []string{sweepContainer, sweepProcess}
	}
	if a.tmpl.Kind == manifest.KindApplication {
		return []string{sweepContainer}
	}
	return []string{sweepProcess}
}

func (c *Core) writeSweep(s *registry.Sweep) {
	rec := *s
	rec.Owed = slices.Clone(s.Owed)
	rec.HeldPorts = slices.Clone(s.HeldPorts)
	rec.Running = maps.Clone(s.Running)
	c.write(Write{Sweep: &rec})
}

// restoreSweeps takes the stored sweeps back, with their tasks in flight.
func (c *Core) restoreSweeps(sweeps []*registry.Sweep) {
	for _, s := range sweeps {
		cp := *s
		c.sweeps[s.AgentID] = &cp
		for _, taskID := range s.Running {
			c.sweepTasks[taskID] = s.AgentID
		}
	}
}

// sweepDue reports whether agentID's sweep can launch now.
func (c *Core) sweepDue(s *registry.Sweep) bool {
	if s.NotBefore.After(c.now) {
		return false
	}
	for _, kind := range s.Owed {
		if s.Running[kind] == "" {
			return true
		}
	}
	return false
}

// sweepsWanted reports whether a sweep waits for an offer, now or after
// its backoff, and whether one could launch now.
func (c *Core) sweepsWanted() (waiting, due bool) {
	for _, s := range c.sweeps {
		for _, kind := range s.Owed {
			if s.Running[kind] == "" {
				waiting = true
			}
		}
		due = due || c.sweepDue(s)
	}
	return waiting, due
}

// holdPorts keeps the ports orphans may hold out of the snapshot.
func (c *Core) holdPorts(snap *offer.Snapshot) {
	for i := range snap.Agents {
		s := c.sweeps[snap.Agents[i].ID]
		if s == nil || len(s.HeldPorts) == 0 {
			continue
		}
		held := make([]offer.PortRange, len(s.HeldPorts))
		for j, p := range s.HeldPorts {
			held[j] = offer.PortRange{Begin: p, End: p}
		}
		for j := range snap.Agents[i].Offers {
			o := &snap.Agents[i].Offers[j]
			o.Resources.Ports = offer.WithoutPorts(o.Resources.Ports, held)
		}
	}
}

// reserveSweeps takes what the due sweeps need from their agents' offers
// in snap and returns their LAUNCH_GROUPs by agent. A sweep whose agent
// offers too little waits for a larger offer.
func (c *Core) reserveSweeps(snap *offer.Snapshot) map[string][]mesos.Offer_Operation {
	ops := map[string][]mesos.Offer_Operation{}
	for i := range snap.Agents {
		a := &snap.Agents[i]
		s := c.sweeps[a.ID]
		if s == nil || len(a.Offers) == 0 || !c.sweepDue(s) {
			continue
		}
		for _, kind := range slices.Clone(s.Owed) {
			if s.Running[kind] != "" {
				continue // owed again while it runs: after it ends
			}
			need := c.cfg.Executor
			need.CPUs += sweepTaskResources.CPUs
			need.Mem += sweepTaskResources.Mem
			need.Disk += sweepTaskResources.Disk
			if !take(a.Offers, need) {
				break
			}
			op, taskID := c.sweepOp(a.ID, kind, s)
			ops[a.ID] = append(ops[a.ID], op)
			s.Owed = slices.DeleteFunc(s.Owed, func(k string) bool { return k == kind })
			if s.Running == nil {
				s.Running = map[string]string{}
			}
			s.Running[kind] = taskID
			c.sweepTasks[taskID] = a.ID
		}
		if len(ops[a.ID]) > 0 {
			c.writeSweep(s)
		}
	}
	return ops
}

// take subtracts need from the first offer that holds it whole.
func take(offers []offer.Offer, need offer.Resources) bool {
	for i := range offers {
		r := &offers[i].Resources
		if r.CPUs >= need.CPUs && r.Mem >= need.Mem && r.Disk >= need.Disk {
			r.CPUs -= need.CPUs
			r.Mem -= need.Mem
			r.Disk -= need.Disk
			return true
		}
	}
	return false
}

// sweepOp builds the LAUNCH_GROUP of one sweep task.
func (c *Core) sweepOp(agentID, kind string, s *registry.Sweep) (mesos.Offer_Operation, string) {
	exec := c.cfg.ProcessExecutor
	if kind == sweepContainer {
		exec = c.cfg.ContainerExecutor
	}
	// Executor IDs must not repeat on an agent; the clock and a counter
	// tell sweeps apart, and they never parse as an instance's ID.
	c.sweepSeq++
	id := fmt.Sprintf("bcs-sweep.%s.%d.%d", kind, c.now.UnixNano(), c.sweepSeq)
	taskID := id + ".0"
	spec := &proto.TaskSpec{Name: "sweep", Sweep: &proto.SweepSpec{Reason: s.Reason}}
	data, _ := spec.Encode() // a struct of strings always encodes
	task := mesos.TaskInfo{
		Name: "sweep", TaskID: mesos.TaskID{Value: taskID}, AgentID: mesos.AgentID{Value: agentID}, Data: data,
		Resources: []mesos.Resource{scalarResource("cpus", sweepTaskResources.CPUs), scalarResource("mem", sweepTaskResources.Mem)},
	}
	info := c.executorInfo(id, fmt.Sprintf("bcs sweep (%s executor)", kind), exec)
	return calls.OpLaunchGroup(info, task), taskID
}

// sweepStatus applies a status of a sweep task.
func (c *Core) sweepStatus(agentID string, st mesos.TaskStatus) {
	taskID := st.TaskID.Value
	state := st.GetState()
	if !terminal(state) && state != mesos.TASK_UNREACHABLE {
		return
	}
	delete(c.sweepTasks, taskID)
	delete(c.reconciling, taskID)
	s := c.sweeps[agentID]
	if s == nil {
		return
	}
	kind := ""
	for k, id := range s.Running {
		if id == taskID {
			kind = k
		}
	}
	if kind == "" {
		return
	}
	delete(s.Running, kind)
	if state == mesos.TASK_FINISHED {
		c.logf("sweep finished", "agent", agentID, "executor", kind, "result", st.GetMessage())
	} else {
		if !slices.Contains(s.Owed, kind) {
			s.Owed = append(s.Owed, kind)
			slices.Sort(s.Owed)
		}
		s.Attempts++
		s.NotBefore = c.now.Add(sweepBackoff(s.Attempts))
		s.LastError = fmt.Sprintf("%s %s", state, statusMessage(st))
		c.logf("sweep failed; retrying", "agent", agentID, "executor", kind, "err", s.LastError, "retry_in", sweepBackoff(s.Attempts))
	}
	if len(s.Owed) == 0 && len(s.Running) == 0 {
		delete(c.sweeps, agentID)
		c.write(Write{DeleteSweep: agentID})
		return
	}
	c.writeSweep(s)
}

// reconcileSweeps adds the sweep tasks in flight to an explicit
// reconciliation.
func (c *Core) reconcileSweeps() {
	for taskID, agentID := range c.sweepTasks {
		c.reconciling[taskID] = agentID
	}
}

// acceptSweeps launches the sweeps of agents the matcher placed nothing
// on, with every offer of the agent.
func (c *Core) acceptSweeps(ops map[string][]mesos.Offer_Operation) {
	for _, agentID := range slices.Sorted(maps.Keys(ops)) {
		offerIDs := c.agentOffers(agentID)
		for _, id := range offerIDs {
			delete(c.offers, id.Value)
		}
		c.launched(agentID, ops[agentID])
		c.call(calls.Accept(calls.OfferOperations(ops[agentID]).WithOffers(offerIDs...)).With(calls.RefuseSeconds(c.refuse())))
	}
}

// agentOffers returns the IDs of the outstanding offers of an agent.
func (c *Core) agentOffers(agentID string) []mesos.OfferID {
	var ids []mesos.OfferID
	for _, id := range slices.Sorted(maps.Keys(c.offers)) {
		if c.offers[id].AgentID.Value == agentID {
			ids = append(ids, mesos.OfferID{Value: id})
		}
	}
	return ids
}
