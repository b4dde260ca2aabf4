package api

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/apiv1"
	"github.com/bcs-mesos/bcs-mesos/pkg/auth"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/strictjson"
)

// DefaultAuditKeep is how many audit entries the store keeps: months of a
// busy team's writes, a few megabytes of etcd.
const DefaultAuditKeep = 10000

// Authenticator names the caller of a request (auth.Authenticator).
type Authenticator interface {
	Authenticate(r *http.Request) (auth.Identity, error)
}

// AuthConfig turns on authentication, authorization by role and the audit
// log of writes.
type AuthConfig struct {
	Authenticator Authenticator
	// AuditKeep is how many audit entries the store keeps, the newest;
	// default DefaultAuditKeep.
	AuditKeep int64
}

// openRoutes answer without credentials: probes, scrapers and clients
// discovering the API.
var openRoutes = map[string]bool{"GET /healthz": true, "GET /openapi.json": true}

// scope is what a request concerns: the access it needs and the object it
// names, for the audit log.
type scope struct {
	access auth.Access
	name   string
}

// scopeFunc works out a request's scope from its path, query or body; an
// error is answered as it is (the body the handler would refuse too).
type scopeFunc func(r *http.Request) (scope, error)

// scopeOf is how a route finds its scope: from the {ns} of its path, the
// namespace a task group or notification ID names, the body of a create,
// ?namespace= of a list, or the cluster.
func (s *Server) scopeOf(pattern string) scopeFunc {
	method, path, _ := strings.Cut(pattern, " ")
	write := method != http.MethodGet && method != http.MethodHead && pattern != "POST /v1/plan"
	inPath := func(r *http.Request) (scope, error) {
		return scope{auth.Access{Write: write, Namespace: r.PathValue("ns")}, r.PathValue("name")}, nil
	}
	cluster := func(r *http.Request) (scope, error) {
		name := r.PathValue("agent")
		if path == "/v1/notifies" {
			name = "" // the callback URL may hold credentials
		}
		return scope{auth.Access{Write: write, Cluster: true}, name}, nil
	}
	inQuery := func(r *http.Request) (scope, error) {
		return scope{access: auth.Access{Write: write, Namespace: r.URL.Query().Get("namespace")}}, nil
	}
	switch {
	case strings.Contains(path, "{ns}"):
		return inPath
	case strings.HasPrefix(path, "/v1/taskgroups/{id}"):
		return func(r *http.Request) (scope, error) {
			id, err := registry.ParseID(r.PathValue("id"))
			if err != nil {
				return scope{}, fmt.Errorf("task group %q: %w", r.PathValue("id"), errdefs.ErrNotFound)
			}
			return scope{auth.Access{Write: write, Namespace: id.Namespace}, r.PathValue("id")}, nil
		}
	case path == "/v1/notifications/{id}":
		return func(r *http.Request) (scope, error) {
			n, err := s.cfg.Registry.GetNotification(r.Context(), r.PathValue("id"))
			if err != nil {
				return scope{}, err
			}
			return scope{auth.Access{Namespace: n.Namespace}, n.ID}, nil
		}
	case strings.HasPrefix(path, "/v1/agents"), path == "/v1/engine", path == "/v1/engine/config", path == "/api/engine/config", path == "/v1/notifies", path == "/v1/leader":
		return cluster
	case path == "/v1/events":
		// Without ?namespace= every caller may follow it: the stream
		// leaves out what the caller may not read.
		return func(r *http.Request) (scope, error) {
			ns := r.URL.Query().Get("namespace")
			return scope{access: auth.Access{Cluster: ns == "", Namespace: ns}}, nil
		}
	case path == "/v1/hookruns" && method == http.MethodPost:
		return func(r *http.Request) (scope, error) {
			body, err := s.peekBody(r)
			if err != nil {
				return scope{}, err
			}
			var req apiv1.HookRunRequest
			if err := strictjson.Decode(body, &req); err != nil {
				return scope{}, err
			}
			return scope{auth.Access{Write: write, Namespace: cmp.Or(req.Metadata.Namespace, manifest.DefaultNamespace)}, req.Metadata.Name}, nil
		}
	case method == http.MethodPost, path == "/api/depends" && method == http.MethodPut:
		return s.fromBody(write, manifestRoutes[path])
	case path == "/api/depends":
		return func(r *http.Request) (scope, error) {
			q := r.URL.Query()
			return scope{auth.Access{Write: write, Namespace: cmp.Or(q.Get("namespace"), manifest.DefaultNamespace)}, q.Get("name")}, nil
		}
	}
	// A list: ?namespace= or every one.
	return inQuery
}

// fromBody finds the scope in the manifest a request sends, which must
// be of one of the route's kinds (else a 400 naming kind): its metadata's
// namespace and name, a command's target's namespace. The handler parses
// the same body with the same manifest.Parse.
func (s *Server) fromBody(write bool, kinds []manifest.Kind) scopeFunc {
	return func(r *http.Request) (scope, error) {
		body, err := s.peekBody(r)
		if err != nil {
			return scope{}, err
		}
		obj, decodeErr := manifest.Parse(body)
		if obj == nil {
			return scope{}, decodeErr
		}
		if err := checkKind(obj, kinds); err != nil {
			return scope{}, err
		}
		meta, _ := manifest.MetaOf(obj)
		ns := meta.Namespace
		if cmd, ok := obj.(*manifest.Command); ok {
			ns = cmd.Spec.CommandTargetRef.Namespace
		}
		return scope{auth.Access{Write: write, Namespace: ns}, meta.Name}, nil
	}
}

