package api

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/apiv1"
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

// agentViews joins the agents seen, their settings and the instances on
// them; settings of a hostname no agent has are shown too. An instance of
// a namespace readable does not allow is counted, not named.
func (s *Server) agentViews(ctx context.Context, reg reader, readable func(auth.Access) bool) ([]*apiv1.AgentView, error) {
	j, err := s.joinAgents(ctx, reg, readable, false)
	if err != nil {
		return nil, err
	}
	return j.views(), nil
}

// joinAgents is agentViews' join; encoded, it leaves out of the views
// the instances it has encoded, for writeAgents.
func (s *Server) joinAgents(ctx context.Context, reg reader, readable func(auth.Access) bool, encoded bool) (*agentJoin, error) {
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
	j := newAgentJoin(apps, readable)
	j.encoding = encoded
	now := s.cfg.Clock.Now()
	for _, a := range agents {
		j.agent(a, now)
	}
	for _, st := range settings {
		j.settings(st)
	}
	if err := j.instances(ctx, reg); err != nil {
		return nil, err
	}
	return j, nil
}

// appsOnAgents reads, of each application, where its instances are, made
// once per change of its task groups (registry.Viewed).
type appsOnAgents interface {
	EachAppTaskGroups(name string, derive func([]*registry.TaskGroup) any) ([]any, error)
}

// instances adds the instances of every task group: from the read view,
// by application, each as it was found on the agents when its task
// groups last changed; from etcd, every task group folded as read
// (100,000 records would be about 150 MB held at once).
func (j *agentJoin) instances(ctx context.Context, reg reader) error {
	byApp, ok := reg.(appsOnAgents)
	if !ok {
		err := reg.EachTaskGroup(ctx, func(g *registry.TaskGroup) error {
			j.add(appOnAgentsOf([]*registry.TaskGroup{g}))
			return nil
		})
		j.index()
		return err
	}
	found, err := byApp.EachAppTaskGroups("agents", func(groups []*registry.TaskGroup) any { return appOnAgentsOf(groups) })
	if err != nil {
		return err
	}
	pieces := 0
	for _, a := range found {
		pieces += len(a.(*appOnAgents).hosts)
	}
	j.pieces, j.shares = make([]encodedPiece, 0, pieces), make([]*appOnAgents, 0, len(found))
	for _, a := range found {
		j.add(a.(*appOnAgents))
	}
	j.index()
	return nil
}

// appOnAgents is where the live launches of an application's task
// groups are, by agent, each agent's in the order of the task groups'
// keys (an instance before its move's successor).
type appOnAgents struct {
	app    string // namespace/name
	access auth.Access
	hosts  []hostLaunches
}

// hostLaunches are an application's launches on one agent, the tasks'
// resources in their order (each added as read: sums are the same to
// the last bit), and its instances encoded as writeAgents writes them,
// each after a comma.
type hostLaunches struct {
	host        string
	id          hostID
	launches    []appLaunch
	cpus, memMB []float64
	encoded     []byte
}

// appLaunch is a task group's instance or, successor set, its move's
// successor launch.
type appLaunch struct {
	group     *registry.TaskGroup
	successor bool
}

func (l appLaunch) launched() *registry.TaskGroup {
	if l.successor {
		return l.group.Move.Successor
	}
	return l.group
}

// instance is the launch of an instance of app (namespace/name) as an
// agent shows it.
func (l appLaunch) instance(app string) apiv1.AgentInstance {
	g, launched := l.group, l.launched()
	inst := apiv1.AgentInstance{App: app, Index: g.Index, ID: launched.ID, Phase: launched.Phase, Successor: l.successor}
	if !l.successor && g.Move != nil {
		inst.Move = g.Move.Reason + " from " + g.Move.FromHost
	}
	return inst
}

