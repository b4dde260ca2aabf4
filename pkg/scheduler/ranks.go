package scheduler

import (
	"slices"

	"github.com/bcs-mesos/bcs-mesos/pkg/rollout"
)

// Holes and ranks. An application wants the IDs registry.WantedIDs gives
// for its record: 0…Instances−1 unless instances removed by choice left
// holes (App.Removed) below the highest. Its surge instances take the
// IDs after the highest wanted one. The rollout controller counts
// replicas from 0, so while there are holes (and always for a daemonset,
// whose IDs have holes where agents left) it sees ranks: the ranked IDs
// (byRank) are 0, 1, …, an ID above them (a surge one) the ranks after,
// and an instance in a hole, on its way out, is not seen. Budgets,
// partitions and surge then count as without holes.

// span is one past the highest ID a wants, its surge instances included.
func (a *app) span() int { return a.spanOf(a.rec.Instances + a.plan.Surge) }

// spanOf is one past the highest of the n lowest IDs not in holes.
func (a *app) spanOf(n int) int {
	for _, id := range a.rec.Removed { // sorted
		if id < n {
			n++
		}
	}
	return n
}

// hole reports whether ID id was removed by choice and is not wanted.
func (a *app) hole(id int) bool {
	_, found := slices.BinarySearch(a.rec.Removed, id)
	return found
}

// wants reports whether a wants an instance with ID id, surge included.
func (a *app) wants(id int) bool { return id < a.span() && !a.hole(id) }

// rank has the rollout controller see instances by rank, with ranked the
// IDs (sorted) given ranks 0, 1, …; it drops those in holes.
func (a *app) rank(instances []rollout.Instance, ranked []int) []rollout.Instance {
	a.byRank = ranked
	return ranks(ranked).of(instances)
}

// ranks are the IDs (sorted) the rollout controller sees as 0, 1, …
type ranks []int

// of returns instances by rank, without those in holes.
func (r ranks) of(instances []rollout.Instance) []rollout.Instance {
	seen := instances[:0]
	for _, x := range instances {
		if rank, ok := r.rankOf(x.Index); ok {
			x.Index = rank
			seen = append(seen, x)
		}
	}
	return seen
}

// rankOf is the rank of ID id; false for an ID in a hole below the
// highest ranked one.
func (r ranks) rankOf(id int) (int, bool) {
	rank, found := slices.BinarySearch(r, id)
	switch {
	case found:
		return rank, true
	case rank == len(r):
		return rank + id - r.after(), true
	}
	return 0, false
}

// id is the ID of rank.
func (r ranks) id(rank int) int {
	if rank < len(r) {
		return r[rank]
	}
	return rank + r.after() - len(r)
}

// after is the ID after the highest ranked, 0 for none.
func (r ranks) after() int {
	if len(r) == 0 {
		return 0
	}
	return r[len(r)-1] + 1
}

// instanceAt is the instance the rollout controller calls index.
func (a *app) instanceAt(index int) *instance {
	if a.byRank != nil {
		index = a.byRank.id(index)
	}
	return a.instances[index]
}

// target is the revision instance ID index should run by the plan; an
// instance the plan does not rank (a daemonset's new one, ranked after
// every other) is a surge instance to it: it launches the update
// revision.
func (a *app) target(index int) rollout.Rev {
	if a.byRank != nil {
		rank, ok := a.byRank.rankOf(index)
		if !ok {
			rank = len(a.byRank)
		}
		index = rank
	}
	return a.plan.Target(index)
}
