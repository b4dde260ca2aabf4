package scheduler

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"
	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli/apierrors"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli/httpsched"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/healthcheck"
	"github.com/bcs-mesos/bcs-mesos/pkg/launch"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/mesosconn"
	"github.com/bcs-mesos/bcs-mesos/pkg/mesoswire"
	"github.com/bcs-mesos/bcs-mesos/pkg/plan"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
	"github.com/bcs-mesos/bcs-mesos/proto"
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
	caller  calls.Caller // owned by Run's goroutine
	health  chan RemoteHealth
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
		messages: make(chan messageRequest, 64), waiters: map[string]waiter{},
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

// event is what the subscription goroutine hands the loop.
type event struct {
	in       Input
	err      error        // the subscription ended
	caller   calls.Caller // with SUBSCRIBED: where calls go from now on
	received time.Time    // when it came off the stream
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

func (d *Driver) run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	d.outputs, d.outputFailed = make(chan stepOutput, outputsQueued), make(chan error, 1)
	outputsDone := make(chan struct{})
	go func() {
		defer close(outputsDone)
		d.runOutputs(ctx, d.outputs, d.outputFailed)
	}()
	defer func() {
		close(d.outputs)
		<-outputsDone
	}()

	// Watch before reading, so no change slips between the two; a change
	// seen twice is harmless.
	watch, err := d.cfg.Store.Watch(ctx, "apps/", 0)
	if err != nil {
		return err
	}
	runWatch, err := d.cfg.Store.Watch(ctx, string(store.KindHookRun)+"/", 0)
	if err != nil {
		return err
	}
	settingsWatch, err := d.cfg.Store.Watch(ctx, string(store.KindAgentSettings)+"/", 0)
	if err != nil {
		return err
	}
	engineWatch, err := d.cfg.Store.Watch(ctx, store.EnginePrefix, 0)
	if err != nil {
		return err
	}
	objectWatches := make([]<-chan store.Event, len(referencedKinds))
	for i, kind := range referencedKinds {
		if objectWatches[i], err = d.cfg.Store.Watch(ctx, string(kind.store)+"/", 0); err != nil {
			return err
		}
	}
	fwID, err := d.cfg.Registry.FrameworkID(ctx)
	if err != nil {
		return err
	}
	apps, err := d.cfg.Registry.ListApps(ctx, "")
	if err != nil {
		return err
	}
	groups, err := d.cfg.Registry.AllTaskGroups(ctx)
	if err != nil {
		return err
	}
	sweeps, err := d.cfg.Registry.ListSweeps(ctx)
	if err != nil {
		return err
	}
	rollouts, err := d.cfg.Registry.ListRollouts(ctx)
	if err != nil {
		return err
	}
	runs, err := d.cfg.Registry.ListHookRuns(ctx, "")
	if err != nil {
		return err
	}
	var objects []manifest.Object
	var afterRestore []Input // secrets and identities that cannot be had now
	for _, kind := range referencedKinds {
		recs, err := d.cfg.Registry.ListObjects(ctx, kind.manifest, "")
		if err != nil {
			return err
		}
		if kind.manifest == manifest.KindSecret {
			read, failed := d.readSecrets(ctx, recs)
			objects, afterRestore = append(objects, read...), append(afterRestore, failed...)
			continue
		}
		for _, rec := range recs {
			obj, err := rec.Manifest()
			if err != nil {
				d.log.Error("stored object", "kind", kind.manifest, "namespace", rec.Namespace, "name", rec.Name, "err", err)
				continue
			}
			objects = append(objects, obj)
		}
	}
	settings, err := d.cfg.Registry.ListAgentSettings(ctx)
	if err != nil {
		return err
	}
	// The restored instances' remote checks start before the master
	// lists its agents: the stored agents' endpoints are refused already.
	agents, err := d.cfg.Registry.ListAgents(ctx)
	if err != nil {
		return err
	}
	for _, a := range agents {
		d.probes.learnAgent(a.ID, a.Endpoint)
	}
	engine, err := d.cfg.Registry.GetEngine(ctx)
	if err != nil {
		return err
	}
	engineSettings, err := d.cfg.Registry.GetEngineSettings(ctx)
	if err != nil {
		return err
	}
	if len(engineSettings.Values) > 0 {
		in, err := d.engineConfigInput(engineSettings)
		if err != nil {
			return err
		}
		afterRestore = append(afterRestore, in)
	}
	var identities map[string]*proto.Identity
	if d.cfg.Identities != nil {
		namespaces := make([]string, len(apps))
		for i, a := range apps {
			namespaces[i] = a.Namespace
		}
		var failed []Input
		identities, failed = d.namespaceIdentities(ctx, namespaces)
		afterRestore = append(afterRestore, failed...)
	}
	if err := d.step(ctx, Restore{FrameworkID: fwID, Apps: apps, Groups: groups, Sweeps: sweeps, Rollouts: rollouts,
		HookRuns: runs, Objects: objects, AgentSettings: settings, Engine: *engine, Identities: identities}); err != nil {
		return err
	}
	for _, in := range afterRestore {
		if err := d.step(ctx, in); err != nil {
			return err
		}
	}

	events := make(chan event, maxGathered)
	sub := subscription{events: events}
	defer sub.stop()
	if engine.Mode != registry.EngineStopped {
		sub.start(ctx, d)
	}
	ticker := d.cfg.Clock.NewTicker(d.cfg.TickInterval)
	defer ticker.Stop()
	for {
		var in Input
		var received []time.Time // of the status updates in, for the ack latency
		select {
		case <-ctx.Done():
			return nil
		case err := <-d.outputFailed:
			return err
		case ev := <-events:
			if in = d.subscriptionInput(ev); in == nil {
				continue
			}
			received = []time.Time{ev.received}
		case we, ok := <-watch:
			if !ok {
				if ctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("application watch closed")
			}
			if we.Err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("application watch: %w", we.Err)
			}
			in, err = appInput(we)
			if err != nil {
				d.log.Error("application record", "key", we.Entry.Key, "err", err)
				continue
			}
			if changed, ok := in.(AppChanged); ok {
				if err := d.ensureIdentity(ctx, changed.App.Namespace); err != nil {
					return err
				}
			}
		case we, ok := <-objectWatches[0]:
			if in, err = d.objectInput(ctx, referencedKinds[0], we, ok); in == nil {
				if err != nil {
					return err
				}
				continue
			}
		case we, ok := <-objectWatches[1]:
			if in, err = d.objectInput(ctx, referencedKinds[1], we, ok); in == nil {
				if err != nil {
					return err
				}
				continue
			}
		case we, ok := <-objectWatches[2]:
			if in, err = d.objectInput(ctx, referencedKinds[2], we, ok); in == nil {
				if err != nil {
					return err
				}
				continue
			}
		case read := <-d.secretReads:
			if in = d.secretReadInput(ctx, read); in == nil {
				continue
			}
		case we, ok := <-runWatch:
			if in, err = d.hookRunInput(ctx, we, ok); in == nil {
				if err != nil {
					return err
				}
				continue
			}
		case we, ok := <-settingsWatch:
			if in, err = d.watchInput(ctx, "agent settings", we, ok, settingsInput); in == nil {
				if err != nil {
					return err
				}
				continue
			}
		case we, ok := <-engineWatch:
			if in, err = d.watchInput(ctx, "engine", we, ok, d.engineInput); in == nil {
				if err != nil {
					return err
				}
				continue
			}
			// Stopped, the framework leaves Mesos (its tasks keep running
			// for the failover timeout); started, it subscribes again. A
			// change of the engine's configuration is the core's only.
			mode, isMode := in.(EngineChanged)
			switch {
			case isMode && mode.Engine.Mode == registry.EngineStopped && sub.running():
				sub.stop()
				d.caller = nil
				if err := d.step(ctx, Disconnected{}); err != nil {
					return err
				}
			case isMode && mode.Engine.Mode != registry.EngineStopped && !sub.running():
				sub.start(ctx, d)
			}
		case op := <-d.ops:
			in = op
		case req := <-d.messages:
			req.sent <- d.sendMessage(ctx, req)
			continue
		case q := <-d.queries:
			q(d.core, d.cfg.Clock.Now())
			continue
		case h := <-d.health:
			in = h
		case <-ticker.Chan():
			if err := d.retryIdentities(ctx); err != nil {
				return err
			}
			in = Tick{}
		}
		var held *event
		if updates, ok := in.(StatusUpdates); ok {
			in, received, held = gatherStatuses(updates, received, events)
		} else {
			received = nil
		}
		if err := d.step(ctx, in, received...); err != nil {
			return err
		}
		// The event that ended the gathering is the next input, before
		// any other.
		if held != nil {
			if in := d.subscriptionInput(*held); in != nil {
				if err := d.step(ctx, in); err != nil {
					return err
				}
			}
		}
	}
}

