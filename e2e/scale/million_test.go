package scale_test

import "testing"

// BenchmarkRunning300kOn10kAgents is the million shape's fleet of agents
// with under a third of its instances: what it costs per instance (the
// scheduler's memory, etcd's, the dev cluster's) tells whether the
// million fits the machine before it runs for ten minutes.
func BenchmarkRunning300kOn10kAgents(b *testing.B) {
	benchmarkPlacements(b, shape{agents: 10000, apps: 300, instances: 1000})
}
