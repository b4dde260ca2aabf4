package storetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// Shared is one embedded etcd and sealer for a whole test binary; each
// test opens its store under a prefix of its own, so tests never see each
// other's keys.
type Shared struct {
	Etcd   *store.Embedded
	Sealer *store.Sealer
	seq    atomic.Int64
}

// RunShared starts s in a temporary directory, runs the tests and stops
// it. From TestMain: os.Exit(storetest.RunShared(m, &shared)).
func RunShared(m *testing.M, s *Shared) int {
	dir, err := os.MkdirTemp("", "bcs-store-shared-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if s.Etcd, err = store.StartEmbedded(ctx, dir); err != nil {
		fmt.Fprintln(os.Stderr, "embedded etcd:", err)
		return 1
	}
	defer s.Etcd.Close()
	if s.Sealer, err = SealerIn(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// Prefix returns a key prefix no other test of the binary uses.
func (s *Shared) Prefix(what string) string {
	return fmt.Sprintf("/%s-%d/", what, s.seq.Add(1))
}

// SealerIn returns the Sealer of the key file <dir>/secret.key, creating
// the key on first use as bcs-scheduler does.
func SealerIn(dir string) (*store.Sealer, error) {
	key, err := store.LoadOrCreateKey(filepath.Join(dir, "secret.key"))
	if err != nil {
		return nil, err
	}
	return store.NewSealer(key)
}

// NewStore starts an embedded etcd of t's own and opens a sealing store
// on it; both stop when t ends.
func NewStore(t testing.TB) (*store.Store, *store.Embedded) {
	t.Helper()
	ctx := context.Background()
	etcd, err := store.StartEmbedded(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(etcd.Close)
	sealer, err := SealerIn(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, store.Config{Endpoints: etcd.Endpoints(), Sealer: sealer})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, etcd
}

// Open opens a sealing store on s under a prefix of what's no other test
// uses; it closes when t ends.
func (s *Shared) Open(t testing.TB, what string) *store.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := store.Open(ctx, store.Config{Endpoints: s.Etcd.Endpoints(), Prefix: s.Prefix(what), Sealer: s.Sealer})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// Apply applies ops in one transaction and returns its revision, failing
// t on an error.
func Apply(t testing.TB, st *store.Store, ops ...store.Op) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rev, err := st.Apply(ctx, ops...)
	if err != nil {
		t.Fatal(err)
	}
	return rev
}
