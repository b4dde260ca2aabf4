package registry_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// A step's writes in one Txn: stored in order in a few transactions
// (store.Batch splits them at etcd's limits), each record with the
// revision it was stored at, a notice in its task group's transaction,
// a deletion after a put of the same record winning.
func TestTxnStoresInOrderWithNotices(t *testing.T) {
	r, s := newRegistry(t)
	at := time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)
	txn := r.Txn()
	groups := make([]*registry.TaskGroup, 300)
	for i := range groups {
		groups[i] = &registry.TaskGroup{ID: fmt.Sprintf("ns-a_game_%d_1", i), Namespace: "ns-a", App: "game", Index: i, State: "TASK_STAGING"}
		if err := txn.PutTaskGroup(groups[i]); err != nil {
			t.Fatal(err)
		}
	}
	notice := registry.Notice{ID: registry.NoticeID(at, "ns-a_game_7_1", registry.NoticeExit), Type: registry.NoticeExit,
		Namespace: "ns-a", App: "game", TaskGroupID: "ns-a_game_7_1", Time: at}
	failed := &registry.TaskGroup{ID: "ns-a_game_7_1", Namespace: "ns-a", App: "game", Index: 7, State: "TASK_FAILED"}
	if err := txn.PutTaskGroup(failed, notice); err != nil {
		t.Fatal(err)
	}
	if err := txn.DeleteTaskGroup("ns-a", "game", 8); err != nil {
		t.Fatal(err)
	}
	if err := txn.DeleteTaskGroup("ns-a", "game", 999); err != nil { // never stored: fine
		t.Fatal(err)
	}
	if txn.Len() != 303 || txn.Transactions() != 3 {
		t.Fatalf("Len %d, Transactions %d; want 303 writes in 3 transactions (127 ops each at most)", txn.Len(), txn.Transactions())
	}
	if err := txn.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	stored, err := r.TaskGroups(ctx, "ns-a", "game")
	if err != nil || len(stored) != 299 {
		t.Fatalf("TaskGroups: %d, %v; want 299 (one deleted)", len(stored), err)
	}
	for _, tg := range stored {
		want := groups[tg.Index]
		if tg.Index == 7 {
			want = failed
		}
		if tg.Index == 8 || tg.State != want.State || tg.Revision != want.Revision || want.Revision == 0 {
			t.Fatalf("stored %s %s at revision %d, want %s at %d", tg.ID, tg.State, tg.Revision, want.State, want.Revision)
		}
	}
	if groups[0].Revision == groups[299].Revision {
		t.Fatalf("300 puts at one revision %d: one transaction over etcd's 128 ops", groups[0].Revision)
	}
	notices, err := r.ListNotifications(ctx)
	if err != nil || len(notices) != 1 || notices[0].Notice != notice {
		t.Fatalf("ListNotifications = %+v, %v", notices, err)
	}
	key, _ := registry.NotificationKey(notice.ID)
	if e, err := s.Get(ctx, key); err != nil || e.Revision != failed.Revision {
		t.Fatalf("notice at revision %d (%v), its task group's at %d: want one transaction", e.Revision, err, failed.Revision)
	}
	value, _ := json.Marshal(stored[0])
	t.Logf("a task group record (no tasks) is %d bytes", len(value))
}