// subscriptionInput is the core input of an event from the subscription;
// nil when the core has nothing to do with it (an executor's answer to a
// message, which goes to its waiter).
func (d *Driver) subscriptionInput(ev event) Input {
	if ev.err != nil {
		d.caller = nil
		return Disconnected{}
	}
	if ev.caller != nil {
		d.caller = ev.caller
	}
	if m, ok := ev.in.(ExecutorMessage); ok && d.answered(m) {
		return nil
	}
	return ev.in
}

// maxGathered bounds the status updates one step applies, and the
// subscription's queue: a step's acknowledgements wait for all its
// records to be stored.
const maxGathered = 1024

// gatherStatuses adds to updates the status updates queued behind them,
// up to maxGathered, with the times they came (received). It stops at
// the first other event, which it returns to be the next input.
func gatherStatuses(updates StatusUpdates, received []time.Time, events <-chan event) (StatusUpdates, []time.Time, *event) {
	for len(updates.Statuses) < maxGathered {
		select {
		case ev := <-events:
			more, ok := ev.in.(StatusUpdates)
			if !ok || ev.err != nil || ev.caller != nil {
				return updates, received, &ev
			}
			updates.Statuses = append(updates.Statuses, more.Statuses...)
			received = append(received, ev.received)
		default:
			return updates, received, nil
		}
	}
	return updates, received, nil
}

