package readview_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/bcs-mesos/bcs-mesos/pkg/readview"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
	"github.com/bcs-mesos/bcs-mesos/pkg/store/storetest"
)

var shared storetest.Shared

func TestMain(m *testing.M) { os.Exit(storetest.RunShared(m, &shared)) }

func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func put(key, value string) store.Op { return store.PutOp(key, []byte(value)) }

// running starts a view of the apps/ and taskgroups/ prefixes.
func running(t testing.TB, st *store.Store, clock clockwork.Clock) *readview.View {
	t.Helper()
	v, err := readview.New(st, readview.Config{Prefixes: []string{"apps/", "taskgroups/"}, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = v.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return v
}

func keys(entries []readview.Keyed) string {
	var out []string
	for _, e := range entries {
		out = append(out, e.Key+"="+string(e.Value))
	}
	return strings.Join(out, " ")
}

func fresh(t *testing.T, v *readview.View) {
	t.Helper()
	if err := v.Fresh(testContext(t), 10*time.Second); err != nil {
		t.Fatalf("Fresh: %v", err)
	}
}

// A read after Fresh sees every write acknowledged before it: the listed
// state, later puts and deletes, whole transactions, and nothing outside
// the view's prefixes.
func TestFreshReadsSeeAcknowledgedWrites(t *testing.T) {
	st := shared.Open(t, "readview")
	storetest.Apply(t, st, put("apps/default/web", "1"), put("taskgroups/default/web/0", "a"), put("notify/x", "n"))
	v := running(t, st, clockwork.NewRealClock())
	fresh(t, v)
	if got, want := keys(v.List("taskgroups/")), "taskgroups/default/web/0=a"; got != want {
		t.Fatalf("listed %q, want %q", got, want)
	}

	rev := storetest.Apply(t, st, put("taskgroups/default/web/1", "b"), put("taskgroups/default/web/2", "c"), store.DeleteOp("taskgroups/default/web/0", 0))
	fresh(t, v)
	if got, want := keys(v.List("taskgroups/default/web/")), "taskgroups/default/web/1=b taskgroups/default/web/2=c"; got != want {
		t.Fatalf("after the transaction %q, want %q", got, want)
	}
	if e, err := v.Get("taskgroups/default/web/2"); err != nil || e.Revision != rev {
		t.Fatalf("Get = %+v, %v; want revision %d", e, err, rev)
	}
	if _, err := v.Get("notify/x"); err == nil {
		t.Fatal("the view holds a key outside its prefixes")
	}

	// The last write is outside the prefixes: only etcd's progress notice
	// tells the view it has nothing to wait for.
	storetest.Apply(t, st, put("apps/default/web", "2"))
	storetest.Apply(t, st, put("notify/y", "n"))
	fresh(t, v)
	if e, _ := v.Get("apps/default/web"); string(e.Value) != "2" {
		t.Fatalf("apps/default/web = %q after Fresh, want 2", e.Value)
	}
}

// Writers reading concurrently, each after its write was acknowledged,
// each see their own write, though their Fresh calls share etcd's
// revision reads.
func TestConcurrentFreshReadsSeeOwnWrites(t *testing.T) {
	st := shared.Open(t, "readview")
	v := running(t, st, clockwork.NewRealClock())
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				key, value := fmt.Sprintf("apps/default/w%d", w), fmt.Sprint(i)
				storetest.Apply(t, st, put(key, value))
				if err := v.Fresh(testContext(t), 10*time.Second); err != nil {
					t.Errorf("Fresh: %v", err)
					return
				}
				if e, err := v.Get(key); err != nil || string(e.Value) != value {
					t.Errorf("%s after its write of %s: %q, %v", key, value, e.Value, err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// Contents moves with each change the view applies, and only then: a
// write outside its prefixes leaves what readers made of it standing.
func TestContentsCountChangesApplied(t *testing.T) {
	st := shared.Open(t, "readview")
	v := running(t, st, clockwork.NewRealClock())
	fresh(t, v)
	listed := v.Contents()
	storetest.Apply(t, st, put("notify/x", "n"))
	fresh(t, v)
	if got := v.Contents(); got != listed {
		t.Fatalf("Contents %d after a write outside the prefixes, want %d", got, listed)
	}
	storetest.Apply(t, st, put("apps/default/web", "1"), put("apps/default/db", "1"))
	fresh(t, v)
	if got := v.Contents(); got != listed+2 {
		t.Fatalf("Contents %d after two puts, want %d", got, listed+2)
	}
}

// A view that cannot catch up says so in time, for the caller to read
// etcd instead.
func TestFreshTimesOutWhenBehind(t *testing.T) {
	st := shared.Open(t, "readview")
	storetest.Apply(t, st, put("apps/default/web", "1"))
	clock := clockwork.NewFakeClock()
	v, err := readview.New(st, readview.Config{Prefixes: []string{"apps/"}, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() { got <- v.Fresh(testContext(t), time.Second) }() // never Run: it stays at revision 0
	if err := clock.BlockUntilContext(testContext(t), 2); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	if err := <-got; !errors.Is(err, readview.ErrStale) {
		t.Fatalf("Fresh = %v, want ErrStale", err)
	}
}

func TestPrefixMustBeADirectory(t *testing.T) {
	_, err := readview.New(nil, readview.Config{Prefixes: []string{"apps"}})
	if err == nil || !strings.Contains(err.Error(), `"apps"`) {
		t.Fatalf("New = %v, want an error naming the prefix", err)
	}
}

// A view with a decoder holds the records it makes, a value it cannot
// decode as bytes, and lists keys in order across nested directories
// and after leaves come and go.
func TestDecodedRecordsListedInKeyOrder(t *testing.T) {
	st := shared.Open(t, "readview")
	storetest.Apply(t, st, put("apps/default/web", "1"), put("apps/default/x/y", "2"), put("apps/default/bad", "!"))
	v, err := readview.New(st, readview.Config{Prefixes: []string{"apps/"}, Decode: func(key string, value []byte, _ int64) (any, error) {
		if string(value) == "!" {
			return nil, errors.New("not a record")
		}
		return "record " + string(value), nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = v.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	fresh(t, v)
	if e, _ := v.Get("apps/default/web"); e.Record != "record 1" || e.Value != nil {
		t.Fatalf("apps/default/web = %+v, want the decoded record only", e)
	}
	if e, _ := v.Get("apps/default/bad"); e.Record != nil || string(e.Value) != "!" {
		t.Fatalf("apps/default/bad = %+v, want its bytes", e)
	}
	var got []string
	for _, e := range v.List("apps/") {
		got = append(got, e.Key)
	}
	if want := "apps/default/bad apps/default/web apps/default/x/y"; strings.Join(got, " ") != want {
		t.Fatalf("listed %q, want %q", got, want)
	}
	var records []any
	for _, e := range v.Entries("apps/") {
		records = append(records, e.Record)
	}
	if got, want := fmt.Sprint(records), "[<nil> record 1 record 2]"; got != want {
		t.Fatalf("entries %s, want %s (in key order)", got, want)
	}
	storetest.Apply(t, st, put("apps/default/a", "3"), store.DeleteOp("apps/default/web", 0))
	fresh(t, v)
	got = nil
	for _, e := range v.List("apps/default/") {
		got = append(got, e.Key)
	}
	if want := "apps/default/a apps/default/bad apps/default/x/y"; strings.Join(got, " ") != want {
		t.Fatalf("after a put and a delete listed %q, want %q", got, want)
	}
}

// EachDir derives each directory's value once and again only after one
// of its keys changed, came or went; a directory emptied is gone.
func TestEachDirDerivesWhatChanged(t *testing.T) {
	st := shared.Open(t, "readview")
	storetest.Apply(t, st, put("taskgroups/ns/a/0", "a0"), put("taskgroups/ns/a/1", "a1"), put("taskgroups/ns/b/0", "b0"), put("apps/ns/a", "x"))
	v := running(t, st, clockwork.NewRealClock())
	derived := map[string]int{}
	each := func() string {
		var out []string
		for _, d := range v.EachDir("taskgroups/", "values", func(entries []readview.Entry) any {
			var values []string
			for _, e := range entries {
				values = append(values, string(e.Value))
			}
			joined := strings.Join(values, ",")
			derived[joined]++
			return joined
		}) {
			out = append(out, d.Dir+"="+d.Value.(string))
		}
		return strings.Join(out, " ")
	}
	fresh(t, v)
	for range 3 {
		if got, want := each(), "taskgroups/ns/a/=a0,a1 taskgroups/ns/b/=b0"; got != want {
			t.Fatalf("EachDir = %q, want %q", got, want)
		}
	}
	storetest.Apply(t, st, put("taskgroups/ns/a/1", "a1'"), put("taskgroups/ns/c/0", "c0"), store.DeleteOp("taskgroups/ns/b/0", 0), put("apps/ns/b", "y"))
	fresh(t, v)
	if got, want := each(), "taskgroups/ns/a/=a0,a1' taskgroups/ns/c/=c0"; got != want {
		t.Fatalf("EachDir after changes = %q, want %q", got, want)
	}
	each()
	if want := map[string]int{"a0,a1": 1, "b0": 1, "a0,a1'": 1, "c0": 1}; fmt.Sprint(derived) != fmt.Sprint(want) {
		t.Errorf("derived %v, want each value once: %v", derived, want)
	}
}
