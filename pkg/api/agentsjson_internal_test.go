package api

import (
	"fmt"
	"reflect"
	"runtime"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/apiv1"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// appendAgentInstance writes every field of an instance: one added to
// apiv1.AgentInstance must be added there too (the list of agents
// compared with the encoder's, in agents_fleet_test.go, shows it only
// when a test sets the field).
func TestAppendAgentInstanceKnowsEveryField(t *testing.T) {
	if n := reflect.TypeFor[apiv1.AgentInstance]().NumField(); n != 6 {
		t.Errorf("apiv1.AgentInstance has %d fields, appendAgentInstance writes 6", n)
	}
}

// BenchmarkAppOnAgents is what the read view keeps of an application of
// 1,000 instances on 100 agents for GET /v1/agents (kept-B/instance),
// and the time to find it again after its task groups changed.
func BenchmarkAppOnAgents(b *testing.B) {
	const instances = 1000
	groups := make([]*registry.TaskGroup, instances)
	for i := range groups {
		groups[i] = &registry.TaskGroup{ID: fmt.Sprintf("bench.app-042.%d.1764331200000", i), Namespace: "bench", App: "app-042", Index: i,
			Phase: "Running", Host: fmt.Sprintf("agent-%04d.bench.example", i%100), Tasks: []registry.TaskRecord{{CPUs: 0.05, MemMB: 32}}}
	}
	before := heapAfterGC()
	kept := appOnAgentsOf(groups)
	keptBytes := heapAfterGC() - before
	runtime.KeepAlive(kept)
	for b.Loop() {
		appOnAgentsOf(groups)
	}
	b.ReportMetric(float64(keptBytes)/instances, "kept-B/instance")
}

func heapAfterGC() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
