package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/apiv1"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/rollout"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// VersionsKept is how many application versions the history keeps; older
// ones are pruned in the transaction that adds a new one.
const VersionsKept = 20

// AppState is an application's summary state, the API's (pkg/apiv1):
// the record keeps it as the API shows it.
type AppState = apiv1.AppState

// Application states.
const (
	// AppDeploying: instances are wanted that are not running yet.
	AppDeploying AppState = "Deploying"
	// AppRunning: every wanted instance runs.
	AppRunning AppState = "Running"
	// AppAbnormal: an instance cannot be placed or keeps failing; Message says why.
	AppAbnormal AppState = "Abnormal"
	// AppDeleting: deletion was asked; instances are being killed.
	AppDeleting AppState = "Deleting"
)

// App is the stored record of a workload: an application, a process, a
// deployment or a daemonset (whose instances run its template).
type App struct {
	Namespace string        `json:"namespace"`
	Name      string        `json:"name"`
	Kind      manifest.Kind `json:"kind"`
	// Version counts the manifest's versions, from 1.
	Version uint64 `json:"version"`
	// Instances is the desired instance count: spec.instance of the current
	// version, changed by scaling; a daemonset's is the scheduler's count
	// of the agents its constraint admits.
	Instances int `json:"instances"`
	// Removed are the IDs below the highest wanted one that must not
	// exist: instances removed by choice (ScaleAppRemoving) leave holes
	// there. It is sorted and never ends above the highest wanted ID
	// (trailing holes are dropped); WantedIDs gives the IDs wanted.
	Removed []int `json:"removed,omitempty"`
	// Spec is the current manifest with its defaults, as JSON.
	Spec      json.RawMessage `json:"spec"`
	State     AppState        `json:"state"`
	Message   string          `json:"message,omitempty"`
	CreatedAt time.Time       `json:"createdAt"`
	UpdatedAt time.Time       `json:"updatedAt"`
	// Cause says why Version was made; RolledBackTo names the version a
	// rollback copied.
	Cause        rollout.Cause `json:"cause,omitempty"`
	RolledBackTo uint64        `json:"rolledBackTo,omitempty"`
	// RestartGeneration counts rolling restarts: it is part of the
	// instances' template, so a restart is a new template with the same
	// spec.
	RestartGeneration int `json:"restartGeneration,omitempty"`
	// The operator's rollout controls: Paused holds the rollout (set from
	// the manifest's updateStrategy.paused with each version, changed by
	// pause and resume); Promote ends the wait it names; AbortVersion
	// aborts the rollout of that version.
	Paused       bool     `json:"paused,omitempty"`
	Promote      *Promote `json:"promote,omitempty"`
	AbortVersion uint64   `json:"abortVersion,omitempty"`
	// Stopped: the operator stopped the application (seed 002,
	// optype=stop): every instance, those a scale adds too, is Stopped
	// until it is started.
	Stopped bool `json:"stopped,omitempty"`
	// Force skips the PreDeleteHook of the instances a delete or scale
	// removes (their request said force); the next scale or update
	// without it clears it.
	Force bool `json:"force,omitempty"`
	// UsageReport: the executors report its instances' usage (an
	// autoscaler with a resource metric targets it); the scheduler starts
	// and stops the reports when it flips.
	UsageReport bool `json:"usageReport,omitempty"`
	// DependencyPod marks a dependency pod the scheduler runs.
	DependencyPod *DependencyPod `json:"dependencyPod,omitempty"`
	// Revision is the etcd revision the record was read at.
	Revision int64 `json:"-"`
}

// Promote asks the rollout of Version to end its wait number Seq.
type Promote struct {
	Version uint64 `json:"version"`
	Seq     int    `json:"seq"`
}

// Manifest parses the stored manifest.
func (a *App) Manifest() (manifest.Object, error) { return manifest.Parse(a.Spec) }

