package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"path"
	"strconv"
	"strings"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// Networks are the refusals every policy starts with: loopback (the
// machine's own services: an agent's API, the scheduler's, etcd),
// link-local (169.254.169.254 is the cloud's metadata service, with the
// machine's credentials) and the unspecified addresses (0.0.0.0 reaches
// the machine itself).
func Networks() []proto.EgressRule {
	return []proto.EgressRule{
		{Name: "loopback", Networks: []string{"127.0.0.0/8", "::1/128"}},
		{Name: "link-local", Networks: []string{"169.254.0.0/16", "fe80::/10"}},
		{Name: "unspecified address", Networks: []string{"0.0.0.0/8", "::/128"}},
	}
}

// Policy is a compiled egress policy; its methods are safe for
// concurrent use.
type Policy struct {
	// owner names whose policy it is in messages: "namespace nsa".
	owner     string
	networks  []network
	endpoints []endpoint
	allowed   []allowance
	routes    []route
}

// network is a refused network.
type network struct {
	rule   string
	prefix netip.Prefix
}

// endpoint is a refused endpoint: port on ip, on the name, or on every
// address (neither).
type endpoint struct {
	rule string
	ip   netip.Addr
	name string
	port uint16
}

// allowance is an allowed exception: a network or address (prefix) on
// any port (0) or one port, or a name on one port.
type allowance struct {
	prefix netip.Prefix
	name   string
	port   uint16
}

// route lets through the URLs under prefix on scheme://hostport.
type route struct {
	scheme, hostport, prefix string
}

// Compile checks spec and compiles it, owner naming the policy in
// messages ("namespace nsa"). A nil spec refuses nothing.
func Compile(owner string, spec *proto.Egress) (*Policy, error) {
	p := &Policy{owner: owner}
	if spec == nil {
		return p, nil
	}
	var errs []error
	for i, r := range spec.Refused {
		for j, n := range r.Networks {
			prefix, err := parseNetwork(n)
			if err != nil {
				errs = append(errs, fmt.Errorf("refused[%d].networks[%d] %q: %w", i, j, n, err))
				continue
			}
			p.networks = append(p.networks, network{rule: r.Name, prefix: prefix})
		}
		for j, e := range r.Endpoints {
			ep, err := parseEndpoint(e)
			if err != nil {
				errs = append(errs, fmt.Errorf("refused[%d].endpoints[%d] %q: %w", i, j, e, err))
				continue
			}
			ep.rule = r.Name
			p.endpoints = append(p.endpoints, ep)
		}
	}
	for i, a := range spec.Allowed {
		allow, err := parseAllowed(a)
		if err != nil {
			errs = append(errs, fmt.Errorf("allowed[%d] %q: %w", i, a, err))
			continue
		}
		p.allowed = append(p.allowed, allow)
	}
	for i, raw := range spec.Routes {
		r, err := parseRoute(raw)
		if err != nil {
			errs = append(errs, fmt.Errorf("routes[%d] %q: %w", i, raw, err))
			continue
		}
		p.routes = append(p.routes, r)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("egress policy of %s: %w: %w", owner, err, errdefs.ErrInvalidArgument)
	}
	return p, nil
}

// CheckAllowed says what is wrong with an allowed entry, as the
// admission policy's "egress" list takes them: a network
// ("10.1.0.0/16"), an address ("10.1.2.3"), an address and port
// ("127.0.0.1:9090") or a name and port ("prometheus.monitoring:9090").
func CheckAllowed(entry string) error {
	_, err := parseAllowed(entry)
	return err
}

func parseNetwork(s string) (netip.Prefix, error) {
	prefix, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, errors.New("want a network such as 10.1.0.0/16")
	}
	return netip.PrefixFrom(prefix.Addr().Unmap(), prefix.Bits()-unmappedBits(prefix.Addr())).Masked(), nil
}

// unmappedBits is how many bits of an IPv4-mapped IPv6 prefix length
// the IPv4 form drops.
func unmappedBits(a netip.Addr) int {
	if a.Is4In6() {
		return 96
	}
	return 0
}