// appOnAgentsOf is where groups, all of one application, launched.
func appOnAgentsOf(groups []*registry.TaskGroup) *appOnAgents {
	a := &appOnAgents{}
	if len(groups) > 0 {
		a.app, a.access = groups[0].Namespace+"/"+groups[0].App, auth.Access{Namespace: groups[0].Namespace}
	}
	at := map[string]int{}
	for _, g := range groups {
		for _, l := range []appLaunch{{group: g}, {group: g, successor: true}} {
			if l.successor && (g.Move == nil || g.Move.Successor == nil) {
				continue
			}
			launched := l.launched()
			if launched.Host == "" || !liveGroup(launched.Phase) {
				continue
			}
			i, ok := at[launched.Host]
			if !ok {
				i = len(a.hosts)
				at[launched.Host] = i
				a.hosts = append(a.hosts, hostLaunches{host: launched.Host, id: hostIDs.of(launched.Host)})
			}
			h := &a.hosts[i]
			h.launches = append(h.launches, l)
			for _, t := range launched.Tasks {
				h.cpus, h.memMB = append(h.cpus, t.CPUs), append(h.memMB, t.MemMB)
			}
			h.encoded = appendAgentInstance(newline(append(h.encoded, ','), "  ", agentInstanceDepth), l.instance(a.app), agentInstanceDepth)
		}
	}
	a.compact()
	return a
}

// compact moves the hosts' launches, resources and encoded instances
// into one array of each, of their exact length: the read view keeps
// them for every application, and appends left up to half of each
// unused.
func (a *appOnAgents) compact() {
	var launches, floats, encoded int
	for _, h := range a.hosts {
		launches, floats, encoded = launches+len(h.launches), floats+len(h.cpus), encoded+len(h.encoded)
	}
	allLaunches := make([]appLaunch, 0, launches)
	allFloats := make([]float64, 0, 2*floats)
	allEncoded := make([]byte, 0, encoded)
	for i := range a.hosts {
		h := &a.hosts[i]
		h.launches, allLaunches = moved(allLaunches, h.launches)
		h.cpus, allFloats = moved(allFloats, h.cpus)
		h.memMB, allFloats = moved(allFloats, h.memMB)
		h.encoded, allEncoded = moved(allEncoded, h.encoded)
	}
}

// moved appends s to all, returning it there and all after it.
func moved[T any](all, s []T) (_, rest []T) {
	at := len(all)
	all = append(all, s...)
	return all[at:len(all):len(all)], all
}

// agentJoin builds the agents' views, one record at a time.
type agentJoin struct {
	readable  func(auth.Access) bool
	apps      map[string]*registry.App      // by namespace/name
	rules     map[string]appRules           // by namespace/name, made when first needed
	executing map[string][]constraint.Taint // host → taints, when one is NoExecute
	// encoding: the named instances on agents neither draining nor
	// tainted NoExecute are left out of the views, and pieces holds them
	// encoded, each application's share, as added; index makes encoded
	// of them, by host.
	encoding bool
	pieces   []encodedPiece
	encoded  map[string][][]byte
	shares   []*appOnAgents // as added
	// byID are the views by host ID, and whether their instances are
	// added one by one: a hostname is looked up once per join.
	byID   []hostView
	byHost map[string]*apiv1.AgentView
	all    []*apiv1.AgentView
	// records are the agent's and settings records of each host.
	records map[string]hostRecords
	// until is when the clock alone changes the views: the first end of
	// a maintenance window now current; zero for never.
	until time.Time
}

// hostRecords are the records of a host's agent, nil when none.
type hostRecords struct {
	agent    *registry.Agent
	settings *registry.AgentSettings
}

// appRules is what an application's manifest says of its instances on
// draining and tainted agents.
type appRules struct {
	stateful bool
	// evictable: a NoExecute taint moves its instances (not daemonsets'
	// nor dependency pods', which stay on their agent), by its constraint
	// (nil for none).
	evictable  bool
	constraint *constraint.Compiled
}

func newAgentJoin(apps []*registry.App, readable func(auth.Access) bool) *agentJoin {
	j := &agentJoin{readable: readable, apps: map[string]*registry.App{}, rules: map[string]appRules{},
		executing: map[string][]constraint.Taint{}, byHost: map[string]*apiv1.AgentView{}, records: map[string]hostRecords{}}
	for _, a := range apps {
		j.apps[a.Namespace+"/"+a.Name] = a
	}
	return j
}

// rulesOf is the rules of app (namespace/name), read from its manifest
// once: only drains and NoExecute taints need them.
func (j *agentJoin) rulesOf(app string) appRules {
	if r, ok := j.rules[app]; ok {
		return r
	}
	var r appRules
	if a := j.apps[app]; a != nil {
		if obj, err := a.Manifest(); err == nil {
			r.stateful = manifest.IsStateful(obj)
			if obj.Kind() != manifest.KindDaemonset && a.DependencyPod == nil {
				c := manifest.ConstraintOf(obj)
				if c == nil {
					r.evictable = true
				} else if compiled, err := constraint.Compile(c); err == nil {
					r.evictable, r.constraint = true, compiled
				}
			}
		}
	}
	j.rules[app] = r
	return r
}

