package registry_test

import (
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// Issue 5: task IDs are unique, readable, and parse without splitting on
// dots (names may contain dots).
func TestIDsParseBack(t *testing.T) {
	tg := registry.TaskGroupID("ns.a", "game.svc", 12, 3)
	task := registry.TaskID(tg, 1)
	if tg != "ns.a_game.svc_12_3" || task != "ns.a_game.svc_12_3_1" {
		t.Fatalf("ids %q %q", tg, task)
	}
	p, err := registry.ParseID(task)
	if err != nil || p != (registry.ParsedID{Namespace: "ns.a", App: "game.svc", Index: 12, Launch: 3, Task: 1}) {
		t.Fatalf("ParseID(%q) = %+v, %v", task, p, err)
	}
	p, err = registry.ParseID(tg)
	if err != nil || p.Task != -1 || p.Launch != 3 {
		t.Fatalf("ParseID(%q) = %+v, %v", tg, p, err)
	}
	for _, bad := range []string{"", "a_b_c", "a_b_x_1", "a_b_1_2_3_4", "_b_1_2", "a_b_-1_2"} {
		if _, err := registry.ParseID(bad); err == nil {
			t.Errorf("ParseID(%q) accepted", bad)
		}
	}
}
