package api

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"mime"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/bcs-mesos/bcs-mesos/pkg/admission"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/field"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// DefaultMaxBodyBytes bounds a request body: the largest manifests are a few
// tens of kilobytes.
const DefaultMaxBodyBytes = 1 << 20

// Timeouts bound how long a client may hold a connection to the API
// without sending what it must: a client trickling its request holds a
// connection and a goroutine.
type Timeouts struct {
	// Header bounds the reading of a request's headers.
	Header time.Duration
	// Request bounds the reading of a whole request, headers and body.
	// What follows is not bounded by it: net/http lifts the deadline once
	// the body is read, so an exec may take its 10 minutes and the event
	// stream and followed logs stay open.
	Request time.Duration
	// Idle closes a kept-alive connection no request comes on.
	Idle time.Duration
	// Write bounds a write from its arrival to its answer, the time its
	// body takes to arrive not counted: the wait for a leader and the
	// store's reads and writes it makes together. With etcd away it is a
	// 503 within Write, not after each read's own timeout in turn (a
	// manifest's references alone are four reads). Messages to executors
	// and commands wait for their executors instead.
	Write time.Duration
}

// DefaultTimeouts: a body of DefaultMaxBodyBytes arrives within Request
// at about 35 KiB/s; a write takes what one store request may.
var DefaultTimeouts = Timeouts{Header: 10 * time.Second, Request: 30 * time.Second, Idle: 2 * time.Minute,
	Write: store.DefaultRequestTimeout}

// HTTPServer returns the http.Server to serve h, the API (with the
// console) on: the reading of requests and idle connections bounded by
// Config.Timeouts. A request not read in time is a 408 and its
// connection is closed.
func (s *Server) HTTPServer(h http.Handler) *http.Server {
	t := s.cfg.Timeouts
	return &http.Server{Handler: h, ReadHeaderTimeout: t.Header, ReadTimeout: t.Request, IdleTimeout: t.Idle}
}

// Leadership tells the API which replica leads. Writes go to the leader.
type Leadership interface {
	// Leader returns the leader's API URL (e.g. "http://127.0.0.1:8080")
	// and whether this replica is the leader.
	Leader() (url string, self bool)
}

// Single is the Leadership of a scheduler running alone: it always leads.
type Single struct{ URL string }

// Leader implements Leadership.
func (s Single) Leader() (string, bool) { return s.URL, true }

// Config configures a Server.
type Config struct {
	Registry *registry.Registry
	// View, when set, serves the reads of applications, instances and
	// agents instead of etcd, once it reflects the writes acknowledged
	// before each read; ViewWait bounds that wait (DefaultViewWait),
	// after which the read goes to etcd.
	View         *registry.Viewed
	ViewWait     time.Duration
	Leadership   Leadership
	MaxBodyBytes int64 // 0: DefaultMaxBodyBytes
	// Healthy reports whether the replica can serve (the store answers).
	Healthy func(context.Context) error
	// Operator runs task group operations; nil where no scheduler runs.
	Operator Operator
	// Planner answers POST /v1/plan and ?dryRun=true; nil where no
	// scheduler runs.
	Planner Planner
	// AutoscalePlanner answers an autoscaler's dry run with the decision
	// the leader would make; nil: the dry run answers without one.
	AutoscalePlanner AutoscalePlanner
	// FilesDir, when set, is served read-only under /files/: packages and
	// executor binaries for agents to fetch (the dev setup's repository).
	FilesDir string
	// Events configures the event stream, GET /v1/events; its
	// WriteTimeout bounds every streamed write.
	Events EventsConfig
	// Logs configures task logs, GET /v1/taskgroups/{id}/logs.
	Logs LogsConfig
	// Admission checks what submitted workloads and commands may do on
	// agents (the operator's policy and package directories); nil admits
	// everything.
	Admission *admission.Checker
	// Clock tells whether an agent's maintenance window is over, and is
	// the event stream's unless it has its own; default the wall clock.
	Clock clockwork.Clock
	// Auth, when set, requires a caller on every route but /healthz,
	// /metrics, /openapi.json and /files/, authorizes it by its role and
	// keeps the audit log (GET /v1/audit). Nil: the API is open and keeps
	// no audit log, GET /v1/audit is a 404 (tests of other features,
	// embedding).
	Auth *AuthConfig
	// Logger takes the audit log's lines; default slog.Default().
	Logger *slog.Logger
	// Timeouts bound the reading of requests (HTTPServer); default
	// DefaultTimeouts.
	Timeouts Timeouts
	// EngineDefaults is the engine's configuration this replica's flags
	// give, which GET /v1/engine/config shows where no value was set at
	// run time.
	EngineDefaults registry.EngineConfig
}