// subscription is the goroutine that keeps the Mesos subscription open,
// while the engine is not stopped.
type subscription struct {
	events chan event
	cancel context.CancelFunc
	done   chan struct{}
}

func (s *subscription) running() bool { return s.cancel != nil }

func (s *subscription) start(ctx context.Context, d *Driver) {
	subCtx, cancel := context.WithCancel(ctx)
	s.cancel, s.done = cancel, make(chan struct{})
	go func(done chan struct{}) {
		defer close(done)
		d.subscribeLoop(subCtx, s.events)
	}(s.done)
}

// stop ends the subscription and drops what it had sent: the core is
// told it is disconnected.
func (s *subscription) stop() {
	if s.cancel == nil {
		return
	}
	s.cancel()
	<-s.done
	s.cancel = nil
	for {
		select {
		case <-s.events:
		default:
			return
		}
	}
}

// watchInput turns one event of a store watch into a core input with
// decode; nil (and an error when the watch ended badly) when there is none.
// A record it cannot read is logged and skipped.
func (d *Driver) watchInput(ctx context.Context, what string, we store.Event, ok bool, decode func(store.Event) (Input, error)) (Input, error) {
	switch {
	case !ok:
		if ctx.Err() != nil {
			return nil, nil
		}
		return nil, fmt.Errorf("%s watch closed", what)
	case we.Err != nil:
		if ctx.Err() != nil {
			return nil, nil
		}
		return nil, fmt.Errorf("%s watch: %w", what, we.Err)
	}
	in, err := decode(we)
	if err != nil {
		d.log.Error("stored record", "what", what, "key", we.Entry.Key, "err", err)
		return nil, nil
	}
	return in, nil
}

func settingsInput(we store.Event) (Input, error) {
	if we.Type == store.EventDelete {
		parts := strings.Split(we.Entry.Key, "/")
		return AgentSettingsChanged{Settings: &registry.AgentSettings{Hostname: parts[len(parts)-1]}}, nil
	}
	var s registry.AgentSettings
	if err := json.Unmarshal(we.Entry.Value, &s); err != nil {
		return nil, err
	}
	return AgentSettingsChanged{Settings: &s}, nil
}

// engineInput is the input of a change under store.EnginePrefix: of
// the engine's mode, or of its configuration.
func (d *Driver) engineInput(we store.Event) (Input, error) {
	if we.Entry.Key == store.EngineConfigKey {
		var s registry.EngineSettings
		if we.Type != store.EventDelete {
			if err := json.Unmarshal(we.Entry.Value, &s); err != nil {
				return nil, err
			}
		}
		return d.engineConfigInput(&s)
	}
	if we.Type == store.EventDelete {
		return EngineChanged{Engine: registry.Engine{Mode: registry.EngineRunning}}, nil
	}
	var e registry.Engine
	if err := json.Unmarshal(we.Entry.Value, &e); err != nil {
		return nil, err
	}
	return EngineChanged{Engine: e}, nil
}

// engineConfigInput is the engine's configuration with settings over
// the driver's defaults, for the core; the driver takes its own part,
// the agent sync interval, which syncAgents waits from its next wait.
func (d *Driver) engineConfigInput(settings *registry.EngineSettings) (Input, error) {
	cfg, err := settings.Over(d.engineDefaults)
	if err != nil {
		return nil, err
	}
	d.agentSyncInterval.Store(int64(cfg.AgentSyncInterval))
	return EngineConfigChanged{Config: cfg}, nil
}

// referencedKind is a kind of object the core reads, with its key kind.
type referencedKind struct {
	manifest manifest.Kind
	store    store.Kind
}

