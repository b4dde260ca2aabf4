package scheduler

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/constraint"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// The operator's agent settings and the engine's mode (seed 002's node,
// constraint, drift and engine APIs): a cordoned or draining agent takes
// no new instance; a draining one is emptied one move at a time; a drift
// moves chosen instances; and while the engine does not act (maintenance,
// stopped) nothing is launched or killed — the inputs are kept and acted
// on when it runs again; the instances wanted meanwhile are added,
// Pending, and they and their applications say why they wait.

// acting reports whether the engine launches and kills.
func (c *Core) acting() bool { return c.engine.Mode == registry.EngineRunning }

// engineChanged takes the engine's new record (mode "" is running); back
// to running, every application is brought to its record. The instances
// waiting to launch and their applications say why they wait while it
// does not act (engineWait).
func (c *Core) engineChanged(e registry.Engine) {
	e.Mode = cmp.Or(e.Mode, registry.EngineRunning)
	if e == c.engine {
		return
	}
	was, wasWait := c.acting(), c.engineWait()
	if e.Mode != c.engine.Mode {
		c.logf("engine mode", "mode", e.Mode)
	}
	c.engine = e
	c.markEngineWait(wasWait)
	if !was && c.acting() {
		for _, a := range c.sortedApps() {
			c.replan(a)
			c.reconcileApp(a)
		}
	}
}

// engineWait is why nothing launches while the engine does not act: its
// mode, since when, who set it and why ("" while it acts).
func (c *Core) engineWait() string {
	if c.acting() {
		return ""
	}
	s := fmt.Sprintf("the engine is in %s since %s", c.engine.Mode, c.engine.Since.UTC().Format(time.RFC3339))
	if c.engine.By != "" {
		s += ", set by " + c.engine.By
	}
	if c.engine.Reason != "" {
		s += ": " + c.engine.Reason
	}
	return s
}

// waitingMessage is what an instance waiting to launch says of the
// engine ("" while it acts).
func (c *Core) waitingMessage() string {
	if w := c.engineWait(); w != "" {
		return "waiting to launch: " + w
	}
	return ""
}

// markEngineWait has the instances waiting to launch say why, in place
// of what they said of the engine before (was, an engineWait) or
// nothing; their applications' statuses are computed again.
func (c *Core) markEngineWait(was string) {
	wasMessage := ""
	if was != "" {
		wasMessage = "waiting to launch: " + was
	}
	message := c.waitingMessage()
	if message == wasMessage {
		return
	}
	for _, inst := range slices.SortedFunc(maps.Keys(c.pendingSet), byInstance) {
		if inst.rec.Message == wasMessage || inst.rec.Message == "" {
			inst.rec.Message = message
			c.persist(inst)
		}
	}
	for _, a := range c.sortedApps() {
		c.touched[a] = true
	}
}

// agentSettingsChanged takes an agent's new settings; settings that say
// nothing remove them. A drain cancelled leaves its queued moves.
func (c *Core) agentSettingsChanged(s *registry.AgentSettings) {
	old := c.settings[s.Hostname]
	if !s.Cordoned && len(s.Taints) == 0 && s.Drain == nil {
		delete(c.settings, s.Hostname)
	} else {
		c.settings[s.Hostname] = s
	}
	if old != nil && old.Drain != nil && s.Drain == nil {
		c.cancelMoves(MoveDrain, func(inst *instance) bool { return inst.rec.Move.FromHost == s.Hostname })
	}
	// A NoExecute taint removed (or now tolerated) cancels the evictions
	// it queued whose successor has not launched (queued, or fitting
	// nowhere); those waiting for their tolerationSeconds are never queued.
	for _, inst := range slices.SortedFunc(maps.Keys(c.moving), byInstance) {
		mv := inst.rec.Move
		if mv == nil || mv.Reason != string(MoveEviction) || mv.FromHost != s.Hostname ||
			inst.successor != nil && inst.successor.phase() != PhasePending {
			continue
		}
		if at, evict := inst.template().Req.Constraint.Eviction(s.Taints); !evict || at.After(c.now) {
			c.endMove(inst, "")
		}
	}
}

func executes(t constraint.Taint) bool { return t.EffectOrDefault() == constraint.NoExecute }

// progressEvictions queues a move for every running instance on an agent
// with a NoExecute taint it does not tolerate, or no longer: once the
// taint's Since plus the toleration's seconds is past (Tick brings that
// moment). Instances bound to their agent (daemonsets, dependency pods)
// stay, as in a drain: they have nowhere else to go.
func (c *Core) progressEvictions() {
	executing := map[string][]constraint.Taint{}
	for host, s := range c.settings {
		if slices.ContainsFunc(s.Taints, executes) {
			executing[host] = s.Taints
		}
	}
	if len(executing) == 0 {
		return
	}
	for _, a := range c.sortedApps() {
		if a.tmpl == nil || a.boundToAgent() {
			continue
		}
		for _, inst := range a.sortedInstances() {
			taints := executing[inst.rec.Host]
			if taints == nil || inst.rec.Move != nil || inst.phase() != PhaseRunning {
				continue
			}
			if at, evict := inst.template().Req.Constraint.Eviction(taints); evict && !at.After(c.now) {
				c.queueMove(inst, MoveEviction, "")
			}
		}
	}
}

