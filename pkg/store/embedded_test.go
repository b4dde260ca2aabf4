package store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

func openStore(t *testing.T, e *store.Embedded, change ...func(*store.Config)) *store.Store {
	t.Helper()
	cfg := store.Config{Endpoints: e.Endpoints(), ListPageSize: 3}
	for _, f := range change {
		f(&cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := store.Open(ctx, cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func testSealer(t *testing.T, keyFile string) *store.Sealer {
	t.Helper()
	key, err := store.LoadOrCreateKey(keyFile)
	if err != nil {
		t.Fatalf("LoadOrCreateKey: %v", err)
	}
	sealer, err := store.NewSealer(key)
	if err != nil {
		t.Fatalf("NewSealer: %v", err)
	}
	return sealer
}

// Issue: "Data survives Close+restart on the same dir": everything written
// through the store, secrets included, reads back with the same revisions.
func TestEmbeddedRestartKeepsData(t *testing.T) {
	dataDir := t.TempDir()
	keyFile := filepath.Join(dataDir, "secret.key")
	ctx := context.Background()

	first := startEmbedded(t, dataDir)
	s := openStore(t, first, func(c *store.Config) { c.Sealer = testSealer(t, keyFile) })
	appKey := mustKey(t, store.KindApplication, "default", "web")
	versionKey, err := store.AppVersionKey("default", "web", 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Apply(ctx, store.CreateOp(appKey, []byte(`{"instances":2}`)), store.CreateOp(versionKey, []byte(`{"instances":2}`))); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	for i := range 10 {
		if _, err := s.Create(ctx, mustKey(t, store.KindTaskGroup, "default", "web", fmt.Sprintf("tg-%d", i)), []byte("TASK_RUNNING")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Create(ctx, mustKey(t, store.KindSecret, "default", "db"), []byte("hunter2")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, store.FrameworkIDKey, []byte("a3e4b1c2-0000-0000-0000-000000000000-0001")); err != nil {
		t.Fatal(err)
	}
	before, err := s.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	first.Close()

	second := startEmbedded(t, dataDir)
	s = openStore(t, second, func(c *store.Config) { c.Sealer = testSealer(t, keyFile) })
	after, err := s.List(ctx, "")
	if err != nil {
		t.Fatalf("List after restart: %v", err)
	}
	if got, want := describeEntries(after), describeEntries(before); got != want {
		t.Fatalf("after restart\n got %s\nwant %s", got, want)
	}
	if len(after) != 14 {
		t.Fatalf("read back %d entries, want 14", len(after))
	}
	app, err := s.Get(ctx, appKey)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(ctx, appKey, []byte(`{"instances":3}`), app.Revision); err != nil {
		t.Fatalf("Update with a revision read before the restart: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "etcd", "member")); err != nil {
		t.Fatalf("etcd data not under <dataDir>/etcd: %v", err)
	}
}

// Issue: "etcd unreachable/timeouts → ErrUnavailable": requests to a store
// whose etcd went away fail within the request timeout.
func TestRequestsAfterEtcdStopsAreUnavailable(t *testing.T) {
	e := startEmbedded(t, t.TempDir())
	s := openStore(t, e, func(c *store.Config) { c.RequestTimeout = time.Second })
	key := mustKey(t, store.KindAgent, "agent-1")
	rev, err := s.Create(context.Background(), key, []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	e.Close()

	requests := map[string]func(context.Context) error{
		"Get":    func(ctx context.Context) error { _, err := s.Get(ctx, key); return err },
		"List":   func(ctx context.Context) error { _, err := s.List(ctx, "agents/"); return err },
		"Update": func(ctx context.Context) error { _, err := s.Update(ctx, key, []byte("y"), rev); return err },
		"Delete": func(ctx context.Context) error { return s.Delete(ctx, key, rev) },
	}
	for name, request := range requests {
		start := time.Now()
		err := request(context.Background())
		if !errors.Is(err, errdefs.ErrUnavailable) {
			t.Errorf("%s after etcd stopped = %v, want %v", name, err, errdefs.ErrUnavailable)
		}
		if elapsed := time.Since(start); elapsed > 3*time.Second {
			t.Errorf("%s took %s with a 1s request timeout", name, elapsed)
		}
	}
}

// A caller that gives up gets its own context error, not ErrUnavailable.
func TestCancelledRequestIsNotUnavailable(t *testing.T) {
	s := openStore(t, startEmbedded(t, t.TempDir()))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := s.Get(ctx, "apps/default/web")
	if !errors.Is(err, context.Canceled) || errors.Is(err, errdefs.ErrUnavailable) {
		t.Fatalf("Get with a cancelled context = %v, want context.Canceled only", err)
	}
}

func TestStartEmbeddedRejectsBadOptions(t *testing.T) {
	ctx := context.Background()
	if _, err := store.StartEmbedded(ctx, ""); !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Errorf("empty data dir: %v, want %v", err, errdefs.ErrInvalidArgument)
	}
	if _, err := store.StartEmbedded(ctx, t.TempDir(), store.WithLogLevel("loud")); !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Errorf("bad log level: %v, want %v", err, errdefs.ErrInvalidArgument)
	}
}

// WithClientURL pins the client port, for operators who want etcdctl.
func TestStartEmbeddedFixedClientURL(t *testing.T) {
	url := "http://" + freeAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e, err := store.StartEmbedded(ctx, t.TempDir(), store.WithClientURL(url))
	if err != nil {
		t.Fatalf("StartEmbedded: %v", err)
	}
	defer e.Close()
	if got := e.Endpoints(); len(got) != 1 || got[0] != url {
		t.Fatalf("Endpoints() = %v, want [%s]", got, url)
	}
	openStore(t, e)
}

func mustKey(t *testing.T, kind store.Kind, segments ...string) string {
	t.Helper()
	key, err := store.Key(kind, segments...)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func describeEntries(entries []store.Entry) string {
	var b strings.Builder
	for _, e := range entries {
		fmt.Fprintf(&b, "%s=%q rev %d created %d version %d\n", e.Key, e.Value, e.Revision, e.CreateRevision, e.Version)
	}
	return b.String()
}

// seededDataDir returns a data directory whose embedded etcd held some
// keys and was closed.
func seededDataDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	e := startEmbedded(t, dir)
	s := openStore(t, e)
	for i := range 50 {
		if _, err := s.Put(context.Background(), mustKey(t, store.KindAgent, fmt.Sprintf("agent-%d", i)), []byte(strings.Repeat("x", 512))); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	e.Close()
	return dir
}

// A first start stopped before etcd wrote its log (a SIGTERM while
// starting) leaves a database without a log and without a key: the next
// start makes a new store, where one holding keys is refused (below).
func TestStartEmbeddedAfterAFirstStartStoppedEarly(t *testing.T) {
	dir := t.TempDir()
	startEmbedded(t, dir).Close()
	if err := os.RemoveAll(filepath.Join(dir, "etcd", "member", "wal")); err != nil {
		t.Fatal(err)
	}
	e, err := store.StartEmbedded(context.Background(), dir, store.WithStartTimeout(30*time.Second))
	if err != nil {
		t.Fatalf("StartEmbedded after a first start stopped early: %v", err)
	}
	s := openStore(t, e)
	if _, err := s.Put(context.Background(), mustKey(t, store.KindAgent, "agent-1"), []byte("x")); err != nil {
		t.Fatal(err)
	}
	s.Close()
	e.Close()
}

// Damaged data dirs: what etcd met with a panic in one of its
// goroutines (a corrupt or truncated bbolt file) or a hang (a database
// without its WAL) fails StartEmbedded within seconds, naming the file
// and what to do.
func TestStartEmbeddedRefusesDamagedDataDir(t *testing.T) {
	db := func(dir string) string { return filepath.Join(dir, "etcd", "member", "snap", "db") }
	cases := []struct {
		name   string
		damage func(t *testing.T, dir string)
		want   func(dir string) string
	}{
		{"pages overwritten", func(t *testing.T, dir string) {
			f, err := os.OpenFile(db(dir), os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			info, err := f.Stat()
			if err != nil {
				t.Fatal(err)
			}
			// Every page after the two meta pages: which pages hold the
			// keys varies, and some pages overwritten may all be free.
			const metaPages = 2 * 4096
			if _, err := f.WriteAt(bytes.Repeat([]byte{0xab}, int(info.Size())-metaPages), metaPages); err != nil {
				t.Fatal(err)
			}
		}, func(dir string) string { return fmt.Sprintf("the database %q is corrupt", db(dir)) }},
		{"truncated to one page", func(t *testing.T, dir string) {
			if err := os.Truncate(db(dir), 4096); err != nil {
				t.Fatal(err)
			}
		}, func(dir string) string { return fmt.Sprintf("the database %q cannot be opened", db(dir)) }},
		{"WAL deleted", func(t *testing.T, dir string) {
			if err := os.RemoveAll(filepath.Join(dir, "etcd", "member", "wal")); err != nil {
				t.Fatal(err)
			}
		}, func(dir string) string { return fmt.Sprintf("the database %q has no write-ahead log", db(dir)) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := seededDataDir(t)
			c.damage(t, dir)
			start := time.Now()
			e, err := store.StartEmbedded(context.Background(), dir, store.WithStartTimeout(30*time.Second))
			if err == nil {
				e.Close()
				t.Fatal("StartEmbedded on a damaged data dir succeeded")
			}
			if !errors.Is(err, store.ErrDamagedDataDir) || !strings.Contains(err.Error(), c.want(dir)) ||
				!strings.Contains(err.Error(), "restore "+filepath.Join(dir, "etcd")+" from a backup") {
				t.Fatalf("StartEmbedded = %v, want %v saying %q and what to do", err, store.ErrDamagedDataDir, c.want(dir))
			}
			if elapsed := time.Since(start); elapsed > 5*time.Second {
				t.Errorf("refused after %s", elapsed)
			}
		})
	}
}

// What etcd recovers from by itself is left to it: a database deleted
// (rebuilt from the WAL) starts with the data.
func TestStartEmbeddedRebuildsDeletedDatabase(t *testing.T) {
	dir := seededDataDir(t)
	if err := os.RemoveAll(filepath.Join(dir, "etcd", "member", "snap")); err != nil {
		t.Fatal(err)
	}
	s := openStore(t, startEmbedded(t, dir))
	if entries, err := s.List(context.Background(), "agents/"); err != nil || len(entries) != 50 {
		t.Fatalf("List after the rebuild: %d entries, %v; want 50", len(entries), err)
	}
}

// MemberURLs lists the embedded etcd's client URL, the one the store
// was opened with, and its peer URL (fixed here to tell it).
func TestMemberURLs(t *testing.T) {
	peer := "http://" + freeAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e, err := store.StartEmbedded(ctx, t.TempDir(), store.WithPeerURL(peer))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	urls, err := openStore(t, e).MemberURLs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := append(e.Endpoints(), peer); strings.Join(urls, " ") != strings.Join(want, " ") {
		t.Errorf("member URLs %v, want %v", urls, want)
	}
}
