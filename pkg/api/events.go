package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/bcs-mesos/bcs-mesos/pkg/auth"
	"github.com/bcs-mesos/bcs-mesos/pkg/changefeed"
	"github.com/bcs-mesos/bcs-mesos/pkg/field"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// Defaults of EventsConfig.
const (
	DefaultEventHeartbeat    = 15 * time.Second
	DefaultEventBuffer       = 1024
	DefaultEventBufferBytes  = 8 << 20
	DefaultEventStallTimeout = 10 * time.Second
	DefaultEventWriteTimeout = 30 * time.Second
)

// EventsConfig configures GET /v1/events; without a Feed it is not served.
type EventsConfig struct {
	// Feed is the store's change feed the stream reads.
	Feed *changefeed.Feed
	// Heartbeat is how often an idle stream gets a keepalive comment, so
	// that clients and proxies see it alive.
	Heartbeat time.Duration
	// Buffer and BufferBytes bound what is held for one client: events
	// read from the store and not yet written to it. When they are full
	// the stream stops reading the store, which keeps what follows, until
	// the client has taken half: a client catching up is paced, never
	// queued for without bound.
	Buffer      int
	BufferBytes int
	// StallTimeout is how long a client with a full buffer may take
	// nothing: then it is disconnected with an overflow event.
	StallTimeout time.Duration
	// WriteTimeout bounds one write to a client; a client that takes no
	// data for that long is disconnected.
	WriteTimeout time.Duration
	// Clock drives the heartbeat and StallTimeout; nil is the wall clock.
	Clock clockwork.Clock
}

func (c EventsConfig) withDefaults() EventsConfig {
	if c.Heartbeat <= 0 {
		c.Heartbeat = DefaultEventHeartbeat
	}
	if c.Buffer <= 0 {
		c.Buffer = DefaultEventBuffer
	}
	if c.BufferBytes <= 0 {
		c.BufferBytes = DefaultEventBufferBytes
	}
	if c.StallTimeout <= 0 {
		c.StallTimeout = DefaultEventStallTimeout
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = DefaultEventWriteTimeout
	}
	if c.Clock == nil {
		c.Clock = clockwork.NewRealClock()
	}
	return c
}

// eventKind is how the records of one stored kind are streamed.
type eventKind struct {
	// types are the event types its records make; describe says which
	// one a record makes.
	types []string
	// describe returns a record's event type and what its event shows.
	describe func(record []byte, revision int64) (typ string, object any, err error)
	// scope is where its events' namespace is.
	scope eventScope
}

// eventScope says where the namespace of a kind's events is, which
// decides who may follow them: the callers who may read that namespace,
// as GET decides.
type eventScope int

const (
	// inKey: the key's second segment (apps/<namespace>/<name>).
	inKey eventScope = iota
	// inRecord: the record's "namespace"; the key names none
	// (notifications/<id>). A record without a readable one is shown
	// only to who reads every namespace.
	inRecord
	// clusterWide: none, the kind is the cluster's state (agents, the
	// engine, notify callbacks), which every caller reads.
	clusterWide
)

// eventKinds are the stored kinds the stream sends, one line each.
// Nothing else is sent: not configmaps or secrets (their data), nor app
// versions, hook templates, sweeps or the framework ID.
var eventKinds = map[store.Kind]eventKind{
	store.KindApplication:   {types: []string{"app", "deployment", "daemonset"}, describe: describeWorkload},
	store.KindTaskGroup:     eventOf("instance", inKey, instanceView),
	store.KindRollout:       eventOf("rollout", inKey, rolloutView),
	store.KindHookRun:       eventOf("hookrun", inKey, hookRunView),
	store.KindAgent:         eventOf("agent", clusterWide, asStored[registry.Agent]),
	store.KindAgentSettings: eventOf("agentsettings", clusterWide, asStored[registry.AgentSettings]),
	// The engine's mode (name "mode") and the configuration values set
	// at run time (name "config": registry.EngineSettings).
	engineKind: eventOf("engine", clusterWide, asStored[json.RawMessage]),
	// Notifications show their deliveries (URLs redacted), in the
	// namespace of their instance; callbacks are shown as GET shows
	// them. Their sealed URLs (notifytargets/) are never sent.
	store.KindNotification:   eventOf("notification", inRecord, viewNotification),
	store.KindNotifyCallback: eventOf("notifycallback", clusterWide, asStored[registry.NotifyCallback]),
	// Autoscalers as GET shows them (credentials redacted), without
	// their status, which the leader writes as an event of its own.
	store.KindAutoscaler:       eventOf("autoscaler", inKey, autoscalerEvent),
	store.KindAutoscalerStatus: eventOf("autoscalerstatus", inKey, asStored[registry.AutoscalerStatus]),
	// Allocations as an instance shows them (its "allocated"), named
	// as the instance: <application>/<id>.
	store.KindAllocation: eventOf("allocation", inKey, allocationView),
}

