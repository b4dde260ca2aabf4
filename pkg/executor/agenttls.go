package executor

import (
	"crypto/tls"
	"fmt"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/tlsfiles"
)

// AgentTLS is how to reach an agent that serves HTTPS, as libprocess
// reads it from the environment (docs/ssl.md; each variable also with
// its legacy prefix SSL_ instead of LIBPROCESS_SSL_), which an agent
// passes on to its executors through --executor_environment_variables:
// LIBPROCESS_SSL_ENABLED true (or 1) speaks HTTPS;
// LIBPROCESS_SSL_VERIFY_SERVER_CERT (or its legacy VERIFY_CERT,
// REQUIRE_CERT) then verifies the agent's certificate by the CAs of
// LIBPROCESS_SSL_CA_FILE, or by the system's. Nil: plain HTTP.
func AgentTLS(getenv func(string) string) (*tls.Config, error) {
	setting := func(name string) string {
		if v := getenv("LIBPROCESS_SSL_" + name); v != "" {
			return v
		}
		return getenv("SSL_" + name)
	}
	on := func(name string) bool { v := setting(name); return v == "true" || v == "1" }
	if !on("ENABLED") {
		return nil, nil
	}
	if !on("VERIFY_SERVER_CERT") && !on("VERIFY_CERT") && !on("REQUIRE_CERT") {
		// As libprocess: the agent must show a certificate, which is
		// not verified.
		return &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}, nil //nolint:gosec // as libprocess without LIBPROCESS_SSL_VERIFY_SERVER_CERT
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca := setting("CA_FILE"); ca != "" {
		var err error
		if cfg.RootCAs, err = tlsfiles.CertPool(ca); err != nil {
			return nil, fmt.Errorf("LIBPROCESS_SSL_CA_FILE: %w", err)
		}
	}
	if cfg.RootCAs == nil && setting("CA_DIR") != "" {
		return nil, fmt.Errorf("LIBPROCESS_SSL_CA_DIR is not supported, use LIBPROCESS_SSL_CA_FILE: %w", errdefs.ErrInvalidArgument)
	}
	return cfg, nil
}
