package process

import (
	"context"
	"fmt"

	"github.com/bcs-mesos/bcs-mesos/pkg/egress"
	"github.com/bcs-mesos/bcs-mesos/pkg/healthcheck"
	"github.com/bcs-mesos/bcs-mesos/pkg/taskstate"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// prober builds a health check of spec's: ports by name from spec's ports
// (processes share the host network: hostPort, else containerPort),
// commands through run. HTTP and TCP checks probe the agent's address,
// any port of it but the control plane's: neither the agent's own API
// nor an endpoint spec's egress policy refuses (egress.Probes).
func (r *Runtime) prober(spec *proto.TaskSpec, hc proto.HealthCheck, run healthcheck.ExecFunc) (healthcheck.Prober, error) {
	ports := func(name string) (int, bool) {
		p, ok := portsOf(spec)[name]
		return p, ok
	}
	policy, err := egress.Probes("namespace "+spec.Instance.Namespace, spec.Egress, []string{r.cfg.AgentEndpoint})
	if err != nil {
		return nil, err
	}
	return healthcheck.NewProber(hc, r.cfg.HostIP, ports, run, policy.DialContext)
}

// startHealthChecks runs the spec's checks. Caller holds opMu.
func (t *task) startHealthChecks() {
	if len(t.spec.HealthChecks) == 0 {
		return
	}
	ctx, cancel := context.WithCancel(t.ctx)
	t.mu.Lock()
	t.healthCancel = cancel
	run := healthcheck.Shell(t.proc.WorkPath, append([]string(nil), t.env...), t.acct.cred)
	t.mu.Unlock()
	for i, hc := range t.spec.HealthChecks {
		p, err := t.rt.prober(t.spec, hc, run)
		if err != nil { // checkSpec refused specs with bad checks
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
	checkType := t.spec.HealthChecks[i].Type
	t.mu.Unlock()
	if r.Kill {
		reason := reasonHealth
		msg := fmt.Sprintf("health check %s failed %d times in a row: %s", checkType, r.ConsecutiveFailures, r.Message)
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
