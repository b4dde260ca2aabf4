package api

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/auth"
	"github.com/bcs-mesos/bcs-mesos/pkg/constraint"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/field"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
	"github.com/bcs-mesos/bcs-mesos/pkg/strictjson"
)

// Agents (seed 002's node and constraint APIs): what runs where, cordon,
// taints, drain and drift. Settings are kept by hostname; an agent is
// named by its Mesos ID or its hostname. An agent is the cluster's, its
// instances their namespaces': a caller sees named only the instances of
// the namespaces it may read, and how many others there are.

// agentView is an agent as GET /v1/agents shows it.
type agentView struct {
	ID         string            `json:"id,omitempty"`
	Hostname   string            `json:"hostname"`
	Attributes map[string]string `json:"attributes,omitempty"`
	// Endpoint is where its own HTTP API answers (host:port); task logs
	// are read from its files API.
	Endpoint string `json:"endpoint,omitempty"`
	// LastSeen is when an offer of it was last recorded.
	LastSeen *time.Time `json:"lastSeen,omitempty"`
	// Schedulable: new instances may be placed on it — not cordoned, not
	// draining, not deactivated by the master, not in (or before) a
	// maintenance window.
	Schedulable bool       `json:"schedulable"`
	Cordoned    bool       `json:"cordoned"`
	Taints      []string   `json:"taints"`
	Reason      string     `json:"reason,omitempty"`
	Drain       *drainView `json:"drain,omitempty"`
	// Evictions are the running instances a NoExecute taint of the agent
	// moves off, to come or under way: at once (at: when the taint was
	// set) or when their toleration's seconds are over; those of the
	// namespaces the caller may read.
	Evictions []pendingEviction `json:"evictions,omitempty"`
	// Master is the master's view of it (GET_AGENTS): state, its own
	// drain (DRAIN_AGENT), total resources.
	Master *registry.AgentMaster `json:"master,omitempty"`
	// Maintenance is the master's maintenance window for it and the
	// scheduler's answer to its inverse offer.
	Maintenance *registry.AgentMaintenance `json:"maintenance,omitempty"`
	// Used is what our instances on it took (cpus, mem in MB), every
	// namespace's.
	Used usedView `json:"used"`
	// Instances are those of the namespaces the caller may read; Others
	// counts the rest, which are not named.
	Instances []agentInstance `json:"instances"`
	Others    int             `json:"others"`
}

type usedView struct {
	CPUs  float64 `json:"cpus"`
	MemMB float64 `json:"memMB"`
}

type drainView struct {
	Since time.Time `json:"since"`
	Force bool      `json:"force,omitempty"`
	// State is "draining" while instances are left to move, "drained"
	// when only kept (stateful) instances or none are left. Remaining
	// counts every namespace's; Moving, Blocked and Kept name those of
	// the namespaces the caller may read.
	State     string   `json:"state"`
	Remaining int      `json:"remaining"`
	Moving    []string `json:"moving"`
	// Blocked are the moves whose successor fits on no agent, and why;
	// the others go on meanwhile.
	Blocked []blockedMove `json:"blocked"`
	Kept    []string      `json:"kept"`
}

// pendingEviction is an instance a NoExecute taint moves off its agent.
type pendingEviction struct {
	Instance string    `json:"instance"` // namespace/app/index
	At       time.Time `json:"at"`
}

// blockedMove is an instance whose move waits for an agent that fits it.
type blockedMove struct {
	Instance string `json:"instance"` // namespace/app/index
	// Why is the last placement's verdict: "0/2 agents fit: cordoned 1,
	// hostname UNIQUE 1".
	Why string `json:"why"`
}

type agentInstance struct {
	App   string `json:"app"` // namespace/name
	Index int    `json:"index"`
	ID    string `json:"taskGroupID"`
	Phase string `json:"phase"`
	// Successor: this launch replaces the instance (a move under way).
	Successor bool   `json:"successor,omitempty"`
	Move      string `json:"move,omitempty"`
}

