package schedulertest

import (
	"encoding/json"
	"fmt"
	"maps"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	mesossched "github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/bcs-mesos/bcs-mesos/pkg/constraint"
	"github.com/bcs-mesos/bcs-mesos/pkg/constraint/constrainttest"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest/manifesttest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/scheduler"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// Harness runs a scheduler.Core against an in-memory store and a fake
// cluster of agents, one script command at a time (Run).
type Harness struct {
	t       testing.TB
	core    *scheduler.Core
	now     time.Time
	start   time.Time
	apps    map[string]*registry.App
	groups  map[string]*registry.TaskGroup // "ns/app/idx"
	sweeps  map[string]*registry.Sweep     // by agent
	objects map[string]manifest.Object     // "kind ns/name": configmaps, secrets, depends objects
	// rollouts are the stored rollouts; shown the last rollout line
	// printed per application, so that only changes are shown.
	rollouts map[string]*registry.Rollout
	shown    map[string]string
	// hookRuns are the stored hook runs, by "ns/name".
	hookRuns map[string]*registry.HookRun
	// history keeps every version's spec and restart generation, for
	// rollback.
	history     map[string][][]byte
	generations map[string][]int
	// echoes are the changes the store's watch brings back after a
	// step wrote dependency pods; they are stepped next.
	echoes []scheduler.Input
	fwID   string
	// settings are the agents' settings by hostname; engine the mode.
	settings map[string]*registry.AgentSettings
	engine   registry.Engine
	// engineSettings are the engine's configuration values set at run
	// time, restored with the store.
	engineSettings registry.EngineSettings
	agents         int
	offerNo        int
	uuid           int
	// crashing drops what steps write, as a process killed before it
	// stored them (crash).
	crashing bool
	// maxLaunching is the core's Config.MaxLaunching (0: its default).
	maxLaunching int
	// reconcileBatch is the core's Config.ReconcileBatch (0: its default).
	reconcileBatch int
	// identitiesOn is the core's Config.Identities; identities the
	// namespaces' identities stepped so far, restored with the store.
	identitiesOn bool
	identities   map[string]*proto.Identity
	// allocations are the stored allocations, by "ns/app/idx".
	allocations map[string]*registry.Allocation
	// handed are the last step's task group writes and their JSON then:
	// the driver stores a step's records while the core runs the next, so
	// the core must not change them afterwards (checked after each step).
	handed []handedRecord
}

type handedRecord struct {
	rec  *registry.TaskGroup
	json string
}

// New returns a Harness with an empty store, the fixture configmap and
// secret, and a fresh Core restored from it.
func New(t testing.TB) *Harness {
	h := &Harness{t: t, now: time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC),
		apps: map[string]*registry.App{}, groups: map[string]*registry.TaskGroup{}, sweeps: map[string]*registry.Sweep{},
		objects: map[string]manifest.Object{}, rollouts: map[string]*registry.Rollout{}, shown: map[string]string{},
		hookRuns: map[string]*registry.HookRun{}, settings: map[string]*registry.AgentSettings{},
		history: map[string][][]byte{}, generations: map[string][]int{}, identities: map[string]*proto.Identity{},
		allocations: map[string]*registry.Allocation{}}
	for _, obj := range []manifest.Object{manifesttest.ConfigMap(), manifesttest.Secret()} {
		meta, _ := manifest.MetaOf(obj)
		h.objects[string(obj.Kind())+" "+meta.Namespace+"/"+meta.Name] = obj
	}
	h.start = h.now
	h.core = h.newCore()
	return h
}

func (h *Harness) coreConfig() scheduler.Config {
	return scheduler.Config{
		ProcessExecutor:   scheduler.ExecutorBinary{URI: "file:///opt/bcs/bcs-process-executor"},
		ContainerExecutor: scheduler.ExecutorBinary{URI: "file:///opt/bcs/bcs-container-executor"},
		RetryInterval:     30 * time.Second,
		MaxLaunching:      h.maxLaunching,
		ReconcileBatch:    h.reconcileBatch,
		Identities:        h.identitiesOn,
	}
}

func (h *Harness) newCore() *scheduler.Core {
	c, err := scheduler.NewCore(h.coreConfig())
	if err != nil {
		h.t.Fatal(err)
	}
	var sweeps []*registry.Sweep
	for _, k := range sortedKeys(h.sweeps) {
		s := *h.sweeps[k]
		sweeps = append(sweeps, &s)
	}
	var objects []manifest.Object
	for _, k := range sortedKeys(h.objects) {
		objects = append(objects, h.objects[k])
	}
	var rollouts []*registry.Rollout
	for _, k := range sortedKeys(h.rollouts) {
		ro := *h.rollouts[k]
		rollouts = append(rollouts, &ro)
	}
	var settings []*registry.AgentSettings
	for _, k := range sortedKeys(h.settings) {
		cp := *h.settings[k]
		settings = append(settings, &cp)
	}
	var runs []*registry.HookRun
	for _, k := range sortedKeys(h.hookRuns) {
		run := *h.hookRuns[k]
		runs = append(runs, &run)
	}
	c.Step(h.now, scheduler.Restore{FrameworkID: h.fwID, Apps: h.appList(), Groups: h.groupList(), Sweeps: sweeps,
		Rollouts: rollouts, HookRuns: runs, Objects: objects, AgentSettings: settings, Engine: h.engine, Identities: maps.Clone(h.identities),
		Allocations: h.allocationList()})
	// The driver hands the stored engine settings in after the restore.
	if len(h.engineSettings.Values) > 0 {
		c.Step(h.now, h.engineConfig())
	}
	return c
}

