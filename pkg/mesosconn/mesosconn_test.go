package mesosconn_test

import (
	"crypto/tls"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/internal/testpki"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/mesosconn"
)

// The HTTP client of the operator and files APIs: it verifies the
// server by the given CA, sends the principal's credential read from its
// file at each request (a rotated file takes effect at once), and
// without a readable secret sends nothing, saying whose secret, not what
// it is.
func TestHTTPClientVerifiesAndAuthenticates(t *testing.T) {
	ca := testpki.NewCA(t, "mesos CA")
	kp := ca.Issue(t, "master")
	cert, err := tls.LoadX509KeyPair(kp.CertFile, kp.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, password, ok := r.BasicAuth()
		mu.Lock()
		seen = append(seen, user+":"+password)
		mu.Unlock()
		if !ok {
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.StartTLS()
	t.Cleanup(srv.Close)

	secretFile := filepath.Join(t.TempDir(), "secret")
	write := func(s string) {
		if err := os.WriteFile(secretFile, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("first-secret\n")
	conn := mesosconn.Config{TLS: &tls.Config{RootCAs: ca.Pool()}, Principal: "bcs", SecretFile: secretFile}
	client := conn.HTTPClient(5 * time.Second)
	get := func() error {
		resp, err := client.Get(srv.URL)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	if err := get(); err != nil {
		t.Fatal(err)
	}
	write("rotated-secret")
	if err := get(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if len(seen) != 2 || seen[0] != "bcs:first-secret" || seen[1] != "bcs:rotated-secret" {
		t.Errorf("credentials seen %q, want the first secret then the rotated one", seen)
	}
	mu.Unlock()

	write("  \n")
	err = get()
	if !errors.Is(err, errdefs.ErrInvalidArgument) || !strings.Contains(err.Error(), `the secret of Mesos principal "bcs": --mesos-secret-file `+secretFile+" is empty") {
		t.Errorf("with an empty secret file: %v", err)
	}
	mu.Lock()
	if len(seen) != 2 {
		t.Errorf("a request went out without a secret: %q", seen)
	}
	mu.Unlock()

	// A client that does not know the CA refuses the server.
	if _, err := (mesosconn.Config{}).HTTPClient(5 * time.Second).Get(srv.URL); err == nil || !strings.Contains(err.Error(), "certificate signed by unknown authority") {
		t.Errorf("without the CA: %v, want the certificate refused", err)
	}
}
