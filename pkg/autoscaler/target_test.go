package autoscaler_test

import (
	"strings"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
)

// A workload of another kind than the autoscaler's target, made under
// its name after the autoscaler, is not scaled: the status says why.
func TestTargetOfAnotherKind(t *testing.T) {
	a := autoscalerOf("game", "game", "", "")
	a.Spec.Target.Kind = manifest.KindDeployment
	a.Spec.Metrics = []manifest.AutoscaleMetric{{Type: manifest.MetricBuffer, Buffer: &manifest.BufferMetric{BufferSize: manifest.IntOrPercent{Value: 3}}}}
	e := openEnv(t, map[string]int{"game": 2}, a)
	e.start()
	defer e.stop()
	e.tick()
	s := e.status("game")
	if len(e.fleet.scaled()) != 0 || !strings.Contains(s.Message, "ns-a/game is of kind application, not deployment") {
		t.Errorf("scales %v, message %q; want none, the kinds said", e.fleet.scaled(), s.Message)
	}
}
