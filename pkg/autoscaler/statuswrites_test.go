package autoscaler_test

import (
	"context"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
)

// An idle autoscaler (a buffer of 2 over 2 ready instances, every 10 s)
// decides every round but writes its status only when a reader would
// see something new: its first decision, then a minute later for
// freshness, and at once when its spec changes what it shows (its
// bounds).
func TestIdleAutoscalerWritesSeldom(t *testing.T) {
	a := autoscalerOf("idle", "game", "", "")
	a.Spec.Metrics = []manifest.AutoscaleMetric{{Type: manifest.MetricBuffer, Buffer: &manifest.BufferMetric{BufferSize: manifest.IntOrPercent{Value: 2}}}}
	e := openEnv(t, map[string]int{"game": 2}, a)
	e.start()
	defer e.stop()
	var writes []int64
	for round := range 8 {
		e.tick()
		if rev := e.status("idle").Revision; len(writes) == 0 || rev != writes[len(writes)-1] {
			writes = append(writes, rev)
			t.Logf("round %d: written", round)
		}
	}
	// Rounds at 10 s … 80 s: the first writes, the next five are within
	// a minute of it, the seventh (70 s) renews it, the eighth does not.
	if len(writes) != 2 {
		t.Errorf("%d writes in 8 idle rounds, want 2 (the first, and one a minute later)", len(writes))
	}
	if s := e.status("idle"); s.DesiredReplicas != 2 || len(e.fleet.scaled()) != 0 {
		t.Errorf("desired %d, scales %v; want 2 and none", s.DesiredReplicas, e.fleet.scaled())
	}

	a.Spec.MaxReplicas = 4
	if _, err := e.reg.UpdateAutoscaler(context.Background(), a, 0); err != nil {
		t.Fatal(err)
	}
	before := e.status("idle").Revision
	e.tick() // the new spec is listed
	e.tick()
	if s := e.status("idle"); s.Revision == before || s.Bounds.Max != 4 {
		t.Errorf("after maxReplicas 4: status at %d (was %d), bounds %+v; want it written with max 4", s.Revision, before, s.Bounds)
	}
}
