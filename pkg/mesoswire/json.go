package mesoswire

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
)

// UnmarshalJSON decodes data into v (a pointer to a mesos-go generated
// type) like encoding/json, except that an enum value v's types do not
// know is dropped instead of failing the decode: an optional enum field
// stays unset and a repeated one loses that element, which is what
// protobuf does with an enum value from a newer .proto. Everything else
// that is wrong (a string where a number belongs, broken JSON) is still
// an error.
func UnmarshalJSON(data []byte, v any) error {
	err := json.Unmarshal(data, v)
	if err == nil {
		return nil
	}
	// The slow path runs only for events that failed: decode into a
	// tree, prune what the target types cannot hold, decode again.
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var tree any
	if dec.Decode(&tree) != nil {
		return err
	}
	target := reflect.ValueOf(v)
	if target.Kind() != reflect.Pointer || target.IsNil() {
		return err
	}
	pruned, changed := pruneUnknownEnums(tree, target.Type().Elem())
	if !changed {
		return err
	}
	clean, merr := json.Marshal(pruned)
	if merr != nil {
		return err
	}
	target.Elem().Set(reflect.Zero(target.Type().Elem()))
	return json.Unmarshal(clean, v)
}

// droppedValue marks a value pruneUnknownEnums removes.
type droppedValue struct{}

func isDropped(v any) bool {
	_, ok := v.(droppedValue)
	return ok
}

var jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()

// pruneUnknownEnums walks node, a decoded JSON value, alongside t, the Go
// type it will be decoded into, and drops the enum values t cannot hold.
// It reports whether it dropped anything.
func pruneUnknownEnums(node any, t reflect.Type) (any, bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	// Messages decode themselves too (mesos-go generates ffjson code for
	// them), but by the same json tags; other such types are opaque.
	if reflect.PointerTo(t).Implements(jsonUnmarshaler) && t.Kind() != reflect.Struct {
		if isEnum(t) && !enumHolds(t, node) {
			return droppedValue{}, true
		}
		return node, false
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := node.(map[string]any)
		if !ok {
			return node, false
		}
		fields := jsonFields(t)
		changed := false
		for key, val := range obj {
			f, ok := fields.lookup(key)
			if !ok {
				continue
			}
			pruned, c := pruneUnknownEnums(val, f)
			if isDropped(pruned) {
				delete(obj, key)
			} else {
				obj[key] = pruned
			}
			changed = changed || c
		}
		return obj, changed
	case reflect.Slice, reflect.Array:
		list, ok := node.([]any)
		if !ok || t.Elem().Kind() == reflect.Uint8 {
			return node, false
		}
		kept := list[:0]
		changed := false
		for _, el := range list {
			pruned, c := pruneUnknownEnums(el, t.Elem())
			changed = changed || c
			if !isDropped(pruned) {
				kept = append(kept, pruned)
			}
		}
		return kept, changed
	case reflect.Map:
		obj, ok := node.(map[string]any)
		if !ok {
			return node, false
		}
		changed := false
		for key, val := range obj {
			pruned, c := pruneUnknownEnums(val, t.Elem())
			if isDropped(pruned) {
				delete(obj, key)
			} else {
				obj[key] = pruned
			}
			changed = changed || c
		}
		return obj, changed
	}
	return node, false
}

// isEnum: the generated enums are int32 types that decode their names.
func isEnum(t reflect.Type) bool { return t.Kind() == reflect.Int32 }

// enumHolds reports whether an enum of type t can decode node.
func enumHolds(t reflect.Type, node any) bool {
	raw, err := json.Marshal(node)
	if err != nil {
		return false
	}
	return reflect.New(t).Interface().(json.Unmarshaler).UnmarshalJSON(raw) == nil
}

// fieldTypes maps a struct's JSON keys to its fields' types.
type fieldTypes map[string]reflect.Type

// lookup finds key the way encoding/json does: exactly, else ignoring case.
func (f fieldTypes) lookup(key string) (reflect.Type, bool) {
	if t, ok := f[key]; ok {
		return t, true
	}
	for name, t := range f {
		if strings.EqualFold(name, key) {
			return t, true
		}
	}
	return nil, false
}

var fieldCache sync.Map // reflect.Type → fieldTypes

func jsonFields(t reflect.Type) fieldTypes {
	if f, ok := fieldCache.Load(t); ok {
		return f.(fieldTypes)
	}
	f := fieldTypes{}
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		f[name] = sf.Type
	}
	fieldCache.Store(t, f)
	return f
}
