package numa

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
)

// Node is one NUMA node and its CPUs.
type Node struct {
	ID   int
	CPUs []int // ascending
}

// Topology is the machine's NUMA nodes, by ascending ID.
type Topology struct {
	Nodes []Node
}

// NumCPUs is the number of CPUs over all nodes.
func (t Topology) NumCPUs() int {
	n := 0
	for _, node := range t.Nodes {
		n += len(node.CPUs)
	}
	return n
}

// ReadTopology reads <root>/devices/system/node/node*/cpulist. A kernel
// without NUMA support has no node directories: the CPUs of
// <root>/devices/system/cpu/online then form node 0.
func ReadTopology(root string) (Topology, error) {
	dirs, err := filepath.Glob(filepath.Join(root, "devices/system/node/node[0-9]*"))
	if err != nil {
		return Topology{}, err
	}
	var topo Topology
	for _, dir := range dirs {
		id, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(dir), "node"))
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, "cpulist"))
		if err != nil {
			return Topology{}, fmt.Errorf("NUMA node %d: %w", id, err)
		}
		cpus, err := ParseCPUList(string(data))
		if err != nil {
			return Topology{}, fmt.Errorf("NUMA node %d cpulist: %w", id, err)
		}
		if len(cpus) > 0 { // memory-only nodes hold no CPUs to pin
			topo.Nodes = append(topo.Nodes, Node{ID: id, CPUs: cpus})
		}
	}
	if len(topo.Nodes) == 0 {
		data, err := os.ReadFile(filepath.Join(root, "devices/system/cpu/online"))
		if err != nil {
			return Topology{}, fmt.Errorf("no NUMA nodes and no CPU list under %q: %v: %w", root, err, errdefs.ErrNotFound)
		}
		cpus, err := ParseCPUList(string(data))
		if err != nil {
			return Topology{}, err
		}
		topo.Nodes = []Node{{ID: 0, CPUs: cpus}}
	}
	sort.Slice(topo.Nodes, func(i, j int) bool { return topo.Nodes[i].ID < topo.Nodes[j].ID })
	return topo, nil
}

// ParseCPUList reads the kernel's list format ("0-3,6,8-9"), as docker's
// --cpuset-cpus takes it.
func ParseCPUList(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	var out []int
	if s == "" {
		return out, nil
	}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("cpu list %q: %w", s, errdefs.ErrInvalidArgument)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("cpu list %q: %w", s, errdefs.ErrInvalidArgument)
			}
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	sort.Ints(out)
	return out, nil
}

// FormatCPUList writes cpus in the kernel's list format, ranges collapsed.
func FormatCPUList(cpus []int) string {
	c := append([]int(nil), cpus...)
	sort.Ints(c)
	var b strings.Builder
	for i := 0; i < len(c); {
		j := i
		for j+1 < len(c) && c[j+1] == c[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(c[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(c[j]))
		}
		i = j + 1
	}
	return b.String()
}
