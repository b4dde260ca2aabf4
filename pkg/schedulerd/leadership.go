package schedulerd

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/mesos/mesos-go/api/v1/lib/encoding"

	"github.com/bcs-mesos/bcs-mesos/pkg/admission"
	"github.com/bcs-mesos/bcs-mesos/pkg/api"
	"github.com/bcs-mesos/bcs-mesos/pkg/autoscaler"
	"github.com/bcs-mesos/bcs-mesos/pkg/egress"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/hookrun"
	"github.com/bcs-mesos/bcs-mesos/pkg/identity"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/mesosconn"
	"github.com/bcs-mesos/bcs-mesos/pkg/notify"
	"github.com/bcs-mesos/bcs-mesos/pkg/plan"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/scheduler"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// connection is how a leader's driver reaches Mesos.
type connection struct {
	masters  []string
	encoding encoding.Codec
	conn     mesosconn.Config
}

// leadership tracks who leads, for the API, and runs the driver, the
// hook runner, the notifier and the autoscaler controller while this
// replica does.
type leadership struct {
	self string
	// egress is every namespace's egress policy, for the launches, the
	// hook runs and the callbacks of each term.
	egress *egress.Set
	// admission is the API's: the users each namespace's policy allows go
	// to the agents with its identity.
	admission *admission.Checker
	// metrics outlive terms: each term's driver records into them.
	metrics *scheduler.Metrics
	mu      sync.Mutex
	leader  string
}

func (l *leadership) Leader() (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.leader, l.leader == l.self
}

func (l *leadership) set(leader string) {
	l.mu.Lock()
	l.leader = leader
	l.mu.Unlock()
}

// run campaigns, and while leading runs the driver, the hook runner, the
// notifier and the autoscaler controller; when leadership or one of them fails — its session lost,
// a write refused by its fence — it steps down and, a standby again,
// campaigns again.
func (l *leadership) run(ctx context.Context, st *store.Store, o Options, mesos connection, reg *registry.Registry, op *operator) error {
	for ctx.Err() == nil {
		err := l.term(ctx, st, o, mesos, reg, op)
		l.set("") // until the next term's observer sees who leads
		if err != nil && ctx.Err() == nil {
			o.Logger.Error("leadership term ended", "err", err)
			select {
			case <-time.After(time.Second):
			case <-ctx.Done():
			}
		}
	}
	return nil
}

// term is one term of this replica: it campaigns and, once elected, leads
// until the etcd session is lost, a write is refused by the term's fence,
// one of the term's workers ends, or ctx ends; it resigns before it
// returns.
func (l *leadership) term(ctx context.Context, st *store.Store, o Options, mesos connection, reg *registry.Registry, op *operator) error {
	election, err := st.NewElection(ctx, "scheduler", o.ElectionTTL)
	if err != nil {
		return err
	}
	defer func() {
		resign, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = election.Resign(resign)
	}()
	observeCtx, stopObserving := context.WithCancel(ctx)
	defer stopObserving()
	go func() {
		for leader := range election.Observe(observeCtx) {
			l.set(leader)
		}
	}()
	// While it stands by, the replica keeps the task groups in memory,
	// so that taking over does not start with reading all of them.
	mirrorCtx, stopMirror := context.WithCancel(ctx)
	defer stopMirror()
	mirror, err := reg.MirrorTaskGroups(mirrorCtx, o.Logger.With("component", "mirror"))
	if err != nil {
		return err
	}
	if err := election.Campaign(ctx, l.self); err != nil {
		return err
	}
	l.set(l.self)
	o.Logger.Info("leading", "self", l.self)
	// Everything this replica does as leader writes through the fence of
	// its term: once another replica leads (this one paused or cut off
	// past its TTL), its writes are refused and the term ends. The API's
	// writes, made for users, keep going through reg.
	fence := election.Fence()
	leaderStore := st.WithFence(fence)
	w, err := l.newTermWorkers(o, mesos, reg.OnStore(leaderStore), leaderStore, mirror)
	if err != nil {
		return err
	}
	op.set(w.driver, w.autoscaler)
	defer op.set(nil, nil)
	return w.lead(ctx, election, fence, o.Logger)
}

// termWorkers are what runs while this replica leads, each writing
// through the fenced store of the term.
type termWorkers struct {
	// The driver schedules through Mesos; the API's operations reach it.
	driver *scheduler.Driver
	// The hook runner drives the hook runs while this replica leads; the
	// next leader's resumes them from their stored measurements.
	hooks *hookrun.Runner
	// The notifier delivers the notifications the driver stores; the
	// next leader's resumes from their delivery records.
	notifier *notify.Notifier
	// The autoscaler controller scales the workloads autoscalers target,
	// reading them from the driver; the next leader's resumes from the
	// stored statuses.
	autoscaler *autoscaler.Controller
}

