package devcluster

import (
	"slices"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// A pass for freed resources visits only the agents that freed them; an
// agent offerable for another reason waits for a pass over every agent,
// which trigger (and the interval) makes.
func TestFreedPassVisitsOnlyTheAgentsThatFreed(t *testing.T) {
	var offered [][]string
	al := newAllocator(clockwork.NewFakeClock(), time.Second, func(batches []offerBatch) {
		ids := []string{}
		for _, b := range batches {
			for _, g := range b.grants {
				ids = append(ids, g.agent.id)
			}
		}
		offered = append(offered, ids)
	})
	cpus := mesos.Resources{scalarResource("cpus", 1)}
	a, b := al.addAgent("a", cpus), al.addAgent("b", cpus)
	al.addFramework("f").setConnected(true, false)
	steps := []struct {
		what string
		do   func()
		want []string
	}{
		{"the first pass, over every agent", al.trigger, []string{"a", "b"}},
		{"b freed while inactive", func() { b.setActive(false); b.recover(cpus) }, []string{}},
		{"b active again, a freed", func() { b.setActive(true); a.recover(cpus) }, []string{"a"}},
		{"a pass over every agent", al.trigger, []string{"b"}},
	}
	for _, st := range steps {
		st.do()
		al.pass()
		if got := offered[len(offered)-1]; !slices.Equal(got, st.want) {
			t.Fatalf("after %s: offered %v, want %v", st.what, got, st.want)
		}
	}
}
