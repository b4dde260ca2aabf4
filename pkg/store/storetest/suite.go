package storetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// Cluster is a running etcd the suite connects to.
type Cluster interface {
	Endpoints() []string
}

// pageSize is small so that a list of a few dozen keys spans pages.
const pageSize = 7

// Run runs every conformance case against cluster. Each case works under
// its own key prefix, so one cluster serves them all.
func Run(t *testing.T, cluster Cluster) {
	cases := []struct {
		name string
		run  func(t *testing.T, h *harness)
	}{
		{"Lifecycle", testLifecycle},
		{"CreateExisting", testCreateExisting},
		{"NotFound", testNotFound},
		{"StaleRevision", testStaleRevision},
		{"ConcurrentWritersLoseNothing", testConcurrentWriters},
		{"ApplyAtomic", testApplyAtomic},
		{"ApplyAllOrNothing", testApplyAllOrNothing},
		{"ApplyCompareOnly", testApplyCompareOnly},
		{"BatchInOrderWithinEtcdLimits", testBatch},
		{"GetManyWithinEtcdLimits", testGetMany},
		{"InvalidArguments", testInvalidArguments},
		{"ListPagination", testListPagination},
		{"EachReadsPagesAtOneRevision", testEach},
		{"PrefixIsolation", testPrefixIsolation},
		{"Watch", testWatch},
		{"WatchReplaysFromRevision", testWatchReplay},
		{"WatchEndsWithContext", testWatchEndsWithContext},
		{"WatchKeysCountsWhatItDrops", testWatchKeys},
		{"RevisionAndGetAt", testRevisionAndGetAt},
		{"SecretsSealedAtRest", testSecretsSealedAtRest},
		{"SecretsNeedSealer", testSecretsNeedSealer},
		{"CallbackURLsSealedAtRest", testCallbackURLsSealedAtRest},
		{"PasswordsSealedAtRest", testPasswordsSealedAtRest},
		{"JSON", testJSON},
		{"FencedWritesEndWithLeadership", testFence},
		// Last: compaction drops history of the whole shared cluster.
		{"WatchFromCompactedRevision", testWatchCompacted},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.run(t, newHarness(t, cluster))
		})
	}
}

// harness gives one case its own prefix on the shared cluster.
type harness struct {
	t       *testing.T
	cluster Cluster
	prefix  string
	sealer  *store.Sealer
}

var unsafePrefixChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func newHarness(t *testing.T, cluster Cluster) *harness {
	key := make([]byte, store.KeySize)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	sealer, err := store.NewSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	name := unsafePrefixChars.ReplaceAllString(t.Name(), "_")
	return &harness{
		t:       t,
		cluster: cluster,
		prefix:  fmt.Sprintf("/storetest/%s-%d/", name, time.Now().UnixNano()),
		sealer:  sealer,
	}
}

// open returns a store on the case's prefix, closed when the case ends.
func (h *harness) open(change ...func(*store.Config)) *store.Store {
	h.t.Helper()
	cfg := store.Config{
		Endpoints:      h.cluster.Endpoints(),
		Prefix:         h.prefix,
		DialTimeout:    5 * time.Second,
		RequestTimeout: 5 * time.Second,
		ListPageSize:   pageSize,
		Sealer:         h.sealer,
	}
	for _, f := range change {
		f(&cfg)
	}
	s, err := store.Open(ctx(h.t), cfg)
	if err != nil {
		h.t.Fatalf("Open: %v", err)
	}
	h.t.Cleanup(func() { s.Close() })
	return s
}

// raw returns a plain etcd client, to see what is really stored.
func (h *harness) raw() *clientv3.Client {
	h.t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: h.cluster.Endpoints(), DialTimeout: 5 * time.Second})
	if err != nil {
		h.t.Fatalf("etcd client: %v", err)
	}
	h.t.Cleanup(func() { c.Close() })
	return c
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func mustCreate(t *testing.T, s *store.Store, key, value string) int64 {
	t.Helper()
	rev, err := s.Create(ctx(t), key, []byte(value))
	if err != nil {
		t.Fatalf("Create(%q): %v", key, err)
	}
	return rev
}

func mustGet(t *testing.T, s *store.Store, key string) store.Entry {
	t.Helper()
	e, err := s.Get(ctx(t), key)
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	return e
}

func wantClass(t *testing.T, what string, err, class error) {
	t.Helper()
	if !errors.Is(err, class) {
		t.Fatalf("%s: error %v, want class %v", what, err, class)
	}
}

func wantValue(t *testing.T, s *store.Store, key, want string) {
	t.Helper()
	if got := string(mustGet(t, s, key).Value); got != want {
		t.Fatalf("Get(%q) = %q, want %q", key, got, want)
	}
}

