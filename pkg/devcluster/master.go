package devcluster

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	mesosallocator "github.com/mesos/mesos-go/api/v1/lib/allocator"
	"github.com/mesos/mesos-go/api/v1/lib/maintenance"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
)

// master is the dev cluster's Mesos master: the frameworks and their
// offers, the registry of agents and machines, and its HTTP APIs
// (scheduler.go, accept.go, offers.go, operator.go, maintenance.go,
// drain.go, state.go). Its mutex guards its records and its agents' — the
// dev cluster keeps one record of a task for both — and the cluster's
// life; handlers only queue events on streams while holding it, and slow
// work (fetching URIs, starting processes) runs outside it. The allocator
// decides what is offered to whom.
type master struct {
	cfg        Config
	id         string
	ownWorkDir bool
	alloc      *allocator

	mu                  sync.Mutex
	stopped             bool
	stoppedDone         chan struct{} // closed when stop has finished
	frameworks          map[string]*framework
	removedFrameworks   map[string]bool
	completedFrameworks []*framework
	agents              map[string]*agent
	agentOrder          []*agent
	offers              map[string]*offer
	inverseOffers       map[string]*inverseOffer
	// machines are the agents' machines and those of the maintenance
	// schedule, by machineKey; like the Mesos registry they outlive
	// their agents.
	machines map[string]*machine
	// unavailable counts the machines with a maintenance window
	// (setUnavailability): an allocation pass looks at every agent for
	// inverse offers only when one has.
	unavailable int
	schedule    maintenance.Schedule
	// lastRun are the agents of the registry of the cluster's last run
	// that no agent of this run has taken back yet; recovering while
	// Start takes them back, when the registry is not written: a start
	// killed half way must find the last run's registry whole.
	lastRun    []registeredAgent
	recovering bool
	seq        uint64
	stats      Stats

	addr     string
	ln       net.Listener // until the master serves (Start)
	srv      *http.Server
	security security // TLS and HTTP authentication

	stopping chan struct{} // closed when stop begins
	// wg counts the allocation loop and the HTTP servers, so that no
	// listener outlives stop; Add only under mu while not stopped.
	wg sync.WaitGroup
	// procs counts goroutines that start or wait for child processes; Add
	// only under mu while not stopped.
	procs     sync.WaitGroup
	silenced  atomic.Bool     // set when stop returns: no logging afterwards
	procCtx   context.Context // cancelled by stop: aborts fetches
	cancelCtx context.CancelFunc
}

// startMaster brings up a master listening on cfg.ListenAddr with its
// allocator, and no agents yet; it serves once Start calls serve.
func startMaster(cfg Config) (*master, error) {
	m := &master{
		cfg:               cfg,
		id:                newUUIDString(),
		frameworks:        map[string]*framework{},
		removedFrameworks: map[string]bool{},
		agents:            map[string]*agent{},
		offers:            map[string]*offer{},
		inverseOffers:     map[string]*inverseOffer{},
		machines:          map[string]*machine{},
		stoppedDone:       make(chan struct{}),
		stopping:          make(chan struct{}),
	}
	var err error
	if m.security, err = loadSecurity(cfg); err != nil {
		return nil, err
	}
	m.alloc = newAllocator(cfg.Clock, cfg.AllocationInterval.D(), m.grantOffers)
	m.procCtx, m.cancelCtx = context.WithCancel(context.Background())
	if m.cfg.WorkDir == "" {
		dir, err := os.MkdirTemp("", "devcluster-")
		if err != nil {
			return nil, fmt.Errorf("create work dir: %w", err)
		}
		m.cfg.WorkDir, m.ownWorkDir = dir, true
	}
	ln, err := net.Listen("tcp", cfg.ListenAddr)
	if err != nil {
		m.cancelCtx()
		m.cleanupWorkDir()
		return nil, fmt.Errorf("master listen on %q: %v: %w", cfg.ListenAddr, err, errdefs.ErrUnavailable)
	}
	m.addr, m.ln = ln.Addr().String(), ln
	return m, nil
}

// allocate runs the allocator until the master stops.
func (m *master) allocate() {
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		m.alloc.run(m.stopping)
	}()
}

func (m *master) serve(ln net.Listener) {
	mux := http.NewServeMux()
	mux.HandleFunc("/api/v1/scheduler", m.security.authenticated(realmFrameworks, m.handleScheduler))
	mux.HandleFunc("/api/v1", m.security.authenticated(realmReadwrite, ignoringPrincipal(m.handleOperator)))
	m.routeViews(mux)
	mux.HandleFunc("/health", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ErrorLog: m.serverLog()}
	m.srv, m.ln = srv, nil
	m.serveHTTP(srv, ln)
}

