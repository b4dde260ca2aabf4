package scheduler

import "github.com/bcs-mesos/bcs-mesos/pkg/registry"

// startRemoteChecks asks the driver to run the instance's REMOTE_* checks
// against its agent.
func (c *Core) startRemoteChecks(inst *instance) {
	tmpl := inst.template()
	if tmpl == nil || len(tmpl.RemoteChecks) == 0 {
		return
	}
	c.out.Checks = append(c.out.Checks, CheckChange{TaskGroupID: inst.rec.ID, Namespace: inst.rec.Namespace, Host: inst.rec.HostIP, Checks: tmpl.RemoteProbes(inst.rec.Ports.Map())})
}

func (c *Core) stopRemoteChecks(inst *instance) {
	if tmpl := inst.template(); tmpl != nil && len(tmpl.RemoteChecks) > 0 && inst.rec.ID != "" {
		c.out.Checks = append(c.out.Checks, CheckChange{TaskGroupID: inst.rec.ID})
	}
}

// remoteHealth records a remote check's verdict and sums up the
// instance's: unhealthy when one check fails (its message shown, named),
// healthy once every check passed. A kill verdict kills the instance,
// and its end counts as a failure.
func (c *Core) remoteHealth(h RemoteHealth) {
	inst := c.currentLaunch(h.TaskGroupID)
	if inst == nil || inst.phase() != PhaseRunning {
		return
	}
	tmpl := inst.template()
	if tmpl == nil || h.Check < 0 || h.Check >= len(tmpl.RemoteChecks) {
		return
	}
	if len(inst.rec.RemoteChecks) != len(tmpl.RemoteChecks) {
		inst.rec.RemoteChecks = make([]registry.RemoteCheckResult, len(tmpl.RemoteChecks))
	}
	inst.rec.RemoteChecks[h.Check] = registry.RemoteCheckResult{Name: tmpl.RemoteChecks[h.Check].Name(), Healthy: h.Healthy, Message: h.Message}
	inst.rec.RemoteHealthy, inst.rec.RemoteMessage = nil, ""
	passed := 0
	for _, r := range inst.rec.RemoteChecks {
		switch {
		case r.Name != "" && !r.Healthy && inst.rec.RemoteHealthy == nil:
			unhealthy := false
			inst.rec.RemoteHealthy, inst.rec.RemoteMessage = &unhealthy, r.Name+": "+r.Message
		case r.Name != "" && r.Healthy:
			passed++
		}
	}
	if passed == len(inst.rec.RemoteChecks) {
		healthy := true
		inst.rec.RemoteHealthy = &healthy
	}
	if h.Kill {
		c.kill(inst, KillHealth)
		return
	}
	c.persist(inst)
}
