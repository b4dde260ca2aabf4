package strictjson_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/constraint"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/field"
	"github.com/bcs-mesos/bcs-mesos/pkg/strictjson"
)

type port struct {
	Name string `json:"name"`
	Port int32  `json:"port"`
}

type item struct {
	KeyOrPath string `json:"keyOrPath,omitempty" alias:"KeyOrPath"`
	ReadOnly  bool   `json:"readOnly"`
}

type limits struct {
	CPU    string  `json:"cpu"`
	Weight float64 `json:"weight"`
	Small  float32 `json:"small"`
}

type base struct {
	APIVersion string `json:"apiVersion"`
}

type doc struct {
	base
	Kind      string              `json:"kind"`
	Instance  int                 `json:"instance"`
	Count     uint32              `json:"count"`
	Tiny      int8                `json:"tiny"`
	Ports     []port              `json:"ports"`
	Items     []item              `json:"items"`
	Labels    map[string]string   `json:"labels"`
	Limits    *limits             `json:"limits"`
	Raw       json.RawMessage     `json:"raw"`
	Operate   constraint.Operator `json:"operate"`
	Anything  any                 `json:"anything"`
	Content   []byte              `json:"content"`
	Untagged  string
	Ignored   string `json:"-"`
	unexposed string //lint:ignore U1000 the decoder must skip unexported fields
}

// defaulted records the defaults-before-decode contract.
type defaulted struct {
	Grace int    `json:"grace"`
	Mode  string `json:"mode"`
}

func (d *defaulted) Default() { d.Grace, d.Mode = 1, "OnFailure" }

type withDefaults struct {
	Policy  defaulted   `json:"policy"`
	Checks  []defaulted `json:"checks"`
	Pointer *defaulted  `json:"pointer"`
}

func TestDecodeFillsEverySupportedType(t *testing.T) {
	data := `{
		"apiVersion": "v4", "kind": "application", "instance": 3, "count": 4000000000, "tiny": -128,
		"ports": [{"name": "http", "port": 8080}],
		"items": [{"keyOrPath": "ENV"}, {"KeyOrPath": "/etc/a", "readOnly": true}],
		"labels": {"app": "game", "tier": ""},
		"limits": {"cpu": "0.5", "weight": 0.1, "small": 1.5e3},
		"raw": {"any": [1, "two", null]},
		"operate": "ClUSTER",
		"anything": {"n": 12345678901234567890, "list": [true, null]},
		"content": "AGJ5dGVz",
		"Untagged": "yes"
	}`
	var got doc
	if err := strictjson.Decode([]byte(data), &got); err != nil {
		t.Fatalf("Decode: %v", err)
	}
	want := doc{
		base: base{APIVersion: "v4"}, Kind: "application", Instance: 3, Count: 4000000000, Tiny: -128,
		Ports:    []port{{Name: "http", Port: 8080}},
		Items:    []item{{KeyOrPath: "ENV"}, {KeyOrPath: "/etc/a", ReadOnly: true}},
		Labels:   map[string]string{"app": "game", "tier": ""},
		Limits:   &limits{CPU: "0.5", Weight: 0.1, Small: 1500},
		Raw:      json.RawMessage(`{"any":[1,"two",null]}`),
		Operate:  constraint.Cluster, // its UnmarshalJSON upper-cases
		Anything: map[string]any{"n": json.Number("12345678901234567890"), "list": []any{true, nil}},
		Content:  []byte("\x00bytes"), // base64, as encoding/json writes []byte
		Untagged: "yes",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Decode:\n got %+v\nwant %+v", got, want)
	}
}

func TestDecodeNullClearsPointersSlicesAndMaps(t *testing.T) {
	got := doc{Limits: &limits{}, Ports: []port{{}}, Labels: map[string]string{"a": "b"}}
	if err := strictjson.Decode([]byte(`{"limits": null, "ports": null, "labels": null, "anything": null}`), &got); err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if got.Limits != nil || got.Ports != nil || got.Labels != nil || got.Anything != nil {
		t.Errorf("null left values: %+v", got)
	}
}