// AppVersion is one entry of an application's history.
type AppVersion struct {
	Version      uint64          `json:"version"`
	Spec         json.RawMessage `json:"spec"`
	Cause        rollout.Cause   `json:"cause,omitempty"`
	RolledBackTo uint64          `json:"rolledBackTo,omitempty"`
	// RestartGeneration is the version's; a rollback restores it, so
	// that instances still running that version are not restarted.
	RestartGeneration int       `json:"restartGeneration,omitempty"`
	CreatedAt         time.Time `json:"createdAt"`
}

// Registry reads and writes bcs objects in a store.
type Registry struct {
	store   *store.Store
	now     func() time.Time
	secrets SecretValues
}

// New returns a registry on s; now is the clock stamped on records.
// Secret values stay in their records (InRecord) unless WithSecretValues
// says otherwise.
func New(s *store.Store, now func() time.Time) *Registry {
	return &Registry{store: s, now: now, secrets: InRecord{}}
}

// WithSecretValues keeps the values of the secrets written from now on
// in v (bcs-scheduler --secret-backend).
func (r *Registry) WithSecretValues(v SecretValues) *Registry {
	r.secrets = v
	return r
}

// OnStore returns a registry like r that reads and writes through s, a
// view of r's store: the leader's components write through a view
// fenced by its term (store.WithFence).
func (r *Registry) OnStore(s *store.Store) *Registry {
	on := *r
	on.store = s
	return &on
}

// appIdentity returns what the registry needs of a workload manifest.
func appIdentity(obj manifest.Object) (meta manifest.ObjectMeta, instances int, err error) {
	instances, ok := manifest.InstancesOf(obj)
	if !ok {
		return manifest.ObjectMeta{}, 0, fmt.Errorf("kind %q is not an application, process or deployment: %w", obj.Kind(), errdefs.ErrInvalidArgument)
	}
	meta, _ = manifest.MetaOf(obj)
	return meta, instances, nil
}

// CreateApp stores a validated application, process or deployment
// manifest as version 1.
func (r *Registry) CreateApp(ctx context.Context, obj manifest.Object) (*App, error) {
	meta, instances, err := appIdentity(obj)
	if err != nil {
		return nil, err
	}
	spec, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encode application %s/%s: %w", meta.Namespace, meta.Name, err)
	}
	now := r.now().UTC()
	app := &App{
		Namespace: meta.Namespace, Name: meta.Name, Kind: obj.Kind(), Version: 1, Instances: instances,
		Spec: spec, State: AppDeploying, Message: "waiting for the scheduler", CreatedAt: now, UpdatedAt: now,
		Cause: rollout.CauseUpdate, Paused: manifest.UpdateStrategyOf(obj).Paused,
	}
	if instances == 0 && obj.Kind() != manifest.KindDaemonset { // a daemonset's count is the scheduler's to find
		app.State, app.Message = AppRunning, ""
	}
	ops, err := r.appWrite(app, 0)
	if err != nil {
		return nil, err
	}
	rev, err := r.store.Apply(ctx, ops...)
	if err != nil {
		return nil, fmt.Errorf("%s %s/%s: %w", app.Kind, meta.Namespace, meta.Name, err)
	}
	app.Revision = rev
	return app, nil
}

// UpdateApp stores obj as the next version of its application. expectRev 0
// updates whatever is current; otherwise a record changed since expectRev
// fails with errdefs.ErrConflict. The desired instance count becomes the new
// spec.instance, unless an autoscaler scales the workload (paused or not):
// then its size and holes stay, as Kubernetes keeps the replicas of a
// Deployment an HPA scales, and spec.instance counts at create only. The
// rollout starts paused when the manifest says so.
func (r *Registry) UpdateApp(ctx context.Context, obj manifest.Object, expectRev int64) (*App, error) {
	meta, instances, err := appIdentity(obj)
	if err != nil {
		return nil, err
	}
	spec, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encode application %s/%s: %w", meta.Namespace, meta.Name, err)
	}
	return r.modifyAppGuarded(ctx, meta.Namespace, meta.Name, expectRev, func(app *App) (bool, []store.Op, error) {
		if err := updatableBy(app, obj); err != nil {
			return false, nil, err
		}
		autoscaled, claim, err := r.autoscaleClaim(ctx, app)
		if err != nil {
			return false, nil, err
		}
		app.Spec, app.Force = spec, false
		// The scheduler keeps a daemonset's count, an autoscaler the
		// size and holes of the workload it scales.
		if obj.Kind() != manifest.KindDaemonset && !autoscaled {
			holes, err := Rescale(app.Instances, app.Removed, instances, nil)
			if err != nil {
				return false, nil, err
			}
			app.Instances, app.Removed = instances, holes
		}
		app.Cause, app.RolledBackTo, app.Paused = rollout.CauseUpdate, 0, manifest.UpdateStrategyOf(obj).Paused
		return true, []store.Op{claim}, nil
	})
}

