package devcluster

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/gogo/protobuf/proto"
	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/resources"
)

// cloneResources is a deep copy of rs, as mesos.Resources.Clone makes,
// without its reflection for the resources agents offer (scalars, ranges
// and sets, of a role, allocated to one or not): the dev master copies resources
// at every offer, accept and recovery, and reflection made that a sixth
// of its CPU at 100,000 tasks. Any other resource goes through
// proto.Clone.
func cloneResources(rs []mesos.Resource) mesos.Resources {
	if rs == nil {
		return nil
	}
	out := make(mesos.Resources, len(rs))
	for i := range rs {
		out[i] = cloneResource(&rs[i])
	}
	return out
}

// cloneResource is a deep copy of r (cloneResources).
func cloneResource(r *mesos.Resource) mesos.Resource {
	if r.ProviderID != nil || r.Reservation != nil || r.Reservations != nil || r.Disk != nil ||
		r.Revocable != nil || r.Shared != nil {
		return *proto.Clone(r).(*mesos.Resource)
	}
	c := mesos.Resource{Name: r.Name, Type: clonePtr(r.Type), Scalar: clonePtr(r.Scalar), Role: clonePtr(r.Role)}
	if r.Ranges != nil {
		c.Ranges = &mesos.Value_Ranges{Range: slices.Clone(r.Ranges.Range)}
	}
	if r.Set != nil {
		c.Set = &mesos.Value_Set{Item: slices.Clone(r.Set.Item)}
	}
	if r.AllocationInfo != nil {
		c.AllocationInfo = &mesos.Resource_AllocationInfo{Role: clonePtr(r.AllocationInfo.Role)}
	}
	return c
}

// addResources adds rs to *total as Resources.Add does: each joins the
// first resource it is addable to, or is appended as a copy. It copies by
// cloneResource, not proto.Clone: sums are made at every accept and every
// recovery.
func addResources(total *mesos.Resources, rs ...mesos.Resource) {
	for i := range rs {
		r := &rs[i]
		if r.Validate() != nil || r.IsEmpty() {
			continue
		}
		if j := slices.IndexFunc(*total, func(t mesos.Resource) bool { return t.Addable(*r) }); j >= 0 {
			(*total)[j].Add(*r)
			continue
		}
		*total = append(*total, cloneResource(r))
	}
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func scalarResource(name string, v float64) mesos.Resource {
	return mesos.Resource{Name: name, Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: v}}
}

// agentResources turns a spec into unreserved Mesos resources.
func agentResources(spec ResourceSpec) mesos.Resources {
	cpus, mem, disk, ports := spec.CPUs, spec.MemMB, spec.DiskMB, spec.Ports
	if cpus == 0 {
		cpus = DefaultResources.CPUs
	}
	if mem == 0 {
		mem = DefaultResources.MemMB
	}
	if disk == 0 {
		disk = DefaultResources.DiskMB
	}
	if ports == nil {
		ports = DefaultResources.Ports
	}
	rs := mesos.Resources{scalarResource("cpus", cpus), scalarResource("mem", mem), scalarResource("disk", disk)}
	if len(ports) > 0 {
		ranges := make([]mesos.Value_Range, 0, len(ports))
		for _, p := range ports {
			ranges = append(ranges, mesos.Value_Range{Begin: p.Begin, End: p.End})
		}
		rs = append(rs, mesos.Resource{Name: "ports", Type: mesos.RANGES.Enum(), Ranges: &mesos.Value_Ranges{Range: ranges}})
	}
	return rs
}

func agentAttributes(specs []AttributeSpec) []mesos.Attribute {
	out := make([]mesos.Attribute, 0, len(specs))
	for _, s := range specs {
		a := mesos.Attribute{Name: s.Name}
		switch {
		case s.Text != nil:
			a.Type = mesos.TEXT
			a.Text = &mesos.Value_Text{Value: *s.Text}
		case s.Scalar != nil:
			a.Type = mesos.SCALAR
			a.Scalar = &mesos.Value_Scalar{Value: *s.Scalar}
		default:
			a.Type = mesos.SET
			a.Set = &mesos.Value_Set{Item: append([]string(nil), s.Set...)}
		}
		out = append(out, a)
	}
	return out
}

// sumResources adds resource lists (dropping allocation info, which the
// dev cluster tracks per framework, not per resource).
func sumResources(lists ...[]mesos.Resource) mesos.Resources {
	var total mesos.Resources
	for _, l := range lists {
		addResources(&total, cloneResources(l).Unallocate()...)
	}
	return total
}

// allocatable mirrors the Mesos allocator's minimum: an offer is worth
// making when it has at least 0.01 cpus or 32 MB of memory.
func allocatable(rs mesos.Resources) bool {
	cpus, _ := resources.CPUs(rs...)
	mem, _ := resources.Memory(rs...)
	return cpus >= minExecutorCPUs || mem >= minExecutorMemMB
}

// containsAll reports whether have holds every resource of want.
func containsAll(have, want mesos.Resources) bool {
	return resources.ContainsAll(have, want)
}

// formatResources renders resources the way Mesos logs them:
// "cpus:0.1; mem:32; ports:[31000-31001]".
func formatResources(rs []mesos.Resource) string {
	parts := make([]string, 0, len(rs))
	for _, r := range rs {
		name := r.Name
		if r.AllocationInfo != nil && r.AllocationInfo.Role != nil {
			name += "(allocated: " + *r.AllocationInfo.Role + ")"
		}
		parts = append(parts, name+":"+formatValue(r))
	}
	return strings.Join(parts, "; ")
}

