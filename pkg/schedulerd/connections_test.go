package schedulerd_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/internal/testlog"
	"github.com/bcs-mesos/bcs-mesos/internal/testpki"
	"github.com/bcs-mesos/bcs-mesos/pkg/devcluster"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/schedulerd"
	"github.com/bcs-mesos/bcs-mesos/pkg/store/storetest"
)

// TLS for etcd clients: bcs-scheduler on the etcd binary
// serving https:// with client certificate authentication
// (--client-cert-auth --trusted-ca-file) stores and reads through it and
// leads (the election is an etcd client too); `rotate-key` reaches it
// with the same flags. Without the client certificate, or without the CA
// that verifies etcd, it does not start, saying why and which flags.
func TestRunOnATLSEtcdWithClientCertificates(t *testing.T) {
	ca := testpki.NewCA(t, "etcd CA")
	server, client := ca.Issue(t, "etcd"), ca.Issue(t, "bcs-scheduler")
	cert, err := tls.LoadX509KeyPair(client.CertFile, client.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	etcd := storetest.StartEtcdBinaryTLS(t, storetest.EtcdTLS{CertFile: server.CertFile, KeyFile: server.KeyFile, ClientCAFile: ca.CertFile,
		Client: &tls.Config{RootCAs: ca.Pool(), Certificates: []tls.Certificate{cert}}})
	cluster, err := devcluster.Start(context.Background(), devcluster.Config{ListenAddr: "127.0.0.1:0", WorkDir: t.TempDir(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Stop)
	keyFile := filepath.Join(t.TempDir(), "secret.key")
	good := schedulerd.EtcdTLS{CACert: ca.CertFile, Cert: client.CertFile, Key: client.KeyFile}
	options := func(etcdTLS schedulerd.EtcdTLS) schedulerd.Options {
		return schedulerd.Options{EtcdEndpoints: etcd.Endpoints(), EtcdTLS: etcdTLS, Masters: []string{cluster.MasterURL()},
			DataDir: t.TempDir(), SecretKeyFile: keyFile}
	}

	addr, stop, err := runInProcess(t, options(good))
	if err != nil {
		t.Fatalf("Run on the TLS etcd: %v", err)
	}
	eventually(t, "leading", func() (bool, string) {
		var v leaderView
		getJSON(t, "http://"+addr+"/v1/leader", &v)
		return v.Self, fmt.Sprintf("%+v", v)
	})
	post(t, "http://"+addr+"/v1/secrets", `{"apiVersion":"v4","kind":"secret","metadata":{"name":"db","namespace":"ns-a"},"datas":{"password":{"content":"aHVudGVyMg=="}}}`)
	if code := getJSON(t, "http://"+addr+"/v1/secrets/ns-a/db", nil); code != http.StatusOK {
		t.Fatalf("GET the secret: %d", code)
	}
	stop()
	r, err := schedulerd.RotateKey(context.Background(), schedulerd.RotateKeyOptions{EtcdEndpoints: etcd.Endpoints(), EtcdTLS: good,
		SecretKeyFile: keyFile, NewKeyFile: filepath.Join(t.TempDir(), "new.key")})
	if err != nil || r.Resealed != 1 {
		t.Fatalf("RotateKey on the TLS etcd: %+v, %v; want the one secret re-sealed", r, err)
	}

	for _, tc := range []struct {
		name string
		tls  schedulerd.EtcdTLS
		says string
	}{
		{"without the client certificate", schedulerd.EtcdTLS{CACert: ca.CertFile}, "refused this client in the TLS handshake"},
		{"without the CA", schedulerd.EtcdTLS{Cert: client.CertFile, Key: client.KeyFile}, "cannot verify its TLS certificate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			_, _, err := runInProcess(t, options(tc.tls))
			if !errors.Is(err, errdefs.ErrUnauthenticated) || !strings.Contains(err.Error(), tc.says) || !strings.Contains(err.Error(), etcd.Endpoints()[0]) ||
				!strings.Contains(err.Error(), "--etcd-cacert names the CA that signed etcd's certificate; --etcd-cert and --etcd-key the client certificate etcd wants") {
				t.Fatalf("Run = %v, want %v naming the endpoint and the flags, saying %q", err, errdefs.ErrUnauthenticated, tc.says)
			}
			if elapsed := time.Since(start); elapsed > 15*time.Second {
				t.Errorf("Run took %s to fail", elapsed)
			}
		})
	}
}

// A framework secret for http:// masters would go in clear:
// the start says so (it does not refuse: Mesos takes Basic credentials
// over HTTP).
func TestRunWarnsOfASecretInClear(t *testing.T) {
	cluster, err := devcluster.Start(context.Background(), devcluster.Config{ListenAddr: "127.0.0.1:0", WorkDir: t.TempDir(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Stop)
	logger, logs := testlog.Recorded(t)
	_, stop, err := runInProcess(t, schedulerd.Options{DataDir: t.TempDir(), Masters: []string{cluster.MasterURL()},
		MesosPrincipal: "bcs", MesosSecretFile: writeFile(t, "secret", "in-clear-secret\n"), Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	stop()
	if !strings.Contains(logs(), `msg="the framework's secret goes to the masters in clear: they are http://, not https://" masters=`+cluster.MasterURL()) {
		t.Errorf("no warning of the secret in clear:\n%s", logs())
	}
	if !strings.Contains(logs(), `msg="the framework authenticates to Mesos" principal=bcs secret_file=`) || strings.Contains(logs(), "in-clear-secret") {
		t.Errorf("the log does not name the principal, or shows the secret:\n%s", logs())
	}
}