// view is the view of the agent of host, made when first named.
func (j *agentJoin) view(host string) *apiv1.AgentView {
	if v := j.byHost[host]; v != nil {
		return v
	}
	v := &apiv1.AgentView{Hostname: host, Schedulable: true, Taints: []string{}, Instances: []apiv1.AgentInstance{}}
	j.byHost[host] = v
	j.all = append(j.all, v)
	return v
}

// agent adds what the offers and the master say of an agent.
func (j *agentJoin) agent(a *registry.Agent, now time.Time) {
	v := j.view(a.Hostname)
	rec := j.records[a.Hostname]
	rec.agent = a
	j.records[a.Hostname] = rec
	v.ID, v.Attributes, v.Endpoint, v.Master, v.Maintenance = a.ID, a.Attributes, a.Endpoint, agentMasterView(a.Master), maintenanceView(a.Maintenance)
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
	if m := a.Maintenance; m.Current(now) && !m.End.IsZero() && (j.until.IsZero() || m.End.Before(j.until)) {
		j.until = m.End
	}
}

// settings adds the operator's settings of a hostname.
func (j *agentJoin) settings(st *registry.AgentSettings) {
	v := j.view(st.Hostname)
	rec := j.records[st.Hostname]
	rec.settings = st
	j.records[st.Hostname] = rec
	if slices.ContainsFunc(st.Taints, func(t constraint.Taint) bool { return t.EffectOrDefault() == constraint.NoExecute }) {
		j.executing[st.Hostname] = st.Taints
	}
	v.Cordoned, v.Schedulable, v.Reason = st.Cordoned, v.Schedulable && st.Schedulable(), st.Reason
	for _, t := range st.Taints {
		v.Taints = append(v.Taints, t.String())
	}
	if d := st.Drain; d != nil {
		v.Drain = &apiv1.DrainView{Since: d.Since, Force: d.Force, Moving: []string{}, Blocked: []apiv1.BlockedMove{}, Kept: []string{}}
	}
}

// encodedPiece is an application's instances on the agent of a host ID,
// encoded.
type encodedPiece struct {
	host    hostID
	encoded []byte
}

type hostView struct {
	view     *apiv1.AgentView
	oneByOne bool
	hostname string // the view's, for index
}

// hostViewOf is the view of h's agent.
func (j *agentJoin) hostViewOf(h *hostLaunches) hostView {
	if int(h.id) >= len(j.byID) {
		j.byID = append(j.byID, make([]hostView, hostIDs.count()-len(j.byID))...)
	}
	if hv := j.byID[h.id]; hv.view != nil {
		return hv
	}
	v := j.view(h.host)
	hv := hostView{view: v, oneByOne: !j.encoding || v.Drain != nil || j.executing[h.host] != nil, hostname: h.host}
	j.byID[h.id] = hv
	return hv
}

// add adds the launches of an application to the agents they are on:
// one by one to an agent draining or tainted NoExecute, or when not
// encoding; to the others, by their sums and encoded instances.
func (j *agentJoin) add(a *appOnAgents) {
	if len(a.hosts) == 0 {
		return
	}
	j.shares = append(j.shares, a)
	named := j.readable(a.access)
	for i := range a.hosts {
		h := &a.hosts[i]
		hv := j.hostViewOf(h)
		v := hv.view
		if hv.oneByOne {
			if named {
				v.Instances = slices.Grow(v.Instances, len(h.launches))
			}
			for _, l := range h.launches {
				j.launch(v, a.app, named, l)
			}
			continue
		}
		if named {
			j.pieces = append(j.pieces, encodedPiece{host: h.id, encoded: h.encoded})
		} else {
			v.Others += len(h.launches)
		}
		for i := range h.cpus {
			v.Used.CPUs += h.cpus[i]
			v.Used.MemMB += h.memMB[i]
		}
	}
}

