package registry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/internal/heaptest"
	"github.com/bcs-mesos/bcs-mesos/pkg/readview"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// runningGroup is instance i of app as the scheduler stores it running:
// one task of a process, one port, healthy and ready.
func runningGroup(app string, i int) registry.TaskGroup {
	healthy := true
	id := fmt.Sprintf("bench_%s_%d_1.mwzgt9c0", app, i)
	return registry.TaskGroup{ID: id, Namespace: "bench", App: app, Index: i, Version: 1, Template: "5f2c1a9e0b7d", Network: "process",
		State: "TASK_RUNNING", Phase: "Running", AgentID: fmt.Sprintf("0e5c3a52-7b1f-4c2e-9d3a-5e6f7a8b9c0d-S%d", i%5000),
		Host: fmt.Sprintf("agent-%d", i%5000), HostIP: fmt.Sprintf("10.0.%d.%d", i/250%250, i%250), Ports: registry.HostPorts{{Name: "http", Port: 31000}},
		Healthy: &healthy, Ready: true, Launches: 1, RunningSince: time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC),
		Tasks: []registry.TaskRecord{{ID: id + ".svr", Name: "svr", State: "TASK_RUNNING", Healthy: &healthy, CPUs: 0.05, MemMB: 32}}}
}

// BenchmarkViewedBytesPerInstance measures the heap a read view of
// decoded records holds per running instance (the record's JSON size is
// reported beside it).
func BenchmarkViewedBytesPerInstance(b *testing.B) {
	const apps, perApp = 5, 1000
	st, _ := newStore(b)
	ctx := context.Background()
	var recordBytes int
	for a := range apps {
		var ops []store.Op
		for i := range perApp {
			app := fmt.Sprintf("app-%d", a)
			value, err := json.Marshal(runningGroup(app, i))
			if err != nil {
				b.Fatal(err)
			}
			recordBytes += len(value)
			key, err := store.Key(store.KindTaskGroup, "bench", app, strconv.Itoa(i))
			if err != nil {
				b.Fatal(err)
			}
			if ops = append(ops, store.PutOp(key, value)); len(ops) == 100 {
				if _, err := st.Apply(ctx, ops...); err != nil {
					b.Fatal(err)
				}
				ops = nil
			}
		}
	}
	for b.Loop() {
		before := heaptest.Live()
		view, err := readview.New(st, registry.ViewConfig(readview.Config{}))
		if err != nil {
			b.Fatal(err)
		}
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); _ = view.Run(runCtx) }()
		if err := view.Fresh(ctx, 30*time.Second); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(heaptest.Live()-before)/(apps*perApp), "heapB/instance")
		b.ReportMetric(float64(recordBytes)/(apps*perApp), "recordB/instance")
		cancel()
		<-done
	}
}
