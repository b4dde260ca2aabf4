package schedulertest

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/hook"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/rollout"
	"github.com/bcs-mesos/bcs-mesos/pkg/scheduler"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// runRollout runs the rollout commands (deploy, pause, resume, promote,
// abort, rollback, restartapp, result); ok is false for any other.
func (h *Harness) runRollout(f []string, args map[string]string) (lines []string, ok bool) {
	key := ""
	if len(f) > 1 {
		key = f[1]
	}
	if f[0] == "plan" && len(f) < 3 {
		h.t.Fatalf("plan: want plan app|deploy|daemonset NS/NAME [options]")
	}
	switch f[0] {
	case "deploy":
		return h.deploy(key, args), true
	case "plan":
		return h.plan(f[1], f[2], args), true
	case "pause", "resume":
		return h.control(key, func(a *registry.App) { a.Paused = f[0] == "pause" }), true
	case "stopapp", "startapp":
		return h.control(key, func(a *registry.App) { a.Stopped = f[0] == "stopapp" }), true
	case "promote":
		ro := h.rollouts[key]
		if ro == nil || ro.State.Wait == nil {
			h.t.Fatalf("promote %s: the rollout waits for nothing", key)
		}
		return h.control(key, func(a *registry.App) { a.Promote = &registry.Promote{Version: a.Version, Seq: ro.State.Wait.Seq} }), true
	case "abort":
		return h.control(key, func(a *registry.App) { a.AbortVersion = a.Version }), true
	case "rollback":
		to, _ := strconv.Atoi(f[2])
		h.apps[key].RestartGeneration = h.generations[key][to-1]
		return h.newVersion(key, h.history[key][to-1], rollout.CauseRollback, uint64(to)), true
	case "restartapp":
		h.apps[key].RestartGeneration++
		return h.newVersion(key, h.apps[key].Spec, rollout.CauseRestart, 0), true
	case "hookrun":
		return h.hookRunEnds(f[1], hook.Phase(f[2]), strings.Join(f[3:], " ")), true
	case "result":
		g := h.groups[key+"/"+f[2]]
		res := proto.MessageResult{Type: proto.MessageType(f[3]), TaskID: g.Tasks[0].ID, OK: f[4] == "ok"}
		if !res.OK {
			res.Error = strings.Join(f[4:], " ")
		}
		data, _ := res.Encode()
		return h.step(scheduler.ExecutorMessages{Messages: []scheduler.ExecutorMessage{{AgentID: g.AgentID, ExecutorID: g.ID, Data: data}}}), true
	}
	return nil, false
}

// deploy creates a deployment of the fixture process (version 1) or
// stores the next version of it, built from the command's options:
//
//	instances=N type=RollingUpdate|InplaceUpdate|HotPatchUpdate
//	maxUnavailable=X maxSurge=X (a count or N%) partition=N inplace=S (grace)
//	steps=partition:3,pause,pause:60 duration=S (upgradeDuration)
//	order=DeleteFirst manual=true paused=true allocatedTimeout=S
//	build=B (changes startCmd) cpu=C ports=2 checks=http remote=tcp
func (h *Harness) deploy(key string, args map[string]string) []string {
	d := h.deployment(key, args)
	spec, _ := json.Marshal(d)
	if a := h.apps[key]; a != nil {
		a.Removed, _ = registry.Rescale(a.Instances, a.Removed, d.Spec.Instance, nil) // as UpdateApp keeps holes
		a.Instances = d.Spec.Instance
		h.apps[key].Paused = d.Spec.UpdateStrategy.Paused
		return h.newVersion(key, spec, rollout.CauseUpdate, 0)
	}
	a := &registry.App{Namespace: d.Metadata.Namespace, Name: d.Metadata.Name, Kind: manifest.KindDeployment, Version: 1,
		Instances: d.Spec.Instance, Spec: spec, State: registry.AppDeploying, Cause: rollout.CauseUpdate, Paused: d.Spec.UpdateStrategy.Paused}
	h.apps[key] = a
	h.history[key], h.generations[key] = [][]byte{spec}, []int{0}
	cp := *a
	return h.step(scheduler.AppChanged{App: &cp})
}

