package schedulerd

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/admission"
	"github.com/bcs-mesos/bcs-mesos/pkg/egress"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// DefaultAgentPort is the Mesos agent's default HTTP port (--port).
const DefaultAgentPort = 5051

// controlPlane is what this replica knows of the cluster's endpoints:
// its API (listening at api, advertised as self), its debug address,
// the masters, the agents' ports and etcd's members and endpoints.
type controlPlane struct {
	api           net.Addr
	self, debug   string
	masters, etcd []string
	agentPorts    []int
}

// lookupTimeout bounds the resolution of one control-plane name.
const lookupTimeout = 2 * time.Second

// egressPolicies are the egress policies of every namespace: the
// control plane refused, the admission policy's exceptions (a namespace
// it names takes its own list, the others default's), and this API's
// public packages, schedulerURL/files/, let through.
func egressPolicies(ctx context.Context, cp controlPlane, policy admission.Policy, schedulerURL string) (*egress.Set, egress.ControlPlane, error) {
	known := egress.ControlPlane{AgentPorts: cp.agentPorts}
	known.Scheduler = append(cp.endpoints(ctx, cp.api.String()), cp.endpoints(ctx, urlEndpoint(cp.self))...)
	if cp.debug != "" {
		known.Debug = cp.endpoints(ctx, cp.debug)
	}
	for _, m := range cp.masters {
		known.Masters = append(known.Masters, cp.endpoints(ctx, urlEndpoint(m))...)
	}
	for _, e := range cp.etcd {
		known.Etcd = append(known.Etcd, cp.endpoints(ctx, urlEndpoint(e))...)
	}
	allowed := map[string][]string{"": policy.Default.Egress}
	for ns, rules := range policy.Namespaces {
		allowed[ns] = rules.Egress
	}
	set, err := egress.NewSet(known.Refused(), []string{schedulerURL + "/files/"}, allowed)
	if err != nil {
		return nil, known, fmt.Errorf("egress policy: %w", err)
	}
	return set, known, nil
}

// endpoints is what hostport connects to: itself and, for a name, the
// addresses it resolves to now; for a wildcard address, every address of
// this machine with its port. What cannot be read is left out: the
// networks and the other endpoints still hold.
func (cp controlPlane) endpoints(ctx context.Context, hostport string) []string {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil || port == "" {
		return nil
	}
	ip, err := netip.ParseAddr(host)
	switch {
	case host == "" || err == nil && ip.IsUnspecified():
		addrs, _ := net.InterfaceAddrs()
		var out []string
		for _, a := range addrs {
			if ipNet, ok := a.(*net.IPNet); ok {
				out = append(out, net.JoinHostPort(ipNet.IP.String(), port))
			}
		}
		return out
	case err == nil:
		return []string{net.JoinHostPort(ip.WithZone("").Unmap().String(), port)}
	}
	out := []string{hostport}
	lookupCtx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	ips, _ := net.DefaultResolver.LookupNetIP(lookupCtx, "ip", host)
	for _, ip := range ips {
		out = append(out, net.JoinHostPort(ip.WithZone("").Unmap().String(), port))
	}
	return out
}

// urlEndpoint is the host:port of a URL, its scheme's port by default;
// "" when it has no host.
func urlEndpoint(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return ""
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// etcdEndpoints are etcd's client and peer URLs as its members list
// them, and those the replica was given (a proxy's, say).
func etcdEndpoints(ctx context.Context, st *store.Store, configured []string, log *slog.Logger) []string {
	urls, err := st.MemberURLs(ctx)
	if err != nil {
		log.Warn("egress policy: etcd's members could not be listed; only --etcd-endpoints are refused to tenants' fetches", "err", err)
	}
	return append(urls, configured...)
}

// checkAgentPorts refuses a port out of 1-65535; none is
// DefaultAgentPort.
func checkAgentPorts(ports []int) ([]int, error) {
	if len(ports) == 0 {
		return []int{DefaultAgentPort}, nil
	}
	for _, p := range ports {
		if p < 1 || p > 65535 {
			return nil, fmt.Errorf("--agent-ports %s: want ports from 1 to 65535: %w", strconv.Itoa(p), errdefs.ErrInvalidArgument)
		}
	}
	return ports, nil
}
