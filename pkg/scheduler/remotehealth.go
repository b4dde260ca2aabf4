package scheduler

// startRemoteChecks asks the driver to run the instance's REMOTE_* checks
// against its agent.
func (c *Core) startRemoteChecks(inst *instance) {
	tmpl := inst.template()
	if tmpl == nil || len(tmpl.RemoteChecks) == 0 {
		return
	}
	c.out.Checks = append(c.out.Checks, CheckChange{TaskGroupID: inst.rec.ID, Host: inst.rec.HostIP, Checks: tmpl.RemoteProbes(inst.rec.Ports)})
}

func (c *Core) stopRemoteChecks(inst *instance) {
	if tmpl := inst.template(); tmpl != nil && len(tmpl.RemoteChecks) > 0 && inst.rec.ID != "" {
		c.out.Checks = append(c.out.Checks, CheckChange{TaskGroupID: inst.rec.ID})
	}
}

// remoteHealth records a remote check verdict; a kill verdict kills the
// instance, and its end counts as a failure.
func (c *Core) remoteHealth(h RemoteHealth) {
	inst := c.currentLaunch(h.TaskGroupID)
	if inst == nil || inst.phase != PhaseRunning {
		return
	}
	healthy := h.Healthy
	inst.rec.RemoteHealthy, inst.rec.RemoteMessage = &healthy, h.Message
	if h.Kill {
		c.kill(inst, KillHealth)
		return
	}
	c.persist(inst)
}
