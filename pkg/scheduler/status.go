package scheduler

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/bcs-mesos/bcs-mesos/pkg/launch"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// statusUpdate applies one task status. The acknowledgement goes out
// after the instance's new state is in the Writes, so the driver stores it
// first.
func (c *Core) statusUpdate(st mesos.TaskStatus) {
	taskID := st.TaskID.Value
	agentID := st.GetAgentID().GetValue()
	defer func() {
		if len(st.UUID) > 0 && agentID != "" {
			c.call(calls.Acknowledge(agentID, taskID, st.UUID))
		}
	}()
	c.answered(taskID)
	if agent, ok := c.sweepTasks[taskID]; ok {
		c.sweepStatus(agent, st)
		return
	}
	if info := c.agents[agentID]; info != nil && agentLeft(st.GetReason()) {
		info.known, info.gone = false, c.now // it offers nothing until it is back
		c.agentsChanged()
	}
	state := st.GetState()
	inst := c.tasks[taskID]
	if executorDied(st) && agentID != "" {
		c.oweSweep(st, inst)
	}
	if inst == nil {
		// A task of no current launch: an old launch, or one we lost track
		// of. If it runs, it must not.
		if !terminal(state) && state != mesos.TASK_UNREACHABLE && agentID != "" {
			c.call(calls.Kill(taskID, agentID))
		}
		return
	}
	delete(c.reconciling, taskID)
	// A status the master sends again (unacknowledged in time, or asked
	// by reconciliation) changes nothing: it is acknowledged, not stored
	// again — storing it would slow the acknowledgements that a busy
	// scheduler is late with, and the master would send more again.
	was, notices := c.record(inst), len(c.notices[inst])
	task := inst.task(taskID)
	unlaunched := neverLaunched(task.State, st)
	if !restated(task, st) {
		task.Message = statusMessage(st)
	}
	task.State = state.String()
	task.Healthy = st.Healthy
	if rev := proto.RevisionOf(st.Data); rev != 0 {
		task.Revision = rev
	}
	wasIP := podIP(&inst.rec)
	keepExecutorReport(task, inst.rec.Network == launch.NetworkProcess, st)
	inst.rec.Healthy = groupHealth(inst)
	inst.rec.State = groupState(inst).String()

	if terminal(state) || state == mesos.TASK_UNREACHABLE {
		delete(c.tasks, taskID)
		delete(c.killSent, taskID)
		c.taskEnded(inst, st, unlaunched)
	} else if inst.phase() == PhaseLaunched && allRunning(inst) {
		c.nowRunning(inst)
		c.checkIP(inst, st)
	} else if inst.phase() == PhaseRunning && podIP(&inst.rec) != wasIP {
		// Re-created in place with a new address: probe that one.
		c.startRemoteChecks(inst)
	}
	c.updateApplied(inst)
	if c.attached(inst) && (len(c.notices[inst]) != notices || !reflect.DeepEqual(c.record(inst), was)) {
		c.persist(inst)
	}
}

// nowRunning moves a launched instance whose tasks all run (or finished)
// to Running.
func (c *Core) nowRunning(inst *instance) {
	if wanted := c.launching[inst]; !wanted.IsZero() {
		c.out.Running = append(c.out.Running, c.now.Sub(wanted))
	}
	c.setPhase(inst, PhaseRunning)
	inst.rec.RunningSince = c.now
	inst.rec.Message = ""
	c.startRemoteChecks(inst)
}

// restated reports whether st is the master's answer to a reconciliation
// that only restates the task's recorded state. Its message ("Latest task
// state") says nothing about the task, and keeping the message of the
// status that brought the state spares storing every instance again after
// each failover and each implicit reconciliation.
func restated(task *registry.TaskRecord, st mesos.TaskStatus) bool {
	return st.GetReason() == mesos.REASON_RECONCILIATION && task.State == st.GetState().String()
}

// neverLaunched reports whether st, the master's answer to a
// reconciliation, says that a launch never reached Mesos: the master
// knows no such task and none of its statuses came since the launch (our
// record still shows the TASK_STAGING we stored with it). A leader killed
// between storing a launch and sending its ACCEPT leaves such launches
// to the next one.
func neverLaunched(recorded string, st mesos.TaskStatus) bool {
	unknown := st.GetState() == mesos.TASK_GONE || st.GetState() == mesos.TASK_LOST
	return unknown && st.GetReason() == mesos.REASON_RECONCILIATION && recorded == mesos.TASK_STAGING.String()
}