// engineKind is the first segment of store.EngineKey, the engine's mode,
// and of store.EngineConfigKey, its configuration.
var engineKind = store.Kind(strings.TrimSuffix(store.EnginePrefix, "/"))

// asStored shows a record as it is stored: what GET shows of an agent
// seen in offers (GET adds its settings and instances, events of their
// own), of an agent's settings, of the engine's mode and configuration.
func asStored[T any](rec *T) *T { return rec }

// eventTypes lists every event type of eventKinds, sorted.
var eventTypes = func() []string {
	var types []string
	for _, k := range eventKinds {
		types = append(types, k.types...)
	}
	slices.Sort(types)
	return types
}()

// eventOf streams the records of type T as events of one type, showing
// view of each.
func eventOf[T, V any](typ string, scope eventScope, view func(*T) V) eventKind {
	return eventKind{types: []string{typ}, scope: scope, describe: func(record []byte, _ int64) (string, any, error) {
		var rec T
		if err := json.Unmarshal(record, &rec); err != nil {
			return typ, nil, err
		}
		return typ, view(&rec), nil
	}}
}

// describeWorkload makes an app event of an application or process, a
// deployment event of a deployment, a daemonset event of a daemonset: the application as GET shows it,
// without its passwords, and without its instances and rollout, which
// are events of their own.
func describeWorkload(record []byte, revision int64) (string, any, error) {
	var app registry.App
	if err := json.Unmarshal(record, &app); err != nil {
		return "", nil, err
	}
	typ := "app"
	switch {
	case deploymentRoutes.serves(app.Kind):
		typ = "deployment"
	case daemonsetRoutes.serves(app.Kind):
		typ = "daemonset"
	}
	app.Revision = revision
	v := appView(&app, nil, nil)
	v.Status.Instances, v.Status.Counts = nil, nil
	return typ, v, nil
}

// eventData is the JSON of an event's data line.
type eventData struct {
	ID        string            `json:"id"`
	Type      string            `json:"type"`
	Action    changefeed.Action `json:"action"`
	Namespace string            `json:"namespace"`
	// Name is the object's path in its namespace: an application's name,
	// an instance's "<application>/<index>"; or, with no namespace, an
	// agent's ID, its settings' hostname, the engine's "mode" or "config".
	Name string `json:"name"`
	// Revision is the etcd revision of the write: the event's place in
	// the store's history, not an application's revision (its version).
	Revision int64 `json:"revision"`
	// Time is when the write was made, as its record says (its
	// updatedAt, a notification's time); none on delete.
	Time time.Time `json:"time,omitzero"`
	// Object is what GET shows of it; null on delete.
	Object any `json:"object"`
}

// eventQuery is what a client asked of the stream.
type eventQuery struct {
	types     map[string]bool // nil: every type
	namespace string          // "": every namespace
	// workload, in namespace: only the events of the workload of that
	// name and of what its key names under it (its instances,
	// allocations, rollout); "": every one's. A console page of one
	// workload of a namespace of 100,000 instances follows its own.
	workload string
	after    *changefeed.ID // nil: from now
	// readable tells whether the caller may read what a GET of access
	// would; nil: everything.
	readable func(access auth.Access) bool
}

var eventParams = []string{"lastEventId", "namespace", "type", "workload"}

