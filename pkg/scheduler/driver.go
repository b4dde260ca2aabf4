package scheduler

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/mesos/mesos-go/api/v1/lib/encoding"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/mesosconn"
	"github.com/bcs-mesos/bcs-mesos/pkg/mesoswire"
	"github.com/bcs-mesos/bcs-mesos/pkg/plan"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// DriverConfig configures a Driver.
type DriverConfig struct {
	// Masters are Mesos master URLs ("http://127.0.0.1:5050"); the driver
	// tries them in turn and follows redirects to the leading master.
	Masters []string
	User    string // FrameworkInfo.user; default root
	Role    string // FrameworkInfo.role; default "*"
	// FailoverTimeout keeps the framework's tasks this long after the
	// scheduler disconnects; default 7 days.
	FailoverTimeout time.Duration
	Core            Config
	Registry        *registry.Registry
	Store           *store.Store
	// TickInterval between Tick inputs; default 1s.
	TickInterval time.Duration
	// BackoffMax caps the reconnect backoff (from 500ms, doubling); default 30s.
	BackoffMax time.Duration
	// AgentSyncInterval between reads of the master's agents (agentsync.go);
	// default DefaultAgentSyncInterval.
	AgentSyncInterval time.Duration
	// Encoding is the scheduler API's media type; default
	// mesoswire.Protobuf, which skips enum values newer than our types.
	Encoding encoding.Codec
	// Mesos is how masters are reached: the CAs that verify https://
	// ones and the framework's principal and secret (FrameworkInfo's
	// principal; HTTP Basic authentication of the scheduler and operator
	// APIs, the secret read again at each subscription).
	Mesos  mesosconn.Config
	Logger *slog.Logger
	// Clock drives ticks, backoffs and heartbeat deadlines and gives Step
	// its time; default the wall clock.
	Clock clockwork.Clock
	// AnswerMargin is how long past a message's timeout Message waits for
	// the executor's answer; default DefaultAnswerMargin.
	AnswerMargin time.Duration
	// Metrics records what the driver sees and does; default metrics
	// registered nowhere.
	Metrics *Metrics
	// Identities gives each namespace its identity on the agents, which
	// its launches carry (identities.go); nil: none.
	Identities IdentitySource
	// StoredTaskGroups, when set, reads the stored task groups for the
	// restore in place of Registry.AllTaskGroups: a standby's
	// registry.TaskGroupMirror holds most of them already.
	StoredTaskGroups func(context.Context) ([]*registry.TaskGroup, error)
}

// Driver runs a Core: it subscribes to the Mesos master, feeds the core
// events, application changes and ticks from one goroutine, persists the
// core's writes and then sends its calls.
type Driver struct {
	cfg  DriverConfig
	core *Core
	ops  chan Input // operator requests: Operate, Drift
	// queries read the core between two steps (Plan); stopped is closed
	// once Run returned, and no query is answered any more.
	queries chan func(*Core, time.Time)
	stopped chan struct{}
	log     *slog.Logger
	// sub is the Mesos subscription and caller where its calls go, both
	// owned by Run's goroutine (subscription.go).
	sub    subscription
	caller calls.Caller
	// health are the remote checks' verdicts (probes.go).
	health chan RemoteHealth
	// checks cancels the remote health checks of each task group;
	// probes holds them off the control plane.
	checks map[string]context.CancelFunc
	probes *probePolicies
	// frameworkID is the core's, for the subscription goroutine.
	frameworkID atomic.Pointer[string]
	// messages are executor messages for the loop to send; waiters the
	// callers of Message waiting for their answer, by message ID
	// (messages.go). Message IDs are unique to this driver: its start
	// time and a sequence number.
	messages   chan messageRequest
	waitersMu  sync.Mutex
	waiters    map[string]waiter
	messageRun string
	messageSeq atomic.Uint64
	// usage are the executors' usage reports, kept beside the core
	// (usage.go).
	usage *usageTable
	// secretReads are the values of secrets read off the loop (secrets.go);
	// secrets the loop's state of them.
	secretReads chan secretRead
	secrets     map[string]*secretState
	// outputs go from the loop to runOutputs, which reports on
	// outputFailed when storing one failed.
	outputs      chan stepOutput
	outputFailed chan error
	// engineDefaults is the engine's configuration as the config gives
	// it, under the values set at run time; agentSyncInterval the one
	// syncAgents waits, changed with them.
	engineDefaults    registry.EngineConfig
	agentSyncInterval atomic.Int64
	// identityKnown are the namespaces whose identity the core has;
	// identityFailed those whose identity could not be had, retried on
	// ticks (identities.go).
	identityKnown  map[string]bool
	identityFailed map[string]identityFailure
	// budget adapts the launch budget to the acknowledgements' latency
	// (budget.go); budgetSent is what the core was last given.
	budget     launchBudget
	budgetSent int
}

