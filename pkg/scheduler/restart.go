package scheduler

import (
	"fmt"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
)

// decide applies the restart policy to an instance whose launch ended
// with outcome o.
func (c *Core) decide(inst *instance, o outcome, reason string) {
	if inst.successor != nil {
		// Moving: the successor takes over rather than a restart here.
		inst.rec.Message = reason
		c.handOver(inst)
		return
	}
	c.endPreDelete(inst)
	if u := inst.rec.Update; u != nil {
		// An update that was under way ends with the launch; the rollout
		// plans the instance again.
		inst.rec.Update = nil
		reason += fmt.Sprintf(" during the %s to revision %d", modeNoun[u.Mode], u.Version)
	}
	if !inst.rec.RunningSince.IsZero() && c.now.Sub(inst.rec.RunningSince) >= RunningResetAfter {
		inst.rec.Restarts = 0
	}
	d := decideRestart(inst.app.tmplPolicy(), o, inst.rec.Restarts)
	decision := []any{"app", inst.app.key(), "instance", inst.rec.Index, "task_group", inst.rec.ID, "agent", inst.rec.AgentID, "reason", reason}
	if !d.relaunch {
		c.logf("instance ended, not restarted", append(decision, "policy", d.reason)...)
		if o == outcomeFinished {
			c.setPhase(inst, PhaseFinished)
		} else {
			c.setPhase(inst, PhaseFailed)
		}
		inst.rec.Message = reason + " (not restarted: " + d.reason + ")"
		return
	}
	c.setPhase(inst, PhasePending)
	if d.counts {
		inst.rec.Restarts++
	}
	c.logf("instance ended, restarting", append(decision, "restarts", inst.rec.Restarts, "in", d.delay)...)
	inst.rec.NotBefore = c.now.Add(d.delay)
	inst.rec.Message = fmt.Sprintf("%s (restart %d in %s)", reason, inst.rec.Restarts, d.delay)
	if !d.counts {
		inst.rec.Message = reason + " (relaunching)"
		return
	}
	c.countRestart(inst)
}

// killed finishes a kill the scheduler asked for.
func (c *Core) killed(inst *instance) {
	reason := inst.killReason()
	inst.rec.KillReason = ""
	c.endPreDelete(inst)
	if reason == KillUpdate {
		u := inst.rec.Update
		inst.rec.Update = nil
		c.setPhase(inst, PhasePending)
		inst.rec.NotBefore = c.now
		if u != nil {
			inst.rec.Version, inst.rec.Template, inst.rec.Message = inst.app.versionOf(u.Template, u.Version), u.Template, u.Message
		}
		return
	}
	if reason == KillMove && inst.successor != nil {
		c.handOver(inst)
		return
	}
	if reason == KillStop {
		c.stopped(inst)
		return
	}
	c.remove(inst)
}

func (a *app) tmplPolicy() manifest.RestartPolicy {
	if a.tmpl == nil {
		return manifest.RestartPolicy{}
	}
	return a.tmpl.RestartPolicy
}

// RunningResetAfter is how long an instance must run before its restart
// count starts again from zero (seed 000: "容器正常运行30分钟后重启次数清零").
const RunningResetAfter = 30 * time.Minute

// restartDecision says what follows a task group's end.
type restartDecision struct {
	relaunch bool
	delay    time.Duration
	counts   bool   // the relaunch counts against maxtimes
	reason   string // why not, when not
}

// decideRestart applies seed 000's restartPolicy: Never restarts nothing;
// OnFailure restarts after a failure; Always after a failure and after a
// loss. The n-th restart waits interval + (n-1)·backoff seconds (interval
// 5, backoff 10: 5s, 15s, 25s); maxtimes > 0 caps the restarts.
// restarts is the count so far, already reset if the instance had run for
// RunningResetAfter.
func decideRestart(p manifest.RestartPolicy, o outcome, restarts int) restartDecision {
	switch o {
	case outcomeDropped, outcomeEvicted:
		return restartDecision{relaunch: true} // not the application's fault
	case outcomeInvalid:
		return restartDecision{reason: "Mesos rejected the task group as invalid"}
	case outcomeFinished:
		return restartDecision{reason: "finished"}
	}
	allowed := p.Policy == manifest.RestartAlways || (p.Policy == manifest.RestartOnFailure && o == outcomeFailed)
	if !allowed {
		return restartDecision{reason: fmt.Sprintf("%s, restartPolicy %s", o, p.Policy)}
	}
	if p.MaxTimes > 0 && restarts >= p.MaxTimes {
		return restartDecision{reason: fmt.Sprintf("%s, restartPolicy.maxtimes %d reached", o, p.MaxTimes)}
	}
	return restartDecision{relaunch: true, delay: restartDelay(p, restarts), counts: true}
}

// restartDelay is the wait before the launch after restarts restarts.
func restartDelay(p manifest.RestartPolicy, restarts int) time.Duration {
	return time.Duration(p.Interval+restarts*p.Backoff) * time.Second
}