// referencedKinds are watched for the core: configmaps, secrets (which
// launches inject), then depends objects (which dependency pods run).
var referencedKinds = []referencedKind{{manifest.KindConfigMap, store.KindConfigMap}, {manifest.KindSecret, store.KindSecret},
	{manifest.KindDepends, store.KindDepends}}

// objectInput turns a change of a referenced object into a core input;
// nil (and an error when the watch ended badly) when there is none.
func (d *Driver) objectInput(ctx context.Context, kind referencedKind, we store.Event, ok bool) (Input, error) {
	switch {
	case !ok:
		if ctx.Err() != nil {
			return nil, nil
		}
		return nil, fmt.Errorf("%s watch closed", kind.store)
	case we.Err != nil:
		if ctx.Err() != nil {
			return nil, nil
		}
		return nil, fmt.Errorf("%s watch: %w", kind.store, we.Err)
	case we.Type == store.EventDelete:
		parts := strings.Split(we.Entry.Key, "/")
		if len(parts) != 3 {
			d.log.Error("unexpected key", "key", we.Entry.Key)
			return nil, nil
		}
		if kind.manifest == manifest.KindSecret {
			d.forgetSecret(parts[1], parts[2])
		}
		return ObjectRemoved{Kind: kind.manifest, Namespace: parts[1], Name: parts[2]}, nil
	}
	var rec registry.Object
	if err := json.Unmarshal(we.Entry.Value, &rec); err != nil {
		d.log.Error("stored object", "key", we.Entry.Key, "err", err)
		return nil, nil
	}
	if kind.manifest == manifest.KindSecret {
		rec.Revision = we.Entry.Revision
		return d.secretChanged(ctx, &rec), nil
	}
	obj, err := rec.Manifest()
	if err != nil {
		d.log.Error("stored object", "key", we.Entry.Key, "err", err)
		return nil, nil
	}
	return ObjectChanged{Object: obj}, nil
}

// hookRunInput turns a written hook run into a core input; nil for a
// deletion (the core forgets runs itself) or a record it cannot read, and
// an error when the watch ended badly.
func (d *Driver) hookRunInput(ctx context.Context, we store.Event, ok bool) (Input, error) {
	switch {
	case !ok:
		if ctx.Err() != nil {
			return nil, nil
		}
		return nil, fmt.Errorf("hook run watch closed")
	case we.Err != nil:
		if ctx.Err() != nil {
			return nil, nil
		}
		return nil, fmt.Errorf("hook run watch: %w", we.Err)
	case we.Type == store.EventDelete:
		return nil, nil
	}
	var run registry.HookRun
	if err := json.Unmarshal(we.Entry.Value, &run); err != nil {
		d.log.Error("stored hook run", "key", we.Entry.Key, "err", err)
		return nil, nil
	}
	run.Revision = we.Entry.Revision
	return HookRunChanged{Run: &run}, nil
}

func appInput(we store.Event) (Input, error) {
	if we.Type == store.EventDelete {
		parts := strings.Split(we.Entry.Key, "/")
		if len(parts) != 3 {
			return nil, fmt.Errorf("unexpected key %q", we.Entry.Key)
		}
		return AppRemoved{Namespace: parts[1], Name: parts[2]}, nil
	}
	var app registry.App
	if err := json.Unmarshal(we.Entry.Value, &app); err != nil {
		return nil, err
	}
	app.Revision = we.Entry.Revision
	return AppChanged{App: &app}, nil
}

// step runs one input through the core and hands its output to the
// output goroutine (runOutputs), which stores it, then sends its calls,
// while the loop takes the next input. received are the arrival times of
// the status updates in, for the ack latency.
func (d *Driver) step(ctx context.Context, in Input, received ...time.Time) error {
	now := d.cfg.Clock.Now()
	d.cfg.Metrics.input(in)
	out := d.core.Step(now, in)
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

// stepOutput is what a step leaves to do: store writes, then send calls
// to caller (none when nil: not subscribed).
type stepOutput struct {
	writes      []Write
	calls       []*scheduler.Call
	caller      calls.Caller
	frameworkID string
	received    []time.Time
}

// outputsQueued bounds the steps whose output waits for the output
// goroutine: past it the loop waits, and the events queue meanwhile are
// gathered into larger steps.
const outputsQueued = 4

// runOutputs stores each step's writes and then sends its calls, step
// after step in order, until outputs is closed: nothing is sent before
// what its step decided is stored. Storing and sending are two stages, so
// that a step's writes are stored while the step before sends its calls.
// When storing fails it reports the error on outputFailed, and stores
// and sends nothing more: the driver stops and the next leader starts
// over from the store.
func (d *Driver) runOutputs(ctx context.Context, outputs <-chan stepOutput, failed chan<- error) {
	stored := make(chan stepOutput, outputsQueued)
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		for o := range stored {
			if o.caller != nil {
				d.send(ctx, o.caller, o.frameworkID, o.calls)
			}
			for _, at := range o.received {
				d.cfg.Metrics.acknowledged(d.cfg.Clock.Since(at)) // stored, then acknowledged
			}
		}
	}()
	var err error
	for o := range outputs {
		if err != nil {
			continue
		}
		if err = d.persist(ctx, o.writes); err != nil {
			failed <- fmt.Errorf("persist: %w", err)
			continue
		}
		stored <- o
	}
	close(stored)
	<-sent
}

