package store

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
)

// tlsRefusal says why etcd's https:// endpoints refuse this client, once
// Open could not reach any: a server certificate cfg cannot verify, or a
// client certificate etcd wants and did not get or does not trust (with
// TLS 1.3 it says so only after the handshake, in an alert). The etcd
// client would only time out. Nil when one of them accepts a handshake,
// none is https://, or none answers at all (that is for Open to say). The
// error wraps errdefs.ErrUnauthenticated.
func tlsRefusal(ctx context.Context, endpoints []string, cfg *tls.Config, timeout time.Duration) error {
	var refusal error
	for _, ep := range endpoints {
		u, err := url.Parse(ep)
		if err != nil || u.Scheme != "https" {
			continue
		}
		err = tryHandshake(ctx, u.Host, cfg, timeout)
		var opErr *net.OpError
		var verifyErr *tls.CertificateVerificationError
		switch {
		case err == nil:
			return nil
		case errors.As(err, &opErr) && opErr.Op == "dial":
			continue // not reached at all
		case refusal != nil:
		case errors.As(err, &verifyErr):
			refusal = fmt.Errorf("etcd %s: cannot verify its TLS certificate: %w: %w", ep, errdefs.ErrUnauthenticated, err)
		case errors.As(err, &opErr) && opErr.Op == "remote error":
			refusal = fmt.Errorf("etcd %s refused this client in the TLS handshake (it wants a client certificate signed by a CA it trusts): %w: %w", ep, errdefs.ErrUnauthenticated, err)
		default:
			refusal = fmt.Errorf("etcd %s: TLS: %w: %w", ep, errdefs.ErrUnauthenticated, err)
		}
	}
	return refusal
}

// tryHandshake shakes hands with host as gRPC would (ALPN h2) and waits a
// moment for the server's first word: its HTTP/2 settings when it accepts
// the client, an alert when it refuses its certificate.
func tryHandshake(ctx context.Context, host string, cfg *tls.Config, timeout time.Duration) error {
	if cfg == nil {
		cfg = &tls.Config{}
	}
	cfg = cfg.Clone()
	cfg.NextProtos = []string{"h2"}
	if cfg.ServerName == "" {
		cfg.ServerName, _, _ = net.SplitHostPort(host)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	dialer := &tls.Dialer{Config: cfg}
	conn, err := dialer.DialContext(ctx, "tcp", host)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := conn.SetReadDeadline(time.Now().Add(min(timeout, time.Second))); err != nil {
		return err
	}
	if _, err := conn.Read(make([]byte, 1)); err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
		return err
	}
	return nil
}