// Issue: "generic versioned KV": create, get, list, update and delete with
// etcd's revisions reported on every entry.
func testLifecycle(t *testing.T, h *harness) {
	s := h.open()
	key := "apps/default/web"
	rev := mustCreate(t, s, key, "v1")
	e := mustGet(t, s, key)
	if e.Key != key || string(e.Value) != "v1" || e.Revision != rev || e.CreateRevision != rev || e.Version != 1 {
		t.Fatalf("after Create: %+v, want key %q value v1 revision %d create revision %d version 1", e, key, rev, rev)
	}

	rev2, err := s.Update(ctx(t), key, []byte("v2"), rev)
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	if rev2 <= rev {
		t.Fatalf("Update revision %d, want > %d", rev2, rev)
	}
	e = mustGet(t, s, key)
	if string(e.Value) != "v2" || e.Revision != rev2 || e.CreateRevision != rev || e.Version != 2 {
		t.Fatalf("after Update: %+v, want value v2 revision %d create revision %d version 2", e, rev2, rev)
	}

	mustCreate(t, s, "apps/default/api", "a")
	entries, err := s.List(ctx(t), "apps/default/")
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if got := keys(entries); fmt.Sprint(got) != "[apps/default/api apps/default/web]" {
		t.Fatalf("List keys %v, want them sorted", got)
	}

	if err := s.Delete(ctx(t), key, rev2); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	_, err = s.Get(ctx(t), key)
	wantClass(t, "Get after Delete", err, errdefs.ErrNotFound)

	putRev, err := s.Put(ctx(t), store.FrameworkIDKey, []byte("framework-1"))
	if err != nil {
		t.Fatalf("Put: %v", err)
	}
	if _, err := s.Put(ctx(t), store.FrameworkIDKey, []byte("framework-2")); err != nil {
		t.Fatalf("Put over an existing key: %v", err)
	}
	if e := mustGet(t, s, store.FrameworkIDKey); string(e.Value) != "framework-2" || e.CreateRevision != putRev {
		t.Fatalf("after two Puts: %+v", e)
	}
}

// Issue: "Create of an existing key → ErrAlreadyExists", and the stored
// value is untouched.
func testCreateExisting(t *testing.T, h *harness) {
	s := h.open()
	mustCreate(t, s, "configmaps/default/cfg", "first")
	_, err := s.Create(ctx(t), "configmaps/default/cfg", []byte("second"))
	wantClass(t, "second Create", err, errdefs.ErrAlreadyExists)
	wantValue(t, s, "configmaps/default/cfg", "first")
}

// Issue: "Missing → ErrNotFound", for reads and for every conditional write.
func testNotFound(t *testing.T, h *harness) {
	s := h.open()
	_, err := s.Get(ctx(t), "apps/default/missing")
	wantClass(t, "Get", err, errdefs.ErrNotFound)
	_, err = s.Update(ctx(t), "apps/default/missing", []byte("x"), 1)
	wantClass(t, "Update", err, errdefs.ErrNotFound)
	err = s.Delete(ctx(t), "apps/default/missing", 0)
	wantClass(t, "Delete unconditional", err, errdefs.ErrNotFound)
	err = s.Delete(ctx(t), "apps/default/missing", 5)
	wantClass(t, "Delete at revision", err, errdefs.ErrNotFound)
	if _, err := s.Get(ctx(t), "apps/default/missing"); !errors.Is(err, errdefs.ErrNotFound) {
		t.Fatalf("a failed Update must not create the key: %v", err)
	}
}

// Issue: "a conflicting write gets errdefs.ErrConflict, never a lost
// update": two writers read the same revision, the second to write loses.
func testStaleRevision(t *testing.T, h *harness) {
	writerA, writerB := h.open(), h.open()
	key := "deployments/default/rollout"
	mustCreate(t, writerA, key, "v1")
	readA, readB := mustGet(t, writerA, key), mustGet(t, writerB, key)

	if _, err := writerA.Update(ctx(t), key, []byte("from A"), readA.Revision); err != nil {
		t.Fatalf("writer A: %v", err)
	}
	_, err := writerB.Update(ctx(t), key, []byte("from B"), readB.Revision)
	wantClass(t, "writer B with the stale revision", err, errdefs.ErrConflict)
	err = writerB.Delete(ctx(t), key, readB.Revision)
	wantClass(t, "delete with the stale revision", err, errdefs.ErrConflict)
	wantValue(t, writerB, key, "from A")
}

