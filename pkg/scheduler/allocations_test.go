package scheduler_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// Through the driver, the store's restore and watch: an instance whose
// allocation is stored beside a scale-down that removes it is held, and
// goes once released. The registry never writes the two together (its
// scales check that no removed instance is allocated); the core's guard
// covers records that do, such as those of a version without the check.
// Both are written while no driver runs: the watches of two kinds of
// record keep no order between them.
func TestDriverHoldsAnAllocatedInstanceUntilReleased(t *testing.T) {
	s := startSystem(t)
	ctx := context.Background()
	if _, err := s.reg.CreateApp(ctx, processApp("game", 3)); err != nil {
		t.Fatal(err)
	}
	s.running("game", 3)
	s.stopDriver()
	// A status write the driver sent before it stopped may still land on
	// the application's record: the allocation's check of it is tried
	// again, as a client does on a conflict.
	s.eventually("instance 1 allocated", func() (bool, string) {
		_, err := s.reg.Allocate(ctx, registry.Allocation{Namespace: "ns-a", App: "game", Instance: 1, Source: registry.AllocatedByAPI, By: "test"})
		if err != nil && !errors.Is(err, errdefs.ErrConflict) {
			t.Fatal(err)
		}
		return err == nil, fmt.Sprint(err)
	})
	key, err := registry.AllocationKey("ns-a", "game", 1)
	if err != nil {
		t.Fatal(err)
	}
	allocation, err := s.st.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.reg.Release(ctx, "ns-a", "game", 1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.reg.ScaleApp(ctx, "ns-a", "game", 1, false); err != nil {
		t.Fatal(err)
	}
	if _, err := s.st.Put(ctx, key, allocation.Value); err != nil {
		t.Fatal(err)
	}
	s.startDriver()
	held := func() (bool, string) {
		var states []string
		ok := len(s.groups("game")) == 2
		for _, g := range s.groups("game") {
			states = append(states, fmt.Sprintf("%d:%s %q", g.Index, g.Phase, g.Message))
			if g.Index == 1 && (g.Phase != "Running" || g.Message != "allocated: kept until released") {
				ok = false
			}
		}
		return ok, fmt.Sprint(states)
	}
	s.eventually("instance 2 gone, 1 held", held)
	if st, msg := s.appState("game"); msg != "1 allocated: kept until released" {
		t.Errorf("application %s %q, want it to say one allocated instance is kept", st, msg)
	}
	if err := s.reg.Release(ctx, "ns-a", "game", 1); err != nil {
		t.Fatal(err)
	}
	s.eventually("instance 1 gone once released", func() (bool, string) {
		groups := s.groups("game")
		return len(groups) == 1 && groups[0].Index == 0, fmt.Sprint(len(groups), " instances")
	})
}
