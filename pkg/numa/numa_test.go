package numa_test

import (
	"errors"
	"fmt"
	"math/rand"
	"path/filepath"
	"reflect"
	"strconv"
	"sync"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/numa"
	"github.com/bcs-mesos/bcs-mesos/pkg/pod"
)

var _ pod.CPUSetPlanner = (*numa.Allocator)(nil)

func topology(t *testing.T, tree string) numa.Topology {
	t.Helper()
	topo, err := numa.ReadTopology(filepath.Join("testdata", tree))
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

func TestReadTopology(t *testing.T) {
	cases := map[string]numa.Topology{
		// node2 has memory but no CPUs: nothing to pin there.
		"two-nodes": {Nodes: []numa.Node{{0, []int{0, 1, 2, 3}}, {1, []int{4, 5, 6, 7}}}},
		"four-nodes": {Nodes: []numa.Node{
			{0, []int{0, 1, 8, 9}}, {1, []int{2, 3, 10, 11}}, {2, []int{4, 5, 12, 13}}, {3, []int{6, 7, 14, 15}},
		}},
		"one-node": {Nodes: []numa.Node{{0, []int{0, 1}}}},
		// No node directories (kernel without NUMA): the online CPUs are node 0.
		"no-numa": {Nodes: []numa.Node{{0, []int{0, 1, 2, 3, 4, 5}}}},
	}
	for tree, want := range cases {
		if got := topology(t, tree); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %+v, want %+v", tree, got, want)
		}
	}
	if _, err := numa.ReadTopology(t.TempDir()); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("empty root: %v, want not found", err)
	}
}

func TestCPUListRoundTrip(t *testing.T) {
	for in, want := range map[string]string{"0-3,6,7": "0-3,6-7", "5": "5", "1,0,2\n": "0-2", "": "", "8-9,0-1": "0-1,8-9"} {
		cpus, err := numa.ParseCPUList(in)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if got := numa.FormatCPUList(cpus); got != want {
			t.Errorf("%q → %q, want %q", in, got, want)
		}
	}
	for _, bad := range []string{"a", "3-1", "-1", "1-"} {
		if _, err := numa.ParseCPUList(bad); !errors.Is(err, errdefs.ErrInvalidArgument) {
			t.Errorf("%q: %v, want invalid argument", bad, err)
		}
	}
}

// Seed 001 设定规则, one named case per rule.
func TestPlanRules(t *testing.T) {
	cases := []struct {
		name   string
		tree   string
		req    numa.Request
		reason numa.Reason
	}{
		{"no pin flag: ignored", "two-nodes", numa.Request{CPUs: 2}, numa.ReasonNoPinFlag},
		{"fractional CPUs: ignored", "two-nodes", numa.Request{CPUs: 1.5, Pin: true}, numa.ReasonNotWholeCPUs},
		{"zero CPUs: ignored", "two-nodes", numa.Request{CPUs: 0, Pin: true}, numa.ReasonNotWholeCPUs},
		{"more CPUs than the machine: ignored", "two-nodes", numa.Request{CPUs: 9, Pin: true}, numa.ReasonMoreThanMachine},
		{"one NUMA node: CPUs pinned, no NUMA setting", "one-node", numa.Request{CPUs: 1, Pin: true}, numa.ReasonSingleNode},
		{"one NUMA node, every CPU: pinned", "one-node", numa.Request{CPUs: 2, Pin: true}, numa.ReasonSingleNode},
		{"kernel without NUMA: CPUs pinned, no NUMA setting", "no-numa", numa.Request{CPUs: 4, Pin: true}, numa.ReasonSingleNode},
		{"one NUMA node, more CPUs than the machine: ignored", "one-node", numa.Request{CPUs: 3, Pin: true}, numa.ReasonMoreThanMachine},
		{"needs every node of two: ignored", "two-nodes", numa.Request{CPUs: 5, Pin: true}, numa.ReasonNeedsAllNodes},
		{"needs every node of four: ignored", "four-nodes", numa.Request{CPUs: 13, Pin: true}, numa.ReasonNeedsAllNodes},
		{"would span two of four nodes: not supported", "four-nodes", numa.Request{CPUs: 6, Pin: true}, numa.ReasonSpansNodes},
		{"fits one node of two: pinned", "two-nodes", numa.Request{CPUs: 4, Pin: true}, numa.ReasonPinned},
		{"fits one node of four: pinned", "four-nodes", numa.Request{CPUs: 3, Pin: true}, numa.ReasonPinned},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			topo := topology(t, tc.tree)
			d, err := numa.Plan(topo, nil, tc.req, rand.New(rand.NewSource(1)))
			if err != nil {
				t.Fatal(err)
			}
			pinned := tc.reason == numa.ReasonPinned || tc.reason == numa.ReasonSingleNode
			if d.Reason != tc.reason || d.Pin != pinned {
				t.Fatalf("decision %+v, want reason %s", d, tc.reason)
			}
			if d.Pin {
				assertOneNode(t, topo, d, int(tc.req.CPUs))
			}
		})
	}
}

