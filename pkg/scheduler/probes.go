package scheduler

import (
	"context"
	"fmt"
	"maps"
	"net"
	"slices"
	"sync"

	"github.com/bcs-mesos/bcs-mesos/pkg/egress"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/healthcheck"
	"github.com/bcs-mesos/bcs-mesos/pkg/launch"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// probePolicies hold the remote checks' probes off the control plane
// (egress.Probes): a check may name any port of its instance's agent,
// but never connects to an endpoint its namespace's egress policy
// refuses nor to the API of an agent the driver has heard of (from
// offers, the master's agent list and the store). The checks' goroutines
// read it; the loop and the agent sync add agents.
type probePolicies struct {
	spec func(namespace string) *proto.Egress // nil: no policy
	mu   sync.Mutex
	// agents are the agents' API endpoints by agent ID; compiled the
	// policies of the namespaces probed since they last changed.
	agents   map[string]string
	compiled map[string]*egress.Policy
}

func newProbePolicies(spec func(namespace string) *proto.Egress) *probePolicies {
	return &probePolicies{spec: spec, agents: map[string]string{}, compiled: map[string]*egress.Policy{}}
}

// learnAgent records an agent's API endpoint (host:port; "" unknown).
func (p *probePolicies) learnAgent(id, endpoint string) {
	if endpoint == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.agents[id] != endpoint {
		p.agents[id] = endpoint
		clear(p.compiled)
	}
}

// policy is namespace's probe policy.
func (p *probePolicies) policy(namespace string) (*egress.Policy, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if policy := p.compiled[namespace]; policy != nil {
		return policy, nil
	}
	var spec *proto.Egress
	if p.spec != nil {
		spec = p.spec(namespace)
	}
	policy, err := egress.Probes("namespace "+namespace, spec, slices.Sorted(maps.Values(p.agents)))
	if err != nil {
		return nil, err
	}
	p.compiled[namespace] = policy
	return policy, nil
}

// dial connects namespace's probes as its policy lets them, as it is
// when they connect: an agent learnt after the check started is refused
// too.
func (p *probePolicies) dial(namespace string) healthcheck.DialFunc {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		policy, err := p.policy(namespace)
		if err != nil {
			return nil, err
		}
		return policy.DialContext(ctx, network, address)
	}
}

// changeChecks starts or stops the remote health checks of a task group:
// one checker per check, each reporting its verdicts as RemoteHealth.
func (d *Driver) changeChecks(ctx context.Context, change CheckChange) {
	if cancel := d.checks[change.TaskGroupID]; cancel != nil {
		cancel()
		delete(d.checks, change.TaskGroupID)
	}
	if len(change.Checks) == 0 {
		return
	}
	checkCtx, cancel := context.WithCancel(ctx)
	d.checks[change.TaskGroupID] = cancel
	for i, probe := range change.Checks {
		address := probe.Address()
		prober, err := remoteProber(probe, d.probes.dial(change.Namespace))
		if err != nil {
			d.report(checkCtx, RemoteHealth{TaskGroupID: change.TaskGroupID, Check: i, Address: address, Message: err.Error()})
			continue
		}
		checker := &healthcheck.Checker{Prober: prober, Policy: healthcheck.PolicyOf(probe.Check)}
		go checker.Run(checkCtx, func(r healthcheck.Result) {
			if r.InGrace {
				return
			}
			d.report(checkCtx, RemoteHealth{TaskGroupID: change.TaskGroupID, Check: i, Address: address, Healthy: r.Healthy, Message: r.Message, Kill: r.Kill})
		})
	}
}

// remoteProber probes what probe names, connecting through dial; an
// instance with no address yet (a pod whose IP its executor has not
// reported) is an error that says so.
func remoteProber(probe launch.RemoteProbe, dial healthcheck.DialFunc) (healthcheck.Prober, error) {
	if probe.Host == "" {
		return nil, fmt.Errorf("%s health check: the instance has no address to probe yet: %w", probe.Check.Type, errdefs.ErrUnavailable)
	}
	return healthcheck.NewProber(probe.Check, probe.Host, nil, nil, dial)
}

func (d *Driver) report(ctx context.Context, h RemoteHealth) {
	select {
	case d.health <- h:
	case <-ctx.Done():
	}
}