// Server is the REST API. It is an http.Handler.
type Server struct {
	cfg      Config
	mux      *http.ServeMux
	metrics  *prometheus.Registry
	requests *prometheus.CounterVec
	// readsFrom counts the reads the view served, and those etcd did.
	readsFrom *prometheus.CounterVec
	// viewAnswers keeps the agents' lists the read view answered.
	viewAnswers viewAnswers
	// agentObjects keeps the agents' objects of those lists.
	agentObjects agentObjects
	latency      *prometheus.HistogramVec
	// streams ends with EndStreams: event streams do not end by themselves.
	streams    context.Context
	endStreams context.CancelFunc
	// described are the routes s.handle registered, for GET /openapi.json.
	described []describedRoute
}

// NewServer returns the API over cfg.Registry.
func NewServer(cfg Config) *Server {
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.Clock == nil {
		cfg.Clock = clockwork.NewRealClock()
	}
	if cfg.ViewWait <= 0 {
		cfg.ViewWait = DefaultViewWait
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Timeouts == (Timeouts{}) {
		cfg.Timeouts = DefaultTimeouts
	}
	if cfg.Timeouts.Write <= 0 {
		cfg.Timeouts.Write = DefaultTimeouts.Write
	}
	if cfg.Auth != nil && cfg.Auth.AuditKeep == 0 {
		auth := *cfg.Auth
		auth.AuditKeep = DefaultAuditKeep
		cfg.Auth = &auth
	}
	if cfg.Events.Clock == nil {
		cfg.Events.Clock = cfg.Clock
	}
	cfg.Events = cfg.Events.withDefaults()
	cfg.Logs = cfg.Logs.withDefaults(cfg.Clock)
	s := &Server{cfg: cfg, mux: http.NewServeMux(), metrics: prometheus.NewRegistry()}
	s.streams, s.endStreams = context.WithCancel(context.Background())
	s.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "bcs_api_requests_total", Help: "API requests by route and status code.",
	}, []string{"route", "code"})
	s.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "bcs_api_request_duration_seconds", Help: "API request latency by route.",
		Buckets: prometheus.DefBuckets,
	}, []string{"route"})
	s.readsFrom = newReadsFrom()
	s.metrics.MustRegister(s.requests, s.latency, s.readsFrom,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	s.routes()
	return s
}

// EndStreams ends every event stream, now and from now on; call it when
// the HTTP server shuts down (http.Server.RegisterOnShutdown), which
// waits for handlers that would otherwise never return.
func (s *Server) EndStreams() { s.endStreams() }

// Metrics is the Prometheus registry /metrics serves; the scheduler adds
// its own collectors to it.
func (s *Server) Metrics() *prometheus.Registry { return s.metrics }

