package api

import (
	"bytes"
	"fmt"
	"net/http/httptest"
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

// A list of agents longer than a chunk, some without instances, some
// with them encoded already, is written as the encoder writes it.
func TestWriteAgentsAsTheEncoderWritesIt(t *testing.T) {
	var views []*apiv1.AgentView
	encoded := map[string][][]byte{}
	for a := range 2000 {
		v := &apiv1.AgentView{Hostname: fmt.Sprintf("host-%04d", a), Attributes: map[string]string{"zone": "<z>"}, Taints: []string{}}
		if a%3 > 0 {
			v.Instances = []apiv1.AgentInstance{}
		}
		for i := range a % 7 {
			v.Instances = append(v.Instances, apiv1.AgentInstance{App: "ns/app", Index: i, ID: fmt.Sprintf("t-%d", i), Phase: "Running", Move: "drain from \"x\""})
		}
		views = append(views, v)
	}
	want := httptest.NewRecorder()
	writeList(want, "agents", views, "host-1999")
	// Half the instances of every fifth agent encoded, as an
	// application's share is.
	var shown []*apiv1.AgentView
	for a, v := range views {
		c := *v
		if a%5 == 0 && len(v.Instances) > 1 {
			var e []byte
			for _, inst := range v.Instances[:len(v.Instances)/2] {
				e = appendAgentInstance(newline(append(e, ','), "  ", agentInstanceDepth), inst, agentInstanceDepth)
			}
			encoded[v.Hostname] = [][]byte{e[: len(e)/2 : len(e)/2], e[len(e)/2:]}
			c.Instances = v.Instances[len(v.Instances)/2:]
		}
		shown = append(shown, &c)
	}
	got := httptest.NewRecorder()
	writeAgents(got, shown, encoded, "host-1999", encodeAgentObject)
	if got.Body.Len() < 2*chunkBytes || !bytes.Equal(got.Body.Bytes(), want.Body.Bytes()) {
		t.Fatalf("%d bytes written, want the encoder's %d (more than two chunks of %d)", got.Body.Len(), want.Body.Len(), chunkBytes)
	}
}
