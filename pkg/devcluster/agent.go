package devcluster

import (
	"fmt"
	"net"
	"net/http"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	mesosallocator "github.com/mesos/mesos-go/api/v1/lib/allocator"
	"github.com/mesos/mesos-go/api/v1/lib/executor"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
)

// agent is one Mesos agent of the dev cluster: it runs the tasks the
// master launches on it in executors, simulated or child processes
// (process.go) served by its executor API (executorapi.go), and its status
// update manager (updates.go) forwards their updates through the master
// until acknowledged. Its records are guarded by the master's mutex, as
// the master and the agent share one record of a task; the master also
// keeps what it knows of the agent here (operator state, maintenance).
type agent struct {
	m          *master
	id         string
	spec       AgentSpec
	info       mesos.AgentInfo
	total      mesos.Resources
	attributes []mesos.Attribute
	share      *agentShare // what the allocator has left to offer

	tasks        map[string]*task        // live tasks, by framework/task ID
	executors    map[string]*executorRun // by framework/executor ID
	commandTasks map[string]*commandTask // by framework/task ID
	offered      map[string]*offer

	// Process mode: the agent's own HTTP endpoint for executors, which
	// also serves its sandboxes' files.
	endpoint string // host:port
	files    *sandboxFiles
	handler  http.Handler
	srv      *http.Server
	removed  bool
	down     bool // restarting (RestartAgent)
	// awaiting are the executors the agent waits for after its recovery
	// (awaitExecutors); it offers nothing until none is left.
	awaiting map[*executorRun]bool

	registeredAt time.Time
	// Operator state: a deactivated agent (DEACTIVATE_AGENT, DRAIN_AGENT)
	// gets no offers until REACTIVATE_AGENT; drain is set while it drains
	// and once it is drained, drainStarted when the drain began.
	deactivated  bool
	drain        *mesos.DrainInfo
	drainStarted time.Time
	// Maintenance, while the agent's machine has an unavailability: each
	// framework's outstanding inverse offer and last answer, by framework
	// ID.
	inverseOffers   map[string]*inverseOffer
	inverseStatuses map[string]mesosallocator.InverseOfferStatus
}