func (s *Server) routes() {
	for _, wl := range workloadRoutes {
		base := "/v1/" + wl.path
		s.handle("POST "+base, s.create(wl), "dryRun")
		s.handle("GET "+base, s.list(wl), withListParams("namespace", "summary")...)
		s.handle("GET "+base+"/{ns}/{name}", s.getOne(wl), "summary")
		s.handle("GET "+base+"/{ns}/{name}/instances", s.instances(wl), withListParams()...)
		s.handle("PUT "+base+"/{ns}/{name}", s.update(wl), "dryRun")
		s.handle("DELETE "+base+"/{ns}/{name}", s.remove(wl), "force")
		s.handle("POST "+base+"/{ns}/{name}/scale", s.scale(wl))
		s.handle("GET "+base+"/{ns}/{name}/versions", s.versions(wl))
		s.handle("POST "+base+"/{ns}/{name}/{op}", s.operateRollout(wl))
		s.allocationRoutes(wl)
	}
	for _, k := range objectKinds {
		s.handle("POST /v1/"+k.path, s.createObject(k))
		s.handle("GET /v1/"+k.path, s.listObjects(k), withListParams("namespace")...)
		s.handle("GET /v1/"+k.path+"/{ns}/{name}", s.getObject(k))
		s.handle("PUT /v1/"+k.path+"/{ns}/{name}", s.updateObject(k))
		s.handle("DELETE /v1/"+k.path+"/{ns}/{name}", s.deleteObject(k), k.deleteParams()...)
	}
	s.autoscalerRoutes()
	s.handle("POST /v1/depends", s.createObject(dependsKind))
	s.handle("GET /v1/depends", s.listDepends, withListParams("namespace")...)
	s.handle("GET /v1/depends/{ns}/{name}", s.getDepends)
	s.handle("PUT /v1/depends/{ns}/{name}", s.updateObject(dependsKind))
	s.handle("DELETE /v1/depends/{ns}/{name}", s.deleteDepends, "force")
	s.handle("POST /api/depends", s.createObject(dependsKind))
	s.handle("GET /api/depends", s.seedDepends(s.getDepends), "name", "namespace")
	s.handle("PUT /api/depends", s.seedDepends(s.updateObject(dependsKind)), "name", "namespace")
	s.handle("DELETE /api/depends", s.seedDepends(s.deleteDepends), "name", "namespace", "force")
	s.handle("POST /v1/commands", s.runCommand)
	s.handle("POST /v1/hookruns", s.createHookRun)
	s.handle("GET /v1/hookruns", s.listHookRuns, withListParams("namespace", "owner")...)
	s.handle("GET /v1/hookruns/{ns}/{name}", s.getHookRun)
	s.handle("POST /v1/hookruns/{ns}/{name}/terminate", s.terminateHookRun)
	s.handle("POST /v1/taskgroups/{id}/{op}", s.operateTaskGroup)
	for _, op := range slices.Sorted(maps.Keys(messageRoutes)) {
		s.handle("POST /v1/taskgroups/{id}/"+op, s.messageTaskGroup(messageRoutes[op]))
	}
	s.handle("POST /v1/plan", s.planManifest)
	s.handle("GET /v1/taskgroups/{id}/logs", s.taskLogs, logParams...)
	s.handle("GET /v1/notifies", s.listNotifies)
	s.handle("POST /v1/notifies", s.addNotify, "callback")
	s.handle("DELETE /v1/notifies", s.deleteNotify, "callback")
	s.handle("GET /v1/notifications", s.listNotifications, "namespace", "app", "type", "state", "limit", "before")
	s.handle("GET /v1/notifications/{id}", s.getNotification)
	s.handle("GET /v1/agents", s.listAgents, withListParams("summary")...)
	s.handle("GET /v1/agents/{agent}", s.getAgent, "summary")
	s.handle("POST /v1/agents/{agent}/drift", s.drift)
	s.handle("POST /v1/agents/{agent}/{op}", s.operateAgent)
	s.handle("PUT /v1/agents/{agent}/{op}", s.operateAgent)
	s.handle("GET /v1/engine", s.getEngine)
	s.handle("PUT /v1/engine", s.setEngine)
	s.handle("GET /v1/engine/config", s.getEngineConfig)
	s.handle("PATCH /v1/engine/config", s.patchEngineConfig)
	s.handle("GET /api/engine/config", s.getEngineConfig)
	s.handle("PATCH /api/engine/config", s.patchEngineConfig)
	if s.cfg.Events.Feed != nil {
		s.handle("GET /v1/events", s.events, eventParams...)
	}
	s.handle("GET /v1/audit", s.listAudit, "since", "user", "namespace", "limit", "before")
	s.handle("GET /v1/leader", s.leader)
	s.handle("GET /healthz", s.healthz)
	s.handleRaw("GET /metrics", promhttp.HandlerFor(s.metrics, promhttp.HandlerOpts{}))
	if s.cfg.FilesDir != "" {
		s.handleRaw("GET /files/", http.StripPrefix("/files/", filesHandler(s.cfg.FilesDir)))
	}
	s.described = append(s.described, describedRoute{pattern: "GET /openapi.json"})
	s.handle("GET /openapi.json", openAPIHandler(openAPI(s.described)))
}

// filesHandler serves the regular files inside dir, opened through an
// os.Root: a link may point anywhere inside dir but never out of it (a
// task's root startCmd could plant one to the scheduler's own key), and
// directories are not listed. Anything else is a 404.
func filesHandler(dir string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
		root, err := os.OpenRoot(dir)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		defer root.Close()
		f, err := root.Open(name)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		defer f.Close()
		info, err := f.Stat()
		if err != nil || !info.Mode().IsRegular() {
			http.NotFound(w, r)
			return
		}
		http.ServeContent(w, r, info.Name(), info.ModTime(), f)
	})
}

// handlerFunc is an API handler: it answers or returns an error for
// writeError.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// handle routes pattern to h, which takes the query parameters params:
// a request with any other is a 400 naming it, and h does not run (a
// misspelt ?dryRun must not create anything). With Config.Auth the
// caller is authenticated and authorized first (guarded). A write is
// bounded by Timeouts.Write (boundedWrite).
func (s *Server) handle(pattern string, h handlerFunc, params ...string) {
	if !slices.ContainsFunc(s.described, func(d describedRoute) bool { return d.pattern == pattern }) {
		s.described = append(s.described, describedRoute{pattern, params})
	}
	if boundedByWriteTimeout(pattern) {
		h = s.boundedWrite(h)
	}
	s.mux.HandleFunc(pattern, s.guarded(pattern, func(w http.ResponseWriter, r *http.Request) error {
		if err := unknownParams(r, params); err != nil {
			return err
		}
		return h(w, r)
	}))
}

