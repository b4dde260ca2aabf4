package schedulertest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/bcs-mesos/bcs-mesos/pkg/constraint"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/scheduler"
)

// runAgents runs the commands of agent maintenance and the engine:
//
//	cordon HOST | uncordon HOST
//	taint HOST KEY=VALUE[:EFFECT] | untaint HOST   (a NoExecute taint is set now)
//	drain HOST [force=true] | undrain HOST
//	drift from=HOST [to=HOST] [app=NS/NAME] [index=N] [force=true]
//	engine running|maintenance|stopped [by=USER reason=R]   set the engine's mode (since now
//	                    when it changes)
//	engineconfig NAME=VALUE …   set the engine's configuration at run time (a JSON
//	                    merge patch of registry.EngineConfig: 30s, 5, null)
//	inverse AGENT [unavailable=START:DURATION]   an inverse offer io-N for the agent
//	                    (seconds from the script's start; default 0:3600)
//	rescindinverse ID
func (h *Harness) runAgents(f []string, args map[string]string) (lines []string, ok bool) {
	change := func(host string, edit func(*registry.AgentSettings)) []string {
		s := h.settings[host]
		if s == nil {
			s = &registry.AgentSettings{Hostname: host}
		}
		cp := *s
		edit(&cp)
		h.settings[host] = &cp
		out := []string{fmt.Sprintf("(settings %s: cordoned=%v taints=%v drain=%v)", host, cp.Cordoned, cp.Taints, cp.Drain != nil)}
		in := cp
		return append(out, h.step(scheduler.AgentSettingsChanged{Settings: &in})...)
	}
	switch f[0] {
	case "cordon", "uncordon":
		return change(f[1], func(s *registry.AgentSettings) { s.Cordoned = f[0] == "cordon" }), true
	case "taint":
		kv, effect, _ := strings.Cut(f[2], ":")
		k, v, _ := strings.Cut(kv, "=")
		taint := constraint.Taint{Key: k, Value: v, Effect: constraint.TaintEffect(effect)}
		if taint.Effect == constraint.NoExecute {
			taint.Since = h.now
		}
		return change(f[1], func(s *registry.AgentSettings) { s.Taints = append(s.Taints, taint) }), true
	case "untaint":
		return change(f[1], func(s *registry.AgentSettings) { s.Taints = nil }), true
	case "drain":
		return change(f[1], func(s *registry.AgentSettings) {
			s.Drain = &registry.DrainRequest{Since: h.now, Force: args["force"] == "true"}
		}), true
	case "undrain":
		return change(f[1], func(s *registry.AgentSettings) { s.Drain = nil }), true
	case "drift":
		d := scheduler.Drift{FromHost: args["from"], ToHost: args["to"], Index: -1, Force: args["force"] == "true"}
		if app := args["app"]; app != "" {
			d.Namespace, d.App, _ = strings.Cut(app, "/")
		}
		if i, err := strconv.Atoi(args["index"]); err == nil {
			d.Index = i
		}
		return h.step(d), true
	case "engine":
		if h.engine.Mode != registry.EngineMode(f[1]) {
			h.engine.Since = h.now
		}
		h.engine.Mode, h.engine.By, h.engine.Reason = registry.EngineMode(f[1]), args["by"], args["reason"]
		return h.step(scheduler.EngineChanged{Engine: h.engine}), true
	case "engineconfig":
		patch := map[string]json.RawMessage{}
		for name, v := range args {
			if !json.Valid([]byte(v)) {
				v = strconv.Quote(v)
			}
			patch[name] = json.RawMessage(v)
		}
		if err := h.engineSettings.Patch(patch); err != nil {
			return []string{"error: " + err.Error()}, true
		}
		return h.step(h.engineConfig()), true
	case "inverse":
		h.offerNo++
		u := h.unavailability(cmp.Or(args["unavailable"], "0:3600"))
		return h.step(scheduler.InverseOffersIn{InverseOffers: []mesos.InverseOffer{{
			OfferID: mesos.OfferID{Value: fmt.Sprintf("io-%d", h.offerNo)}, FrameworkID: mesos.FrameworkID{Value: "fw-1"},
			AgentID: &mesos.AgentID{Value: f[1]}, Unavailability: *u,
		}}}), true
	case "rescindinverse":
		return h.step(scheduler.RescindInverseOffer{OfferID: f[1]}), true
	}
	return nil, false
}

// describeMove is how a stored instance's move shows in a "store tg" line.
func describeMove(mv *registry.InstanceMove) string {
	s := fmt.Sprintf(" move=%s:%s->%s", mv.Reason, mv.FromHost, mv.ToHost)
	if g := mv.Successor; g != nil {
		s += fmt.Sprintf(" successor=[%s", g.Phase)
		if g.State != "" {
			s += " " + g.State
		}
		if g.AgentID != "" {
			s += " on " + g.AgentID
		}
		s += fmt.Sprintf(" launches=%d%s]", g.Launches, describePending(g.Pending))
	}
	return s
}

// unavailability parses START:DURATION, seconds from the script's start
// ("" for none; a DURATION of 0 for a window without end).
func (h *Harness) unavailability(spec string) *mesos.Unavailability {
	if spec == "" {
		return nil
	}
	start, duration, _ := strings.Cut(spec, ":")
	u := &mesos.Unavailability{Start: mesos.TimeInfo{Nanoseconds: h.start.Add(time.Duration(atoi(start, 0)) * time.Second).UnixNano()}}
	if d := atoi(duration, 0); d > 0 {
		u.Duration = &mesos.DurationInfo{Nanoseconds: int64(d) * int64(time.Second)}
	}
	return u
}
