package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/apiv1"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// Object is the stored record of a configmap, secret, hook template or
// depends object.
type Object struct {
	Kind      manifest.Kind   `json:"kind"`
	Namespace string          `json:"namespace"`
	Name      string          `json:"name"`
	Spec      json.RawMessage `json:"spec"`
	CreatedAt time.Time       `json:"createdAt"`
	UpdatedAt time.Time       `json:"updatedAt"`
	// Values says where a secret's item values are when they are not in
	// Spec (a secret on Vault): Spec then holds its items without content.
	Values   *ValuesRef `json:"values,omitempty"`
	Revision int64      `json:"-"`
}

// ValuesRef is where a secret's item values are kept outside its record:
// a version of a secret of a backend (e.g. Vault's KV v2 engine). The
// record keeps the version it was written with, so a write that fails
// half-way (the values written, the record not) changes nothing.
type ValuesRef struct {
	Backend string `json:"backend"` // "vault"
	Mount   string `json:"mount"`
	Path    string `json:"path"`
	Version int    `json:"version"`
}

// SecretValues keeps the item values of secrets: in the secret's own
// record (InRecord, sealed in etcd, the default) or outside etcd (Vault).
type SecretValues interface {
	// Put keeps the values of s; it says where, nil when they stay in the
	// record.
	Put(ctx context.Context, s *manifest.Secret) (*ValuesRef, error)
	// Get returns the item contents (base64) kept at ref, by item name.
	Get(ctx context.Context, ref ValuesRef) (map[string]string, error)
	// Delete removes what is kept at ref, every version.
	Delete(ctx context.Context, ref ValuesRef) error
}

// InRecord keeps secret values in the secret's record, which the store
// seals at rest (the embedded default).
type InRecord struct{}

var _ SecretValues = InRecord{}

func (InRecord) Put(context.Context, *manifest.Secret) (*ValuesRef, error) { return nil, nil }

func (InRecord) Get(_ context.Context, ref ValuesRef) (map[string]string, error) {
	return nil, inRecordRefused(ref)
}

func (InRecord) Delete(_ context.Context, ref ValuesRef) error { return inRecordRefused(ref) }

func inRecordRefused(ref ValuesRef) error {
	return fmt.Errorf("the values of this secret are on %s (%s/%s) and the scheduler runs with --secret-backend etcd: %w",
		ref.Backend, ref.Mount, ref.Path, errdefs.ErrUnavailable)
}

// Manifest parses the stored manifest.
func (o *Object) Manifest() (manifest.Object, error) { return manifest.Parse(o.Spec) }

// objectKinds maps the kinds stored as Objects to their key kind.
var objectKinds = map[manifest.Kind]store.Kind{
	manifest.KindConfigMap:    store.KindConfigMap,
	manifest.KindSecret:       store.KindSecret,
	manifest.KindHookTemplate: store.KindHookTemplate,
	manifest.KindService:      store.KindService,
	manifest.KindDepends:      store.KindDepends,
}

func objectMeta(obj manifest.Object) (manifest.ObjectMeta, store.Kind, error) {
	kind, ok := objectKinds[obj.Kind()]
	if !ok {
		return manifest.ObjectMeta{}, "", fmt.Errorf("kind %q is not a configmap, secret, hook template, service or depends object: %w", obj.Kind(), errdefs.ErrInvalidArgument)
	}
	meta, _ := manifest.MetaOf(obj)
	return meta, kind, nil
}

