package e2e_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// daemonsetHosts waits until the daemonset demo/logagent wants n
// instances, runs them all and is Running, and returns the hosts they
// run on, sorted.
func (s *system) daemonsetHosts(n int) []string {
	s.t.Helper()
	var hosts []string
	s.eventually(fmt.Sprintf("the daemonset running on %d agents", n), func() (bool, string) {
		code, body := s.call("GET", "/v1/daemonsets/demo/logagent", nil)
		var v appView
		if err := json.Unmarshal(body, &v); code != 200 || err != nil {
			return false, fmt.Sprintf("%d %s", code, body)
		}
		hosts = hosts[:0]
		for _, i := range v.Status.Instances {
			if i.State == "TASK_RUNNING" {
				hosts = append(hosts, i.Host)
			}
		}
		slices.Sort(hosts)
		return v.Instances == n && len(v.Status.Instances) == n && len(hosts) == n && v.Status.State == "Running",
			fmt.Sprintf("instances=%d %s %q %+v", v.Instances, v.Status.State, v.Status.Message, v.Status.Instances)
	})
	return hosts
}

// A daemonset of a process runs one instance on each of the
// three dev agents; an agent added at run time — known to the scheduler
// from the master's agent list, since a framework with nothing to launch
// gets no offers — gets its own; draining one removes its instance, which
// is not placed anywhere else.
func TestDaemonsetFollowsAgents(t *testing.T) {
	s := startSystem(t, "--agent-sync-interval=1s")
	s.eventually("the scheduler leading", func() (bool, string) {
		_, body := s.call("GET", "/v1/leader", nil)
		var l struct{ Self bool }
		_ = json.Unmarshal(body, &l)
		return l.Self, string(body)
	})
	if code, body := s.call("POST", "/v1/daemonsets", s.manifest("daemonset.json", nil)); code != 201 {
		t.Fatalf("create daemonset: %d %s", code, body)
	}
	if got := s.daemonsetHosts(3); !slices.Equal(got, []string{"agent-1", "agent-2", "agent-3"}) {
		t.Fatalf("on %v, want one on each of agent-1..3", got)
	}
	if code, body := s.call("POST", "/v1/daemonsets/demo/logagent/scale", []byte(`{"instances": 5}`)); code != 400 {
		t.Errorf("scale: %d %s, want 400", code, body)
	}

	resp, err := http.Post("http://"+s.control+"/agents", "application/json", strings.NewReader(
		`{"hostname": "agent-4", "resources": {"ports": [{"begin": 32001, "end": 32333}]}, "attributes": [{"name": "rack", "text": "r4"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("add agent-4: %s", resp.Status)
	}
	if got := s.daemonsetHosts(4); !slices.Equal(got, []string{"agent-1", "agent-2", "agent-3", "agent-4"}) {
		t.Fatalf("on %v after agent-4 came, want one on each of agent-1..4", got)
	}

	s.mustCall("POST", "/v1/agents/agent-2/drain", `{"reason":"kernel upgrade"}`, 200)
	if got := s.daemonsetHosts(3); !slices.Equal(got, []string{"agent-1", "agent-3", "agent-4"}) {
		t.Fatalf("on %v after agent-2 drained, want agent-1, agent-3 and agent-4", got)
	}
}