// engineConfig is the input of the engine's settings over the flags'
// defaults, as the driver makes it.
func (h *Harness) engineConfig() scheduler.Input {
	cfg, err := h.engineSettings.Over(scheduler.EngineDefaults(h.coreConfig(), 0))
	if err != nil {
		h.t.Fatal(err)
	}
	return scheduler.EngineConfigChanged{Config: cfg}
}

// Core is the core the harness runs now (a restart makes another).
func (h *Harness) Core() *scheduler.Core { return h.core }

func (h *Harness) appList() []*registry.App {
	var out []*registry.App
	for _, k := range sortedKeys(h.apps) {
		a := *h.apps[k]
		out = append(out, &a)
	}
	return out
}

// groupList is the stored task groups read afresh, as from etcd: nothing
// the core restores from shares memory with what it wrote before.
func (h *Harness) groupList() []*registry.TaskGroup {
	var out []*registry.TaskGroup
	for _, k := range sortedKeys(h.groups) {
		var g registry.TaskGroup
		if err := json.Unmarshal([]byte(mustJSON(h.t, h.groups[k])), &g); err != nil {
			h.t.Fatal(err)
		}
		g.Revision = h.groups[k].Revision
		out = append(out, &g)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func (h *Harness) step(in scheduler.Input) []string {
	out := h.core.Step(h.now, in)
	h.checkHanded(in)
	if h.crashing {
		return []string{fmt.Sprintf("(killed before storing %d writes and sending %d calls)", len(out.Writes), len(out.Calls))}
	}
	h.hand(out)
	var lines []string
	for _, w := range out.Writes {
		if line := h.apply(w); line != "" {
			lines = append(lines, line)
		}
	}
	for _, c := range out.Calls {
		lines = append(lines, h.describeCall(c))
	}
	for _, ch := range out.Checks {
		if len(ch.Checks) == 0 {
			lines = append(lines, "check stop "+ch.TaskGroupID)
			continue
		}
		var checks []string
		for _, c := range ch.Checks {
			checks = append(checks, c.Check.Type+" "+c.Address())
		}
		lines = append(lines, fmt.Sprintf("check start %s: %s", ch.TaskGroupID, strings.Join(checks, ", ")))
	}
	for _, waited := range out.Running {
		lines = append(lines, fmt.Sprintf("running %v after wanted", waited))
	}
	for _, l := range out.Logs {
		line := "log " + l.Message
		for i := 0; i+1 < len(l.Args); i += 2 {
			line += fmt.Sprintf(" %v=%v", l.Args[i], l.Args[i+1])
		}
		lines = append(lines, line)
	}
	echoes := h.echoes
	h.echoes = nil
	for _, in := range echoes {
		lines = append(lines, h.step(in)...)
	}
	return lines
}

// checkHanded fails the test if a record an earlier step handed over
// changed during this one, and keeps this step's.
func (h *Harness) checkHanded(in scheduler.Input) {
	for _, r := range h.handed {
		if now := mustJSON(h.t, r.rec); now != r.json {
			h.t.Errorf("step %T changed task group %s/%s/%d written by the step before:\nthen %s\nnow  %s", in, r.rec.Namespace, r.rec.App, r.rec.Index, r.json, now)
		}
	}
	h.handed = h.handed[:0]
}

// hand keeps a step's task group writes for checkHanded.
func (h *Harness) hand(out scheduler.Output) {
	for _, w := range out.Writes {
		if w.TaskGroup != nil {
			h.handed = append(h.handed, handedRecord{rec: w.TaskGroup, json: mustJSON(h.t, w.TaskGroup)})
		}
	}
}

func mustJSON(t testing.TB, v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// apply persists a write in the in-memory store and describes it.
func (h *Harness) apply(w scheduler.Write) string {
	switch {
	case w.TaskGroup != nil:
		return h.storeTaskGroup(w.TaskGroup, w.Notices)
	case w.DeleteGroup != nil:
		key := fmt.Sprintf("%s/%s/%d", w.DeleteGroup.Namespace, w.DeleteGroup.App, w.DeleteGroup.Index)
		delete(h.groups, key)
		return "store delete tg " + key
	case w.AppStatus != nil:
		return h.storeAppStatus(w.AppStatus)
	case w.RemoveApp != nil:
		delete(h.apps, w.RemoveApp.Namespace+"/"+w.RemoveApp.Name)
		delete(h.rollouts, w.RemoveApp.Namespace+"/"+w.RemoveApp.Name)
		return "store remove app " + w.RemoveApp.Namespace + "/" + w.RemoveApp.Name
	case w.FrameworkID != "":
		h.fwID = w.FrameworkID
		return "store framework " + w.FrameworkID
	case w.Agent != nil:
		endpoint := ""
		if w.Agent.Endpoint != "" {
			endpoint = " endpoint=" + w.Agent.Endpoint
		}
		return fmt.Sprintf("store agent %s %s%s %v", w.Agent.ID, w.Agent.Hostname, endpoint, w.Agent.Attributes)
	case w.Maintenance != nil:
		return h.describeMaintenance(w.Maintenance)
	case w.Sweep != nil:
		return h.storeSweep(w.Sweep)
	case w.DeleteSweep != "":
		delete(h.sweeps, w.DeleteSweep)
		return "store delete sweep " + w.DeleteSweep
	case w.Rollout != nil:
		return h.storeRollout(w.Rollout)
	case w.HookRun != nil:
		return h.storeHookRun(w.HookRun)
	case w.DeleteHook != nil:
		delete(h.hookRuns, w.DeleteHook.Namespace+"/"+w.DeleteHook.Name)
		return "store delete hookrun " + w.DeleteHook.Namespace + "/" + w.DeleteHook.Name
	case w.DependencyPod != nil:
		return h.putDependencyPod(w.DependencyPod)
	case w.DeleteDependencyPod != nil:
		return h.deleteDependencyPod(w.DeleteDependencyPod)
	}
	return "store ?"
}

// storeTaskGroup stores an instance's record, with its notices, and
// describes them.
func (h *Harness) storeTaskGroup(rec *registry.TaskGroup, notices []registry.Notice) string {
	g := *rec
	key := fmt.Sprintf("%s/%s/%d", g.Namespace, g.App, g.Index)
	h.groups[key] = &g
	s := fmt.Sprintf("store tg %s %s", key, g.Phase)
	if g.State != "" {
		s += " " + g.State
	}
	if g.AgentID != "" {
		s += " on " + g.AgentID
	}
	s += fmt.Sprintf(" launches=%d restarts=%d", g.Launches, g.Restarts)
	if showsRevisions(h.apps[g.Namespace+"/"+g.App]) {
		s += fmt.Sprintf(" rev=%d", g.Version)
	}
	if g.Node != "" {
		s += " node=" + g.Node
	}
	if pd := g.PreDelete; pd != nil {
		s += fmt.Sprintf(" predelete=%s:%s#%d", pd.Reason, map[bool]string{true: "passed", false: "waiting"}[pd.Passed], pd.Attempt)
	}
	if mv := g.Move; mv != nil {
		s += describeMove(mv)
	}
	if u := g.Update; u != nil {
		s += fmt.Sprintf(" update=%s:%d", u.Mode, u.Version)
		if u.Error != "" {
			s += fmt.Sprintf("(%s)", u.Error)
		}
	}
	if !g.NotBefore.IsZero() && g.NotBefore.After(h.now) {
		s += " wait=" + g.NotBefore.Sub(h.now).String()
	}
	if g.Healthy != nil {
		s += fmt.Sprintf(" healthy=%v", *g.Healthy)
	}
	s += describePending(g.Pending)
	if g.RemoteHealthy != nil || len(g.RemoteChecks) > 1 {
		s += " remote=" + describeRemote(&g)
	}
	if g.Message != "" {
		s += fmt.Sprintf(" %q", g.Message)
	}
	for _, n := range notices {
		s += fmt.Sprintf("\nstore notice %s %s", n.Type, n.ID)
		if n.State != "" {
			s += " " + n.State
		}
		s += fmt.Sprintf(" %q", n.Message)
	}
	return s
}

// storeAppStatus stores an application's state (and a daemonset's
// desired count) and describes it.
func (h *Harness) storeAppStatus(st *scheduler.AppStatus) string {
	if a := h.apps[st.Namespace+"/"+st.Name]; a != nil {
		a.State, a.Message = st.State, st.Message
		if st.Daemonset {
			a.Instances = st.Desired
		}
	}
	return fmt.Sprintf("store status %s/%s %s%s %q", st.Namespace, st.Name, st.State, describeDesired(st), st.Message)
}

// describeMaintenance describes an agent's maintenance window, its times
// from the script's start.
func (h *Harness) describeMaintenance(m *scheduler.AgentMaintenance) string {
	if m.Window == nil {
		return fmt.Sprintf("store maintenance %s %s none", m.AgentID, m.Hostname)
	}
	end := "none"
	if !m.Window.End.IsZero() {
		end = m.Window.End.Sub(h.start).String()
	}
	return fmt.Sprintf("store maintenance %s %s start=%s end=%s answer=%q", m.AgentID, m.Hostname,
		m.Window.Start.Sub(h.start), end, m.Window.Answer)
}

// storeSweep stores the sweep owed an agent and describes it.
func (h *Harness) storeSweep(sweep *registry.Sweep) string {
	s := *sweep
	h.sweeps[s.AgentID] = &s
	line := fmt.Sprintf("store sweep %s owed=%v running=%v held=%v", s.AgentID, s.Owed, sortedKeys(s.Running), s.HeldPorts)
	if s.Attempts > 0 {
		line += fmt.Sprintf(" attempts=%d wait=%s", s.Attempts, s.NotBefore.Sub(h.now))
	}
	return line
}

func (h *Harness) describeCall(c *mesossched.Call) string {
	switch c.GetType() {
	case mesossched.Call_ACCEPT:
		var parts []string
		for _, op := range c.Accept.Operations {
			lg := op.GetLaunchGroup()
			var ports []string
			for _, ti := range lg.TaskGroup.Tasks {
				for _, r := range ti.Resources {
					if r.Name == "ports" {
						for _, rg := range r.GetRanges().GetRange() {
							ports = append(ports, strconv.FormatUint(rg.Begin, 10))
						}
					}
				}
			}
			uid := ""
			if spec, err := proto.DecodeTaskSpec(lg.TaskGroup.Tasks[0].Data); err == nil && spec.Identity != nil {
				uid = fmt.Sprintf(" uid %d", spec.Identity.UID)
			}
			if spec, err := proto.DecodeTaskSpec(lg.TaskGroup.Tasks[0].Data); err == nil && spec.UsageIntervalSeconds > 0 {
				uid += fmt.Sprintf(" usage %gs", spec.UsageIntervalSeconds)
			}
			parts = append(parts, fmt.Sprintf("%s(%d tasks ports %s%s)", lg.Executor.ExecutorID.Value, len(lg.TaskGroup.Tasks), strings.Join(ports, ","), uid))
		}
		return fmt.Sprintf("call ACCEPT %s launch %s", offerIDs(c.Accept.OfferIDs), strings.Join(parts, " "))
	case mesossched.Call_DECLINE:
		return fmt.Sprintf("call DECLINE %s", offerIDs(c.Decline.OfferIDs))
	case mesossched.Call_KILL:
		return fmt.Sprintf("call KILL %s on %s grace=%s", c.Kill.TaskID.Value, c.Kill.GetAgentID().GetValue(),
			time.Duration(c.Kill.GetKillPolicy().GetGracePeriod().GetNanoseconds()))
	case mesossched.Call_ACKNOWLEDGE:
		return fmt.Sprintf("call ACKNOWLEDGE %s", c.Acknowledge.TaskID.Value)
	case mesossched.Call_RECONCILE:
		var ids []string
		for _, t := range c.Reconcile.Tasks {
			ids = append(ids, t.TaskID.Value)
		}
		if len(ids) == 0 {
			return "call RECONCILE (implicit)"
		}
		return "call RECONCILE " + strings.Join(ids, " ")
	case mesossched.Call_MESSAGE:
		return describeMessage(c.Message.ExecutorID.Value, c.Message.Data)
	case mesossched.Call_ACCEPT_INVERSE_OFFERS:
		return "call ACCEPT_INVERSE_OFFERS " + offerIDs(c.AcceptInverseOffers.InverseOfferIDs)
	case mesossched.Call_DECLINE_INVERSE_OFFERS:
		return fmt.Sprintf("call DECLINE_INVERSE_OFFERS %s refuse=%gs", offerIDs(c.DeclineInverseOffers.InverseOfferIDs),
			c.DeclineInverseOffers.GetFilters().GetRefuseSeconds())
	}
	return "call " + c.GetType().String()
}

func offerIDs(ids []mesos.OfferID) string {
	var s []string
	for _, id := range ids {
		s = append(s, id.Value)
	}
	return "[" + strings.Join(s, " ") + "]"
}

// Run runs one script command and returns what the core wrote, sent and
// logged, one line each (see the package documentation for commands).
func (h *Harness) Run(command string) []string {
	h.t.Helper()
	f := strings.Fields(command)
	args := map[string]string{}
	for _, a := range f[1:] {
		if k, v, ok := strings.Cut(a, "="); ok {
			args[k] = v
		}
	}
	switch f[0] {
	case "app":
		return h.step(scheduler.AppChanged{App: h.createApp(f[1], args)})
	case "container":
		return h.step(scheduler.AppChanged{App: h.createContainerApp(f[1], args)})
	case "agents":
		h.agents, _ = strconv.Atoi(f[1])
		return nil
	case "subscribe":
		return h.step(scheduler.Subscribed{FrameworkID: "fw-1"})
	case "offers":
		return h.step(scheduler.OffersIn{Offers: h.offersOf(f, args)})
	case "rescind":
		return h.step(scheduler.Rescind{OfferID: f[1]})
	case "status":
		return h.status(f[1], f[2], f[3], args)
	case "tasks":
		return h.tasks(f[1], f[2])
	case "unknown":
		return h.step(scheduler.StatusUpdates{Statuses: []mesos.TaskStatus{h.taskStatus(f[1], f[2], f[3], nil, args)}})
	case "sweep":
		return h.sweepStatus(f[1], f[2], f[3], args)
	case "tick":
		return h.tick(f[1])
	case "budget":
		return h.step(scheduler.LaunchBudget{Max: atoi(f[1], 0)})
	case "usage":
		return h.changeApp(f[1], func(a *registry.App) { a.UsageReport = f[2] == "on" })
	case "fleet":
		return h.fleet(f[1])
	case "allocate":
		return h.allocate(f[1], f[2], args)
	case "release":
		return h.release(f[1], f[2])
	case "scale":
		return h.scale(f[1], atoi(f[2], 0), args)
	case "update":
		return h.changeApp(f[1], func(a *registry.App) { a.Version++ })
	case "delete":
		return h.changeApp(f[1], func(a *registry.App) { a.State = registry.AppDeleting })
	case "health":
		return h.health(f[1], f[2], f[3], args)
	case "operate":
		g := h.groups[f[1]+"/"+f[2]]
		return h.step(scheduler.Operate{TaskGroupID: g.ID, Op: scheduler.Operation(f[3])})
	case "restart":
		return h.restart(args)
	case "crash":
		return h.crash(strings.TrimPrefix(command, "crash "))
	case "object":
		return h.object(f[1], manifest.Kind(f[2]), f[3], args)
	case "identity":
		return h.identity(f[1], args)
	}
	if lines, ok := h.runDaemonsets(f, args); ok {
		return lines
	}
	if lines, ok := h.runRollout(f, args); ok {
		return lines
	}
	if lines, ok := h.runAgents(f, args); ok {
		return lines
	}
	h.t.Fatalf("unknown command %q", command)
	return nil
}

// offersOf are the offers of an offers command: of the agents it names
// (all without names), unavailable=START:DURATION, from url=IP:PORT.
func (h *Harness) offersOf(f []string, args map[string]string) []mesos.Offer {
	var agents []string
	for _, a := range f[1:] {
		if !strings.Contains(a, "=") {
			agents = append(agents, a)
		}
	}
	offers := h.offers(agents, args["ports"], args["cpus"])
	if u := h.unavailability(args["unavailable"]); u != nil {
		for i := range offers {
			offers[i].Unavailability = u
		}
	}
	if host, port, ok := strings.Cut(args["url"], ":"); ok {
		for i := range offers {
			offers[i].URL = &mesos.URL{Scheme: "http", Address: mesos.Address{Hostname: &offers[i].Hostname, IP: &host, Port: int32(atoi(port, 0))}}
		}
	}
	return offers
}

// sweepStatus steps a status of the sweep task of kind running on agent.
func (h *Harness) sweepStatus(agent, kind, state string, args map[string]string) []string {
	s := h.sweeps[agent]
	if s == nil || s.Running[kind] == "" {
		h.t.Fatalf("no %s sweep runs on %s", kind, agent)
	}
	st := h.taskStatus(s.Running[kind], agent, state, nil, args)
	if m := args["message"]; m != "" {
		st.Message = &m
	}
	return h.step(scheduler.StatusUpdates{Statuses: []mesos.TaskStatus{st}})
}

// tick advances the clock by duration and steps a Tick.
func (h *Harness) tick(duration string) []string {
	d, err := time.ParseDuration(duration)
	if err != nil {
		h.t.Fatal(err)
	}
	h.now = h.now.Add(d)
	return h.step(scheduler.Tick{})
}

// changeApp changes the stored application key and steps its record.
func (h *Harness) changeApp(key string, change func(*registry.App)) []string {
	a := h.apps[key]
	change(a)
	cp := *a
	return h.step(scheduler.AppChanged{App: &cp})
}

// scale sets an application's instance count as the registry does,
// removed=3,5 removing those instances by choice (ScaleAppRemoving).
func (h *Harness) scale(key string, instances int, args map[string]string) []string {
	var chosen []int
	if args["removed"] != "" {
		for _, id := range strings.Split(args["removed"], ",") {
			chosen = append(chosen, atoi(id, -1))
		}
	}
	a := h.apps[key]
	holes, err := registry.Rescale(a.Instances, a.Removed, instances, chosen)
	if err != nil {
		return []string{"error: " + err.Error()}
	}
	return h.changeApp(key, func(a *registry.App) {
		a.Instances, a.Removed, a.Force = instances, holes, args["force"] == "true"
	})
}

// health steps a remote check's verdict on the instance key/idx.
func (h *Harness) health(key, idx, verdict string, args map[string]string) []string {
	g := h.groups[key+"/"+idx]
	return h.step(scheduler.RemoteHealth{TaskGroupID: g.ID, Check: atoi(args["check"], 0), Address: args["addr"],
		Healthy: verdict == "healthy", Kill: verdict == "kill",
		Message: map[bool]string{true: "", false: "connection refused"}[verdict == "healthy"]})
}

// restart makes a new core restored from the store, as after a crash.
func (h *Harness) restart(args map[string]string) []string {
	h.maxLaunching = atoi(args["max-launching"], h.maxLaunching)
	h.reconcileBatch = atoi(args["reconcile-batch"], h.reconcileBatch)
	h.identitiesOn = h.identitiesOn || args["identities"] == "on"
	h.core = h.newCore()
	return []string{"(new core restored from the store)"}
}

// crash runs command, whose step stores and sends nothing, then restarts.
func (h *Harness) crash(command string) []string {
	h.crashing = true
	lines := h.Run(command)
	h.crashing = false
	h.core = h.newCore()
	return append(lines, "(new core restored from the store)")
}

// identity steps the namespace's identity (uid=N), or that it has none
// (problem=R).
func (h *Harness) identity(namespace string, args map[string]string) []string {
	if args["problem"] != "" {
		return h.step(scheduler.NamespaceIdentity{Namespace: namespace, Problem: args["problem"]})
	}
	uid := uint32(atoi(args["uid"], 0))
	h.identities[namespace] = &proto.Identity{UID: uid, GID: uid}
	return h.step(scheduler.NamespaceIdentity{Namespace: namespace, Identity: h.identities[namespace]})
}

// object writes or deletes a configmap, secret or depends object (a
// fixture under another name; build=B changes a depends object's spec),
// or says a secret's values cannot be read (unreadable reason=R).
func (h *Harness) object(op string, kind manifest.Kind, key string, args map[string]string) []string {
	ns, name, _ := strings.Cut(key, "/")
	id := string(kind) + " " + key
	switch op {
	case "delete":
		delete(h.objects, id)
		return h.step(scheduler.ObjectRemoved{Kind: kind, Namespace: ns, Name: name})
	case "unreadable":
		delete(h.objects, id)
		return h.step(scheduler.SecretUnreadable{Namespace: ns, Name: name, Reason: args["reason"]})
	}
	var obj manifest.Object
	switch kind {
	case manifest.KindConfigMap:
		cm := manifesttest.ConfigMap()
		cm.Metadata.Namespace, cm.Metadata.Name = ns, name
		obj = cm
	case manifest.KindSecret:
		s := manifesttest.Secret()
		s.Metadata.Namespace, s.Metadata.Name = ns, name
		obj = s
	case manifest.KindDepends:
		obj = dependsObject(ns, name, args["build"])
	default:
		h.t.Fatalf("object kind %q", kind)
	}
	h.objects[id] = obj
	return h.step(scheduler.ObjectChanged{Object: obj})
}

// createApp stores a process application built from the manifest
// fixtures and the command's options.
func (h *Harness) createApp(key string, args map[string]string) *registry.App {
	p := h.process(key, args)
	spec, _ := json.Marshal(p)
	a := &registry.App{Namespace: p.Metadata.Namespace, Name: p.Metadata.Name, Kind: manifest.KindProcess, Version: 1,
		Instances: p.Spec.Instance, Spec: spec, State: registry.AppDeploying}
	if args["created"] == "now" {
		a.CreatedAt = h.now // its task IDs carry its incarnation
	}
	h.apps[key] = a
	h.history[key], h.generations[key] = [][]byte{spec}, []int{0}
	cp := *a
	return &cp
}

// createContainerApp stores the fixture container application, in the
// CNI network cni=NAME when given, with the command's restart policy.
func (h *Harness) createContainerApp(key string, args map[string]string) *registry.App {
	ns, name, _ := strings.Cut(key, "/")
	a := manifesttest.Application()
	a.Metadata.Namespace, a.Metadata.Name = ns, name
	a.Spec.Instance = atoi(args["instances"], 1)
	a.RestartPolicy = restartPolicy(args)
	if network := args["cni"]; network != "" {
		a.Spec.Template.Spec.NetworkType, a.Spec.Template.Spec.NetworkMode = "cni", manifest.NetworkMode(network)
	}
	if args["sidecar"] == "true" {
		sidecar := manifesttest.Container()
		sidecar.Ports, sidecar.HealthChecks, sidecar.Env, sidecar.Volumes = nil, nil, nil, nil
		a.Spec.Template.Spec.Containers = append(a.Spec.Template.Spec.Containers, sidecar)
	}
	main := &a.Spec.Template.Spec.Containers[0]
	main.HealthChecks = append(main.HealthChecks, remoteChecks(args["remote"], main.Ports[0].Name)...)
	if errs := a.Validate(manifesttest.NewResolver()); len(errs) > 0 {
		h.t.Fatalf("scenario app invalid: %v", errs)
	}
	spec, _ := json.Marshal(a)
	rec := &registry.App{Namespace: ns, Name: name, Kind: manifest.KindApplication, Version: 1,
		Instances: a.Spec.Instance, Spec: spec, State: registry.AppDeploying}
	h.apps[key] = rec
	h.history[key], h.generations[key] = [][]byte{spec}, []int{0}
	cp := *rec
	return &cp
}

// remoteChecks are the checks of remote=tcp,http on the port named port:
// a REMOTE_TCP and a REMOTE_HTTP check.
func remoteChecks(remote, port string) []manifest.HealthCheck {
	var checks []manifest.HealthCheck
	for _, typ := range strings.Split(remote, ",") {
		switch typ {
		case "tcp":
			checks = append(checks, manifest.HealthCheck{Type: manifest.CheckRemoteTCP, IntervalSeconds: 5, TimeoutSeconds: 1,
				ConsecutiveFailures: 2, TCP: &manifest.TCPCheck{PortName: port}})
		case "http":
			checks = append(checks, manifest.HealthCheck{Type: manifest.CheckRemoteHTTP, IntervalSeconds: 5, TimeoutSeconds: 1,
				ConsecutiveFailures: 2, HTTP: &manifest.HTTPCheck{Scheme: "http", PortName: port, Path: "/ready"}})
		}
	}
	return checks
}

// process is the fixture process application with the command's options.
func (h *Harness) process(key string, args map[string]string) *manifest.Process {
	ns, name, _ := strings.Cut(key, "/")
	p := manifesttest.Process()
	p.Metadata.Namespace, p.Metadata.Name = ns, name
	p.Spec.Instance = atoi(args["instances"], 1)
	p.RestartPolicy = restartPolicy(args)
	p.KillPolicy.GracePeriod = atoi(args["grace"], 1)
	proc := &p.Spec.Template.Spec.Processes[0]
	proc.Ports = []manifest.ProcessPort{{Name: "http_port", Protocol: "HTTP"}}
	proc.StartCmd = "./start.sh --port ${ports.http_port}"
	proc.HealthChecks = remoteChecks(args["remote"], "http_port")
	if args["checks"] == "http" {
		proc.HealthChecks = append(proc.HealthChecks, manifest.HealthCheck{Type: manifest.CheckHTTP, IntervalSeconds: 5, TimeoutSeconds: 1,
			ConsecutiveFailures: 3, HTTP: &manifest.HTTPCheck{PortName: "http_port", Path: "/check"}})
	}
	if b := args["build"]; b != "" {
		proc.StartCmd += " --build " + b
	}
	if args["ports"] == "2" {
		proc.Ports = append(proc.Ports, manifest.ProcessPort{Name: "admin_port", Protocol: "TCP"})
	}
	proc.Resources.Limits = manifest.ResourceList{CPU: manifest.Quantity(orDefault(args["cpu"], "1")), Memory: "256"}
	if args["sidecar"] == "true" {
		sidecar := *proc
		sidecar.ProcName, sidecar.Ports, sidecar.HealthChecks = "sidecar", nil, nil
		sidecar.StartCmd = "./sidecar.sh"
		p.Spec.Template.Spec.Processes = append(p.Spec.Template.Spec.Processes, sidecar)
	}
	p.Spec.Template.Spec.Depends = dependsRefs(args["depends"])
	b := constrainttest.New()
	if u := args["unique"]; u != "" {
		b.Unique(u)
	}
	if c := args["cluster"]; c != "" {
		attr, values, _ := strings.Cut(c, ":")
		b.Cluster(attr, strings.Split(values, ",")...)
	}
	if t := args["tolerate"]; t != "" {
		t, seconds, hasSeconds := strings.Cut(t, "@")
		kv, effect, _ := strings.Cut(t, ":")
		k, v, _ := strings.Cut(kv, "=")
		toleration := constrainttest.TolerateEffect(k, v, constraint.TaintEffect(effect))
		if hasSeconds {
			secs := int64(atoi(seconds, 0))
			toleration.TolerationSeconds = &secs
		}
		b.Or(toleration)
	}
	if pref := args["prefer"]; pref != "" {
		cond, weight, _ := strings.Cut(pref, "@")
		attr, values, _ := strings.Cut(cond, ":")
		b.Prefer(atoi(weight, 1), constrainttest.Cluster(attr, strings.Split(values, ",")...))
	}
	p.Stateful = args["stateful"] == "true"
	p.Constraint = b.Constraint()
	if len(p.Constraint.IntersectionItems) == 0 {
		p.Constraint = nil
	}
	if errs := p.Validate(h.resolver()); len(errs) > 0 {
		h.t.Fatalf("scenario app invalid: %v", errs)
	}
	return p
}

// restartPolicy is the command's restart policy: OnFailure without delays
// unless it says otherwise.
func restartPolicy(args map[string]string) manifest.RestartPolicy {
	return manifest.RestartPolicy{Policy: manifest.RestartPolicyType(orDefault(args["policy"], "OnFailure")),
		Interval: atoi(args["interval"], 0), Backoff: atoi(args["backoff"], 0), MaxTimes: atoi(args["maxtimes"], 0)}
}

// offers are one offer of every agent named (all without names): 4 cpus
// (or cpus=C), 4096 MB mem, 10000 MB disk and ports 31000-31009 (or
// ports=B-E).
func (h *Harness) offers(agents []string, ports, cpus string) []mesos.Offer {
	cpuCount, err := strconv.ParseFloat(orDefault(cpus, "4"), 64)
	if err != nil {
		h.t.Fatalf("offers cpus=%s: %v", cpus, err)
	}
	portRange := mesos.Value_Range{Begin: 31000, End: 31009}
	if b, e, ok := strings.Cut(ports, "-"); ok {
		portRange.Begin, portRange.End = uint64(atoi(b, 0)), uint64(atoi(e, 0))
	}
	if len(agents) == 0 {
		for i := 1; i <= h.agents; i++ {
			agents = append(agents, fmt.Sprintf("agent-%d", i))
		}
	}
	var out []mesos.Offer
	for _, a := range agents {
		h.offerNo++
		n := strings.TrimPrefix(a, "agent-")
		idc := "idc-a"
		if i, _ := strconv.Atoi(n); i%2 == 0 {
			idc = "idc-b"
		}
		text := func(v string) *mesos.Value_Text { return &mesos.Value_Text{Value: v} }
		out = append(out, mesos.Offer{
			ID: mesos.OfferID{Value: fmt.Sprintf("o-%d", h.offerNo)}, AgentID: mesos.AgentID{Value: a},
			FrameworkID: mesos.FrameworkID{Value: "fw-1"}, Hostname: "host-" + n,
			Attributes: []mesos.Attribute{{Name: "idc", Type: mesos.TEXT, Text: text(idc)}},
			Resources: []mesos.Resource{
				{Name: "cpus", Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: cpuCount}},
				{Name: "mem", Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: 4096}},
				{Name: "disk", Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: 10000}},
				{Name: "ports", Type: mesos.RANGES.Enum(), Ranges: &mesos.Value_Ranges{Range: []mesos.Value_Range{portRange}}},
			},
		})
	}
	return out
}