// index makes encoded of pieces: by host, its pieces in the order added
// (a counting sort: a fleet's join has a piece per application and
// agent).
func (j *agentJoin) index() {
	j.encoded = map[string][][]byte{}
	if len(j.pieces) == 0 {
		return
	}
	ends := make([]int, len(j.byID))
	for _, p := range j.pieces {
		ends[p.host]++
	}
	for id := 1; id < len(ends); id++ {
		ends[id] += ends[id-1]
	}
	sorted := make([][]byte, len(j.pieces))
	for i := len(j.pieces) - 1; i >= 0; i-- {
		p := j.pieces[i]
		ends[p.host]--
		sorted[ends[p.host]] = p.encoded
	}
	for id, hv := range j.byID {
		if start, end := ends[id], endOf(ends, id, len(sorted)); end > start {
			j.encoded[hv.hostname] = sorted[start:end:end]
		}
	}
	j.pieces = nil
}

// endOf is where the pieces of host ID id end, given where each starts.
func endOf(starts []int, id, total int) int {
	if id+1 < len(starts) {
		return starts[id+1]
	}
	return total
}

// expand adds to v the named instances the join left encoded.
func (j *agentJoin) expand(v *apiv1.AgentView) {
	if len(j.encoded[v.Hostname]) == 0 {
		return
	}
	for _, a := range j.shares {
		if !j.readable(a.access) {
			continue
		}
		for _, h := range a.hosts {
			if h.host != v.Hostname {
				continue
			}
			for _, l := range h.launches {
				v.Instances = append(v.Instances, l.instance(a.app))
			}
		}
	}
	delete(j.encoded, v.Hostname)
}

// launch adds one launch of an application's instance to v, the view of
// the agent it is on.
func (j *agentJoin) launch(v *apiv1.AgentView, app string, named bool, l appLaunch) {
	g, launched := l.group, l.launched()
	if taints := j.executing[v.Hostname]; taints != nil && named && !l.successor {
		evicting := g.Move == nil && launched.Phase == "Running" || g.Move != nil && g.Move.Reason == registry.EvictionMove
		if r := j.rulesOf(app); r.evictable && evicting {
			if at, evict := r.constraint.Eviction(taints); evict {
				v.Evictions = append(v.Evictions, apiv1.PendingEviction{Instance: fmt.Sprintf("%s/%d", app, g.Index), At: at})
			}
		}
	}
	if named {
		v.Instances = append(v.Instances, l.instance(app))
	} else {
		v.Others++
	}
	for _, t := range launched.Tasks {
		v.Used.CPUs += t.CPUs
		v.Used.MemMB += t.MemMB
	}
	if v.Drain != nil && !l.successor {
		j.drained(v.Drain, g, app, named)
	}
}

// drained counts an instance on a draining agent: kept (stateful, the
// drain not forced), moving, blocked (its successor fits nowhere), or
// left to move.
func (j *agentJoin) drained(d *apiv1.DrainView, g *registry.TaskGroup, app string, named bool) {
	name := fmt.Sprintf("%s/%d", app, g.Index)
	switch {
	case j.rulesOf(app).stateful && !d.Force:
		if named {
			d.Kept = append(d.Kept, name)
		}
	case g.Move != nil && g.Move.Successor != nil:
		s := g.Move.Successor
		switch {
		case !named:
		case s.FitsNowhere():
			d.Blocked = append(d.Blocked, apiv1.BlockedMove{Instance: name, Why: s.Pending.String()})
		default:
			d.Moving = append(d.Moving, name)
		}
		d.Remaining++
	default:
		d.Remaining++
	}
}

// views are the agents' views by hostname, each drain's state set.
func (j *agentJoin) views() []*apiv1.AgentView {
	for _, v := range j.all {
		if d := v.Drain; d != nil {
			d.State = map[bool]string{true: "drained", false: "draining"}[d.Remaining == 0]
		}
	}
	slices.SortFunc(j.all, func(x, y *apiv1.AgentView) int { return cmp.Compare(x.Hostname, y.Hostname) })
	return j.all
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
	summary, err := summaryParam(r)
	if err != nil {
		return err
	}
	rd := s.reads(r)
	return s.answerFromView(w, r, rd, func(w http.ResponseWriter) (time.Time, error) {
		j, err := s.joinAgents(r.Context(), rd, mayRead(r), !summary)
		if err != nil {
			return time.Time{}, err
		}
		views, next := pageOf(p, j.views(), func(v *apiv1.AgentView) string { return v.ID })
		if summary {
			for i, v := range views {
				views[i] = summarizedAgent(v, summary)
			}
			writeList(w, "agents", nonNil(views), next)
		} else {
			object := encodeAgentObject
			if rd == reader(s.cfg.View) {
				object = func(v *apiv1.AgentView) agentObject { return s.agentObjects.of(j, v) }
			}
			writeAgents(w, nonNil(views), j.encoded, next, object)
		}
		return j.until, nil
	})
}

