package devcluster

import (
	"os"
	"path/filepath"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// Recovery, when a cluster of real executors starts again on the work dir
// of its last run (registry.go): the master takes back its frameworks,
// disconnected until they subscribe again (their failover timeouts run
// from now), and its agents their IDs and endpoints; each agent takes
// back its containers from their checkpoints and waits for its executors
// as after RestartAgent (awaitExecutors). The master serves nothing until
// that is done, so no framework sees a task of the last run missing.

// recoverFrameworks takes back the frameworks of the registry. Caller
// holds m.mu.
func (m *master) recoverFrameworks(reg registry) {
	for _, info := range reg.Frameworks {
		fw := m.addFramework(info.GetID().GetValue())
		fw.applyInfo(info)
		m.log().Info("framework recovered: waiting for it to subscribe again", "framework", fw.id, "name", info.Name)
		m.frameworkDisconnected(fw)
	}
}

// recover takes back the agent's containers of the last run from their
// checkpoints: executors with their tasks, whose processes are watched
// from now on (executorEnded); terminal tasks whose last updates wait for
// acknowledgements. What cannot be recovered is destroyed: the containers
// of frameworks the master no longer knows, and command tasks, which the
// agent ran itself and cannot reconnect to (their tasks TASK_GONE, or
// TASK_LOST, with REASON_AGENT_RESTARTED). It returns the sessions to
// kill, outside the lock. Caller holds a.m.mu.
func (a *agent) recover(cks []containerCheckpoint) []int {
	var kill []int
	for _, ck := range cks {
		fw := a.m.frameworks[ck.FrameworkID]
		if ck.Ended {
			// The executor ended before the last run did: only its
			// tasks' last updates wait for acknowledgements.
			if fw != nil && ck.Executor != nil {
				a.recoveredExecutor(fw, ck)
			} else {
				a.removeCheckpoint(ck.ContainerID)
			}
			continue
		}
		leader := findSessionLeader(ck.Session, ck.StartTime, ck.Sandbox)
		if fw != nil && ck.Executor != nil && ck.Session == 0 && leader.pid == 0 {
			a.resumeLaunch(fw, ck)
			continue
		}
		if fw == nil || ck.Executor == nil {
			leader.release()
			kill = append(kill, leader.pid)
			a.removeCheckpoint(ck.ContainerID)
			if fw != nil {
				a.commandTaskLost(fw, ck)
			} else {
				a.m.log().Info("container of an unknown framework: killed", "agent", a.id, "framework", ck.FrameworkID, "container", ck.ContainerID)
			}
			continue
		}
		a.recoverExecutor(fw, ck, leader)
	}
	return kill
}

// recoverExecutor takes back a live executor's container and its tasks,
// and watches its process. Caller holds a.m.mu.
func (a *agent) recoverExecutor(fw *framework, ck containerCheckpoint, leader sessionLeader) {
	ex := a.recoveredExecutor(fw, ck)
	ex.launched, ex.sid, ex.startTime = true, leader.pid, leader.startTime
	ex.exited = make(chan struct{})
	a.executors[ex.key()] = ex
	a.share.take(ex.resources())
	for _, t := range ex.tasks {
		a.share.take(t.resources())
	}
	a.attachSandbox(fw.id, ex.id, ex.sandbox)
	a.m.log().Info("executor recovered", "executor", ex.id, "framework", fw.id, "agent", a.id, "pid", leader.pid,
		"running", leader.pidfd >= 0, "tasks", len(ex.tasks))
	a.m.procs.Add(1)
	go func() {
		defer a.m.procs.Done()
		msg := "Executor terminated"
		if leader.pidfd < 0 {
			msg = "Executor terminated while the agent was down"
		}
		leader.wait()
		// Not this process's child: its wait status is unknown.
		a.executorEnded(ex, -1, msg)
	}()
}

// resumeLaunch launches again an executor whose process the last run had
// not started (it was still fetching its URIs, say): its tasks, still
// TASK_STAGING, wait in its queued launches, so nothing is lost or
// launched twice. Caller holds a.m.mu.
func (a *agent) resumeLaunch(fw *framework, ck containerCheckpoint) {
	ex := a.recoveredExecutor(fw, ck)
	ex.exited = make(chan struct{})
	a.executors[ex.key()] = ex
	a.share.take(ex.resources())
	for _, t := range ex.tasks {
		a.share.take(t.resources())
	}
	if len(ex.queued) == 0 {
		// Its tasks were killed before delivery: nothing to run.
		a.executorTerminated(ex, -1, "Executor not started: its tasks were killed before delivery")
		return
	}
	a.m.log().Info("executor launch resumed: its process had not started", "executor", ex.id, "framework", fw.id, "agent", a.id, "tasks", len(ex.tasks))
	a.startExecutorProcess(ex)
}

// recoveredExecutor is the record of a checkpointed executor with its
// tasks, live ones on the agent and every one in its framework. Caller
// holds a.m.mu.
func (a *agent) recoveredExecutor(fw *framework, ck containerCheckpoint) *executorRun {
	ex := &executorRun{
		fw: fw, agent: a, info: *ck.Executor, id: ck.Executor.ExecutorID.Value, containerID: ck.ContainerID,
		tasks: map[string]*task{}, ended: map[string]*task{},
		sandbox: ck.Sandbox, queued: ck.Queued,
	}
	for _, tc := range ck.Tasks {
		t := a.recoverTask(fw, tc)
		if t == nil {
			continue
		}
		t.exec = ex
		if t.released {
			ex.ended[t.info.TaskID.Value] = t
		} else {
			ex.tasks[t.info.TaskID.Value] = t
		}
	}
	return ex
}

// recoverTask makes the record of a checkpointed task, in its framework
// and, while live, on the agent; nil for a task the framework has again.
// Caller holds a.m.mu.
func (a *agent) recoverTask(fw *framework, tc taskCheckpoint) *task {
	id := tc.Info.TaskID.Value
	if fw.tasks[id] != nil {
		return nil
	}
	t := &task{info: tc.Info, fw: fw, agent: a, statuses: tc.Statuses}
	if len(t.statuses) == 0 {
		t.statuses = []mesos.TaskStatus{t.status(a.m.cfg.Clock.Now(), mesos.TASK_STAGING, mesos.SOURCE_MASTER, 0, "")}
	}
	t.state = t.statuses[len(t.statuses)-1].GetState()
	if t.state == mesos.TASK_RUNNING {
		a.m.stats.TasksRunning++
	}
	for _, u := range tc.Unacknowledged {
		t.pending = append(t.pending, pendingUpdate{status: u.Status, fromExecutor: u.FromExecutor})
	}
	fw.tasks[id] = t
	if isTerminal(t.state) {
		t.released = true
	} else {
		a.tasks[t.key()] = t
	}
	return t
}

// commandTaskLost reports the task of a command task's container, which
// the caller kills: TASK_GONE (TASK_LOST to a framework that is not
// PARTITION_AWARE) with REASON_AGENT_RESTARTED. Caller holds a.m.mu.
func (a *agent) commandTaskLost(fw *framework, ck containerCheckpoint) {
	for _, tc := range ck.Tasks {
		t := a.recoverTask(fw, tc)
		if t == nil || t.released {
			continue
		}
		a.share.take(t.resources())
		state := mesos.TASK_GONE
		if !fw.partitionAware {
			state = mesos.TASK_LOST
		}
		a.statusUpdate(t, t.status(a.m.cfg.Clock.Now(), state, mesos.SOURCE_AGENT, mesos.REASON_AGENT_RESTARTED,
			"Command task killed on the agent's restart: the agent runs command tasks itself and cannot reconnect to them"), false)
	}
}

// awaitExecutors is the agent's recovery of its executors after
// RestartAgent or the cluster's restart on its work dir, as a Mesos
// agent's with --recover=reconnect: those of frameworks that checkpoint
// must subscribe again within ExecutorReregistrationTimeout, or they are
// killed and their tasks become TASK_GONE (TASK_LOST) with
// REASON_EXECUTOR_REREGISTRATION_TIMEOUT; the others are not recovered:
// killed at once, their tasks TASK_FAILED. Until each has subscribed or
// ended with everything in its session, the agent offers nothing, so no
// new task meets what an old one left. It returns the sessions to kill,
// outside the lock. Caller holds a.m.mu.
func (a *agent) awaitExecutors() []int {
	var kill []int
	for _, ex := range a.executors {
		if !ex.launched || ex.terminating || ex.simulated {
			continue
		}
		ex.subscribed = false
		a.awaiting[ex] = true
		if !ex.fw.info.GetCheckpoint() {
			a.m.log().Info("executor not checkpointed: not recovered", "executor", ex.id, "framework", ex.fw.id)
			kill = append(kill, ex.sid)
			continue
		}
		ex.reregistering = true
		ex.reregTimer = a.killUnlessSubscribed(ex, a.m.cfg.ExecutorReregistrationTimeout.D(), &ex.reregTimedOut, "executor did not subscribe again in time; killing it")
	}
	if len(a.awaiting) > 0 {
		a.share.setActive(false)
		a.m.log().Info("agent recovering: waiting for its executors", "agent", a.id, "executors", len(a.awaiting),
			"timeout", a.m.cfg.ExecutorReregistrationTimeout.D())
	}
	return kill
}

// executorBack takes an executor the recovering agent waited for off its
// list, once it subscribed again or ended; the agent offers again once
// the list is empty. Caller holds a.m.mu.
func (a *agent) executorBack(ex *executorRun) {
	if !a.awaiting[ex] {
		return
	}
	delete(a.awaiting, ex)
	if len(a.awaiting) == 0 {
		a.share.setActive(!a.deactivated)
		a.m.log().Info("agent recovered", "agent", a.id, "hostname", a.info.Hostname)
		a.m.triggerAllocation()
	}
}

// forgetUnknownAgents destroys the containers of agents of the last run
// that this run has not taken back (no longer in the config), and their
// checkpoints. It runs outside m.mu, before the master serves.
func (m *master) forgetUnknownAgents() {
	dir := filepath.Join(m.metaDir(), "agents")
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		m.mu.Lock()
		known := m.agents[e.Name()] != nil
		m.mu.Unlock()
		if known {
			continue
		}
		path := filepath.Join(dir, e.Name())
		cks, err := readCheckpoints(path)
		if err != nil {
			m.log().Warn("checkpoints of an agent of the last run unreadable", "agent", e.Name(), "err", err)
		}
		for _, ck := range cks {
			if ck.Ended {
				continue
			}
			leader := findSessionLeader(ck.Session, ck.StartTime, ck.Sandbox)
			leader.release()
			killSession(leader.pid)
		}
		m.log().Info("agent of the last run not in this one: its containers killed", "agent", e.Name(), "containers", len(cks))
		_ = os.RemoveAll(path)
	}
}
