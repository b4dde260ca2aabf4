package api

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/bcs-mesos/bcs-mesos/pkg/apiv1"
	"github.com/bcs-mesos/bcs-mesos/pkg/autoscale"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/field"
	"github.com/bcs-mesos/bcs-mesos/pkg/hook"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/strictjson"
)

func instanceView(g *registry.TaskGroup) InstanceView {
	v := InstanceView{
		ID: g.Index, TaskGroupID: g.ID, State: g.State, Phase: g.Phase, Stopped: g.Phase == registry.PhaseStopped, Revision: g.Version, Ready: g.Ready, Agent: g.AgentID, Host: g.Host,
		HostIP: g.HostIP, Ports: g.Ports.Map(), Healthy: g.Healthy, RemoteHealthy: g.RemoteHealthy, RemoteMessage: g.RemoteMessage,
		RemoteChecks: remoteChecksView(g.RemoteChecks),
		Restarts:     g.Restarts, Message: g.Message, Update: updateView(g.Update), PreDelete: preDeleteView(g.PreDelete), Pending: pendingView(g.Pending),
	}
	if v.Stopped {
		// It runs nothing: no port is held, no check is made. Its agent
		// stays shown, where a start brings it back if it fits.
		v.Ports, v.Healthy, v.RemoteHealthy = nil, nil, nil
	}
	if g.Previous != nil {
		v.PreviousTaskGroupID = g.Previous.ID
	}
	for _, t := range g.Tasks {
		v.Tasks = append(v.Tasks, TaskView{Name: t.Name, ID: t.ID, State: t.State, Healthy: t.Healthy, Message: t.Message,
			Container: t.Container, Process: t.Process})
	}
	if mv := g.Move; mv != nil {
		v.Move = &MoveView{Reason: mv.Reason, FromHost: mv.FromHost, ToHost: mv.ToHost, Since: mv.Since}
		if mv.Successor != nil {
			s := instanceView(mv.Successor)
			v.Move.Successor = &s
		}
	}
	return v
}

func appView(app *registry.App, groups []*registry.TaskGroup, ro *registry.Rollout) AppView {
	v := AppView{
		Namespace: app.Namespace, Name: app.Name, Kind: app.Kind, Version: app.Version, Revision: app.Revision,
		Instances: app.Instances, Stopped: app.Stopped, Spec: shownSpec(app.Spec), CreatedAt: app.CreatedAt, UpdatedAt: app.UpdatedAt, DependencyPod: dependencyPodView(app.DependencyPod),
		Status: AppStatus{State: app.State, Message: app.Message, Instances: []InstanceView{}, Rollout: rolloutView(ro)},
	}
	counts := InstanceCounts{}
	for _, g := range groups {
		switch {
		case g.State == "TASK_RUNNING":
			counts.Running++
			if g.Healthy != nil && !*g.Healthy || g.RemoteHealthy != nil && !*g.RemoteHealthy {
				counts.Unhealthy++
			}
		case g.Phase == registry.PhaseStopped:
			counts.Stopped++
		case g.Pending != nil:
			counts.Pending++
		}
		if g.Ready {
			counts.Ready++
		}
	}
	v.Status.Counts = &counts
	return v
}

// instanceViews are what GET shows of an application's instances.
func instanceViews(groups []*registry.TaskGroup) []InstanceView {
	views := make([]InstanceView, 0, len(groups))
	for _, g := range groups {
		views = append(views, instanceView(g))
	}
	return views
}

// shownSpec is a stored manifest as the API shows it: its passwords
// redacted. A spec that does not parse (none is stored) is not shown.
// The last specs shown are kept: a dashboard polling every application
// would otherwise parse each manifest again on every read.
func shownSpec(spec json.RawMessage) json.RawMessage {
	key := maphash.Bytes(shownSpecs.seed, spec)
	shownSpecs.mu.Lock()
	kept, ok := shownSpecs.byHash[key]
	shownSpecs.mu.Unlock()
	if ok && bytes.Equal(kept.spec, spec) {
		return kept.shown
	}
	obj, _ := manifest.Parse(spec)
	if obj == nil {
		return nil
	}
	shown, err := json.Marshal(manifest.RedactCredentials(obj))
	if err != nil {
		return nil
	}
	shownSpecs.mu.Lock()
	defer shownSpecs.mu.Unlock()
	if len(shownSpecs.byHash) >= keptSpecs {
		clear(shownSpecs.byHash)
	}
	shownSpecs.byHash[key] = keptSpec{spec: bytes.Clone(spec), shown: shown}
	return shown
}

