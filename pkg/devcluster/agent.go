package devcluster

import (
	"fmt"
	"net"
	"net/http"
	"slices"
	"syscall"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	mesosallocator "github.com/mesos/mesos-go/api/v1/lib/allocator"
	"github.com/mesos/mesos-go/api/v1/lib/executor"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
)

// AddAgent registers a new agent and returns its ID. In process mode the
// agent gets its own executor API endpoint on 127.0.0.1.
func (c *Cluster) AddAgent(spec AgentSpec) (string, error) {
	if err := spec.validate(); err != nil {
		return "", err
	}
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return "", fmt.Errorf("cluster stopped: %w", errdefs.ErrUnavailable)
	}
	n := len(c.agentOrder) + 1
	if spec.ID == "" {
		spec.ID = fmt.Sprintf("%s-S%d", c.id, c.nextSeq())
	}
	if spec.Hostname == "" {
		spec.Hostname = fmt.Sprintf("agent-%d", n)
	}
	if c.agents[spec.ID] != nil {
		c.mu.Unlock()
		return "", fmt.Errorf("agent %q: %w", spec.ID, errdefs.ErrAlreadyExists)
	}
	c.mu.Unlock()

	a := &agent{
		id:           spec.ID,
		spec:         spec,
		total:        agentResources(spec.Resources),
		attributes:   agentAttributes(spec.Attributes),
		tasks:        map[string]*task{},
		executors:    map[string]*executorRun{},
		commandTasks: map[string]*commandTask{},
		offered:      map[string]*offer{},

		inverseOffers:   map[string]*inverseOffer{},
		inverseStatuses: map[string]mesosallocator.InverseOfferStatus{},
	}
	a.info = mesos.AgentInfo{
		Hostname:   spec.Hostname,
		Resources:  a.total.Clone(),
		Attributes: a.attributes,
		ID:         &mesos.AgentID{Value: a.id},
	}
	if c.cfg.ExecutorMode == ExecutorProcess {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", fmt.Errorf("agent %q listen: %v: %w", a.id, err, errdefs.ErrUnavailable)
		}
		a.endpoint = ln.Addr().String()
		_, port := splitHostPort(a.endpoint)
		p := int32(port)
		a.info.Port = &p
		a.files = newSandboxFiles()
		mux := http.NewServeMux()
		mux.HandleFunc("/api/v1/executor", func(w http.ResponseWriter, r *http.Request) { c.handleExecutor(a, w, r) })
		for path, h := range map[string]http.HandlerFunc{"/files/read": a.files.serveRead, "/files/browse": a.files.serveBrowse,
			"/files/download": a.files.serveDownload, "/files/debug": a.files.serveDebug} {
			mux.HandleFunc(path, c.security.authenticated(realmAgentReadonly, ignoringPrincipal(h)))
		}
		a.handler = mux
		c.serveAgent(a, ln)
	} else {
		p := int32(5051)
		a.info.Port = &p
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped || c.agents[a.id] != nil {
		if a.srv != nil {
			_ = a.srv.Close()
		}
		if c.stopped {
			return "", fmt.Errorf("cluster stopped: %w", errdefs.ErrUnavailable)
		}
		return "", fmt.Errorf("agent %q: %w", a.id, errdefs.ErrAlreadyExists)
	}
	a.registeredAt = c.cfg.Clock.Now()
	a.share = c.alloc.addAgent(a.id, a.total)
	c.agents[a.id] = a
	c.agentOrder = append(c.agentOrder, a)
	c.addMachineOf(a)
	c.triggerAllocation()
	return a.id, nil
}

// serveAgent starts the agent's executor and files APIs on ln.
func (c *Cluster) serveAgent(a *agent, ln net.Listener) {
	a.srv = &http.Server{Handler: a.handler, ReadHeaderTimeout: 10 * time.Second, ErrorLog: c.serverLog()}
	go func(srv *http.Server) { _ = srv.Serve(c.security.listen(ln)) }(a.srv)
}

