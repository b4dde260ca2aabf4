package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// objectKind is one of the kinds served with plain CRUD.
type objectKind struct {
	kind manifest.Kind
	path string
}

var objectKinds = []objectKind{
	{manifest.KindConfigMap, "configmaps"},
	{manifest.KindSecret, "secrets"},
	{manifest.KindHookTemplate, "hooktemplates"},
	// Stored and served as the original's bcs-services were, for the
	// load balancers and service discovery users run; nothing in the
	// scheduler reads them.
	{manifest.KindService, "services"},
}

// deleteParams are the query parameters of a delete: configmaps and
// secrets that applications take are deleted only with force.
func (k objectKind) deleteParams() []string {
	if k.kind == manifest.KindConfigMap || k.kind == manifest.KindSecret {
		return []string{"force"}
	}
	return nil
}

func objectView(o *registry.Object) (ObjectView, error) {
	v := ObjectView{Kind: o.Kind, Namespace: o.Namespace, Name: o.Name, Revision: o.Revision,
		Spec: o.Spec, CreatedAt: o.CreatedAt, UpdatedAt: o.UpdatedAt}
	m, err := o.Manifest()
	if err != nil {
		return v, err
	}
	if secret, ok := m.(*manifest.Secret); ok {
		for key, d := range secret.Datas {
			d.Content = ""
			secret.Datas[key] = d
		}
	}
	v.Spec, err = json.Marshal(manifest.RedactCredentials(m))
	return v, err
}

func (s *Server) writeObject(w http.ResponseWriter, status int, o *registry.Object) error {
	v, err := objectView(o)
	if err != nil {
		return err
	}
	writeJSON(w, status, v)
	return nil
}

func (s *Server) createObject(k objectKind) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		obj, err := s.parse(r, k.kind)
		if err != nil {
			return err
		}
		if obj, err = manifest.KeepCredentials(obj, nil); err != nil {
			return err
		}
		o, err := s.cfg.Registry.PutObject(r.Context(), obj, -1)
		if err != nil {
			return err
		}
		return s.writeObject(w, http.StatusCreated, o)
	}
}

func (s *Server) updateObject(k objectKind) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		rev, err := ifMatch(r)
		if err != nil {
			return err
		}
		obj, err := s.parse(r, k.kind)
		if err != nil {
			return err
		}
		if err := matchPath(r, obj); err != nil {
			return err
		}
		if obj, rev, err = s.keepObjectCredentials(r, obj, rev); err != nil {
			return err
		}
		o, err := s.cfg.Registry.PutObject(r.Context(), obj, rev)
		if err != nil {
			return err
		}
		return s.writeObject(w, http.StatusOK, o)
	}
}

// keepObjectCredentials keeps the stored passwords that obj, read back
// from the API, shows redacted; the write is then conditional on the
// revision they were kept from.
func (s *Server) keepObjectCredentials(r *http.Request, obj manifest.Object, rev int64) (manifest.Object, int64, error) {
	meta, _ := manifest.MetaOf(obj)
	stored, err := s.cfg.Registry.GetObject(r.Context(), obj.Kind(), meta.Namespace, meta.Name)
	if errors.Is(err, errdefs.ErrNotFound) {
		obj, err = manifest.KeepCredentials(obj, nil)
		return obj, rev, err
	}
	if err != nil {
		return nil, 0, err
	}
	old, err := stored.Manifest()
	if err != nil {
		return nil, 0, err
	}
	if obj, err = manifest.KeepCredentials(obj, old); err != nil {
		return nil, 0, err
	}
	if rev == 0 {
		rev = stored.Revision
	}
	return obj, rev, nil
}

func (s *Server) getObject(k objectKind) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		o, err := s.cfg.Registry.GetObject(r.Context(), k.kind, r.PathValue("ns"), r.PathValue("name"))
		if err != nil {
			return err
		}
		return s.writeObject(w, http.StatusOK, o)
	}
}

func (s *Server) listObjects(k objectKind) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		p, err := readListPage(r)
		if err != nil {
			return err
		}
		objs, err := s.cfg.Registry.ListObjects(r.Context(), k.kind, r.URL.Query().Get("namespace"))
		if err != nil {
			return err
		}
		objs, next := pageOf(p, objs, objectKey)
		views := make([]ObjectView, 0, len(objs))
		for _, o := range objs {
			v, err := objectView(o)
			if err != nil {
				return err
			}
			views = append(views, v)
		}
		writeList(w, k.path, views, next)
		return nil
	}
}

// deleteObject deletes a configmap, secret or hook template. A configmap
// or secret that an application takes is kept (409 naming the
// applications: their next launch would wait for it) unless ?force=true.
func (s *Server) deleteObject(k objectKind) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		ns, name := r.PathValue("ns"), r.PathValue("name")
		force, err := boolParam(r, "force")
		if err != nil {
			return err
		}
		if k.kind == manifest.KindConfigMap || k.kind == manifest.KindSecret {
			if _, err := s.cfg.Registry.GetObject(r.Context(), k.kind, ns, name); err != nil {
				return err
			}
			users, err := s.dataUsers(r.Context(), k.kind, ns, name)
			if err != nil {
				return err
			}
			if len(users) > 0 && !force {
				return fmt.Errorf("%s %s/%s is taken by %s: remove it from them first, or delete with ?force=true (their next launches wait until it exists again): %w",
					k.kind, ns, name, strings.Join(users, ", "), errdefs.ErrConflict)
			}
		}
		if err := s.cfg.Registry.DeleteObject(r.Context(), k.kind, ns, name); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
}

// dataUsers names the applications ("namespace/name") not being deleted
// whose manifest takes the configmap or secret ns/name.
func (s *Server) dataUsers(ctx context.Context, kind manifest.Kind, ns, name string) ([]string, error) {
	apps, err := s.cfg.Registry.ListApps(ctx, ns)
	if err != nil {
		return nil, err
	}
	var users []string
	for _, app := range apps {
		if app.State == registry.AppDeleting {
			continue
		}
		obj, err := app.Manifest()
		if err != nil {
			return nil, fmt.Errorf("stored application %s/%s: %w", app.Namespace, app.Name, err)
		}
		takes, secrets := manifest.DataRefs(obj)
		if kind == manifest.KindSecret {
			takes = secrets
		}
		if slices.Contains(takes, name) {
			users = append(users, app.Namespace+"/"+app.Name)
		}
	}
	return users, nil
}
