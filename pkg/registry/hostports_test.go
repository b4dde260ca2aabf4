package registry_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// HostPorts read and write the JSON a map of name → port did, so records
// stored before they were a slice read the same.
func TestHostPortsAreTheJSONObjectTheyWere(t *testing.T) {
	asMap := map[string]uint32{"rpc": 31002, "http": 31001, "a\"b": 7}
	want, err := json.Marshal(asMap)
	if err != nil {
		t.Fatal(err)
	}
	ports := registry.NewHostPorts([]registry.HostPort{{Name: "rpc", Port: 31002}, {Name: "http", Port: 31001}, {Name: "a\"b", Port: 7}})
	got, err := json.Marshal(ports)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("marshalled %s, want %s", got, want)
	}
	var back registry.HostPorts
	if err := json.Unmarshal(want, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, ports) || !reflect.DeepEqual(back.Map(), asMap) {
		t.Errorf("read back %v, want %v", back, ports)
	}
	for _, none := range []map[string]uint32{nil, {}} {
		want, _ := json.Marshal(none)
		got, err := json.Marshal(registry.NewHostPorts(nil))
		if none != nil {
			got, err = json.Marshal(registry.HostPorts{})
		}
		if err != nil || string(got) != string(want) {
			t.Errorf("no ports (%#v): marshalled %s, %v; want %s", none, got, err, want)
		}
	}
	if port, ok := back.Get("http"); !ok || port != 31001 {
		t.Errorf("Get(http) = %d, %v; want 31001, true", port, ok)
	}
	if _, ok := back.Get("ssh"); ok {
		t.Error("Get(ssh) found a port the instance does not have")
	}
	if err := json.Unmarshal([]byte(`{"http":"x"}`), &back); err == nil {
		t.Error("a port that is not a number was read")
	}
	rec, err := json.Marshal(registry.TaskGroup{ID: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(rec), `"ports"`) {
		t.Errorf("a task group without ports writes them: %s", rec)
	}
}
