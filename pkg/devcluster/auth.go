package devcluster

import (
	"crypto/subtle"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
)

// The HTTP authentication realms of a Mesos master and agent
// (src/master/constants.hpp, src/slave/constants.hpp): each endpoint
// belongs to one, and a realm authenticates only when its flag is on.
const (
	realmFrameworks    = "mesos-master-scheduler" // --authenticate_http_frameworks: /api/v1/scheduler
	realmReadwrite     = "mesos-master-readwrite" // --authenticate_http_readwrite: /api/v1
	realmReadonly      = "mesos-master-readonly"  // --authenticate_http_readonly: /master/state, /master/tasks, /master/frameworks
	realmAgentReadonly = "mesos-agent-readonly"   // the agent's --authenticate_http_readonly: /files/*
)

// security is what the cluster's config makes of TLS and authentication.
type security struct {
	tls *tls.Config // nil: plain HTTP
	// secrets by principal, from Config.Credentials.
	secrets map[string]string
	// realms that authenticate.
	realms map[string]bool
}

func loadSecurity(cfg Config) (security, error) {
	var s security
	if cfg.SSLCertFile != "" {
		cert, err := tls.LoadX509KeyPair(cfg.SSLCertFile, cfg.SSLKeyFile)
		if err != nil {
			return s, fmt.Errorf("ssl_cert_file/ssl_key_file: %v: %w", err, errdefs.ErrInvalidArgument)
		}
		s.tls = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	s.realms = map[string]bool{
		realmFrameworks: cfg.AuthenticateHTTPFrameworks, realmReadwrite: cfg.AuthenticateHTTPReadwrite,
		realmReadonly: cfg.AuthenticateHTTPReadonly, realmAgentReadonly: cfg.AuthenticateHTTPReadonly,
	}
	if cfg.Credentials == "" {
		for _, realm := range []string{realmFrameworks, realmReadwrite, realmReadonly} {
			if s.realms[realm] {
				// As the master refuses to start.
				return s, fmt.Errorf("no credentials provided for the default 'basic' HTTP authenticator for realm '%s': %w", realm, errdefs.ErrInvalidArgument)
			}
		}
		return s, nil
	}
	data, err := os.ReadFile(cfg.Credentials)
	if err != nil {
		return s, fmt.Errorf("credentials: %w", err)
	}
	// The master's --credentials file (src/credentials/credentials.hpp).
	var file struct {
		Credentials []struct {
			Principal string `json:"principal"`
			Secret    string `json:"secret"`
		} `json:"credentials"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		return s, fmt.Errorf("credentials %s: invalid json format: %v: %w", cfg.Credentials, err, errdefs.ErrInvalidArgument)
	}
	s.secrets = map[string]string{}
	for _, c := range file.Credentials {
		s.secrets[c.Principal] = c.Secret
	}
	return s, nil
}

// listen makes ln serve TLS when the cluster does (no downgrade: a plain
// HTTP client fails the handshake).
func (s security) listen(ln net.Listener) net.Listener {
	if s.tls == nil {
		return ln
	}
	return tls.NewListener(ln, s.tls)
}

// scheme is how the cluster serves: http or https.
func (s security) scheme() string {
	if s.tls != nil {
		return "https"
	}
	return "http"
}

// authenticated serves h once the request authenticates in realm, when
// the realm authenticates at all (libprocess' BasicAuthenticator): a
// missing, malformed or wrong credential gets 401 with a Basic
// challenge naming the realm. h learns the principal, "" when the realm
// does not authenticate.
func (s security) authenticated(realm string, h func(w http.ResponseWriter, r *http.Request, principal string)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.realms[realm] {
			h(w, r, "")
			return
		}
		principal, ok := s.principalOf(r)
		if !ok {
			w.Header().Set("WWW-Authenticate", `Basic realm="`+realm+`"`)
			writeHTTPError(w, &httpError{http.StatusUnauthorized, "401 Unauthorized."})
			return
		}
		h(w, r, principal)
	}
}

// principalOf checks the request's Basic credential as libprocess does:
// exactly "Basic <base64>", decoding to exactly one ':' between a known
// principal and its secret.
func (s security) principalOf(r *http.Request) (string, bool) {
	scheme, encoded, found := strings.Cut(r.Header.Get("Authorization"), " ")
	if !found || scheme != "Basic" || strings.Contains(encoded, " ") {
		return "", false
	}
	decoded, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		return "", false
	}
	parts := strings.Split(string(decoded), ":")
	if len(parts) != 2 {
		return "", false
	}
	secret, known := s.secrets[parts[0]]
	if !known || subtle.ConstantTimeCompare([]byte(secret), []byte(parts[1])) != 1 {
		return "", false
	}
	return parts[0], true
}

// ignoringPrincipal adapts a handler that does not care who calls.
func ignoringPrincipal(h http.HandlerFunc) func(http.ResponseWriter, *http.Request, string) {
	return func(w http.ResponseWriter, r *http.Request, _ string) { h(w, r) }
}