// serveHTTP serves srv on ln until srv is closed. Caller holds m.mu.
func (m *master) serveHTTP(srv *http.Server, ln net.Listener) {
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		_ = srv.Serve(m.security.listen(ln)) // closes ln, also when srv was closed first
	}()
}

// serverLog is where the master's and agents' HTTP servers say what
// went wrong with a connection (a failed TLS handshake, say).
func (m *master) serverLog() *log.Logger {
	return slog.NewLogLogger(m.cfg.Logger.Handler(), slog.LevelWarn)
}

// stop closes every stream, destroys every executor's session and stops
// the HTTP servers; every call returns once that is done.
func (m *master) stop() {
	m.mu.Lock()
	if m.stopped {
		m.mu.Unlock()
		<-m.stoppedDone
		return
	}
	defer close(m.stoppedDone)
	m.stopped = true
	close(m.stopping)
	m.cancelCtx()
	// Executors first get SHUTDOWN, as from an agent that drains: they
	// kill their tasks (which may live outside their session) and exit.
	// What is left after the grace period is killed below.
	var exits []chan struct{}
	for _, a := range m.agentOrder {
		exits = append(exits, a.shutdownExecutorProcesses()...)
	}
	m.mu.Unlock()
	deadline := m.cfg.Clock.After(m.cfg.ExecutorShutdownGracePeriod.D())
waiting:
	for _, exited := range exits {
		select {
		case <-exited:
		case <-deadline:
			break waiting
		}
	}

	m.mu.Lock()
	var sessions []int
	var servers []*http.Server
	for _, fw := range m.frameworks {
		if fw.stream != nil {
			fw.stream.close()
		}
		fw.stopTimers()
	}
	for _, a := range m.agentOrder {
		sessions = append(sessions, a.takeDown()...)
		if a.srv != nil {
			servers = append(servers, a.srv)
		}
	}
	if m.srv != nil {
		servers = append(servers, m.srv)
	}
	unserved := m.ln
	m.mu.Unlock()
	if unserved != nil {
		_ = unserved.Close()
	}

	for _, sid := range sessions {
		killSession(sid)
	}
	for _, s := range servers {
		_ = s.Close()
	}
	m.wg.Wait()
	// Launches in flight see m.stopped and kill what they started; the
	// waiters reap every child before stop returns.
	m.procs.Wait()
	m.cleanupWorkDir()
	m.log().Info("master stopped", "master", m.id)
	m.silenced.Store(true)
}

func (m *master) cleanupWorkDir() {
	if m.ownWorkDir {
		_ = os.RemoveAll(m.cfg.WorkDir)
	}
}