// cancelMoves ends the moves for reason that have not started and whose
// instance from selects.
func (c *Core) cancelMoves(reason MoveReason, from func(*instance) bool) {
	for _, inst := range slices.SortedFunc(maps.Keys(c.moving), byInstance) {
		if mv := inst.rec.Move; mv != nil && mv.Reason == string(reason) && inst.successor == nil && from(inst) {
			c.endMove(inst, "")
		}
	}
}

// progressDrains queues a move for every instance on a draining agent
// (stateful ones only when the drain is forced) and on an agent the
// master asks back (stateful ones stay); progressMoves runs them one at
// a time.
func (c *Core) progressDrains() {
	drains := map[string]*registry.DrainRequest{}
	for host, s := range c.settings {
		if s.Drain != nil {
			drains[host] = s.Drain
		}
	}
	asked := map[string]bool{}
	for id, w := range c.maintenance {
		if w.inverseOffer != "" {
			asked[id] = true
		}
	}
	if len(drains) == 0 && len(asked) == 0 {
		return
	}
	for _, a := range c.sortedApps() {
		if a.tmpl == nil || a.boundToAgent() {
			continue
		}
		for _, inst := range a.sortedInstances() {
			if inst.rec.Move != nil || inst.phase() != PhaseRunning {
				continue
			}
			if d := drains[inst.rec.Host]; d != nil && (!a.tmpl.Stateful || d.Force) {
				c.queueMove(inst, MoveDrain, "")
			} else if asked[inst.rec.AgentID] && !a.tmpl.Stateful {
				c.queueMove(inst, MoveMaintenance, "")
			}
		}
	}
}

// Drift asks to move instances off an agent (seed 002's drift): every
// instance on FromHost, or those of one application, or one instance, to
// ToHost or anywhere. Stateful applications stay unless Force.
type Drift struct {
	FromHost, ToHost string
	Namespace, App   string // "" with Index -1: every application
	Index            int    // -1: every instance
	Force            bool
}

func (Drift) input() {}

// drift queues the moves a Drift asks for.
func (c *Core) drift(d Drift) {
	apps := c.sortedApps()
	if d.App != "" {
		apps = slices.DeleteFunc(apps, func(a *app) bool { return a.rec.Namespace != d.Namespace || a.rec.Name != d.App })
	}
	queued, kept := 0, 0
	for _, a := range apps {
		for _, inst := range a.sortedInstances() {
			if inst.rec.Host != d.FromHost || d.Index >= 0 && inst.rec.Index != d.Index || a.boundToAgent() {
				continue
			}
			if a.tmpl != nil && a.tmpl.Stateful && !d.Force {
				kept++
				continue
			}
			if c.queueMove(inst, MoveDrift, d.ToHost) {
				queued++
			}
		}
	}
	c.logf("drift", "from", d.FromHost, "to", d.ToHost, "app", cmp.Or(d.Namespace+"/"+d.App, "*"), "queued", queued, "statefulKept", kept)
}

// AgentSettingsChanged: the operator changed an agent's settings (empty
// settings: removed).
type AgentSettingsChanged struct{ Settings *registry.AgentSettings }

// EngineChanged: the engine's mode was set (its record: who set it, since when, why).
type EngineChanged struct{ Engine registry.Engine }

// EngineConfigChanged: the engine's configuration, the flags' with the
// values set at run time over them (registry.EngineSettings.Over).
type EngineConfigChanged struct{ Config registry.EngineConfig }

func (AgentSettingsChanged) input() {}
func (EngineChanged) input()        {}
func (EngineConfigChanged) input()  {}

// engineConfigChanged takes the engine's knobs that the core holds; the
// driver applies its own (AgentSyncInterval). Each is read where it is
// used, so the next reconciliation, depends collection, placement and
// restart count go by the new values.
func (c *Core) engineConfigChanged(e registry.EngineConfig) {
	c.cfg.ReconcileInterval = time.Duration(e.ReconcileInterval)
	c.cfg.DependsGCDelay = time.Duration(e.DependsGCDelay)
	c.cfg.MaxLaunching = e.MaxLaunching
	c.cfg.Flapping = FlappingRule{Restarts: e.FlappingRestarts, Window: time.Duration(e.FlappingWindow)}
	c.cfg.defaults()
	c.logf("engine config", "reconcileInterval", c.cfg.ReconcileInterval, "dependsGCDelay", c.cfg.DependsGCDelay,
		"maxLaunching", c.cfg.MaxLaunching, "flapping", fmt.Sprintf("%d in %s", c.cfg.Flapping.Restarts, c.cfg.Flapping.Window))
}
