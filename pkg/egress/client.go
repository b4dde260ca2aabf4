package egress

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// ClientOptions shape Policy.Client.
type ClientOptions struct {
	// TLS configures https; nil: the system's roots.
	TLS *tls.Config
	// FollowRedirects follows up to maxRedirects redirects, each checked
	// as the first request; false: a redirect is the answer.
	FollowRedirects bool
}

// maxRedirects is how many redirects a client follows, as Go's default.
const maxRedirects = 10

// Client returns an HTTP client held to the policy: every request's URL
// (redirects included) is checked before it is sent, every connection as
// it is made. It takes no proxy from the environment — a proxy would
// connect in its stead — and keeps no idle connection, so each request
// connects, and is checked, anew. It has no timeout: each call has its
// caller's.
func (p *Policy) Client(o ClientOptions) *http.Client {
	transport := &http.Transport{
		DialContext:           p.DialContext,
		TLSClientConfig:       o.TLS,
		DisableKeepAlives:     true,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	client := &http.Client{Transport: &guardedTransport{policy: p, next: transport}}
	if o.FollowRedirects {
		client.CheckRedirect = func(_ *http.Request, via []*http.Request) error {
			if len(via) >= maxRedirects {
				return fmt.Errorf("stopped after %d redirects", maxRedirects)
			}
			return nil // the transport checks the redirect's URL
		}
	} else {
		client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	}
	return client
}

// guardedTransport checks each request's URL before next sends it, and
// tells next's dialer the address a route lets through. It sees every
// request the client sends, a redirect's as the first, and those of
// clients built on it (Prometheus's).
type guardedTransport struct {
	policy *Policy
	next   http.RoundTripper
}

func (t *guardedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	routed, err := t.policy.checkURL(req.URL)
	if err != nil {
		closeBody(req)
		return nil, redirected(req, err)
	}
	routedTo := ""
	if routed {
		routedTo, _ = dialAddress(req.URL)
	}
	// Set afresh on every request: a redirect carries the first
	// request's context, never this one's.
	resp, err := t.next.RoundTrip(req.WithContext(context.WithValue(req.Context(), routeKey{}, routedTo)))
	if refused := (*RefusedError)(nil); errors.As(err, &refused) {
		return nil, redirected(req, refused) // without the dial's wrapping, which says it again
	}
	return resp, err
}

// redirected says that a refused request was a redirect's.
func redirected(req *http.Request, err error) error {
	if req.Response == nil {
		return err
	}
	return fmt.Errorf("redirect to %s: %w", req.URL.Redacted(), err)
}

// closeBody closes a request's body that will not be sent, as a
// RoundTripper must.
func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}