func TestDecodeAppliesDefaultsBeforeFilling(t *testing.T) {
	var got withDefaults
	data := `{"policy": {"grace": 0}, "checks": [{}, {"mode": "Never"}], "pointer": {"grace": 7}}`
	if err := strictjson.Decode([]byte(data), &got); err != nil {
		t.Fatalf("Decode: %v", err)
	}
	want := withDefaults{
		Policy:  defaulted{Grace: 0, Mode: "OnFailure"}, // an explicit zero stays zero
		Checks:  []defaulted{{Grace: 1, Mode: "OnFailure"}, {Grace: 1, Mode: "Never"}},
		Pointer: &defaulted{Grace: 7, Mode: "OnFailure"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestDecodeReportsEveryProblemWithItsPath(t *testing.T) {
	tests := []struct {
		name string
		data string
		want []string
	}{
		{"unknown field", `{"kind": "a", "knd": "b"}`, []string{"knd: unknown field"}},
		{"keys match exactly, not case-insensitively", `{"Kind": "a"}`, []string{"Kind: unknown field"}},
		{"unknown nested field", `{"ports": [{"name": "a"}, {"nam": "b"}]}`, []string{"ports[1].nam: unknown field"}},
		{"alias only where listed", `{"items": [{"keyorpath": "x"}]}`, []string{"items[0].keyorpath: unknown field"}},
		{"duplicate field", `{"kind": "a", "kind": "b"}`, []string{"kind: duplicate field"}},
		{"duplicate through an alias", `{"items": [{"keyOrPath": "a", "KeyOrPath": "b"}]}`, []string{`items[0].KeyOrPath: duplicate field (also given as "keyOrPath")`}},
		{"duplicate map key", `{"labels": {"a": "1", "a": "2"}}`, []string{`labels["a"]: duplicate key`}},
		{"ignored field is unknown", `{"Ignored": "x"}`, []string{"Ignored: unknown field"}},
		{"string wanted", `{"kind": 1}`, []string{"kind: want a string, got a number"}},
		{"number wanted", `{"instance": "3"}`, []string{"instance: want a number, got a string"}},
		{"integer wanted", `{"instance": 1.5}`, []string{"instance: want an integer, got 1.5"}},
		{"exponent is not an integer", `{"instance": 1e3}`, []string{"instance: want an integer, got 1e3"}},
		{"int overflow", `{"tiny": 128}`, []string{"tiny: 128 is out of range for int8"}},
		{"int64 overflow", `{"instance": 99999999999999999999}`, []string{"instance: 99999999999999999999 is out of range for int"}},
		{"uint negative", `{"count": -1}`, []string{"count: want a non-negative integer, got -1"}},
		{"uint overflow", `{"count": 4294967296}`, []string{"count: 4294967296 is out of range for uint32"}},
		{"uint fraction", `{"count": 0.5}`, []string{"count: want an integer, got 0.5"}},
		{"float overflow", `{"limits": {"small": 1e39}}`, []string{"limits.small: 1e39 is out of range for float32"}},
		{"float wants a number", `{"limits": {"weight": "1"}}`, []string{"limits.weight: want a number, got a string"}},
		{"bool wanted", `{"items": [{"readOnly": "false"}]}`, []string{"items[0].readOnly: want true or false, got a string"}},
		{"object wanted", `{"limits": []}`, []string{"limits: want an object, got an array"}},
		{"map wants an object", `{"labels": "a=b"}`, []string{"labels: want an object, got a string"}},
		{"map value type", `{"labels": {"a": 1}}`, []string{`labels["a"]: want a string, got a number`}},
		{"array wanted", `{"ports": {}}`, []string{"ports: want an array, got an object"}},
		{"bytes are base64", `{"content": "not base64!"}`, []string{"content: want base64: illegal base64 data at input byte 3"}},
		{"bytes are a string", `{"content": [1, 2]}`, []string{"content: want a base64 string, got an array"}},
		{"null is not a string", `{"kind": null}`, []string{"kind: want a string, got null"}},
		{"unmarshaler error", `{"operate": 3}`, []string{"operate: cannot unmarshal number into Go value of type string"}},
		{"top level must be an object", `[]`, []string{"want an object, got an array"}},
		{"all problems at once", `{"knd": 1, "instance": "x", "ports": [{"port": "80"}], "limits": {"cpus": "1"}}`, []string{
			"knd: unknown field",
			"instance: want a number, got a string",
			"ports[0].port: want a number, got a string",
			"limits.cpus: unknown field",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got doc
			err := strictjson.Decode([]byte(tt.data), &got)
			var list field.ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("Decode(%s) = %v, want a field.ErrorList", tt.data, err)
			}
			if !reflect.DeepEqual(list.Messages(), tt.want) {
				t.Errorf("Decode(%s) errors:\n got %q\nwant %q", tt.data, list.Messages(), tt.want)
			}
			if !errors.Is(err, errdefs.ErrInvalidArgument) {
				t.Errorf("error class = %v, want ErrInvalidArgument", errdefs.Class(err))
			}
		})
	}
}

func TestDecodeReportsBrokenJSONWithItsPosition(t *testing.T) {
	tests := []struct {
		name string
		data string
		want string
	}{
		{"empty", "  ", "invalid JSON: empty input"},
		{"bad character", "{\n  \"kind\": x}", "invalid JSON at line 2, column 11 (offset 12): invalid character 'x' looking for beginning of value"},
		{"truncated", `{"kind": "a"`, "invalid JSON at line 1, column 13 (offset 12): unexpected end of input"},
		{"trailing comma", `{"kind": "a",}`, "invalid JSON at line 1, column 14 (offset 13): invalid character '}' looking for beginning of object key string"},
		{"trailing data", `{} {}`, "invalid JSON at line 1, column 4 (offset 3): invalid character '{' after top-level value"},
		{"too deep", strings.Repeat("[", 600) + strings.Repeat("]", 600), "invalid JSON at offset 513: nesting deeper than 512 levels"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got doc
			err := strictjson.Decode([]byte(tt.data), &got)
			if err == nil || err.Error() != tt.want {
				t.Errorf("Decode(%q) = %v, want %q", tt.data, err, tt.want)
			}
			if !errors.Is(err, errdefs.ErrInvalidArgument) {
				t.Errorf("error class = %v, want ErrInvalidArgument", errdefs.Class(err))
			}
		})
	}
}

// CheckSyntax says what Decode says of broken JSON, for a client that
// reads only part of a document (bcsctl: a manifest's kind and name).
func TestCheckSyntaxSaysWhereJSONBreaks(t *testing.T) {
	if err := strictjson.CheckSyntax([]byte("{\"kind\": \"process\",\n \"spec\": {\"unknown\": 1}}")); err != nil {
		t.Errorf("CheckSyntax of well-formed JSON with an unknown field: %v", err)
	}
	data := []byte("{\"kind\": \"process\",\n \"metadata\": {\"name\": \"x\",}\n}")
	want := "invalid JSON at line 2, column 27 (offset 46): invalid character '}' looking for beginning of object key string"
	if err := strictjson.CheckSyntax(data); err == nil || err.Error() != want {
		t.Errorf("CheckSyntax = %v, want %q", err, want)
	}
	var got doc
	if err := strictjson.Decode(data, &got); err == nil || err.Error() != want {
		t.Errorf("Decode = %v, want %q", err, want)
	}
}

func TestDecodeNeedsANonNilPointer(t *testing.T) {
	var p *doc
	for _, v := range []any{doc{}, p, nil} {
		if err := strictjson.Decode([]byte(`{}`), v); !errors.Is(err, errdefs.ErrInvalidArgument) {
			t.Errorf("Decode(%T) = %v, want ErrInvalidArgument", v, err)
		}
	}
}

type clash struct {
	A string `json:"a"`
	B string `json:"b" alias:"a"`
}

func TestDecodePanicsOnAKeyClaimedTwice(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic for a struct whose alias repeats another field's name")
		}
	}()
	var c clash
	_ = strictjson.Decode([]byte(`{}`), &c)
}

