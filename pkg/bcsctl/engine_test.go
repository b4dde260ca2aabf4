package bcsctl_test

import (
	"strings"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/api"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// bcsctl engine config shows the engine's configuration,
// each value's source; set changes values at run time (NAME=null gives one
// back to its flag), and a value the API refuses is its error, naming it,
// with nothing changed.
func TestEngineConfigShowAndSet(t *testing.T) {
	s := newAPIServer(t, func(c *api.Config) {
		c.EngineDefaults = registry.EngineConfig{
			ReconcileInterval: registry.Duration(10 * time.Minute), AgentSyncInterval: registry.Duration(30 * time.Second),
			DependsGCDelay: registry.Duration(5 * time.Minute), MaxLaunching: 10000,
			FlappingRestarts: 3, FlappingWindow: registry.Duration(30 * time.Minute),
		}
	})
	want := `SETTING             VALUE   FROM
agentSyncInterval   30s     flag
dependsGCDelay      5m0s    flag
flappingRestarts    3       flag
flappingWindow      30m0s   flag
maxLaunching        10000   flag
reconcileInterval   10m0s   flag
`
	if out := s.must(t, "", "engine", "config"); out != want {
		t.Errorf("engine config:\n%s\nwant:\n%s", out, want)
	}

	out := s.must(t, "", "engine", "config", "set", "dependsGCDelay=1m", "maxLaunching=2000")
	for _, line := range []string{"dependsGCDelay      1m0s    run time", "maxLaunching        2000    run time", "reconcileInterval   10m0s   flag"} {
		if !strings.Contains(out, line) {
			t.Errorf("engine config set printed:\n%s\nwant a line %q", out, line)
		}
	}

	r := s.bcsctl(t, "", "engine", "config", "set", "maxLaunching=lots", "dependsGCDelay=2m")
	if r.code != 1 || !strings.Contains(r.err, `maxLaunching: want a whole number, got "lots"`) {
		t.Errorf("a refused value: exit %d\n%s", r.code, r.err)
	}
	if r := s.bcsctl(t, "", "engine", "config", "set", "maxLaunching"); r.code != 2 || !strings.Contains(r.err, `"maxLaunching": want NAME=VALUE`) {
		t.Errorf("set without a value: exit %d\n%s", r.code, r.err)
	}

	out = s.must(t, "", "engine", "config", "set", "dependsGCDelay=null")
	if !strings.Contains(out, "dependsGCDelay      5m0s    flag") || !strings.Contains(out, "maxLaunching        2000    run time") {
		t.Errorf("after dependsGCDelay=null:\n%s", out)
	}
	if out := s.must(t, "", "engine", "config", "-o", "json"); !strings.Contains(out, `"set": [`) || !strings.Contains(out, `"maxLaunching": 2000`) {
		t.Errorf("engine config -o json:\n%s", out)
	}
}