func parseEndpoint(s string) (endpoint, error) {
	host, port, err := splitHostPort(s)
	if err != nil {
		return endpoint{}, err
	}
	ep := endpoint{port: port}
	if host == "*" {
		return ep, nil
	}
	if ip, ok := parseIP(host); ok {
		ep.ip = ip
		return ep, nil
	}
	if !validName(host) {
		return endpoint{}, errors.New("want host:port, the host an address or a DNS name, or *:port")
	}
	ep.name = canonicalName(host)
	return ep, nil
}

func parseAllowed(s string) (allowance, error) {
	if strings.Contains(s, "/") {
		prefix, err := parseNetwork(s)
		return allowance{prefix: prefix}, err
	}
	if ip, ok := parseIP(s); ok {
		return allowance{prefix: netip.PrefixFrom(ip, ip.BitLen())}, nil
	}
	host, port, err := splitHostPort(s)
	if err != nil {
		if _, _, splitErr := net.SplitHostPort(s); splitErr == nil {
			return allowance{}, err // host:port, a bad port
		}
		if validName(s) {
			return allowance{}, errors.New("a name needs its port: name:port (a name is trusted with what it resolves to, on that port only)")
		}
		return allowance{}, errors.New("want a network (10.1.0.0/16), an address (10.1.2.3), address:port (127.0.0.1:9090) or name:port (prometheus.monitoring:9090)")
	}
	if ip, ok := parseIP(host); ok {
		return allowance{prefix: netip.PrefixFrom(ip, ip.BitLen()), port: port}, nil
	}
	if !validName(host) {
		return allowance{}, fmt.Errorf("%q is neither an address nor a DNS name", host)
	}
	return allowance{name: canonicalName(host), port: port}, nil
}

func parseRoute(s string) (route, error) {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || !strings.HasSuffix(u.Path, "/") || u.RawQuery != "" || u.User != nil {
		return route{}, errors.New("want a URL prefix such as http://10.0.0.2:8080/files/")
	}
	hostport, err := dialAddress(u)
	if err != nil {
		return route{}, err
	}
	return route{scheme: u.Scheme, hostport: hostport, prefix: u.Path}, nil
}

// splitHostPort splits host:port, the port a number from 1 to 65535.
func splitHostPort(s string) (string, uint16, error) {
	host, portText, err := net.SplitHostPort(s)
	if err != nil {
		return "", 0, errors.New("want host:port")
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil || port == 0 {
		return "", 0, fmt.Errorf("port %q: want 1 to 65535", portText)
	}
	return host, uint16(port), nil
}

// parseIP reads an address as policies compare them: without a zone, an
// IPv4-mapped IPv6 address as IPv4.
func parseIP(s string) (netip.Addr, bool) {
	ip, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, false
	}
	return ip.WithZone("").Unmap(), true
}

