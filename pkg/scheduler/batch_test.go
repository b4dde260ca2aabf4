package scheduler_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// Issue 19: the driver stores a step's records in as few etcd
// transactions as etcd's limits allow (128 ops), not one each: the 300
// instances an application's creation makes are first written in a few
// transactions (a transaction is one etcd revision), and every one is
// stored.
func TestDriverBatchesAStepsWrites(t *testing.T) {
	s := startSystem(t)
	if _, err := s.reg.CreateApp(context.Background(), processApp("many", 300)); err != nil {
		t.Fatal(err)
	}
	s.eventually("300 instances stored", func() (bool, string) {
		n := len(s.groups("many"))
		return n == 300, fmt.Sprintf("%d stored", n)
	})
	prefix, err := store.Prefix(store.KindTaskGroup)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := s.st.List(context.Background(), prefix+"ns-a/many/")
	if err != nil || len(entries) != 300 {
		t.Fatalf("List: %d entries, %v", len(entries), err)
	}
	created := map[int64]int{} // instances by the revision that first stored them
	largest := 0
	for _, e := range entries {
		created[e.CreateRevision]++
		largest = max(largest, len(e.Value))
	}
	// 127 records of this size are far below etcd's 1.5 MiB a request.
	t.Logf("largest task group record: %d bytes", largest)
	if len(created) != 3 {
		t.Fatalf("300 instances created in %d transactions (%v), want 3 of up to 127 writes", len(created), created)
	}
	t.Logf("300 instances created in %d transactions: %v", len(created), created)
}