// callsInFlight bounds the calls of a step sent at once.
const callsInFlight = 16

// send sends a step's calls in order, but for runs of calls whose order
// does not matter (acknowledgements, accepts and declines of distinct
// offers), which go callsInFlight at a time: a step of a thousand status
// updates would otherwise wait a thousand round trips. A failed call is
// logged; the master resends what matters (offers, updates) and the core
// retries kills and reconciliation.
func (d *Driver) send(ctx context.Context, caller calls.Caller, frameworkID string, cs []*scheduler.Call) {
	var (
		wg      sync.WaitGroup
		slots   = make(chan struct{}, callsInFlight)
		mu      sync.Mutex
		failed  int
		lastErr error
		last    scheduler.Call_Type
	)
	one := func(call *scheduler.Call) {
		start := d.cfg.Clock.Now()
		err := calls.CallNoData(ctx, caller, call)
		d.cfg.Metrics.mesosCall(call.GetType(), d.cfg.Clock.Since(start))
		if err != nil {
			mu.Lock()
			failed, lastErr, last = failed+1, err, call.GetType()
			mu.Unlock()
		}
	}
	for _, call := range cs {
		call = call.With(calls.Framework(frameworkID))
		if !unordered(call.GetType()) {
			wg.Wait()
			one(call)
			continue
		}
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			one(call)
		})
	}
	wg.Wait()
	if failed > 0 {
		d.log.Warn("mesos calls failed", "failed", failed, "of", len(cs), "type", last.String(), "err", lastErr)
	}
}

// unordered tells the calls that may overtake one another.
func unordered(t scheduler.Call_Type) bool {
	switch t {
	case scheduler.Call_ACKNOWLEDGE, scheduler.Call_ACCEPT, scheduler.Call_DECLINE:
		return true
	}
	return false
}

// persist stores a step's writes in order, all of them before any of
// the step's calls is sent: the plain writes of the scheduler's own
// records in as few store transactions as etcd allows (registry.Txn),
// committed before each write that reads or checks what is stored (an
// application's status, an agent, a dependency pod...) and at the end.
func (d *Driver) persist(ctx context.Context, writes []Write) error {
	txn := d.cfg.Registry.Txn()
	var notices []registry.Notice // of the writes in txn, logged once stored
	commit := func() error {
		if txn.Len() == 0 {
			return nil
		}
		start := d.cfg.Clock.Now()
		err := txn.Commit(ctx)
		d.cfg.Metrics.storeWrite(d.cfg.Clock.Since(start))
		if err != nil {
			return err
		}
		for _, n := range notices {
			d.log.Info("notice", "type", n.Type, "taskgroup", n.TaskGroupID, "id", n.ID, "message", n.Message)
		}
		txn, notices = d.cfg.Registry.Txn(), nil
		return nil
	}
	for i := 0; i < len(writes); i++ {
		w := writes[i]
		added, err := addToTxn(txn, w)
		if err != nil {
			return err
		}
		if added {
			notices = append(notices, w.Notices...)
			continue
		}
		if err := commit(); err != nil {
			return err
		}
		start := d.cfg.Clock.Now()
		if w.AppStatus != nil {
			// A step's statuses come together (refreshStatuses): stored
			// together.
			var statuses []registry.AppStatusChange
			for ; i < len(writes) && writes[i].AppStatus != nil; i++ {
				statuses = append(statuses, writes[i].AppStatus.change())
			}
			i--
			err = d.cfg.Registry.SetAppStatuses(ctx, statuses)
		} else {
			err = d.persistOne(ctx, w)
		}
		if err != nil {
			return err
		}
		d.cfg.Metrics.storeWrite(d.cfg.Clock.Since(start))
	}
	return commit()
}

