package scheduler

import (
	"github.com/bcs-mesos/bcs-mesos/pkg/launch"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// startRemoteChecks asks the driver to run the instance's REMOTE_* checks
// against the address its clients use (launch.Template.RemoteProbes).
func (c *Core) startRemoteChecks(inst *instance) {
	tmpl := inst.template()
	if tmpl == nil || len(tmpl.RemoteChecks) == 0 {
		return
	}
	addr := launch.InstanceAddress{HostIP: inst.rec.HostIP, PodIP: podIP(&inst.rec), HostPorts: inst.rec.Ports.Map()}
	c.out.Checks = append(c.out.Checks, CheckChange{TaskGroupID: inst.rec.ID, Namespace: inst.rec.Namespace, Checks: tmpl.RemoteProbes(addr)})
}

// podIP is the pod's address as its container executor last reported
// it: the tasks of a pod share one network.
func podIP(g *registry.TaskGroup) string {
	for _, t := range g.Tasks {
		if t.Container != nil && t.Container.IPAddress != "" {
			return t.Container.IPAddress
		}
	}
	return ""
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
	inst.rec.RemoteChecks[h.Check] = registry.RemoteCheckResult{Name: tmpl.RemoteChecks[h.Check].Name(), Address: h.Address, Healthy: h.Healthy, Message: h.Message}
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