// taskEnded handles a task that reached a terminal (or unreachable)
// state; unlaunched when its launch never reached Mesos (neverLaunched).
func (c *Core) taskEnded(inst *instance, st mesos.TaskStatus, unlaunched bool) {
	if st.GetState() == mesos.TASK_FINISHED && inst.phase().live() && inst.phase() != PhaseKilling && c.liveTasks(inst) > 0 {
		// Seed 001: a container that exits 0 is done and the others keep
		// running; the group ends with its last task.
		if inst.phase() == PhaseLaunched && allRunning(inst) {
			c.nowRunning(inst)
		}
		return
	}
	if inst.phase() == PhaseRunning {
		c.stopRemoteChecks(inst)
	}
	if inst.phase() == PhaseKilling {
		if c.liveTasks(inst) > 0 {
			return
		}
		if inst.killReason() == KillHealth {
			// Killed for failing its remote checks: a failure, and the
			// restart policy decides.
			inst.rec.KillReason = ""
			c.decide(inst, outcomeFailed, "killed by the scheduler: remote health check failed: "+inst.rec.RemoteMessage)
			return
		}
		c.killed(inst)
		return
	}
	if !inst.phase().live() {
		return // a straggler of a launch already given up
	}
	// One task failing (or going missing) ends the group: the executor
	// kills the rest, we make sure. Then the restart policy decides; a
	// group's last task finishing when every other finished too is
	// outcomeFinished. The others stay tracked until their own terminal
	// states come (Mesos reports every task of a failed group), so that
	// the record ends with them, kills are retried and reconciliation asks
	// about them; a later launch of the instance stops tracking them.
	for _, t := range inst.rec.Tasks {
		if t.ID != st.TaskID.Value && c.tasks[t.ID] == inst {
			c.sendKill(inst, t.ID)
		}
	}
	reason := fmt.Sprintf("task %s %s", st.TaskID.Value, st.GetState())
	if msg := statusMessage(st); msg != "" {
		reason += ": " + msg
	}
	if unlaunched {
		// Not the application's doing, and nothing ran: placed again at
		// once, whatever the restart policy; no restart, no notice.
		c.decide(inst, outcomeDropped, reason+": its launch never reached Mesos")
		return
	}
	if st.GetReason() == mesos.REASON_AGENT_DRAINING {
		// The operator drains the agent through the master: placed again
		// elsewhere at once, whatever the restart policy; no failure.
		c.decide(inst, outcomeEvicted, reason)
		return
	}
	c.noticeEnd(inst, st, reason)
	c.decide(inst, classify(st.GetState()), reason) // TASK_KILLED we did not ask for counts as a failure
}

func (inst *instance) task(id string) *registry.TaskRecord {
	for i := range inst.rec.Tasks {
		if inst.rec.Tasks[i].ID == id {
			return &inst.rec.Tasks[i]
		}
	}
	panic("scheduler: task " + id + " not in its instance")
}

func (c *Core) liveTasks(inst *instance) int {
	n := 0
	for _, t := range inst.rec.Tasks {
		if c.tasks[t.ID] == inst {
			n++
		}
	}
	return n
}

// allRunning reports whether every task of inst runs or finished, one at
// least running: a sidecar may be done before the main container is up.
func allRunning(inst *instance) bool {
	running := false
	for _, t := range inst.rec.Tasks {
		switch taskState(t.State) {
		case mesos.TASK_RUNNING:
			running = true
		case mesos.TASK_FINISHED:
		default:
			return false
		}
	}
	return running
}

// groupState is the state shown for the group: the first task's that
// ended other than finished (or is unreachable), else the least advanced
// live task's, else (every task finished) TASK_FINISHED. A finished
// sidecar does not end the group (seed 001).
func groupState(inst *instance) mesos.TaskState {
	order := map[mesos.TaskState]int{mesos.TASK_STAGING: 0, mesos.TASK_STARTING: 1, mesos.TASK_RUNNING: 2, mesos.TASK_KILLING: 3}
	state, rank, finished := mesos.TASK_RUNNING, 99, false
	for _, t := range inst.rec.Tasks {
		s := taskState(t.State)
		if s == mesos.TASK_FINISHED {
			finished = true
			continue
		}
		if terminal(s) || s == mesos.TASK_UNREACHABLE {
			return s
		}
		if r, ok := order[s]; ok && r < rank {
			state, rank = s, r
		}
	}
	if finished && rank == 99 {
		return mesos.TASK_FINISHED
	}
	return state
}

