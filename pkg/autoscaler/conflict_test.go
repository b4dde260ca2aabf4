package autoscaler_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// refusingScaler refuses its first scale as the registry does when the
// workload's record changed since the fleet was read.
type refusingScaler struct {
	*fleet
	refused int
}

func (s *refusingScaler) ApplyScaleDecision(ctx context.Context, w registry.ScaleWrite) (*registry.App, error) {
	if s.refused == 0 {
		s.refused++
		return nil, fmt.Errorf("%s changed since read: %w", w.App.Name, errdefs.ErrConflict)
	}
	return s.fleet.ApplyScaleDecision(ctx, w)
}

// A scale refused because the workload changed under the decision is
// decided again on the record as it is 2 s later, not an interval later.
func TestConflictDecidedAgainSoon(t *testing.T) {
	a := autoscalerOf("game", "game", "", "")
	a.Spec.Metrics = []manifest.AutoscaleMetric{{Type: manifest.MetricBuffer, Buffer: &manifest.BufferMetric{BufferSize: manifest.IntOrPercent{Value: 3}}}}
	e := openEnv(t, map[string]int{"game": 2}, a)
	e.scaler = &refusingScaler{fleet: e.fleet}
	e.start()
	defer e.stop()
	e.tick()
	if got := e.fleet.scaled(); len(got) != 0 {
		t.Fatalf("scales %v after a refusal", got)
	}
	e.clock.Advance(2 * time.Second)
	e.wait()
	if got, want := e.fleet.scaled(), []string{"game 2->3 removed []"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("scales 2 s after the refusal: %q, want %q", got, want)
	}
}