// summarizedAgent counts the instances of v instead of listing them when
// summary is set.
func summarizedAgent(v *apiv1.AgentView, summary bool) *apiv1.AgentView {
	if !summary {
		return v
	}
	counted := *v
	counted.Instances, counted.InstanceCount = nil, len(v.Instances)
	return &counted
}

// findAgent returns the view of the agent the path names by ID or
// hostname, read from rd.
func (s *Server) findAgent(r *http.Request, rd reader) (*apiv1.AgentView, error) {
	j, err := s.joinAgents(r.Context(), rd, mayRead(r), true)
	if err != nil {
		return nil, err
	}
	v, err := agentNamed(j.views(), r.PathValue("agent"))
	if err != nil {
		return nil, err
	}
	j.expand(v)
	return v, nil
}

// agentNamed returns the agent named by ID or hostname.
func agentNamed(views []*apiv1.AgentView, name string) (*apiv1.AgentView, error) {
	for _, v := range views {
		if v.ID == name || v.Hostname == name {
			return v, nil
		}
	}
	return nil, fmt.Errorf("agent %q (by ID or hostname): %w", name, errdefs.ErrNotFound)
}

func (s *Server) getAgent(w http.ResponseWriter, r *http.Request) error {
	summary, err := summaryParam(r)
	if err != nil {
		return err
	}
	v, err := s.findAgent(r, s.reads(r))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, summarizedAgent(v, summary))
	return nil
}

// operateAgent applies cordon, uncordon, drain, undrain or taints (PUT
// replaces the taints) and answers the agent as it is then.
func (s *Server) operateAgent(w http.ResponseWriter, r *http.Request) error {
	op := r.PathValue("op")
	edits := map[string]func(*registry.AgentSettings, apiv1.AgentRequest) error{
		"cordon":   func(st *registry.AgentSettings, _ apiv1.AgentRequest) error { st.Cordoned = true; return nil },
		"uncordon": func(st *registry.AgentSettings, _ apiv1.AgentRequest) error { st.Cordoned = false; return nil },
		"drain": func(st *registry.AgentSettings, req apiv1.AgentRequest) error {
			if st.Drain == nil || st.Drain.Force != req.Force {
				st.Drain = &registry.DrainRequest{Since: time.Now().UTC(), Force: req.Force}
			}
			return nil
		},
		"undrain": func(st *registry.AgentSettings, _ apiv1.AgentRequest) error { st.Drain = nil; return nil },
		"taints": func(st *registry.AgentSettings, req apiv1.AgentRequest) error {
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
	var req apiv1.AgentRequest
	if err := s.optionalBody(r, &req); err != nil {
		return err
	}
	if op == "taints" && req.Taints == nil {
		return field.ErrorList{field.Required("taints")}
	}
	v, err := s.findAgent(r, s.cfg.Registry)
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
	if v, err = s.findAgent(r, s.cfg.Registry); err != nil {
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
	views, err := s.agentViews(r.Context(), s.cfg.Registry, mayRead(r))
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
	var req apiv1.EngineRequest
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

// hostID numbers a hostname, for a join to find its agent's view by
// index instead of hashing the name once per application on it.
type hostID int32

// hostIDs numbers every hostname seen, for the life of the process:
// agents are a few thousand names, renamed rarely.
var hostIDs = &hostNumbers{ids: map[string]hostID{}}

type hostNumbers struct {
	mu  sync.RWMutex
	ids map[string]hostID
}

func (n *hostNumbers) of(host string) hostID {
	n.mu.RLock()
	id, ok := n.ids[host]
	n.mu.RUnlock()
	if ok {
		return id
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if id, ok := n.ids[host]; ok {
		return id
	}
	id = hostID(len(n.ids))
	n.ids[strings.Clone(host)] = id
	return id
}

func (n *hostNumbers) count() int {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return len(n.ids)
}
