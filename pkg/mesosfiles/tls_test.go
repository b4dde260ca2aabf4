package mesosfiles_test

import (
	"context"
	"crypto/tls"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/internal/testlog"
	"github.com/bcs-mesos/bcs-mesos/internal/testpki"
	"github.com/bcs-mesos/bcs-mesos/pkg/devcluster"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/mesosconn"
	"github.com/bcs-mesos/bcs-mesos/pkg/mesosfiles"
)

// An agent serving HTTPS only whose files API authenticates
// (LIBPROCESS_SSL_ENABLED, --authenticate_http_readonly) is read over
// HTTPS with the framework's credential: its 404 comes through; without
// the credential it is a 401; over plain HTTP nothing.
func TestReadFromAnAgentServingHTTPS(t *testing.T) {
	ca := testpki.NewCA(t, "mesos CA")
	server := ca.Issue(t, "agent")
	dir := t.TempDir()
	creds, secretFile := filepath.Join(dir, "credentials.json"), filepath.Join(dir, "secret")
	for file, content := range map[string]string{creds: `{"credentials":[{"principal":"bcs","secret":"files-secret"}]}`, secretFile: "files-secret\n"} {
		if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	c, err := devcluster.Start(context.Background(), devcluster.Config{
		ListenAddr: "127.0.0.1:0", ExecutorMode: devcluster.ExecutorProcess, WorkDir: t.TempDir(), Logger: testlog.New(t),
		Agents:      []devcluster.AgentSpec{{Hostname: "files-tls"}},
		SSLCertFile: server.CertFile, SSLKeyFile: server.KeyFile, Credentials: creds, AuthenticateHTTPReadonly: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	endpoint, err := c.AgentEndpoint(c.Agents()[0])
	if err != nil {
		t.Fatal(err)
	}
	path := mesosfiles.SandboxPath("fw", "no-such-executor", "stdout")
	conn := mesosconn.Config{TLS: &tls.Config{RootCAs: ca.Pool()}, Principal: "bcs", SecretFile: secretFile}
	ctx := context.Background()

	if _, err := (&mesosfiles.Client{HTTP: conn.HTTPClient(mesosfiles.DefaultTimeout), Scheme: "https"}).Size(ctx, endpoint, path); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("over HTTPS with the credential: %v, want ErrNotFound", err)
	}
	anonymous := conn
	anonymous.Principal, anonymous.SecretFile = "", ""
	if _, err := (&mesosfiles.Client{HTTP: anonymous.HTTPClient(mesosfiles.DefaultTimeout), Scheme: "https"}).Size(ctx, endpoint, path); !errors.Is(err, errdefs.ErrUnavailable) || !strings.Contains(err.Error(), "401 Unauthorized") {
		t.Errorf("over HTTPS without the credential: %v, want a 401", err)
	}
	if _, err := (&mesosfiles.Client{HTTP: conn.HTTPClient(mesosfiles.DefaultTimeout)}).Size(ctx, endpoint, path); !errors.Is(err, errdefs.ErrUnavailable) {
		t.Errorf("over plain HTTP: %v, want ErrUnavailable", err)
	}
}
