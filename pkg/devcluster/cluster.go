package devcluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"slices"
	"sort"
	"syscall"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
)

// Cluster is a running dev cluster in this process: one master (master.go)
// with its allocator (allocator.go) and its agents (agent.go). Its methods
// are the Go API for tests and tools.
type Cluster struct {
	m *master
}

// Start brings up a master on cfg.ListenAddr and cfg.Agents, and begins
// allocating offers. The cluster stops when ctx is done or Stop is called.
//
// In process mode a cluster started on the work dir of an earlier one
// recovers it, as a Mesos master and agents restarted on their work dirs
// do, whether the earlier process stopped or was killed: its frameworks
// are known again, disconnected, until they subscribe again with their
// IDs or their failover timeouts expire; each agent of cfg.Agents takes
// back the ID and executor API address of the earlier agent of its ID
// (or, naming none, its hostname), and the executors and tasks that
// agent had, its executors subscribing again as after RestartAgent. The
// containers of earlier agents not in cfg.Agents are killed.
func Start(ctx context.Context, cfg Config) (*Cluster, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	m, err := startMaster(cfg)
	if err != nil {
		return nil, err
	}
	c := &Cluster{m: m}
	if err := c.recover(cfg.Agents); err != nil {
		c.Stop()
		return nil, err
	}
	m.mu.Lock()
	m.serve(m.ln)
	m.mu.Unlock()
	m.allocate()
	if ctx != nil && ctx.Done() != nil {
		go func() {
			select {
			case <-ctx.Done():
				c.Stop()
			case <-m.stopping:
			}
		}()
	}
	m.log().Info("master listening", "master", m.id, "addr", m.addr, "agents", len(cfg.Agents), "executors", string(cfg.ExecutorMode))
	return c, nil
}

// recover takes back what the master and the agents of the cluster's
// last run on its work dir kept (process mode), and adds the agents.
func (c *Cluster) recover(agents []AgentSpec) error {
	m := c.m
	if m.durable() {
		reg, err := m.loadRegistry()
		if err != nil {
			return err
		}
		m.mu.Lock()
		m.recoverFrameworks(reg)
		m.lastRun, m.recovering = reg.Agents, true
		m.mu.Unlock()
	}
	// Every agent listens before any takes its containers back: a start
	// that fails (an address of the last run taken) leaves them running
	// for the next.
	prepared := make([]*preparedAgent, 0, len(agents))
	for i, spec := range agents {
		p, err := m.prepareAgent(spec, i+1)
		if err != nil {
			for _, p := range prepared {
				p.abandon()
			}
			return err
		}
		prepared = append(prepared, p)
	}
	for i, p := range prepared {
		if _, err := m.registerAgent(p); err != nil {
			for _, p := range prepared[i+1:] {
				p.abandon()
			}
			return err
		}
	}
	if !m.durable() {
		return nil
	}
	m.forgetUnknownAgents()
	m.mu.Lock()
	m.lastRun, m.recovering = nil, false
	m.saveRegistry()
	m.mu.Unlock()
	return nil
}

// ID is the master's ID (also the prefix of framework, agent and offer IDs).
func (c *Cluster) ID() string { return c.m.id }

// MasterURL is the master's base URL, e.g. "http://127.0.0.1:5050"
// ("https://…" with Config.SSLCertFile); the scheduler API lives at
// MasterURL()+"/api/v1/scheduler".
func (c *Cluster) MasterURL() string { return c.m.security.scheme() + "://" + c.m.addr }

// WorkDir holds the agents' sandboxes.
func (c *Cluster) WorkDir() string { return c.m.cfg.WorkDir }

// Stop closes every stream, destroys every executor's session and stops
// the HTTP servers. It is safe to call more than once, from any goroutine:
// every call returns once the cluster is stopped, so a process that exits
// after Stop leaves no executor behind.
func (c *Cluster) Stop() { c.m.stop() }

// RestartMaster simulates a master failover: the master's HTTP server and
// every scheduler connection are dropped and a new server listens on the
// same address. Agents keep their tasks; frameworks must SUBSCRIBE again
// with their framework ID, and are not removed until they do.
func (c *Cluster) RestartMaster() error { return c.m.restart() }