// newTermWorkers makes the term's workers on its fenced registry and
// store; the driver restores the task groups from mirror.
func (l *leadership) newTermWorkers(o Options, mesos connection, leaderReg *registry.Registry, leaderStore *store.Store, mirror *registry.TaskGroupMirror) (termWorkers, error) {
	var identities scheduler.IdentitySource
	if !o.NamespaceUIDs.Off() {
		identities = namespaceIdentities{reg: leaderReg, uids: o.NamespaceUIDs, admission: l.admission}
	}
	driver, err := scheduler.NewDriver(scheduler.DriverConfig{
		Masters: mesos.masters, Encoding: mesos.encoding, Mesos: mesos.conn, User: o.User, Role: o.Role, FailoverTimeout: o.FailoverTimeout,
		Registry: leaderReg, Store: leaderStore, Core: l.coreConfig(o), TickInterval: o.TickInterval, Logger: o.Logger,
		AgentSyncInterval: o.AgentSyncInterval, Metrics: l.metrics, Identities: identities, StoredTaskGroups: mirror.Take,
	})
	if err != nil {
		return termWorkers{}, err
	}
	hooks, err := hookrun.New(hookrun.Config{Registry: leaderReg, Store: leaderStore, Logger: o.Logger.With("component", "hookrun"), Egress: l.egress})
	if err != nil {
		return termWorkers{}, err
	}
	notifyCfg := o.Notify
	notifyCfg.Registry, notifyCfg.Store, notifyCfg.Logger = leaderReg, leaderStore, o.Logger.With("component", "notify")
	notifyCfg.Egress = l.egress.Default("notify callbacks")
	notifier, err := notify.New(notifyCfg)
	if err != nil {
		return termWorkers{}, err
	}
	scaler, err := newAutoscaler(driver, leaderReg, l.egress, o.Scheduler.UsageInterval, o.Logger.With("component", "autoscaler"))
	if err != nil {
		return termWorkers{}, err
	}
	return termWorkers{driver: driver, hooks: hooks, notifier: notifier, autoscaler: scaler}, nil
}

// coreConfig is the scheduler core's configuration of o for a term of
// this replica: the executors, the egress policy, this API's URL and the
// base directories the process executors prepare.
func (l *leadership) coreConfig(o Options) scheduler.Config {
	cfg := o.Scheduler
	cfg.ContainerExecutor.URI, cfg.ProcessExecutor.URI = o.ContainerExecutorURI, o.ProcessExecutorURI
	cfg.Egress = l.egress.Spec
	if cfg.SchedulerURL == "" {
		cfg.SchedulerURL = l.self
	}
	// The process executors prepare the roots the scheduler expands
	// ${work_base_dir} and ${run_base_dir} to.
	if cfg.WorkBaseDir == "" {
		cfg.WorkBaseDir = proto.DefaultWorkBaseDir
	}
	if cfg.RunBaseDir == "" {
		cfg.RunBaseDir = proto.DefaultRunBaseDir
	}
	cfg.ProcessExecutor.Args = append(cfg.ProcessExecutor.Args,
		"--work-base-dir="+cfg.WorkBaseDir, "--run-base-dir="+cfg.RunBaseDir)
	if len(o.PackageDirs) > 0 {
		cfg.ProcessExecutor.Args = append(cfg.ProcessExecutor.Args, "--package-dirs="+strings.Join(o.PackageDirs, ","))
	}
	return cfg
}

// lead runs the workers until the first of them ends, the election's
// session is lost, the fence refuses a write or ctx ends; then stops them
// all and waits for them. Its error is what ended the term.
func (w termWorkers) lead(ctx context.Context, election *store.Election, fence *store.Fence, log *slog.Logger) error {
	leadCtx, stopLeading := context.WithCancel(ctx)
	defer stopLeading()
	// Each returns nil only once leadCtx ends; the first to end ends the
	// term, and the term waits for all.
	done := make(chan error, 4)
	go func() { done <- w.driver.Run(leadCtx) }()
	go func() { done <- prefixed("hook runner", w.hooks.Run(leadCtx)) }()
	go func() { done <- prefixed("notifier", w.notifier.Run(leadCtx)) }()
	go func() { done <- prefixed("autoscaler", w.autoscaler.Run(leadCtx)) }()
	running := 4
	var err error
	select {
	case <-election.Lost():
		err = fmt.Errorf("lost the etcd session: %w", errdefs.ErrUnavailable)
	case <-fence.Refused():
		err = fmt.Errorf("deposed, stepping down: a write was refused: %w", store.ErrDeposed)
	case err = <-done:
		running--
	case <-ctx.Done():
	}
	stopLeading()
	for ; running > 0; running-- {
		// A write refused by the fence while stopping shows here.
		if stopErr := <-done; stopErr != nil {
			log.Warn("stopped leading", "err", stopErr)
		}
	}
	return err
}