// addToTxn adds w to txn if it is a plain write of the scheduler's own
// records, and tells whether it did.
func addToTxn(txn *registry.Txn, w Write) (bool, error) {
	switch {
	case w.TaskGroup != nil:
		return true, txn.PutTaskGroup(w.TaskGroup, w.Notices...)
	case w.DeleteGroup != nil:
		return true, txn.DeleteTaskGroup(w.DeleteGroup.Namespace, w.DeleteGroup.App, w.DeleteGroup.Index)
	case w.FrameworkID != "":
		txn.SetFrameworkID(w.FrameworkID)
		return true, nil
	case w.Sweep != nil:
		return true, txn.PutSweep(w.Sweep)
	case w.DeleteSweep != "":
		return true, txn.DeleteSweep(w.DeleteSweep)
	case w.Rollout != nil:
		return true, txn.PutRollout(w.Rollout)
	case w.DeleteHook != nil:
		return true, txn.DeleteHookRun(w.DeleteHook.Namespace, w.DeleteHook.Name)
	}
	return false, nil
}

// persistOne stores a write that reads or checks what is stored, in its
// own transaction.
func (d *Driver) persistOne(ctx context.Context, w Write) error {
	r := d.cfg.Registry
	switch {
	case w.RemoveApp != nil:
		err := r.RemoveApp(ctx, w.RemoveApp.Namespace, w.RemoveApp.Name)
		if errors.Is(err, errdefs.ErrNotFound) {
			return nil
		}
		return err
	case w.Agent != nil:
		return r.RecordAgent(ctx, w.Agent.ID, w.Agent.Hostname, w.Agent.Endpoint, w.Agent.Attributes)
	case w.Maintenance != nil:
		return r.SetAgentMaintenance(ctx, w.Maintenance.AgentID, w.Maintenance.Hostname, w.Maintenance.Window)
	case w.HookRun != nil:
		if err := r.CreateHookRun(ctx, w.HookRun); err != nil && !errors.Is(err, errdefs.ErrAlreadyExists) {
			return err
		}
		return nil
	case w.DependencyPod != nil:
		err := r.PutDependencyPod(ctx, w.DependencyPod)
		if errors.Is(err, errdefs.ErrConflict) {
			// The pod is being deleted (the core asks again once it is
			// gone), or an operator's application holds its name (it stays
			// refused: the log says why the pod is missing).
			d.log.Warn("dependency pod not written", "namespace", w.DependencyPod.Namespace, "name", w.DependencyPod.Name, "err", err)
			return nil
		}
		return err
	case w.DeleteDependencyPod != nil:
		err := r.DeleteDependencyPod(ctx, w.DeleteDependencyPod.Namespace, w.DeleteDependencyPod.Name)
		switch {
		case errors.Is(err, errdefs.ErrNotFound):
			return nil // gone already
		case errors.Is(err, errdefs.ErrConflict):
			d.log.Warn("dependency pod not deleted", "namespace", w.DeleteDependencyPod.Namespace, "name", w.DeleteDependencyPod.Name, "err", err)
			return nil
		}
		return err
	}
	return nil
}

// changeChecks starts or stops the remote health checks of a task group:
// one checker per check, each reporting its verdicts as RemoteHealth.
func (d *Driver) changeChecks(ctx context.Context, change CheckChange) {
	if cancel := d.checks[change.TaskGroupID]; cancel != nil {
		cancel()
		delete(d.checks, change.TaskGroupID)
	}
	if len(change.Checks) == 0 {
		return
	}
	checkCtx, cancel := context.WithCancel(ctx)
	d.checks[change.TaskGroupID] = cancel
	for i, probe := range change.Checks {
		address := probe.Address()
		prober, err := remoteProber(probe, d.probes.dial(change.Namespace))
		if err != nil {
			d.report(checkCtx, RemoteHealth{TaskGroupID: change.TaskGroupID, Check: i, Address: address, Message: err.Error()})
			continue
		}
		checker := &healthcheck.Checker{Prober: prober, Policy: healthcheck.PolicyOf(probe.Check)}
		go checker.Run(checkCtx, func(r healthcheck.Result) {
			if r.InGrace {
				return
			}
			d.report(checkCtx, RemoteHealth{TaskGroupID: change.TaskGroupID, Check: i, Address: address, Healthy: r.Healthy, Message: r.Message, Kill: r.Kill})
		})
	}
}

// remoteProber probes what probe names, connecting through dial; an
// instance with no address yet (a pod whose IP its executor has not
// reported) is an error that says so.
func remoteProber(probe launch.RemoteProbe, dial healthcheck.DialFunc) (healthcheck.Prober, error) {
	if probe.Host == "" {
		return nil, fmt.Errorf("%s health check: the instance has no address to probe yet: %w", probe.Check.Type, errdefs.ErrUnavailable)
	}
	return healthcheck.NewProber(probe.Check, probe.Host, nil, nil, dial)
}