func (h *Harness) status(app, idx, state string, args map[string]string) []string {
	g := h.groups[app+"/"+idx]
	if g == nil {
		h.t.Fatalf("no instance %s/%s (instances %v)", app, idx, sortedKeys(h.groups))
	}
	if args["successor"] == "true" {
		if g.Move == nil || g.Move.Successor == nil {
			h.t.Fatalf("instance %s/%s has no successor", app, idx)
		}
		g = g.Move.Successor
	}
	var lines []string
	for i, task := range g.Tasks {
		if k, ok := args["task"]; ok && k != strconv.Itoa(i) {
			continue
		}
		lines = append(lines, h.step(scheduler.StatusUpdates{Statuses: []mesos.TaskStatus{h.taskStatus(task.ID, g.AgentID, state, g, args)}})...)
	}
	return lines
}

// tasks describes the stored record's tasks, one line each: the state
// every task of the launch has in the API.
func (h *Harness) tasks(app, idx string) []string {
	g := h.groups[app+"/"+idx]
	if g == nil {
		h.t.Fatalf("no instance %s/%s (instances %v)", app, idx, sortedKeys(h.groups))
	}
	lines := []string{}
	for _, task := range g.Tasks {
		line := fmt.Sprintf("task %s %s", task.ID, task.State)
		if task.Message != "" {
			line += fmt.Sprintf(" %q", task.Message)
		}
		lines = append(lines, line)
	}
	return lines
}