// RestartAgent restarts an agent on the same work dir (process mode): its
// executor API goes away for downtime — every executor connection closed,
// new ones refused — then listens on the same address again with the
// agent's checkpointed state, as Mesos' agent recovery with
// --recover=reconnect does. Executors of checkpointing frameworks that
// subscribe again within ExecutorReregistrationTimeout of the agent's
// return keep their tasks (updates they send again are forwarded); those
// that do not are killed and their tasks fail with
// REASON_EXECUTOR_REREGISTRATION_TIMEOUT. Executors of frameworks without
// checkpointing are not recovered: they are killed at once. The master
// does not notice a restart this short. RestartAgent returns once the
// agent is back.
func (c *Cluster) RestartAgent(agentID string, downtime time.Duration) error {
	c.mu.Lock()
	a := c.agents[agentID]
	switch {
	case a == nil:
		c.mu.Unlock()
		return fmt.Errorf("agent %q: %w", agentID, errdefs.ErrNotFound)
	case a.srv == nil:
		c.mu.Unlock()
		return fmt.Errorf("agent %q runs no executor API in %s mode: %w", agentID, c.cfg.ExecutorMode, errdefs.ErrInvalidArgument)
	case a.down:
		c.mu.Unlock()
		return fmt.Errorf("agent %q is already restarting: %w", agentID, errdefs.ErrConflict)
	}
	a.down = true
	var lost []*executorRun
	for _, ex := range a.executors {
		if ex.stream != nil {
			ex.stream.close()
			ex.stream = nil
		}
		ex.subscribed = false
		if !ex.fw.info.GetCheckpoint() {
			lost = append(lost, ex)
		}
	}
	srv := a.srv
	c.mu.Unlock()
	c.log().Info("agent restarting", "agent", a.id, "hostname", a.info.Hostname, "downtime", downtime)
	_ = srv.Close()
	for _, ex := range lost {
		c.log().Info("executor not checkpointed: not recovered", "executor", ex.id, "framework", ex.fw.id)
		killSession(ex.sid)
	}
	c.cfg.Clock.Sleep(downtime)

	var ln net.Listener
	var err error
	for i := 0; i < 50; i++ {
		if ln, err = net.Listen("tcp", a.endpoint); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	a.down = false
	if err != nil {
		return fmt.Errorf("agent %q re-listen on %q: %v: %w", agentID, a.endpoint, err, errdefs.ErrUnavailable)
	}
	if c.stopped || a.removed {
		_ = ln.Close()
		return nil
	}
	c.serveAgent(a, ln)
	for _, ex := range a.executors {
		if !ex.launched || ex.terminating || ex.simulated {
			continue
		}
		ex.reregTimer = c.killUnlessSubscribed(ex, c.cfg.ExecutorReregistrationTimeout.D(), &ex.reregTimedOut, "executor did not subscribe again in time; killing it")
	}
	c.log().Info("agent back", "agent", a.id, "hostname", a.info.Hostname, "endpoint", a.endpoint)
	return nil
}

// RemoveAgent takes an agent away as if it had been partitioned and
// removed: its offers are rescinded, its tasks reported TASK_UNREACHABLE
// (PARTITION_AWARE frameworks) or TASK_LOST, frameworks get a FAILURE
// event for the agent, and its executor processes are killed.
func (c *Cluster) RemoveAgent(id string) error {
	c.mu.Lock()
	a := c.agents[id]
	switch {
	case c.stopped:
		c.mu.Unlock()
		return fmt.Errorf("cluster stopped: %w", errdefs.ErrUnavailable)
	case a == nil:
		c.mu.Unlock()
		return fmt.Errorf("agent %q: %w", id, errdefs.ErrNotFound)
	}
	destroyed := c.removeAgent(a, "Agent "+a.info.Hostname+" is removed", true)
	c.mu.Unlock()
	<-destroyed
	return nil
}

// removeAgent removes a registered agent the way the master's
// __removeSlave does: its offers and inverse offers are rescinded, its
// live tasks become TASK_UNREACHABLE with REASON_AGENT_REMOVED when it is
// unreachable, else TASK_GONE_BY_OPERATOR with
// REASON_AGENT_REMOVED_BY_OPERATOR (TASK_LOST for frameworks that are not
// PARTITION_AWARE), every connected framework gets a FAILURE event for it,
// and the agent shuts down: its executors' and command tasks' sessions are
// killed and its executor API closed. That happens outside c.mu; the
// returned channel is closed when it is done. Caller holds c.mu.
func (c *Cluster) removeAgent(a *agent, message string, unreachable bool) <-chan struct{} {
	a.removed = true
	c.alloc.removeAgent(a.share)
	delete(c.agents, a.id)
	for i, x := range c.agentOrder {
		if x == a {
			c.agentOrder = append(c.agentOrder[:i:i], c.agentOrder[i+1:]...)
			break
		}
	}
	for _, o := range a.offered {
		c.rescindOffer(o)
	}
	for _, io := range a.inverseOffers {
		c.removeInverseOffer(io, true)
	}
	now := c.cfg.Clock.Now()
	unreachableAt := &mesos.TimeInfo{Nanoseconds: now.UnixNano()}
	touched := map[*framework]bool{}
	for _, fw := range c.frameworks {
		for _, t := range fw.tasks {
			if t.agent != a {
				continue
			}
			t.stopTimers()
			t.pending = nil
			delete(fw.tasks, t.info.TaskID.Value)
			if isTerminal(t.state) {
				fw.addCompleted(t)
				continue
			}
			touched[fw] = true
			state, reason := mesos.TASK_GONE_BY_OPERATOR, mesos.REASON_AGENT_REMOVED_BY_OPERATOR
			switch {
			case !fw.partitionAware:
				state, reason = mesos.TASK_LOST, mesos.REASON_AGENT_REMOVED
			case unreachable:
				state, reason = mesos.TASK_UNREACHABLE, mesos.REASON_AGENT_REMOVED
			}
			st := c.newStatus(t, state, mesos.SOURCE_MASTER, reason, message)
			if state == mesos.TASK_UNREACHABLE {
				st.UnreachableTime = unreachableAt
			}
			t.released = true
			c.recordStatus(t, st)
			if state == mesos.TASK_UNREACHABLE {
				fw.unreachable[t.info.TaskID.Value] = t
			} else {
				fw.addCompleted(t)
			}
			c.sendUpdate(fw, st)
		}
	}
	for _, fw := range c.frameworks {
		if fw.stream != nil {
			fw.stream.send(&scheduler.Event{Type: scheduler.Event_FAILURE, Failure: &scheduler.Event_Failure{AgentID: &mesos.AgentID{Value: a.id}}})
		}
	}
	var sessions []int
	for _, ex := range a.executors {
		ex.terminating = true
		if ex.stream != nil {
			ex.stream.close()
		}
		ex.regTimer.stop()
		sessions = append(sessions, ex.sid)
	}
	for _, ct := range a.commandTasks {
		sessions = append(sessions, ct.sid)
	}
	a.executors = map[string]*executorRun{}
	a.tasks = map[string]*task{}
	c.log().Info("agent removed", "agent", a.id, "hostname", a.info.Hostname, "why", message, "frameworks_with_tasks", len(touched))

	destroyed := make(chan struct{})
	srv := a.srv
	c.procs.Add(1)
	go func() {
		defer c.procs.Done()
		defer close(destroyed)
		for _, sid := range sessions {
			killSession(sid)
		}
		if srv != nil {
			_ = srv.Close()
		}
	}()
	return destroyed
}

// launch hands tasks to an agent. Caller holds c.mu and has validated.
func (c *Cluster) launch(fw *framework, a *agent, exInfo *mesos.ExecutorInfo, infos []mesos.TaskInfo, group bool) {
	var ex *executorRun
	newExecutor := false
	if exInfo != nil {
		key := executorKey(fw.id, exInfo.ExecutorID.Value)
		ex = a.executors[key]
		if ex == nil {
			newExecutor = true
			ex = &executorRun{
				fw:          fw,
				agent:       a,
				info:        *exInfo,
				id:          exInfo.ExecutorID.Value,
				containerID: newUUIDString(),
				resources:   sumResources(exInfo.Resources),
				tasks:       map[string]*task{},
				simulated:   c.cfg.ExecutorMode == ExecutorSimulated,
				exited:      make(chan struct{}),
			}
			a.executors[key] = ex
		}
	}
	c.stats.TasksLaunched += int64(len(infos))
	tasks := make([]*task, 0, len(infos))
	for _, ti := range infos {
		t := &task{
			info:      ti,
			fw:        fw,
			agent:     a,
			exec:      ex,
			resources: sumResources(ti.Resources),
		}
		st := c.newStatus(t, mesos.TASK_STAGING, mesos.SOURCE_MASTER, 0, "")
		t.state, t.latest = mesos.TASK_STAGING, st
		t.statuses = append(t.statuses, st)
		fw.tasks[ti.TaskID.Value] = t
		a.tasks[t.key()] = t
		if ex != nil {
			ex.tasks[ti.TaskID.Value] = t
		}
		tasks = append(tasks, t)
	}

	if c.cfg.ExecutorMode == ExecutorSimulated {
		c.simulateLaunch(tasks)
		return
	}
	if ex == nil {
		for _, t := range tasks {
			c.startCommandTask(t)
		}
		return
	}
	var ev *executor.Event
	if group {
		tg := mesos.TaskGroupInfo{Tasks: append([]mesos.TaskInfo(nil), infos...)}
		ev = &executor.Event{Type: executor.Event_LAUNCH_GROUP, LaunchGroup: &executor.Event_LaunchGroup{TaskGroup: tg}}
	} else {
		ev = &executor.Event{Type: executor.Event_LAUNCH, Launch: &executor.Event_Launch{Task: infos[0]}}
	}
	if ex.subscribed && ex.stream != nil {
		c.deliverLaunch(ex, ev)
	} else {
		ex.queued = append(ex.queued, ev)
	}
	if newExecutor {
		c.startExecutorProcess(ex)
	}
}

// simulateLaunch drives simulated tasks: TASK_STARTING now, TASK_RUNNING
// after SimulatedStartDelay. Caller holds c.mu.
func (c *Cluster) simulateLaunch(tasks []*task) {
	for _, t := range tasks {
		c.sendExecutorStatus(t, mesos.TASK_STARTING, "", nil)
	}
	timer := c.afterFunc(c.cfg.SimulatedStartDelay.D(), func() {
		for _, t := range tasks {
			if t.state == mesos.TASK_STARTING && !t.killing && !t.agent.removed && c.frameworks[t.fw.id] == t.fw {
				c.sendExecutorStatus(t, mesos.TASK_RUNNING, "", nil)
			}
		}
	})
	for _, t := range tasks {
		t.simTimer = timer
	}
}

// deliverLaunch sends a launch event to a subscribed executor; its tasks
// leave TASK_STAGING from the master's point of view only when the
// executor reports. Caller holds c.mu.
func (c *Cluster) deliverLaunch(ex *executorRun, ev *executor.Event) {
	ex.stream.send(ev)
}

// dropQueuedTask removes t from launches not yet delivered to the
// executor and reports whether it was there. Caller holds c.mu.
func (c *Cluster) dropQueuedTask(ex *executorRun, t *task) bool {
	id := t.info.TaskID.Value
	found := false
	kept := ex.queued[:0]
	for _, ev := range ex.queued {
		switch {
		case ev.Launch != nil && ev.Launch.Task.TaskID.Value == id:
			found = true
			continue
		case ev.LaunchGroup != nil:
			tasks := ev.LaunchGroup.TaskGroup.Tasks[:0]
			for _, ti := range ev.LaunchGroup.TaskGroup.Tasks {
				if ti.TaskID.Value == id {
					found = true
				} else {
					tasks = append(tasks, ti)
				}
			}
			ev.LaunchGroup.TaskGroup.Tasks = tasks
			if len(tasks) == 0 {
				continue
			}
		}
		kept = append(kept, ev)
	}
	ex.queued = kept
	return found
}

// executorTerminated cleans up after an executor ended: its remaining
// tasks fail (or are killed when the executor was being shut down) with
// REASON_EXECUTOR_TERMINATED and the framework gets a FAILURE event with
// the wait status. Caller holds c.mu.
func (c *Cluster) executorTerminated(ex *executorRun, waitStatus int32, msg string) {
	a := ex.agent
	if a.executors[ex.key()] != ex {
		return
	}
	delete(a.executors, ex.key())
	a.share.recover(ex.resources)
	ex.regTimer.stop()
	ex.reregTimer.stop()
	if ex.stream != nil {
		ex.stream.close()
		ex.stream = nil
	}
	if msg == "" {
		msg = "Executor terminated"
	}
	reason := mesos.REASON_EXECUTOR_TERMINATED
	for _, t := range ex.tasks {
		state := mesos.TASK_FAILED
		if ex.terminating || t.killing {
			state = mesos.TASK_KILLED
		}
		switch {
		case !ex.launched && !ex.simulated:
			reason = mesos.REASON_CONTAINER_LAUNCH_FAILED
		case ex.regTimedOut:
			reason = mesos.REASON_EXECUTOR_REGISTRATION_TIMEOUT
			msg = "Executor did not register within " + c.cfg.ExecutorRegistrationTimeout.D().String()
		case ex.reregTimedOut:
			reason = mesos.REASON_EXECUTOR_REREGISTRATION_TIMEOUT
			msg = "Executor did not reregister within " + c.cfg.ExecutorReregistrationTimeout.D().String()
		}
		c.agentStatusUpdate(t, c.newStatus(t, state, mesos.SOURCE_AGENT, reason, msg), false)
	}
	ex.tasks = map[string]*task{}
	if ex.sandbox != "" {
		c.collectSandbox(a, ex.fw.id, ex.id, ex.sandbox)
	}
	if c.frameworks[ex.fw.id] == ex.fw && ex.fw.stream != nil {
		status := waitStatus
		ex.fw.stream.send(&scheduler.Event{Type: scheduler.Event_FAILURE, Failure: &scheduler.Event_Failure{
			AgentID:    &mesos.AgentID{Value: a.id},
			ExecutorID: &mesos.ExecutorID{Value: ex.id},
			Status:     &status,
		}})
	}
	c.triggerAllocation()
}

// shutdownExecutor asks an executor to shut down and kills its process
// group after the grace period. Caller holds c.mu.
func (c *Cluster) shutdownExecutor(ex *executorRun, why string) {
	if ex.terminating {
		return
	}
	ex.terminating = true
	c.log().Info("shutting down executor", "executor", ex.id, "framework", ex.fw.id, "agent", ex.agent.id, "why", why)
	if ex.simulated {
		for _, t := range ex.tasks {
			t.killing = true
		}
		c.executorTerminated(ex, 0, "Executor shut down")
		return
	}
	if ex.stream != nil {
		ex.stream.send(&executor.Event{Type: executor.Event_SHUTDOWN})
	}
	if !ex.launched {
		// Not started yet: the launch goroutine sees terminating and stops.
		return
	}
	grace := ex.gracePeriod(c.cfg.ExecutorShutdownGracePeriod.D())
	go func() {
		select {
		case <-ex.exited:
		case <-c.cfg.Clock.After(grace):
			ex.destroy()
		}
	}()
}

// KillExecutor kills an executor as if it crashed: the executor process
// gets SIGKILL (simulated executors just vanish) and the agent destroys its
// container (its session) when it notices, so its live tasks become
// TASK_FAILED with REASON_EXECUTOR_TERMINATED and the framework gets a
// FAILURE event.
func (c *Cluster) KillExecutor(frameworkID, agentID, executorID string) error {
	c.mu.Lock()
	ex, err := c.executorOn(frameworkID, agentID, executorID)
	if err != nil {
		c.mu.Unlock()
		return err
	}
	if ex.simulated {
		c.executorTerminated(ex, 9, "Executor killed")
		c.mu.Unlock()
		return nil
	}
	launched, pid := ex.launched, ex.sid
	c.mu.Unlock()
	if !launched {
		return fmt.Errorf("executor %q has no process yet: %w", executorID, errdefs.ErrConflict)
	}
	// kill -9 of the executor alone; the agent then destroys its container.
	_ = syscall.Kill(pid, syscall.SIGKILL)
	return nil
}

// executorOn finds an executor of a framework on an agent. Caller holds
// c.mu.
func (c *Cluster) executorOn(frameworkID, agentID, executorID string) (*executorRun, error) {
	a := c.agents[agentID]
	if a == nil {
		return nil, fmt.Errorf("agent %q: %w", agentID, errdefs.ErrNotFound)
	}
	ex := a.executors[executorKey(frameworkID, executorID)]
	if ex == nil {
		return nil, fmt.Errorf("executor %q of framework %q on agent %q: %w", executorID, frameworkID, agentID, errdefs.ErrNotFound)
	}
	return ex, nil
}

// maxSimulatedMessages bounds the framework messages a simulated executor
// keeps.
const maxSimulatedMessages = 32

// ExecutorMessages returns the framework messages a simulated executor
// got (MESSAGE calls of its framework), the last 32, oldest first.
func (c *Cluster) ExecutorMessages(frameworkID, agentID, executorID string) ([][]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ex, err := c.simulatedExecutor(frameworkID, agentID, executorID)
	if err != nil {
		return nil, err
	}
	return slices.Clone(ex.received), nil
}

// SendExecutorMessage makes a simulated executor send data to its
// framework, as its MESSAGE call would.
func (c *Cluster) SendExecutorMessage(frameworkID, agentID, executorID string, data []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	ex, err := c.simulatedExecutor(frameworkID, agentID, executorID)
	if err != nil {
		return err
	}
	c.executorMessage(ex, data)
	return nil
}

func (c *Cluster) simulatedExecutor(frameworkID, agentID, executorID string) (*executorRun, error) {
	ex, err := c.executorOn(frameworkID, agentID, executorID)
	if err != nil {
		return nil, err
	}
	if !ex.simulated {
		return nil, fmt.Errorf("executor %q runs as a process: it sends its own messages: %w", executorID, errdefs.ErrInvalidArgument)
	}
	return ex, nil
}

// FailTask makes a simulated task fail (TASK_FAILED from its executor).
func (c *Cluster) FailTask(frameworkID, taskID, message string) error {
	return c.simulatedTransition(frameworkID, taskID, mesos.TASK_FAILED, message)
}

// FinishTask makes a simulated task finish (TASK_FINISHED).
func (c *Cluster) FinishTask(frameworkID, taskID string) error {
	return c.simulatedTransition(frameworkID, taskID, mesos.TASK_FINISHED, "")
}

func (c *Cluster) simulatedTransition(frameworkID, taskID string, state mesos.TaskState, msg string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cfg.ExecutorMode != ExecutorSimulated {
		return fmt.Errorf("only simulated tasks can be driven from the test API: %w", errdefs.ErrInvalidArgument)
	}
	fw := c.frameworks[frameworkID]
	if fw == nil {
		return fmt.Errorf("framework %q: %w", frameworkID, errdefs.ErrNotFound)
	}
	t := fw.tasks[taskID]
	if t == nil {
		return fmt.Errorf("task %q of framework %q: %w", taskID, frameworkID, errdefs.ErrNotFound)
	}
	if isTerminal(t.state) {
		return fmt.Errorf("task %q is already %s: %w", taskID, t.state, errdefs.ErrConflict)
	}
	c.sendExecutorStatus(t, state, msg, nil)
	return nil
}

// AgentEndpoint returns the host:port of an agent's executor API (process
// mode), the value executors get as MESOS_AGENT_ENDPOINT.
func (c *Cluster) AgentEndpoint(agentID string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a := c.agents[agentID]
	if a == nil {
		return "", fmt.Errorf("agent %q: %w", agentID, errdefs.ErrNotFound)
	}
	if a.endpoint == "" {
		return "", fmt.Errorf("agent %q has no executor endpoint in %s mode: %w", agentID, c.cfg.ExecutorMode, errdefs.ErrInvalidArgument)
	}
	return a.endpoint, nil
}