// newAgent makes the agent of spec (its ID and hostname filled in) for m;
// in process mode it listens for its executor API on 127.0.0.1, at
// endpoint when it has one from the last run, and the caller serves on
// the listener it returns once the master registered the agent.
func newAgent(m *master, spec AgentSpec, endpoint string) (*agent, net.Listener, error) {
	a := &agent{
		m:            m,
		id:           spec.ID,
		spec:         spec,
		total:        agentResources(spec.Resources),
		attributes:   agentAttributes(spec.Attributes),
		tasks:        map[string]*task{},
		executors:    map[string]*executorRun{},
		commandTasks: map[string]*commandTask{},
		offered:      map[string]*offer{},
		awaiting:     map[*executorRun]bool{},

		inverseOffers:   map[string]*inverseOffer{},
		inverseStatuses: map[string]mesosallocator.InverseOfferStatus{},
	}
	a.info = mesos.AgentInfo{
		Hostname:   spec.Hostname,
		Resources:  cloneResources(a.total),
		Attributes: a.attributes,
		ID:         &mesos.AgentID{Value: a.id},
	}
	if m.cfg.ExecutorMode != ExecutorProcess {
		p := int32(5051)
		a.info.Port = &p
		return a, nil, nil
	}
	if endpoint == "" {
		endpoint = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", endpoint)
	if err != nil {
		if endpoint != "127.0.0.1:0" {
			// Its executors of the last run know it by this address.
			return nil, nil, fmt.Errorf("agent %q (%s): listen on %s, its address in the last run (kept in %s): %v; free the port, or remove that file to start the agents afresh, killing the last run's executors: %w",
				a.id, spec.Hostname, endpoint, m.registryPath(), err, errdefs.ErrUnavailable)
		}
		return nil, nil, fmt.Errorf("agent %q listen: %v: %w", a.id, err, errdefs.ErrUnavailable)
	}
	a.endpoint = ln.Addr().String()
	_, port := splitHostPort(a.endpoint)
	p := int32(port)
	a.info.Port = &p
	a.files = newSandboxFiles()
	mux := http.NewServeMux()
	mux.HandleFunc("/api/v1/executor", a.handleExecutor)
	for path, h := range map[string]http.HandlerFunc{"/files/read": a.files.serveRead, "/files/browse": a.files.serveBrowse,
		"/files/download": a.files.serveDownload, "/files/debug": a.files.serveDebug} {
		mux.HandleFunc(path, m.security.authenticated(realmAgentReadonly, ignoringPrincipal(h)))
	}
	a.handler = mux
	return a, ln, nil
}

// serve starts the agent's executor and files APIs on ln. Caller holds
// a.m.mu.
func (a *agent) serve(ln net.Listener) {
	a.srv = &http.Server{Handler: a.handler, ReadHeaderTimeout: 10 * time.Second, ErrorLog: a.m.serverLog()}
	a.m.serveHTTP(a.srv, ln)
}

// restart takes the agent's executor API away for downtime and brings it
// back with its checkpointed state (Cluster.RestartAgent). Caller does
// not hold a.m.mu.
func (a *agent) restart(downtime time.Duration) error {
	m := a.m
	m.mu.Lock()
	a.down = true
	for _, ex := range a.executors {
		if ex.stream != nil {
			ex.stream.close()
			ex.stream = nil
		}
		ex.subscribed = false
	}
	srv := a.srv
	m.mu.Unlock()
	m.log().Info("agent restarting", "agent", a.id, "hostname", a.info.Hostname, "downtime", downtime)
	_ = srv.Close()
	m.cfg.Clock.Sleep(downtime)

	ln, err := listenAgain(a.endpoint)
	m.mu.Lock()
	a.down = false
	if err != nil {
		m.mu.Unlock()
		return fmt.Errorf("agent %q re-listen on %q: %v: %w", a.id, a.endpoint, err, errdefs.ErrUnavailable)
	}
	if m.stopped || a.removed {
		m.mu.Unlock()
		_ = ln.Close()
		return nil
	}
	kill := a.awaitExecutors()
	a.serve(ln)
	m.log().Info("agent back", "agent", a.id, "hostname", a.info.Hostname, "endpoint", a.endpoint)
	m.mu.Unlock()
	for _, sid := range kill {
		killSession(sid)
	}
	return nil
}

// shutdownExecutorProcesses sends SHUTDOWN to every executor process that
// runs and listens, as a draining agent does, and returns the channels
// closed when each has exited. Caller holds a.m.mu.
func (a *agent) shutdownExecutorProcesses() []chan struct{} {
	var exits []chan struct{}
	for _, ex := range a.executors {
		if ex.stream != nil && ex.launched && ex.exited != nil {
			ex.terminating = true
			ex.stream.send(&executor.Event{Type: executor.Event_SHUTDOWN})
			exits = append(exits, ex.exited)
		}
	}
	return exits
}

// takeDown marks every executor terminating, closes its stream and stops
// its registration timer, and returns the sessions of its executors and
// command tasks for the caller to destroy outside the lock. Caller holds
// a.m.mu.
func (a *agent) takeDown() []int {
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
	return sessions
}

// launch runs tasks the master validated: in their executor (started
// when new), or as command tasks. Caller holds a.m.mu.
func (a *agent) launch(fw *framework, exInfo *mesos.ExecutorInfo, infos []mesos.TaskInfo, group bool) {
	m := a.m
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
				tasks:       map[string]*task{},
				simulated:   m.cfg.ExecutorMode == ExecutorSimulated,
				exited:      make(chan struct{}),
			}
			if m.durable() {
				ex.ended = map[string]*task{}
			}
			a.executors[key] = ex
		}
	}
	m.stats.TasksLaunched += int64(len(infos))
	now := m.cfg.Clock.Now()
	tasks := make([]*task, 0, len(infos))
	for _, ti := range infos {
		t := &task{
			info:  ti,
			fw:    fw,
			agent: a,
			exec:  ex,
		}
		st := t.status(now, mesos.TASK_STAGING, mesos.SOURCE_MASTER, 0, "")
		t.state = mesos.TASK_STAGING
		t.statuses = append(t.statuses, st)
		fw.tasks[ti.TaskID.Value] = t
		a.tasks[t.key()] = t
		if ex != nil {
			ex.tasks[ti.TaskID.Value] = t
		}
		tasks = append(tasks, t)
	}

	if m.cfg.ExecutorMode == ExecutorSimulated {
		for _, t := range tasks {
			// Nothing runs that would read a task's data, and the views
			// do not show it (a Mesos Task has none): bcs-scheduler's,
			// a kilobyte a task, is not kept for a simulated fleet.
			t.info.Data = nil
		}
		a.simulateLaunch(tasks)
		return
	}
	if ex == nil {
		for _, t := range tasks {
			a.startCommandTask(t)
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
	// The tasks leave TASK_STAGING only when the executor reports. The
	// checkpoint holds them before the executor can, and before its
	// process starts.
	if ex.subscribed && ex.stream != nil {
		a.checkpointExecutor(ex)
		ex.stream.send(ev)
	} else {
		ex.queued = append(ex.queued, ev)
		a.checkpointExecutor(ex)
	}
	if newExecutor {
		a.startExecutorProcess(ex)
	}
}

// simulateLaunch drives simulated tasks: TASK_STARTING now, TASK_RUNNING
// after SimulatedStartDelay. Caller holds a.m.mu.
func (a *agent) simulateLaunch(tasks []*task) {
	for _, t := range tasks {
		a.sendExecutorStatus(t, mesos.TASK_STARTING, "", nil)
	}
	timer := a.m.afterFunc(a.m.cfg.SimulatedStartDelay.D(), func() {
		for _, t := range tasks {
			if t.state == mesos.TASK_STARTING && !t.killing && !a.removed && a.m.registered(t.fw) {
				a.sendExecutorStatus(t, mesos.TASK_RUNNING, "", nil)
			}
			t.simTimer = nil // fired: the tasks need it no longer
		}
	})
	for _, t := range tasks {
		t.simTimer = timer
	}
}

// killTask asks whatever runs t to kill it. Caller holds a.m.mu.
func (a *agent) killTask(t *task, policy *mesos.KillPolicy) {
	t.killing = true
	switch {
	case t.exec != nil && t.exec.simulated:
		a.sendExecutorStatus(t, mesos.TASK_KILLED, "Task killed", nil)
	case t.exec != nil && t.exec.dropQueued(t):
		// Not yet handed to the executor: the agent drops it.
		a.statusUpdate(t, t.status(a.m.cfg.Clock.Now(), mesos.TASK_KILLED, mesos.SOURCE_AGENT, mesos.REASON_TASK_KILLED_DURING_LAUNCH, "Killed before delivery to the executor"), false)
	case t.exec != nil && t.exec.stream != nil:
		t.exec.stream.send(&executor.Event{Type: executor.Event_KILL, Kill: &executor.Event_Kill{TaskID: t.info.TaskID, KillPolicy: policy}})
	case t.exec != nil:
		// Delivered, but the executor is disconnected: Mesos kills the
		// executor in that case, and so do we.
		a.shutdownExecutor(t.exec, "task killed while the executor is disconnected")
	case t.command != nil:
		if policy == nil {
			policy = t.info.KillPolicy // as the command executor falls back
		}
		a.killCommandTask(t.command, policy)
	default:
		// Simulated command task.
		a.sendExecutorStatus(t, mesos.TASK_KILLED, "Task killed", nil)
	}
}

// frameworkMessage delivers a framework's MESSAGE to its executor; a
// simulated executor keeps the last maxSimulatedMessages. Caller holds
// a.m.mu.
func (a *agent) frameworkMessage(fw *framework, executorID string, data []byte) {
	ex := a.executors[executorKey(fw.id, executorID)]
	if ex != nil && ex.simulated {
		ex.received = append(ex.received, append([]byte(nil), data...))
		if len(ex.received) > maxSimulatedMessages {
			ex.received = ex.received[1:]
		}
		if answer := a.m.cfg.SimulatedMessages; answer != nil {
			a.simulateAnswer(ex, answer(data))
		}
		return
	}
	if ex == nil || ex.stream == nil {
		a.m.log().Warn("MESSAGE dropped: executor not subscribed", "framework", fw.id, "executor", executorID, "agent", a.id)
		return
	}
	ex.stream.send(&executor.Event{Type: executor.Event_MESSAGE, Message: &executor.Event_Message{Data: append([]byte(nil), data...)}})
}

// SimulatedAnswer is how a simulated executor answers a framework
// message (Config.SimulatedMessages): each of its tasks named in TaskData
// reports its state again with that TaskStatus.data, and Message, if any,
// goes back to the framework as the executor's MESSAGE.
type SimulatedAnswer struct {
	TaskData map[string][]byte
	Message  []byte
}

// simulateAnswer gives ex's answer after Config.SimulatedAnswerDelay.
// Caller holds a.m.mu.
func (a *agent) simulateAnswer(ex *executorRun, answer SimulatedAnswer) {
	if len(answer.TaskData) == 0 && answer.Message == nil {
		return
	}
	a.m.afterFunc(a.m.cfg.SimulatedAnswerDelay.D(), func() {
		if a.removed || a.executors[ex.key()] != ex {
			return
		}
		for id, data := range answer.TaskData {
			if t := ex.tasks[id]; t != nil && !t.killing && a.m.registered(t.fw) {
				st := t.status(a.m.cfg.Clock.Now(), t.state, mesos.SOURCE_EXECUTOR, 0, "")
				st.Data = data
				a.statusUpdate(t, st, true)
			}
		}
		if answer.Message != nil {
			a.m.executorMessage(ex, answer.Message)
		}
	})
}

// maxSimulatedMessages bounds the framework messages a simulated executor
// keeps.
const maxSimulatedMessages = 32

// executorTerminated cleans up after an executor ended: its remaining
// tasks fail (or are killed when the executor was being shut down) with
// REASON_EXECUTOR_TERMINATED and the framework gets a FAILURE event with
// the wait status. Caller holds a.m.mu.
func (a *agent) executorTerminated(ex *executorRun, waitStatus int32, msg string) {
	m := a.m
	if a.executors[ex.key()] != ex {
		return
	}
	delete(a.executors, ex.key())
	a.share.recover(ex.resources())
	ex.regTimer.stop()
	ex.reregTimer.stop()
	a.executorBack(ex)
	if ex.stream != nil {
		ex.stream.close()
		ex.stream = nil
	}
	if msg == "" {
		msg = "Executor terminated"
	}
	reason := mesos.REASON_EXECUTOR_TERMINATED
	now := m.cfg.Clock.Now()
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
			msg = "Executor did not register within " + m.cfg.ExecutorRegistrationTimeout.D().String()
		case ex.reregTimedOut:
			// Mesos' Slave::reregisterExecutorTimeout: the task was
			// started and is gone now.
			state, reason = mesos.TASK_GONE, mesos.REASON_EXECUTOR_REREGISTRATION_TIMEOUT
			if !ex.fw.partitionAware {
				state = mesos.TASK_LOST
			}
			msg = "Executor did not reregister within " + m.cfg.ExecutorReregistrationTimeout.D().String()
		}
		a.statusUpdate(t, t.status(now, state, mesos.SOURCE_AGENT, reason, msg), false)
	}
	ex.tasks = map[string]*task{}
	a.checkpointExecutor(ex)
	if ex.sandbox != "" {
		a.collectSandbox(ex.fw.id, ex.id, ex.sandbox)
	}
	m.executorExited(ex, waitStatus)
	m.alloc.triggerFreed()
}

