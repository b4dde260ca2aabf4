package devcluster

import (
	"reflect"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// allocatedSum adds allocated resources as Resources.Add of their
// allocated clones does: the same resources in the same order, the lists
// added left unchanged.
func TestAllocatedSumAddsAsResourcesAdd(t *testing.T) {
	scalar := func(name string, v float64) mesos.Resource {
		return mesos.Resource{Name: name, Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: v}}
	}
	ports := func(b, e uint64) mesos.Resource {
		return mesos.Resource{Name: "ports", Type: mesos.RANGES.Enum(), Ranges: &mesos.Value_Ranges{Range: []mesos.Value_Range{{Begin: b, End: e}}}}
	}
	reserved := scalar("cpus", 1)
	reserved.Reservations = []mesos.Resource_ReservationInfo{{Type: mesos.Resource_ReservationInfo_STATIC.Enum(), Role: strPtr("game")}}
	lists := []struct {
		rs   mesos.Resources
		role string
	}{
		{mesos.Resources{scalar("cpus", 0.1), scalar("mem", 32)}, "*"},
		{mesos.Resources{scalar("cpus", 0.05), scalar("mem", 64), ports(31000, 31001)}, "*"},
		{mesos.Resources{ports(31005, 31005), scalar("disk", 10), reserved}, "*"},
		{mesos.Resources{scalar("cpus", 0.2), ports(31002, 31002)}, "game"},
		{mesos.Resources{scalar("cpus", 0.003), ports(31003, 31004)}, "*"},
	}
	var want mesos.Resources
	var sum allocatedSum
	for _, l := range lists {
		before := l.rs.Clone()
		want.Add(l.rs.Clone().Allocate(l.role)...)
		sum.add(l.rs, l.role)
		if !resourcesEqual(before, l.rs) {
			t.Fatalf("a list added changed: %v, was %v", l.rs, before)
		}
	}
	got := sum.resources()
	if len(got) != len(want) {
		t.Fatalf("got %d resources %v, want %d %v", len(got), got, len(want), want)
	}
	for i := range want {
		if !got[i].Equal(&want[i]) {
			t.Errorf("resource %d: got %v, want %v", i, got[i], want[i])
		}
	}
}

func resourcesEqual(a, b mesos.Resources) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].Equal(&b[i]) {
			return false
		}
	}
	return true
}

// cloneResources copies as mesos.Resources.Clone does, plain resources
// and those it hands to proto.Clone alike, and the copy shares nothing
// with the original.
func TestCloneResourcesIsADeepCopy(t *testing.T) {
	role := "game"
	reserved := scalarResource("cpus", 1)
	reserved.Reservations = []mesos.Resource_ReservationInfo{{Type: mesos.Resource_ReservationInfo_STATIC.Enum(), Role: &role}}
	rs := mesos.Resources{
		scalarResource("cpus", 0.5),
		{Name: "ports", Type: mesos.RANGES.Enum(), Ranges: &mesos.Value_Ranges{Range: []mesos.Value_Range{{Begin: 31000, End: 31009}}},
			Role: strPtr("*"), AllocationInfo: &mesos.Resource_AllocationInfo{Role: &role}},
		{Name: "zones", Type: mesos.SET.Enum(), Set: &mesos.Value_Set{Item: []string{"a", "b"}}},
		reserved,
	}
	got := cloneResources(rs)
	if want := rs.Clone(); !reflect.DeepEqual(got, want) {
		t.Fatalf("cloneResources = %v, want %v", got, want)
	}
	got[0].Scalar.Value = 9
	got[1].Ranges.Range[0].End = 1
	*got[1].Role = "x"
	*got[1].AllocationInfo.Role = "x"
	got[2].Set.Item[0] = "x"
	*got[3].Reservations[0].Role = "x"
	if rs[0].Scalar.Value != 0.5 || rs[1].Ranges.Range[0].End != 31009 || *rs[1].Role != "*" || role != "game" || rs[2].Set.Item[0] != "a" {
		t.Fatalf("changing the copy changed the original: %v", rs)
	}
	if cloneResources(nil) != nil {
		t.Fatal("cloneResources(nil) is not nil")
	}
}

// addResources sums as mesos.Resources.Add does — scalars and ranges of
// one name and role merge, others are appended, empty and invalid ones
// dropped — and what it appends is a copy.
func TestAddResourcesAsResourcesAdd(t *testing.T) {
	role := "game"
	ports := func(begin, end uint64) mesos.Resource {
		return mesos.Resource{Name: "ports", Type: mesos.RANGES.Enum(), Ranges: &mesos.Value_Ranges{Range: []mesos.Value_Range{{Begin: begin, End: end}}}}
	}
	allocated := scalarResource("cpus", 2)
	allocated.AllocationInfo = &mesos.Resource_AllocationInfo{Role: &role}
	adds := [][]mesos.Resource{
		{scalarResource("cpus", 0.5), scalarResource("mem", 64), ports(31000, 31004)},
		{scalarResource("cpus", 0.25), ports(31005, 31009), ports(32000, 32000)},
		{allocated, scalarResource("disk", 0), {Name: "cpus"}},
		{{Name: "zones", Type: mesos.SET.Enum(), Set: &mesos.Value_Set{Item: []string{"a"}}}},
	}
	var got, want mesos.Resources
	for _, rs := range adds {
		addResources(&got, rs...)
		want.Add(mesos.Resources(rs).Clone()...)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("addResources = %v, want %v", got, want)
	}
	got[1].Scalar.Value = 1
	got[2].Ranges.Range[0].End = 1
	if adds[0][1].Scalar.Value != 64 || adds[0][2].Ranges.Range[0].End != 31004 {
		t.Fatalf("changing the sum changed what was added: %v", adds[0])
	}
}