// peekBody reads the request body and puts it back for the handler.
func (s *Server) peekBody(r *http.Request) ([]byte, error) {
	body, err := s.readBody(r)
	if err != nil {
		return nil, err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body, nil
}

type identityKey struct{}

// identityOf returns the caller that authenticated r, if any did.
func identityOf(r *http.Request) (auth.Identity, bool) {
	id, ok := r.Context().Value(identityKey{}).(auth.Identity)
	return id, ok
}

// mayRead returns whether the caller of r may read what a GET of an
// access would: everything on an API without authentication.
func mayRead(r *http.Request) func(auth.Access) bool {
	id, ok := identityOf(r)
	return func(a auth.Access) bool { return !ok || id.Authorize(a) == nil }
}

// guarded serves a route behind authentication and authorization: 401
// without a caller, 403 when its role does not allow the route's scope;
// every write of a known caller, allowed or not, goes to the audit log
// (plans and dry runs, which change nothing, do not).
func (s *Server) guarded(pattern string, serve func(http.ResponseWriter, *http.Request) error) http.HandlerFunc {
	if s.cfg.Auth == nil || openRoutes[pattern] {
		return func(w http.ResponseWriter, r *http.Request) {
			if err := serve(w, r); err != nil {
				writeError(w, r, err)
			}
		}
	}
	scopeOf := s.scopeOf(pattern)
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := s.cfg.Auth.Authenticator.Authenticate(r)
		if err != nil {
			if r.Method != http.MethodGet && r.Method != http.MethodHead {
				s.cfg.Logger.Warn("unauthenticated write refused", "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr, "err", err)
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="bcs-scheduler"`)
			writeError(w, r, err)
			return
		}
		r = r.WithContext(context.WithValue(r.Context(), identityKey{}, id))
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		var sc scope
		err = func() error {
			if sc, err = scopeOf(r); err != nil {
				return err
			}
			if err := id.Authorize(sc.access); err != nil {
				return fmt.Errorf("%s %s: %w", r.Method, r.URL.Path, err)
			}
			return serve(rec, r)
		}()
		if err != nil {
			writeError(rec, r, err)
		}
		if changesState(r, pattern) {
			s.audit(r, pattern, id, sc, rec.status, err)
		}
	}
}

// changesState reports whether a request may change what is stored: a
// write that is not a plan or a dry run (which change nothing, the audit
// log included).
func changesState(r *http.Request, pattern string) bool {
	return r.Method != http.MethodGet && r.Method != http.MethodHead && pattern != "POST /v1/plan" &&
		r.URL.Query().Get("dryRun") != "true"
}

// audit records one write: a structured log line, and an entry of the
// log GET /v1/audit reads. Neither holds the body, the query or the
// credentials. The entry is stored before the caller is answered, unless
// the write failed as unavailable (etcd out of reach, mostly): storing it
// could wait as long again, so the caller is answered at once and the
// entry stored behind its back, when etcd allows.
func (s *Server) audit(r *http.Request, pattern string, id auth.Identity, sc scope, status int, err error) {
	e := registry.AuditEntry{
		Time: s.cfg.Clock.Now(), User: id.User, Role: string(id.Role), Method: r.Method, Route: pattern, Path: r.URL.Path,
		Namespace: sc.access.Namespace, Name: sc.name, Status: status,
	}
	if err != nil {
		_, body := errorResponse(r, err)
		e.Code = body.Error.Code
	}
	s.cfg.Logger.Info("audit", "user", e.User, "role", e.Role, "method", e.Method, "route", e.Route, "path", e.Path,
		"namespace", e.Namespace, "name", e.Name, "status", e.Status, "code", e.Code)
	// The write happened whether or not its client still waits.
	ctx := context.WithoutCancel(r.Context())
	store := func() {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if err := s.cfg.Registry.AppendAudit(ctx, &e, s.cfg.Auth.AuditKeep); err != nil {
			s.cfg.Logger.Error("audit entry not stored", "route", e.Route, "path", e.Path, "err", err)
		}
	}
	if errors.Is(err, errdefs.ErrUnavailable) {
		go store()
		return
	}
	store()
}

// listAudit is the audit log, newest first, filtered by since (RFC 3339),
// user and namespace; limit bounds a page and next, when set, is the
// before= of the next one.
func (s *Server) listAudit(w http.ResponseWriter, r *http.Request) error {
	if s.cfg.Auth == nil {
		return fmt.Errorf("no audit log: this API runs without authentication: %w", errdefs.ErrNotFound)
	}
	q := r.URL.Query()
	limit, err := pageLimit(r, defaultLogPage)
	if err != nil {
		return err
	}
	var since time.Time
	if v := q.Get("since"); v != "" {
		if since, err = time.Parse(time.RFC3339Nano, v); err != nil {
			return fmt.Errorf("since: want an RFC 3339 time (2026-11-24T08:00:00Z), got %q: %w", v, errdefs.ErrInvalidArgument)
		}
	}
	all, err := s.cfg.Registry.ListAudit(r.Context())
	if err != nil {
		return err
	}
	page, next := []registry.AuditEntry{}, ""
	before := q.Get("before")
	for i := len(all) - 1; i >= 0; i-- {
		e := all[i]
		switch {
		case before != "" && e.ID >= before,
			!since.IsZero() && e.Time.Before(since),
			q.Get("user") != "" && e.User != q.Get("user"),
			q.Get("namespace") != "" && e.Namespace != q.Get("namespace"):
			continue
		}
		if len(page) == limit {
			next = page[len(page)-1].ID
			break
		}
		page = append(page, e)
	}
	writeList(w, "entries", page, next)
	return nil
}
