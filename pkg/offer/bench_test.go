package offer_test

import (
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/offer"
	"github.com/bcs-mesos/bcs-mesos/pkg/offer/offertest"
)

// benchmarkPlace places 100,000 task groups of 100 applications (the
// offertest.Workload mix: UNIQUE hostname, MAXPER idc, GROUPBY district,
// CLUSTER rack, LIKE hostname, EXCLUDE label) on a cluster of the given size
// with attributes idc ×20, district ×5, rack ×200. Agents are sized so the
// cluster holds twice the workload, so the time per placement compares
// cluster sizes rather than how full they are.
//
// Besides placements/s and ns/placement over the whole pass, it reports
// marginal-ns/placement: the pass minus a pass that places one instance per
// application, per extra placement. The difference is reading the snapshot
// (one look at every agent's attributes), which any pass pays once.
func benchmarkPlace(b *testing.B, agents int) {
	const taskGroups, apps = 100_000, 100
	perAgent := 2 * float64(taskGroups) / float64(agents)
	spec := offertest.ClusterSpec{
		Agents: agents, IDCs: 20, Districts: 5, Racks: 200,
		CPUs: perAgent * 0.51, Mem: perAgent * 288,
	}
	snap := &offer.Snapshot{Agents: offertest.Cluster(spec)}
	pending := offertest.Workload(offertest.WorkloadSpec{Apps: apps, TaskGroups: taskGroups, Cluster: spec})
	onePerApp := offertest.Workload(offertest.WorkloadSpec{Apps: apps, TaskGroups: apps, Cluster: spec})
	m := offertest.Matcher()

	start := time.Now()
	const baseRuns = 3
	for i := 0; i < baseRuns; i++ {
		m.Place(snap, onePerApp, now, uint64(i))
	}
	base := time.Since(start) / baseRuns

	b.ReportAllocs()
	b.ResetTimer()
	placed := 0
	for i := 0; i < b.N; i++ {
		plan := m.Place(snap, pending, now, uint64(i))
		placed += len(plan.Placements)
	}
	b.StopTimer()
	perPass := b.Elapsed() / time.Duration(b.N)
	perPassPlaced := float64(placed) / float64(b.N)
	b.ReportMetric(float64(placed)/b.Elapsed().Seconds(), "placements/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(placed), "ns/placement")
	b.ReportMetric(float64((perPass-base).Nanoseconds())/(perPassPlaced-apps), "marginal-ns/placement")
	b.ReportMetric(float64(base.Microseconds())/1000, "snapshot-ms")
	b.ReportMetric(perPassPlaced, "placed/op")
}

func BenchmarkPlace1kAgents(b *testing.B)  { benchmarkPlace(b, 1_000) }
func BenchmarkPlace10kAgents(b *testing.B) { benchmarkPlace(b, 10_000) }
func BenchmarkPlace50kAgents(b *testing.B) { benchmarkPlace(b, 50_000) }