// assertOneNode checks that d pins want distinct CPUs of its node; a
// decision without a node (a machine of one) pins CPUs of the only node.
func assertOneNode(t *testing.T, topo numa.Topology, d numa.Decision, want int) {
	t.Helper()
	if len(d.CPUs) != want {
		t.Fatalf("%d CPUs, want %d", len(d.CPUs), want)
	}
	node := d.Node
	if node == numa.NoNode {
		if len(topo.Nodes) != 1 {
			t.Fatalf("no memory node on a machine of %d nodes", len(topo.Nodes))
		}
		node = topo.Nodes[0].ID
	}
	for _, n := range topo.Nodes {
		if n.ID != node {
			continue
		}
		in := map[int]bool{}
		for _, c := range n.CPUs {
			in[c] = true
		}
		for _, c := range d.CPUs {
			if !in[c] {
				t.Fatalf("CPU %d is not on node %d (%v): spans nodes", c, d.Node, n.CPUs)
			}
		}
		return
	}
	t.Fatalf("node %d does not exist", d.Node)
}

// This machine's own topology (sysfs): a pinned task gets CPUs it has,
// each once; on one NUMA node (this machine) no memory node is set.
func TestAllocatorOnThisMachine(t *testing.T) {
	topo, err := numa.ReadTopology("/sys")
	if err != nil {
		t.Fatal(err)
	}
	a := &numa.Allocator{StatePath: filepath.Join(t.TempDir(), "cpusets.json")}
	var held []int
	for i := range topo.NumCPUs() {
		cpus, mems, err := a.Plan(fmt.Sprintf("pod%d/task", i), 1, true)
		if err != nil {
			t.Fatalf("CPU %d of %d: %v", i+1, topo.NumCPUs(), err)
		}
		list, _ := numa.ParseCPUList(cpus)
		d := numa.Decision{Pin: true, Node: numa.NoNode, CPUs: list}
		if mems != "" {
			if d.Node, err = strconv.Atoi(mems); err != nil {
				t.Fatalf("cpuset-mems %q", mems)
			}
		} else if len(topo.Nodes) > 1 {
			t.Fatalf("no cpuset-mems on a machine of %d NUMA nodes", len(topo.Nodes))
		}
		assertOneNode(t, topo, d, 1)
		held = append(held, list...)
	}
	if got := numa.FormatCPUList(held); len(held) != topo.NumCPUs() || got != numa.FormatCPUList(allCPUs(topo)) {
		t.Errorf("pinned CPUs %s, want each of the machine's once", got)
	}
	if _, _, err := a.Plan("one-too-many/task", 1, true); !errors.Is(err, errdefs.ErrUnavailable) {
		t.Errorf("a pinned CPU more than the machine has: %v, want unavailable", err)
	}
}

func allCPUs(topo numa.Topology) []int {
	var all []int
	for _, n := range topo.Nodes {
		all = append(all, n.CPUs...)
	}
	return all
}