// boundedByWriteTimeout says whether pattern is a write Timeouts.Write
// bounds: not a read (GET, or POST /v1/plan, which only computes), nor a
// route that answers with what executors answered, after as long as the
// request asks (an exec up to 10 minutes).
func boundedByWriteTimeout(pattern string) bool {
	op, isMessage := strings.CutPrefix(pattern, "POST /v1/taskgroups/{id}/")
	switch {
	case strings.HasPrefix(pattern, http.MethodGet+" "), pattern == "POST /v1/plan":
		return false
	case pattern == "POST /v1/commands", isMessage && messageRoutes[op] != nil:
		return false
	}
	return true
}

// arrivalKey is the context key of a request's arrival (ServeHTTP).
type arrivalKey struct{}

// boundedWrite runs h within Timeouts.Write of the request's arrival, the
// time its body took to arrive not counted: the wait for a leader and
// every store request h makes share one deadline. The body is read first
// (after the caller was authorized), so a slow client's upload is bounded
// by Timeouts.Request, not taken from the write's time.
func (s *Server) boundedWrite(h handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		arrived, ok := r.Context().Value(arrivalKey{}).(time.Time)
		reading := time.Now()
		if !ok {
			arrived = reading
		}
		if r.Body != nil {
			body, err := io.ReadAll(io.LimitReader(r.Body, s.cfg.MaxBodyBytes+1))
			r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), failingReader{err}))
		}
		deadline := arrived.Add(s.cfg.Timeouts.Write + time.Since(reading))
		ctx, cancel := context.WithDeadline(r.Context(), deadline)
		defer cancel()
		err := h(w, r.WithContext(ctx))
		if errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, errdefs.ErrUnavailable) && ctx.Err() != nil {
			err = fmt.Errorf("the write did not complete within %s: %w: %w", s.cfg.Timeouts.Write, errdefs.ErrUnavailable, err)
		}
		return err
	}
}

// failingReader returns err, or io.EOF without one: what reading the
// request's body returned after the bytes it read.
type failingReader struct{ err error }

func (f failingReader) Read([]byte) (int, error) { return 0, cmp.Or(f.err, io.EOF) }

// handleRaw routes pattern to a handler that answers by itself (no JSON,
// any query), described in GET /openapi.json like the others.
func (s *Server) handleRaw(pattern string, h http.Handler) {
	s.described = append(s.described, describedRoute{pattern: pattern})
	s.mux.Handle(pattern, h)
}

// unknownParams names the query parameters of r not in params.
func unknownParams(r *http.Request, params []string) error {
	want := "this route takes none"
	if len(params) > 0 {
		want = "want " + strings.Join(params, ", ")
	}
	var errs field.ErrorList
	for _, name := range slices.Sorted(maps.Keys(r.URL.Query())) {
		if !slices.Contains(params, name) {
			errs = append(errs, field.Invalid(field.Path(name), "unknown parameter (%s)", want))
		}
	}
	return queryError(errs)
}

// ServeHTTP routes the request, redirects writes on a follower, answers
// unknown routes in the API's error shape and records metrics.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	h, pattern := s.mux.Handler(r)
	route := pattern
	switch {
	case pattern == "":
		route = "unmatched"
		s.unmatched(rec, r, h)
	case r.Method == http.MethodGet || r.Method == http.MethodHead:
		s.mux.ServeHTTP(rec, r) // sets the path values Handler does not
	default:
		r = r.WithContext(context.WithValue(r.Context(), arrivalKey{}, start))
		if s.leading(rec, r) {
			s.mux.ServeHTTP(rec, r)
		}
	}
	s.requests.WithLabelValues(route, strconv.Itoa(rec.status)).Inc()
	s.latency.WithLabelValues(route).Observe(time.Since(start).Seconds())
}

// leaderWait bounds how long a write waits for an election under way (a
// replica just started, a leader just gone) before it is a 503.
const leaderWait = 5 * time.Second