// autoscaleClaim reads whether an autoscaler scales app, paused or not,
// and returns the op that holds a write of app to that answer: the
// claim (autoscaletargets/) unchanged, or still absent.
func (r *Registry) autoscaleClaim(ctx context.Context, app *App) (bool, store.Op, error) {
	key, err := store.Key(store.KindAutoscaleTarget, app.Namespace, app.Name)
	if err != nil {
		return false, store.Op{}, err
	}
	e, err := r.store.Get(ctx, key)
	switch {
	case errors.Is(err, errdefs.ErrNotFound):
		return false, store.AbsentOp(key), nil
	case err != nil:
		return false, store.Op{}, fmt.Errorf("autoscaler of %s/%s: %w", app.Namespace, app.Name, err)
	}
	return true, store.CheckOp(key, e.Revision), nil
}

// CheckCreateApp returns the error CreateApp would return for obj, storing
// nothing: a dry run of a create.
func (r *Registry) CheckCreateApp(ctx context.Context, obj manifest.Object) error {
	meta, _, err := appIdentity(obj)
	if err != nil {
		return err
	}
	app, err := r.GetApp(ctx, meta.Namespace, meta.Name)
	switch {
	case err == nil:
		return fmt.Errorf("%s %s/%s exists (revision %d): %w", app.Kind, app.Namespace, app.Name, app.Revision, errdefs.ErrAlreadyExists)
	case errors.Is(err, errdefs.ErrNotFound):
		return nil
	}
	return err
}

// CheckUpdateApp returns the application obj would update and the error
// UpdateApp would return, storing nothing: a dry run of an update.
// errdefs.ErrNotFound: there is no such application.
func (r *Registry) CheckUpdateApp(ctx context.Context, obj manifest.Object, expectRev int64) (*App, error) {
	meta, _, err := appIdentity(obj)
	if err != nil {
		return nil, err
	}
	app, err := r.GetApp(ctx, meta.Namespace, meta.Name)
	if err != nil {
		return nil, err
	}
	if err := changedSince(app, expectRev); err != nil {
		return nil, err
	}
	return app, updatableBy(app, obj)
}

// updatableBy says why obj cannot be the next version of app: another
// kind, or an application that cannot be updated.
func updatableBy(app *App, obj manifest.Object) error {
	if app.Kind != obj.Kind() {
		return fmt.Errorf("%s %s/%s is a %s, not a %s: %w", app.Kind, app.Namespace, app.Name, app.Kind, obj.Kind(), errdefs.ErrInvalidArgument)
	}
	return updatable(app)
}

// changedSince says that app changed since revision expectRev (0: any
// revision will do).
func changedSince(app *App, expectRev int64) error {
	if expectRev != 0 && app.Revision != expectRev {
		return fmt.Errorf("%s %s/%s changed since revision %d (it is at revision %d now): read it again and retry: %w",
			app.Kind, app.Namespace, app.Name, expectRev, app.Revision, errdefs.ErrConflict)
	}
	return nil
}

func updatable(app *App) error {
	if err := notDependencyPod(app); err != nil {
		return err
	}
	if app.State == AppDeleting {
		return fmt.Errorf("%s %s/%s is being deleted: %w", app.Kind, app.Namespace, app.Name, errdefs.ErrConflict)
	}
	return nil
}

