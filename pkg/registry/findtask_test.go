package registry_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

func TestFindTask(t *testing.T) {
	one := &registry.TaskGroup{ID: "ns_a_0_1", Tasks: []registry.TaskRecord{{ID: "ns_a_0_1_0", Name: "gamesvr"}}}
	two := &registry.TaskGroup{ID: "ns_b_0_1", Tasks: []registry.TaskRecord{{ID: "ns_b_0_1_0", Name: "main"}, {ID: "ns_b_0_1_1", Name: "sidecar"}}}
	for _, c := range []struct {
		tg      *registry.TaskGroup
		name    string
		want    string
		wantErr error
	}{
		{one, "", "ns_a_0_1_0", nil},
		{one, "gamesvr", "ns_a_0_1_0", nil},
		{two, "sidecar", "ns_b_0_1_1", nil},
		{two, "ns_b_0_1_0", "ns_b_0_1_0", nil},
		{two, "", "", errdefs.ErrInvalidArgument},
		{two, "other", "", errdefs.ErrNotFound},
	} {
		task, err := c.tg.FindTask(c.name)
		if c.wantErr != nil {
			if !errors.Is(err, c.wantErr) || !strings.Contains(err.Error(), "main, sidecar") {
				t.Errorf("FindTask(%q) = %v, want %v naming the tasks", c.name, err, c.wantErr)
			}
			continue
		}
		if err != nil || task.ID != c.want {
			t.Errorf("FindTask(%q) = %v, %v; want %s", c.name, task, err, c.want)
		}
	}
}

// An instance's launches by task group ID: its current one, its move's
// successor, its previous one (over), none other.
func TestLaunch(t *testing.T) {
	tasks := []registry.TaskRecord{{ID: "ns_a_0_1_0", Name: "gamesvr", State: "TASK_FAILED"}}
	g := &registry.TaskGroup{ID: "ns_a_0_2", Namespace: "ns", App: "a", AgentID: "s2",
		Move:     &registry.InstanceMove{Successor: &registry.TaskGroup{ID: "ns_a_0_3", AgentID: "s3"}},
		Previous: &registry.PreviousLaunch{ID: "ns_a_0_1", AgentID: "s1", Host: "host-1", Tasks: tasks}}
	for _, c := range []struct {
		id, agent string
		ended     bool
	}{
		{"ns_a_0_2", "s2", false},
		{"ns_a_0_3", "s3", false},
		{"ns_a_0_1", "s1", true},
		{"ns_a_0_0", "", true},
	} {
		switch l := g.Launch(c.id); {
		case c.agent == "" && l != nil:
			t.Errorf("Launch(%s) = %+v, want none", c.id, l)
		case c.agent != "" && (l == nil || l.ID != c.id || l.AgentID != c.agent):
			t.Errorf("Launch(%s) = %+v, want the one on %s", c.id, l, c.agent)
		}
		if got := g.Ended(c.id); got != c.ended {
			t.Errorf("Ended(%s) = %v, want %v", c.id, got, c.ended)
		}
	}
	if p := g.Launch("ns_a_0_1"); p.Namespace != "ns" || p.Host != "host-1" || len(p.Tasks) != 1 || p.Tasks[0].Name != "gamesvr" {
		t.Errorf("the previous launch %+v, want its instance, host and tasks", p)
	}
}
