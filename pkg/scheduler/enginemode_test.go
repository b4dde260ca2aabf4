package scheduler_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// frameworkConnected tells whether the master has the framework's
// subscription open (GET /master/state: frameworks[].connected).
func (s *system) frameworkConnected() bool {
	fws, _ := s.cluster.State()["frameworks"].([]any)
	if len(fws) != 1 {
		return false
	}
	fw, _ := fws[0].(map[string]any)
	return fw["connected"] == true
}

// The engine stopped, the framework leaves Mesos: its subscription ends
// (its tasks keep running for the failover timeout) and an application
// created meanwhile waits, saying so. Running again, it subscribes again
// and the application runs.
func TestDriverLeavesMesosWhileTheEngineIsStopped(t *testing.T) {
	s := startSystem(t)
	ctx := context.Background()
	if _, err := s.reg.CreateApp(ctx, processApp("game", 1)); err != nil {
		t.Fatal(err)
	}
	s.running("game", 1)
	if _, err := s.reg.SetEngine(ctx, registry.EngineStopped, "upgrade", "ops"); err != nil {
		t.Fatal(err)
	}
	s.eventually("the framework disconnected", func() (bool, string) {
		return !s.frameworkConnected(), fmt.Sprintf("%v", s.cluster.State()["frameworks"])
	})
	if _, err := s.reg.CreateApp(ctx, processApp("late", 1)); err != nil {
		t.Fatal(err)
	}
	s.eventually("the late application waits for the engine", func() (bool, string) {
		groups := s.groups("late")
		return len(groups) == 1 && groups[0].Phase == "Pending" && strings.Contains(groups[0].Message, "engine"),
			fmt.Sprintf("%+v", groups)
	})
	if _, err := s.reg.SetEngine(ctx, registry.EngineRunning, "", "ops"); err != nil {
		t.Fatal(err)
	}
	s.running("late", 1)
	if !s.frameworkConnected() {
		t.Errorf("framework not connected again: %v", s.cluster.State()["frameworks"])
	}
	if g := s.groups("game"); len(g) != 1 || g[0].Launches != 1 {
		t.Errorf("game relaunched across the stop: %+v", g)
	}
}
