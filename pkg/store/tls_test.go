package store_test

import (
	"context"
	"crypto/tls"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/internal/testpki"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
	"github.com/bcs-mesos/bcs-mesos/pkg/store/storetest"
)

// TLS for etcd clients: against the etcd binary serving https:// with
// client certificate authentication (--client-cert-auth
// --trusted-ca-file), a store with the CA and a client certificate
// writes, reads and campaigns; without the client certificate, or
// without the CA that verifies etcd, Open fails within its dial timeout
// saying which side refused, as errdefs.ErrUnauthenticated.
func TestOpenOverTLSWithClientCertificates(t *testing.T) {
	ca := testpki.NewCA(t, "etcd CA")
	server, client := ca.Issue(t, "etcd"), ca.Issue(t, "bcs-scheduler")
	cert, err := tls.LoadX509KeyPair(client.CertFile, client.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	good := &tls.Config{RootCAs: ca.Pool(), Certificates: []tls.Certificate{cert}}
	etcd := storetest.StartEtcdBinaryTLS(t, storetest.EtcdTLS{CertFile: server.CertFile, KeyFile: server.KeyFile, ClientCAFile: ca.CertFile, Client: good})
	if !strings.HasPrefix(etcd.Endpoints()[0], "https://") {
		t.Fatalf("endpoint %s, want https://", etcd.Endpoints()[0])
	}

	ctx := context.Background()
	s, err := store.Open(ctx, store.Config{Endpoints: etcd.Endpoints(), TLS: good})
	if err != nil {
		t.Fatalf("Open with the CA and a client certificate: %v", err)
	}
	defer s.Close()
	if _, err := s.Create(ctx, "apps/ns/web", []byte(`{"v":1}`)); err != nil {
		t.Fatal(err)
	}
	if e, err := s.Get(ctx, "apps/ns/web"); err != nil || string(e.Value) != `{"v":1}` {
		t.Fatalf("Get = %q, %v", e.Value, err)
	}
	election, err := s.NewElection(ctx, "scheduler", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := election.Campaign(ctx, "me"); err != nil {
		t.Fatalf("Campaign over TLS: %v", err)
	}

	otherCA := testpki.NewCA(t, "someone else's CA")
	mallory := otherCA.Issue(t, "mallory")
	otherCert, err := tls.LoadX509KeyPair(mallory.CertFile, mallory.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		tls  *tls.Config
		says string
	}{
		{"no client certificate", &tls.Config{RootCAs: ca.Pool()}, "refused this client in the TLS handshake"},
		{"a client certificate of another CA", &tls.Config{RootCAs: ca.Pool(), Certificates: []tls.Certificate{otherCert}}, "refused this client in the TLS handshake"},
		{"no CA: the system's do not know etcd's", &tls.Config{Certificates: []tls.Certificate{cert}}, "cannot verify its TLS certificate: unauthenticated: tls: failed to verify certificate: x509: certificate signed by unknown authority"},
		{"no TLS settings at all", nil, "cannot verify its TLS certificate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			_, err := store.Open(ctx, store.Config{Endpoints: etcd.Endpoints(), TLS: tc.tls, DialTimeout: time.Second})
			if !errors.Is(err, errdefs.ErrUnauthenticated) || !strings.Contains(err.Error(), tc.says) || !strings.Contains(err.Error(), etcd.Endpoints()[0]) {
				t.Fatalf("Open = %v, want %v naming %s and saying %q", err, errdefs.ErrUnauthenticated, etcd.Endpoints()[0], tc.says)
			}
			if elapsed := time.Since(start); elapsed > 5*time.Second {
				t.Errorf("Open took %s with a 1s dial timeout", elapsed)
			}
		})
	}
}