// keptSpecs is how many specs shownSpec keeps, a few times the
// applications of a large cluster.
const keptSpecs = 4096

// shownSpecs are the specs shownSpec showed last, by their hash. A
// shown spec is shared by its readers and never changed.
var shownSpecs = struct {
	mu     sync.Mutex
	seed   maphash.Seed
	byHash map[uint64]keptSpec
}{seed: maphash.MakeSeed(), byHash: map[uint64]keptSpec{}}

type keptSpec struct{ spec, shown json.RawMessage }

// rolloutView is nil for no rollout.
func rolloutView(ro *registry.Rollout) *RolloutView {
	if ro == nil {
		return nil
	}
	st := ro.State
	return &RolloutView{Status: ro.Status, Cause: st.Cause, RolledBackTo: st.RolledBackTo,
		Aborted: st.Aborted, AbortReason: st.AbortReason, Wait: st.Wait}
}

// parse reads a manifest of one of kinds and validates it against the
// configmaps and secrets of its namespace.
func (s *Server) parse(r *http.Request, kinds ...manifest.Kind) (manifest.Object, error) {
	body, err := s.readBody(r)
	if err != nil {
		return nil, err
	}
	obj, decodeErr := manifest.Parse(body)
	if obj == nil {
		return nil, decodeErr
	}
	if err := checkKind(obj, kinds); err != nil {
		return nil, err
	}
	var errs field.ErrorList
	if !errors.As(decodeErr, &errs) && decodeErr != nil {
		return nil, decodeErr
	}
	meta, _ := manifest.MetaOf(obj)
	resolver, err := s.cfg.Registry.Resolver(r.Context(), meta.Namespace)
	if errors.Is(err, errdefs.ErrInvalidArgument) {
		// The namespace cannot even name a store key ("ns a"): validate
		// without references, so metadata.namespace is reported together
		// with every other problem instead of a bare store error.
		resolver = nil
	} else if err != nil {
		return nil, err
	}
	namespace := meta.Namespace
	if cmd, ok := obj.(*manifest.Command); ok {
		namespace = cmd.Spec.CommandTargetRef.Namespace
	}
	own, uidErr := s.namespaceUID(r.Context(), namespace)
	if uidErr != nil {
		return nil, uidErr
	}
	// Report decoding and validation problems together, but not twice for a
	// field that failed to decode. Only decoding problems hide validation
	// ones: two validation problems of one field are both reported.
	decoding := errs
	for _, e := range slices.Concat(obj.Validate(resolver), languages(obj), s.cfg.Admission.Check(obj, own)) {
		if !underAny(e.Path, decoding) {
			errs = append(errs, e)
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	if err != nil {
		return nil, err
	}
	return obj, nil
}

// namespaceUID is namespace's own uid, which its manifests and commands
// may name (0: none, or namespaces get no uids).
func (s *Server) namespaceUID(ctx context.Context, namespace string) (uint32, error) {
	if s.cfg.Admission == nil || s.cfg.Admission.NamespaceUIDs.Off() {
		return 0, nil
	}
	uid, _, err := s.cfg.Registry.NamespaceUID(ctx, namespace)
	if errors.Is(err, errdefs.ErrInvalidArgument) {
		return 0, nil // no namespace a key can name: validation says so
	}
	return uid, err
}

// languages checks what a manifest writes in the languages its engines
// own: a hook template's conditions (expr-lang) and jsonPath, an
// autoscaler's web sources' jsonPaths and allocatedCondition.
func languages(obj manifest.Object) field.ErrorList {
	switch obj := obj.(type) {
	case *manifest.HookTemplate:
		return hook.Check(obj)
	case *manifest.Autoscaler:
		return autoscale.Check(obj)
	}
	return nil
}

// underAny reports whether p is, or lies under, the path of one of errs.
func underAny(p field.Path, errs field.ErrorList) bool {
	for _, e := range errs {
		if e.Path == p || strings.HasPrefix(string(p), string(e.Path)+".") || strings.HasPrefix(string(p), string(e.Path)+"[") {
			return true
		}
	}
	return false
}

// checkKind refuses a manifest of none of kinds, a route's: a 400 naming
// kind.
func checkKind(obj manifest.Object, kinds []manifest.Kind) error {
	if slices.Contains(kinds, obj.Kind()) {
		return nil
	}
	return field.ErrorList{field.Invalid("kind", "want %s here, got %q", kindNames(kinds), obj.Kind())}
}

// manifestRoutes are the kinds of manifest each route that takes one
// takes, by path: the creates, the plan, a command, seed 002's depends.
var manifestRoutes = func() map[string][]manifest.Kind {
	routes := map[string][]manifest.Kind{
		"/v1/commands": {manifest.KindCommand}, "/v1/plan": planKinds,
		"/v1/" + dependsKind.path: {dependsKind.kind}, "/api/depends": {dependsKind.kind},
		"/v1/" + autoscalersPath: {manifest.KindAutoscaler},
	}
	for _, wl := range workloadRoutes {
		routes["/v1/"+wl.path] = wl.kinds
	}
	for _, k := range objectKinds {
		routes["/v1/"+k.path] = []manifest.Kind{k.kind}
	}
	return routes
}()

func kindNames(kinds []manifest.Kind) string {
	s := ""
	for i, k := range kinds {
		if i > 0 {
			s += " or "
		}
		s += string(k)
	}
	return s
}

// matchPath checks that the manifest names the object of the URL.
func matchPath(r *http.Request, obj manifest.Object) error {
	meta, _ := manifest.MetaOf(obj)
	var errs field.ErrorList
	if ns := r.PathValue("ns"); meta.Namespace != ns {
		errs = append(errs, field.Invalid("metadata.namespace", "must match the path: want %q, got %q", ns, meta.Namespace))
	}
	if name := r.PathValue("name"); meta.Name != name {
		errs = append(errs, field.Invalid("metadata.name", "must match the path: want %q, got %q", name, meta.Name))
	}
	return errs.ToError()
}

// workloads are the routes that serve applications: /v1/apps for
// applications and processes, /v1/deployments for deployments,
// /v1/daemonsets for daemonsets. A record of another kind is not found
// under a route, with a pointer to its own.
type workloads struct {
	path  string
	kinds []manifest.Kind
	// list names the list in GET's answer.
	list string
}

var (
	appRoutes        = workloads{path: "apps", kinds: []manifest.Kind{manifest.KindApplication, manifest.KindProcess}, list: "apps"}
	deploymentRoutes = workloads{path: "deployments", kinds: []manifest.Kind{manifest.KindDeployment}, list: "deployments"}
	daemonsetRoutes  = workloads{path: "daemonsets", kinds: []manifest.Kind{manifest.KindDaemonset}, list: "daemonsets"}
	// workloadRoutes are every workload's routes.
	workloadRoutes = []workloads{appRoutes, deploymentRoutes, daemonsetRoutes}
)

func (wl workloads) serves(kind manifest.Kind) bool { return slices.Contains(wl.kinds, kind) }

// get reads an application of the route's kinds from etcd, for a write.
func (s *Server) get(r *http.Request, wl workloads) (*registry.App, error) {
	return s.getFrom(r, s.cfg.Registry, wl)
}

// getFrom reads an application of the route's kinds from rd.
func (s *Server) getFrom(r *http.Request, rd reader, wl workloads) (*registry.App, error) {
	ns, name := r.PathValue("ns"), r.PathValue("name")
	app, err := rd.GetApp(r.Context(), ns, name)
	if err != nil {
		return nil, err
	}
	if !wl.serves(app.Kind) {
		i := slices.IndexFunc(workloadRoutes, func(other workloads) bool { return other.serves(app.Kind) })
		if i < 0 {
			return nil, fmt.Errorf("%s/%s is a %s: %w", ns, name, app.Kind, errdefs.ErrNotFound)
		}
		other := workloadRoutes[i]
		return nil, fmt.Errorf("%s/%s is a %s, served at /v1/%s/%s/%s: %w", ns, name, app.Kind, other.path, ns, name, errdefs.ErrNotFound)
	}
	return app, nil
}

func (s *Server) create(wl workloads) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		dryRun, err := boolParam(r, "dryRun")
		if err != nil {
			return err
		}
		obj, err := s.parse(r, wl.kinds...)
		if err != nil {
			return err
		}
		if obj, err = manifest.KeepCredentials(obj, nil); err != nil {
			return err
		}
		if dryRun {
			if err := s.cfg.Registry.CheckCreateApp(r.Context(), obj); err != nil {
				return err
			}
			return s.writePlan(w, r, obj)
		}
		app, err := s.cfg.Registry.CreateApp(r.Context(), obj)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusCreated, appView(app, nil, nil))
		return nil
	}
}