// agentViews joins the agents seen, their settings and the instances on
// them; settings of a hostname no agent has are shown too. An instance of
// a namespace readable does not allow is counted, not named.
func (s *Server) agentViews(ctx context.Context, readable func(auth.Access) bool) ([]*agentView, error) {
	reg := s.cfg.Registry
	agents, err := reg.ListAgents(ctx)
	if err != nil {
		return nil, err
	}
	settings, err := reg.ListAgentSettings(ctx)
	if err != nil {
		return nil, err
	}
	apps, err := reg.ListApps(ctx, "")
	if err != nil {
		return nil, err
	}
	stateful := map[string]bool{}
	// evictable: the constraints of the applications a NoExecute taint
	// moves (not daemonsets nor dependency pods, which stay on their
	// agent), nil for those without one.
	evictable := map[string]*constraint.Compiled{}
	for _, a := range apps {
		obj, err := a.Manifest()
		if err != nil {
			continue
		}
		key := a.Namespace + "/" + a.Name
		stateful[key] = manifest.IsStateful(obj)
		if obj.Kind() == manifest.KindDaemonset || a.DependencyPod != nil {
			continue
		}
		if c := manifest.ConstraintOf(obj); c == nil {
			evictable[key] = nil
		} else if compiled, err := constraint.Compile(c); err == nil {
			evictable[key] = compiled
		}
	}
	byHost := map[string]*agentView{}
	var views []*agentView
	view := func(host string) *agentView {
		if v := byHost[host]; v != nil {
			return v
		}
		v := &agentView{Hostname: host, Schedulable: true, Taints: []string{}, Instances: []agentInstance{}}
		byHost[host] = v
		views = append(views, v)
		return v
	}
	now := s.cfg.Clock.Now()
	for _, a := range agents {
		v := view(a.Hostname)
		v.ID, v.Attributes, v.Endpoint, v.Master, v.Maintenance = a.ID, a.Attributes, a.Endpoint, a.Master, a.Maintenance
		seen := a.SeenAt
		if seen.IsZero() && a.Master == nil {
			seen = a.UpdatedAt // a record from before SeenAt: written from offers only
		}
		if !seen.IsZero() {
			v.LastSeen = &seen
		}
		if a.Master != nil && !a.Master.Active || a.Maintenance.Current(now) {
			v.Schedulable = false
		}
	}
	executing := map[string][]constraint.Taint{} // host → taints, when one is NoExecute
	for _, st := range settings {
		v := view(st.Hostname)
		if slices.ContainsFunc(st.Taints, func(t constraint.Taint) bool { return t.EffectOrDefault() == constraint.NoExecute }) {
			executing[st.Hostname] = st.Taints
		}
		v.Cordoned, v.Schedulable, v.Reason = st.Cordoned, v.Schedulable && st.Schedulable(), st.Reason
		for _, t := range st.Taints {
			v.Taints = append(v.Taints, t.String())
		}
		if d := st.Drain; d != nil {
			v.Drain = &drainView{Since: d.Since, Force: d.Force, Moving: []string{}, Blocked: []blockedMove{}, Kept: []string{}}
		}
	}
	// Every task group of the fleet, folded as read: 100,000 records
	// would be about 150 MB held at once.
	err = reg.EachTaskGroup(ctx, func(g *registry.TaskGroup) error {
		app := g.Namespace + "/" + g.App
		named := readable(auth.Access{Namespace: g.Namespace})
		launches := []*registry.TaskGroup{g}
		if g.Move != nil && g.Move.Successor != nil {
			launches = append(launches, g.Move.Successor)
		}
		for i, l := range launches {
			if l.Host == "" || !liveGroup(l.Phase) {
				continue
			}
			v := view(l.Host)
			evicting := g.Move == nil && l.Phase == "Running" || g.Move != nil && g.Move.Reason == registry.EvictionMove
			if c, ok := evictable[app]; ok && named && i == 0 && evicting && executing[l.Host] != nil {
				if at, evict := c.Eviction(executing[l.Host]); evict {
					v.Evictions = append(v.Evictions, pendingEviction{Instance: fmt.Sprintf("%s/%d", app, g.Index), At: at})
				}
			}
			if named {
				inst := agentInstance{App: app, Index: g.Index, ID: l.ID, Phase: l.Phase, Successor: i == 1}
				if i == 0 && g.Move != nil {
					inst.Move = g.Move.Reason + " from " + g.Move.FromHost
				}
				v.Instances = append(v.Instances, inst)
			} else {
				v.Others++
			}
			for _, t := range l.Tasks {
				v.Used.CPUs += t.CPUs
				v.Used.MemMB += t.MemMB
			}
			if d := v.Drain; d != nil && i == 0 {
				name := fmt.Sprintf("%s/%d", app, g.Index)
				switch {
				case stateful[app] && !d.Force:
					if named {
						d.Kept = append(d.Kept, name)
					}
				case g.Move != nil && g.Move.Successor != nil:
					s := g.Move.Successor
					switch {
					case !named:
					case s.FitsNowhere():
						d.Blocked = append(d.Blocked, blockedMove{Instance: name, Why: s.Pending.String()})
					default:
						d.Moving = append(d.Moving, name)
					}
					d.Remaining++
				default:
					d.Remaining++
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, v := range views {
		if d := v.Drain; d != nil {
			d.State = map[bool]string{true: "drained", false: "draining"}[d.Remaining == 0]
		}
	}
	slices.SortFunc(views, func(x, y *agentView) int { return cmp.Compare(x.Hostname, y.Hostname) })
	return views, nil
}

// liveGroup reports whether a stored phase may have tasks on an agent.
func liveGroup(phase string) bool {
	return phase == "Launched" || phase == "Running" || phase == "Killing"
}

func (s *Server) listAgents(w http.ResponseWriter, r *http.Request) error {
	p, err := readListPage(r)
	if err != nil {
		return err
	}
	views, err := s.agentViews(r.Context(), mayRead(r))
	if err != nil {
		return err
	}
	views, next := pageOf(p, views, func(v *agentView) string { return v.ID })
	writeList(w, "agents", nonNil(views), next)
	return nil
}

// findAgent returns the view of the agent the path names by ID or
// hostname.
func (s *Server) findAgent(r *http.Request) (*agentView, error) {
	views, err := s.agentViews(r.Context(), mayRead(r))
	if err != nil {
		return nil, err
	}
	return agentNamed(views, r.PathValue("agent"))
}

// agentNamed returns the agent named by ID or hostname.
func agentNamed(views []*agentView, name string) (*agentView, error) {
	for _, v := range views {
		if v.ID == name || v.Hostname == name {
			return v, nil
		}
	}
	return nil, fmt.Errorf("agent %q (by ID or hostname): %w", name, errdefs.ErrNotFound)
}

func (s *Server) getAgent(w http.ResponseWriter, r *http.Request) error {
	v, err := s.findAgent(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

// agentRequest is the optional body of cordon, drain and taints.
type agentRequest struct {
	Reason string   `json:"reason"`
	Force  bool     `json:"force"`
	Taints []string `json:"taints"`
}

// operateAgent applies cordon, uncordon, drain, undrain or taints (PUT
// replaces the taints) and answers the agent as it is then.
func (s *Server) operateAgent(w http.ResponseWriter, r *http.Request) error {
	op := r.PathValue("op")
	edits := map[string]func(*registry.AgentSettings, agentRequest) error{
		"cordon":   func(st *registry.AgentSettings, _ agentRequest) error { st.Cordoned = true; return nil },
		"uncordon": func(st *registry.AgentSettings, _ agentRequest) error { st.Cordoned = false; return nil },
		"drain": func(st *registry.AgentSettings, req agentRequest) error {
			if st.Drain == nil || st.Drain.Force != req.Force {
				st.Drain = &registry.DrainRequest{Since: time.Now().UTC(), Force: req.Force}
			}
			return nil
		},
		"undrain": func(st *registry.AgentSettings, _ agentRequest) error { st.Drain = nil; return nil },
		"taints": func(st *registry.AgentSettings, req agentRequest) error {
			taints, err := parseTaints(req.Taints)
			if err != nil {
				return err
			}
			// A NoExecute taint's seconds count from when it was set: one
			// set again keeps its time.
			for i, t := range taints {
				if t.Effect != constraint.NoExecute {
					continue
				}
				taints[i].Since = s.cfg.Clock.Now().UTC()
				for _, old := range st.Taints {
					if old.Key == t.Key && old.Value == t.Value && old.EffectOrDefault() == t.Effect {
						taints[i].Since = old.Since
					}
				}
			}
			st.Taints = taints
			return nil
		},
	}
	edit := edits[op]
	if edit == nil || (op == "taints") != (r.Method == http.MethodPut) {
		return &httpError{http.StatusNotFound, "NotFound", fmt.Sprintf("no operation %s %q on an agent (want POST cordon, uncordon, drain, undrain, drift or PUT taints)", r.Method, op)}
	}
	var req agentRequest
	if err := s.optionalBody(r, &req); err != nil {
		return err
	}
	if op == "taints" && req.Taints == nil {
		return field.ErrorList{field.Required("taints")}
	}
	v, err := s.findAgent(r)
	if err != nil {
		return err
	}
	if _, err := s.cfg.Registry.ModifyAgentSettings(r.Context(), v.Hostname, func(st *registry.AgentSettings) error {
		if req.Reason != "" {
			st.Reason = req.Reason
		}
		return edit(st, req)
	}); err != nil {
		return err
	}
	if v, err = s.findAgent(r); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

// parseTaints reads "key=value[:EFFECT]" taints; the effect is NoSchedule
// when not given.
func parseTaints(list []string) ([]constraint.Taint, error) {
	var errs field.ErrorList
	out := []constraint.Taint{}
	for i, t := range list {
		path := fmt.Sprintf("taints[%d]", i)
		kv, name, hasEffect := strings.Cut(t, ":")
		k, v, _ := strings.Cut(kv, "=")
		effect := constraint.NoSchedule
		if hasEffect {
			effect, _ = constraint.ParseTaintEffect(name)
		}
		switch {
		case effect == "":
			errs = append(errs, field.Invalid(field.Path(path), "effect %q: want NoSchedule, PreferNoSchedule or NoExecute", name))
		case store.ValidateSegment(k) != nil:
			errs = append(errs, field.Invalid(field.Path(path), "want key=value[:EFFECT] with a key of [A-Za-z0-9._-], got %q", t))
		default:
			out = append(out, constraint.Taint{Key: k, Value: v, Effect: effect})
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

// DriftRequest moves instances off an agent (seed 002's drift): every
// instance on it, those of one application, or one instance, to the agent
// To names or anywhere. Stateful applications stay unless Force.
type DriftRequest struct {
	FromHost  string `json:"-"`
	To        string `json:"to"`
	Namespace string `json:"namespace"`
	App       string `json:"app"`
	// Instance is the instance ID; nil moves every instance.
	Instance *int `json:"instance"`
	Force    bool `json:"force"`
}

func (s *Server) drift(w http.ResponseWriter, r *http.Request) error {
	var req DriftRequest
	if err := s.optionalBody(r, &req); err != nil {
		return err
	}
	var errs field.ErrorList
	if req.Instance != nil && req.App == "" {
		errs = append(errs, field.Invalid("app", "required with instance"))
	}
	if req.App != "" && req.Namespace == "" {
		errs = append(errs, field.Required("namespace"))
	}
	if len(errs) > 0 {
		return errs
	}
	views, err := s.agentViews(r.Context(), mayRead(r))
	if err != nil {
		return err
	}
	from, err := agentNamed(views, r.PathValue("agent"))
	if err != nil {
		return err
	}
	req.FromHost = from.Hostname
	if req.To != "" {
		to, err := agentNamed(views, req.To)
		if err != nil {
			return field.ErrorList{field.Invalid("to", "%v", err)}
		}
		if to.Hostname == from.Hostname {
			return field.ErrorList{field.Invalid("to", "is the agent drifted from (%s)", to.Hostname)}
		}
		req.To = to.Hostname
	}
	if req.App != "" {
		if _, err := s.cfg.Registry.GetApp(r.Context(), req.Namespace, req.App); err != nil {
			return err
		}
	}
	if s.cfg.Operator == nil {
		return fmt.Errorf("no scheduler runs in this replica: %w", errdefs.ErrUnavailable)
	}
	if err := s.cfg.Operator.Drift(r.Context(), req); err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"drift": req, "from": req.FromHost})
	return nil
}

// optionalBody decodes a JSON body when there is one.
func (s *Server) optionalBody(r *http.Request, v any) error {
	if r.ContentLength == 0 && r.Header.Get("Content-Type") == "" {
		return nil
	}
	body, err := s.readBody(r)
	if err != nil {
		return err
	}
	if len(body) == 0 {
		return nil
	}
	return strictjson.Decode(body, v)
}

// engineRequest sets the engine's mode (seed 002's engine maintenance and
// start/stop).
type engineRequest struct {
	Mode   string `json:"mode"`
	Reason string `json:"reason"`
}

func (s *Server) getEngine(w http.ResponseWriter, r *http.Request) error {
	e, err := s.cfg.Registry.GetEngine(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, e)
	return nil
}

func (s *Server) setEngine(w http.ResponseWriter, r *http.Request) error {
	body, err := s.readBody(r)
	if err != nil {
		return err
	}
	var req engineRequest
	if err := strictjson.Decode(body, &req); err != nil {
		return err
	}
	mode, err := registry.ParseEngineMode(req.Mode)
	if err != nil {
		return field.ErrorList{field.Invalid("mode", "%q: want running, maintenance or stopped", req.Mode)}
	}
	caller, _ := identityOf(r)
	e, err := s.cfg.Registry.SetEngine(r.Context(), mode, req.Reason, caller.User)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, e)
	return nil
}
