package scheduler

import (
	"cmp"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/bcs-mesos/bcs-mesos/pkg/constraint"
	"github.com/bcs-mesos/bcs-mesos/pkg/launch"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/offer"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/rollout"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// ExecutorBinary is how agents get and start one of our executors.
type ExecutorBinary struct {
	URI  string   // file:// or http(s):// address the Mesos fetcher downloads
	Args []string // extra arguments
}

// Config configures a Core. Zero durations take the documented defaults.
type Config struct {
	ContainerExecutor ExecutorBinary
	ProcessExecutor   ExecutorBinary
	// Executor is the executor's own resources; default offer.DefaultExecutor.
	Executor offer.Resources
	// RefuseSeconds filters declined offers; default 5 (Mesos's own default).
	RefuseSeconds float64
	// ReconcileInterval between implicit reconciliations; default 10m.
	ReconcileInterval time.Duration
	// RetryInterval resends unanswered explicit reconciliations and kills
	// (beyond the kill grace period); default 30s.
	RetryInterval time.Duration
	// ReconcileBatch is how many tasks one explicit reconciliation asks
	// about, the next asked once the last is answered; default
	// DefaultReconcileBatch.
	ReconcileBatch int
	// WorkBaseDir and RunBaseDir are the process pods' roots on agents
	// (${work_base_dir}, ${run_base_dir}); defaults /data/bcs/work and
	// /data/bcs/run.
	WorkBaseDir, RunBaseDir string
	// PerAgentBaseDirs appends the agent's hostname to WorkBaseDir and
	// RunBaseDir: for agents that share a machine (the dev cluster), whose
	// instances of one ID — a move's two launches — must not share a
	// work path or pid file.
	PerAgentBaseDirs bool
	// SchedulerURL is the API's address (${scheduler_url}).
	SchedulerURL string
	// Egress is a namespace's egress policy, which its task specs carry
	// to the executors; nil sends none.
	Egress func(namespace string) *proto.Egress
	// Seed makes placements reproducible.
	Seed uint64
	// Flapping is when restarts make a flapping notice (notices.go).
	Flapping FlappingRule
	// DependsGCDelay is how long a dependency pod outlives its last
	// user; default DefaultDependsGCDelay.
	DependsGCDelay time.Duration
	// MaxLaunching bounds the launches sent and not yet running: past
	// it, pending instances wait for launches under way to start, so that
	// their status updates never come faster than the driver stores and
	// acknowledges them (an update unacknowledged for 10 s is sent again);
	// default DefaultMaxLaunching. The driver's adaptive budget
	// (LaunchBudget) keeps it lower while acknowledgements are slow.
	MaxLaunching int
	// UsageInterval is how often the instances of an application with
	// App.UsageReport report their usage; default DefaultUsageInterval.
	UsageInterval time.Duration
	// Identities: launches carry their namespace's identity on the
	// agents (NamespaceIdentity feeds them; the Driver sets it when it
	// has an IdentitySource); an instance of a namespace without one
	// waits.
	Identities bool
}

// DefaultMaxLaunching is Config.MaxLaunching's default: a few seconds of
// what one scheduler stores (about 3,600 status updates a second, two an
// instance, on a 2-core machine; make bench-e2e measures it).
const DefaultMaxLaunching = 10000

// DefaultUsageInterval is Config.UsageInterval's default: the
// autoscaler's default evaluation interval (HPA's sync period).
const DefaultUsageInterval = 15 * time.Second

func (cfg *Config) defaults() {
	if cfg.Executor.CPUs == 0 && cfg.Executor.Mem == 0 && cfg.Executor.Disk == 0 {
		cfg.Executor = offer.DefaultExecutor
	}
	if cfg.RefuseSeconds == 0 {
		cfg.RefuseSeconds = 5
	}
	if cfg.UsageInterval <= 0 {
		cfg.UsageInterval = DefaultUsageInterval
	}
	if cfg.MaxLaunching <= 0 {
		cfg.MaxLaunching = DefaultMaxLaunching
	}
	if cfg.ReconcileInterval == 0 {
		cfg.ReconcileInterval = DefaultReconcileInterval
	}
	if cfg.RetryInterval == 0 {
		cfg.RetryInterval = 30 * time.Second
	}
	if cfg.ReconcileBatch <= 0 {
		cfg.ReconcileBatch = DefaultReconcileBatch
	}
	if cfg.WorkBaseDir == "" {
		cfg.WorkBaseDir = proto.DefaultWorkBaseDir
	}
	if cfg.RunBaseDir == "" {
		cfg.RunBaseDir = proto.DefaultRunBaseDir
	}
	if cfg.DependsGCDelay == 0 {
		cfg.DependsGCDelay = DefaultDependsGCDelay
	}
}

// Defaults the flags of bcs-scheduler show.
const (
	DefaultReconcileInterval = 10 * time.Minute
	// DefaultReconcileBatch keeps a new leader's questions about a fleet
	// from queueing the events of everything else — the first offers, a
	// new launch's statuses — behind 100,000 answers; Aurora asks 1,000
	// at a time for the same reason.
	DefaultReconcileBatch  = 5000
	DefaultFailoverTimeout = 7 * 24 * time.Hour
)

// Core is the scheduler state machine. It is not safe for concurrent use:
// one goroutine (the Driver) steps it.
type Core struct {
	cfg         Config
	matcher     *offer.Matcher
	now         time.Time
	out         Output
	frameworkID string
	connected   bool
	suppressed  bool
	apps        map[string]*app      // by "namespace/name"
	tasks       map[string]*instance // current launches' task IDs
	offers      map[string]mesos.Offer
	agents      map[string]*agentInfo // learned from offers and the master's list
	// listed: the master's list of agents came since the restore; an
	// agent not known by then is gone (daemonsets.go).
	listed bool
	// reconciling holds task ID → agent ID of explicit reconciliation
	// questions not answered yet. They are asked in batches
	// (reconcile.go): reconcileOrder is the order, reconcileNext where
	// the next batch starts, reconcileAsked the last batch's unanswered.
	reconciling    map[string]string
	reconcileOrder []string
	reconcileNext  int
	reconcileAsked map[string]bool
	reconcileSent  time.Time
	implicitSent   time.Time
	killSent       map[string]time.Time // task ID → last KILL
	passes         uint64
	// sweeps are owed to agents where executors died (sweep.go), by
	// agent ID; sweepTasks maps their tasks in flight to the agent.
	sweeps     map[string]*registry.Sweep
	sweepTasks map[string]string
	sweepSeq   int
	// refs are the configmaps and secrets launches inject, and the
	// depends objects of dependency pods.
	refs *references
	// dirty are the applications whose rollout must be planned again.
	dirty map[*app]bool
	// touched are the applications whose status this step may have
	// changed: only theirs is computed again (appstatus.go).
	touched map[*app]bool
	// pendingSet holds every instance and successor in PhasePending, kept
	// by setPhase and where instances are made (trackPhase), so that
	// finding the launches that wait does not scan the fleet (pending);
	// it may still hold launches given up since, dropped when met.
	// launching holds those in PhaseLaunched, kept alike; launchesHeld is
	// set when a pass left launches waiting for it to shrink below
	// Config.MaxLaunching (launch budget). Each maps to when the instance
	// last became Pending in this process (zero for one restored from the
	// store), for the time from wanted to Running: only these two phases
	// lead to Running, and an instance keeps no such field of its own.
	pendingSet   map[*instance]time.Time
	launching    map[*instance]time.Time
	launchesHeld bool
	// pendingOrder is pendingSet in launch order (launchOrder), kept by
	// pending; pendingJoined says instances joined the set since it was
	// last sorted.
	pendingOrder  []*instance
	pendingJoined bool
	// budget is the driver's adaptive launch budget (LaunchBudget), under
	// Config.MaxLaunching; 0: none. updatesSent are the in-place updates
	// and hot patches sent and not yet applied, which count in it as
	// launches do; replacing the instances killed to be replaced and not
	// launched again yet, which count from their kill (killed sooner,
	// they would only stay down longer); updatesHeld the updates and
	// replacements it held back, heldOrder in the order held
	// (sendHeldUpdates).
	budget      int
	updatesSent map[*instance]bool
	replacing   map[*instance]bool
	updatesHeld map[*instance]bool
	heldOrder   []*instance
	// activeSeen is how many live instances the last snapshot held.
	activeSeen int
	// pendingPeak and launchingPeak are the most each held since it was
	// last made (shrunk).
	pendingPeak, launchingPeak int
	// written maps the instances persisted in this step to their write,
	// so that a step stores each instance once, in its last state.
	written map[*instance]int
	// hookRuns are the hook runs by "namespace/name" (hooks.go);
	// preDeleting the instances waiting for their PreDeleteHook.
	hookRuns    map[string]*registry.HookRun
	preDeleting map[*instance]bool
	// settings are the operator's agent settings by hostname (agents.go);
	// engine is the engine's mode.
	settings map[string]*registry.AgentSettings
	engine   registry.Engine
	// moving are the instances with a move queued or under way.
	moving map[*instance]bool
	// maintenance are the agents' announced maintenance windows, by
	// agent ID (maintenance.go).
	maintenance map[string]*maintenanceWindow
	// windowsChanged are the agents (ID to hostname) whose window this
	// step changed, to store at its end.
	windowsChanged map[string]string
	// notices are the notices made in this step, stored with their
	// instance's write (notices.go).
	notices map[*instance][]registry.Notice
	// deps are the dependency pods' countdowns and writes in flight
	// (depends.go).
	deps dependsState
	// identities are the namespaces' identities on the agents, and why
	// those without one have none (identities.go).
	identities       map[string]*proto.Identity
	identityProblems map[string]string
}

type app struct {
	// id is "namespace/name", the key of c.apps.
	id  string
	rec *registry.App
	// tmpl is the current version's template: the update revision.
	tmpl     *launch.Template
	tmplErr  error
	strategy rollout.Strategy
	// stable is the stable revision's template when it differs from tmpl.
	stable *launch.Template
	// ro is the rollout as last persisted; plan is the latest plan.
	ro   *registry.Rollout
	plan rollout.Result
	// labeled are the update and stable versions the instances were last
	// relabelled for.
	labeled   [2]uint64
	instances map[int]*instance
	// sorted is instances by index, kept until one is put or dropped
	// (put, drop): every step's rollout planning and placement read it.
	sorted   []*instance
	unplaced string // the last placement's rejections, "" when placed
	// unplacedBy is the launch unplaced is about: it holds while that
	// launch waits (unplacedNow), not after it went (a scale-down).
	unplacedBy *instance
	// moveWaits: unplaced is only a move's successor's; the instances
	// themselves run.
	moveWaits bool
	status    AppStatus
	// desired is a daemonset's count of eligible agents; byRank the IDs
	// of the instances its rollout plan ranks (daemonsets.go).
	desired int
	byRank  ranks
	// allocated are the allocations of its instances, by ID
	// (allocations.go).
	allocated map[int]*registry.Allocation
	// kept is what its rollout's last plan saw of its instances
	// (rollouts.go).
	kept keptRollout
}

func (a *app) key() string { return a.id }

type instance struct {
	app *app
	// rec is the stored record. Its Phase and KillReason are the
	// instance's, read through phase() and killReason() and written by
	// setPhase and kill: kept once, not also as fields of their own, as a
	// fleet has 100,000 instances.
	rec registry.TaskGroup
	// successor is the launch that replaces this instance when it moves
	// (moves.go); parent is the instance a successor replaces.
	successor, parent *instance
}

// phase is the instance's lifecycle phase.
func (inst *instance) phase() Phase { return Phase(inst.rec.Phase) }

// killReason says why the scheduler kills the instance, while it does.
func (inst *instance) killReason() KillReason { return KillReason(inst.rec.KillReason) }

// goingAway reports whether the instance is being killed to be removed:
// scaled down, deleted, or a daemonset's off an ineligible agent.
func (inst *instance) goingAway() bool {
	r := inst.killReason()
	return inst.phase() == PhaseKilling && (r == KillScaleDown || r == KillDelete || r == KillIneligible)
}

// moveTarget is where a successor may go: not to avoid, the agent the
// instance it replaces is on, and only to onlyHost when the move names
// one (a drift to a named agent). Both are "" for any other launch.
func (inst *instance) moveTarget() (avoid, onlyHost string) {
	p := inst.parent
	if p == nil {
		return "", ""
	}
	if p.rec.Move == nil {
		return p.rec.AgentID, ""
	}
	return p.rec.AgentID, p.rec.Move.ToHost
}

type agentInfo struct {
	id, hostname, ip string
	endpoint         string // host:port of its HTTP API, from the offer's URL
	attributes       []mesos.Attribute
	attrs            map[string]constraint.Value // attributes, as constraints read them
	recorded         time.Time                   // when its record was last written
	// seen is when it last offered or the master listed it active; gone
	// when a status said it left or the master listed it inactive or not
	// at all. The later says whether it is there (present).
	// free is what it last offered, less what was launched there since:
	// what explains why launches wait, and what plans place on. It is
	// known until a status tells that the agent left (agentLeft): it
	// offers nothing then.
	free       offer.Resources
	known      bool
	seen, gone time.Time
}

// present reports whether the agent is there, by the latest word on it.
func (info *agentInfo) present() bool { return !info.seen.IsZero() && info.seen.After(info.gone) }

// NewCore returns a Core; Restore is its first input.
func NewCore(cfg Config) (*Core, error) {
	cfg.defaults()
	m, err := offer.New(offer.Config{Executor: cfg.Executor})
	if err != nil {
		return nil, err
	}
	return &Core{
		cfg: cfg, matcher: m, suppressed: false,
		apps: map[string]*app{}, tasks: map[string]*instance{}, offers: map[string]mesos.Offer{},
		agents: map[string]*agentInfo{}, reconciling: map[string]string{}, reconcileAsked: map[string]bool{}, killSent: map[string]time.Time{},
		sweeps: map[string]*registry.Sweep{}, sweepTasks: map[string]string{}, refs: newReferences(),
		dirty: map[*app]bool{}, touched: map[*app]bool{}, pendingSet: map[*instance]time.Time{}, launching: map[*instance]time.Time{}, written: map[*instance]int{},
		updatesSent: map[*instance]bool{}, replacing: map[*instance]bool{}, updatesHeld: map[*instance]bool{},
		hookRuns: map[string]*registry.HookRun{}, preDeleting: map[*instance]bool{},
		settings: map[string]*registry.AgentSettings{}, engine: registry.Engine{Mode: registry.EngineRunning}, moving: map[*instance]bool{}, maintenance: map[string]*maintenanceWindow{},
		windowsChanged: map[string]string{},
		notices:        map[*instance][]registry.Notice{},
		deps:           newDependsState(),
		identities:     map[string]*proto.Identity{}, identityProblems: map[string]string{},
	}, nil
}

// FrameworkID returns the framework ID the core subscribes with.
func (c *Core) FrameworkID() string { return c.frameworkID }

// Step feeds one input at time now and returns what to persist and send.
func (c *Core) Step(now time.Time, in Input) Output {
	c.now, c.out = now, Output{}
	clear(c.written)
	clear(c.notices)
	switch in := in.(type) {
	case Restore:
		c.restore(in)
	case Subscribed:
		c.subscribed(in.FrameworkID)
	case LearnedFrameworkID:
		c.learnFrameworkID(in.FrameworkID)
	case Disconnected:
		c.connected = false
		clear(c.offers)
		for _, w := range c.maintenance {
			w.inverseOffer = "" // gone with the subscription; asked again
		}
	case OffersIn:
		c.offersIn(in.Offers)
	case AgentsListed:
		c.agentsListed(in)
	case Rescind:
		delete(c.offers, in.OfferID)
	case InverseOffersIn:
		c.inverseOffersIn(in.InverseOffers)
		c.agentsChanged()
	case RescindInverseOffer:
		c.rescindInverseOffer(in.OfferID)
	case StatusUpdates:
		for _, st := range in.Statuses {
			c.statusUpdate(st)
		}
	case ExecutorMessages:
		for _, m := range in.Messages {
			c.executorMessage(m)
		}
	case AppChanged:
		c.appChanged(in.App)
	case AppRemoved:
		c.appRemoved(in.Namespace, in.Name)
	case Operate:
		c.operate(in)
	case Drift:
		c.drift(in)
	case AgentSettingsChanged:
		c.agentSettingsChanged(in.Settings)
		c.agentsChanged()
	case EngineChanged:
		c.engineChanged(in.Engine)
	case EngineConfigChanged:
		c.engineConfigChanged(in.Config)
	case LaunchBudget:
		c.budget = in.Max
	case Tick:
		c.tick()
		if len(c.maintenance) > 0 {
			c.agentsChanged() // a window may have begun or ended
		}
	case RemoteHealth:
		c.remoteHealth(in)
	case HookRunChanged:
		c.hookRunChanged(in.Run)
	case AllocationChanged:
		c.allocationChanged(in)
	case ObjectChanged:
		c.objectChanged(in.Object)
	case ObjectRemoved:
		c.refs.remove(in.Kind, in.Namespace, in.Name)
	case SecretUnreadable:
		c.secretUnreadable(in)
	case NamespaceIdentity:
		c.namespaceIdentity(in)
	}
	if c.acting() {
		c.progressDrains()
		c.progressEvictions()
		c.progressMoves()
		c.progressRollouts()
		c.sendHeldUpdates()
	}
	c.answerInverseOffers()
	c.adjustOffers()
	c.reconcileDepends()
	c.refreshStatuses()
	c.pendingSet = shrunk(c.pendingSet, &c.pendingPeak)
	c.launching = shrunk(c.launching, &c.launchingPeak)
	return c.out
}

// shrunk returns m, or m made anew once it holds less than an eighth of
// the most it held since it was last made (peak). A Go map keeps the
// space of its largest size, and a fleet's first launch passes every
// instance through pendingSet: 100,000 entries of which none stay.
func shrunk[K comparable, V any](m map[K]V, peak *int) map[K]V {
	switch n := len(m); {
	case n > *peak:
		*peak = n
	case *peak >= 1024 && n < *peak/8:
		made := make(map[K]V, n)
		for k, v := range m {
			made[k] = v
		}
		m, *peak = made, n
	}
	return m
}

func (c *Core) write(w Write)             { c.out.Writes = append(c.out.Writes, w) }
func (c *Core) call(call *scheduler.Call) { c.out.Calls = append(c.out.Calls, call) }

// logf asks the driver to log a decision, with slog key-value pairs.
func (c *Core) logf(msg string, args ...any) {
	c.out.Logs = append(c.out.Logs, LogLine{Message: msg, Args: args})
}

// persist records an instance's current state (a successor's, in its
// instance's record); its rollout is planned again.
func (c *Core) persist(inst *instance) {
	if inst.parent != nil {
		c.persist(inst.parent)
		return
	}
	inst.app.kept.noteChanged(inst)
	rec := c.record(inst)
	if mv := inst.rec.Move; mv != nil {
		cp := *mv
		if s := inst.successor; s != nil {
			succ := c.record(s)
			cp.Successor = &succ
		}
		rec.Move = &cp
	}
	c.replan(inst.app)
	if i, ok := c.written[inst]; ok {
		c.out.Writes[i] = Write{TaskGroup: &rec, Notices: c.notices[inst]}
		return
	}
	c.written[inst] = len(c.out.Writes)
	c.write(Write{TaskGroup: &rec, Notices: c.notices[inst]})
}

// record is an instance's state as stored: a copy that later changes do
// not reach. Its host ports are shared: a launch replaces them, nothing
// changes them in place.
func (c *Core) record(inst *instance) registry.TaskGroup {
	rec := inst.rec
	rec.Ready = c.ready(inst)
	rec.Tasks = slices.Clone(inst.rec.Tasks)
	rec.RemoteChecks = slices.Clone(inst.rec.RemoteChecks) // remoteHealth sets them in place
	if u := inst.rec.Update; u != nil {
		cp := *u
		rec.Update = &cp
	}
	if pd := inst.rec.PreDelete; pd != nil { // hooks.go changes it in place
		cp := *pd
		rec.PreDelete = &cp
	}
	return rec
}

// setPhase moves an instance to phase; an illegal move is a bug.
func (c *Core) setPhase(inst *instance, to Phase) {
	if err := transition(inst.phase(), to); err != nil {
		panic(fmt.Sprintf("scheduler: instance %s/%s/%d: %v", inst.rec.Namespace, inst.rec.App, inst.rec.Index, err))
	}
	inst.rec.Phase = string(to)
	inst.app.kept.noteChanged(inst)
	c.touched[inst.app] = true
	c.trackPhase(inst, c.now)
}

// trackPhase keeps pendingSet and launching up to date with an
// instance's phase; wanted is when it became Pending, if it just did
// (zero for an instance restored from the store). A launch keeps the time
// it was wanted at.
func (c *Core) trackPhase(inst *instance, wanted time.Time) {
	switch inst.phase() {
	case PhasePending:
		if _, ok := c.pendingSet[inst]; !ok {
			c.pendingSet[inst] = wanted
			c.pendingJoined = true
		}
		delete(c.launching, inst)
	case PhaseLaunched:
		if _, ok := c.launching[inst]; !ok {
			c.launching[inst] = c.pendingSet[inst]
		}
		delete(c.pendingSet, inst)
		delete(c.replacing, inst)
	default:
		delete(c.pendingSet, inst)
		delete(c.launching, inst)
		if inst.phase() != PhaseKilling {
			delete(c.replacing, inst)
		}
	}
}

// replan has an application's rollout planned again at the end of the
// step, and its status computed again.
func (c *Core) replan(a *app) {
	c.dirty[a] = true
	c.touched[a] = true
}

func (c *Core) restore(in Restore) {
	c.frameworkID = in.FrameworkID
	for _, s := range in.AgentSettings {
		c.settings[s.Hostname] = s
	}
	if in.Engine.Mode != "" {
		c.engine = in.Engine
	}
	for _, obj := range in.Objects {
		c.refs.put(obj)
	}
	for ns, id := range in.Identities {
		c.identities[ns] = id
	}
	for _, run := range in.HookRuns {
		c.hookRuns[runKey(run.Namespace, run.Name)] = run
	}
	rollouts := map[string]*registry.Rollout{}
	for _, ro := range in.Rollouts {
		rollouts[ro.Namespace+"/"+ro.Name] = ro
	}
	for _, rec := range in.Apps {
		a := c.upsertApp(rec)
		if ro := rollouts[a.key()]; ro != nil {
			a.ro = ro
			c.compileStable(a)
		}
	}
	for _, g := range in.Groups {
		a := c.apps[g.Namespace+"/"+g.App]
		if a == nil {
			c.write(Write{DeleteGroup: &GroupRef{g.Namespace, g.App, g.Index}})
			continue
		}
		if g.Template == "" && a.tmpl != nil && g.Version == a.rec.Version {
			g.Template = a.tmpl.Hash // a record of a build without rollouts
		}
		inst := &instance{app: a, rec: *g}
		inst.rec.Phase = string(parsePhase(g.Phase))
		if u := inst.rec.Update; u != nil {
			u.Sent = time.Time{} // the message may not have gone out: send again
		}
		a.put(inst)
		c.trackPhase(inst, time.Time{})
		if inst.rec.WaitingFor != "" {
			// What it waited for may have been written meanwhile.
			c.stopWaiting(inst, "the scheduler restarted")
		}
		// Whatever the phase: the tasks of a failed launch whose terminal
		// states had not come yet are asked about and land.
		for _, t := range g.Tasks {
			if !terminal(taskState(t.State)) {
				c.tasks[t.ID] = inst
			}
		}
		if inst.phase() == PhaseRunning {
			c.startRemoteChecks(inst)
		}
		c.restoreMove(inst)
		if pd := inst.rec.PreDelete; pd != nil && !pd.Passed {
			c.preDeleting[inst] = true
			if run := c.hookRuns[runKey(g.Namespace, pd.Run)]; run != nil {
				c.preDeleteVerdict(inst, run) // it may have ended meanwhile
			}
		}
	}
	c.restoreSweeps(in.Sweeps)
	c.restoreAllocations(in.Allocations)
	for _, a := range c.sortedApps() {
		c.replan(a)
		c.reconcileApp(a)
	}
}

func (a *app) killGrace() time.Duration {
	if a.tmpl == nil {
		return 0
	}
	return a.tmpl.KillGrace
}

// appChanged takes a new or changed application record.
func (c *Core) appChanged(rec *registry.App) {
	old := c.apps[rec.Namespace+"/"+rec.Name]
	if ownStatus(old, rec) {
		old.rec = rec // nothing to plan: only its revision is new to us
		return
	}
	changed := old != nil && old.rec.Version != rec.Version
	usageFlipped := old != nil && old.rec != nil && old.rec.UsageReport != rec.UsageReport
	a := c.upsertApp(rec)
	if usageFlipped {
		c.sendUsageInterval(a)
	}
	if changed {
		c.retryAfterChange(a)
	}
	c.reconcileApp(a)
}

// ownStatus reports whether rec differs from a's record only by the
// status the core wrote itself (refreshStatuses): the echo of its own
// write, which comes back for every instance that starts running.
func ownStatus(a *app, rec *registry.App) bool {
	if a == nil || a.rec == nil || rec.State != a.status.State || rec.Message != a.status.Message ||
		a.daemon() && rec.Instances != a.status.Desired {
		return false
	}
	was := *a.rec
	was.State, was.Message, was.UpdatedAt, was.Revision = rec.State, rec.Message, rec.UpdatedAt, rec.Revision
	if a.daemon() {
		was.Instances = rec.Instances // a daemonset's count is the scheduler's
	}
	return reflect.DeepEqual(&was, rec)
}

func (c *Core) upsertApp(rec *registry.App) *app {
	key := rec.Namespace + "/" + rec.Name
	a := c.apps[key]
	if a == nil {
		a = &app{id: key, instances: map[int]*instance{}, status: AppStatus{Namespace: rec.Namespace, Name: rec.Name, State: rec.State, Message: rec.Message},
			ro: &registry.Rollout{Namespace: rec.Namespace, Name: rec.Name}}
		c.apps[key] = a
	}
	if a.rec == nil || a.rec.Version != rec.Version || a.tmpl == nil && a.tmplErr == nil {
		a.tmpl, a.strategy, a.tmplErr = compile(rec.Spec, launch.Revision{Version: rec.Version, RestartGeneration: rec.RestartGeneration})
	}
	a.rec = rec
	c.replan(a)
	return a
}

// compile reads a stored manifest into its template and update strategy.
func compile(spec []byte, rev launch.Revision) (*launch.Template, rollout.Strategy, error) {
	obj, err := manifest.Parse(spec)
	if err != nil {
		return nil, rollout.Strategy{}, fmt.Errorf("stored manifest: %w", err)
	}
	t, err := launch.Compile(obj, rev)
	return t, rollout.StrategyOf(obj), err
}

func (c *Core) appRemoved(namespace, name string) {
	a := c.apps[namespace+"/"+name]
	if a == nil {
		return
	}
	// Removed behind our back: nothing may keep running for it.
	a.rec.State = registry.AppDeleting
	c.reconcileApp(a)
}

// reconcileApp brings an application's instances to its record: as many
// as wanted, none for a deleted one. While the engine does not act, it
// only adds the instances wanted, which wait to launch (listed, and
// saying why); the rest waits until it acts again.
func (c *Core) reconcileApp(a *app) {
	if !c.acting() {
		if a.rec.State != registry.AppDeleting && !a.daemon() {
			c.addWanted(a)
		}
		return
	}
	if a.rec.State == registry.AppDeleting {
		for _, inst := range a.sortedInstances() {
			c.kill(inst, KillDelete)
		}
		if len(a.instances) == 0 && c.apps[a.key()] == a { // the last kill may have removed it
			c.removeApp(a)
		}
		return
	}
	if a.daemon() {
		c.reconcileDaemon(a)
		return
	}
	c.followAppStop(a)
	c.unholdWanted(a)
	span := c.addWanted(a)
	// Scale down from the highest instance ID (surge instances first).
	if a.tmpl != nil && len(a.instances) <= a.rec.Instances+a.plan.Surge {
		return // every ID wanted exists: none other
	}
	for _, inst := range slices.Backward(a.sortedInstances()) {
		if inst.rec.Index >= span || a.hole(inst.rec.Index) {
			c.kill(inst, KillScaleDown)
		}
	}
}

// addWanted adds the instances an application wants that it lacks,
// Pending, and returns its span.
func (c *Core) addWanted(a *app) int {
	span := a.span()
	for i := 0; i < span; i++ {
		if a.instances[i] == nil && a.tmpl != nil && !a.hole(i) {
			inst := &instance{app: a, rec: registry.TaskGroup{Namespace: a.rec.Namespace, App: a.rec.Name, Index: i, Phase: string(PhasePending),
				Message: c.waitingMessage()}}
			if a.rec.Stopped {
				// A stopped application's new instances are defined, and stopped.
				inst.rec.Phase, inst.rec.StoppedWithApp, inst.rec.Message = string(PhaseStopped), true, "stopped"
			}
			inst.rec.Version, inst.rec.Template = a.revision(a.target(i))
			a.put(inst)
			c.trackPhase(inst, c.now)
			c.persist(inst)
		}
	}
	return span
}

// kill stops an instance for reason (delete, scale-down, update, move).
// An instance with nothing running goes at once; one with a
// PreDeleteHook first passes it (scale-down, delete, update, move). Any
// other kill ends a move under way.
func (c *Core) kill(inst *instance, reason KillReason) {
	phase := inst.phase()
	if phase == PhaseKilling {
		if inst.killReason() == KillStop && (reason == KillScaleDown || reason == KillDelete) {
			inst.rec.KillReason = string(reason) // removed rather than kept stopped
			c.persist(inst)
		}
		return
	}
	if inst.successor != nil && reason != KillMove {
		c.endMove(inst, "")
	}
	if reason == KillScaleDown && c.allocationHeld(inst) {
		return
	}
	switch reason {
	case KillScaleDown, KillDelete, KillUpdate, KillMove:
		if c.preDeleteHeld(inst, string(reason)) {
			return
		}
	}
	if !phase.live() {
		c.remove(inst)
		return
	}
	if phase == PhaseRunning {
		c.stopRemoteChecks(inst)
	}
	c.setPhase(inst, PhaseKilling)
	inst.rec.KillReason = string(reason)
	c.logf("kill", "app", inst.app.key(), "instance", inst.rec.Index, "task_group", inst.rec.ID, "agent", inst.rec.AgentID, "reason", reason)
	for _, t := range inst.rec.Tasks {
		if !terminal(taskState(t.State)) {
			c.sendKill(inst, t.ID)
		}
	}
	c.persist(inst)
}

func (c *Core) sendKill(inst *instance, taskID string) {
	call := calls.Kill(taskID, inst.rec.AgentID)
	grace := inst.app.killGrace()
	call.Kill.KillPolicy = &mesos.KillPolicy{GracePeriod: &mesos.DurationInfo{Nanoseconds: grace.Nanoseconds()}}
	c.call(call)
	c.killSent[taskID] = c.now
}

// untrack stops following the tasks inst records: their updates then
// find no instance (and are killed if they run).
func (c *Core) untrack(inst *instance) {
	for _, t := range inst.rec.Tasks {
		if c.tasks[t.ID] == inst {
			delete(c.tasks, t.ID)
		}
		delete(c.killSent, t.ID)
	}
}

// remove forgets an instance and deletes its record.
func (c *Core) remove(inst *instance) {
	a := inst.app
	c.untrack(inst)
	a.drop(inst.rec.Index)
	c.endPreDelete(inst)
	c.write(Write{DeleteGroup: &GroupRef{inst.rec.Namespace, inst.rec.App, inst.rec.Index}})
	c.replan(a)
	if a.rec.State == registry.AppDeleting && len(a.instances) == 0 {
		c.removeApp(a)
	}
}

// removeApp removes an application whose instances are gone, and its
// hook runs.
func (c *Core) removeApp(a *app) {
	c.removeRuns(a)
	c.write(Write{RemoveApp: &AppRef{a.rec.Namespace, a.rec.Name}})
	delete(c.apps, a.key())
}

// TaskGroup returns the record of task group id, an instance's current
// launch or its move's successor; false for an older launch or an
// unknown ID. The driver reads it between steps.
func (c *Core) TaskGroup(id string) (registry.TaskGroup, bool) {
	inst := c.currentLaunch(id)
	if inst == nil {
		return registry.TaskGroup{}, false
	}
	return c.record(inst), true
}

// Counts are how many instances are in each phase (successors of moves
// included) and how many applications are mid-rollout.
type Counts struct {
	Instances          map[Phase]int
	RolloutsInProgress int
}

// Counts counts the instances by phase and the rollouts under way; the
// driver reads it between steps.
func (c *Core) Counts() Counts {
	n := Counts{Instances: map[Phase]int{}}
	for _, a := range c.apps {
		for _, inst := range a.instances {
			n.Instances[inst.phase()]++
			if inst.successor != nil {
				n.Instances[inst.successor.phase()]++
			}
		}
		if st := a.plan.State; st.StableVersion != 0 && st.StableVersion != st.UpdateVersion {
			n.RolloutsInProgress++
		}
	}
	return n
}

// currentLaunch returns the instance (or successor) whose current launch
// is the task group taskGroupID; nil for an older launch or an unknown ID.
func (c *Core) currentLaunch(taskGroupID string) *instance {
	p, err := registry.ParseID(taskGroupID)
	if err != nil {
		return nil
	}
	a := c.apps[p.Namespace+"/"+p.App]
	if a == nil {
		return nil
	}
	inst := a.instances[p.Index]
	switch {
	case inst == nil:
		return nil
	case inst.rec.ID == taskGroupID:
		return inst
	case inst.successor != nil && inst.successor.rec.ID == taskGroupID:
		return inst.successor
	}
	return nil
}

func (c *Core) sortedApps() []*app {
	return slices.SortedFunc(maps.Values(c.apps), func(x, y *app) int { return cmp.Compare(x.key(), y.key()) })
}

// sortedInstances returns a's instances by index; the slice is shared
// until the next put or drop, and must not be changed.
func (a *app) sortedInstances() []*instance {
	if a.sorted == nil && len(a.instances) > 0 {
		a.sorted = slices.SortedFunc(maps.Values(a.instances), func(x, y *instance) int { return cmp.Compare(x.rec.Index, y.rec.Index) })
	}
	return a.sorted
}

// put makes inst a's instance at its index.
func (a *app) put(inst *instance) {
	a.instances[inst.rec.Index] = inst
	a.sorted = nil
}

// drop forgets a's instance at index.
func (a *app) drop(index int) {
	delete(a.instances, index)
	a.sorted = nil
}

func taskState(s string) mesos.TaskState {
	return mesos.TaskState(mesos.TaskState_value[s])
}
