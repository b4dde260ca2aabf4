package readview_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/bcs-mesos/bcs-mesos/internal/heaptest"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
	"github.com/bcs-mesos/bcs-mesos/pkg/store/storetest"
)

// taskGroupRecord is a running instance's record as the scheduler stores
// it: one task, two ports, healthy.
func taskGroupRecord(app string, index int) []byte {
	return fmt.Appendf(nil, `{"id":"default_%[1]s_%[2]d_1.mwzgt9c0","namespace":"default","app":"%[1]s","index":%[2]d,"version":3,`+
		`"template":"5f2c1a9e","network":"process","state":"TASK_RUNNING","phase":"running","agentID":"0e5c3a52-S%[2]d",`+
		`"host":"agent-%[2]d","hostIP":"10.0.%[2]d.7","ports":{"game":31000,"metrics":31001},"healthy":true,"ready":true,"restarts":0,`+
		`"tasks":[{"id":"default_%[1]s_%[2]d_1.mwzgt9c0.gamesvr","name":"gamesvr","state":"TASK_RUNNING"}],"launches":1,`+
		`"runningSince":"2026-11-28T08:00:00Z"}`, app, index)
}

// BenchmarkViewBytesPerInstance measures the heap the view holds per
// task group, the record's own bytes included (reported apart).
func BenchmarkViewBytesPerInstance(b *testing.B) {
	const apps, perApp = 5, 1000
	st, _ := storetest.NewStore(b)
	ctx := b.Context()
	var recordBytes int
	for a := range apps {
		for chunk := 0; chunk < perApp; chunk += 100 {
			var ops []store.Op
			for i := chunk; i < chunk+100; i++ {
				rec := taskGroupRecord(fmt.Sprintf("app%d", a), i)
				recordBytes += len(rec)
				ops = append(ops, store.PutOp(fmt.Sprintf("taskgroups/default/app%d/%d", a, i), rec))
			}
			if _, err := st.Apply(ctx, ops...); err != nil {
				b.Fatal(err)
			}
		}
	}
	for b.Loop() {
		before := heaptest.Live()
		v := running(b, st, clockwork.NewRealClock())
		if err := v.Fresh(ctx, 30*time.Second); err != nil {
			b.Fatal(err)
		}
		after := heaptest.Live()
		b.ReportMetric(float64(after-before)/(apps*perApp), "heapB/instance")
		b.ReportMetric(float64(recordBytes)/(apps*perApp), "recordB/instance")
		runtime.KeepAlive(v)
	}
}

// BenchmarkListOneApp lists one application's 1,000 task groups out of
// 5,000: what a page of an application's instances costs the view.
func BenchmarkListOneApp(b *testing.B) {
	st, _ := storetest.NewStore(b)
	ctx := b.Context()
	for a := range 5 {
		for chunk := 0; chunk < 1000; chunk += 100 {
			var ops []store.Op
			for i := chunk; i < chunk+100; i++ {
				ops = append(ops, store.PutOp(fmt.Sprintf("taskgroups/default/app%d/%d", a, i), taskGroupRecord(fmt.Sprintf("app%d", a), i)))
			}
			if _, err := st.Apply(ctx, ops...); err != nil {
				b.Fatal(err)
			}
		}
	}
	v := running(b, st, clockwork.NewRealClock())
	if err := v.Fresh(ctx, 30*time.Second); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if n := len(v.List("taskgroups/default/app3/")); n != 1000 {
			b.Fatalf("listed %d", n)
		}
	}
}
