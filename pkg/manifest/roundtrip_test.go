package manifest_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
)

// canonical maps the spelling variants of the reference files to the names
// the typed structs marshal with.
var canonical = map[string]string{
	"KeyOrPath":        "keyOrPath",
	"networktype":      "networkType",
	"IntersectionItem": "intersectionItem",
	"UnionData":        "unionData",
}

// leaves flattens a generic JSON value into path -> scalar.
func leaves(v any, prefix string, out map[string]any) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if c, ok := canonical[k]; ok {
				k = c
			}
			leaves(e, prefix+"."+k, out)
		}
	case []any:
		for i, e := range v {
			leaves(e, fmt.Sprintf("%s[%d]", prefix, i), out)
		}
	default:
		out[prefix] = v
	}
}

func genericJSON(t *testing.T, data []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestEveryReferenceFieldIsKept: every value of every reference file is in
// the typed object, under its canonical name. Strict decoding already
// rejects unknown fields; this checks that no accepted field is dropped.
func TestEveryReferenceFieldIsKept(t *testing.T) {
	for _, file := range []string{"application.json", "deployment.json", "process.json", "configmap.json", "secret.json", "service.json", "command.json"} {
		t.Run(file, func(t *testing.T) {
			data := readFixture(t, file)
			obj := mustParse(t, data)
			out, err := json.Marshal(obj)
			if err != nil {
				t.Fatal(err)
			}
			want, got := map[string]any{}, map[string]any{}
			leaves(genericJSON(t, data), "", want)
			leaves(genericJSON(t, out), "", got)
			var missing []string
			for path, w := range want {
				if g, ok := got[path]; ok && reflect.DeepEqual(g, w) {
					continue
				}
				if w == "" || w == false {
					continue // zero values are omitted when marshalled
				}
				missing = append(missing, fmt.Sprintf("%s = %v (got %v)", path, w, got[path]))
			}
			sort.Strings(missing)
			for _, m := range missing {
				t.Errorf("lost %s", m)
			}
		})
	}
}

// TestMarshalledManifestsParseBack: what the store writes (encoding/json of
// the typed object) is accepted by the strict parser and reads back the
// same.
func TestMarshalledManifestsParseBack(t *testing.T) {
	for _, file := range []string{"application.json", "deployment.json", "process.json", "configmap.json", "secret.json", "service.json", "command.json"} {
		t.Run(file, func(t *testing.T) {
			first, err := json.Marshal(mustParse(t, readFixture(t, file)))
			if err != nil {
				t.Fatal(err)
			}
			again, err := manifest.Parse(first)
			if err != nil {
				t.Fatalf("Parse(marshalled): %v", err)
			}
			second, err := json.Marshal(again)
			if err != nil {
				t.Fatal(err)
			}
			if string(first) != string(second) {
				t.Errorf("round trip changed the manifest:\nfirst  %s\nsecond %s", first, second)
			}
		})
	}
}

// TestDeepCopyKeepsEverything: a deep copy of every reference manifest
// equals its original.
func TestDeepCopyKeepsEverything(t *testing.T) {
	for _, file := range []string{"application.json", "deployment.json", "process.json", "configmap.json", "secret.json", "service.json", "command.json"} {
		obj := mustParse(t, readFixture(t, file))
		var copied any
		switch o := obj.(type) {
		case *manifest.Application:
			copied = o.DeepCopy()
		case *manifest.Deployment:
			copied = o.DeepCopy()
		case *manifest.Process:
			copied = o.DeepCopy()
		case *manifest.ConfigMap:
			copied = o.DeepCopy()
		case *manifest.Secret:
			copied = o.DeepCopy()
		case *manifest.Service:
			copied = o.DeepCopy()
		case *manifest.Command:
			copied = o.DeepCopy()
		}
		if !reflect.DeepEqual(copied, obj) {
			t.Errorf("%s: DeepCopy differs from the original", file)
		}
		if reflect.ValueOf(copied).Pointer() == reflect.ValueOf(obj).Pointer() {
			t.Errorf("%s: DeepCopy returned the original", file)
		}
	}
}