// Issue: "never a lost update": writers that retry on ErrConflict with a
// fresh read all land their increments.
func testConcurrentWriters(t *testing.T, h *harness) {
	const writers, increments = 4, 10
	key := "agents/counter"
	mustCreate(t, h.open(), key, "0")
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for range writers {
		s := h.open()
		wg.Go(func() {
			for range increments {
				if err := increment(t, s, key); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	e := mustGet(t, h.open(), key)
	if string(e.Value) != strconv.Itoa(writers*increments) || e.Version != writers*increments+1 {
		t.Fatalf("counter = %q at version %d, want %d at version %d", e.Value, e.Version, writers*increments, writers*increments+1)
	}
}

func increment(t *testing.T, s *store.Store, key string) error {
	for {
		e, err := s.Get(ctx(t), key)
		if err != nil {
			return err
		}
		n, err := strconv.Atoi(string(e.Value))
		if err != nil {
			return err
		}
		_, err = s.Update(ctx(t), key, []byte(strconv.Itoa(n+1)), e.Revision)
		if !errors.Is(err, errdefs.ErrConflict) {
			return err
		}
	}
}

// Issue: "an application update and its new version-history entry are
// written atomically": all ops land at one revision.
func testApplyAtomic(t *testing.T, h *harness) {
	s := h.open()
	app := "apps/default/web"
	v1, v2 := versionKey(t, 1), versionKey(t, 2)
	rev, err := s.Apply(ctx(t), store.CreateOp(app, []byte("spec 1")), store.CreateOp(v1, []byte("spec 1")))
	if err != nil {
		t.Fatalf("Apply create: %v", err)
	}
	if a, v := mustGet(t, s, app), mustGet(t, s, v1); a.Revision != rev || v.Revision != rev {
		t.Fatalf("revisions app %d version %d, want both %d", a.Revision, v.Revision, rev)
	}
	mustCreate(t, s, "taskgroups/default/web/tg-0", "old")
	rev2, err := s.Apply(ctx(t),
		store.UpdateOp(app, []byte("spec 2"), rev),
		store.CreateOp(v2, []byte("spec 2")),
		store.DeleteOp("taskgroups/default/web/tg-0", 0),
		store.PutOp("tasks/default/web/tg-1/task-0", []byte("TASK_STAGING")),
	)
	if err != nil {
		t.Fatalf("Apply update: %v", err)
	}
	wantValue(t, s, app, "spec 2")
	wantValue(t, s, v2, "spec 2")
	wantValue(t, s, "tasks/default/web/tg-1/task-0", "TASK_STAGING")
	if mustGet(t, s, v2).Revision != rev2 {
		t.Fatalf("version entry not written at the apply revision %d", rev2)
	}
	_, err = s.Get(ctx(t), "taskgroups/default/web/tg-0")
	wantClass(t, "deleted in Apply", err, errdefs.ErrNotFound)
}

// Issue: "atomic multi-key Apply (all-or-nothing when one op conflicts)",
// and the error names the class of the op that failed.
func testApplyAllOrNothing(t *testing.T, h *harness) {
	s := h.open()
	app, v1, v2 := "apps/default/web", versionKey(t, 1), versionKey(t, 2)
	rev := mustCreate(t, s, app, "spec 1")
	mustCreate(t, s, v1, "spec 1")
	mustCreate(t, s, v2, "someone else's version 2")

	// The application update alone would succeed; the version entry exists.
	_, err := s.Apply(ctx(t), store.UpdateOp(app, []byte("spec 2"), rev), store.CreateOp(v2, []byte("spec 2")))
	wantClass(t, "Apply with an existing version", err, errdefs.ErrAlreadyExists)
	wantValue(t, s, app, "spec 1")
	wantValue(t, s, v2, "someone else's version 2")

	// The creates would succeed; the update is stale.
	newKey := "configmaps/default/new"
	_, err = s.Apply(ctx(t),
		store.CreateOp(newKey, []byte("x")),
		store.PutOp("agents/a1", []byte("x")),
		store.UpdateOp(app, []byte("spec 2"), rev-1),
	)
	wantClass(t, "Apply with a stale update", err, errdefs.ErrConflict)
	for _, key := range []string{newKey, "agents/a1"} {
		_, err = s.Get(ctx(t), key)
		wantClass(t, "key of a failed Apply", err, errdefs.ErrNotFound)
	}

	// A delete of a missing key fails the whole Apply too.
	_, err = s.Apply(ctx(t), store.CreateOp(newKey, []byte("x")), store.DeleteOp("apps/default/missing", 0))
	wantClass(t, "Apply deleting a missing key", err, errdefs.ErrNotFound)
	_, err = s.Get(ctx(t), newKey)
	wantClass(t, "key of a failed Apply", err, errdefs.ErrNotFound)
}

// CheckOp and AbsentOp make an Apply depend on keys they never write:
// the other ops commit while the checked key keeps its revision and the
// absent one stays missing, and nothing is written once either changes.
func testApplyCompareOnly(t *testing.T, h *harness) {
	s := h.open()
	app, alloc, marker := "apps/default/web", "allocations/default/web/3", "configmaps/default/marker"
	rev := mustCreate(t, s, app, "spec 1")

	written, err := s.Apply(ctx(t), store.CheckOp(app, rev), store.AbsentOp(alloc), store.CreateOp(marker, []byte("1")))
	if err != nil {
		t.Fatalf("Apply with both compares holding: %v", err)
	}
	if got := mustGet(t, s, app).Revision; got != rev {
		t.Fatalf("CheckOp wrote its key: revision %d, want %d", got, rev)
	}
	if _, err := s.Get(ctx(t), alloc); !errors.Is(err, errdefs.ErrNotFound) {
		t.Fatalf("AbsentOp wrote its key: %v", err)
	}
	if got := mustGet(t, s, marker).Revision; got != written {
		t.Fatalf("create of the Apply at revision %d, the Apply returned %d", got, written)
	}

	cases := []struct {
		what  string
		op    store.Op
		class error
	}{
		{"a check of a key written since", store.CheckOp(app, rev-1), errdefs.ErrConflict},
		{"a check of a missing key", store.CheckOp("apps/default/missing", rev), errdefs.ErrNotFound},
		{"an absent check of a present key", store.AbsentOp(app), errdefs.ErrAlreadyExists},
	}
	for _, c := range cases {
		_, err := s.Apply(ctx(t), store.PutOp("agents/a1", []byte("x")), c.op)
		wantClass(t, "Apply with "+c.what, err, c.class)
		var pe *store.PreconditionError
		if !errors.As(err, &pe) || pe.Key != c.op.Key() || pe.Index != 2 {
			t.Fatalf("Apply with %s: error %v does not name op 2 on %q", c.what, err, c.op.Key())
		}
		if _, err := s.Get(ctx(t), "agents/a1"); !errors.Is(err, errdefs.ErrNotFound) {
			t.Fatalf("Apply with %s wrote its put: %v", c.what, err)
		}
	}
	_, err = s.Apply(ctx(t), store.CheckOp(app, 0))
	wantClass(t, "CheckOp with revision 0", err, errdefs.ErrInvalidArgument)
}

func versionKey(t *testing.T, seq uint64) string {
	t.Helper()
	key, err := store.AppVersionKey("default", "web", seq)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// Malformed keys and requests are errdefs.ErrInvalidArgument before
// anything reaches etcd.
func testInvalidArguments(t *testing.T, h *harness) {
	s := h.open()
	for _, key := range []string{"", "/apps", "apps/", "apps//web", "apps/../web", "apps/we b", "apps/wéb"} {
		_, err := s.Get(ctx(t), key)
		wantClass(t, fmt.Sprintf("Get(%q)", key), err, errdefs.ErrInvalidArgument)
		_, err = s.Create(ctx(t), key, []byte("x"))
		wantClass(t, fmt.Sprintf("Create(%q)", key), err, errdefs.ErrInvalidArgument)
	}
	for _, prefix := range []string{"apps", "/apps/", "apps//"} {
		_, err := s.List(ctx(t), prefix)
		wantClass(t, fmt.Sprintf("List(%q)", prefix), err, errdefs.ErrInvalidArgument)
		_, err = s.Watch(ctx(t), prefix, 0)
		wantClass(t, fmt.Sprintf("Watch(%q)", prefix), err, errdefs.ErrInvalidArgument)
	}
	requests := map[string]func() error{
		"Update at revision 0":  func() error { _, err := s.Update(ctx(t), "apps/a/b", nil, 0); return err },
		"Delete at revision -1": func() error { return s.Delete(ctx(t), "apps/a/b", -1) },
		"Apply without ops":     func() error { _, err := s.Apply(ctx(t)); return err },
		"Apply with a key twice": func() error {
			_, err := s.Apply(ctx(t), store.CreateOp("apps/a/b", nil), store.DeleteOp("apps/a/b", 0))
			return err
		},
		"zero Op": func() error { _, err := s.Apply(ctx(t), store.Op{}); return err },
	}
	for name, request := range requests {
		wantClass(t, name, request(), errdefs.ErrInvalidArgument)
	}
	_, err := s.Get(ctx(t), "apps/a/b")
	wantClass(t, "key of rejected writes", err, errdefs.ErrNotFound)
}

// Issue: "List … paginated internally so big lists work": more keys than
// one page, returned complete and sorted, without neighbours' keys.
func testListPagination(t *testing.T, h *harness) {
	s := h.open()
	const n = 3*pageSize + 4
	var lastRev int64
	want := make([]string, n)
	for i := range n {
		want[i] = fmt.Sprintf("taskgroups/default/web/tg-%03d", i)
	}
	// Create in reverse so that key order differs from revision order.
	for i := n - 1; i >= 0; i-- {
		lastRev = mustCreate(t, s, want[i], strconv.Itoa(i))
	}
	mustCreate(t, s, "taskgroups/default/web2/tg-000", "neighbour")
	mustCreate(t, s, "taskgroups/default/we/tg-000", "neighbour")

	entries, rev, err := s.ListWithRevision(ctx(t), "taskgroups/default/web/")
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if got := keys(entries); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("List keys\n got %v\nwant %v", got, want)
	}
	for i, e := range entries {
		if string(e.Value) != strconv.Itoa(i) {
			t.Fatalf("entry %q value %q, want %d", e.Key, e.Value, i)
		}
	}
	if rev < lastRev {
		t.Fatalf("list revision %d older than the last write %d", rev, lastRev)
	}
	all, err := s.List(ctx(t), "")
	if err != nil {
		t.Fatalf("List(\"\"): %v", err)
	}
	if len(all) != n+2 {
		t.Fatalf("List(\"\") returned %d entries, want %d", len(all), n+2)
	}
	empty, err := s.List(ctx(t), "deployments/")
	if err != nil || len(empty) != 0 {
		t.Fatalf("List of an empty prefix = %v, %v; want no entries and no error", keys(empty), err)
	}
}

// Each hands over every entry in key order, page by page, all read at the
// revision of the first page: what is written while it runs is not seen
// (a fold over every task group is one snapshot). An error from the
// callback stops it.
func testEach(t *testing.T, h *harness) {
	s := h.open()
	const n = 3*pageSize + 2
	for i := range n {
		mustCreate(t, s, fmt.Sprintf("taskgroups/default/web/tg-%03d", i), strconv.Itoa(i))
	}
	var seen []string
	rev, err := s.Each(ctx(t), "taskgroups/default/web/", func(e store.Entry) error {
		if len(seen) == 0 { // while the first page is being handed over
			mustCreate(t, s, "taskgroups/default/web/tg-999", "later")
			if _, err := s.Put(ctx(t), "taskgroups/default/web/tg-020", []byte("changed")); err != nil {
				t.Fatal(err)
			}
		}
		seen = append(seen, e.Key+"="+string(e.Value))
		return nil
	})
	if err != nil {
		t.Fatalf("Each: %v", err)
	}
	if len(seen) != n || seen[20] != "taskgroups/default/web/tg-020=20" || !slices.IsSorted(seen) {
		t.Fatalf("Each handed %d entries (want %d, sorted, tg-020 as it was at the start): %v", len(seen), n, seen)
	}
	if now, _ := s.Revision(ctx(t)); rev >= now {
		t.Fatalf("Each read at revision %d, not before the writes made during it (now %d)", rev, now)
	}
	var keyed []string
	keysRev, err := s.EachKey(ctx(t), "taskgroups/default/web/", func(key string, rev int64) error {
		keyed = append(keyed, fmt.Sprintf("%s@%d", key, rev))
		return nil
	})
	entries, listRev, listErr := s.ListWithRevision(ctx(t), "taskgroups/default/web/")
	if err != nil || listErr != nil || keysRev != listRev || len(keyed) != len(entries) {
		t.Fatalf("EachKey = %d keys at %d, %v; List = %d at %d, %v", len(keyed), keysRev, err, len(entries), listRev, listErr)
	}
	for i, e := range entries {
		if want := fmt.Sprintf("%s@%d", e.Key, e.Revision); keyed[i] != want {
			t.Fatalf("EachKey handed %s at %d, List %s", keyed[i], i, want)
		}
	}
	stop := errors.New("enough")
	calls := 0
	if _, err := s.Each(ctx(t), "taskgroups/default/web/", func(store.Entry) error {
		calls++
		if calls == pageSize+1 {
			return stop
		}
		return nil
	}); !errors.Is(err, stop) || calls != pageSize+1 {
		t.Fatalf("a callback's error: Each returned %v after %d calls, want it after %d", err, calls, pageSize+1)
	}
}

// Stores with different prefixes do not see each other's keys.
func testPrefixIsolation(t *testing.T, h *harness) {
	s := h.open()
	other := h.open(func(c *store.Config) { c.Prefix = h.prefix + "other/" })
	mustCreate(t, s, "apps/default/web", "mine")
	mustCreate(t, other, "apps/default/web", "theirs")
	wantValue(t, s, "apps/default/web", "mine")
	wantValue(t, other, "apps/default/web", "theirs")
	entries, err := other.List(ctx(t), "")
	if err != nil || len(entries) != 1 {
		t.Fatalf("List in the nested prefix = %v, %v; want only its own key", keys(entries), err)
	}
}

// Issue: "Watch(ctx, prefix, fromRev) returning a channel of events
// (put/delete with entry)": a watch started after a list sees exactly the
// later changes under its prefix, in order.
func testWatch(t *testing.T, h *harness) {
	s := h.open()
	mustCreate(t, s, "apps/default/before", "x")
	_, rev, err := s.ListWithRevision(ctx(t), "apps/")
	if err != nil {
		t.Fatal(err)
	}
	events, err := s.Watch(ctx(t), "apps/", rev+1)
	if err != nil {
		t.Fatalf("Watch: %v", err)
	}
	// etcd answers a progress request on every watch of the client; a
	// Watch, which did not ask, must not take the answer for a change.
	if err := s.RequestProgress(ctx(t)); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, "deployments/default/outside", "not watched")
	created := mustCreate(t, s, "apps/default/web", "v1")
	updated, err := s.Update(ctx(t), "apps/default/web", []byte("v2"), created)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx(t), "apps/default/web", updated); err != nil {
		t.Fatal(err)
	}

	want := []string{
		fmt.Sprintf("put apps/default/web=v1 rev %d", created),
		fmt.Sprintf("put apps/default/web=v2 rev %d", updated),
		fmt.Sprintf("delete apps/default/web= rev %d", updated+1),
	}
	for _, w := range want {
		if got := describe(nextEvent(t, events)); got != w {
			t.Fatalf("event %q, want %q", got, w)
		}
	}
}

// A watch from an old revision replays the changes since then.
func testWatchReplay(t *testing.T, h *harness) {
	s := h.open()
	first := mustCreate(t, s, "configmaps/default/a", "1")
	second := mustCreate(t, s, "configmaps/default/b", "2")
	events, err := s.Watch(ctx(t), "configmaps/", first)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		fmt.Sprintf("put configmaps/default/a=1 rev %d", first),
		fmt.Sprintf("put configmaps/default/b=2 rev %d", second),
	} {
		if got := describe(nextEvent(t, events)); got != w {
			t.Fatalf("event %q, want %q", got, w)
		}
	}
}

// WatchKeys delivers only the keys it keeps, each with its position in
// its revision's transaction counting the dropped ones, and never
// decodes a dropped key: a secret under a store without a Sealer does not
// fail the watch.
func testWatchKeys(t *testing.T, h *harness) {
	s := h.open()
	rev, err := s.Revision(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	noSealer := h.open(func(c *store.Config) { c.Sealer = nil })
	events, err := noSealer.WatchKeys(ctx(t), "", rev+1, func(key string) bool { return !strings.HasPrefix(key, "secrets/") })
	if err != nil {
		t.Fatal(err)
	}
	txn, err := s.Apply(ctx(t), store.PutOp("apps/default/a", []byte("a")), store.PutOp("secrets/default/s", []byte("hidden")),
		store.PutOp("apps/default/b", []byte("b")))
	if err != nil {
		t.Fatal(err)
	}
	single := mustCreate(t, s, "agents/a1", "1")
	for _, w := range []string{
		fmt.Sprintf("put apps/default/a=a rev %d index 0", txn),
		fmt.Sprintf("put apps/default/b=b rev %d index 2", txn),
		fmt.Sprintf("put agents/a1=1 rev %d index 0", single),
	} {
		ev := nextEvent(t, events)
		if got := fmt.Sprintf("%s index %d", describe(ev), ev.Index); got != w {
			t.Fatalf("event %q, want %q", got, w)
		}
	}
}

// Revision is the revision of the latest write; GetAt reads a key as it
// was at an earlier one, also after its deletion.
func testRevisionAndGetAt(t *testing.T, h *harness) {
	s := h.open()
	first := mustCreate(t, s, "apps/default/web", "v1")
	second, err := s.Update(ctx(t), "apps/default/web", []byte("v2"), first)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx(t), "apps/default/web", second); err != nil {
		t.Fatal(err)
	}
	current, err := s.Revision(ctx(t))
	if err != nil || current <= second {
		t.Fatalf("Revision = %d, %v; want > %d (the deletion's)", current, err, second)
	}
	for rev, want := range map[int64]string{first: "v1", second: "v2"} {
		e, err := s.GetAt(ctx(t), "apps/default/web", rev)
		if err != nil || string(e.Value) != want || e.Revision > rev {
			t.Errorf("GetAt(%d) = %q at %d, %v; want %q", rev, e.Value, e.Revision, err, want)
		}
	}
	_, err = s.GetAt(ctx(t), "apps/default/web", current)
	wantClass(t, "GetAt after the deletion", err, errdefs.ErrNotFound)
	_, err = s.GetAt(ctx(t), "apps/default/web", first-1)
	wantClass(t, "GetAt before the creation", err, errdefs.ErrNotFound)
	_, err = s.GetAt(ctx(t), "apps/default/web", 0)
	wantClass(t, "GetAt revision 0", err, errdefs.ErrInvalidArgument)
}

// The channel closes once the watcher's context ends.
func testWatchEndsWithContext(t *testing.T, h *harness) {
	s := h.open()
	watchCtx, cancel := context.WithCancel(context.Background())
	events, err := s.Watch(watchCtx, "apps/", 0)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return
			}
			if ev.Err != nil {
				t.Fatalf("cancelled watch reported %v; it should just close", ev.Err)
			}
		case <-deadline:
			t.Fatal("watch channel still open 10s after its context was cancelled")
		}
	}
}