// NewDriver returns a driver; Run starts it.
func NewDriver(cfg DriverConfig) (*Driver, error) {
	if len(cfg.Masters) == 0 {
		return nil, fmt.Errorf("no Mesos master: %w", errdefs.ErrInvalidArgument)
	}
	if cfg.User == "" {
		cfg.User = "root"
	}
	if cfg.Role == "" {
		cfg.Role = "*"
	}
	if cfg.FailoverTimeout == 0 {
		cfg.FailoverTimeout = DefaultFailoverTimeout
	}
	if cfg.TickInterval == 0 {
		cfg.TickInterval = time.Second
	}
	if cfg.BackoffMax == 0 {
		cfg.BackoffMax = 30 * time.Second
	}
	if cfg.AgentSyncInterval <= 0 {
		cfg.AgentSyncInterval = DefaultAgentSyncInterval
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Clock == nil {
		cfg.Clock = clockwork.NewRealClock()
	}
	if cfg.Encoding.Name == "" {
		cfg.Encoding = mesoswire.Protobuf
	}
	if cfg.AnswerMargin <= 0 {
		cfg.AnswerMargin = DefaultAnswerMargin
	}
	if cfg.Metrics == nil {
		cfg.Metrics = NewMetrics(prometheus.NewRegistry())
	}
	cfg.Core.Identities = cfg.Identities != nil
	core, err := NewCore(cfg.Core)
	if err != nil {
		return nil, err
	}
	d := &Driver{cfg: cfg, core: core, ops: make(chan Input, 64), queries: make(chan func(*Core, time.Time)),
		stopped: make(chan struct{}), log: cfg.Logger,
		health: make(chan RemoteHealth, 64), checks: map[string]context.CancelFunc{}, probes: newProbePolicies(cfg.Core.Egress),
		sub:      subscription{events: make(chan event, maxGathered)},
		messages: make(chan messageRequest, 64), waiters: map[string]waiter{}, usage: newUsageTable(),
		messageRun:  strconv.FormatInt(cfg.Clock.Now().UnixNano(), 36),
		secretReads: make(chan secretRead, 16), secrets: map[string]*secretState{},
		identityKnown: map[string]bool{}, identityFailed: map[string]identityFailure{},
		engineDefaults: EngineDefaults(cfg.Core, cfg.AgentSyncInterval)}
	d.agentSyncInterval.Store(int64(cfg.AgentSyncInterval))
	return d, nil
}

// EngineDefaults is the engine's configuration that cfg and
// agentSyncInterval (bcs-scheduler's flags) give, defaults filled in:
// what the values set at run time override.
func EngineDefaults(cfg Config, agentSyncInterval time.Duration) registry.EngineConfig {
	cfg.defaults()
	flapping := cfg.Flapping.withDefaults()
	if agentSyncInterval <= 0 {
		agentSyncInterval = DefaultAgentSyncInterval
	}
	return registry.EngineConfig{
		ReconcileInterval: registry.Duration(cfg.ReconcileInterval), AgentSyncInterval: registry.Duration(agentSyncInterval),
		DependsGCDelay: registry.Duration(cfg.DependsGCDelay), MaxLaunching: cfg.MaxLaunching,
		FlappingRestarts: flapping.Restarts, FlappingWindow: registry.Duration(flapping.Window),
	}
}

// Operate queues an operator request (Operate, Drift) for the core.
func (d *Driver) Operate(ctx context.Context, op Input) error {
	select {
	case d.ops <- op:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Plan says what storing obj would do (Core.Plan), computed by the loop
// between two steps; it changes nothing. A driver that stopped answers
// errdefs.ErrUnavailable.
func (d *Driver) Plan(ctx context.Context, obj manifest.Object) (*plan.Plan, error) {
	var p *plan.Plan
	var err error
	if qerr := d.query(ctx, func(c *Core, now time.Time) { p, err = c.Plan(now, obj) }); qerr != nil {
		return nil, qerr
	}
	return p, err
}

// query runs q on the loop's goroutine, which owns the core, and waits
// for it.
func (d *Driver) query(ctx context.Context, q func(*Core, time.Time)) error {
	done := make(chan struct{})
	select {
	case d.queries <- func(c *Core, now time.Time) { q(c, now); close(done) }:
	case <-d.stopped:
		return fmt.Errorf("the scheduler stopped: %w", errdefs.ErrUnavailable)
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Run drives the core until ctx ends or persisting fails. After a
// persistence failure the caller should start over (the store holds the
// truth; a new Run restores from it).
func (d *Driver) Run(ctx context.Context) error {
	defer close(d.stopped)
	err := d.run(ctx)
	if ctx.Err() != nil {
		return nil // stopped, whatever was under way
	}
	return err
}

// run is the loop: it restores the core from the store, then takes one
// input at a time — an event of the subscription, a change the store's
// watches bring, a secret read, an operator request, a remote check's
// verdict, a tick — and steps the core with it; messages and queries
// are served between two steps.
func (d *Driver) run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopOutputs := d.startOutputs(ctx)
	defer stopOutputs()
	records, err := d.watchRecords(ctx) // before restore reads the store
	if err != nil {
		return err
	}
	mode, err := d.restore(ctx)
	if err != nil {
		return err
	}
	if err := d.adjustBudget(ctx); err != nil { // the first launches start slow
		return err
	}
	defer d.sub.stop()
	if mode != registry.EngineStopped {
		d.sub.start(ctx, d)
	}
	ticker := d.cfg.Clock.NewTicker(d.cfg.TickInterval)
	defer ticker.Stop()
	for {
		var in Input
		var err error
		var received []time.Time // of a status update, for the ack latency
		select {
		case <-ctx.Done():
			return nil
		case err := <-d.outputFailed:
			return err
		case ev := <-d.sub.events:
			in, received = d.subscriptionInput(ev), []time.Time{ev.received}
		case change := <-records:
			in, err = d.recordInput(ctx, change)
		case read := <-d.secretReads:
			in = d.secretReadInput(ctx, read)
		case op := <-d.ops:
			in = op
		case h := <-d.health:
			in = h
		case <-ticker.Chan():
			if err = d.adjustBudget(ctx); err == nil {
				in, err = Tick{}, d.retryIdentities(ctx)
			}
		case req := <-d.messages:
			req.sent <- d.sendMessage(ctx, req)
		case q := <-d.queries:
			q(d.core, d.cfg.Clock.Now())
		}
		if err == nil && in != nil {
			err = d.stepGathering(ctx, in, received)
		}
		if err != nil {
			return err
		}
	}
}

// stepGathering steps in. A status update, an executor's message or an
// offer takes along the status updates, messages and offers queued behind
// it (gather): the updates are stepped first, as one StatusUpdates, then
// the messages as one ExecutorMessages, then the offers as one OffersIn.
// So an update never waits behind a placement pass, which freed room in
// the launch budget for it to use; a rollout's answers (a status and a
// message from each executor) are not stepped one at a time; and a burst
// of offers from many agents costs one pass, not one each. The event that
// ended the gathering is the next input, before any other.
func (d *Driver) stepGathering(ctx context.Context, in Input, received []time.Time) error {
	var g gathered
	switch in := in.(type) {
	case StatusUpdates:
		g.updates, g.received = in, received
	case OffersIn:
		g.offers = in
	case ExecutorMessage:
		g.messages = []event{{in: in}}
	default:
		return d.step(ctx, in)
	}
	held := g.gather(d.sub.events)
	if len(g.updates.Statuses) > 0 {
		if err := d.step(ctx, g.updates, g.received...); err != nil {
			return err
		}
	}
	var messages ExecutorMessages
	for _, ev := range g.messages {
		if m, ok := d.subscriptionInput(ev).(ExecutorMessage); ok { // nil: answered to its waiter
			messages.Messages = append(messages.Messages, m)
		}
	}
	if len(messages.Messages) > 0 {
		if err := d.step(ctx, messages); err != nil {
			return err
		}
	}
	if len(g.offers.Offers) > 0 {
		if err := d.step(ctx, g.offers); err != nil {
			return err
		}
	}
	if held == nil {
		return nil
	}
	if in := d.subscriptionInput(*held); in != nil {
		return d.step(ctx, in)
	}
	return nil
}

// maxGathered bounds the events one gathering takes, and the
// subscription's queue: a step's acknowledgements wait for all its
// records to be stored.
const maxGathered = 1024

// gathered are the status updates, with the times they came (received),
// the executors' messages and the offers of the events taken off the
// subscription's queue.
type gathered struct {
	updates  StatusUpdates
	received []time.Time
	messages []event
	offers   OffersIn
}

// gather adds the status updates and offers queued in events, up to
// maxGathered events. It stops at the first other event, which it returns
// to be the next input: a rescind must follow its offer, a subscription's
// end what came before it.
func (g *gathered) gather(events <-chan event) *event {
	for range maxGathered {
		select {
		case ev := <-events:
			if ev.err != nil || ev.caller != nil {
				return &ev
			}
			switch in := ev.in.(type) {
			case StatusUpdates:
				g.updates.Statuses = append(g.updates.Statuses, in.Statuses...)
				g.received = append(g.received, ev.received)
			case OffersIn:
				g.offers.Offers = append(g.offers.Offers, in.Offers...)
			case ExecutorMessage:
				g.messages = append(g.messages, ev)
			default:
				return &ev
			}
		default:
			return nil
		}
	}
	return nil
}

// step runs one input through the core and hands its output to the
// output goroutine (runOutputs), which stores it, then sends its calls,
// while the loop takes the next input. received are the arrival times of
// the status updates in, for the ack latency.
func (d *Driver) step(ctx context.Context, in Input, received ...time.Time) error {
	now := d.cfg.Clock.Now()
	d.cfg.Metrics.input(in)
	out := d.core.Step(now, in)
	d.cfg.Metrics.stepped(d.cfg.Clock.Since(now))
	if d.core.LaunchesHeld() {
		d.budget.usedUp()
	}
	d.cfg.Metrics.output(out)
	d.cfg.Metrics.count(d.core, now)
	id := d.core.FrameworkID()
	d.frameworkID.Store(&id)
	for _, l := range out.Logs {
		d.log.Info(l.Message, l.Args...)
	}
	for _, w := range out.Writes {
		if w.Agent != nil {
			d.probes.learnAgent(w.Agent.ID, w.Agent.Endpoint)
		}
	}
	for _, change := range out.Checks {
		d.changeChecks(ctx, change)
	}
	select {
	case d.outputs <- stepOutput{writes: out.Writes, calls: out.Calls, caller: d.caller, frameworkID: id, received: received}:
		return nil
	case err := <-d.outputFailed:
		return err
	case <-ctx.Done():
		return nil
	}
}

// adjustBudget ends an interval of the adaptive launch budget and gives
// the core the budget for the next when it changed.
func (d *Driver) adjustBudget(ctx context.Context) error {
	n := d.budget.adjust(d.core.cfg.MaxLaunching)
	d.cfg.Metrics.launchBudget.Set(float64(n))
	if n == d.budgetSent {
		return nil
	}
	d.budgetSent = n
	return d.step(ctx, LaunchBudget{Max: n})
}
