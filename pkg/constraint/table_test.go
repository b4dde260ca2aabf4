package constraint_test

import (
	"reflect"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/constraint"
)

func TestTableColumns(t *testing.T) {
	agents := cluster() // a3 has no district
	agents = append(agents, &constraint.Agent{ID: "g", Hostname: "g", Attributes: map[string]constraint.Value{
		"gen": constraint.Scalar(4), "tags": constraint.Set("b", "a"),
	}})
	table := constraint.NewTable(agents)

	idc := table.Column("idc")
	if idc.Len() != 2 || idc.Of(0) != idc.Of(1) || idc.Of(2) != idc.Of(3) || idc.Of(0) == idc.Of(2) {
		t.Fatalf("idc column: %d values, ids %d %d %d %d", idc.Len(), idc.Of(0), idc.Of(1), idc.Of(2), idc.Of(3))
	}
	if idc.Of(4) != constraint.Missing {
		t.Errorf("agent g has no idc, got id %d", idc.Of(4))
	}
	sz, ok := idc.ID("sz")
	if !ok || idc.Value(sz) != "sz" || !reflect.DeepEqual(idc.AgentsWith(sz), []int32{0, 1}) {
		t.Errorf("sz: id %d ok %v agents %v", sz, ok, idc.AgentsWith(sz))
	}
	if _, ok := idc.ID("gz"); ok {
		t.Error("gz exists on no agent")
	}
	if host := table.Column("hostname"); host.Len() != 5 || host.Value(host.Of(3)) != "mesos-slave-1" {
		t.Errorf("hostname column wrong: %d values", host.Len())
	}
	if tags := table.Column("tags"); tags.Value(tags.Of(4)) != "{a,b}" {
		t.Errorf("a SET attribute reads as its canonical string, got %q", tags.Value(tags.Of(4)))
	}
	if table.Column("idc") != idc {
		t.Error("columns are built once")
	}
	if table.Tainted(0) {
		t.Error("a1 has no taints")
	}
}