// A watch from a compacted revision ends with ErrCompacted, an
// errdefs.ErrConflict telling the watcher to list again.
func testWatchCompacted(t *testing.T, h *harness) {
	s := h.open()
	old := mustCreate(t, s, "agents/a1", "1")
	current, err := s.Update(ctx(t), "agents/a1", []byte("2"), old)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.raw().Compact(ctx(t), current); err != nil {
		t.Fatalf("compact: %v", err)
	}
	if _, err := s.GetAt(ctx(t), "agents/a1", old); !errors.Is(err, store.ErrCompacted) {
		t.Errorf("GetAt a compacted revision: %v, want %v", err, store.ErrCompacted)
	}
	events, err := s.Watch(ctx(t), "agents/", old)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-events:
		if !errors.Is(ev.Err, store.ErrCompacted) || !errors.Is(ev.Err, errdefs.ErrConflict) {
			t.Fatalf("first event %+v, want Err %v", ev, store.ErrCompacted)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10s")
	}
	select {
	case _, ok := <-events:
		if ok {
			t.Fatal("watch channel still delivering after its error")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("watch channel not closed after its error")
	}
}

func nextEvent(t *testing.T, events <-chan store.Event) store.Event {
	t.Helper()
	select {
	case ev, ok := <-events:
		if !ok {
			t.Fatal("watch channel closed")
		}
		if ev.Err != nil {
			t.Fatalf("watch failed: %v", ev.Err)
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event within 10s")
	}
	panic("unreachable")
}

func describe(ev store.Event) string {
	return fmt.Sprintf("%s %s=%s rev %d", ev.Type, ev.Entry.Key, ev.Entry.Value, ev.Entry.Revision)
}

// Issue: "Secret values are encrypted at rest … use the object key as
// associated data so ciphertexts cannot be swapped between keys."
func testSecretsSealedAtRest(t *testing.T, h *harness) {
	s := h.open()
	plaintext := "password=hunter2"
	events, err := s.Watch(ctx(t), "secrets/", 0)
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, "secrets/default/db", plaintext)
	mustCreate(t, s, "secrets/default/other", "other value")
	wantValue(t, s, "secrets/default/db", plaintext)
	if ev := nextEvent(t, events); string(ev.Entry.Value) != plaintext {
		t.Fatalf("watch delivered %q, want the unsealed value", ev.Entry.Value)
	}
	entries, err := s.List(ctx(t), "secrets/default/")
	if err != nil || len(entries) != 2 || string(entries[0].Value) != plaintext {
		t.Fatalf("List of secrets = %d entries, %v; want 2, unsealed", len(entries), err)
	}

	raw := h.raw()
	resp, err := raw.Get(ctx(t), h.prefix+"secrets/default/db")
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("raw get: %v", err)
	}
	stored := resp.Kvs[0].Value
	if bytes.Contains(stored, []byte("hunter2")) {
		t.Fatal("etcd holds the secret in clear")
	}
	if stored[0] != 1 {
		t.Fatalf("sealed value starts with format version %d, want 1", stored[0])
	}

	// Move db's ciphertext under another secret's key.
	if _, err := raw.Put(ctx(t), h.prefix+"secrets/default/other", string(stored)); err != nil {
		t.Fatal(err)
	}
	_, err = s.Get(ctx(t), "secrets/default/other")
	wantClass(t, "Get of a ciphertext moved from another key", err, store.ErrCannotUnseal)

	// A store with another key cannot read it.
	otherKey := make([]byte, store.KeySize)
	if _, err := rand.Read(otherKey); err != nil {
		t.Fatal(err)
	}
	otherSealer, err := store.NewSealer(otherKey)
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.open(func(c *store.Config) { c.Sealer = otherSealer }).Get(ctx(t), "secrets/default/db")
	wantClass(t, "Get with another key", err, store.ErrCannotUnseal)
}

