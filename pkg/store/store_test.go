package store_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
	"github.com/bcs-mesos/bcs-mesos/pkg/store/storetest"
)

var _ storetest.Cluster = (*store.Embedded)(nil)

// Issue: "Default: an embedded single-node etcd". The conformance suite
// against the in-process server.
func TestConformanceEmbedded(t *testing.T) {
	storetest.Run(t, startEmbedded(t, t.TempDir()))
}

// Issue: "external endpoints switch to an external cluster. SAME code path
// for both". The same suite against the Debian etcd-server binary.
func TestConformanceEtcdBinary(t *testing.T) {
	storetest.Run(t, storetest.StartEtcdBinary(t))
}

// Issue: "etcd unreachable/timeouts → ErrUnavailable", within a bounded
// time: Open against a port nobody listens on.
func TestOpenUnreachableIsUnavailable(t *testing.T) {
	endpoint := "http://" + freeAddr(t)
	start := time.Now()
	_, err := store.Open(context.Background(), store.Config{Endpoints: []string{endpoint}, DialTimeout: time.Second})
	if !errors.Is(err, errdefs.ErrUnavailable) {
		t.Fatalf("Open(%s) = %v, want %v", endpoint, err, errdefs.ErrUnavailable)
	}
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Fatalf("Open took %s with a 1s dial timeout", elapsed)
	}
}

func TestOpenRejectsBadConfig(t *testing.T) {
	for name, cfg := range map[string]store.Config{
		"no endpoints":         {},
		"prefix without slash": {Endpoints: []string{"http://127.0.0.1:1"}, Prefix: "/bcs"},
	} {
		if _, err := store.Open(context.Background(), cfg); !errors.Is(err, errdefs.ErrInvalidArgument) {
			t.Errorf("%s: Open = %v, want %v", name, err, errdefs.ErrInvalidArgument)
		}
	}
}

func startEmbedded(t *testing.T, dir string, opts ...store.EmbeddedOption) *store.Embedded {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e, err := store.StartEmbedded(ctx, dir, opts...)
	if err != nil {
		t.Fatalf("StartEmbedded: %v", err)
	}
	t.Cleanup(e.Close)
	return e
}

// freeAddr returns a 127.0.0.1 address nobody listens on right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
