package offer_test

import (
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/offer"
	"github.com/bcs-mesos/bcs-mesos/pkg/offer/offertest"
)

// benchmarkPlace places 100,000 task groups of 100 applications (the
// offertest.Workload mix: UNIQUE hostname, MAXPER idc, GROUPBY district,
// CLUSTER rack, LIKE hostname, EXCLUDE label) on a cluster of the given size
// with attributes idc ×20, district ×5, rack ×200. Agents are sized so the
// cluster holds twice the workload, so the time per placement compares
// cluster sizes rather than how full they are.
func benchmarkPlace(b *testing.B, agents int) {
	const taskGroups = 100_000
	perAgent := 2 * float64(taskGroups) / float64(agents)
	spec := offertest.ClusterSpec{
		Agents: agents, IDCs: 20, Districts: 5, Racks: 200,
		CPUs: perAgent * 0.51, Mem: perAgent * 288,
	}
	snap := &offer.Snapshot{Agents: offertest.Cluster(spec)}
	pending := offertest.Workload(offertest.WorkloadSpec{Apps: 100, TaskGroups: taskGroups, Cluster: spec})
	m := offertest.Matcher()
	b.ReportAllocs()
	b.ResetTimer()
	placed := 0
	for i := 0; i < b.N; i++ {
		plan := m.Place(snap, pending, now, uint64(i))
		placed += len(plan.Placements)
	}
	b.StopTimer()
	b.ReportMetric(float64(placed)/b.Elapsed().Seconds(), "placements/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(placed), "ns/placement")
	b.ReportMetric(float64(placed)/float64(b.N), "placed/op")
}

func BenchmarkPlace1kAgents(b *testing.B)  { benchmarkPlace(b, 1_000) }
func BenchmarkPlace10kAgents(b *testing.B) { benchmarkPlace(b, 10_000) }
func BenchmarkPlace50kAgents(b *testing.B) { benchmarkPlace(b, 50_000) }
