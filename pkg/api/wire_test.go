package api_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/apiv1"
	"github.com/bcs-mesos/bcs-mesos/pkg/plan"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// The API shows these records as they are stored; pkg/apiv1 declares
// their wire form for bcsctl and the OpenAPI document. Both must encode
// alike: a field added to a record and not to its wire type (or the
// other way) would be shown by one and not described or read by the
// other.
func TestWireTypesMatchTheirRecords(t *testing.T) {
	for _, c := range []struct{ record, wire any }{
		{registry.Pending{}, apiv1.Pending{}},
		{registry.InstanceUpdate{}, apiv1.InstanceUpdate{}},
		{registry.PreDeleteWait{}, apiv1.PreDeleteWait{}},
		{registry.RemoteCheckResult{}, apiv1.RemoteCheckResult{}},
		{registry.DependencyPod{}, apiv1.DependencyPod{}},
		{registry.AgentMaster{}, apiv1.AgentMaster{}},
		{registry.AgentMaintenance{}, apiv1.AgentMaintenance{}},
		{registry.Notification{}, apiv1.Notification{}},
		{registry.EngineConfig{}, apiv1.EngineConfig{}},
		{registry.Engine{}, apiv1.Engine{}},
		{registry.AuditEntry{}, apiv1.AuditEntry{}},
		{registry.AppVersion{}, apiv1.AppVersion{}},
		{registry.NotifyCallback{}, apiv1.NotifyCallback{}},
		{registry.HookRun{}, apiv1.HookRun{}},
		{plan.Plan{}, apiv1.Plan{}},
	} {
		record, wire := jsonShape(reflect.TypeOf(c.record)), jsonShape(reflect.TypeOf(c.wire))
		if record != wire {
			t.Errorf("%T encodes as\n%s\nbut %T as\n%s", c.record, record, c.wire, wire)
		}
	}
}

var marshalerType = reflect.TypeFor[json.Marshaler]()

// jsonShape describes how encoding/json writes values of t: each
// object's members by name with their options, in name order; a named
// string is a string, a type with its own MarshalJSON is its name.
func jsonShape(t reflect.Type) string {
	if t.Implements(marshalerType) {
		return "marshaler " + t.Name()
	}
	switch t.Kind() {
	case reflect.Pointer:
		return "*" + jsonShape(t.Elem())
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "bytes"
		}
		return "[]" + jsonShape(t.Elem())
	case reflect.Map:
		return "map[" + t.Key().Kind().String() + "]" + jsonShape(t.Elem())
	case reflect.Struct:
		return structShape(t)
	}
	return t.Kind().String()
}

type member struct {
	name, shape string
	depth       int
	tagged      bool
}

func structShape(t reflect.Type) string {
	byName := map[string][]member{}
	collectMembers(t, 0, byName)
	var lines []string
	for name, ms := range byName {
		sort.Slice(ms, func(i, j int) bool { return ms[i].depth < ms[j].depth })
		shallow := ms[:1]
		for _, m := range ms[1:] {
			if m.depth == ms[0].depth {
				shallow = append(shallow, m)
			}
		}
		var tagged []member
		for _, m := range shallow {
			if m.tagged {
				tagged = append(tagged, m)
			}
		}
		switch {
		case len(shallow) == 1:
			lines = append(lines, name+" "+shallow[0].shape)
		case len(tagged) == 1:
			lines = append(lines, name+" "+tagged[0].shape)
		}
	}
	sort.Strings(lines)
	return "{" + strings.Join(lines, "; ") + "}"
}

// collectMembers gathers t's JSON members, those of embedded structs at
// their depth, as encoding/json sees them.
func collectMembers(t reflect.Type, depth int, byName map[string][]member) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		ft := f.Type
		if f.Anonymous && name == "" {
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				collectMembers(ft, depth+1, byName)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		byName[name] = append(byName[name], member{name: name, depth: depth, tagged: tag != "",
			shape: fmt.Sprintf("%s (%s)", jsonShape(f.Type), opts)})
	}
}