// PutObject creates (expectRev -1), updates (expectRev > 0: only that
// revision; 0: whatever is current) a configmap or secret.
func (r *Registry) PutObject(ctx context.Context, obj manifest.Object, expectRev int64) (*Object, error) {
	meta, kind, err := objectMeta(obj)
	if err != nil {
		return nil, err
	}
	key, err := store.Key(kind, meta.Namespace, meta.Name)
	if err != nil {
		return nil, err
	}
	var values *ValuesRef
	if secret, ok := obj.(*manifest.Secret); ok {
		if expectRev == -1 {
			// Not even a version of values for a name that is taken.
			if _, err := r.GetObject(ctx, obj.Kind(), meta.Namespace, meta.Name); err == nil {
				return nil, fmt.Errorf("%s %s/%s: %w", obj.Kind(), meta.Namespace, meta.Name, errdefs.ErrAlreadyExists)
			}
		}
		if values, err = r.secrets.Put(ctx, secret); err != nil {
			return nil, fmt.Errorf("%s %s/%s: %w", obj.Kind(), meta.Namespace, meta.Name, err)
		}
		if values != nil {
			obj = withoutContent(secret)
		}
	}
	spec, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	now := r.now().UTC()
	rec := &Object{Kind: obj.Kind(), Namespace: meta.Namespace, Name: meta.Name, Spec: spec, CreatedAt: now, UpdatedAt: now, Values: values}
	if expectRev == -1 {
		rec.Revision, err = store.CreateJSON(ctx, r.store, key, rec)
	} else {
		var current *Object
		current, err = r.GetObject(ctx, obj.Kind(), meta.Namespace, meta.Name)
		if err != nil {
			return nil, err
		}
		if expectRev == 0 {
			expectRev = current.Revision
		}
		rec.CreatedAt = current.CreatedAt
		rec.Revision, err = store.UpdateJSON(ctx, r.store, key, rec, expectRev)
	}
	if err != nil {
		return nil, fmt.Errorf("%s %s/%s: %w", obj.Kind(), meta.Namespace, meta.Name, err)
	}
	return rec, nil
}

// withoutContent is s with its items' names and paths but no content.
func withoutContent(s *manifest.Secret) *manifest.Secret {
	out := s.DeepCopy()
	for item, d := range out.Datas {
		d.Content = ""
		out.Datas[item] = d
	}
	return out
}

// ResolveSecret returns the secret a stored record holds, its item
// values read from where they are kept. A backend that cannot be
// reached is errdefs.ErrUnavailable, values it lacks ErrNotFound.
func (r *Registry) ResolveSecret(ctx context.Context, rec *Object) (*manifest.Secret, error) {
	obj, err := rec.Manifest()
	if err != nil {
		return nil, err
	}
	secret, ok := obj.(*manifest.Secret)
	if !ok {
		return nil, fmt.Errorf("%s %s/%s is not a secret: %w", rec.Kind, rec.Namespace, rec.Name, errdefs.ErrInvalidArgument)
	}
	if rec.Values == nil {
		return secret, nil
	}
	values, err := r.secrets.Get(ctx, *rec.Values)
	if err != nil {
		return nil, fmt.Errorf("secret %s/%s: %w", rec.Namespace, rec.Name, err)
	}
	for item, d := range secret.Datas {
		content, ok := values[item]
		if !ok {
			return nil, fmt.Errorf("secret %s/%s: %s %s/%s version %d has no item %q: %w",
				rec.Namespace, rec.Name, rec.Values.Backend, rec.Values.Mount, rec.Values.Path, rec.Values.Version, item, errdefs.ErrNotFound)
		}
		d.Content = content
		secret.Datas[item] = d
	}
	return secret, nil
}

// GetObject returns one configmap or secret.
func (r *Registry) GetObject(ctx context.Context, kind manifest.Kind, namespace, name string) (*Object, error) {
	sk, ok := objectKinds[kind]
	if !ok {
		return nil, fmt.Errorf("kind %q: %w", kind, errdefs.ErrInvalidArgument)
	}
	key, err := store.Key(sk, namespace, name)
	if err != nil {
		return nil, err
	}
	obj, err := get[Object](ctx, r.store, key)
	if err != nil {
		return nil, fmt.Errorf("%s %s/%s: %w", kind, namespace, name, err)
	}
	return obj, nil
}

// ListObjects returns the objects of kind in namespace (every namespace when
// empty), sorted by namespace and name.
func (r *Registry) ListObjects(ctx context.Context, kind manifest.Kind, namespace string) ([]*Object, error) {
	sk, ok := objectKinds[kind]
	if !ok {
		return nil, fmt.Errorf("kind %q: %w", kind, errdefs.ErrInvalidArgument)
	}
	prefix, err := kindPrefix(sk, namespace)
	if err != nil {
		return nil, err
	}
	return list[Object](ctx, r.store, prefix)
}