// update stores a new version; the scheduler rolls it out by the
// strategy.
func (s *Server) update(wl workloads) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		dryRun, err := boolParam(r, "dryRun")
		if err != nil {
			return err
		}
		rev, err := ifMatch(r)
		if err != nil {
			return err
		}
		obj, err := s.parse(r, wl.kinds...)
		if err != nil {
			return err
		}
		if err := matchPath(r, obj); err != nil {
			return err
		}
		current, err := s.get(r, wl)
		if err != nil {
			return err
		}
		if obj, err = nextVersion(current, obj); err != nil {
			return err
		}
		if dryRun {
			if _, err := s.cfg.Registry.CheckUpdateApp(r.Context(), obj, rev); err != nil {
				return err
			}
			planned, warning, err := s.sizeKept(r.Context(), current, obj)
			if err != nil {
				return err
			}
			return s.writePlan(w, r, planned, warning)
		}
		app, err := s.cfg.Registry.UpdateApp(r.Context(), obj, rev)
		if err != nil {
			return err
		}
		_, warning, err := s.sizeKept(r.Context(), app, obj)
		if err != nil {
			return err
		}
		addWarning(w, warning)
		return s.writeApp(w, r, http.StatusOK, app)
	}
}

// nextVersion is obj as the next version of current: the credentials it
// sends back masked are current's; a HotPatchUpdate whose change needs a
// restart is refused, naming the fields, rather than stalling the
// rollout.
func nextVersion(current *registry.App, obj manifest.Object) (manifest.Object, error) {
	old, err := current.Manifest()
	if err != nil {
		return nil, err
	}
	if obj, err = manifest.KeepCredentials(obj, old); err != nil {
		return nil, err
	}
	if manifest.UpdateStrategyOf(obj).Type == manifest.UpdateHotPatch {
		if errs := manifest.HotPatchChanges(old, obj); len(errs) > 0 {
			return nil, errs
		}
	}
	return obj, nil
}