// Callback URLs may carry credentials (userinfo, tokens): they
// are sealed like secrets.
func testCallbackURLsSealedAtRest(t *testing.T, h *harness) {
	s := h.open()
	url := `{"url":"https://bot:hunter2@hooks.example/notify?token=s3cr3t"}`
	mustCreate(t, s, "notifytargets/3f2a9c1d0b8e7a65", url)
	wantValue(t, s, "notifytargets/3f2a9c1d0b8e7a65", url)
	resp, err := h.raw().Get(ctx(t), h.prefix+"notifytargets/3f2a9c1d0b8e7a65")
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("raw get: %v", err)
	}
	if stored := resp.Kvs[0].Value; bytes.Contains(stored, []byte("hunter2")) || bytes.Contains(stored, []byte("s3cr3t")) {
		t.Fatal("etcd holds the callback URL in clear")
	}
}

// The passwords of a manifest (SealedMembers, at any depth) are
// sealed in its stored value, which stays readable JSON, and come back
// byte for byte; one written in clear by an older release reads as it is.
// So are the values of an HTTP check's and a hook web metric's headers
// (SealedMapMembers), their names left readable.
func testPasswordsSealedAtRest(t *testing.T, h *harness) {
	s := h.open()
	app := `{"kind":"process","spec":{"uris":[{"value":"http://x/p.tgz","user":"u","pwd":"hunter2"},{"pwd":""}],` +
		`"containers":[{"imagePullPasswd":"s3cr\"et<&>","healthChecks":[{"http":{"headers":{"Authorization":"Bearer t0ken-9"}}}]}],` +
		`"labels":{"note":"pwd","pwd":{"nested":"x"}},"hook":{"web":{"headers":[{"key":"X-Api-Key","value":"api-k3y"}]}}},` +
		`"datas":{"a":{"remotePasswd":"ftp-pass"}},"message":"hunter2 is a word here"}`
	events, err := s.Watch(ctx(t), "apps/", 0)
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, "apps/default/web", app)
	wantValue(t, s, "apps/default/web", app)
	if ev := nextEvent(t, events); string(ev.Entry.Value) != app {
		t.Fatalf("watch delivered %s, want the value as written", ev.Entry.Value)
	}
	resp, err := h.raw().Get(ctx(t), h.prefix+"apps/default/web")
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("raw get: %v", err)
	}
	stored := string(resp.Kvs[0].Value)
	for _, password := range []string{`"hunter2"`, "s3cr", "ftp-pass", "t0ken-9", "api-k3y"} {
		if strings.Contains(stored, password) {
			t.Errorf("etcd holds %s in clear: %s", password, stored)
		}
	}
	var doc struct {
		Spec struct {
			URIs []struct{ Value, Pwd string }
		}
		Message string
	}
	if err := json.Unmarshal(resp.Kvs[0].Value, &doc); err != nil || doc.Spec.URIs[0].Value != "http://x/p.tgz" ||
		!strings.HasPrefix(doc.Spec.URIs[0].Pwd, "bcs-sealed:") || doc.Spec.URIs[1].Pwd != "" || doc.Message != "hunter2 is a word here" ||
		!strings.Contains(stored, `"headers":{"Authorization":"bcs-sealed:`) || !strings.Contains(stored, `"headers":[{"key":"X-Api-Key","value":"bcs-sealed:`) {
		t.Errorf("stored value is not the same JSON with sealed passwords: %v %s", err, stored)
	}

	// A sealed password moved to another key does not open there.
	if _, err := h.raw().Put(ctx(t), h.prefix+"apps/default/other", stored); err != nil {
		t.Fatal(err)
	}
	_, err = s.Get(ctx(t), "apps/default/other")
	wantClass(t, "Get of a password moved from another key", err, store.ErrCannotUnseal)

	legacy := `{"spec":{"uris":[{"pwd":"clear"}]}}`
	if _, err := h.raw().Put(ctx(t), h.prefix+"apps/default/old", legacy); err != nil {
		t.Fatal(err)
	}
	wantValue(t, s, "apps/default/old", legacy)

	plain := h.open(func(c *store.Config) { c.Sealer = nil })
	_, err = plain.Put(ctx(t), "apps/default/web", []byte(app))
	wantClass(t, "Put of a password without a Sealer", err, errdefs.ErrInvalidArgument)
	_, err = plain.Get(ctx(t), "apps/default/web")
	wantClass(t, "Get of a sealed password without a Sealer", err, errdefs.ErrInvalidArgument)
	if _, err := plain.Put(ctx(t), "apps/default/nopass", []byte(`{"spec":{"uris":[{"pwd":""}]}}`)); err != nil {
		t.Errorf("Put of empty passwords without a Sealer: %v", err)
	}
}