// parseEventQuery reads ?type=, ?namespace= and the position to resume
// after: the Last-Event-ID header a reconnecting EventSource sends, or
// ?lastEventId= for clients that cannot set headers.
func parseEventQuery(r *http.Request) (eventQuery, error) {
	var q eventQuery
	var errs field.ErrorList
	values := r.URL.Query() // only eventParams: handle checked
	for _, list := range values["type"] {
		for _, typ := range strings.Split(list, ",") {
			if !slices.Contains(eventTypes, typ) {
				errs = append(errs, field.Invalid("type", "unknown event type %q (want one or more of %s)", typ, strings.Join(eventTypes, ", ")))
				continue
			}
			if q.types == nil {
				q.types = map[string]bool{}
			}
			q.types[typ] = true
		}
	}
	switch ns := values["namespace"]; {
	case len(ns) > 1:
		errs = append(errs, field.Invalid("namespace", "give one namespace, got %q", ns))
	case len(ns) == 1:
		if err := store.ValidateSegment(ns[0]); err != nil {
			errs = append(errs, field.Invalid("namespace", "%v", err))
		}
		q.namespace = ns[0]
	}
	switch w := values["workload"]; {
	case len(w) > 1:
		errs = append(errs, field.Invalid("workload", "give one workload, got %q", w))
	case len(w) == 1 && q.namespace == "":
		errs = append(errs, field.Invalid("workload", "needs namespace: a workload is named in its namespace"))
	case len(w) == 1:
		if err := store.ValidateSegment(w[0]); err != nil {
			errs = append(errs, field.Invalid("workload", "%v", err))
		}
		q.workload = w[0]
	}
	source, id := "lastEventId", values.Get("lastEventId")
	if h := r.Header.Get("Last-Event-ID"); h != "" {
		// A reconnecting EventSource sends the header with the original
		// URL: the header is the newer position.
		source, id = "Last-Event-ID", h
	}
	if id != "" {
		after, err := changefeed.ParseID(id)
		if err != nil {
			errs = append(errs, field.Invalid(field.Path(source), "%v", err))
		}
		q.after = &after
	}
	return q, queryError(errs)
}

// keeps reports whether the stream may send an event of key: its kind is
// streamed, may make a type asked for, and, when its key names its
// namespace, that is the one asked for (cluster-wide kinds have none) and
// one the caller may read, and its name the workload asked for. Kinds whose records name their namespace are
// checked again once read (frameOf).
func (q eventQuery) keeps(key string) bool {
	segments := strings.Split(key, "/")
	kind, ok := eventKinds[store.Kind(segments[0])]
	if !ok || len(segments) < 2 {
		return false
	}
	if kind.scope != inRecord && !q.namespaceKept(kind.scope, segments[1]) {
		return false
	}
	if q.workload != "" && (kind.scope != inKey || len(segments) < 3 || segments[2] != q.workload) {
		return false
	}
	return q.types == nil || slices.ContainsFunc(kind.types, func(t string) bool { return q.types[t] })
}

// namespaceKept reports whether an event in namespace, of a kind of scope,
// is one the query asked for and the caller may read, as a GET of it
// would be: a cluster-wide kind's by every caller, a namespaced kind's by
// the readers of its namespace ("": of every namespace).
func (q eventQuery) namespaceKept(scope eventScope, namespace string) bool {
	access := auth.Access{Namespace: namespace}
	if scope == clusterWide {
		access = auth.Access{Cluster: true}
	}
	if q.namespace != "" && (scope == clusterWide || namespace != q.namespace) {
		return false
	}
	return q.readable == nil || q.readable(access)
}

// needsPrevious reports whether a delete of key needs the record it
// removed: to tell its event type, or its namespace.
func needsPrevious(key string) bool {
	kind := eventKinds[store.Kind(strings.SplitN(key, "/", 2)[0])]
	return len(kind.types) > 1 || kind.scope == inRecord
}

// recordNamespace is the namespace a record names; "" when it names none
// or cannot be read.
func recordNamespace(record []byte) string {
	var rec struct {
		Namespace string `json:"namespace"`
	}
	_ = json.Unmarshal(record, &rec)
	return rec.Namespace
}

// recordTime is when a record was written, as it says: its updatedAt,
// a notification's time, an allocation's since; zero when it says none.
func recordTime(record []byte) time.Time {
	var rec struct {
		UpdatedAt time.Time `json:"updatedAt"`
		Time      time.Time `json:"time"`
		Since     time.Time `json:"since"`
	}
	_ = json.Unmarshal(record, &rec)
	switch {
	case !rec.UpdatedAt.IsZero():
		return rec.UpdatedAt
	case !rec.Time.IsZero():
		return rec.Time
	}
	return rec.Since
}