// FuzzDecode checks that no input panics, and that whatever Decode accepts
// encoding/json accepts too, with the same result for the fields both see.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"kind": "a", "instance": 3, "ports": [{"name": "x", "port": 1}]}`,
		`{"items": [{"KeyOrPath": "/a"}], "labels": {"a": "b"}, "limits": {"cpu": "1", "weight": 1.5}}`,
		`{"raw": [1, {"a": null}], "operate": "like", "anything": [1, "a", {}]}`,
		`{"instance": 1.5}`, `[`, `{"a":}`, `null`, `"\ud800"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got doc
		if err := strictjson.Decode(data, &got); err != nil {
			var list field.ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("Decode error %v is not a non-empty field.ErrorList", err)
			}
			return
		}
		var std struct {
			Kind     string            `json:"kind"`
			Instance int               `json:"instance"`
			Labels   map[string]string `json:"labels"`
		}
		if err := json.Unmarshal(data, &std); err != nil {
			t.Fatalf("strictjson accepted %q, encoding/json rejects it: %v", data, err)
		}
		if got.Kind != std.Kind || got.Instance != std.Instance || (len(got.Labels) > 0 && !reflect.DeepEqual(got.Labels, std.Labels)) {
			t.Fatalf("strictjson and encoding/json disagree on %q: %+v vs %+v", data, got, std)
		}
	})
}
