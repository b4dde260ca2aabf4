package offer

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
)

// milli is a scalar resource in thousandths. Mesos itself keeps scalars in
// fixed point with three decimals, so sums and comparisons here are exact
// where float64 arithmetic would drift (0.1+0.2 > 0.3).
type milli int64

func toMilli(v float64) milli { return milli(math.Round(v * 1000)) }

// scalars holds cpus, mem and disk in fixed point.
type scalars struct{ cpus, mem, disk milli }

func scalarsOf(r Resources) scalars {
	return scalars{cpus: toMilli(r.CPUs), mem: toMilli(r.Mem), disk: toMilli(r.Disk)}
}

func (s scalars) plus(o scalars) scalars {
	return scalars{cpus: s.cpus + o.cpus, mem: s.mem + o.mem, disk: s.disk + o.disk}
}

func (s scalars) minus(o scalars) scalars {
	return scalars{cpus: s.cpus - o.cpus, mem: s.mem - o.mem, disk: s.disk - o.disk}
}

// portPool is the free host ports of one agent during a pass. Ports are
// addressed by their position in the ranges; used marks taken positions.
type portPool struct {
	ranges []PortRange // sorted, disjoint
	size   int         // ports in ranges
	taken  int
	used   []uint64 // bitset over positions, allocated on the first take
}

func newPortPool(ranges []PortRange) portPool {
	rs := append([]PortRange(nil), ranges...)
	sort.Slice(rs, func(i, j int) bool { return rs[i].Begin < rs[j].Begin })
	merged := rs[:0]
	for _, r := range rs {
		if r.End < r.Begin {
			continue
		}
		if n := len(merged); n > 0 && r.Begin <= merged[n-1].End+1 {
			merged[n-1].End = max(merged[n-1].End, r.End)
			continue
		}
		merged = append(merged, r)
	}
	p := portPool{ranges: merged}
	for _, r := range merged {
		p.size += int(r.End-r.Begin) + 1
	}
	return p
}

func (p *portPool) free() int { return p.size - p.taken }

// position returns the position of port in the pool, or -1 when no range
// holds it.
func (p *portPool) position(port uint32) int {
	pos := 0
	for _, r := range p.ranges {
		if port < r.Begin {
			return -1
		}
		if port <= r.End {
			return pos + int(port-r.Begin)
		}
		pos += int(r.End-r.Begin) + 1
	}
	return -1
}

func (p *portPool) isUsed(pos int) bool {
	return p.used != nil && p.used[pos/64]&(1<<(pos%64)) != 0
}

func (p *portPool) use(pos int) {
	if p.used == nil {
		p.used = make([]uint64, (p.size+63)/64)
	}
	p.used[pos/64] |= 1 << (pos % 64)
	p.taken++
}

func (p *portPool) available(port uint32) bool {
	pos := p.position(port)
	return pos >= 0 && !p.isUsed(pos)
}

// fits reports whether the pool can satisfy the requests: every fixed port
// offered and free (and asked once), and enough free ports for the rest.
func (p *portPool) fits(reqs []PortRequest) bool {
	random := 0
	for i, r := range reqs {
		if r.HostPort == 0 {
			random++
			continue
		}
		if !p.available(r.HostPort) {
			return false
		}
		for _, earlier := range reqs[:i] {
			if earlier.HostPort == r.HostPort {
				return false
			}
		}
	}
	fixed := len(reqs) - random
	return random == 0 || p.free()-fixed >= random
}

// take allocates the requests, fixed ports first so random ones avoid them.
// The pool must fit them. Random ports are drawn uniformly from the pool by
// rng, probing forward past used ports: spread, not sequential.
func (p *portPool) take(reqs []PortRequest, rng *rand.Rand) []AssignedPort {
	if len(reqs) == 0 {
		return nil
	}
	out := make([]AssignedPort, len(reqs))
	for i, r := range reqs {
		if r.HostPort != 0 {
			p.use(p.position(r.HostPort))
			out[i] = AssignedPort{Name: r.Name, Port: r.HostPort}
		}
	}
	for i, r := range reqs {
		if r.HostPort == 0 {
			out[i] = AssignedPort{Name: r.Name, Port: p.takeRandom(rng)}
		}
	}
	return out
}

func (p *portPool) takeRandom(rng *rand.Rand) uint32 {
	start := rng.IntN(p.size)
	for k := 0; k < p.size; k++ {
		pos := (start + k) % p.size
		if !p.isUsed(pos) {
			p.use(pos)
			return p.nth(pos)
		}
	}
	panic("offer: takeRandom on a full port pool")
}

// nth returns the port at position n.
func (p *portPool) nth(n int) uint32 {
	for _, r := range p.ranges {
		width := int(r.End-r.Begin) + 1
		if n < width {
			return r.Begin + uint32(n)
		}
		n -= width
	}
	panic("offer: port position out of range")
}

// Plus returns r and o together: scalars added, port ranges merged.
func (r Resources) Plus(o Resources) Resources {
	return Resources{CPUs: r.CPUs + o.CPUs, Mem: r.Mem + o.Mem, Disk: r.Disk + o.Disk,
		Ports: newPortPool(append(slices.Clone(r.Ports), o.Ports...)).ranges}
}

// Minus returns r less o: scalars subtracted (none below zero), o's ports
// taken out of r's ranges.
func (r Resources) Minus(o Resources) Resources {
	return Resources{CPUs: max(0, r.CPUs-o.CPUs), Mem: max(0, r.Mem-o.Mem), Disk: max(0, r.Disk-o.Disk),
		Ports: WithoutPorts(r.Ports, o.Ports)}
}

// WithoutPorts returns ranges less the ports of taken, sorted and merged.
func WithoutPorts(ranges, taken []PortRange) []PortRange {
	taken = newPortPool(taken).ranges
	var out []PortRange
	for _, r := range newPortPool(ranges).ranges {
		begin := uint64(r.Begin)
		for _, t := range taken {
			if uint64(t.End) < begin || t.Begin > r.End {
				continue
			}
			if uint64(t.Begin) > begin {
				out = append(out, PortRange{Begin: uint32(begin), End: t.Begin - 1})
			}
			begin = uint64(t.End) + 1
		}
		if begin <= uint64(r.End) {
			out = append(out, PortRange{Begin: uint32(begin), End: r.End})
		}
	}
	return out
}
