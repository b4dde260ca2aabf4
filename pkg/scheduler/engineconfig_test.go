package scheduler_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest/manifesttest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// dependencyPods are the stored dependency pods of ns-a.
func (s *system) dependencyPods() []*registry.App {
	apps, err := s.reg.ListApps(context.Background(), "ns-a")
	if err != nil {
		s.t.Fatal(err)
	}
	var pods []*registry.App
	for _, a := range apps {
		if a.DependencyPod != nil {
			pods = append(pods, a)
		}
	}
	return pods
}

// idleDependencyPod runs an application that uses the depends object
// logagent, scales it to 0 and waits until its dependency pod idles.
func (s *system) idleDependencyPod() {
	s.t.Helper()
	ctx := context.Background()
	if _, err := s.reg.PutObject(ctx, manifesttest.Depends(), -1); err != nil {
		s.t.Fatal(err)
	}
	p := processApp("game", 1)
	p.Spec.Template.Spec.Depends = []manifest.DependsRef{{Name: "logagent"}}
	if _, err := s.reg.CreateApp(ctx, p); err != nil {
		s.t.Fatal(err)
	}
	s.running("game", 1)
	s.eventually("a dependency pod", func() (bool, string) {
		pods := s.dependencyPods()
		return len(pods) == 1, fmt.Sprintf("%d pods", len(pods))
	})
	if _, err := s.reg.ScaleApp(ctx, "ns-a", "game", 0, false); err != nil {
		s.t.Fatal(err)
	}
	s.eventually("the pod idle", func() (bool, string) {
		pods := s.dependencyPods()
		return len(pods) == 1 && pods[0].DependencyPod.Users == 0, fmt.Sprintf("%+v", pods)
	})
}

func (s *system) setDependsGCDelay(delay string) {
	s.t.Helper()
	patch := map[string]json.RawMessage{"dependsGCDelay": json.RawMessage(fmt.Sprintf("%q", delay))}
	if _, err := s.reg.PatchEngineSettings(context.Background(), patch, "test"); err != nil {
		s.t.Fatal(err)
	}
}

func (s *system) podCollected() {
	s.t.Helper()
	s.eventually("the idle pod collected", func() (bool, string) {
		pods := s.dependencyPods()
		return len(pods) == 0, fmt.Sprintf("%d pods", len(pods))
	})
}

// The engine's configuration changes in a running driver, without a
// restart: a dependency pod idle under the default GC delay (5m) is
// collected once the delay is set to 1s.
func TestDriverTakesTheEngineConfigWhileRunning(t *testing.T) {
	s := startSystem(t)
	s.idleDependencyPod()
	s.setDependsGCDelay("1s")
	s.podCollected()
}

// The configuration set at run time is kept in etcd over the flags, so a
// driver started again holds to it.
func TestDriverStartsWithTheStoredEngineConfig(t *testing.T) {
	s := startSystem(t)
	s.idleDependencyPod()
	s.stopDriver()
	s.setDependsGCDelay("1s")
	if pods := s.dependencyPods(); len(pods) != 1 {
		t.Fatalf("the pod went before the driver started again: %+v", pods)
	}
	s.startDriver()
	s.podCollected()
}
