package process

import (
	"context"
	"fmt"

	"github.com/bcs-mesos/bcs-mesos/pkg/healthcheck"
	"github.com/bcs-mesos/bcs-mesos/pkg/taskstate"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// prober builds a health check's probe: ports by name from the task's
// ports (processes share the host network: hostPort, else
// containerPort), commands through the shell as the task's user.
func (t *task) prober(hc proto.HealthCheck) (healthcheck.Prober, error) {
	ports := func(name string) (int, bool) {
		p, ok := portsOf(t.spec)[name]
		return p, ok
	}
	t.mu.Lock()
	run := healthcheck.Shell(t.proc.WorkPath, append([]string(nil), t.env...), t.acct.cred)
	t.mu.Unlock()
	return healthcheck.NewProber(hc, t.rt.cfg.HostIP, ports, run)
}

func (t *task) startHealthChecks() {
	if len(t.spec.HealthChecks) == 0 {
		return
	}
	ctx, cancel := context.WithCancel(t.ctx)
	t.mu.Lock()
	t.healthCancel = cancel
	t.mu.Unlock()
	for i, hc := range t.spec.HealthChecks {
		p, err := t.prober(hc)
		if err != nil { // validated in prepare
			t.log().Warn("health check", "index", i, "err", err)
			continue
		}
		c := &healthcheck.Checker{Prober: p, Policy: healthcheck.PolicyOf(hc), Clock: t.rt.cfg.Clock}
		go c.Run(ctx, func(r healthcheck.Result) { t.healthResult(ctx, i, r) })
	}
}

func (t *task) stopHealthChecks() {
	t.mu.Lock()
	cancel := t.healthCancel
	t.healthCancel = nil
	t.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// healthResult turns check results into TaskStatus.healthy (reported on
// change; healthy means every check passed last time) and kills the task
// after consecutiveFailures failures.
func (t *task) healthResult(ctx context.Context, i int, r healthcheck.Result) {
	if r.InGrace {
		return
	}
	t.mu.Lock()
	if ctx.Err() != nil || t.life != lifeRunning {
		t.mu.Unlock()
		return
	}
	t.healthy[i] = r.Healthy
	// Unhealthy as soon as one check fails; healthy once every check
	// has passed.
	var verdict *bool
	failing := false
	for _, ok := range t.healthy {
		failing = failing || !ok
	}
	if failing || len(t.healthy) == len(t.spec.HealthChecks) {
		v := !failing
		verdict = &v
	}
	changed := verdict != nil && (t.lastHealthy == nil || *t.lastHealthy != *verdict)
	if verdict != nil {
		t.lastHealthy = verdict
	}
	t.mu.Unlock()
	if r.Kill {
		reason := reasonHealth
		msg := fmt.Sprintf("health check %s failed %d times in a row: %s", t.spec.HealthChecks[i].Type, r.ConsecutiveFailures, r.Message)
		t.log().Info(msg)
		go t.kill(t.killGrace, taskstate.Failed, &reason, msg)
		return
	}
	if changed {
		reason := reasonHealth
		msg := ""
		if !*verdict {
			msg = r.Message
		}
		t.report(taskstate.Running, &reason, msg, verdict)
	}
}