func (d *Driver) report(ctx context.Context, h RemoteHealth) {
	select {
	case d.health <- h:
	case <-ctx.Done():
	}
}

// subscribeLoop keeps a subscription open, reconnecting with capped
// exponential backoff, and forwards its events.
func (d *Driver) subscribeLoop(ctx context.Context, events chan<- event) {
	const initialBackoff = 500 * time.Millisecond
	backoff := initialBackoff
	for attempt := 0; ; attempt++ {
		master := d.cfg.Masters[attempt%len(d.cfg.Masters)]
		subscribed, err := d.subscribeOnce(ctx, master, events)
		if ctx.Err() != nil {
			return
		}
		if subscribed {
			backoff = initialBackoff
		}
		var undecodable *mesoswire.DecodeError
		if errors.As(err, &undecodable) {
			d.log.Error("undecodable event from the master; subscribing again", "master", master, "err", err, "retry_in", backoff)
		} else {
			d.log.Warn("mesos subscription ended", "master", master, "err", err, "retry_in", backoff)
		}
		select {
		case events <- event{err: err}:
		case <-ctx.Done():
			return
		}
		select {
		case <-d.cfg.Clock.After(backoff):
		case <-ctx.Done():
			return
		}
		backoff = min(2*backoff, d.cfg.BackoffMax)
	}
}

// subscribeOnce subscribes to one master and reads its events until the
// stream ends or the heartbeats stop. It reports whether the master
// accepted the subscription (SUBSCRIBED arrived).
func (d *Driver) subscribeOnce(ctx context.Context, master string, events chan<- event) (bool, error) {
	conn := []httpcli.ConfigOpt{httpcli.Timeout(10 * time.Second),
		// A connection for each call a step sends at once (send).
		httpcli.Transport(mesosconn.KeepConns(callsInFlight))}
	if d.cfg.Mesos.TLS != nil {
		conn = append(conn, httpcli.TLSConfig(d.cfg.Mesos.TLS))
	}
	if d.cfg.Mesos.Authenticates() {
		// Read at each subscription: a rotated secret takes effect.
		secret, err := d.cfg.Mesos.Secret()
		if err != nil {
			return false, err
		}
		conn = append(conn, httpcli.BasicAuth(d.cfg.Mesos.Principal, secret))
	}
	cli := httpcli.New(
		httpcli.Endpoint(strings.TrimSuffix(master, "/")+"/api/v1/scheduler"),
		httpcli.Codec(d.cfg.Encoding),
		httpcli.Do(httpcli.With(conn...)),
	)
	caller := httpsched.NewCaller(cli, httpsched.MaxRedirects(4))
	failover := d.cfg.FailoverTimeout.Seconds()
	checkpoint := true
	info := &mesos.FrameworkInfo{
		User: d.cfg.User, Name: "bcs", Role: &d.cfg.Role, FailoverTimeout: &failover, Checkpoint: &checkpoint,
		Capabilities: []mesos.FrameworkInfo_Capability{
			{Type: mesos.FrameworkInfo_Capability_PARTITION_AWARE},
			{Type: mesos.FrameworkInfo_Capability_TASK_KILLING_STATE},
		},
	}
	if d.cfg.Mesos.Principal != "" {
		info.Principal = &d.cfg.Mesos.Principal
	}
	subscribe := calls.Subscribe(info)
	if id := d.knownFrameworkID(); id != "" {
		info.ID = &mesos.FrameworkID{Value: id}
		subscribe = subscribe.With(calls.Framework(id))
	}
	resp, err := caller.Call(ctx, subscribe)
	if err != nil {
		return false, d.subscriptionRefused(master, err)
	}
	defer resp.Close()

	decoded := make(chan *scheduler.Event)
	decodeErr := make(chan error, 1)
	go func() {
		for {
			var e scheduler.Event
			if err := resp.Decode(&e); err != nil {
				decodeErr <- err
				return
			}
			select {
			case decoded <- &e:
			case <-ctx.Done():
				return
			}
		}
	}()
	subscribed := false
	agentsChanged := make(chan struct{}, 1) // pokes the agent sync (agentsync.go)
	forward := func(ev event) error {
		select {
		case events <- ev:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	heartbeat := 30 * time.Second
	timer := d.cfg.Clock.NewTimer(3 * heartbeat)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return subscribed, ctx.Err()
		case err := <-decodeErr:
			// A SUBSCRIBED we cannot read still names our framework: keep
			// that ID, or the next SUBSCRIBE registers another framework.
			var undecodable *mesoswire.DecodeError
			if !subscribed && errors.As(err, &undecodable) {
				if id := mesoswire.SubscribedFrameworkID(undecodable); id != "" {
					d.frameworkID.Store(&id)
					if ferr := forward(event{in: LearnedFrameworkID{FrameworkID: id}}); ferr != nil {
						return false, ferr
					}
				}
			}
			return subscribed, err
		case <-timer.Chan():
			return subscribed, fmt.Errorf("no event for %s: missed heartbeats", 3*heartbeat)
		case e := <-decoded:
			if s := e.GetSubscribed(); s != nil && s.GetHeartbeatIntervalSeconds() > 0 {
				heartbeat = time.Duration(s.GetHeartbeatIntervalSeconds() * float64(time.Second))
			}
			if agentChangeHint(e) {
				select {
				case agentsChanged <- struct{}{}:
				default: // a sync is due already
				}
			}
			if in := eventInput(e); in != nil {
				ev := event{in: in, received: d.cfg.Clock.Now()}
				if sub, ok := in.(Subscribed); ok {
					if !subscribed {
						syncCtx, stopSync := context.WithCancel(ctx)
						defer stopSync()
						go d.syncAgents(syncCtx, master, agentsChanged, func(in AgentsListed) error { return forward(event{in: in}) })
					}
					subscribed = true
					ev.caller = caller
					d.frameworkID.Store(&sub.FrameworkID)
				}
				if err := forward(ev); err != nil {
					return subscribed, err
				}
			}
			// The master's silence counts from here: the time the loop
			// took to take the event (a long step, a full queue) is not
			// the master's, and the stream held its events meanwhile.
			timer.Reset(3 * heartbeat)
			if e.GetType() == scheduler.Event_ERROR {
				return subscribed, fmt.Errorf("master error: %s", e.GetError().GetMessage())
			}
		}
	}
}

