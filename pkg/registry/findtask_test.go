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