// DeleteObject removes a configmap or secret.
func (r *Registry) DeleteObject(ctx context.Context, kind manifest.Kind, namespace, name string) error {
	sk, ok := objectKinds[kind]
	if !ok {
		return fmt.Errorf("kind %q: %w", kind, errdefs.ErrInvalidArgument)
	}
	key, err := store.Key(sk, namespace, name)
	if err != nil {
		return err
	}
	if kind == manifest.KindSecret {
		// The values go first: if that fails, nothing changed.
		rec, err := r.GetObject(ctx, kind, namespace, name)
		if err != nil {
			return err
		}
		if rec.Values != nil {
			if err := r.secrets.Delete(ctx, *rec.Values); err != nil {
				return fmt.Errorf("%s %s/%s: %w", kind, namespace, name, err)
			}
		}
	}
	if err := r.store.Delete(ctx, key, 0); err != nil {
		return fmt.Errorf("%s %s/%s: %w", kind, namespace, name, err)
	}
	return nil
}

// Resolver returns the configmaps, secrets and hook templates of
// namespace, and the depends objects of every namespace (a reference may
// name another), for validating the references of a manifest in it.
func (r *Registry) Resolver(ctx context.Context, namespace string) (manifest.Resolver, error) {
	res := resolver{configMaps: map[string]*manifest.ConfigMap{}, secrets: map[string]*manifest.Secret{},
		hookTemplates: map[string]*manifest.HookTemplate{}, depends: map[string]*manifest.Depends{}}
	for _, kind := range []manifest.Kind{manifest.KindConfigMap, manifest.KindSecret, manifest.KindHookTemplate, manifest.KindDepends} {
		listed := namespace
		if kind == manifest.KindDepends {
			listed = ""
		}
		objs, err := r.ListObjects(ctx, kind, listed)
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			m, err := o.Manifest()
			if err != nil {
				return nil, fmt.Errorf("stored %s %s/%s: %w", kind, o.Namespace, o.Name, err)
			}
			switch m := m.(type) {
			case *manifest.ConfigMap:
				res.configMaps[o.Name] = m
			case *manifest.Secret:
				res.secrets[o.Name] = m
			case *manifest.HookTemplate:
				res.hookTemplates[o.Name] = m
			case *manifest.Depends:
				res.depends[o.Namespace+"/"+o.Name] = m
			}
		}
	}
	return res, nil
}

type resolver struct {
	configMaps    map[string]*manifest.ConfigMap
	secrets       map[string]*manifest.Secret
	hookTemplates map[string]*manifest.HookTemplate
	depends       map[string]*manifest.Depends // by "namespace/name"
}

var (
	_ manifest.HookTemplates  = resolver{}
	_ manifest.DependsObjects = resolver{}
)

func (r resolver) Depends(namespace, name string) (*manifest.Depends, bool) {
	d, ok := r.depends[namespace+"/"+name]
	return d, ok
}

func (r resolver) HookTemplate(_, name string) (*manifest.HookTemplate, bool) {
	t, ok := r.hookTemplates[name]
	return t, ok
}

func (r resolver) ConfigMap(_, name string) (*manifest.ConfigMap, bool) {
	c, ok := r.configMaps[name]
	return c, ok
}

func (r resolver) Secret(_, name string) (*manifest.Secret, bool) {
	s, ok := r.secrets[name]
	return s, ok
}

