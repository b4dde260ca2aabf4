package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"syscall"
)

// dialingKey carries, to the dialer's Control, the name a connection was
// asked for and whether a route lets it through.
type dialingKey struct{}

type dialing struct {
	name   string
	routed bool
}

// routeKey carries, from the transport to its dialer, the address a
// request's route lets through ("" for none).
type routeKey struct{}

// DialContext connects to address (host:port) as net.Dialer does,
// refusing what the policy refuses: each address the name resolves to is
// checked as it is connected to. A request the HTTP client let through
// by a route connects to its own host:port. A refusal is returned as the
// RefusedError itself, which names the address already.
func (p *Policy) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	name := canonicalName(host)
	if _, isIP := parseIP(host); isIP {
		name = ""
	}
	routedTo, _ := ctx.Value(routeKey{}).(string)
	ctx = context.WithValue(ctx, dialingKey{}, dialing{name: name, routed: routedTo != "" && strings.EqualFold(routedTo, address)})
	d := net.Dialer{ControlContext: p.control}
	conn, err := d.DialContext(ctx, network, address)
	if refused := (*RefusedError)(nil); errors.As(err, &refused) {
		return nil, refused
	}
	return conn, err
}

// control runs before each connect, with the address connected to.
func (p *Policy) control(ctx context.Context, _, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("egress: the address %q: %w", address, err)
	}
	d, _ := ctx.Value(dialingKey{}).(dialing)
	if d.routed {
		return nil
	}
	if refused := p.decide(d.name, ap.Addr().WithZone("").Unmap(), ap.Port()); refused != nil {
		return refused
	}
	return nil
}
