package mesosconn

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
)

// Config is how to reach a Mesos cluster. The zero value speaks plain
// HTTP, or HTTPS verified by the system's CAs, and sends no credential.
type Config struct {
	// TLS verifies https:// masters and agents; nil: the system's CAs.
	TLS *tls.Config
	// Principal goes into FrameworkInfo.principal and is the user of
	// the HTTP Basic credential; empty: the framework sends none.
	Principal string
	// SecretFile holds the principal's secret (surrounding white space
	// ignored); empty: the principal sends no credential.
	SecretFile string
}

// Authenticates reports whether requests carry a credential.
func (c Config) Authenticates() bool { return c.Principal != "" && c.SecretFile != "" }

// Secret reads the principal's secret from SecretFile.
func (c Config) Secret() (string, error) {
	data, err := os.ReadFile(c.SecretFile)
	if err != nil {
		return "", fmt.Errorf("the secret of Mesos principal %q (--mesos-secret-file): %w", c.Principal, err)
	}
	secret := string(bytes.TrimSpace(data))
	if secret == "" {
		return "", fmt.Errorf("the secret of Mesos principal %q: --mesos-secret-file %s is empty: %w", c.Principal, c.SecretFile, errdefs.ErrInvalidArgument)
	}
	return secret, nil
}

// HTTPClient is a client of the cluster's HTTP APIs (the operator API,
// agents' files API): TLS as Config says, the credential on every
// request (the secret read afresh each time), each request bounded by
// timeout.
func (c Config) HTTPClient(timeout time.Duration) *http.Client {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	if c.TLS != nil {
		transport.TLSClientConfig = c.TLS.Clone()
	}
	var rt http.RoundTripper = transport
	if c.Authenticates() {
		rt = basicAuth{c: c, next: transport}
	}
	return &http.Client{Transport: rt, Timeout: timeout}
}

// basicAuth adds the credential to each request.
type basicAuth struct {
	c    Config
	next http.RoundTripper
}

func (b basicAuth) RoundTrip(req *http.Request) (*http.Response, error) {
	secret, err := b.c.Secret()
	if err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	req = req.Clone(req.Context())
	req.SetBasicAuth(b.c.Principal, secret)
	return b.next.RoundTrip(req)
}

// KeepConns has a transport keep n idle connections to each host, for a
// caller that sends up to n requests at once (the scheduler's calls):
// more than it keeps are opened and closed for each request.
func KeepConns(n int) func(*http.Transport) {
	return func(t *http.Transport) { t.MaxIdleConnsPerHost = n }
}