// TaskGroup is the stored runtime state of one instance of an application:
// the Mesos task group currently running it. It is keyed by the instance
// index; ID changes with every launch. Only the scheduler writes it.
type TaskGroup struct {
	ID        string `json:"id"` // task group (and executor) ID of the current launch
	Namespace string `json:"namespace"`
	App       string `json:"app"`
	Index     int    `json:"index"`   // the instance ID, from 0
	Version   uint64 `json:"version"` // the application version it runs
	// Node is the hostname of the agent a daemonset's instance is bound
	// to: it launches there and nowhere else.
	Node string `json:"node,omitempty"`
	// Template identifies what Version's instances run (a hash of the pod
	// template): versions that only changed replicas or the strategy share
	// it, and an instance moves to a new version without any update.
	Template string `json:"template,omitempty"`
	// RestartGeneration is the restart generation of Template.
	RestartGeneration int `json:"restartGeneration,omitempty"`
	// Network is how the current launch is networked ("process", or the
	// containers' mode and type): an in-place update keeps it.
	Network string `json:"network,omitempty"`
	// Update is the rollout's update of this instance under way.
	Update *InstanceUpdate `json:"update,omitempty"`
	// PreDelete is the PreDeleteHook the instance waits for before it is
	// deleted or restarted.
	PreDelete *PreDeleteWait `json:"preDelete,omitempty"`
	// Move is the instance's move to another agent (drain, drift,
	// reschedule), queued or under way.
	Move    *InstanceMove `json:"move,omitempty"`
	State   string        `json:"state"` // Mesos TaskState of the group, e.g. TASK_RUNNING
	Phase   string        `json:"phase"` // the scheduler's lifecycle phase (pkg/scheduler)
	AgentID string        `json:"agentID,omitempty"`
	Host    string        `json:"host,omitempty"`
	HostIP  string        `json:"hostIP,omitempty"` // the agent's address, for remote checks
	Ports   HostPorts     `json:"ports,omitempty"`
	Healthy *bool         `json:"healthy,omitempty"`
	// Ready: running, healthy by every check it has, not being restarted
	// by an update (the rollout's readiness).
	Ready bool `json:"ready"`
	// RemoteHealthy is the verdict of the scheduler's REMOTE_* checks:
	// false when one fails, true once every one passes; RemoteMessage is
	// the failing one's. RemoteChecks are each check's own.
	RemoteHealthy *bool               `json:"remoteHealthy,omitempty"`
	RemoteMessage string              `json:"remoteMessage,omitempty"`
	RemoteChecks  []RemoteCheckResult `json:"remoteChecks,omitempty"`
	Restarts      int                 `json:"restarts"`
	Message       string              `json:"message,omitempty"`
	Tasks         []TaskRecord        `json:"tasks,omitempty"`
	// Launches counts the launches of this instance; it makes task IDs unique.
	Launches int `json:"launches"`
	// Previous is the launch this one replaced (a relaunch, or the
	// instance a move took the place of): its sandbox, and so its logs,
	// stay on its agent for a while.
	Previous *PreviousLaunch `json:"previous,omitempty"`
	// NotBefore delays the next launch (restart backoff).
	NotBefore time.Time `json:"notBefore,omitempty"`
	// Prefer is the agent a started instance ran on before it was
	// stopped: its launch goes back there if it fits. Cleared at launch.
	Prefer string `json:"prefer,omitempty"`
	// StoppedWithApp: the instance is stopped because its application
	// is (App.Stopped); starting the application starts it.
	StoppedWithApp bool `json:"stoppedWithApp,omitempty"`
	// RunningSince is when every task last became running.
	RunningSince time.Time `json:"runningSince,omitempty"`
	// KillReason says why the scheduler is killing the instance.
	KillReason string `json:"killReason,omitempty"`
	// RecentRestarts are the times of its restarts within the flapping
	// window; FlappingNotified is when it was last noticed flapping.
	RecentRestarts   []time.Time `json:"recentRestarts,omitempty"`
	FlappingNotified time.Time   `json:"flappingNotified,omitempty"`
	// WaitingFor names the configmap or secret ("configmap ns/name") a
	// Pending instance cannot launch without.
	WaitingFor string `json:"waitingFor,omitempty"`
	// Pending says why a Pending launch is not placed yet (nil before it
	// was first evaluated, and once it launched).
	Pending   *Pending  `json:"pending,omitempty"`
	UpdatedAt time.Time `json:"updatedAt"`
	Revision  int64     `json:"-"`
}

// PhaseStopped is the Phase of an instance the operator stopped: defined,
// running nothing, not relaunched until started.
const PhaseStopped = "Stopped"

// TaskRecord is one task of a task group.
type TaskRecord struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	State   string `json:"state"`
	Healthy *bool  `json:"healthy,omitempty"`
	Message string `json:"message,omitempty"`
	// Revision is the application version the executor says the task
	// runs (TaskStatus.data).
	Revision uint64 `json:"revision,omitempty"`
	// CPUs and MemMB are what the launch took from Mesos: an in-place
	// update may not grow past them.
	CPUs  float64 `json:"cpus,omitempty"`
	MemMB float64 `json:"memMB,omitempty"`
	// Container or Process is the executor's latest report of what runs
	// (TaskStatus.data), by the kind of task.
	Container *ContainerStatus `json:"container,omitempty"`
	Process   *ProcessStatus   `json:"process,omitempty"`
}