// leading redirects a write to the leader when this replica follows. A
// write arriving while no leader is known waits for one, up to
// leaderWait: the first request after a start should not fail because it
// came a few milliseconds before the election ended.
func (s *Server) leading(w http.ResponseWriter, r *http.Request) bool {
	if s.cfg.Leadership == nil {
		return true
	}
	url, self := s.cfg.Leadership.Leader()
	if url == "" && !self {
		url, self = s.awaitLeader(r.Context())
	}
	if self {
		return true
	}
	if url == "" {
		w.Header().Set("Retry-After", "1")
		writeError(w, r, &httpError{http.StatusServiceUnavailable, "Unavailable", "no leader elected"})
		return false
	}
	http.Redirect(w, r, url+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	return false
}

// awaitLeader polls Leadership until a leader is known, leaderWait passes
// or ctx ends.
func (s *Server) awaitLeader(ctx context.Context) (url string, self bool) {
	deadline := s.cfg.Clock.After(leaderWait)
	tick := s.cfg.Clock.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return "", false
		case <-deadline:
			return "", false
		case <-tick.Chan():
			if url, self = s.cfg.Leadership.Leader(); url != "" || self {
				return url, self
			}
		}
	}
}

// unmatched answers a request no route takes: 404, or 405 with Allow.
func (s *Server) unmatched(w http.ResponseWriter, r *http.Request, h http.Handler) {
	probe := httptest.NewRecorder()
	h.ServeHTTP(probe, r)
	if probe.Code == http.StatusMethodNotAllowed {
		w.Header().Set("Allow", probe.Header().Get("Allow"))
		writeError(w, r, &httpError{http.StatusMethodNotAllowed, "MethodNotAllowed",
			fmt.Sprintf("%s is not allowed on %s (allowed: %s)", r.Method, r.URL.Path, probe.Header().Get("Allow"))})
		return
	}
	writeError(w, r, &httpError{http.StatusNotFound, "NotFound", fmt.Sprintf("no route %s %s", r.Method, r.URL.Path)})
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(status int) {
	r.status = status
	r.ResponseWriter.WriteHeader(status)
}

// Unwrap lets http.ResponseController reach the connection's Flush and
// write deadline, which the event stream needs.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// readBody returns the request body, which must be JSON and at most
// MaxBodyBytes long.
func (s *Server) readBody(r *http.Request) ([]byte, error) {
	mediaType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mediaType != "application/json" {
		return nil, &httpError{http.StatusUnsupportedMediaType, "UnsupportedMediaType",
			fmt.Sprintf("Content-Type must be application/json, got %q", r.Header.Get("Content-Type"))}
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, s.cfg.MaxBodyBytes+1))
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return nil, &httpError{http.StatusRequestTimeout, "RequestTimeout",
			fmt.Sprintf("the request's body did not arrive in time: a request is read within %s", s.cfg.Timeouts.Request)}
	}
	if err != nil {
		return nil, &httpError{http.StatusBadRequest, "InvalidArgument", "reading the body: " + err.Error()}
	}
	if int64(len(body)) > s.cfg.MaxBodyBytes {
		return nil, &httpError{http.StatusRequestEntityTooLarge, "PayloadTooLarge",
			fmt.Sprintf("body larger than %d bytes", s.cfg.MaxBodyBytes)}
	}
	return body, nil
}

// ifMatch returns the revision the If-Match header names, or 0.
func ifMatch(r *http.Request) (int64, error) {
	v := r.Header.Get("If-Match")
	if v == "" {
		return 0, nil
	}
	rev, err := strconv.ParseInt(string(bytes.Trim([]byte(v), `"`)), 10, 64)
	if err != nil || rev <= 0 {
		return 0, &httpError{http.StatusBadRequest, "InvalidArgument", fmt.Sprintf("If-Match: want a revision, got %q", v)}
	}
	return rev, nil
}

func (s *Server) leader(w http.ResponseWriter, _ *http.Request) error {
	url, self := "", true
	if s.cfg.Leadership != nil {
		url, self = s.cfg.Leadership.Leader()
	}
	writeJSON(w, http.StatusOK, map[string]any{"leader": url, "self": self})
	return nil
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) error {
	if s.cfg.Healthy != nil {
		ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
		defer cancel()
		if err := s.cfg.Healthy(ctx); err != nil {
			return err
		}
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	return nil
}

// flushingWriter writes each piece of a streamed response and flushes it
// at once; a client that takes nothing for timeout fails the write.
func flushingWriter(w http.ResponseWriter, timeout time.Duration) func([]byte) error {
	rc := http.NewResponseController(w)
	return func(text []byte) error {
		// A network deadline is wall-clock time whatever the clock.
		if err := rc.SetWriteDeadline(time.Now().Add(timeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return err
		}
		if _, err := w.Write(text); err != nil {
			return err
		}
		return rc.Flush()
	}
}

// nonNil makes an empty list encode as [] rather than null.
func nonNil[T any](list []T) []T {
	if list == nil {
		return []T{}
	}
	return list
}