// restart drops the HTTP server and every scheduler connection and
// listens on the same address again; frameworks keep their records until
// they subscribe again.
func (m *master) restart() error {
	m.mu.Lock()
	if m.stopped {
		m.mu.Unlock()
		return fmt.Errorf("cluster stopped: %w", errdefs.ErrUnavailable)
	}
	for _, fw := range m.frameworks {
		if fw.stream != nil {
			fw.stream.close()
			fw.stream, fw.streamID = nil, ""
		}
		fw.failoverTimer.stop()
		fw.filters.setConnected(false, false)
		m.removeOffersOf(fw, false)
	}
	// A new master has no answers to inverse offers (they live in its
	// allocator), only the schedule (in the registry).
	for _, a := range m.agentOrder {
		a.inverseStatuses = map[string]mesosallocator.InverseOfferStatus{}
	}
	old := m.srv
	m.mu.Unlock()

	_ = old.Close()
	ln, err := listenAgain(m.addr)
	if err != nil {
		return fmt.Errorf("master re-listen on %q: %v: %w", m.addr, err, errdefs.ErrUnavailable)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopped {
		_ = ln.Close()
		return fmt.Errorf("cluster stopped: %w", errdefs.ErrUnavailable)
	}
	m.serve(ln)
	m.log().Info("master restarted", "addr", m.addr)
	return nil
}

// listenAgain listens on the address a server just closed, which the
// kernel may hold for a moment (a wait on the OS, not on the cluster's
// clock).
func listenAgain(addr string) (net.Listener, error) {
	var ln net.Listener
	var err error
	for i := 0; i < 50; i++ {
		if ln, err = net.Listen("tcp", addr); err == nil {
			return ln, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil, err
}

// log is the cluster's logger; silent once stop returned.
func (m *master) log() *slog.Logger {
	if m.silenced.Load() {
		return slog.New(slog.DiscardHandler)
	}
	return m.cfg.Logger
}

func (m *master) nextSeq() uint64 {
	m.seq++
	return m.seq
}

func (m *master) triggerAllocation() { m.alloc.trigger() }

// registered reports whether fw is a framework of the master: not removed
// (a removed framework's executors live on until they exit).
func (m *master) registered(fw *framework) bool { return m.frameworks[fw.id] == fw }

// addAgent registers a new agent of spec (AddAgent). Caller does not hold
// m.mu: the agent's listener is made outside it.
func (m *master) addAgent(spec AgentSpec) (string, error) {
	m.mu.Lock()
	n := len(m.agentOrder) + 1
	m.mu.Unlock()
	p, err := m.prepareAgent(spec, n)
	if err != nil {
		return "", err
	}
	return m.registerAgent(p)
}

// preparedAgent is an agent made for its spec, listening, with the
// checkpoints of its last run read, and not yet registered.
type preparedAgent struct {
	a           *agent
	ln          net.Listener // nil in simulated mode
	checkpoints []containerCheckpoint
}

func (p *preparedAgent) abandon() {
	if p.ln != nil {
		_ = p.ln.Close()
	}
}

// prepareAgent makes the agent of spec, the cluster's n-th (its default
// hostname), as the agent of the last run it stands for when there is
// one: with its ID, its address and its checkpoints. Caller does not hold
// m.mu.
func (m *master) prepareAgent(spec AgentSpec, n int) (*preparedAgent, error) {
	m.mu.Lock()
	if m.stopped {
		m.mu.Unlock()
		return nil, fmt.Errorf("cluster stopped: %w", errdefs.ErrUnavailable)
	}
	if spec.Hostname == "" {
		spec.Hostname = fmt.Sprintf("agent-%d", n)
	}
	endpoint := ""
	if last := m.takeLastRunAgent(spec); last != nil {
		spec.ID, endpoint = last.ID, last.Endpoint
	}
	if spec.ID == "" {
		spec.ID = fmt.Sprintf("%s-S%d", m.id, m.nextSeq())
	}
	if m.agents[spec.ID] != nil {
		m.mu.Unlock()
		return nil, fmt.Errorf("agent %q: %w", spec.ID, errdefs.ErrAlreadyExists)
	}
	m.mu.Unlock()

	a, ln, err := newAgent(m, spec, endpoint)
	if err != nil {
		return nil, err
	}
	p := &preparedAgent{a: a, ln: ln}
	if m.durable() {
		if p.checkpoints, err = readCheckpoints(a.checkpointDir()); err != nil {
			p.abandon()
			return nil, fmt.Errorf("agent %q (%s): its checkpoints of the last run: %v: %w", a.id, spec.Hostname, err, errdefs.ErrInvalidArgument)
		}
	}
	return p, nil
}

// registerAgent registers a prepared agent, which takes back the
// containers of its checkpoints, and serves its executor API. Caller does
// not hold m.mu.
func (m *master) registerAgent(p *preparedAgent) (string, error) {
	a := p.a
	m.mu.Lock()
	if m.stopped || m.agents[a.id] != nil {
		m.mu.Unlock()
		p.abandon()
		if m.stopped {
			return "", fmt.Errorf("cluster stopped: %w", errdefs.ErrUnavailable)
		}
		return "", fmt.Errorf("agent %q: %w", a.id, errdefs.ErrAlreadyExists)
	}
	a.registeredAt = m.cfg.Clock.Now()
	a.share = m.alloc.addAgent(a.id, a.total)
	m.agents[a.id] = a
	m.agentOrder = append(m.agentOrder, a)
	m.addMachineOf(a)
	kill := a.recover(p.checkpoints)
	kill = append(kill, a.awaitExecutors()...)
	if p.ln != nil {
		a.serve(p.ln)
	}
	m.saveRegistry()
	m.triggerAllocation()
	m.mu.Unlock()
	for _, sid := range kill {
		killSession(sid)
	}
	return a.id, nil
}

// takeLastRunAgent finds the agent of the last run that spec stands for
// — the one of its ID, or of its hostname when it names no ID — and
// takes it off lastRun. Caller holds m.mu.
func (m *master) takeLastRunAgent(spec AgentSpec) *registeredAgent {
	for i, last := range m.lastRun {
		if (spec.ID != "" && last.ID == spec.ID) || (spec.ID == "" && last.Hostname == spec.Hostname) {
			m.lastRun = append(m.lastRun[:i:i], m.lastRun[i+1:]...)
			return &last
		}
	}
	return nil
}

// removeAgent removes a registered agent the way the master's
// __removeSlave does: its offers and inverse offers are rescinded, its
// live tasks become TASK_UNREACHABLE with REASON_AGENT_REMOVED when it is
// unreachable, else TASK_GONE_BY_OPERATOR with
// REASON_AGENT_REMOVED_BY_OPERATOR (TASK_LOST for frameworks that are not
// PARTITION_AWARE), every connected framework gets a FAILURE event for it,
// and the agent shuts down: its executors' and command tasks' sessions are
// killed and its executor API closed. That happens outside m.mu; the
// returned channel is closed when it is done. Caller holds m.mu.
func (m *master) removeAgent(a *agent, message string, unreachable bool) <-chan struct{} {
	a.removed = true
	m.alloc.removeAgent(a.share)
	delete(m.agents, a.id)
	for i, x := range m.agentOrder {
		if x == a {
			m.agentOrder = append(m.agentOrder[:i:i], m.agentOrder[i+1:]...)
			break
		}
	}
	for _, o := range a.offered {
		m.rescindOffer(o)
	}
	for _, io := range a.inverseOffers {
		m.removeInverseOffer(io, true)
	}
	now := m.cfg.Clock.Now()
	unreachableAt := &mesos.TimeInfo{Nanoseconds: now.UnixNano()}
	touched := map[*framework]bool{}
	for _, fw := range m.frameworks {
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
			st := t.status(now, state, mesos.SOURCE_MASTER, reason, message)
			if state == mesos.TASK_UNREACHABLE {
				st.UnreachableTime = unreachableAt
			}
			t.released = true
			m.recordStatus(t, st)
			if state == mesos.TASK_UNREACHABLE {
				fw.unreachable[t.info.TaskID.Value] = t
			} else {
				fw.addCompleted(t)
			}
			m.sendUpdate(fw, st)
		}
	}
	for _, fw := range m.frameworks {
		if fw.stream != nil {
			fw.stream.send(&scheduler.Event{Type: scheduler.Event_FAILURE, Failure: &scheduler.Event_Failure{AgentID: &mesos.AgentID{Value: a.id}}})
		}
	}
	sessions := a.takeDown()
	a.executors = map[string]*executorRun{}
	a.tasks = map[string]*task{}
	m.log().Info("agent removed", "agent", a.id, "hostname", a.info.Hostname, "why", message, "frameworks_with_tasks", len(touched))

	m.saveRegistry()

	destroyed := make(chan struct{})
	srv := a.srv
	m.procs.Add(1)
	go func() {
		defer m.procs.Done()
		defer close(destroyed)
		for _, sid := range sessions {
			killSession(sid)
		}
		if srv != nil {
			_ = srv.Close()
		}
		if m.durable() {
			_ = os.RemoveAll(a.checkpointDir())
		}
	}()
	return destroyed
}

// executorExited tells the framework of an executor that ended, with its
// wait status (Mesos' ExitedExecutorMessage becoming a FAILURE event).
// Caller holds m.mu.
func (m *master) executorExited(ex *executorRun, waitStatus int32) {
	if m.registered(ex.fw) && ex.fw.stream != nil {
		ex.fw.stream.send(&scheduler.Event{Type: scheduler.Event_FAILURE, Failure: &scheduler.Event_Failure{
			AgentID:    &mesos.AgentID{Value: ex.agent.id},
			ExecutorID: &mesos.ExecutorID{Value: ex.id},
			Status:     &waitStatus,
		}})
	}
}

// executorOn finds an executor of a framework on an agent. Caller holds
// m.mu.
func (m *master) executorOn(frameworkID, agentID, executorID string) (*executorRun, error) {
	a := m.agents[agentID]
	if a == nil {
		return nil, fmt.Errorf("agent %q: %w", agentID, errdefs.ErrNotFound)
	}
	ex := a.executors[executorKey(frameworkID, executorID)]
	if ex == nil {
		return nil, fmt.Errorf("executor %q of framework %q on agent %q: %w", executorID, frameworkID, agentID, errdefs.ErrNotFound)
	}
	return ex, nil
}

// simulatedExecutor finds a simulated executor, for the test API that
// speaks for it. Caller holds m.mu.
func (m *master) simulatedExecutor(frameworkID, agentID, executorID string) (*executorRun, error) {
	ex, err := m.executorOn(frameworkID, agentID, executorID)
	if err != nil {
		return nil, err
	}
	if !ex.simulated {
		return nil, fmt.Errorf("executor %q runs as a process: it sends its own messages: %w", executorID, errdefs.ErrInvalidArgument)
	}
	return ex, nil
}

// simulatedTransition makes a simulated task's executor report state
// (FailTask, FinishTask). Caller holds m.mu.
func (m *master) simulatedTransition(frameworkID, taskID string, state mesos.TaskState, msg string) error {
	if m.cfg.ExecutorMode != ExecutorSimulated {
		return fmt.Errorf("only simulated tasks can be driven from the test API: %w", errdefs.ErrInvalidArgument)
	}
	fw := m.frameworks[frameworkID]
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
	t.agent.sendExecutorStatus(t, state, msg, nil)
	return nil
}