// ContainerStatus and ProcessStatus are what a task's executor reports
// of its container or process (seed 001 BcsContainerInfo), kept as the
// API shows them (pkg/apiv1).
type (
	ContainerStatus = apiv1.ContainerStatus
	ProcessStatus   = apiv1.ProcessStatus
)

// PreviousLaunch is an instance's launch before its current one.
type PreviousLaunch struct {
	ID      string       `json:"id"` // its task group ID
	AgentID string       `json:"agentID"`
	Host    string       `json:"host,omitempty"`
	Tasks   []TaskRecord `json:"tasks,omitempty"`
}

// EvictionMove is the Reason of a move a NoExecute taint asks for.
const EvictionMove = "eviction"

// InstanceMove is an instance moving to another agent: a successor launch
// is placed and must run (and be ready) before the instance is killed, and
// then takes its place.
type InstanceMove struct {
	// Reason is "drain", "drift", "reschedule", "maintenance" or
	// EvictionMove.
	Reason string `json:"reason"`
	// FromHost is the agent left; ToHost, when set, the only agent the
	// successor may go to.
	FromHost string    `json:"fromHost"`
	ToHost   string    `json:"toHost,omitempty"`
	Since    time.Time `json:"since"`
	// Successor is the new launch, once started; nil while the move waits
	// its turn (one move at a time per agent left).
	Successor *TaskGroup `json:"successor,omitempty"`
}

// PreDeleteWait is an instance waiting for its PreDeleteHook (seed 004):
// it goes (or restarts) once a run succeeds; a failed run is followed by
// another.
type PreDeleteWait struct {
	// Reason is what waits: a kill reason (scale-down, delete, update) or
	// "in-place".
	Reason string `json:"reason"`
	// Run is the current run; Attempt counts them.
	Run     string    `json:"run"`
	Attempt int       `json:"attempt"`
	Since   time.Time `json:"since"`
	// NotBefore delays the next run after a failed one.
	NotBefore time.Time `json:"notBefore,omitzero"`
	// Passed: a run succeeded (or the wait timed out); the instance goes.
	Passed  bool   `json:"passed,omitempty"`
	Message string `json:"message,omitempty"`
}

// Pending is the placement engine's verdict on a pending launch over
// every agent the scheduler knows, each with what it last offered less
// what was launched there since: how many it fits (more than 0: it waits
// for the offer of one of them) and why each other one is rejected, under
// the first reason it failed (pkg/offer's reasons: "cpus", "cordoned",
// "hostname UNIQUE" …).
type Pending struct {
	Fit     int             `json:"fit"`
	Agents  int             `json:"agents"`
	Reasons []PendingReason `json:"reasons"`
	// LastEvaluated is when this verdict was reached. The scheduler
	// evaluates again at every offer round and stores only a verdict that
	// changed, so the same verdict may have held since.
	LastEvaluated time.Time `json:"lastEvaluated"`
}

// PendingReason is how many agents one reason rejected.
type PendingReason struct {
	Reason string `json:"reason"`
	Count  int    `json:"count"`
}

// FitsNowhere reports whether the launch waits because the last
// placement found no agent that fits it.
func (t *TaskGroup) FitsNowhere() bool {
	return t.Phase == "Pending" && t.Pending != nil && t.Pending.Fit == 0
}

// String says why a launch finds no agent, as the scheduler's messages
// do: "0/3 agents fit: hostname UNIQUE 2, cordoned 1".
func (p *Pending) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d/%d agents fit", p.Fit, p.Agents)
	for i, r := range p.Reasons {
		b.WriteString(map[bool]string{true: ": ", false: ", "}[i == 0])
		fmt.Fprintf(&b, "%s %d", r.Reason, r.Count)
	}
	return b.String()
}

// Same reports whether p and o are the same verdict, whenever reached.
func (p *Pending) Same(o *Pending) bool {
	if p == nil || o == nil {
		return p == o
	}
	return p.Fit == o.Fit && p.Agents == o.Agents && slices.Equal(p.Reasons, o.Reasons)
}