// deployment is the fixture process as a deployment, built from deploy's
// options.
func (h *Harness) deployment(key string, args map[string]string) *manifest.Deployment {
	p := h.process(key, args)
	d := &manifest.Deployment{WorkloadHeader: manifest.WorkloadHeader{APIVersion: "v4", KindName: "deployment", Metadata: p.Metadata, RestartPolicy: p.RestartPolicy,
		KillPolicy: p.KillPolicy, Constraint: p.Constraint}}
	d.Spec.Instance = p.Spec.Instance
	d.Spec.Template.Spec.Processes = p.Spec.Template.Spec.Processes
	d.Spec.Template.Spec.Depends = p.Spec.Template.Spec.Depends
	us := &manifest.UpdateStrategy{Type: manifest.UpdateType(orDefault(args["type"], string(manifest.UpdateRolling))),
		Partition: atoi(args["partition"], 0), UpgradeDuration: atoi(args["duration"], 0),
		RollingOrder: args["order"], RollingManually: args["manual"] == "true", Paused: args["paused"] == "true",
		AllocatedTimeoutSeconds: atoi(args["allocatedTimeout"], 0)}
	us.MaxUnavailable, us.MaxSurge = intOrPercent(args["maxUnavailable"]), intOrPercent(args["maxSurge"])
	if g, ok := args["inplace"]; ok {
		us.InPlaceUpdateStrategy = &manifest.InPlaceUpdateStrategy{GracePeriodSeconds: atoi(g, 0)}
	}
	if t := args["predelete"]; t != "" {
		d.Spec.PreDeleteUpdateStrategy = &manifest.PreDeleteUpdateStrategy{Hook: &manifest.HookStep{TemplateName: t},
			TimeoutSeconds: atoi(args["predeleteTimeout"], 0)}
	}
	if steps := args["steps"]; steps != "" {
		us.Canary = &manifest.CanaryStrategy{}
		for _, s := range strings.Split(steps, ",") {
			kind, n, _ := strings.Cut(s, ":")
			v := atoi(n, 0)
			switch kind {
			case "partition":
				us.Canary.Steps = append(us.Canary.Steps, manifest.CanaryStep{Partition: &v})
			case "hook":
				us.Canary.Steps = append(us.Canary.Steps, manifest.CanaryStep{Hook: &manifest.HookStep{TemplateName: n,
					Args: []manifest.HookArg{{Name: "service-name", Value: "game-svc"}}}})
			case "pause":
				ps := &manifest.PauseStep{}
				if n != "" {
					ps.Duration = &v
				}
				us.Canary.Steps = append(us.Canary.Steps, manifest.CanaryStep{Pause: ps})
			}
		}
	}
	d.Spec.UpdateStrategy = us
	if errs := d.Validate(h.resolver()); len(errs) > 0 {
		h.t.Fatalf("scenario deployment invalid: %v", errs)
	}
	return d
}

// plan asks the core what storing a manifest would do (Core.Plan), built
// as "app" (plan app NS/NAME ...) or "deploy" (plan deploy NS/NAME ...)
// builds it, and describes the answer; nothing is stored or stepped.
func (h *Harness) plan(kind, key string, args map[string]string) []string {
	var obj manifest.Object
	switch kind {
	case "app":
		obj = h.process(key, args)
	case "deploy":
		obj = h.deployment(key, args)
	default:
		h.t.Fatalf("plan %s: want app, deploy or daemonset", kind)
	}
	return h.describePlan(obj)
}

// describePlan describes what storing obj would do (Core.Plan).
func (h *Harness) describePlan(obj manifest.Object) []string {
	p, err := h.core.Plan(h.now, obj)
	if err != nil {
		return []string{"plan error: " + err.Error()}
	}
	head := fmt.Sprintf("plan %s %s/%s", p.Action, p.Namespace, p.Name)
	if p.CurrentVersion != 0 {
		head += fmt.Sprintf(" current=%d", p.CurrentVersion)
	}
	if ro := p.Rollout; ro != nil {
		head += fmt.Sprintf(" rollout=%s %q", ro.Phase, ro.Message)
	}
	lines := []string{head}
	for _, inst := range p.Instances {
		line := fmt.Sprintf("  %d %s", inst.Index, inst.Action)
		if inst.UpdateMode != "" {
			line += " " + string(inst.UpdateMode)
		}
		if inst.Agent != "" {
			line += fmt.Sprintf(" %s(%s)", inst.Agent, inst.Hostname)
		}
		line += fmt.Sprintf(" rev=%d", inst.Revision)
		if inst.Surge {
			line += " surge"
		}
		line += describePending(inst.Pending)
		if inst.Message != "" {
			line += fmt.Sprintf(" %q", inst.Message)
		}
		lines = append(lines, line)
	}
	s := p.Summary
	lines = append(lines, fmt.Sprintf("  summary place=%d keep=%d update=%d recreate=%d kill=%d pending=%d",
		s.Place, s.Keep, s.Update, s.Recreate, s.Kill, s.Pending))
	for _, w := range p.Warnings {
		lines = append(lines, "  warning "+w)
	}
	return lines
}

func intOrPercent(s string) *manifest.IntOrPercent {
	if s == "" {
		return nil
	}
	if p, ok := strings.CutSuffix(s, "%"); ok {
		return manifest.Percent(atoi(p, 0))
	}
	return manifest.Count(atoi(s, 0))
}

