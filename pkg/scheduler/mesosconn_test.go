package scheduler_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/internal/testlog"
	"github.com/bcs-mesos/bcs-mesos/internal/testpki"
	"github.com/bcs-mesos/bcs-mesos/pkg/devcluster"
	"github.com/bcs-mesos/bcs-mesos/pkg/mesosconn"
)

const (
	principal   = "bcs"
	rightSecret = "right-secret-5b1e"
	wrongSecret = "wrong-secret-9d7c"
)

// securedSystem is a system whose dev cluster serves HTTPS only and
// authenticates frameworks and the operator API against a credentials
// file holding principal's rightSecret, as a Mesos 1.12 master with
// LIBPROCESS_SSL_ENABLED, --authenticate_http_frameworks
// --http_framework_authenticators=basic --authenticate_http_readwrite
// --credentials. The driver trusts the cluster's CA and authenticates
// as principal with the secret in secretFile, initially secret; its log
// is recorded.
func securedSystem(t *testing.T, secret string) (s *system, secretFile string, logs func() string) {
	t.Helper()
	ca := testpki.NewCA(t, "mesos CA")
	server := ca.Issue(t, "mesos")
	dir := t.TempDir()
	creds := filepath.Join(dir, "credentials.json")
	writeSecret(t, creds, fmt.Sprintf(`{"credentials":[{"principal":%q,"secret":%q}]}`, principal, rightSecret))
	secretFile = filepath.Join(dir, "secret")
	writeSecret(t, secretFile, secret+"\n")
	s = newSystemWith(t, func(cfg *devcluster.Config) {
		cfg.SSLCertFile, cfg.SSLKeyFile = server.CertFile, server.KeyFile
		cfg.Credentials, cfg.AuthenticateHTTPFrameworks, cfg.AuthenticateHTTPReadwrite = creds, true, true
	})
	s.logger, logs = testlog.Recorded(t)
	s.mesos = mesosconn.Config{TLS: &tls.Config{RootCAs: ca.Pool()}, Principal: principal, SecretFile: secretFile}
	return s, secretFile, logs
}

func writeSecret(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TLS to Mesos and framework authentication: over HTTPS with the
// framework's credential, the driver subscribes as its principal, runs
// an application and lists the agents through the operator API (which
// authenticates too: --authenticate_http_readwrite).
func TestDriverOverTLSWithAFrameworkCredential(t *testing.T) {
	s, _, logs := securedSystem(t, rightSecret)
	s.startDriver()
	if _, err := s.reg.CreateApp(context.Background(), processApp("game", 3)); err != nil {
		t.Fatal(err)
	}
	s.running("game", 3)
	frameworks := s.cluster.State()["frameworks"].([]any)
	if len(frameworks) != 1 || frameworks[0].(map[string]any)["principal"] != principal {
		t.Errorf("frameworks %v, want one of principal %q", frameworks, principal)
	}
	s.eventually("the master's view of the agents (GET_AGENTS)", func() (bool, string) {
		agents, err := s.reg.ListAgents(context.Background())
		if err != nil || len(agents) != 3 {
			return false, fmt.Sprint(agents, err)
		}
		return agents[0].Master != nil && agents[0].Master.Total.CPUs > 0, fmt.Sprintf("%+v", agents[0].Master)
	})
	if strings.Contains(logs(), rightSecret) {
		t.Errorf("the secret is in the log")
	}
}

// A master refusing the credential is an error naming the
// principal, never the secret; the driver keeps subscribing with its
// backoff (500ms, then doubling) instead of ending, and reads the secret
// file again each time: once it holds the right secret, it subscribes.
func TestDriverRetriesARefusedCredentialAndRereadsTheSecret(t *testing.T) {
	s, secretFile, logs := securedSystem(t, wrongSecret)
	s.startDriver()
	refused := regexp.MustCompile(`msg="mesos subscription ended" master=\S+ err="master \S+ refused the credential of principal \\"bcs\\" [^\n]*401 Unauthorized\.[^\n]*" retry_in=(\S+)`)
	s.eventually("two refused subscriptions", func() (bool, string) {
		return len(refused.FindAllString(logs(), -1)) >= 2, logs()
	})
	retries := refused.FindAllStringSubmatch(logs(), -1)
	if retries[0][1] != "500ms" || retries[1][1] != "1s" {
		t.Errorf("retried in %s then %s, want 500ms then 1s", retries[0][1], retries[1][1])
	}
	select {
	case err := <-s.done:
		t.Fatalf("the driver ended: %v", err)
	default:
	}
	if n := len(s.cluster.Frameworks()); n != 0 {
		t.Fatalf("%d frameworks registered with a wrong secret", n)
	}

	writeSecret(t, secretFile, rightSecret)
	s.eventually("subscribed with the rotated secret", func() (bool, string) {
		return len(s.cluster.Frameworks()) == 1, fmt.Sprint(s.cluster.Frameworks())
	})
	for _, secret := range []string{wrongSecret, rightSecret} {
		if strings.Contains(logs(), secret) {
			t.Errorf("a secret is in the log: %q", secret)
		}
	}
}

// A master whose certificate the driver cannot verify (no
// --mesos-cacert, and the system's CAs do not know it) is said so.
func TestDriverSaysWhenItCannotVerifyTheMaster(t *testing.T) {
	s, _, logs := securedSystem(t, rightSecret)
	s.mesos.TLS = nil
	s.startDriver()
	s.eventually("the verification failure", func() (bool, string) {
		return strings.Contains(logs(), "cannot verify its TLS certificate (--mesos-cacert names the CA that signed it)") &&
			strings.Contains(logs(), "x509: certificate signed by unknown authority"), logs()
	})
}
