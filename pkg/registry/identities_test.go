package registry_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/identity"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// Each namespace gets one uid of the range, recorded once;
// writers racing — two replicas, say — never give one uid to two
// namespaces nor two uids to one, and a full range is a clear error.
func TestEnsureNamespaceUID(t *testing.T) {
	r1, st := newRegistry(t)
	r2 := registry.New(st, time.Now)
	uids := identity.Range{First: 20000, Last: 20009}

	var mu sync.Mutex
	got := map[string]map[uint32]bool{} // namespace → uids answered
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := r1
			if i%2 == 1 {
				r = r2
			}
			ns := fmt.Sprintf("ns-%d", i%8)
			uid, err := r.EnsureNamespaceUID(ctx, ns, uids)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if got[ns] == nil {
				got[ns] = map[uint32]bool{}
			}
			got[ns][uid] = true
		}()
	}
	wg.Wait()
	holders := map[uint32]string{}
	for ns, set := range got {
		if len(set) != 1 {
			t.Errorf("namespace %s got several uids: %v", ns, set)
		}
		for uid := range set {
			if other, ok := holders[uid]; ok {
				t.Errorf("uid %d given to %s and %s", uid, ns, other)
			}
			holders[uid] = ns
			if !uids.Contains(uid) {
				t.Errorf("uid %d is outside %s", uid, uids)
			}
		}
	}
	all := map[string]uint32{}
	for i := range 8 {
		ns := fmt.Sprintf("ns-%d", i)
		uid, found, err := r1.NamespaceUID(ctx, ns)
		if err != nil || !found || !got[ns][uid] {
			t.Errorf("stored %s → %d (%v %v), answered %v", ns, uid, found, err, got[ns])
		}
		all[ns] = uid
	}
	// Recorded once: asked again, under another range even, the same.
	if uid, err := r2.EnsureNamespaceUID(ctx, "ns-3", identity.Range{First: 5000, Last: 5001}); err != nil || uid != all["ns-3"] {
		t.Errorf("ns-3 again: %d %v, want %d", uid, err, all["ns-3"])
	}
	if uid, found, err := r1.NamespaceUID(ctx, "ns-none"); err != nil || found {
		t.Errorf("a namespace without a uid: %d %v %v", uid, found, err)
	}
	// Two uids left, then none.
	for _, ns := range []string{"ns-8", "ns-9"} {
		if _, err := r1.EnsureNamespaceUID(ctx, ns, uids); err != nil {
			t.Fatal(err)
		}
	}
	_, err := r1.EnsureNamespaceUID(ctx, "ns-10", uids)
	if !errors.Is(err, errdefs.ErrUnavailable) || !strings.Contains(err.Error(), `namespace "ns-10" gets no uid: every one of the 10 uids of --namespace-uids 20000-20009 is another namespace's`) {
		t.Errorf("a full range: %v", err)
	}
	if _, found, _ := r1.NamespaceUID(ctx, "ns-10"); found {
		t.Error("a namespace refused a uid has one")
	}
}

// A uid already recorded for another namespace (a replica crashed after
// choosing it, say) is skipped, not shared.
func TestEnsureNamespaceUIDSkipsTaken(t *testing.T) {
	r, st := newRegistry(t)
	key, _ := store.Key(store.KindUID, "20000")
	if _, err := st.Create(ctx, key, []byte(`{"namespace":"elsewhere"}`)); err != nil {
		t.Fatal(err)
	}
	if uid, err := r.EnsureNamespaceUID(ctx, "ns-a", identity.Range{First: 20000, Last: 20001}); err != nil || uid != 20001 {
		t.Errorf("got %d %v, want 20001", uid, err)
	}
}