// subscriptionRefused says what a failed SUBSCRIBE means when the
// master did not take the framework's credential or the driver did not
// take the master's certificate.
func (d *Driver) subscriptionRefused(master string, err error) error {
	var unverified *tls.CertificateVerificationError
	switch {
	case apierrors.CodeNotAuthenticated.Matches(err) && d.cfg.Mesos.Authenticates():
		return fmt.Errorf("master %s refused the credential of principal %q (is the secret of --mesos-secret-file among the master's --credentials?): %w: %w",
			master, d.cfg.Mesos.Principal, errdefs.ErrUnauthenticated, err)
	case apierrors.CodeNotAuthenticated.Matches(err):
		return fmt.Errorf("master %s authenticates frameworks: give the framework a principal and its secret (--mesos-principal, --mesos-secret-file): %w: %w",
			master, errdefs.ErrUnauthenticated, err)
	case errors.As(err, &unverified):
		return fmt.Errorf("master %s: cannot verify its TLS certificate (--mesos-cacert names the CA that signed it): %w: %w", master, errdefs.ErrUnauthenticated, err)
	}
	return err
}

// knownFrameworkID is the ID to subscribe with; "" registers a new
// framework.
func (d *Driver) knownFrameworkID() string {
	if id := d.frameworkID.Load(); id != nil {
		return *id
	}
	return ""
}

// eventInput turns a Mesos event into a core input; nil when the core has
// nothing to do with it.
func eventInput(e *scheduler.Event) Input {
	switch e.GetType() {
	case scheduler.Event_SUBSCRIBED:
		return Subscribed{FrameworkID: e.GetSubscribed().GetFrameworkID().GetValue()}
	case scheduler.Event_OFFERS:
		return OffersIn{Offers: e.GetOffers().GetOffers()}
	case scheduler.Event_RESCIND:
		return Rescind{OfferID: e.GetRescind().OfferID.Value}
	case scheduler.Event_INVERSE_OFFERS:
		return InverseOffersIn{InverseOffers: e.GetInverseOffers().GetInverseOffers()}
	case scheduler.Event_RESCIND_INVERSE_OFFER:
		return RescindInverseOffer{OfferID: e.GetRescindInverseOffer().InverseOfferID.Value}
	case scheduler.Event_UPDATE:
		return StatusUpdates{Statuses: []mesos.TaskStatus{e.GetUpdate().GetStatus()}}
	case scheduler.Event_MESSAGE:
		m := e.GetMessage()
		return ExecutorMessage{AgentID: m.AgentID.Value, ExecutorID: m.ExecutorID.Value, Data: m.GetData()}
	}
	return nil
}