func formatValue(r mesos.Resource) string {
	switch {
	case r.Scalar != nil:
		return formatDouble(r.Scalar.Value)
	case r.Ranges != nil:
		return formatRanges(r.Ranges.Range)
	case r.Set != nil:
		return "{" + strings.Join(r.Set.Item, ", ") + "}"
	}
	return ""
}

func formatRanges(rs []mesos.Value_Range) string {
	parts := make([]string, 0, len(rs))
	for _, r := range rs {
		parts = append(parts, fmt.Sprintf("%d-%d", r.Begin, r.End))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// formatDouble prints a float like C++'s default ostream (6 significant
// digits), which is what Mesos' stringify(double) produces.
func formatDouble(v float64) string {
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// formatMegabytes prints megabytes as Mesos prints a Bytes value: in the
// largest unit that divides it ("16MB", "1536KB", "1GB").
func formatMegabytes(mb float64) string {
	b := uint64(mb * 1024 * 1024)
	switch {
	case b == 0:
		return "0B"
	case b%(1<<30) == 0:
		return fmt.Sprintf("%dGB", b>>30)
	case b%(1<<20) == 0:
		return fmt.Sprintf("%dMB", b>>20)
	case b%(1<<10) == 0:
		return fmt.Sprintf("%dKB", b>>10)
	}
	return fmt.Sprintf("%dB", b)
}

// stateResources renders resources as the /master/state endpoint does:
// scalars as numbers, ranges and sets as strings.
func stateResources(rs []mesos.Resource) map[string]any {
	out := map[string]any{"cpus": 0.0, "mem": 0.0, "disk": 0.0, "gpus": 0.0}
	type rangesAcc struct{ rs []mesos.Value_Range }
	ranges := map[string]*rangesAcc{}
	for _, r := range rs {
		switch {
		case r.Scalar != nil:
			prev, _ := out[r.Name].(float64)
			out[r.Name] = prev + r.Scalar.Value
		case r.Ranges != nil:
			acc := ranges[r.Name]
			if acc == nil {
				acc = &rangesAcc{}
				ranges[r.Name] = acc
			}
			acc.rs = append(acc.rs, r.Ranges.Range...)
		case r.Set != nil:
			out[r.Name] = "{" + strings.Join(r.Set.Item, ",") + "}"
		}
	}
	for name, acc := range ranges {
		sort.Slice(acc.rs, func(i, j int) bool { return acc.rs[i].Begin < acc.rs[j].Begin })
		parts := make([]string, 0, len(acc.rs))
		for _, r := range acc.rs {
			parts = append(parts, fmt.Sprintf("%d-%d", r.Begin, r.End))
		}
		out[name] = "[" + strings.Join(parts, ", ") + "]"
	}
	return out
}

// stateAttributes renders attributes as /master/state does.
func stateAttributes(as []mesos.Attribute) map[string]any {
	out := make(map[string]any, len(as))
	for _, a := range as {
		switch {
		case a.Text != nil:
			out[a.Name] = a.Text.Value
		case a.Scalar != nil:
			out[a.Name] = a.Scalar.Value
		case a.Set != nil:
			out[a.Name] = "{" + strings.Join(a.Set.Item, ",") + "}"
		case a.Ranges != nil:
			out[a.Name] = formatRanges(a.Ranges.Range)
		}
	}
	return out
}

// allocatedSum adds resources allocated to roles as Resources.Add of
// their allocated clones does, in the order they first appear, without
// cloning each list: GET_AGENTS sums every task of every agent under the
// master's lock. Plain scalars and ranges (no reservation, disk, sharing
// or provider) are summed by name and role in place; anything else is
// cloned and added.
type allocatedSum struct {
	out mesos.Resources
	at  map[allocatedKey]int // index in out of a plain resource
}

type allocatedKey struct {
	name, role string
	kind       mesos.Value_Type
}

func (s *allocatedSum) add(rs mesos.Resources, role string) {
	for _, r := range rs {
		plain := len(r.Reservations) == 0 && r.Reservation == nil && r.Disk == nil && r.Shared == nil && r.ProviderID == nil &&
			r.Revocable == nil && (r.Role == nil || *r.Role == "*") &&
			(r.GetType() == mesos.SCALAR && r.Scalar != nil || r.GetType() == mesos.RANGES && r.Ranges != nil)
		if !plain {
			addResources(&s.out, cloneResources([]mesos.Resource{r}).Allocate(role)...)
			continue
		}
		k := allocatedKey{r.Name, role, r.GetType()}
		i, ok := s.at[k]
		switch {
		case ok && k.kind == mesos.SCALAR:
			s.out[i].Scalar = s.out[i].Scalar.Add(r.Scalar)
		case ok:
			s.out[i].Ranges = s.out[i].Ranges.Add(r.Ranges)
		default:
			if s.at == nil {
				s.at = map[allocatedKey]int{}
			}
			s.at[k] = len(s.out)
			sum := mesos.Resource{Name: r.Name, Type: r.Type, AllocationInfo: &mesos.Resource_AllocationInfo{Role: strPtr(role)}}
			if k.kind == mesos.SCALAR {
				sum.Scalar = &mesos.Value_Scalar{Value: r.Scalar.Value}
			} else {
				sum.Ranges = (&mesos.Value_Ranges{}).Add(r.Ranges)
			}
			s.out = append(s.out, sum)
		}
	}
}

func (s *allocatedSum) resources() mesos.Resources { return s.out }
