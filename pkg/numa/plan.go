package numa

import (
	"fmt"
	"math"
	"math/rand"
	"sort"
	"strings"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
)

// Reason says why a request was or was not pinned (seed 001 rules).
type Reason string

// The reasons, in the order Plan checks them.
const (
	ReasonPinned          Reason = "pinned"                 // one node, whole CPUs
	ReasonNoPinFlag       Reason = "no-pin-flag"            // 不设置CPU绑定标识,忽略
	ReasonNotWholeCPUs    Reason = "not-whole-cpus"         // only whole CPUs are pinned
	ReasonMoreThanMachine Reason = "more-cpus-than-machine" // CPU数大于机器已有的CPU数,忽略
	ReasonSingleNode      Reason = "single-numa-node"       // 如果NUMA节点只有一个,不做NUMA设置: CPUs pinned, no memory node
	ReasonNeedsAllNodes   Reason = "needs-every-numa-node"  // 所需NUMA节点等于系统节点,忽略
	ReasonSpansNodes      Reason = "would-span-numa-nodes"  // 暂时不支持跨NUMA节点使用
)

// Request is what a task asks for.
type Request struct {
	CPUs float64
	Pin  bool
}

// Decision is Plan's answer. Pin false means: run unpinned, for Reason.
// Node is the NUMA node the CPUs and memory are bound to; NoNode when the
// machine has one node and only the CPUs are pinned.
type Decision struct {
	Pin    bool
	Node   int
	CPUs   []int
	Reason Reason
}

// NoNode is Decision.Node when no memory node is set (cpuset-mems empty).
const NoNode = -1

// Plan applies seed 001's rules: pin whole CPUs on one NUMA node picked at
// random (rng) among the nodes with enough CPUs not in used, the CPUs
// themselves picked at random within it. On a machine of one NUMA node (or
// none: a kernel without NUMA) the CPUs are pinned and no memory node is
// set, as the original executor did. A request that may be pinned but
// finds no node with enough free CPUs is ErrUnavailable: pinned tasks never
// share a CPU and never span nodes.
func Plan(topo Topology, used map[int]bool, req Request, rng *rand.Rand) (Decision, error) {
	switch {
	case !req.Pin:
		return Decision{Reason: ReasonNoPinFlag}, nil
	case req.CPUs < 1 || req.CPUs != math.Trunc(req.CPUs):
		return Decision{Reason: ReasonNotWholeCPUs}, nil
	case int(req.CPUs) > topo.NumCPUs():
		return Decision{Reason: ReasonMoreThanMachine}, nil
	}
	want := int(req.CPUs)
	if len(topo.Nodes) > 1 {
		largest := 0
		for _, n := range topo.Nodes {
			largest = max(largest, len(n.CPUs))
		}
		if needed := (want + largest - 1) / largest; needed >= len(topo.Nodes) {
			return Decision{Reason: ReasonNeedsAllNodes}, nil
		} else if needed > 1 {
			return Decision{Reason: ReasonSpansNodes}, nil
		}
	}
	type candidate struct {
		node int
		free []int
	}
	var fits []candidate
	var freeCounts []string
	for _, n := range topo.Nodes {
		var free []int
		for _, c := range n.CPUs {
			if !used[c] {
				free = append(free, c)
			}
		}
		freeCounts = append(freeCounts, fmt.Sprintf("node%d:%d", n.ID, len(free)))
		if len(free) >= want {
			fits = append(fits, candidate{n.ID, free})
		}
	}
	if len(fits) == 0 {
		return Decision{}, fmt.Errorf("no NUMA node has %d free CPUs (free %s): %w", want, strings.Join(freeCounts, " "), errdefs.ErrUnavailable)
	}
	pick := fits[rng.Intn(len(fits))]
	cpus := make([]int, 0, want)
	for _, i := range rng.Perm(len(pick.free))[:want] {
		cpus = append(cpus, pick.free[i])
	}
	sort.Ints(cpus)
	if len(topo.Nodes) == 1 {
		return Decision{Pin: true, Node: NoNode, CPUs: cpus, Reason: ReasonSingleNode}, nil
	}
	return Decision{Pin: true, Node: pick.node, CPUs: cpus, Reason: ReasonPinned}, nil
}