// validName reports whether s can be a DNS name.
func validName(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

func canonicalName(s string) string { return strings.ToLower(strings.TrimSuffix(s, ".")) }

// defaultPorts are the ports of the schemes fetched on a tenant's behalf.
var defaultPorts = map[string]string{"http": "80", "https": "443", "ftp": "21"}

// dialAddress is the host:port a URL connects to, as http.Transport
// dials it.
func dialAddress(u *url.URL) (string, error) {
	host, port := u.Hostname(), u.Port()
	if host == "" {
		return "", errors.New("the URL names no host")
	}
	if port == "" {
		port = defaultPorts[u.Scheme]
		if port == "" {
			return "", fmt.Errorf("scheme %q: want http, https or ftp", u.Scheme)
		}
	}
	return net.JoinHostPort(strings.ToLower(host), port), nil
}

// RefusedError is a connection the policy refuses. It wraps
// errdefs.ErrPermissionDenied.
type RefusedError struct {
	// Addr is what was refused: the address connected to, or the URL's
	// host:port.
	Addr string
	// Rule names the refusal ("loopback", "the Mesos master").
	Rule string
	// Owner names the policy ("namespace nsa").
	Owner string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("egress to %s refused: %s (egress policy of %s)", e.Addr, e.Rule, e.Owner)
}

func (e *RefusedError) Unwrap() error { return errdefs.ErrPermissionDenied }

// decide refuses a connection to ip:port (ip invalid: not known yet),
// dialed as name (empty for an address), or lets it through.
func (p *Policy) decide(name string, ip netip.Addr, port uint16) *RefusedError {
	refuse := func(rule string) *RefusedError {
		addr := net.JoinHostPort(name, strconv.Itoa(int(port)))
		if ip.IsValid() {
			addr = netip.AddrPortFrom(ip, port).String()
		}
		return &RefusedError{Addr: addr, Rule: rule, Owner: p.owner}
	}
	for _, e := range p.endpoints {
		if e.port == port && (e.ip.IsValid() && e.ip == ip || e.name != "" && e.name == name || !e.ip.IsValid() && e.name == "") &&
			!p.allowsEndpoint(name, ip, port) {
			return refuse(e.rule)
		}
	}
	if !ip.IsValid() {
		return nil
	}
	for _, n := range p.networks {
		if n.prefix.Contains(ip) && !p.allowsNetwork(name, ip, port) {
			return refuse(n.rule)
		}
	}
	return nil
}

// allowsEndpoint reports whether an allowed entry names the endpoint
// itself: its address and port, or its name and port.
func (p *Policy) allowsEndpoint(name string, ip netip.Addr, port uint16) bool {
	for _, a := range p.allowed {
		if a.port == port && (a.name != "" && a.name == name || a.name == "" && a.prefix.IsSingleIP() && a.prefix.Addr() == ip) {
			return true
		}
	}
	return false
}

// allowsNetwork reports whether an allowed entry covers ip:port.
func (p *Policy) allowsNetwork(name string, ip netip.Addr, port uint16) bool {
	for _, a := range p.allowed {
		switch {
		case a.name != "":
			if a.name == name && a.port == port {
				return true
			}
		case a.prefix.Contains(ip) && (a.port == 0 || a.port == port):
			return true
		}
	}
	return false
}

// routed reports whether u lies under one of the routes: its path,
// cleaned as a server cleans it, starts with the route's.
func (p *Policy) routed(u *url.URL) bool {
	hostport, err := dialAddress(u)
	if err != nil {
		return false
	}
	cleaned := path.Clean("/" + u.Path)
	for _, r := range p.routes {
		if u.Scheme == r.scheme && hostport == r.hostport && strings.HasPrefix(cleaned, r.prefix) {
			return true
		}
	}
	return false
}

// checkURL checks what u's text tells: a route lets it through (routed);
// an address, or a name the policy names, may be refused. The
// connection is checked again once its name is resolved. Errors do not
// quote u, which callers name as they show URLs (without credentials).
func (p *Policy) checkURL(u *url.URL) (routed bool, err error) {
	hostport, err := dialAddress(u)
	if err != nil {
		return false, fmt.Errorf("%w: %w", err, errdefs.ErrInvalidArgument)
	}
	if p.routed(u) {
		return true, nil
	}
	host, port, err := splitHostPort(hostport)
	if err != nil {
		return false, fmt.Errorf("%w: %w", err, errdefs.ErrInvalidArgument)
	}
	var refused *RefusedError
	if ip, ok := parseIP(host); ok {
		refused = p.decide("", ip, port)
	} else {
		refused = p.decide(canonicalName(host), netip.Addr{}, port)
	}
	if refused != nil {
		return false, refused
	}
	return false, nil
}

// Check says whether the policy lets a fetch of u through, resolving its
// host: for what must be decided before connecting (a cached copy is
// used only if the URL may be fetched). A name that does not resolve is
// left to the fetch, whose connection is checked anyway.
func (p *Policy) Check(ctx context.Context, u *url.URL) error {
	routed, err := p.checkURL(u)
	if err != nil || routed {
		return err
	}
	hostport, _ := dialAddress(u)
	host, port, _ := splitHostPort(hostport)
	if _, isIP := parseIP(host); isIP {
		return nil // checkURL decided
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil
	}
	for _, ip := range addrs {
		if refused := p.decide(canonicalName(host), ip.WithZone("").Unmap(), port); refused != nil {
			return refused
		}
	}
	return nil
}
