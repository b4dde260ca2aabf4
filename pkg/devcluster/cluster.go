package devcluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	mesosallocator "github.com/mesos/mesos-go/api/v1/lib/allocator"
	"github.com/mesos/mesos-go/api/v1/lib/executor"
	"github.com/mesos/mesos-go/api/v1/lib/maintenance"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
)

// Cluster is a running dev cluster: one master and its agents in this
// process. All state sits behind one mutex; handlers only queue events on
// streams while holding it, and slow work (fetching URIs, starting
// processes) runs outside it.
type Cluster struct {
	cfg        Config
	id         string
	ownWorkDir bool

	mu                  sync.Mutex
	stopped             bool
	stoppedDone         chan struct{} // closed when Stop has finished
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
	schedule maintenance.Schedule
	seq      uint64
	stats    Stats

	masterAddr string
	masterSrv  *http.Server
	security   security // TLS and HTTP authentication

	alloc *allocator
	stop  chan struct{}
	wg    sync.WaitGroup // the allocation loop
	// procs counts goroutines that start or wait for child processes; Add
	// only under mu while not stopped.
	procs     sync.WaitGroup
	silenced  atomic.Bool     // set when Stop returns: no logging afterwards
	procCtx   context.Context // cancelled by Stop: aborts fetches
	cancelCtx context.CancelFunc
}

// Start brings up a master on cfg.ListenAddr and cfg.Agents, and begins
// allocating offers. The cluster stops when ctx is done or Stop is called.
func Start(ctx context.Context, cfg Config) (*Cluster, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	c := &Cluster{
		cfg:               cfg,
		id:                newUUIDString(),
		frameworks:        map[string]*framework{},
		removedFrameworks: map[string]bool{},
		agents:            map[string]*agent{},
		offers:            map[string]*offer{},
		inverseOffers:     map[string]*inverseOffer{},
		machines:          map[string]*machine{},
		stoppedDone:       make(chan struct{}),
		stop:              make(chan struct{}),
	}
	var err error
	if c.security, err = loadSecurity(cfg); err != nil {
		return nil, err
	}
	c.alloc = newAllocator(cfg.Clock, cfg.AllocationInterval.D(), c.grantOffers)
	c.procCtx, c.cancelCtx = context.WithCancel(context.Background())
	if c.cfg.WorkDir == "" {
		dir, err := os.MkdirTemp("", "devcluster-")
		if err != nil {
			return nil, fmt.Errorf("create work dir: %w", err)
		}
		c.cfg.WorkDir, c.ownWorkDir = dir, true
	}
	ln, err := net.Listen("tcp", cfg.ListenAddr)
	if err != nil {
		c.cancelCtx()
		c.cleanupWorkDir()
		return nil, fmt.Errorf("master listen on %q: %v: %w", cfg.ListenAddr, err, errdefs.ErrUnavailable)
	}
	c.masterAddr = ln.Addr().String()
	c.serveMaster(ln)
	for _, spec := range cfg.Agents {
		if _, err := c.AddAgent(spec); err != nil {
			c.Stop()
			return nil, err
		}
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.alloc.run(c.stop)
	}()
	if ctx != nil && ctx.Done() != nil {
		go func() {
			select {
			case <-ctx.Done():
				c.Stop()
			case <-c.stop:
			}
		}()
	}
	c.log().Info("master listening", "master", c.id, "addr", c.masterAddr, "agents", len(cfg.Agents), "executors", string(cfg.ExecutorMode))
	return c, nil
}

func (c *Cluster) serveMaster(ln net.Listener) {
	mux := http.NewServeMux()
	mux.HandleFunc("/api/v1/scheduler", c.security.authenticated(realmFrameworks, c.handleScheduler))
	mux.HandleFunc("/api/v1", c.security.authenticated(realmReadwrite, ignoringPrincipal(c.handleOperator)))
	for _, p := range []string{"/master/state", "/master/state.json", "/state", "/state.json"} {
		mux.HandleFunc(p, c.security.authenticated(realmReadonly, ignoringPrincipal(c.handleState)))
	}
	mux.HandleFunc("/health", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ErrorLog: c.serverLog()}
	c.masterSrv = srv
	go func() { _ = srv.Serve(c.security.listen(ln)) }()
}

// ID is the master's ID (also the prefix of framework, agent and offer IDs).
func (c *Cluster) ID() string { return c.id }

// MasterURL is the master's base URL, e.g. "http://127.0.0.1:5050"
// ("https://…" with Config.SSLCertFile); the scheduler API lives at
// MasterURL()+"/api/v1/scheduler".
func (c *Cluster) MasterURL() string { return c.security.scheme() + "://" + c.masterAddr }

// WorkDir holds the agents' sandboxes.
func (c *Cluster) WorkDir() string { return c.cfg.WorkDir }

