package autoscale

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
)

// Candidate is an instance a scale-down may remove.
type Candidate struct {
	ID int
	// Running: its tasks run; Ready: running and passing its readiness
	// checks.
	Running, Ready bool
	// Allocated and Going instances are never chosen.
	Allocated, Going bool
	// Value is its scale-down order value (players); nil when the
	// autoscaler has no order or the instance gave none.
	Value *float64
}

// Victims chooses the k instances a scale-down removes, with why each:
// those not running first, then those running but not ready, then the
// lowest value (an instance without one after those with one), then the
// highest ID, so that without a scale-down order an autoscaler removes
// what a manual scale-down would. An allocated instance or one already
// going is never chosen; fewer than k come back when fewer qualify.
func Victims(cands []Candidate, k int) []manifest.RemovedInstance {
	eligible := make([]Candidate, 0, len(cands))
	for _, c := range cands {
		if !c.Allocated && !c.Going {
			eligible = append(eligible, c)
		}
	}
	slices.SortFunc(eligible, func(a, b Candidate) int {
		if r := cmp.Compare(readiness(a), readiness(b)); r != 0 {
			return r
		}
		if (a.Value == nil) != (b.Value == nil) {
			if a.Value == nil {
				return 1
			}
			return -1
		}
		if a.Value != nil {
			if r := cmp.Compare(*a.Value, *b.Value); r != 0 {
				return r
			}
		}
		return cmp.Compare(b.ID, a.ID)
	})
	out := make([]manifest.RemovedInstance, 0, min(k, len(eligible)))
	for _, c := range eligible[:min(k, len(eligible))] {
		out = append(out, manifest.RemovedInstance{ID: c.ID, Why: victimWhy(c)})
	}
	return out
}

// readiness ranks how little an instance serves: not running 0, running
// but not ready 1, ready 2.
func readiness(c Candidate) int {
	switch {
	case !c.Running:
		return 0
	case !c.Ready:
		return 1
	}
	return 2
}

func victimWhy(c Candidate) string {
	switch {
	case !c.Running:
		return "not running"
	case !c.Ready:
		return "not ready"
	case c.Value != nil:
		return fmt.Sprintf("value %g", *c.Value)
	}
	return "highest ID"
}