// frame is one message of the stream, ready to write.
type frame struct {
	// id is the position the client is at once it has it.
	id   changefeed.ID
	text []byte
}

// sseMessage formats one Server-Sent Events message; an empty id or
// event leaves its field out.
func sseMessage(id, event string, data []byte) []byte {
	var b bytes.Buffer
	if id != "" {
		b.WriteString("id: " + id + "\n")
	}
	if event != "" {
		b.WriteString("event: " + event + "\n")
	}
	if len(data) > 0 {
		// JSON has no raw newlines; a data line per line keeps the
		// message whole whatever data holds.
		for line := range bytes.SplitSeq(data, []byte("\n")) {
			b.WriteString("data: ")
			b.Write(line)
			b.WriteByte('\n')
		}
	}
	b.WriteByte('\n')
	return b.Bytes()
}

// frameOf makes the message of a change; false when the query filters it
// out.
func (q eventQuery) frameOf(c changefeed.Change) (frame, bool) {
	id := c.ID.String()
	if c.Reset {
		data, _ := json.Marshal(map[string]any{"id": id, "type": "reset", "revision": c.ID.Revision,
			"message": c.Reason + "; list the state again, events go on from here"})
		return frame{id: c.ID, text: sseMessage(id, "reset", data)}, true
	}
	segments := strings.Split(c.Key, "/")
	kind := eventKinds[store.Kind(segments[0])]
	ev := eventData{ID: id, Action: c.Action, Namespace: segments[1], Name: strings.Join(segments[2:], "/"), Revision: c.ID.Revision}
	if kind.scope != inKey {
		ev.Namespace, ev.Name = "", strings.Join(segments[1:], "/")
	}
	if kind.scope == inRecord {
		record := c.Value
		if c.Action != changefeed.Put {
			record = c.Previous
		}
		if ev.Namespace = recordNamespace(record); !q.namespaceKept(inRecord, ev.Namespace) {
			return frame{}, false
		}
	}
	var err error
	switch {
	case c.Action == changefeed.Put:
		ev.Type, ev.Object, err = kind.describe(c.Value, c.ID.Revision)
		ev.Time = recordTime(c.Value)
	case len(kind.types) > 1:
		ev.Type, _, err = kind.describe(c.Previous, c.ID.Revision)
	default:
		ev.Type = kind.types[0]
	}
	if err != nil {
		// Still sent, so that the client misses no change: it reads the
		// object with GET.
		slog.Error("event stream: stored record unreadable", "key", c.Key, "revision", c.ID.Revision, "err", err)
		ev.Object = nil
		if ev.Type == "" {
			ev.Type = kind.types[0]
		}
	}
	if q.types != nil && !q.types[ev.Type] {
		return frame{}, false
	}
	data, err := json.Marshal(ev)
	if err != nil {
		slog.Error("event stream: encoding an event", "key", c.Key, "err", err)
		data, _ = json.Marshal(eventData{ID: id, Type: ev.Type, Action: ev.Action, Namespace: ev.Namespace, Name: ev.Name, Revision: ev.Revision})
	}
	return frame{id: c.ID, text: sseMessage(id, ev.Type, data)}, true
}

// eventQueue holds one client's frames between the store and the
// connection, bounded in count and bytes.
type eventQueue struct {
	frames   chan frame
	bytes    atomic.Int64
	maxBytes int64
	// taken wakes the pump when the writer took a frame.
	taken chan struct{}
	// overflow is closed when the client stalled with the queue full.
	overflow chan struct{}
}

// offer queues f, or reports false when it does not fit. A frame larger
// than the whole budget still goes into an empty queue.
func (q *eventQueue) offer(f frame) bool {
	size := int64(len(f.text))
	if held := q.bytes.Add(size); held > q.maxBytes && held != size {
		q.bytes.Add(-size)
		return false
	}
	select {
	case q.frames <- f:
		return true
	default:
		q.bytes.Add(-size)
		return false
	}
}

// took is the writer's receipt for f.
func (q *eventQueue) took(f frame) {
	q.bytes.Add(-int64(len(f.text)))
	select {
	case q.taken <- struct{}{}:
	default:
	}
}