// Secrets are never written in clear: without a Sealer the store refuses.
func testSecretsNeedSealer(t *testing.T, h *harness) {
	sealing := h.open()
	plain := h.open(func(c *store.Config) { c.Sealer = nil })
	_, err := plain.Create(ctx(t), "secrets/default/db", []byte("x"))
	wantClass(t, "Create of a secret without a Sealer", err, errdefs.ErrInvalidArgument)
	_, err = plain.Apply(ctx(t), store.PutOp("apps/default/web", []byte("x")), store.PutOp("secrets/default/db", []byte("x")))
	wantClass(t, "Apply with a secret without a Sealer", err, errdefs.ErrInvalidArgument)
	if _, err := sealing.Get(ctx(t), "apps/default/web"); !errors.Is(err, errdefs.ErrNotFound) {
		t.Fatalf("rejected Apply wrote its other op: %v", err)
	}
	mustCreate(t, sealing, "secrets/default/db", "x")
	_, err = plain.Get(ctx(t), "secrets/default/db")
	wantClass(t, "Get of a secret without a Sealer", err, errdefs.ErrInvalidArgument)
}

type application struct {
	Name      string `json:"name"`
	Instances int    `json:"instances"`
}

// Typed helpers round-trip through JSON with the same revision rules.
func testJSON(t *testing.T, h *harness) {
	s := h.open()
	key := "apps/default/web"
	rev, err := store.CreateJSON(ctx(t), s, key, application{Name: "web", Instances: 2})
	if err != nil {
		t.Fatalf("CreateJSON: %v", err)
	}
	app, gotRev, err := store.GetJSON[application](ctx(t), s, key)
	if err != nil || app != (application{Name: "web", Instances: 2}) || gotRev != rev {
		t.Fatalf("GetJSON = %+v, %d, %v; want web×2 at %d", app, gotRev, err, rev)
	}
	app.Instances = 3
	if _, err := store.UpdateJSON(ctx(t), s, key, app, rev); err != nil {
		t.Fatalf("UpdateJSON: %v", err)
	}
	_, err = store.UpdateJSON(ctx(t), s, key, app, rev)
	wantClass(t, "UpdateJSON at a stale revision", err, errdefs.ErrConflict)
	apps, err := store.ListJSON[application](ctx(t), s, "apps/")
	if err != nil || len(apps) != 1 || apps[0].Value.Instances != 3 || apps[0].Key != key {
		t.Fatalf("ListJSON = %+v, %v", apps, err)
	}
	mustCreate(t, s, "apps/default/broken", "{not json")
	_, _, err = store.GetJSON[application](ctx(t), s, "apps/default/broken")
	if err == nil || bytes.Contains([]byte(err.Error()), []byte("not json")) {
		t.Fatalf("GetJSON of corrupt JSON = %v; want an error that does not quote the value", err)
	}
}

func keys(entries []store.Entry) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.Key
	}
	return out
}