func (s *Server) writeApp(w http.ResponseWriter, r *http.Request, status int, app *registry.App) error {
	v, err := s.view(r.Context(), s.cfg.Registry, app, false)
	if err != nil {
		return err
	}
	writeJSON(w, status, v)
	return nil
}

// summaryParam reads ?summary=true: an application without its
// instances, only their counts (a list of a fleet of 100,000 instances
// would otherwise carry every one).
func summaryParam(r *http.Request) (bool, error) { return boolParam(r, "summary") }

// view reads, from rd, what GET shows of an application: its instances
// and its rollout; with summary set, only the instances' counts (a
// dashboard polling the summaries of a fleet's applications would
// otherwise have every instance's view made and dropped).
func (s *Server) view(ctx context.Context, rd reader, app *registry.App, summary bool) (AppView, error) {
	groups, err := rd.TaskGroups(ctx, app.Namespace, app.Name)
	if err != nil {
		return AppView{}, err
	}
	ro, err := rolloutIn(ctx, rd, app)
	if err != nil {
		return AppView{}, err
	}
	v := appView(app, groups, ro)
	if summary {
		v.Status.Instances = nil
		return v, nil
	}
	allocs, err := rd.Allocations(ctx, app.Namespace, app.Name)
	if err != nil {
		return AppView{}, err
	}
	v.Status.Instances = instanceViews(groups)
	showAllocations(v.Status.Instances, allocs)
	return v, nil
}

// rollout reads an application's rollout from etcd; nil before the
// scheduler wrote one.
func (s *Server) rollout(r *http.Request, app *registry.App) (*registry.Rollout, error) {
	return rolloutIn(r.Context(), s.cfg.Registry, app)
}

// rolloutIn reads an application's rollout from rd; nil before the
// scheduler wrote one.
func rolloutIn(ctx context.Context, rd reader, app *registry.App) (*registry.Rollout, error) {
	ro, err := rd.GetRollout(ctx, app.Namespace, app.Name)
	if errors.Is(err, errdefs.ErrNotFound) {
		return nil, nil
	}
	return ro, err
}

func (s *Server) getOne(wl workloads) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		summary, err := summaryParam(r)
		if err != nil {
			return err
		}
		rd := s.reads(r)
		app, err := s.getFrom(r, rd, wl)
		if err != nil {
			return err
		}
		v, err := s.view(r.Context(), rd, app, summary)
		if err != nil {
			return err
		}
		writeAppView(w, http.StatusOK, v)
		return nil
	}
}