func (h *Harness) taskStatus(taskID, agent, state string, _ *registry.TaskGroup, args map[string]string) mesos.TaskStatus {
	h.uuid++
	st := mesos.TaskStatus{
		TaskID: mesos.TaskID{Value: taskID}, AgentID: &mesos.AgentID{Value: agent},
		State: mesos.TaskState(mesos.TaskState_value[state]).Enum(), UUID: []byte(strconv.Itoa(h.uuid)),
	}
	if r, ok := args["reason"]; ok {
		st.Reason = mesos.TaskStatus_Reason(mesos.TaskStatus_Reason_value[r]).Enum()
	}
	if s, ok := args["source"]; ok {
		st.Source = mesos.TaskStatus_Source(mesos.TaskStatus_Source_value[s]).Enum()
	}
	if v, ok := args["healthy"]; ok {
		b := v == "true"
		st.Healthy = &b
	}
	if v, ok := args["revision"]; ok {
		st.Data = []byte(`{"revision":` + v + `}`)
	}
	if ip, ok := args["ip"]; ok {
		st.Data, _ = json.Marshal(proto.ContainerInfo{Status: "running", NetworkMode: "cni", IPAddress: ip})
	}
	if ip, ok := args["netip"]; ok {
		st.ContainerStatus = &mesos.ContainerStatus{NetworkInfos: []mesos.NetworkInfo{{IPAddresses: []mesos.NetworkInfo_IPAddress{{IPAddress: &ip}}}}}
	}
	return st
}