// Frameworks lists the IDs of the frameworks the master knows (connected
// or within their failover timeout), sorted.
func (c *Cluster) Frameworks() []string {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	ids := make([]string, 0, len(c.m.frameworks))
	for id := range c.m.frameworks {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// Agents lists agent IDs in registration order.
func (c *Cluster) Agents() []string {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	ids := make([]string, 0, len(c.m.agentOrder))
	for _, a := range c.m.agentOrder {
		ids = append(ids, a.id)
	}
	return ids
}

// TaskState returns the latest state the master knows of a task.
func (c *Cluster) TaskState(frameworkID, taskID string) (mesos.TaskState, error) {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	fw := c.m.frameworks[frameworkID]
	if fw == nil {
		return 0, fmt.Errorf("framework %q: %w", frameworkID, errdefs.ErrNotFound)
	}
	if t := fw.tasks[taskID]; t != nil {
		return t.state, nil
	}
	if t := fw.findCompleted(taskID); t != nil {
		return t.state, nil
	}
	return 0, fmt.Errorf("task %q of framework %q: %w", taskID, frameworkID, errdefs.ErrNotFound)
}

// Stats returns what the cluster counted since it started.
func (c *Cluster) Stats() Stats {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	return c.m.stats
}

// State returns what GET /master/state serves, as a generic JSON value.
func (c *Cluster) State() map[string]any {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	return c.m.state()
}

// AddAgent registers a new agent and returns its ID. In process mode the
// agent gets its own executor API endpoint on 127.0.0.1.
func (c *Cluster) AddAgent(spec AgentSpec) (string, error) {
	if err := spec.validate(); err != nil {
		return "", err
	}
	return c.m.addAgent(spec)
}

// RemoveAgent takes an agent away as if it had been partitioned and
// removed: its offers are rescinded, its tasks reported TASK_UNREACHABLE
// (PARTITION_AWARE frameworks) or TASK_LOST, frameworks get a FAILURE
// event for the agent, and its executor processes are killed.
func (c *Cluster) RemoveAgent(id string) error {
	c.m.mu.Lock()
	a := c.m.agents[id]
	switch {
	case c.m.stopped:
		c.m.mu.Unlock()
		return fmt.Errorf("cluster stopped: %w", errdefs.ErrUnavailable)
	case a == nil:
		c.m.mu.Unlock()
		return fmt.Errorf("agent %q: %w", id, errdefs.ErrNotFound)
	}
	destroyed := c.m.removeAgent(a, "Agent "+a.info.Hostname+" is removed", true)
	c.m.mu.Unlock()
	<-destroyed
	return nil
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
	c.m.mu.Lock()
	a := c.m.agents[agentID]
	switch {
	case a == nil:
		c.m.mu.Unlock()
		return fmt.Errorf("agent %q: %w", agentID, errdefs.ErrNotFound)
	case a.srv == nil:
		c.m.mu.Unlock()
		return fmt.Errorf("agent %q runs no executor API in %s mode: %w", agentID, c.m.cfg.ExecutorMode, errdefs.ErrInvalidArgument)
	case a.down:
		c.m.mu.Unlock()
		return fmt.Errorf("agent %q is already restarting: %w", agentID, errdefs.ErrConflict)
	}
	c.m.mu.Unlock()
	return a.restart(downtime)
}

// KillExecutor kills an executor as if it crashed: the executor process
// gets SIGKILL (simulated executors just vanish) and the agent destroys its
// container (its session) when it notices, so its live tasks become
// TASK_FAILED with REASON_EXECUTOR_TERMINATED and the framework gets a
// FAILURE event.
func (c *Cluster) KillExecutor(frameworkID, agentID, executorID string) error {
	c.m.mu.Lock()
	ex, err := c.m.executorOn(frameworkID, agentID, executorID)
	if err != nil {
		c.m.mu.Unlock()
		return err
	}
	if ex.simulated {
		ex.agent.executorTerminated(ex, 9, "Executor killed")
		c.m.mu.Unlock()
		return nil
	}
	launched, pid := ex.launched, ex.sid
	c.m.mu.Unlock()
	if !launched || pid <= 0 {
		return fmt.Errorf("executor %q has no process: %w", executorID, errdefs.ErrConflict)
	}
	// kill -9 of the executor alone; the agent then destroys its container.
	_ = syscall.Kill(pid, syscall.SIGKILL)
	return nil
}

// ExecutorMessages returns the framework messages a simulated executor
// got (MESSAGE calls of its framework), the last 32, oldest first.
func (c *Cluster) ExecutorMessages(frameworkID, agentID, executorID string) ([][]byte, error) {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	ex, err := c.m.simulatedExecutor(frameworkID, agentID, executorID)
	if err != nil {
		return nil, err
	}
	return slices.Clone(ex.received), nil
}

// SendExecutorMessage makes a simulated executor send data to its
// framework, as its MESSAGE call would.
func (c *Cluster) SendExecutorMessage(frameworkID, agentID, executorID string, data []byte) error {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	ex, err := c.m.simulatedExecutor(frameworkID, agentID, executorID)
	if err != nil {
		return err
	}
	c.m.executorMessage(ex, data)
	return nil
}

// FailTask makes a simulated task fail (TASK_FAILED from its executor).
func (c *Cluster) FailTask(frameworkID, taskID, message string) error {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	return c.m.simulatedTransition(frameworkID, taskID, mesos.TASK_FAILED, message)
}

// FinishTask makes a simulated task finish (TASK_FINISHED).
func (c *Cluster) FinishTask(frameworkID, taskID string) error {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	return c.m.simulatedTransition(frameworkID, taskID, mesos.TASK_FINISHED, "")
}

// AgentEndpoint returns the host:port of an agent's executor API (process
// mode), the value executors get as MESOS_AGENT_ENDPOINT.
func (c *Cluster) AgentEndpoint(agentID string) (string, error) {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	a := c.m.agents[agentID]
	if a == nil {
		return "", fmt.Errorf("agent %q: %w", agentID, errdefs.ErrNotFound)
	}
	if a.endpoint == "" {
		return "", fmt.Errorf("agent %q has no executor endpoint in %s mode: %w", agentID, c.m.cfg.ExecutorMode, errdefs.ErrInvalidArgument)
	}
	return a.endpoint, nil
}

func newUUIDBytes() []byte {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err))
	}
	b[6] = (b[6] & 0x0f) | 0x40
	b[8] = (b[8] & 0x3f) | 0x80
	return b
}

func newUUIDString() string {
	b := newUUIDBytes()
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

func loopbackOnly(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %v: %w", addr, err, errdefs.ErrInvalidArgument)
	}
	ip := net.ParseIP(host)
	if host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("listen address %q must be a loopback address: %w", addr, errdefs.ErrInvalidArgument)
	}
	return nil
}

func errorEvent(msg string) *scheduler.Event {
	return &scheduler.Event{Type: scheduler.Event_ERROR, Error: &scheduler.Event_Error{Message: msg}}
}