// prefixed is err, if any, naming what failed.
func prefixed(what string, err error) error {
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// namespaceIdentities give each namespace its own uid of uids, recorded
// in etcd the first time it is asked for, with the users its admission
// policy allows.
type namespaceIdentities struct {
	reg       *registry.Registry
	uids      identity.Range
	admission *admission.Checker
}

func (n namespaceIdentities) Identity(ctx context.Context, namespace string) (*proto.Identity, error) {
	uid, err := n.reg.EnsureNamespaceUID(ctx, namespace, n.uids)
	if err != nil {
		return nil, err
	}
	return &proto.Identity{UID: uid, GID: uid, Users: n.admission.Policy.RulesFor(namespace).Users, Range: n.uids.String()}, nil
}

// operator hands task group operations to the driver of this replica,
// and autoscalers' dry runs to its autoscaler controller.
type operator struct {
	reg        *registry.Registry
	mu         sync.Mutex
	driver     *scheduler.Driver
	autoscaler *autoscaler.Controller
}

// set makes d and c those of the term this replica leads; nil when it
// does not.
func (op *operator) set(d *scheduler.Driver, c *autoscaler.Controller) {
	op.mu.Lock()
	op.driver, op.autoscaler = d, c
	op.mu.Unlock()
}

func (op *operator) Operate(ctx context.Context, taskGroupID, what string) error {
	instance, _, err := op.reg.LaunchByID(ctx, taskGroupID)
	if err != nil {
		return err
	}
	if instance.Ended(taskGroupID) { // its previous launch: nothing runs to operate on
		return fmt.Errorf("task group %q has ended (instance %d runs %s): %w", taskGroupID, instance.Index, instance.ID, errdefs.ErrNotFound)
	}
	return op.send(ctx, scheduler.Operate{TaskGroupID: taskGroupID, Op: scheduler.Operation(what)})
}

func (op *operator) Drift(ctx context.Context, req api.DriftRequest) error {
	d := scheduler.Drift{FromHost: req.FromHost, ToHost: req.To, Namespace: req.Namespace, App: req.App, Index: -1, Force: req.Force}
	if req.Instance != nil {
		d.Index = *req.Instance
	}
	return op.send(ctx, d)
}

func (op *operator) Message(ctx context.Context, taskGroupID, task string, msg proto.Message) (*proto.MessageResult, error) {
	d, err := op.leading()
	if err != nil {
		return nil, err
	}
	return d.Message(ctx, taskGroupID, task, msg)
}

// Plan asks the driver of this replica, which must lead, what storing obj
// would do.
func (op *operator) Plan(ctx context.Context, obj manifest.Object) (*plan.Plan, error) {
	d, err := op.leading()
	if err != nil {
		return nil, err
	}
	return d.Plan(ctx, obj)
}

// PlanAutoscaler asks the autoscaler controller of this replica, which
// must lead, what it would decide for a now.
func (op *operator) PlanAutoscaler(ctx context.Context, a *manifest.Autoscaler) (*manifest.AutoscalerStatus, error) {
	op.mu.Lock()
	c := op.autoscaler
	op.mu.Unlock()
	if c == nil {
		return nil, fmt.Errorf("this replica does not lead: %w", errdefs.ErrUnavailable)
	}
	return c.PlanAutoscaler(ctx, a)
}

// send hands a request to the driver of this replica, which must lead.
func (op *operator) send(ctx context.Context, in scheduler.Input) error {
	d, err := op.leading()
	if err != nil {
		return err
	}
	return d.Operate(ctx, in)
}

// leading returns the driver of this replica, which must lead.
func (op *operator) leading() (*scheduler.Driver, error) {
	op.mu.Lock()
	defer op.mu.Unlock()
	if op.driver == nil {
		return nil, fmt.Errorf("this replica does not lead: %w", errdefs.ErrUnavailable)
	}
	return op.driver, nil
}
