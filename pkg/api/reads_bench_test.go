package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// BenchmarkReadAgents is GET /v1/agents over 5,000 running instances on
// 100 agents, from the read view (or etcd, -etcd-reads): the cost of the
// agents' view per instance, without a fleet's launch around it.
func BenchmarkReadAgents(b *testing.B) {
	benchmarkRead(b, "/v1/agents")
}

// BenchmarkReadApp is the full view of one application of 500 running
// instances, as a dashboard polls it.
func BenchmarkReadApp(b *testing.B) {
	benchmarkRead(b, "/v1/apps/bench/app-0")
}

// benchmarkRead reads path from an API over 10 applications of 500
// running instances each on 100 agents.
func benchmarkRead(b *testing.B, path string) {
	const apps, perApp, agents = 10, 500, 100
	e := newEnv(b)
	ctx := context.Background()
	for a := range apps {
		if _, err := e.reg.CreateApp(ctx, process(fmt.Sprintf("app-%d", a), "bench", func(p *manifest.Process) { p.Spec.Instance = perApp })); err != nil {
			b.Fatal(err)
		}
		var ops []store.Op
		for i := range perApp {
			g := registry.TaskGroup{ID: fmt.Sprintf("bench_app-%d_%d_1.x", a, i), Namespace: "bench", App: fmt.Sprintf("app-%d", a), Index: i,
				State: "TASK_RUNNING", Phase: "Running", Host: fmt.Sprintf("agent-%d", (a*perApp+i)%agents),
				Tasks: []registry.TaskRecord{{ID: "t", Name: "svr", State: "TASK_RUNNING", CPUs: 0.05, MemMB: 32}}}
			key, err := store.Key(store.KindTaskGroup, g.Namespace, g.App, strconv.Itoa(i))
			if err != nil {
				b.Fatal(err)
			}
			value, err := json.Marshal(g)
			if err != nil {
				b.Fatal(err)
			}
			if ops = append(ops, store.PutOp(key, value)); len(ops) == 100 {
				if _, err := e.store.Apply(ctx, ops...); err != nil {
					b.Fatal(err)
				}
				ops = nil
			}
		}
	}
	for b.Loop() {
		resp, err := e.client.Get(e.url + path)
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("GET %s: %d", path, resp.StatusCode)
		}
	}
}