// drained waits until the writer has taken the queue down to half and
// there is room for size more bytes, so that the store is read again in
// batches, not frame by frame. It is false when the writer took nothing
// for stall, or ctx ended.
func (q *eventQueue) drained(ctx context.Context, clock clockwork.Clock, stall time.Duration, size int) bool {
	for {
		held := q.bytes.Load()
		if len(q.frames) <= cap(q.frames)/2 && held <= q.maxBytes/2 && (held == 0 || held+int64(size) <= q.maxBytes) {
			return true
		}
		timer := clock.NewTimer(stall)
		select {
		case <-q.taken:
			timer.Stop()
		case <-timer.Chan():
			return false
		case <-ctx.Done():
			timer.Stop()
			return false
		}
	}
}

// events serves GET /v1/events: the Server-Sent Events stream of every
// change of the kinds in eventKinds.
func (s *Server) events(w http.ResponseWriter, r *http.Request) error {
	q, err := parseEventQuery(r)
	if err != nil {
		return err
	}
	q.readable = mayRead(r)
	cfg := s.cfg.Events
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stopOnShutdown := context.AfterFunc(s.streams, cancel)
	defer stopOnShutdown()
	sub, err := cfg.Feed.Follow(ctx, q.after, changefeed.Options{Keep: q.keeps, Previous: needsPrevious})
	if err != nil {
		return err
	}
	// The position before the pump moves it.
	delivered := sub.Position()
	queue := &eventQueue{frames: make(chan frame, cfg.Buffer), maxBytes: int64(cfg.BufferBytes),
		taken: make(chan struct{}, 1), overflow: make(chan struct{})}
	pumped := make(chan error, 1)
	go func() { pumped <- pump(ctx, cfg, sub, q, queue) }()

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no") // nginx: pass each event on at once
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return nil
	}
	write := flushingWriter(w, cfg.WriteTimeout)
	// An id alone moves the client's last event ID to where the stream
	// starts, so one that saw no event before it lost the connection
	// still resumes without a gap.
	if err := write(sseMessage(delivered.String(), "", nil)); err != nil {
		return nil
	}

	heartbeat := cfg.Clock.NewTicker(cfg.Heartbeat)
	defer heartbeat.Stop()
	for {
		select {
		case <-queue.overflow:
			s.overflow(write, r, delivered)
			return nil
		default:
		}
		select {
		case f, ok := <-queue.frames:
			if !ok {
				select {
				case <-queue.overflow:
					s.overflow(write, r, delivered)
				default:
					if err := <-pumped; err != nil && ctx.Err() == nil {
						slog.Warn("event stream ended by the store", "remote", r.RemoteAddr, "at", delivered.String(), "err", err)
					}
				}
				return nil
			}
			queue.took(f)
			if err := write(f.text); err != nil {
				return nil
			}
			delivered = f.id
		case <-heartbeat.Chan():
			if err := write([]byte(": keepalive\n\n")); err != nil {
				return nil
			}
		case <-ctx.Done():
			return nil
		}
	}
}

// pump moves the changes of sub the query keeps into queue, until ctx
// ends, the store fails (its error), or the client stalls (overflow). It
// owns sub: it ends the store watch the moment it stops reading, and
// pauses it while the queue is full, or etcd's client would buffer what
// the queue does not hold.
func pump(ctx context.Context, cfg EventsConfig, sub *changefeed.Subscription, q eventQuery, queue *eventQueue) error {
	defer close(queue.frames)
	defer sub.Close()
	for {
		c, err := sub.Next()
		if err != nil {
			return err
		}
		f, ok := q.frameOf(c)
		for ok && !queue.offer(f) {
			sub.Pause()
			if !queue.drained(ctx, cfg.Clock, cfg.StallTimeout, len(f.text)) {
				if ctx.Err() == nil {
					close(queue.overflow)
				}
				return nil
			}
		}
	}
}

// overflow ends the stream of a client that fell too far behind, telling
// it where to resume.
func (s *Server) overflow(write func([]byte) error, r *http.Request, delivered changefeed.ID) {
	slog.Info("event stream overflow: client too slow, disconnected", "remote", r.RemoteAddr, "at", delivered.String())
	data, _ := json.Marshal(map[string]string{"type": "overflow", "lastEventId": delivered.String(),
		"message": fmt.Sprintf("this client took no event for %s while its buffer was full; reconnect with Last-Event-ID %s",
			s.cfg.Events.StallTimeout, delivered)})
	_ = write(sseMessage("", "overflow", data))
}
