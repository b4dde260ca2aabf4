package scheduler

import (
	"context"
	"maps"
	"net"
	"slices"
	"sync"

	"github.com/bcs-mesos/bcs-mesos/pkg/egress"
	"github.com/bcs-mesos/bcs-mesos/pkg/healthcheck"
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