// Stop closes every stream, destroys every executor's session and stops
// the HTTP servers. It is safe to call more than once, from any goroutine:
// every call returns once the cluster is stopped, so a process that exits
// after Stop leaves no executor behind.
func (c *Cluster) Stop() {
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		<-c.stoppedDone
		return
	}
	defer close(c.stoppedDone)
	c.stopped = true
	close(c.stop)
	c.cancelCtx()
	// Executors first get SHUTDOWN, as an agent that drains: they kill
	// their tasks (which may live outside their session) and exit.
	// What is left after the grace period is killed below.
	var exits []chan struct{}
	for _, a := range c.agentOrder {
		for _, ex := range a.executors {
			if ex.stream != nil && ex.launched && ex.exited != nil {
				ex.terminating = true
				ex.stream.send(&executor.Event{Type: executor.Event_SHUTDOWN})
				exits = append(exits, ex.exited)
			}
		}
	}
	c.mu.Unlock()
	deadline := c.cfg.Clock.After(c.cfg.ExecutorShutdownGracePeriod.D())
waiting:
	for _, exited := range exits {
		select {
		case <-exited:
		case <-deadline:
			break waiting
		}
	}

	c.mu.Lock()
	var sessions []int
	var servers []*http.Server
	for _, fw := range c.frameworks {
		if fw.stream != nil {
			fw.stream.close()
		}
		fw.stopTimers()
	}
	for _, a := range c.agentOrder {
		for _, ex := range a.executors {
			if ex.stream != nil {
				ex.stream.close()
			}
			sessions = append(sessions, ex.sid)
		}
		for _, ct := range a.commandTasks {
			sessions = append(sessions, ct.sid)
		}
		if a.srv != nil {
			servers = append(servers, a.srv)
		}
	}
	servers = append(servers, c.masterSrv)
	c.mu.Unlock()

	for _, sid := range sessions {
		killSession(sid)
	}
	for _, s := range servers {
		_ = s.Close()
	}
	c.wg.Wait()
	// Launches in flight see c.stopped and kill what they started; the
	// waiters reap every child before Stop returns.
	c.procs.Wait()
	c.cleanupWorkDir()
	c.log().Info("master stopped", "master", c.id)
	c.silenced.Store(true)
}

func (c *Cluster) cleanupWorkDir() {
	if c.ownWorkDir {
		_ = os.RemoveAll(c.cfg.WorkDir)
	}
}

// RestartMaster simulates a master failover: the master's HTTP server and
// every scheduler connection are dropped and a new server listens on the
// same address. Agents keep their tasks; frameworks must SUBSCRIBE again
// with their framework ID, and are not removed until they do.
func (c *Cluster) RestartMaster() error {
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return fmt.Errorf("cluster stopped: %w", errdefs.ErrUnavailable)
	}
	for _, fw := range c.frameworks {
		if fw.stream != nil {
			fw.stream.close()
			fw.stream, fw.streamID = nil, ""
		}
		fw.failoverTimer.stop()
		fw.filters.setConnected(false, false)
		c.removeOffersOf(fw, false)
	}
	// A new master has no answers to inverse offers (they live in its
	// allocator), only the schedule (in the registry).
	for _, a := range c.agentOrder {
		a.inverseStatuses = map[string]mesosallocator.InverseOfferStatus{}
	}
	old := c.masterSrv
	c.mu.Unlock()

	_ = old.Close()
	var ln net.Listener
	var err error
	for i := 0; i < 50; i++ {
		if ln, err = net.Listen("tcp", c.masterAddr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("master re-listen on %q: %v: %w", c.masterAddr, err, errdefs.ErrUnavailable)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.serveMaster(ln)
	c.log().Info("master restarted", "addr", c.masterAddr)
	return nil
}

// serverLog is where the master's and agents' HTTP servers say what
// went wrong with a connection (a failed TLS handshake, say).
func (c *Cluster) serverLog() *log.Logger {
	return slog.NewLogLogger(c.cfg.Logger.Handler(), slog.LevelWarn)
}

// log is the cluster's logger; silent once Stop returned.
func (c *Cluster) log() *slog.Logger {
	if c.silenced.Load() {
		return slog.New(slog.DiscardHandler)
	}
	return c.cfg.Logger
}

func (c *Cluster) nextSeq() uint64 {
	c.seq++
	return c.seq
}

func (c *Cluster) triggerAllocation() { c.alloc.trigger() }

// Frameworks lists the IDs of the frameworks the master knows (connected
// or within their failover timeout), sorted.
func (c *Cluster) Frameworks() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	ids := make([]string, 0, len(c.frameworks))
	for id := range c.frameworks {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// Agents lists agent IDs in registration order.
func (c *Cluster) Agents() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	ids := make([]string, 0, len(c.agentOrder))
	for _, a := range c.agentOrder {
		ids = append(ids, a.id)
	}
	return ids
}

// TaskState returns the latest state the master knows of a task.
func (c *Cluster) TaskState(frameworkID, taskID string) (mesos.TaskState, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fw := c.frameworks[frameworkID]
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
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
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

// schedulerEvent helpers.

func errorEvent(msg string) *scheduler.Event {
	return &scheduler.Event{Type: scheduler.Event_ERROR, Error: &scheduler.Event_Error{Message: msg}}
}