// instances lists an application's instances by ID, a page at a time
// (?limit=, ?after= the last ID of the page before), like the lists but
// ordered by number: the console shows a fleet of 100,000 instances
// without reading them all at once.
func (s *Server) instances(wl workloads) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		limit, err := pageLimit(r, manifest.MaxInstances)
		if err != nil {
			return err
		}
		after := -1
		if v := r.URL.Query().Get("after"); v != "" {
			if after, err = strconv.Atoi(v); err != nil || after < 0 {
				return queryError(field.ErrorList{field.Invalid("after", "want an instance ID (the next of the page before), got %q", v)})
			}
		}
		rd := s.reads(r)
		app, err := s.getFrom(r, rd, wl)
		if err != nil {
			return err
		}
		groups, err := rd.TaskGroups(r.Context(), app.Namespace, app.Name)
		if err != nil {
			return err
		}
		slices.SortFunc(groups, func(a, b *registry.TaskGroup) int { return cmp.Compare(a.Index, b.Index) })
		first, _ := slices.BinarySearchFunc(groups, after+1, func(g *registry.TaskGroup, id int) int { return cmp.Compare(g.Index, id) })
		allocs, err := rd.Allocations(r.Context(), app.Namespace, app.Name)
		if err != nil {
			return err
		}
		page, next := []InstanceView{}, ""
		for _, g := range groups[first:min(first+limit, len(groups))] {
			page = append(page, instanceView(g))
		}
		showAllocations(page, allocs)
		if first+limit < len(groups) {
			next = strconv.Itoa(page[len(page)-1].ID)
		}
		writeList(w, "instances", page, next)
		return nil
	}
}

func (s *Server) list(wl workloads) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		p, err := readListPage(r)
		if err != nil {
			return err
		}
		summary, err := summaryParam(r)
		if err != nil {
			return err
		}
		rd := s.reads(r)
		apps, err := rd.ListApps(r.Context(), r.URL.Query().Get("namespace"))
		if err != nil {
			return err
		}
		apps = slices.DeleteFunc(apps, func(app *registry.App) bool { return !wl.serves(app.Kind) })
		apps, next := pageOf(p, apps, func(app *registry.App) string { return namespacedKey(app.Namespace, app.Name) })
		views := []AppView{}
		for _, app := range apps {
			v, err := s.view(r.Context(), rd, app, summary)
			if err != nil {
				return err
			}
			views = append(views, v)
		}
		writeList(w, wl.list, views, next)
		return nil
	}
}

// remove answers 202: the scheduler kills the instances, then removes
// the application; GET shows state Deleting until then, 404 after.
func (s *Server) remove(wl workloads) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if _, err := s.get(r, wl); err != nil {
			return err
		}
		ns, name := r.PathValue("ns"), r.PathValue("name")
		force, err := boolParam(r, "force")
		if err != nil {
			return err
		}
		app, err := s.cfg.Registry.DeleteApp(r.Context(), ns, name, force)
		if err != nil {
			return err
		}
		if app == nil {
			writeJSON(w, http.StatusAccepted, map[string]string{"namespace": ns, "name": name, "state": "Deleted"})
			return nil
		}
		return s.writeApp(w, r, http.StatusAccepted, app)
	}
}

// boolParam reads the query parameter name: "true", or "false" (or none);
// ?force=true skips the PreDeleteHook of what is deleted, ?dryRun=true
// answers with the plan and stores nothing.
func boolParam(r *http.Request, name string) (bool, error) {
	switch v := r.URL.Query().Get(name); v {
	case "", "false":
		return false, nil
	case "true":
		return true, nil
	default:
		return false, queryError(field.ErrorList{field.Invalid(field.Path(name), "want true or false, got %q", v)})
	}
}

func (s *Server) scale(wl workloads) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		body, err := s.readBody(r)
		if err != nil {
			return err
		}
		var req apiv1.ScaleRequest
		if err := strictjson.Decode(body, &req); err != nil {
			return err
		}
		if req.Instances == nil {
			return field.ErrorList{field.Required("instances")}
		}
		if *req.Instances < 0 {
			return field.ErrorList{field.Invalid("instances", "must be ≥ 0, got %d", *req.Instances)}
		}
		if *req.Instances > manifest.MaxInstances {
			return field.ErrorList{field.Invalid("instances", "must be at most %d, got %d", manifest.MaxInstances, *req.Instances)}
		}
		if _, err := s.get(r, wl); err != nil {
			return err
		}
		app, err := s.cfg.Registry.ScaleApp(r.Context(), r.PathValue("ns"), r.PathValue("name"), *req.Instances, req.Force)
		if err != nil {
			return err
		}
		return s.writeApp(w, r, http.StatusAccepted, app)
	}
}

func (s *Server) versions(wl workloads) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if _, err := s.get(r, wl); err != nil {
			return err
		}
		versions, err := s.cfg.Registry.AppVersions(r.Context(), r.PathValue("ns"), r.PathValue("name"))
		if err != nil {
			return err
		}
		for i := range versions {
			versions[i].Spec = shownSpec(versions[i].Spec)
		}
		writeJSON(w, http.StatusOK, map[string]any{"versions": nonNil(versions)})
		return nil
	}
}