// The node is random (seeded): one seed gives one answer; over seeds every
// node with room is used.
func TestPlanIsSeededRandom(t *testing.T) {
	topo := topology(t, "four-nodes")
	req := numa.Request{CPUs: 2, Pin: true}
	a, _ := numa.Plan(topo, nil, req, rand.New(rand.NewSource(42)))
	b, _ := numa.Plan(topo, nil, req, rand.New(rand.NewSource(42)))
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("same seed, different plans: %+v %+v", a, b)
	}
	nodes := map[int]bool{}
	for seed := int64(0); seed < 200; seed++ {
		d, err := numa.Plan(topo, nil, req, rand.New(rand.NewSource(seed)))
		if err != nil {
			t.Fatal(err)
		}
		assertOneNode(t, topo, d, 2)
		nodes[d.Node] = true
	}
	if len(nodes) != 4 {
		t.Errorf("200 seeds used nodes %v, want all 4", nodes)
	}
}

// Only a node with enough free CPUs is chosen; none → unavailable.
func TestPlanSkipsFullNodes(t *testing.T) {
	topo := topology(t, "two-nodes")
	used := map[int]bool{0: true, 1: true} // node 0 keeps 2 free
	for seed := int64(0); seed < 50; seed++ {
		d, err := numa.Plan(topo, used, numa.Request{CPUs: 3, Pin: true}, rand.New(rand.NewSource(seed)))
		if err != nil || d.Node != 1 {
			t.Fatalf("seed %d: %+v %v, want node 1", seed, d, err)
		}
	}
	used = map[int]bool{0: true, 1: true, 4: true, 5: true, 6: true}
	_, err := numa.Plan(topo, used, numa.Request{CPUs: 3, Pin: true}, rand.New(rand.NewSource(1)))
	if !errors.Is(err, errdefs.ErrUnavailable) || err.Error() != "no NUMA node has 3 free CPUs (free node0:2 node1:1): unavailable" {
		t.Errorf("full machine: %v", err)
	}
}

// Executors on one agent share the state file: concurrent pods never get
// the same CPU, and a restarted executor sees what is held.
func TestAllocatorSharedAcrossExecutors(t *testing.T) {
	statePath := filepath.Join(t.TempDir(), "cpusets.json")
	root := filepath.Join("testdata", "two-nodes")
	var wg sync.WaitGroup
	results := make([]string, 8)
	errs := make([]error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// One Allocator per executor process: only the file lock orders them.
			a := &numa.Allocator{SysfsRoot: root, StatePath: statePath, Rand: rand.New(rand.NewSource(int64(i)))}
			cpus, mems, err := a.Plan(fmt.Sprintf("pod%d/task", i), 1, true)
			results[i], errs[i] = cpus+"@"+mems, err
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	for i, r := range results {
		if errs[i] != nil {
			t.Fatalf("pod%d: %v", i, errs[i])
		}
		cpu := r[:len(r)-2]
		if seen[cpu] {
			t.Fatalf("CPU %s given twice: %v", cpu, results)
		}
		seen[cpu] = true
	}

	restarted := &numa.Allocator{SysfsRoot: root, StatePath: statePath, Rand: rand.New(rand.NewSource(99))}
	if _, _, err := restarted.Plan("pod-new/task", 1, true); !errors.Is(err, errdefs.ErrUnavailable) {
		t.Fatalf("ninth CPU on an 8-CPU machine: %v, want unavailable", err)
	}
	// An owner asking again (executor restarted mid-launch) keeps its CPUs.
	again, _, err := restarted.Plan("pod3/task", 1, true)
	if err != nil || again+"@"+results[3][len(results[3])-1:] != results[3] {
		t.Fatalf("pod3 again: %q %v, had %q", again, err, results[3])
	}
	if err := restarted.Release("pod3/task"); err != nil {
		t.Fatal(err)
	}
	if cpus, _, err := restarted.Plan("pod-new/task", 1, true); err != nil || cpus+"@"+results[3][len(results[3])-1:] != results[3] {
		t.Fatalf("after release: %q %v, want pod3's CPU %q", cpus, err, results[3])
	}
	all, err := restarted.Allocations()
	if err != nil || len(all) != 8 {
		t.Fatalf("allocations %v %v, want 8", all, err)
	}
	// Unpinned requests hold nothing.
	if cpus, mems, err := restarted.Plan("pod-x/task", 0.5, true); cpus != "" || mems != "" || err != nil {
		t.Fatalf("fractional: %q %q %v", cpus, mems, err)
	}
}