// RestartApp makes a new version with the same spec and a new restart
// generation: every instance is restarted by the rollout strategy (in
// place with InplaceUpdate, replaced with RollingUpdate).
func (r *Registry) RestartApp(ctx context.Context, namespace, name string) (*App, error) {
	return r.modifyApp(ctx, namespace, name, 0, func(app *App) (bool, error) {
		if err := updatable(app); err != nil {
			return false, err
		}
		app.RestartGeneration++
		app.Cause, app.RolledBackTo = rollout.CauseRestart, 0
		return true, nil
	})
}

// RollbackApp makes a new version with the spec of version to (from the
// history), rolled out by the strategy; the desired instance count stays.
func (r *Registry) RollbackApp(ctx context.Context, namespace, name string, to uint64) (*App, error) {
	key, err := store.AppVersionKey(namespace, name, to)
	if err != nil {
		return nil, err
	}
	old, _, err := store.GetJSON[AppVersion](ctx, r.store, key)
	if errors.Is(err, errdefs.ErrNotFound) {
		return nil, fmt.Errorf("revision %d of %s/%s is not in the history (the last %d are kept): %w", to, namespace, name, VersionsKept, errdefs.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	obj, err := manifest.Parse(old.Spec)
	if err != nil {
		return nil, fmt.Errorf("stored revision %d of %s/%s: %w", to, namespace, name, err)
	}
	return r.modifyApp(ctx, namespace, name, 0, func(app *App) (bool, error) {
		if err := updatable(app); err != nil {
			return false, err
		}
		if app.Version == to {
			return false, fmt.Errorf("%s/%s is at revision %d already: %w", namespace, name, to, errdefs.ErrConflict)
		}
		app.Spec, app.RestartGeneration = old.Spec, old.RestartGeneration
		app.Cause, app.RolledBackTo, app.Paused = rollout.CauseRollback, to, manifest.UpdateStrategyOf(obj).Paused
		return true, nil
	})
}

// SetPaused pauses or resumes the rollout of an application.
func (r *Registry) SetPaused(ctx context.Context, namespace, name string, paused bool) (*App, error) {
	return r.modifyApp(ctx, namespace, name, 0, func(app *App) (bool, error) {
		if err := updatable(app); err != nil {
			return false, err
		}
		app.Paused = paused
		return false, nil
	})
}

// SetStopped stops or starts every instance of an application.
func (r *Registry) SetStopped(ctx context.Context, namespace, name string, stopped bool) (*App, error) {
	return r.modifyApp(ctx, namespace, name, 0, func(app *App) (bool, error) {
		if err := updatable(app); err != nil {
			return false, err
		}
		if app.Kind == manifest.KindDaemonset {
			return false, fmt.Errorf("daemonset %s/%s runs on every eligible agent: cordon an agent to keep its instance off it, or delete the daemonset: %w",
				app.Namespace, app.Name, errdefs.ErrInvalidArgument)
		}
		app.Stopped = stopped
		return false, nil
	})
}

// PromoteApp asks the rollout of version to end its wait seq.
func (r *Registry) PromoteApp(ctx context.Context, namespace, name string, version uint64, seq int) (*App, error) {
	return r.modifyApp(ctx, namespace, name, 0, func(app *App) (bool, error) {
		if err := updatable(app); err != nil {
			return false, err
		}
		app.Promote = &Promote{Version: version, Seq: seq}
		return false, nil
	})
}

// AbortApp aborts the rollout of version: its instances go back to the
// stable revision.
func (r *Registry) AbortApp(ctx context.Context, namespace, name string, version uint64) (*App, error) {
	return r.modifyApp(ctx, namespace, name, 0, func(app *App) (bool, error) {
		if err := updatable(app); err != nil {
			return false, err
		}
		if app.Version != version {
			return false, fmt.Errorf("%s/%s is at revision %d, not %d: %w", namespace, name, app.Version, version, errdefs.ErrConflict)
		}
		app.AbortVersion = version
		return false, nil
	})
}

// Rescale returns the holes (Removed) of an application that wants
// instances with holes removed once it wants to instances with the chosen
// IDs removed: each chosen ID must be wanted now, and stays a hole while
// it is below the highest ID wanted. The count is then reached from the
// IDs left: the highest go first; new ones refill the lowest earlier
// holes first, then take IDs above the highest wanted now.
func Rescale(instances int, removed []int, to int, chosen []int) ([]int, error) {
	wanted := WantedIDs(instances, removed)
	for i, id := range chosen {
		if id < 0 || slices.Contains(chosen[:i], id) {
			return nil, fmt.Errorf("removed[%d]: instance %d: must be ≥ 0 and named once: %w", i, id, errdefs.ErrInvalidArgument)
		}
		if _, ok := slices.BinarySearch(wanted, id); !ok {
			return nil, fmt.Errorf("removed[%d]: instance %d cannot be removed: it is not one of the %d wanted: %w", i, id, instances, errdefs.ErrConflict)
		}
	}
	next := following(wanted)
	kept := slices.DeleteFunc(wanted, func(id int) bool { return slices.Contains(chosen, id) })
	return Holes(rescaled(kept, removed, next, to)), nil
}

// WantedIDs returns the IDs of the instances an application wants: the
// instances smallest non-negative integers not in removed (sorted).
func WantedIDs(instances int, removed []int) []int {
	ids := make([]int, 0, instances)
	for id := 0; len(ids) < instances; id++ {
		if _, hole := slices.BinarySearch(removed, id); !hole {
			ids = append(ids, id)
		}
	}
	return ids
}

// Holes returns the IDs below the highest of wanted (sorted) that are not
// in it: the record's Removed.
func Holes(wanted []int) []int {
	var holes []int
	next := 0
	for _, id := range wanted {
		for ; next < id; next++ {
			holes = append(holes, next)
		}
		next = id + 1
	}
	return holes
}

// rescaled brings the wanted IDs kept (sorted) to instances: the highest
// go first; new ones take the lowest of the holes refillable (the IDs an
// earlier removal left, sorted) first, then IDs from next up.
func rescaled(kept, refillable []int, next, instances int) []int {
	if instances <= len(kept) {
		return kept[:instances]
	}
	for _, id := range refillable {
		if len(kept) == instances {
			break
		}
		kept = append(kept, id)
	}
	for ; len(kept) < instances; next++ {
		kept = append(kept, next)
	}
	slices.Sort(kept)
	return kept
}

// following is the ID after the highest of wanted (sorted).
func following(wanted []int) int {
	if len(wanted) == 0 {
		return 0
	}
	return wanted[len(wanted)-1] + 1
}

// SetAppStatus records the scheduler's view of an application (and of a
// daemonset, its desired instance count).
func (r *Registry) SetAppStatus(ctx context.Context, change AppStatusChange) (*App, error) {
	return r.modifyApp(ctx, change.Namespace, change.Name, 0, func(app *App) (bool, error) {
		change.apply(app)
		return false, nil
	})
}

// AppStatusChange is the scheduler's view of one application: its state
// and message, and a daemonset's desired instance count when Desired is
// set.
type AppStatusChange struct {
	Namespace, Name string
	State           AppState
	Message         string
	Desired         *int
}

// apply sets the status in app; a deletion wins over a late status.
func (c AppStatusChange) apply(app *App) {
	if app.State == AppDeleting && c.State != AppDeleting {
		return
	}
	app.State, app.Message = c.State, c.Message
	if c.Desired != nil && app.Kind == manifest.KindDaemonset {
		app.Instances = *c.Desired
	}
}

// SetAppStatuses records the statuses of many applications as
// SetAppStatus and SetDaemonsetStatus do one: read in one round trip for
// each 127, written in one transaction for each 127, each write checked
// against the revision read. An application written meanwhile (scaled,
// updated) has its status set again on its own; one removed meanwhile is
// skipped.
func (r *Registry) SetAppStatuses(ctx context.Context, changes []AppStatusChange) error {
	keys := make([]string, len(changes))
	for i, c := range changes {
		key, err := store.Key(store.KindApplication, c.Namespace, c.Name)
		if err != nil {
			return err
		}
		keys[i] = key
	}
	unwritten, err := r.writeMany(ctx, keys, func(i int, e store.Entry) ([]store.Op, error) {
		if e.Revision == 0 {
			return nil, nil // removed meanwhile
		}
		var app App
		if err := json.Unmarshal(e.Value, &app); err != nil {
			return nil, fmt.Errorf("application %s/%s: %w", changes[i].Namespace, changes[i].Name, err)
		}
		changes[i].apply(&app)
		app.UpdatedAt = r.now().UTC()
		ops, err := r.appWrite(&app, e.Revision)
		if err != nil {
			return nil, err
		}
		return ops[:1], nil
	})
	if err != nil {
		return err
	}
	for _, i := range unwritten {
		if _, err := r.SetAppStatus(ctx, changes[i]); err != nil && !errors.Is(err, errdefs.ErrNotFound) {
			return err
		}
	}
	return nil
}

// writeMany changes many records in a few round trips: keys are read
// together (store.GetMany), and the writes change makes of each (none:
// the record is left alone) go in batched transactions, each checked
// against the revision read. A transaction that meets a record written,
// created or removed since writes nothing, nor do those after it: their
// records' indexes are returned as unwritten, for the caller to change
// one by one.
func (r *Registry) writeMany(ctx context.Context, keys []string, change func(i int, e store.Entry) ([]store.Op, error)) (unwritten []int, err error) {
	entries, err := r.store.GetMany(ctx, keys)
	if err != nil {
		return nil, err
	}
	batch := r.store.Batch()
	var added []int // keys' indexes, in the batch's order
	for i, e := range entries {
		ops, err := change(i, e)
		if err != nil {
			return nil, err
		}
		if len(ops) > 0 {
			batch.Add(ops...)
			added = append(added, i)
		}
	}
	written, err := batch.Commit(ctx)
	if err != nil && !errors.Is(err, errdefs.ErrConflict) && !errors.Is(err, errdefs.ErrAlreadyExists) && !errors.Is(err, errdefs.ErrNotFound) {
		return nil, err
	}
	return added[len(written):], nil
}

// modifyApp reads an application, applies change and writes it back,
// retrying on a concurrent write when expectRev is 0. change reports
// whether the write is a new version.
func (r *Registry) modifyApp(ctx context.Context, namespace, name string, expectRev int64, change func(*App) (bool, error)) (*App, error) {
	return r.modifyAppGuarded(ctx, namespace, name, expectRev, func(app *App) (bool, []store.Op, error) {
		newVersion, err := change(app)
		return newVersion, nil, err
	})
}

// modifyAppGuarded is modifyApp whose change also returns guards: ops
// comparing the records it read besides the application, written with
// it. A guard that fails is retried whatever expectRev: the application
// itself did not change.
func (r *Registry) modifyAppGuarded(ctx context.Context, namespace, name string, expectRev int64, change func(*App) (bool, []store.Op, error)) (*App, error) {
	for {
		app, err := r.GetApp(ctx, namespace, name)
		if err != nil {
			return nil, err
		}
		if err := changedSince(app, expectRev); err != nil {
			return nil, err
		}
		newVersion, guards, err := change(app)
		if err != nil {
			return nil, err
		}
		if newVersion {
			app.Version++
		}
		app.UpdatedAt = r.now().UTC()
		ops, err := r.appWrite(app, app.Revision)
		if err != nil {
			return nil, err
		}
		if !newVersion {
			ops = ops[:1]
		} else if ops, err = r.prune(ctx, app, ops); err != nil {
			return nil, err
		}
		rev, err := r.store.Apply(ctx, append(ops, guards...)...)
		if errors.Is(err, errdefs.ErrConflict) && expectRev == 0 || failedOn(err, guards) {
			continue // someone wrote in between: re-read and re-apply
		}
		if err != nil {
			return nil, fmt.Errorf("%s %s/%s: %w", app.Kind, namespace, name, err)
		}
		app.Revision = rev
		return app, nil
	}
}

// failedOn reports whether err is a precondition of one of ops that
// failed.
func failedOn(err error, ops []store.Op) bool {
	var pe *store.PreconditionError
	return errors.As(err, &pe) && slices.ContainsFunc(ops, func(op store.Op) bool { return op.Key() == pe.Key })
}

// appWrite returns the operations that store app (created when rev is 0)
// with its current version in the history; prune adds the removal of the
// version that falls out of the history.
func (r *Registry) appWrite(app *App, rev int64) ([]store.Op, error) {
	key, err := store.Key(store.KindApplication, app.Namespace, app.Name)
	if err != nil {
		return nil, err
	}
	record, err := json.Marshal(app)
	if err != nil {
		return nil, err
	}
	versionKey, err := store.AppVersionKey(app.Namespace, app.Name, app.Version)
	if err != nil {
		return nil, err
	}
	version, err := json.Marshal(AppVersion{Version: app.Version, Spec: app.Spec, Cause: app.Cause, RolledBackTo: app.RolledBackTo,
		RestartGeneration: app.RestartGeneration, CreatedAt: app.UpdatedAt})
	if err != nil {
		return nil, err
	}
	ops := []store.Op{store.UpdateOp(key, record, rev), store.CreateOp(versionKey, version)}
	if rev == 0 {
		ops[0] = store.CreateOp(key, record)
	}
	return ops, nil
}

// prune appends to ops the removal of the version that app's new version
// pushes out of the history, if that version is still stored. A history
// with gaps (a removal that crashed half way, an operator's cleanup) must
// not make every later update fail with "not found". The version is read
// at its revision: a version key is written once and never again, so it
// cannot reappear between this read and the write.
func (r *Registry) prune(ctx context.Context, app *App, ops []store.Op) ([]store.Op, error) {
	if app.Version <= VersionsKept {
		return ops, nil
	}
	pruned, err := store.AppVersionKey(app.Namespace, app.Name, app.Version-VersionsKept)
	if err != nil {
		return nil, err
	}
	entry, err := r.store.Get(ctx, pruned)
	switch {
	case errors.Is(err, errdefs.ErrNotFound):
		return ops, nil
	case err != nil:
		return nil, fmt.Errorf("application %s/%s: %w", app.Namespace, app.Name, err)
	}
	return append(ops, store.DeleteOp(pruned, entry.Revision)), nil
}

// GetApp returns one application.
func (r *Registry) GetApp(ctx context.Context, namespace, name string) (*App, error) {
	key, err := store.Key(store.KindApplication, namespace, name)
	if err != nil {
		return nil, err
	}
	app, err := get[App](ctx, r.store, key)
	if err != nil {
		return nil, fmt.Errorf("application %s/%s: %w", namespace, name, err)
	}
	return app, nil
}

// ListApps returns the applications of namespace, or of every namespace
// when it is empty, sorted by namespace and name.
func (r *Registry) ListApps(ctx context.Context, namespace string) ([]*App, error) {
	prefix, err := kindPrefix(store.KindApplication, namespace)
	if err != nil {
		return nil, err
	}
	return list[App](ctx, r.store, prefix)
}

// AppVersions returns the kept history of an application, oldest first.
func (r *Registry) AppVersions(ctx context.Context, namespace, name string) ([]AppVersion, error) {
	if _, err := r.GetApp(ctx, namespace, name); err != nil {
		return nil, err
	}
	prefix, err := store.Prefix(store.KindAppVersion, namespace, name)
	if err != nil {
		return nil, err
	}
	objs, err := store.ListJSON[AppVersion](ctx, r.store, prefix)
	if err != nil {
		return nil, err
	}
	versions := make([]AppVersion, len(objs))
	for i, o := range objs {
		versions[i] = o.Value
	}
	return versions, nil
}

// DeleteApp asks for an application's deletion: it marks it AppDeleting.
// Without task groups it then removes it at once and returns nil;
// otherwise the scheduler kills the instances and then calls RemoveApp.
// Marking first means a crash during the removal leaves a record still
// marked for deletion (see RemoveApp), never a live-looking application
// whose history is gone.
// force skips the instances' PreDeleteHook. A dependency pod is the
// scheduler's to delete (errdefs.ErrConflict).
func (r *Registry) DeleteApp(ctx context.Context, namespace, name string, force bool) (*App, error) {
	return r.deleteApp(ctx, namespace, name, force, notDependencyPod)
}

// deleteApp is DeleteApp once allowed says the record may go.
func (r *Registry) deleteApp(ctx context.Context, namespace, name string, force bool, allowed func(*App) error) (*App, error) {
	app, err := r.modifyApp(ctx, namespace, name, 0, func(app *App) (bool, error) {
		if err := allowed(app); err != nil {
			return false, err
		}
		if app.State == AppDeleting && (app.Force || !force) {
			return false, errUnchanged
		}
		app.State, app.Message, app.Force = AppDeleting, "", force
		return false, nil
	})
	if errors.Is(err, errUnchanged) {
		app, err = r.GetApp(ctx, namespace, name)
	}
	if err != nil {
		return nil, err
	}
	if has, err := r.hasTaskGroups(ctx, namespace, name); err != nil {
		return nil, err
	} else if has {
		return app, nil
	}
	if err := r.RemoveApp(ctx, namespace, name); err != nil && !errors.Is(err, errdefs.ErrNotFound) {
		return nil, err
	}
	return nil, nil // removed, by us or by the scheduler that saw it Deleting first
}

// errUnchanged tells modifyApp's caller that change found nothing to write.
var errUnchanged = errors.New("unchanged")

// RemoveApp deletes an application marked AppDeleting: its history, then
// its record. The order makes a crash in between harmless: the record
// survives, still marked for deletion, and the next RemoveApp finishes
// the job. A record not marked, or with task groups, is another
// incarnation, created after the one being deleted was removed (a late
// removal must not take it, nor orphan its instances): RemoveApp leaves it
// and its history alone and answers errdefs.ErrNotFound, the one it was
// asked to remove being gone. A status write landing in between is read
// again.
func (r *Registry) RemoveApp(ctx context.Context, namespace, name string) error {
	for {
		err := r.removeDeletingApp(ctx, namespace, name)
		if !errors.Is(err, errdefs.ErrConflict) || ctx.Err() != nil {
			return err
		}
	}
}

func (r *Registry) removeDeletingApp(ctx context.Context, namespace, name string) error {
	app, err := r.GetApp(ctx, namespace, name)
	if err != nil {
		return err
	}
	has, err := r.hasTaskGroups(ctx, namespace, name)
	if err != nil {
		return err
	}
	if app.State != AppDeleting || has {
		return fmt.Errorf("application %s/%s being deleted: gone, and created again since: %w", namespace, name, errdefs.ErrNotFound)
	}
	versions, err := r.AppVersions(ctx, namespace, name)
	if err != nil {
		return err
	}
	for _, v := range versions {
		key, err := store.AppVersionKey(namespace, name, v.Version)
		if err != nil {
			return err
		}
		if err := r.store.Delete(ctx, key, 0); err != nil && !errors.Is(err, errdefs.ErrNotFound) {
			return err
		}
	}
	if err := r.DeleteRollout(ctx, namespace, name); err != nil {
		return err
	}
	if err := r.deleteAllocations(ctx, namespace, name); err != nil {
		return err
	}
	key, err := store.Key(store.KindApplication, namespace, name)
	if err != nil {
		return err
	}
	if err := r.store.Delete(ctx, key, app.Revision); err != nil {
		return fmt.Errorf("application %s/%s: %w", namespace, name, err)
	}
	return nil
}

// kindPrefix returns the list prefix of kind in namespace, or of the whole
// kind when namespace is empty.
func kindPrefix(kind store.Kind, namespace string) (string, error) {
	if namespace == "" {
		return store.Prefix(kind)
	}
	return store.Prefix(kind, namespace)
}
