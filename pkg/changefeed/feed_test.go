package changefeed_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/bcs-mesos/bcs-mesos/pkg/changefeed"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
	"github.com/bcs-mesos/bcs-mesos/pkg/store/storetest"
)

var shared storetest.Shared

func TestMain(m *testing.M) { os.Exit(storetest.RunShared(m, &shared)) }

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func put(key, value string) store.Op { return store.PutOp(key, []byte(value)) }

func follow(t *testing.T, st *store.Store, after *changefeed.ID, opts changefeed.Options) *changefeed.Subscription {
	t.Helper()
	sub, err := changefeed.New(st).Follow(testContext(t), after, opts)
	if err != nil {
		t.Fatalf("Follow: %v", err)
	}
	t.Cleanup(sub.Close)
	return sub
}

// next reads one change as "id action key=value", or "id reset".
func next(t *testing.T, sub *changefeed.Subscription) string {
	t.Helper()
	type result struct {
		c   changefeed.Change
		err error
	}
	got := make(chan result, 1)
	go func() {
		c, err := sub.Next()
		got <- result{c, err}
	}()
	select {
	case r := <-got:
		if r.err != nil {
			t.Fatalf("Next: %v", r.err)
		}
		if r.c.Reset {
			return r.c.ID.String() + " reset"
		}
		return fmt.Sprintf("%s %s %s=%s", r.c.ID, r.c.Action, r.c.Key, r.c.Value)
	case <-time.After(10 * time.Second):
		t.Fatal("no change within 10s")
	}
	panic("unreachable")
}

func expect(t *testing.T, sub *changefeed.Subscription, want ...string) {
	t.Helper()
	for _, w := range want {
		if got := next(t, sub); got != w {
			t.Fatalf("change %q, want %q", got, w)
		}
	}
}

func TestIDs(t *testing.T) {
	for text, want := range map[string]changefeed.ID{
		"1234.2": {Revision: 1234, Index: 2},
		"7.0":    {Revision: 7, Index: 0},
		"1234":   changefeed.EndOf(1234),
		"0":      changefeed.EndOf(0),
	} {
		got, err := changefeed.ParseID(text)
		if err != nil || got != want || got.String() != text {
			t.Errorf("ParseID(%q) = %v (%q), %v; want %v", text, got, got, err, want)
		}
	}
	for _, bad := range []string{"", "x", "-1", "1.", ".2", "1.-2", "1.2.3", "01.2", "1.02", "1 .2", "9223372036854775808"} {
		if _, err := changefeed.ParseID(bad); !errors.Is(err, errdefs.ErrInvalidArgument) || !strings.Contains(err.Error(), fmt.Sprintf("%q", bad)) {
			t.Errorf("ParseID(%q) = %v, want an invalid argument naming it", bad, err)
		}
	}
	order := []changefeed.ID{{Revision: 5, Index: 0}, {Revision: 5, Index: 3}, changefeed.EndOf(5), {Revision: 6, Index: 0}}
	for i := range order {
		for j := range order {
			if got := order[i].Before(order[j]); got != (i < j) {
				t.Errorf("%s.Before(%s) = %v", order[i], order[j], got)
			}
		}
	}
}

// A subscription from now sees the later changes in order, each with its
// place in its transaction; the keys it does not keep still count.
func TestFollowFromNow(t *testing.T) {
	st := shared.Open(t, "changefeed")
	storetest.Apply(t, st, put("apps/default/before", "old"))
	sub := follow(t, st, nil, changefeed.Options{Keep: func(key string) bool { return !strings.HasPrefix(key, "secrets/") }})
	start := sub.Position()
	txn := storetest.Apply(t, st, put("apps/default/a", "1"), put("secrets/default/s", "hidden"), put("taskgroups/default/a/0", "2"))
	if start.Revision >= txn {
		t.Fatalf("start %s is not before the write at %d", start, txn)
	}
	if err := st.Delete(testContext(t), "apps/default/a", 0); err != nil {
		t.Fatal(err)
	}
	expect(t, sub,
		fmt.Sprintf("%d.0 put apps/default/a=1", txn),
		fmt.Sprintf("%d.2 put taskgroups/default/a/0=2", txn),
		fmt.Sprintf("%d.0 delete apps/default/a=", txn+1))
	if got := sub.Position(); got != (changefeed.ID{Revision: txn + 1, Index: 0}) {
		t.Errorf("Position = %s, want %d.0", got, txn+1)
	}
}

// A client resumes from the last event ID it saw: following on from an ID
// inside a transaction delivers exactly the rest of it, then what came
// after.
func TestFollowOnInsideATransaction(t *testing.T) {
	st := shared.Open(t, "changefeed")
	txn := storetest.Apply(t, st, put("apps/default/a", "1"), put("apps/default/b", "2"), put("apps/default/c", "3"))
	later := storetest.Apply(t, st, put("agents/a1", "4"))
	expect(t, follow(t, st, &changefeed.ID{Revision: txn, Index: 0}, changefeed.Options{}),
		fmt.Sprintf("%d.1 put apps/default/b=2", txn),
		fmt.Sprintf("%d.2 put apps/default/c=3", txn),
		fmt.Sprintf("%d.0 put agents/a1=4", later))
	expect(t, follow(t, st, ptr(changefeed.EndOf(txn)), changefeed.Options{}),
		fmt.Sprintf("%d.0 put agents/a1=4", later))
}

