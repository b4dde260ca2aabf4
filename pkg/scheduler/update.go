package scheduler

import (
	"fmt"
	"slices"
	"strings"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/bcs-mesos/bcs-mesos/pkg/launch"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/offer"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/rollout"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// move sends an instance to a rollout revision: one that runs nothing
// launches it next; one running is replaced, updated in place or hot
// patched, as the strategy says and the instance allows.
func (c *Core) move(inst *instance, to rollout.Rev) {
	a := inst.app
	version, hash := a.revision(to)
	switch inst.phase() {
	case PhasePending, PhaseFailed, PhaseFinished:
		if inst.phase() != PhasePending {
			c.setPhase(inst, PhasePending)
			inst.rec.Restarts, inst.rec.NotBefore = 0, c.now
		}
		if inst.rec.WaitingFor != "" {
			inst.rec.WaitingFor, inst.rec.NotBefore = "", c.now
		}
		inst.rec.Version, inst.rec.Template = version, hash
		inst.rec.Message = joinMessage(inst.rec.Message, fmt.Sprintf("launches revision %d", version))
		c.persist(inst)
	case PhaseKilling, PhaseStopped:
		// Going down for another reason, or stopped: it comes back (is
		// started) as the target.
		inst.rec.Version, inst.rec.Template = version, hash
		c.persist(inst)
	case PhaseLaunched:
		c.replace(inst, version, hash, fmt.Sprintf("replaced by revision %d while starting", version))
	case PhaseRunning:
		c.updateRunning(inst, version, hash)
	}
}

// modeNoun names an update mode in messages.
var modeNoun = map[registry.UpdateMode]string{
	registry.UpdateReplace: "replacement", registry.UpdateInPlace: "in-place update", registry.UpdateHotPatch: "hot patch",
}

// joinMessage adds what happens next to what happened.
func joinMessage(what, next string) string {
	if what == "" {
		return next
	}
	return what + "; " + next
}

// updateRunning updates a running instance by the strategy.
func (c *Core) updateRunning(inst *instance, version uint64, hash string) {
	a := inst.app
	mode, blocker := updateMode(a.strategy, inst, a.template(hash))
	if mode == registry.UpdateReplace {
		c.replace(inst, version, hash, replaceReason(version, blocker))
		return
	}
	inst.rec.Update = &registry.InstanceUpdate{Version: version, Template: hash, Mode: mode, Since: c.now,
		Message: fmt.Sprintf("%s to revision %d", modeNoun[mode], version)}
	if blocker != "" {
		inst.rec.Update.Error = fmt.Sprintf("cannot hot-patch: %s; nothing was changed (abort, or change the spec)", blocker)
		c.logf("hot patch blocked", "app", a.key(), "instance", inst.rec.Index, "reason", blocker)
		c.persist(inst)
		return
	}
	if mode == registry.UpdateInPlace && c.preDeleteHeld(inst, preDeleteInPlace) {
		c.persist(inst)
		return // sent once the hook passed
	}
	c.sendUpdate(inst)
	c.persist(inst)
}

// updateMode is how a running instance takes template t by strategy s:
// replaced (RollingUpdate), updated in place or hot patched. blocker says
// why it cannot be updated in its task group: an in-place update is then
// replaced — seed 004 keeps the instance, but what Mesos cannot give in
// place (more resources, other ports) takes a new launch — and a hot
// patch cannot go at all.
func updateMode(s rollout.Strategy, inst *instance, t *launch.Template) (mode registry.UpdateMode, blocker string) {
	switch s.Type {
	case manifest.UpdateRolling:
		return registry.UpdateReplace, ""
	case manifest.UpdateHotPatch:
		return registry.UpdateHotPatch, inPlaceBlocker(inst, t)
	}
	if blocker := inPlaceBlocker(inst, t); blocker != "" {
		return registry.UpdateReplace, blocker
	}
	return registry.UpdateInPlace, ""
}

// replaceReason says why an instance is replaced to revision version:
// a rolling update, or an in-place update it could not take.
func replaceReason(version uint64, blocker string) string {
	if blocker != "" {
		return fmt.Sprintf("in-place update to revision %d not possible (%s): replaced instead", version, blocker)
	}
	return fmt.Sprintf("rolling update to revision %d", version)
}

// replace kills an instance to launch it again as version; a running
// one once the launch budget has room for its launch (one still
// starting holds its room already).
func (c *Core) replace(inst *instance, version uint64, hash, why string) {
	inst.rec.Update = &registry.InstanceUpdate{Version: version, Template: hash, Mode: registry.UpdateReplace, Since: c.now, Message: why}
	if inst.phase() == PhaseRunning && c.budgetRoom() <= 0 {
		c.holdUpdate(inst)
		inst.rec.Update.Message += heldReplacement
		c.persist(inst)
		return
	}
	c.sendReplace(inst)
}

// heldReplacement ends the message of a replacement the budget holds.
const heldReplacement = "; waits for the launch budget"

// sendReplace kills an instance to be replaced; it counts in the launch
// budget from then until its launch (replacing), unless a pre-delete hook
// holds the kill.
func (c *Core) sendReplace(inst *instance) {
	delete(c.updatesHeld, inst)
	u := inst.rec.Update
	u.Message = strings.TrimSuffix(u.Message, heldReplacement)
	c.logf("replacing instance", "app", inst.app.key(), "instance", inst.rec.Index, "task_group", inst.rec.ID, "revision", u.Version, "why", u.Message)
	c.kill(inst, KillUpdate)
	if inst.phase() == PhaseKilling {
		c.replacing[inst] = true
	}
}

// inPlaceBlocker says why an instance cannot take template t in its task
// group; "" when it can: same tasks, same network, the same port names
// and fixed ports, and no task growing past what its launch took.
func inPlaceBlocker(inst *instance, t *launch.Template) string {
	if t == nil {
		return "the revision's template is unknown"
	}
	if n := len(inst.rec.Tasks); n != t.Tasks() {
		return fmt.Sprintf("the task group has %d tasks, the revision %d", n, t.Tasks())
	}
	if inst.rec.Network != "" && inst.rec.Network != t.Network() {
		return fmt.Sprintf("the network changes from %s to %s", inst.rec.Network, t.Network())
	}
	if len(t.Req.Ports) != len(inst.rec.Ports) {
		return fmt.Sprintf("the ports change from %d to %d", len(inst.rec.Ports), len(t.Req.Ports))
	}
	for _, p := range t.Req.Ports {
		got, ok := inst.rec.Ports.Get(p.Name)
		switch {
		case !ok:
			return fmt.Sprintf("port %q is new", p.Name)
		case p.HostPort != 0 && p.HostPort != got:
			return fmt.Sprintf("port %q moves from %d to %d", p.Name, got, p.HostPort)
		}
	}
	for i, task := range inst.rec.Tasks {
		cpus, mem := t.TaskResources(i)
		if task.CPUs > 0 && cpus > task.CPUs+1e-9 || task.MemMB > 0 && mem > task.MemMB+1e-9 {
			return fmt.Sprintf("task %s grows from %g cpus %g MB to %g cpus %g MB, more than its launch took from Mesos",
				task.Name, task.CPUs, task.MemMB, cpus, mem)
		}
	}
	return ""
}

// sendUpdate sends the executor the instance's update (proto.GroupUpdate):
// every task's spec of the new revision, for the same task group, agent
// and host ports.
func (c *Core) sendUpdate(inst *instance) {
	a, u := inst.app, inst.rec.Update
	if !c.updatesSent[inst] && c.budgetRoom() <= 0 {
		// Its answer, a status update of every task, would come faster
		// than it is stored: held until the budget has room.
		c.holdUpdate(inst)
		u.Message = fmt.Sprintf("%s to revision %d waits for the launch budget", modeNoun[u.Mode], u.Version)
		return
	}
	delete(c.updatesHeld, inst)
	c.updatesSent[inst] = true
	u.Message = fmt.Sprintf("%s to revision %d", modeNoun[u.Mode], u.Version)
	u.Sent = c.now
	tmpl := a.template(u.Template)
	if tmpl == nil {
		u.Error = fmt.Sprintf("revision %d is neither the stable nor the update revision any more", u.Version)
		return
	}
	assigned := make([]offer.AssignedPort, len(tmpl.Req.Ports))
	for i, p := range tmpl.Req.Ports {
		port, _ := inst.rec.Ports.Get(p.Name)
		assigned[i] = offer.AssignedPort{Name: p.Name, Port: port}
	}
	id, err := c.identity(a.rec.Namespace)
	var specs []*proto.TaskSpec
	if err == nil {
		specs, err = tmpl.Specs(launch.Instance{
			Index: inst.rec.Index, TaskGroupID: inst.rec.ID, HostIP: inst.rec.HostIP, Ports: assigned,
			WorkBaseDir: c.baseDir(c.cfg.WorkBaseDir, inst.rec.Host), RunBaseDir: c.baseDir(c.cfg.RunBaseDir, inst.rec.Host),
			SchedulerURL: c.cfg.SchedulerURL, Identity: id, Egress: c.egress(a.rec.Namespace),
		}, c.refs)
	}
	if err != nil {
		u.Message = fmt.Sprintf("%s to revision %d waits: %v", modeNoun[u.Mode], u.Version, err)
		return
	}
	c.reportUsage(a, specs)
	upd := &proto.GroupUpdate{
		Revision: u.Version, Mode: proto.UpdateInPlace, GracePeriodSeconds: a.strategy.InPlaceGrace.Seconds(),
		Restart:      tmpl.RestartGeneration != inst.rec.RestartGeneration,
		ReloadSignal: a.strategy.ReloadSignal, ReloadCommand: a.strategy.ReloadCommand,
	}
	if u.Mode == registry.UpdateHotPatch {
		upd.Mode = proto.UpdateHotPatch
	}
	for i, spec := range specs {
		upd.Tasks = append(upd.Tasks, proto.TaskUpdate{TaskID: inst.rec.Tasks[i].ID, Spec: spec})
	}
	msg := &proto.Message{ID: fmt.Sprintf("update-%d-%d", u.Version, c.now.UnixNano()), Type: proto.MessageUpdate,
		TaskID: inst.rec.Tasks[0].ID, Update: upd}
	data, err := msg.Encode()
	if err != nil {
		u.Error = err.Error()
		return
	}
	c.call(calls.Message(inst.rec.AgentID, inst.rec.ID, data))
	c.logf("update sent", "app", a.key(), "instance", inst.rec.Index, "task_group", inst.rec.ID, "mode", u.Mode, "revision", u.Version)
}

// updateApplied finishes an in-place update or hot patch once every task
// still running reports the new revision.
func (c *Core) updateApplied(inst *instance) {
	u := inst.rec.Update
	if u == nil || u.Mode == registry.UpdateReplace || inst.phase() != PhaseRunning {
		return
	}
	// A finished task (seed 001: its container exited 0) stays at the
	// revision it ran; the executor updates the running ones.
	if slices.ContainsFunc(inst.rec.Tasks, func(t registry.TaskRecord) bool {
		return t.Revision != u.Version && taskState(t.State) != mesos.TASK_FINISHED
	}) {
		return
	}
	inst.rec.Version, inst.rec.Template, inst.rec.Update = inst.app.versionOf(u.Template, u.Version), u.Template, nil
	delete(c.updatesSent, inst) // room for the next at once
	c.endPreDelete(inst)
	if t := inst.app.template(u.Template); t != nil {
		inst.rec.RestartGeneration = t.RestartGeneration
	}
	verb := map[registry.UpdateMode]string{registry.UpdateInPlace: "updated in place", registry.UpdateHotPatch: "hot-patched"}[u.Mode]
	inst.rec.Message = fmt.Sprintf("%s to revision %d", verb, u.Version)
	c.logf(inst.rec.Message, "app", inst.app.key(), "instance", inst.rec.Index, "task_group", inst.rec.ID)
}

// updateResult takes the executor's answer to an update: a failed
// in-place update replaces the instance, a refused hot patch waits with
// the reason shown.
func (c *Core) updateResult(inst *instance, res *proto.MessageResult) {
	u := inst.rec.Update
	if res.OK || u == nil || u.Mode == registry.UpdateReplace || inst.phase() != PhaseRunning {
		return
	}
	if u.Mode == registry.UpdateInPlace {
		c.replace(inst, u.Version, u.Template, fmt.Sprintf("in-place update to revision %d failed (%s): replaced instead", u.Version, res.Error))
		return
	}
	u.Error = "hot patch refused: " + res.Error
	c.logf("hot patch refused", "app", inst.app.key(), "instance", inst.rec.Index, "err", res.Error)
	c.persist(inst)
}

// dropStaleUpdates gives up updates that could not go anywhere and whose
// revision is no longer the instance's target (an abort, a newer
// version): the rollout plans the instance again.
func (c *Core) dropStaleUpdates(a *app) (dropped int) {
	stuck := false
	for _, inst := range a.sortedInstances() {
		stuck = stuck || inst.rec.Update != nil && inst.rec.Update.Error != ""
	}
	if !stuck {
		return 0
	}
	for _, inst := range a.sortedInstances() {
		u := inst.rec.Update
		if u == nil || u.Error == "" {
			continue
		}
		if _, hash := a.revision(a.target(inst.rec.Index)); hash != u.Template {
			inst.rec.Update = nil
			inst.rec.Message = fmt.Sprintf("%s to revision %d dropped: the target changed", modeNoun[u.Mode], u.Version)
			c.persist(inst)
			dropped++
		}
	}
	return dropped
}

// resendUpdates sends again the updates no answer came for: framework
// messages may be lost, and the executor applies each revision once.
func (c *Core) resendUpdates() {
	for _, a := range c.sortedApps() {
		if a.ro.Status.Phase == rollout.PhaseCompleted {
			continue // settled: nothing in flight
		}
		wait := c.cfg.RetryInterval + a.strategy.InPlaceGrace
		for _, inst := range a.sortedInstances() {
			u := inst.rec.Update
			// An update the budget holds was never sent: it goes when the
			// budget has room (sendHeldUpdates).
			held := inst.rec.PreDelete != nil && !inst.rec.PreDelete.Passed || c.updatesHeld[inst]
			if u == nil || u.Mode == registry.UpdateReplace || u.Error != "" || held || inst.phase() != PhaseRunning || c.now.Sub(u.Sent) < wait {
				continue
			}
			c.sendUpdate(inst)
			c.persist(inst)
		}
	}
}
