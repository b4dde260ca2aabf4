package storetest

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// A batch applies its units in order in as few transactions as etcd's
// default limits allow (--max-txn-ops 128, --max-request-bytes 1.5 MiB;
// the etcd binary of the suite runs with the defaults, so a transaction
// over either is refused there): 300 puts make 3 transactions, not 300;
// a unit writing a key its transaction already writes starts the next
// one, so the later write wins; a unit stays in one transaction.
func testBatch(t *testing.T, h *harness) {
	s := h.open()
	mustCreate(t, s, "taskgroups/default/web/gone", "x")

	b := s.Batch()
	for i := range 300 {
		b.Add(store.PutOp(fmt.Sprintf("taskgroups/default/web/%d", i), []byte("v1")))
	}
	// The same key again, then removed: the later writes win.
	b.Add(store.PutOp("taskgroups/default/web/0", []byte("v2")))
	b.Add(store.PutOp("taskgroups/default/web/1", []byte("v2")))
	b.Add(store.RemoveOp("taskgroups/default/web/1"))
	b.Add(store.RemoveOp("taskgroups/default/web/gone"))
	b.Add(store.RemoveOp("taskgroups/default/web/never")) // missing: fine
	// A unit of 3 ops that would cross the 127-op boundary of the
	// transaction it starts in moves whole to the next.
	for i := range 125 {
		b.Add(store.PutOp(fmt.Sprintf("agents/a%d", i), []byte("x")))
	}
	unit := b.Add(store.PutOp("apps/default/unit", []byte("x")), store.CreateOp("notifications/n1", []byte("x")), store.CreateOp("notifications/n2", []byte("x")))
	// Records of 300 KiB: four fill a transaction's byte budget.
	big := strings.Repeat("x", 300<<10)
	for i := range 8 {
		b.Add(store.PutOp(fmt.Sprintf("rollouts/default/big%d", i), []byte(big)))
	}
	if b.Len() != 300+5+125+1+8 {
		t.Fatalf("Len %d", b.Len())
	}
	// Transactions: puts 0-126; 127-253; 254-299 with 0 and 1 again
	// (not yet in it); the removal of 1 (in it: the next), the other
	// removals and 124 agents (127 ops); the last agent, the unit and 3
	// big records (1 MiB would be crossed by a 4th); 3 big; 2 big.
	revs, err := b.Commit(ctx(t))
	if err != nil {
		t.Fatalf("Commit: %v", err)
	}
	if len(revs) != b.Len() {
		t.Fatalf("%d revisions for %d units", len(revs), b.Len())
	}
	txns := 1
	for i := 1; i < len(revs); i++ {
		if revs[i] < revs[i-1] {
			t.Fatalf("unit %d written at revision %d, before unit %d (%d)", i, revs[i], i-1, revs[i-1])
		}
		if revs[i] != revs[i-1] {
			txns++
		}
	}
	if txns != 7 || b.Transactions() != 7 {
		t.Fatalf("%d transactions (Transactions says %d), want 7", txns, b.Transactions())
	}
	if revs[0] != revs[126] || revs[127] == revs[126] {
		t.Fatalf("revisions of puts 1, 127 and 128: %d %d %d, want 127 ops in the first transaction", revs[0], revs[126], revs[127])
	}
	wantValue(t, s, "taskgroups/default/web/0", "v2")
	wantValue(t, s, "taskgroups/default/web/299", "v1")
	for _, gone := range []string{"taskgroups/default/web/1", "taskgroups/default/web/gone", "taskgroups/default/web/never"} {
		_, err := s.Get(ctx(t), gone)
		wantClass(t, "removed "+gone, err, errdefs.ErrNotFound)
	}
	for _, key := range []string{"apps/default/unit", "notifications/n1", "notifications/n2"} {
		if e := mustGet(t, s, key); e.Revision != revs[unit] {
			t.Fatalf("%s at revision %d, want its unit's %d: a unit split across transactions", key, e.Revision, revs[unit])
		}
	}
	bigTxns := map[int64]int{}
	for i := range 8 {
		bigTxns[revs[len(revs)-8+i]]++
	}
	for rev, n := range bigTxns {
		if n > 3 {
			t.Fatalf("%d records of 300 KiB in the transaction of revision %d: over 1 MiB", n, rev)
		}
	}

	// A unit whose precondition fails stops the commit there: the
	// transactions before it are written, its own and later ones not.
	b = s.Batch()
	for i := range 200 {
		b.Add(store.PutOp(fmt.Sprintf("sweeps/a%d", i), []byte("x")))
	}
	b.Add(store.PutOp("sweeps/b0", []byte("x")), store.CreateOp("notifications/n1", []byte("again")))
	b.Add(store.PutOp("sweeps/b1", []byte("x")))
	_, err = b.Commit(ctx(t))
	wantClass(t, "batch with a notice that exists", err, errdefs.ErrAlreadyExists)
	if !strings.Contains(err.Error(), "transaction 2 of 2") {
		t.Fatalf("error %q does not say which transaction failed", err)
	}
	wantValue(t, s, "sweeps/a126", "x")
	for _, key := range []string{"sweeps/a127", "sweeps/a199", "sweeps/b0", "sweeps/b1"} {
		if _, err := s.Get(ctx(t), key); !errors.Is(err, errdefs.ErrNotFound) {
			t.Fatalf("%s after a failed transaction: %v, want not written", key, err)
		}
	}
}

// GetMany reads 300 keys, some missing, in groups within etcd's
// --max-txn-ops (the etcd binary refuses a transaction of 300 reads),
// in the order asked, a missing key as a zero entry; secrets come back
// unsealed.
func testGetMany(t *testing.T, h *harness) {
	s := h.open()
	var keys []string
	for i := range 300 {
		key := fmt.Sprintf("taskgroups/default/many/%d", i)
		keys = append(keys, key)
		if i%3 != 0 {
			mustCreate(t, s, key, fmt.Sprint("v", i))
		}
	}
	entries, err := s.GetMany(ctx(t), keys)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(keys) {
		t.Fatalf("%d entries for %d keys", len(entries), len(keys))
	}
	for i, e := range entries {
		switch {
		case i%3 == 0 && e.Revision != 0:
			t.Errorf("missing key %d read as %+v", i, e)
		case i%3 != 0 && (e.Key != keys[i] || string(e.Value) != fmt.Sprint("v", i) || e.Revision == 0):
			t.Errorf("key %d read as %q %q at %d", i, e.Key, e.Value, e.Revision)
		}
	}
	if _, err := s.GetMany(ctx(t), []string{"taskgroups//x"}); !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Errorf("GetMany of a bad key: %v, want ErrInvalidArgument", err)
	}
}
