package egress

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/bcs-mesos/bcs-mesos/proto"
)

// ControlPlane is the cluster's own endpoints (host:port, the host an
// address or a name), which no tenant's fetch reaches.
type ControlPlane struct {
	// Scheduler is the scheduler's API: the address it listens on (each
	// local address, for a wildcard) and the one it advertises.
	Scheduler []string
	// Debug is --debug-addr (pprof).
	Debug []string
	// Masters are the Mesos masters.
	Masters []string
	// AgentPorts are the Mesos agents' HTTP ports, refused on every
	// address: the agents are as many as the machines, a port is one.
	AgentPorts []int
	// Etcd is etcd's client and peer endpoints.
	Etcd []string
}

// Refused is the refusals of every policy of a cluster: Networks and
// the control plane's endpoints.
func (cp ControlPlane) Refused() []proto.EgressRule {
	rules := Networks()
	add := func(name string, endpoints []string) {
		endpoints = slices.Compact(slices.Sorted(slices.Values(endpoints)))
		if len(endpoints) > 0 {
			rules = append(rules, proto.EgressRule{Name: name, Endpoints: endpoints})
		}
	}
	add("the scheduler's API", cp.Scheduler)
	add("the scheduler's debug address", cp.Debug)
	add("a Mesos master", cp.Masters)
	var agents []string
	for _, port := range cp.AgentPorts {
		agents = append(agents, "*:"+strconv.Itoa(port))
	}
	add(agentRule, agents)
	add("etcd", cp.Etcd)
	return rules
}

// agentRule names the refusal of the Mesos agents' API.
const agentRule = "a Mesos agent's API"

// Probes compiles the policy of the health checks made on owner's behalf
// (the scheduler's REMOTE_HTTP and REMOTE_TCP, an executor's HTTP and TCP
// checks on its agent's address): they may probe any port of the
// instance's agent but never the control plane. So it refuses spec's
// endpoints — not its networks: the instance's own ports are on the
// agent's address, loopback in a dev cluster — and agents, the agents'
// API endpoints (host:port as the master reports them: a dev cluster's
// are random ports). spec's allowed exceptions hold; an agent endpoint
// that is no host:port is left out, as no probe can be refused by it.
func Probes(owner string, spec *proto.Egress, agents []string) (*Policy, error) {
	probes := &proto.Egress{}
	if spec != nil {
		probes.Allowed = spec.Allowed
		for _, r := range spec.Refused {
			if len(r.Endpoints) > 0 {
				probes.Refused = append(probes.Refused, proto.EgressRule{Name: r.Name, Endpoints: r.Endpoints})
			}
		}
	}
	var endpoints []string
	for _, a := range agents {
		if _, err := parseEndpoint(a); err == nil {
			endpoints = append(endpoints, a)
		}
	}
	if len(endpoints) > 0 {
		probes.Refused = append(probes.Refused, proto.EgressRule{Name: agentRule, Endpoints: endpoints})
	}
	return Compile(owner, probes)
}

// Set is the egress policies of a cluster's namespaces: the refusals
// they share, the routes, and each namespace's allowed exceptions.
type Set struct {
	// specs are the wire forms by namespace, "" the default's; a
	// namespace without its own takes the default's.
	specs    map[string]*proto.Egress
	compiled map[string]*Policy
}

// NewSet compiles the policies: refused and routes for every namespace,
// allowed[ns] the exceptions of ns, allowed[""] those of the others.
// An entry that does not parse is an error naming it.
func NewSet(refused []proto.EgressRule, routes []string, allowed map[string][]string) (*Set, error) {
	s := &Set{specs: map[string]*proto.Egress{}, compiled: map[string]*Policy{}}
	namespaces := map[string][]string{"": nil}
	maps.Copy(namespaces, allowed)
	for _, ns := range slices.Sorted(maps.Keys(namespaces)) { // the first error always the same
		list := namespaces[ns]
		spec := &proto.Egress{Refused: refused, Allowed: list, Routes: routes}
		owner := "default"
		if ns != "" {
			owner = "namespace " + ns
		}
		p, err := Compile(owner, spec)
		if err != nil {
			return nil, err
		}
		s.specs[ns], s.compiled[ns] = spec, p
	}
	return s, nil
}

// DefaultSet refuses Networks for every namespace and allows nothing:
// the policy of a runner or notifier not given one.
func DefaultSet() *Set {
	s, err := NewSet(Networks(), nil, nil)
	if err != nil {
		panic(fmt.Sprintf("egress: the built-in networks do not compile: %v", err))
	}
	return s
}

// Spec is namespace's policy as executors get it (TaskSpec.Egress); it
// is shared: the caller must not change it.
func (s *Set) Spec(namespace string) *proto.Egress {
	if spec, ok := s.specs[namespace]; ok {
		return spec
	}
	return s.specs[""]
}

// Policy is namespace's compiled policy; its errors name the namespace.
func (s *Set) Policy(namespace string) *Policy {
	p, ok := s.compiled[namespace]
	if !ok {
		p = s.compiled[""]
	}
	named := *p
	named.owner = "namespace " + namespace
	return &named
}

// Default is the default rules' policy, for what belongs to no namespace
// (notify callbacks, which the admin registers), owned by what.
func (s *Set) Default(what string) *Policy {
	named := *s.compiled[""]
	named.owner = "default, for " + what
	return &named
}