func atoi(s string, def int) int {
	if n, err := strconv.Atoi(s); err == nil {
		return n
	}
	return def
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// describePending is a launch's pending verdict as a "store tg" line
// shows it: " pending=0/3[hostname UNIQUE 2, cordoned 1]" ("" for none).
func describePending(p *registry.Pending) string {
	if p == nil {
		return ""
	}
	reasons := make([]string, len(p.Reasons))
	for i, r := range p.Reasons {
		reasons[i] = fmt.Sprintf("%s %d", r.Reason, r.Count)
	}
	return fmt.Sprintf(" pending=%d/%d[%s]", p.Fit, p.Agents, strings.Join(reasons, ", "))
}

// describeRemote is an instance's remote verdict, with each check's when it
// has several, and the address probed when the driver said it:
// "true", "true@10.1.0.5:8080", "false[true,false]", "<nil>[true,-]".
func describeRemote(g *registry.TaskGroup) string {
	s := "<nil>"
	if g.RemoteHealthy != nil {
		s = strconv.FormatBool(*g.RemoteHealthy)
	}
	if len(g.RemoteChecks) < 2 {
		if len(g.RemoteChecks) == 1 && g.RemoteChecks[0].Address != "" {
			s += "@" + g.RemoteChecks[0].Address
		}
		return s
	}
	verdicts := make([]string, len(g.RemoteChecks))
	for i, r := range g.RemoteChecks {
		verdicts[i] = map[bool]string{true: strconv.FormatBool(r.Healthy), false: "-"}[r.Name != ""]
		if r.Address != "" {
			verdicts[i] += "@" + r.Address
		}
	}
	return s + "[" + strings.Join(verdicts, ",") + "]"
}