// groupHealth is unhealthy when a task reports unhealthy, healthy when
// every task with health checks (by its template, or by reporting) reports
// healthy, unknown otherwise: a pod whose sidecar has no checks is healthy
// by its checked containers.
func groupHealth(inst *instance) *bool {
	t := inst.app.template(inst.rec.Template)
	checked, known := 0, 0
	for i, task := range inst.rec.Tasks {
		if taskState(task.State) == mesos.TASK_FINISHED {
			continue // done: its checks no longer run
		}
		if task.Healthy != nil && !*task.Healthy {
			unhealthy := false
			return &unhealthy
		}
		if task.Healthy != nil || t != nil && i < t.Tasks() && t.TaskHasChecks(i) {
			checked++
			if task.Healthy != nil {
				known++
			}
		}
	}
	if checked == 0 || known < checked {
		return nil
	}
	healthy := true
	return &healthy
}

// statusMessage is what a status says: its reason and message. Reasons
// that only say a check's verdict changed (healthy shows it) are left
// out.
func statusMessage(st mesos.TaskStatus) string {
	parts := []string{}
	switch r := st.GetReason(); {
	case st.Reason == nil, r == mesos.REASON_TASK_HEALTH_CHECK_STATUS_UPDATED, r == mesos.REASON_TASK_CHECK_STATUS_UPDATED:
	default:
		parts = append(parts, r.String())
	}
	if m := st.GetMessage(); m != "" {
		parts = append(parts, m)
	}
	return strings.Join(parts, ": ")
}

// keepExecutorReport keeps on task what its executor reports of it in
// TaskStatus.data: proto.ProcessInfo of a process, proto.ContainerInfo
// of a container, whose address TaskStatus.container_status names too,
// as Mesos reports a container's (statusIP). A status without either
// (the master's, to a reconciliation, may keep container_status) or with
// data we cannot read keeps the last report.
func keepExecutorReport(task *registry.TaskRecord, process bool, st mesos.TaskStatus) {
	if !process {
		defer keepStatusIP(task, st)
	}
	data := st.Data
	if len(data) == 0 {
		return
	}
	if process {
		var info proto.ProcessInfo
		if json.Unmarshal(data, &info) != nil {
			return
		}
		task.Process = &registry.ProcessStatus{Pid: info.Pid, ProcName: info.ProcName, StartedAt: info.StartedAt,
			ExitCode: info.ExitCode, WorkPath: info.WorkPath, Ports: info.Ports}
		return
	}
	var info proto.ContainerInfo
	if json.Unmarshal(data, &info) != nil {
		return
	}
	c := &registry.ContainerStatus{ID: info.ID, Name: info.Name, Pid: info.Pid, Status: info.Status, IPAddress: info.IPAddress,
		NetworkMode: info.NetworkMode, Hostname: info.Hostname, StartedAt: info.StartAt, FinishedAt: info.FinishAt}
	if info.Status == "exited" || info.Status == "dead" {
		c.ExitCode = &info.ExitCode
	}
	task.Container = c
}

// keepStatusIP keeps the container address st's container_status names.
func keepStatusIP(task *registry.TaskRecord, st mesos.TaskStatus) {
	ip := statusIP(st)
	if ip == "" {
		return
	}
	var c registry.ContainerStatus
	if task.Container != nil {
		c = *task.Container // stored records are never changed in place
	}
	c.IPAddress = ip
	task.Container = &c
}

// statusIP is the first address in st.container_status.network_infos,
// where Mesos reports the addresses of a task's container.
func statusIP(st mesos.TaskStatus) string {
	for _, network := range st.GetContainerStatus().GetNetworkInfos() {
		for _, a := range network.IPAddresses {
			if ip := a.GetIPAddress(); ip != "" {
				return ip
			}
		}
	}
	return ""
}