// storeHookRun keeps a run the core created (one that exists stays, as
// in the registry) and describes it.
func (h *Harness) storeHookRun(run *registry.HookRun) string {
	key := run.Namespace + "/" + run.Name
	if h.hookRuns[key] == nil {
		cp := *run
		h.hookRuns[key] = &cp
	}
	o := run.Spec.Owner
	var args []string
	for _, a := range run.Spec.Args {
		args = append(args, a.Name+"="+a.Value)
	}
	line := fmt.Sprintf("store hookrun %s template=%s owner=%s/%s rev=%d", key, run.Spec.TemplateName, o.Kind, o.App, o.Revision)
	if o.Kind == hook.OwnerCanaryStep {
		line += fmt.Sprintf(" step=%d seq=%d", o.Step, o.Seq)
	} else {
		line += fmt.Sprintf(" instance=%d", o.Instance)
	}
	return line + " args=" + strings.Join(args, ",")
}

// hookRunEnds ends a stored run with phase, as the hook runner would.
func (h *Harness) hookRunEnds(key string, phase hook.Phase, message string) []string {
	run := h.hookRuns[key]
	if run == nil {
		h.t.Fatalf("no hook run %s (runs %v)", key, sortedKeys(h.hookRuns))
	}
	run.Status.Phase, run.Status.Message = phase, message
	cp := *run
	return h.step(scheduler.HookRunChanged{Run: &cp})
}

// newVersion stores spec as the next version of an application, as the
// registry does for an update, a restart or a rollback.
func (h *Harness) newVersion(key string, spec []byte, cause rollout.Cause, rolledBackTo uint64) []string {
	a := h.apps[key]
	a.Version++
	a.Spec, a.Cause, a.RolledBackTo = spec, cause, rolledBackTo
	h.history[key] = append(h.history[key], spec)
	h.generations[key] = append(h.generations[key], a.RestartGeneration)
	cp := *a
	return h.step(scheduler.AppChanged{App: &cp})
}

// control changes an application's rollout controls.
func (h *Harness) control(key string, change func(*registry.App)) []string {
	a := h.apps[key]
	change(a)
	cp := *a
	return h.step(scheduler.AppChanged{App: &cp})
}

// storeRollout keeps a rollout and describes it when what is shown of it
// changed; the rollouts of plain applications (the older scripts) are
// kept and not shown.
func (h *Harness) storeRollout(ro *registry.Rollout) string {
	key := ro.Namespace + "/" + ro.Name
	cp := *ro
	h.rollouts[key] = &cp
	if !showsRevisions(h.apps[key]) {
		return ""
	}
	st, s := ro.State, ro.Status
	line := fmt.Sprintf("store rollout %s %s stable=%d update=%d updated=%d/%d ready=%d total=%d", key, s.Phase,
		st.StableVersion, st.UpdateVersion, s.Updated, s.Replicas, s.Ready, s.Total)
	if s.Steps > 0 {
		line += fmt.Sprintf(" step=%d/%d", s.CurrentStep, s.Steps)
	}
	if w := st.Wait; w != nil {
		line += fmt.Sprintf(" wait=%s#%d", w.Kind, w.Seq)
		if !w.Until.IsZero() {
			line += " until=+" + w.Until.Sub(h.now).String()
		}
	}
	for _, c := range s.Conditions {
		if c.Type == "Progressing" && c.Status == "False" && s.Phase == rollout.PhaseProgressing {
			line += " stalled=" + c.Reason // it will not progress by itself
		}
	}
	line += fmt.Sprintf(" %q", s.Message)
	if h.shown[key] == line {
		return ""
	}
	h.shown[key] = line
	return line
}

// describeMessage shows a framework message: an update in short, any
// other as its JSON.
func describeMessage(executorID string, data []byte) string {
	msg, err := proto.DecodeMessage(data)
	if err == nil && msg.Type == proto.MessageUsageInterval {
		return fmt.Sprintf("call MESSAGE %s usage-interval %gs task %s", executorID, msg.UsageIntervalSeconds, msg.TaskID)
	}
	if err != nil || msg.Type != proto.MessageUpdate || msg.Update == nil {
		return fmt.Sprintf("call MESSAGE %s %s", executorID, data)
	}
	u := msg.Update
	s := fmt.Sprintf("call MESSAGE %s update revision=%d mode=%s tasks=%d", executorID, u.Revision, u.Mode, len(u.Tasks))
	if u.GracePeriodSeconds > 0 {
		s += " grace=" + (time.Duration(u.GracePeriodSeconds * float64(time.Second))).String()
	}
	if u.Restart {
		s += " restart"
	}
	return s
}
