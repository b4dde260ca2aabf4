package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/field"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/strictjson"
)

// AppView is an application as GET returns it.
type AppView struct {
	Namespace string          `json:"namespace"`
	Name      string          `json:"name"`
	Kind      manifest.Kind   `json:"kind"`
	Version   uint64          `json:"version"`
	Revision  int64           `json:"revision"`
	Instances int             `json:"instances"` // desired
	Spec      json.RawMessage `json:"spec"`
	Status    AppStatus       `json:"status"`
	CreatedAt time.Time       `json:"createdAt"`
	UpdatedAt time.Time       `json:"updatedAt"`
}

// AppStatus is what the scheduler reports of an application.
type AppStatus struct {
	State     registry.AppState `json:"state"`
	Message   string            `json:"message,omitempty"`
	Instances []InstanceView    `json:"instances"`
}

// InstanceView is one instance of an application.
type InstanceView struct {
	ID          int    `json:"id"`
	TaskGroupID string `json:"taskGroupID"`
	State       string `json:"state"`
	Agent       string `json:"agent,omitempty"`
	Host        string `json:"host,omitempty"`
	// HostIP is the agent's address: host ports answer there.
	HostIP  string            `json:"hostIP,omitempty"`
	Ports   map[string]uint32 `json:"ports,omitempty"`
	Healthy *bool             `json:"healthy,omitempty"`
	// RemoteHealthy is the scheduler's REMOTE_HTTP/REMOTE_TCP verdict.
	RemoteHealthy *bool  `json:"remoteHealthy,omitempty"`
	RemoteMessage string `json:"remoteMessage,omitempty"`
	Restarts      int    `json:"restarts"`
	Message       string `json:"message,omitempty"`
}

func appView(app *registry.App, groups []*registry.TaskGroup) AppView {
	v := AppView{
		Namespace: app.Namespace, Name: app.Name, Kind: app.Kind, Version: app.Version, Revision: app.Revision,
		Instances: app.Instances, Spec: app.Spec, CreatedAt: app.CreatedAt, UpdatedAt: app.UpdatedAt,
		Status: AppStatus{State: app.State, Message: app.Message, Instances: []InstanceView{}},
	}
	for _, g := range groups {
		v.Status.Instances = append(v.Status.Instances, InstanceView{
			ID: g.Index, TaskGroupID: g.ID, State: g.State, Agent: g.AgentID, Host: g.Host, HostIP: g.HostIP,
			Ports: g.Ports, Healthy: g.Healthy, RemoteHealthy: g.RemoteHealthy, RemoteMessage: g.RemoteMessage,
			Restarts: g.Restarts, Message: g.Message,
		})
	}
	return v
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
	allowed := false
	for _, k := range kinds {
		allowed = allowed || obj.Kind() == k
	}
	if !allowed {
		return nil, field.ErrorList{field.Invalid("kind", "want %s here, got %q", kindNames(kinds), obj.Kind())}
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
	// Report decoding and validation problems together, but not twice for a
	// field that failed to decode. Only decoding problems hide validation
	// ones: two validation problems of one field are both reported.
	decoding := errs
	for _, e := range obj.Validate(resolver) {
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

// underAny reports whether p is, or lies under, the path of one of errs.
func underAny(p field.Path, errs field.ErrorList) bool {
	for _, e := range errs {
		if e.Path == p || strings.HasPrefix(string(p), string(e.Path)+".") || strings.HasPrefix(string(p), string(e.Path)+"[") {
			return true
		}
	}
	return false
}

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

func (s *Server) createApp(w http.ResponseWriter, r *http.Request) error {
	obj, err := s.parse(r, manifest.KindApplication, manifest.KindProcess)
	if err != nil {
		return err
	}
	app, err := s.cfg.Registry.CreateApp(r.Context(), obj)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, appView(app, nil))
	return nil
}

func (s *Server) updateApp(w http.ResponseWriter, r *http.Request) error {
	rev, err := ifMatch(r)
	if err != nil {
		return err
	}
	obj, err := s.parse(r, manifest.KindApplication, manifest.KindProcess)
	if err != nil {
		return err
	}
	if err := matchPath(r, obj); err != nil {
		return err
	}
	app, err := s.cfg.Registry.UpdateApp(r.Context(), obj, rev)
	if err != nil {
		return err
	}
	return s.writeApp(w, r, http.StatusOK, app)
}

func (s *Server) writeApp(w http.ResponseWriter, r *http.Request, status int, app *registry.App) error {
	groups, err := s.cfg.Registry.TaskGroups(r.Context(), app.Namespace, app.Name)
	if err != nil {
		return err
	}
	writeJSON(w, status, appView(app, groups))
	return nil
}

func (s *Server) getApp(w http.ResponseWriter, r *http.Request) error {
	app, err := s.cfg.Registry.GetApp(r.Context(), r.PathValue("ns"), r.PathValue("name"))
	if err != nil {
		return err
	}
	return s.writeApp(w, r, http.StatusOK, app)
}

func (s *Server) listApps(w http.ResponseWriter, r *http.Request) error {
	apps, err := s.cfg.Registry.ListApps(r.Context(), r.URL.Query().Get("namespace"))
	if err != nil {
		return err
	}
	views := make([]AppView, 0, len(apps))
	for _, app := range apps {
		groups, err := s.cfg.Registry.TaskGroups(r.Context(), app.Namespace, app.Name)
		if err != nil {
			return err
		}
		views = append(views, appView(app, groups))
	}
	writeJSON(w, http.StatusOK, map[string]any{"apps": views})
	return nil
}

// deleteApp answers 202: the scheduler kills the instances, then removes
// the application; GET shows state Deleting until then, 404 after.
func (s *Server) deleteApp(w http.ResponseWriter, r *http.Request) error {
	ns, name := r.PathValue("ns"), r.PathValue("name")
	app, err := s.cfg.Registry.DeleteApp(r.Context(), ns, name)
	if err != nil {
		return err
	}
	if app == nil {
		writeJSON(w, http.StatusAccepted, map[string]string{"namespace": ns, "name": name, "state": "Deleted"})
		return nil
	}
	return s.writeApp(w, r, http.StatusAccepted, app)
}

type scaleRequest struct {
	Instances *int `json:"instances"`
}

func (s *Server) scaleApp(w http.ResponseWriter, r *http.Request) error {
	body, err := s.readBody(r)
	if err != nil {
		return err
	}
	var req scaleRequest
	if err := strictjson.Decode(body, &req); err != nil {
		return err
	}
	if req.Instances == nil {
		return field.ErrorList{field.Required("instances")}
	}
	if *req.Instances < 0 {
		return field.ErrorList{field.Invalid("instances", "must be ≥ 0, got %d", *req.Instances)}
	}
	app, err := s.cfg.Registry.ScaleApp(r.Context(), r.PathValue("ns"), r.PathValue("name"), *req.Instances)
	if err != nil {
		return err
	}
	return s.writeApp(w, r, http.StatusAccepted, app)
}

func (s *Server) appVersions(w http.ResponseWriter, r *http.Request) error {
	versions, err := s.cfg.Registry.AppVersions(r.Context(), r.PathValue("ns"), r.PathValue("name"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"versions": nonNil(versions)})
	return nil
}
