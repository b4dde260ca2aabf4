package executor_test

import (
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bcsexec "github.com/bcs-mesos/bcs-mesos/pkg/executor"
)

// The libprocess settings (docs/ssl.md) an executor reads: nothing or
// LIBPROCESS_SSL_ENABLED=false is plain HTTP; enabled without
// verification shakes hands with any certificate, as libprocess does;
// LIBPROCESS_SSL_VERIFY_SERVER_CERT (or a legacy alias, or the legacy
// SSL_ prefix) verifies by LIBPROCESS_SSL_CA_FILE, or the system's CAs.
func TestAgentTLSFromTheEnvironment(t *testing.T) {
	a := newFakeAgentTLS(t)
	caFile := writeCA(t, a)
	for _, tc := range []struct {
		name      string
		env       map[string]string
		https     bool
		verifies  bool
		ownCA     bool
		errorSays string
	}{
		{name: "nothing"},
		{name: "disabled", env: map[string]string{"LIBPROCESS_SSL_ENABLED": "false"}},
		{name: "enabled", env: map[string]string{"LIBPROCESS_SSL_ENABLED": "true"}, https: true},
		{name: "enabled and verified by the system's CAs", env: map[string]string{"LIBPROCESS_SSL_ENABLED": "1", "LIBPROCESS_SSL_VERIFY_SERVER_CERT": "true"}, https: true, verifies: true},
		{name: "verified by a CA file", env: map[string]string{"LIBPROCESS_SSL_ENABLED": "true", "LIBPROCESS_SSL_VERIFY_SERVER_CERT": "1", "LIBPROCESS_SSL_CA_FILE": caFile},
			https: true, verifies: true, ownCA: true},
		{name: "legacy names", env: map[string]string{"SSL_ENABLED": "true", "SSL_REQUIRE_CERT": "true", "SSL_CA_FILE": caFile},
			https: true, verifies: true, ownCA: true},
		{name: "a CA file that is not there", env: map[string]string{"LIBPROCESS_SSL_ENABLED": "true", "LIBPROCESS_SSL_VERIFY_CERT": "true", "LIBPROCESS_SSL_CA_FILE": "/nonexistent/ca.pem"},
			errorSays: "LIBPROCESS_SSL_CA_FILE: open /nonexistent/ca.pem"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := bcsexec.AgentTLS(func(name string) string { return tc.env[name] })
			switch {
			case tc.errorSays != "":
				if err == nil || !strings.Contains(err.Error(), tc.errorSays) {
					t.Fatalf("AgentTLS = %v, want an error saying %q", err, tc.errorSays)
				}
			case err != nil:
				t.Fatal(err)
			case (cfg != nil) != tc.https:
				t.Fatalf("AgentTLS = %+v, want HTTPS %v", cfg, tc.https)
			case cfg != nil && (cfg.InsecureSkipVerify == tc.verifies || (cfg.RootCAs != nil) != tc.ownCA):
				t.Fatalf("AgentTLS verifies %v with own CAs %v, want %v and %v", !cfg.InsecureSkipVerify, cfg.RootCAs != nil, tc.verifies, tc.ownCA)
			}
		})
	}
}

// An executor of an agent that serves HTTPS only subscribes and sends
// its updates over it, verifying the agent by LIBPROCESS_SSL_CA_FILE.
func TestDriverSpeaksHTTPSToItsAgent(t *testing.T) {
	a := newFakeAgentTLS(t)
	env := map[string]string{"LIBPROCESS_SSL_ENABLED": "true", "LIBPROCESS_SSL_VERIFY_SERVER_CERT": "true", "LIBPROCESS_SSL_CA_FILE": writeCA(t, a)}
	agentTLS, err := bcsexec.AgentTLS(func(name string) string { return env[name] })
	if err != nil {
		t.Fatal(err)
	}
	startDriver(t, a, newFakeRuntime(), func(cfg *bcsexec.Config) { cfg.AgentTLS = agentTLS })
	a.waitFor("SUBSCRIBE over HTTPS", func() bool { return len(a.subscribes) == 1 })
	a.send(launchGroupEvent(processTask("t1", nil)))
	if st := a.awaitUpdate(0); st.TaskID.Value != "t1" {
		t.Fatalf("update %+v", st)
	}
}

// writeCA writes the certificate of a's test server, its own CA, as a
// PEM file.
func writeCA(t *testing.T, a *fakeAgent) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ca.pem")
	data := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: a.srv.Certificate().Raw})
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