// UpdateMode is how the rollout updates an instance.
type UpdateMode string

// The update modes; see pkg/scheduler.
const (
	UpdateReplace  UpdateMode = "Replace"  // killed, then launched anew
	UpdateInPlace  UpdateMode = "InPlace"  // restarted in its task group
	UpdateHotPatch UpdateMode = "HotPatch" // patched without a restart
)

// InstanceUpdate is a rollout's update of one instance, under way.
type InstanceUpdate struct {
	Version  uint64     `json:"version"`
	Template string     `json:"template"`
	Mode     UpdateMode `json:"mode"`
	Since    time.Time  `json:"since"`
	// Sent is when the update message last went to the executor.
	Sent time.Time `json:"sent,omitzero"`
	// Message says what is being done, and why this mode.
	Message string `json:"message,omitempty"`
	// Error is why the executor refused a hot patch; the rollout waits
	// (abort, or a new spec, ends it).
	Error string `json:"error,omitempty"`
}

// TaskGroupKey returns the store key of instance index of an application.
func TaskGroupKey(namespace, app string, index int) (string, error) {
	return store.Key(store.KindTaskGroup, namespace, app, strconv.Itoa(index))
}

// GetTaskGroup returns instance index of an application.
func (r *Registry) GetTaskGroup(ctx context.Context, namespace, app string, index int) (*TaskGroup, error) {
	key, err := TaskGroupKey(namespace, app, index)
	if err != nil {
		return nil, err
	}
	g, err := get[TaskGroup](ctx, r.store, key)
	if err != nil {
		return nil, fmt.Errorf("instance %s/%s/%d: %w", namespace, app, index, err)
	}
	return g, nil
}

// Launch returns t's launch with task group ID id: t itself (its current
// launch), the successor its move launched, or its previous launch (its
// ID, agent and tasks); nil for any other.
func (t *TaskGroup) Launch(id string) *TaskGroup {
	switch {
	case t.ID == id:
		return t
	case t.Move != nil && t.Move.Successor != nil && t.Move.Successor.ID == id:
		return t.Move.Successor
	case t.Previous != nil && t.Previous.ID == id:
		p := t.Previous
		return &TaskGroup{ID: p.ID, Namespace: t.Namespace, App: t.App, Index: t.Index, AgentID: p.AgentID, Host: p.Host, Tasks: p.Tasks}
	}
	return nil
}

// Ended reports whether launch id of t is over: t does not have it
// (any more), or it is t's previous launch.
func (t *TaskGroup) Ended(id string) bool {
	return t.Launch(id) == nil || t.Previous != nil && t.Previous.ID == id
}

// TaskGroups returns the task groups of an application.
func (r *Registry) TaskGroups(ctx context.Context, namespace, app string) ([]*TaskGroup, error) {
	prefix, err := store.Prefix(store.KindTaskGroup, namespace, app)
	if err != nil {
		return nil, err
	}
	return list[TaskGroup](ctx, r.store, prefix)
}

// hasTaskGroups says whether app has a task group record, reading one key
// at most (an application of 100k instances is not read to learn it).
func (r *Registry) hasTaskGroups(ctx context.Context, namespace, app string) (bool, error) {
	prefix, err := store.Prefix(store.KindTaskGroup, namespace, app)
	if err != nil {
		return false, err
	}
	errFound := errors.New("found")
	_, err = r.store.EachKey(ctx, prefix, func(string, int64) error { return errFound })
	if errors.Is(err, errFound) {
		return true, nil
	}
	return false, err
}

// RemoteCheckResult is the last verdict of one REMOTE_* check of an
// instance.
type RemoteCheckResult struct {
	Name string `json:"name"`
	// Address is what the check probed (host:port): the address a client
	// of the instance uses in its network mode.
	Address string `json:"address,omitempty"`
	Healthy bool   `json:"healthy"`
	Message string `json:"message,omitempty"`
}