// shutdownExecutor asks an executor to shut down and kills its process
// group after the grace period. Caller holds a.m.mu.
func (a *agent) shutdownExecutor(ex *executorRun, why string) {
	if ex.terminating {
		return
	}
	ex.terminating = true
	a.m.log().Info("shutting down executor", "executor", ex.id, "framework", ex.fw.id, "agent", a.id, "why", why)
	if ex.simulated {
		for _, t := range ex.tasks {
			t.killing = true
		}
		a.executorTerminated(ex, 0, "Executor shut down")
		return
	}
	if ex.stream != nil {
		ex.stream.send(&executor.Event{Type: executor.Event_SHUTDOWN})
	}
	if !ex.launched {
		// Not started yet: the launch goroutine sees terminating and stops.
		return
	}
	grace := ex.gracePeriod(a.m.cfg.ExecutorShutdownGracePeriod.D())
	go func() {
		select {
		case <-ex.exited:
		case <-a.m.cfg.Clock.After(grace):
			ex.destroy()
		}
	}()
}

// used is what tasks and executors hold on the agent.
func (a *agent) used() mesos.Resources {
	var lists [][]mesos.Resource
	for _, ex := range a.executors {
		lists = append(lists, ex.resources())
	}
	for _, t := range a.tasks {
		lists = append(lists, t.resources())
	}
	return sumResources(lists...)
}

// url is where the agent's own API lives, as offers name it; simulated
// agents have none.
func (a *agent) url() *mesos.URL {
	if a.endpoint == "" {
		return nil
	}
	host, port := splitHostPort(a.endpoint)
	return &mesos.URL{Scheme: "http", Address: mesos.Address{Hostname: &a.info.Hostname, IP: &host, Port: int32(port)}, Path: strPtr("/slave(1)")}
}
