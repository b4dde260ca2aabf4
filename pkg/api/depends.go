package api

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/bcs-mesos/bcs-mesos/pkg/auth"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/field"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// dependsKind is served at /v1/depends: created and replaced like the
// other objects, read with its pods, deleted only when unreferenced
// (or with force).
var dependsKind = objectKind{manifest.KindDepends, "depends"}

// dependsUse is who uses the depends objects: the applications naming
// each, and its pods, by "namespace/name".
type dependsUse struct {
	apps map[string][]*registry.App
	pods map[string][]*registry.App
}

func (s *Server) dependsUse(ctx context.Context) (dependsUse, error) {
	use := dependsUse{apps: map[string][]*registry.App{}, pods: map[string][]*registry.App{}}
	apps, err := s.cfg.Registry.ListApps(ctx, "")
	if err != nil {
		return use, err
	}
	for _, app := range apps {
		if p := app.DependencyPod; p != nil {
			use.pods[p.Depends()] = append(use.pods[p.Depends()], app)
			continue
		}
		obj, err := app.Manifest()
		if err != nil {
			return use, fmt.Errorf("stored application %s/%s: %w", app.Namespace, app.Name, err)
		}
		for _, ref := range manifest.DependsOf(obj) {
			key := ref.Namespace + "/" + ref.Name
			use.apps[key] = append(use.apps[key], app)
		}
	}
	return use, nil
}

// referencedBy names the applications that name depends object key in
// the namespaces readable allows, and counts the others.
func (use dependsUse) referencedBy(key string, readable func(auth.Access) bool) (named []string, others int) {
	named = []string{}
	for _, app := range use.apps[key] {
		if readable(auth.Access{Namespace: app.Namespace}) {
			named = append(named, app.Namespace+"/"+app.Name)
		} else {
			others++
		}
	}
	return named, others
}

func (s *Server) dependsView(ctx context.Context, o *registry.Object, use dependsUse, readable func(auth.Access) bool) (DependsView, error) {
	key := o.Namespace + "/" + o.Name
	v := DependsView{Status: DependsStatus{Pods: []DependencyPodView{}}}
	v.Status.ReferencedBy, v.Status.ReferencedByOthers = use.referencedBy(key, readable)
	var err error
	if v.ObjectView, err = objectView(o); err != nil {
		return v, err
	}
	for _, app := range use.pods[key] {
		p := app.DependencyPod
		pv := DependencyPodView{Namespace: app.Namespace, Name: app.Name, Node: p.Node, Policy: p.Policy, ServedNamespace: p.ServedNamespace,
			Users: p.Users, IdleSince: p.IdleSince, State: app.State, Message: app.Message, Version: app.Version}
		groups, err := s.cfg.Registry.TaskGroups(ctx, app.Namespace, app.Name)
		if err != nil {
			return v, err
		}
		for _, g := range groups {
			pv.Agent, pv.TaskGroupID, pv.TaskState = g.AgentID, g.ID, g.State
		}
		v.Status.Pods = append(v.Status.Pods, pv)
	}
	return v, nil
}

func (s *Server) getDepends(w http.ResponseWriter, r *http.Request) error {
	o, err := s.cfg.Registry.GetObject(r.Context(), manifest.KindDepends, r.PathValue("ns"), r.PathValue("name"))
	if err != nil {
		return err
	}
	use, err := s.dependsUse(r.Context())
	if err != nil {
		return err
	}
	v, err := s.dependsView(r.Context(), o, use, mayRead(r))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

func (s *Server) listDepends(w http.ResponseWriter, r *http.Request) error {
	p, err := readListPage(r)
	if err != nil {
		return err
	}
	objs, err := s.cfg.Registry.ListObjects(r.Context(), manifest.KindDepends, r.URL.Query().Get("namespace"))
	if err != nil {
		return err
	}
	objs, next := pageOf(p, objs, objectKey)
	use, err := s.dependsUse(r.Context())
	if err != nil {
		return err
	}
	views := make([]DependsView, 0, len(objs))
	for _, o := range objs {
		v, err := s.dependsView(r.Context(), o, use, mayRead(r))
		if err != nil {
			return err
		}
		views = append(views, v)
	}
	writeList(w, dependsKind.path, views, next)
	return nil
}

// deleteDepends deletes a depends object no application references;
// with ?force=true also a referenced one, and the scheduler stops its
// pods (seed 002: "force ... 会强制停掉相关Pod").
func (s *Server) deleteDepends(w http.ResponseWriter, r *http.Request) error {
	ns, name := r.PathValue("ns"), r.PathValue("name")
	force, err := boolParam(r, "force")
	if err != nil {
		return err
	}
	if _, err := s.cfg.Registry.GetObject(r.Context(), manifest.KindDepends, ns, name); err != nil {
		return err
	}
	use, err := s.dependsUse(r.Context())
	if err != nil {
		return err
	}
	if named, others := use.referencedBy(ns+"/"+name, mayRead(r)); len(named)+others > 0 && !force {
		if others > 0 {
			named = append(named, fmt.Sprintf("%d application(s) of namespaces you may not read", others))
		}
		return fmt.Errorf("depends %s/%s is referenced by %s: remove the references first, or delete with ?force=true to stop its pods anyway: %w",
			ns, name, strings.Join(named, ", "), errdefs.ErrConflict)
	}
	if err := s.cfg.Registry.DeleteObject(r.Context(), manifest.KindDepends, ns, name); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// seedDepends serves seed 002's Dependency API at /api/depends with the
// v1 handler: the object is named by ?name= (and ?namespace=, default
// defaultGroup), or for PUT by the body's metadata, where v1 names it in
// the path.
func (s *Server) seedDepends(v1 handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q := r.URL.Query()
		ns, name := q.Get("namespace"), q.Get("name")
		if ns == "" {
			ns = manifest.DefaultNamespace
		}
		if r.Method == http.MethodPut {
			body, err := s.readBody(r)
			if err != nil {
				return err
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			if obj, _ := manifest.Parse(body); obj != nil {
				meta, _ := manifest.MetaOf(obj)
				ns, name = meta.Namespace, meta.Name
			}
			if name == "" {
				return field.ErrorList{field.Required("metadata.name")}
			}
		}
		if name == "" {
			return field.ErrorList{field.Required("name")}
		}
		r.SetPathValue("ns", ns)
		r.SetPathValue("name", name)
		return v1(w, r)
	}
}
