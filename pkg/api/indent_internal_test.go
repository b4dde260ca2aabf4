package api

import (
	"bytes"
	"encoding/json"
	"testing"
)

// indentJSON indents as the encoder does: strings with escapes, quotes
// and brackets in them, empty and nested objects and arrays, numbers and
// literals, HTML characters, the encoder's trailing newline.
func TestIndentJSONAsTheEncoderDoes(t *testing.T) {
	values := []any{
		nil, 1.5, "", `a "quoted" \ {[,:]} string`, "<html>&", "ünï\u2028", []int{}, map[string]any{},
		map[string]any{"a": []any{map[string]any{}, []any{}, true, nil, -2e10, "x"}, "b": map[string]any{"c": map[string]any{"d": []string{"e", "f"}}}},
		[]any{[]any{[]any{}}, map[string]any{"k\"": "v\\"}},
	}
	for _, v := range values {
		checkIndent(t, v)
	}
}

func FuzzIndentJSON(f *testing.F) {
	for _, s := range []string{`{"a":[1,{},[]],"b":"x\"y"}`, `[]`, `"\\"`, `{"":{"":[null,true,false,0.1]}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var v any
		if json.Unmarshal([]byte(s), &v) != nil {
			return
		}
		checkIndent(t, v)
	})
}

func checkIndent(t *testing.T, v any) {
	t.Helper()
	var compact, want bytes.Buffer
	if err := json.NewEncoder(&compact).Encode(v); err != nil {
		t.Fatal(err)
	}
	enc := json.NewEncoder(&want)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	if got := indentJSON(nil, compact.Bytes(), "  "); !bytes.Equal(got, want.Bytes()) {
		t.Errorf("indented\n%s\nwant\n%s", got, want.Bytes())
	}
}