// A paused subscription follows on from its position: nothing written
// meanwhile is lost, nothing is repeated, also inside a transaction.
func TestPauseFollowsOn(t *testing.T) {
	st := shared.Open(t, "changefeed")
	sub := follow(t, st, nil, changefeed.Options{})
	txn := storetest.Apply(t, st, put("apps/default/a", "1"), put("apps/default/b", "2"), put("apps/default/c", "3"))
	expect(t, sub, fmt.Sprintf("%d.0 put apps/default/a=1", txn))
	sub.Pause()
	later := storetest.Apply(t, st, put("agents/a1", "4"))
	sub.Pause() // twice is harmless
	expect(t, sub,
		fmt.Sprintf("%d.1 put apps/default/b=2", txn),
		fmt.Sprintf("%d.2 put apps/default/c=3", txn),
		fmt.Sprintf("%d.0 put agents/a1=4", later))
}

// A delete of a key Previous selects carries what it removed.
func TestDeleteCarriesPrevious(t *testing.T) {
	st := shared.Open(t, "changefeed")
	sub := follow(t, st, nil, changefeed.Options{Previous: func(key string) bool { return strings.HasPrefix(key, "apps/") }})
	storetest.Apply(t, st, put("apps/default/a", "v1"), put("agents/x", "a"))
	storetest.Apply(t, st, store.DeleteOp("apps/default/a", 0), store.DeleteOp("agents/x", 0))
	want := map[string]string{"apps/default/a": "v1", "agents/x": ""}
	for range 4 {
		c, err := sub.Next()
		if err != nil {
			t.Fatal(err)
		}
		if c.Action == changefeed.Delete && string(c.Previous) != want[c.Key] {
			t.Errorf("delete of %s carries %q, want %q", c.Key, c.Previous, want[c.Key])
		}
	}
}

// An ID beyond the store's revision (another etcd, a restored backup) is
// a Reset at the current revision, not a silent wait for revisions that
// would skip everything until then.
func TestFollowFromTheFutureResets(t *testing.T) {
	st := shared.Open(t, "changefeed")
	current, err := st.Revision(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	sub := follow(t, st, &changefeed.ID{Revision: current + 1000, Index: 0}, changefeed.Options{})
	first := next(t, sub)
	id, _, _ := strings.Cut(first, " ")
	reset, err := changefeed.ParseID(id)
	if err != nil || !strings.HasSuffix(first, " reset") || reset.Revision < current || reset.Revision > current+1000 {
		t.Fatalf("first change %q, want a reset at the current revision ≥ %d", first, current)
	}
	rev := storetest.Apply(t, st, put("apps/default/a", "1"))
	expect(t, sub, fmt.Sprintf("%d.0 put apps/default/a=1", rev))
}

// A resume from a compacted revision is an explicit Reset at
// the current revision; the subscription then goes on with what follows.
// Last in the file: compaction drops the history of the shared etcd.
func TestFollowFromCompactedRevisionResets(t *testing.T) {
	st := shared.Open(t, "changefeed")
	old := storetest.Apply(t, st, put("apps/default/a", "1"))
	current := storetest.Apply(t, st, put("apps/default/a", "2"))
	raw, err := clientv3.New(clientv3.Config{Endpoints: shared.Etcd.Endpoints(), DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Compact(testContext(t), current); err != nil {
		t.Fatal(err)
	}
	sub := follow(t, st, &changefeed.ID{Revision: old, Index: 0}, changefeed.Options{})
	first := next(t, sub)
	if !strings.HasSuffix(first, " reset") {
		t.Fatalf("first change %q, want a reset", first)
	}
	if sub.Position().Revision < current {
		t.Errorf("reset at %s, want at or after the compaction at %d", sub.Position(), current)
	}
	rev := storetest.Apply(t, st, put("apps/default/b", "3"))
	expect(t, sub, fmt.Sprintf("%d.0 put apps/default/b=3", rev))

	// A delete whose previous value was compacted cannot say what went.
	deleted := storetest.Apply(t, st, store.DeleteOp("apps/default/b", 0))
	if _, err := raw.Compact(testContext(t), deleted); err != nil {
		t.Fatal(err)
	}
	sub = follow(t, st, ptr(changefeed.EndOf(rev)), changefeed.Options{Previous: func(string) bool { return true }})
	if first := next(t, sub); !strings.HasSuffix(first, " reset") {
		t.Fatalf("first change %q, want a reset", first)
	}
}

func ptr[T any](v T) *T { return &v }

// A progress notice moves a reader past writes it does not keep; a
// reader that did not ask for notices never sees one.
func TestProgressPassesDroppedKeys(t *testing.T) {
	st := shared.Open(t, "changefeed")
	keepApps := func(key string) bool { return strings.HasPrefix(key, "apps/") }
	withProgress := follow(t, st, nil, changefeed.Options{Keep: keepApps, Progress: true})
	without := follow(t, st, nil, changefeed.Options{Keep: keepApps})
	rev := storetest.Apply(t, st, put("notify/x", "1"))
	if err := st.RequestProgress(testContext(t)); err != nil {
		t.Fatal(err)
	}
	c, err := withProgress.Next()
	if err != nil {
		t.Fatal(err)
	}
	if !c.Progress || c.ID.Revision < rev || withProgress.Position() != c.ID {
		t.Fatalf("change %+v at %s, want a progress notice at or after %d", c, withProgress.Position(), rev)
	}
	app := storetest.Apply(t, st, put("apps/default/a", "2"))
	expect(t, without, fmt.Sprintf("%d.0 put apps/default/a=2", app))
}
