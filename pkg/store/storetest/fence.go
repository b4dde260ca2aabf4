package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// A deposed leader writes nothing: a replica that still believes it leads
// must not overwrite its successor's work. Two replicas campaign; the
// leader writes through a view fenced by its term; its lease is revoked
// (as when its TTL lapses while it is paused or cut off), the other
// replica takes over, and then every kind of write the old leader makes
// through its fenced view is refused with ErrDeposed — not ErrConflict,
// which callers retry — and changes nothing, while the new leader's fenced
// writes and the old replica's unfenced ones (users' API writes) go on.
func testFence(t *testing.T, h *harness) {
	a, b := h.open(), h.open()
	electionA, electionB, bLeads := campaignBoth(t, a, b)
	fencedA := a.WithFence(electionA.Fence())
	leadWithinTerm(t, fencedA, electionA)

	// a's lease ends in etcd; a still believes it leads.
	if leader := ExpireLeader(t, h.cluster.Endpoints(), h.prefix, "scheduler"); leader != "http://a" {
		t.Fatalf("expired the lease of %q, want a's", leader)
	}
	select {
	case err := <-bLeads:
		if err != nil {
			t.Fatalf("b's campaign: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("b did not take over after a's lease was revoked")
	}

	deposedWritesRefused(t, a, fencedA)
	select {
	case <-electionA.Fence().Refused():
	default:
		t.Fatal("Refused not closed after a refused write")
	}
	// a's session notices its lease is gone too.
	select {
	case <-electionA.Lost():
	case <-time.After(10 * time.Second):
		t.Fatal("Lost not closed after a's lease was revoked")
	}

	// The new leader writes through its own fence; users' writes on the
	// old replica are not fenced.
	if _, err := b.WithFence(electionB.Fence()).Put(ctx(t), "agents/a1", []byte("b's")); err != nil {
		t.Fatalf("new leader's fenced Put: %v", err)
	}
	if _, err := a.Create(ctx(t), "configmaps/default/user", []byte("x")); err != nil {
		t.Fatalf("unfenced Create on the old replica: %v", err)
	}
}

// campaignBoth has a and b campaign for one leadership: a wins, and b's
// campaign ends on bLeads when b takes over.
func campaignBoth(t *testing.T, a, b *store.Store) (electionA, electionB *store.Election, bLeads <-chan error) {
	t.Helper()
	const ttl = 3 * time.Second // kept alive every second: only the revocation ends a's term
	electionA, err := a.NewElection(ctx(t), "scheduler", ttl)
	if err != nil {
		t.Fatal(err)
	}
	electionB, err = b.NewElection(ctx(t), "scheduler", ttl)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = electionB.Resign(ctx(t)) })
	if err := electionA.Campaign(ctx(t), "http://a"); err != nil {
		t.Fatal(err)
	}
	leads := make(chan error, 1)
	go func() { leads <- electionB.Campaign(ctx(t), "http://b") }()
	return electionA, electionB, leads
}

// leadWithinTerm writes through the leader's fenced view while its term
// holds: the writes land, a failed precondition is reported as usual,
// and the fence refuses nothing.
func leadWithinTerm(t *testing.T, fencedA *store.Store, electionA *store.Election) {
	t.Helper()
	rev := mustCreate(t, fencedA, "apps/default/web", "spec 1")
	mustCreate(t, fencedA, "taskgroups/default/web/tg-0", "running")
	if _, err := fencedA.Update(ctx(t), "apps/default/web", []byte("spec 2"), rev); err != nil {
		t.Fatalf("leader's fenced Update: %v", err)
	}
	// While the term holds, a failed precondition is reported as usual.
	_, err := fencedA.Create(ctx(t), "apps/default/web", []byte("again"))
	wantClass(t, "leader's Create of an existing key", err, errdefs.ErrAlreadyExists)
	if errors.Is(err, store.ErrDeposed) {
		t.Fatalf("Create of an existing key while leading: %v, want no ErrDeposed", err)
	}
	select {
	case <-electionA.Fence().Refused():
		t.Fatal("the fence refused a write while its term held")
	default:
	}
}

// deposedWritesRefused makes every kind of write through the deposed
// leader's fenced view: each is refused with ErrDeposed and the store
// is unchanged.
func deposedWritesRefused(t *testing.T, a, fencedA *store.Store) {
	t.Helper()
	before, err := a.Revision(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	writes := map[string]func() error{
		"Create": func() error {
			_, err := fencedA.Create(ctx(t), "apps/default/new", []byte("x"))
			return err
		},
		"Update": func() error {
			e := mustGet(t, a, "apps/default/web")
			_, err := fencedA.Update(ctx(t), "apps/default/web", []byte("spec 3"), e.Revision)
			return err
		},
		"Put": func() error {
			_, err := fencedA.Put(ctx(t), "agents/a1", []byte("x"))
			return err
		},
		"Delete": func() error { return fencedA.Delete(ctx(t), "taskgroups/default/web/tg-0", 0) },
		// Every transaction of a batch is fenced: the first is refused,
		// the others are not tried.
		"Batch": func() error {
			batch := fencedA.Batch()
			for i := range 300 {
				batch.Add(store.PutOp(fmt.Sprintf("taskgroups/default/web/tg-%d", i), []byte("x")))
			}
			_, err := batch.Commit(ctx(t))
			return err
		},
		// A precondition that fails too: the fence is reported first.
		"Apply": func() error {
			_, err := fencedA.Apply(ctx(t), store.CreateOp("apps/default/web", []byte("x")), store.PutOp("agents/a2", []byte("x")))
			return err
		},
	}
	for name, write := range writes {
		err := write()
		if !errors.Is(err, store.ErrDeposed) || !errors.Is(err, errdefs.ErrUnavailable) || errors.Is(err, errdefs.ErrConflict) {
			t.Errorf("deposed leader's %s: %v, want ErrDeposed (ErrUnavailable, not ErrConflict)", name, err)
		}
	}
	if after, err := a.Revision(ctx(t)); err != nil || after != before {
		t.Fatalf("store revision %d → %d (%v): a deposed leader's write landed", before, after, err)
	}
	wantValue(t, a, "apps/default/web", "spec 2")
}