// Agent is what the scheduler knows of a Mesos agent: what its offers
// said (hostname, attributes, SeenAt), what the master's operator API
// says (Master) and the maintenance its master announced (Maintenance).
// Each part is written by its own source without touching the others
// (runtime.go). The operator's settings are AgentSettings.
type Agent struct {
	ID         string            `json:"id"`
	Hostname   string            `json:"hostname"`
	Attributes map[string]string `json:"attributes,omitempty"`
	// Endpoint is where the agent's own HTTP API answers (host:port, as
	// its offers' URL and the master's agent list give it): its files
	// API serves the sandboxes.
	Endpoint string `json:"endpoint,omitempty"`
	// SeenAt is when an offer of it was last recorded (at most
	// AgentSeenEvery apart while it offers); zero if it never offered.
	SeenAt      time.Time         `json:"seenAt,omitzero"`
	Master      *AgentMaster      `json:"master,omitempty"`
	Maintenance *AgentMaintenance `json:"maintenance,omitempty"`
	UpdatedAt   time.Time         `json:"updatedAt"`
	Revision    int64             `json:"-"`
}

// AgentMaster is the master's view of an agent (GET_AGENTS), written when
// it changes.
type AgentMaster struct {
	// Active: registered, connected and not deactivated.
	Active      bool `json:"active"`
	Deactivated bool `json:"deactivated,omitempty"`
	// Recovered: known from the master's registry after its failover,
	// not reregistered yet.
	Recovered bool `json:"recovered,omitempty"`
	// Drain is the master's drain of the agent (DRAIN_AGENT): "DRAINING",
	// "DRAINED", or "" for none.
	Drain string `json:"drain,omitempty"`
	// Total is what the agent provides, to every framework.
	Total AgentResources `json:"total"`
}

// AgentResources are an agent's scalar resources and its port count.
type AgentResources struct {
	CPUs   float64 `json:"cpus"`
	MemMB  float64 `json:"memMB"`
	DiskMB float64 `json:"diskMB"`
	Ports  int     `json:"ports"`
}

// AgentMaintenance is a maintenance window of the agent's machine, as
// its offers and inverse offers announce it, and how the scheduler
// answered.
type AgentMaintenance struct {
	Start time.Time `json:"start"`
	// End is zero for a window with no end.
	End time.Time `json:"end,omitzero"`
	// Answer is the scheduler's answer to the master's inverse offer:
	// "" before one came, "pending" while instances are moved off,
	// "accepted" once none is left, "declined" while only instances
	// that stay (stateful) are.
	Answer string `json:"answer,omitempty"`
}

// Current reports whether the window is not over at now (a window without
// end never is); nil is no window.
func (m *AgentMaintenance) Current(now time.Time) bool {
	return m != nil && (m.End.IsZero() || now.Before(m.End))
}

// GetAgent returns the recorded agent with that Mesos ID.
func (r *Registry) GetAgent(ctx context.Context, id string) (*Agent, error) {
	key, err := store.Key(store.KindAgent, id)
	if err != nil {
		return nil, err
	}
	a, err := get[Agent](ctx, r.store, key)
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", id, err)
	}
	return a, nil
}

// ListAgents returns the recorded agents, sorted by ID.
func (r *Registry) ListAgents(ctx context.Context) ([]*Agent, error) {
	prefix, err := store.Prefix(store.KindAgent)
	if err != nil {
		return nil, err
	}
	return list[Agent](ctx, r.store, prefix)
}

// FindTask returns the task of t named name: a container or process name
// of its spec, or a task ID. An empty name is the only task of a group of
// one; of a larger group it is an error naming the tasks to choose from.
func (t *TaskGroup) FindTask(name string) (*TaskRecord, error) {
	if name == "" && len(t.Tasks) == 1 {
		return &t.Tasks[0], nil
	}
	names := make([]string, len(t.Tasks))
	for i := range t.Tasks {
		if name != "" && (t.Tasks[i].Name == name || t.Tasks[i].ID == name) {
			return &t.Tasks[i], nil
		}
		names[i] = t.Tasks[i].Name
	}
	if name == "" {
		return nil, fmt.Errorf("task group %s has %d tasks, name one of %s: %w", t.ID, len(t.Tasks), strings.Join(names, ", "), errdefs.ErrInvalidArgument)
	}
	return nil, fmt.Errorf("task group %s has no task %q (it has %s): %w", t.ID, name, strings.Join(names, ", "), errdefs.ErrNotFound)
}
