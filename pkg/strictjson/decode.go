package strictjson

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/field"
)

// Defaulter is implemented by types that have defaults. Decode calls
// Default on a value right before filling it from a JSON object, so fields
// the object leaves out keep their defaults and fields it sets to zero stay
// zero. A parent's Default should also default its struct-valued fields,
// for the case where the object leaves them out entirely.
type Defaulter interface {
	Default()
}

// Decode fills the value v points to from the JSON document data.
//
// The error is a field.ErrorList holding every problem found (it wraps
// errdefs.ErrInvalidArgument), or, when v is not a non-nil pointer, a plain
// error. On error v may be partly filled.
func Decode(data []byte, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("strictjson: Decode needs a non-nil pointer, got %T: %w", v, errdefs.ErrInvalidArgument)
	}
	root, err := parse(data)
	if err != nil {
		return field.ErrorList{{Message: err.Error()}}
	}
	d := &decoder{}
	d.value(root, rv.Elem(), "")
	return d.errs.ToError()
}

type decoder struct {
	errs field.ErrorList
}

func (d *decoder) fail(p field.Path, format string, args ...any) {
	d.errs = append(d.errs, field.Invalid(p, format, args...))
}

var (
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	defaulterType   = reflect.TypeFor[Defaulter]()
)

func (d *decoder) value(n *node, v reflect.Value, p field.Path) {
	if v.Kind() == reflect.Pointer {
		if n.kind == kindNull {
			v.SetZero()
			return
		}
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		d.value(n, v.Elem(), p)
		return
	}
	if v.CanAddr() && v.Addr().Type().Implements(unmarshalerType) {
		var buf bytes.Buffer
		encode(&buf, n)
		if err := v.Addr().Interface().(json.Unmarshaler).UnmarshalJSON(buf.Bytes()); err != nil {
			d.fail(p, "%s", strings.TrimPrefix(err.Error(), "json: "))
		}
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		d.object(n, v, p)
	case reflect.Map:
		d.mapValue(n, v, p)
	case reflect.Slice:
		d.slice(n, v, p)
	case reflect.String:
		if n.kind != kindString {
			d.mismatch(p, "a string", n)
			return
		}
		v.SetString(n.text)
	case reflect.Bool:
		if n.kind != kindBool {
			d.mismatch(p, "true or false", n)
			return
		}
		v.SetBool(n.boolean)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if n.kind != kindNumber {
			d.mismatch(p, "a number", n)
			return
		}
		i, err := strconv.ParseInt(n.text, 10, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			d.fail(p, "want an integer, got %s", n.text)
			return
		}
		if err != nil || v.OverflowInt(i) {
			d.fail(p, "%s is out of range for %s", n.text, v.Type())
			return
		}
		v.SetInt(i)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if n.kind != kindNumber {
			d.mismatch(p, "a number", n)
			return
		}
		if strings.HasPrefix(n.text, "-") {
			d.fail(p, "want a non-negative integer, got %s", n.text)
			return
		}
		u, err := strconv.ParseUint(n.text, 10, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			d.fail(p, "want an integer, got %s", n.text)
			return
		}
		if err != nil || v.OverflowUint(u) {
			d.fail(p, "%s is out of range for %s", n.text, v.Type())
			return
		}
		v.SetUint(u)
	case reflect.Float32, reflect.Float64:
		if n.kind != kindNumber {
			d.mismatch(p, "a number", n)
			return
		}
		f, err := strconv.ParseFloat(n.text, v.Type().Bits())
		if err != nil {
			d.fail(p, "%s is out of range for %s", n.text, v.Type())
			return
		}
		v.SetFloat(f)
	case reflect.Interface:
		if v.NumMethod() != 0 {
			d.fail(p, "cannot decode into Go type %s", v.Type())
			return
		}
		if n.kind == kindNull {
			v.SetZero()
			return
		}
		v.Set(reflect.ValueOf(generic(n)))
	default:
		d.fail(p, "cannot decode into Go type %s", v.Type())
	}
}

func (d *decoder) mismatch(p field.Path, want string, n *node) {
	d.fail(p, "want %s, got %s", want, n.kind.describe())
}

func (d *decoder) object(n *node, v reflect.Value, p field.Path) {
	if n.kind != kindObject {
		d.mismatch(p, "an object", n)
		return
	}
	if v.CanAddr() && v.Addr().Type().Implements(defaulterType) {
		v.Addr().Interface().(Defaulter).Default()
	}
	fields := fieldsOf(v.Type())
	seen := make(map[string]string, len(n.members)) // canonical name -> spelling used
	for _, m := range n.members {
		mp := p.Child(m.key)
		f, ok := fields.byKey[m.key]
		if !ok {
			d.fail(mp, "unknown field")
			continue
		}
		if first, dup := seen[f.name]; dup {
			if first == m.key {
				d.fail(mp, "duplicate field")
			} else {
				d.fail(mp, "duplicate field (also given as %q)", first)
			}
			continue
		}
		seen[f.name] = m.key
		fv, ok := fieldByIndex(v, f.index)
		if !ok {
			d.fail(mp, "cannot decode into an unexported embedded struct")
			continue
		}
		d.value(m.value, fv, mp)
	}
}

// fieldByIndex is reflect.Value.FieldByIndex that allocates nil embedded
// pointers on the way.
func fieldByIndex(v reflect.Value, index []int) (reflect.Value, bool) {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				if !v.CanSet() {
					return reflect.Value{}, false
				}
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v, true
}

func (d *decoder) mapValue(n *node, v reflect.Value, p field.Path) {
	if n.kind == kindNull {
		v.SetZero()
		return
	}
	if v.Type().Key().Kind() != reflect.String {
		d.fail(p, "cannot decode into Go type %s (keys must be strings)", v.Type())
		return
	}
	if n.kind != kindObject {
		d.mismatch(p, "an object", n)
		return
	}
	if v.IsNil() {
		v.Set(reflect.MakeMapWithSize(v.Type(), len(n.members)))
	}
	seen := make(map[string]bool, len(n.members))
	elemType := v.Type().Elem()
	for _, m := range n.members {
		mp := p.Key(m.key)
		if seen[m.key] {
			d.fail(mp, "duplicate key")
			continue
		}
		seen[m.key] = true
		elem := reflect.New(elemType).Elem()
		d.value(m.value, elem, mp)
		v.SetMapIndex(reflect.ValueOf(m.key).Convert(v.Type().Key()), elem)
	}
}

func (d *decoder) slice(n *node, v reflect.Value, p field.Path) {
	if n.kind == kindNull {
		v.SetZero()
		return
	}
	if v.Type().Elem().Kind() == reflect.Uint8 {
		// Bytes are a base64 string, as encoding/json writes them.
		if n.kind != kindString {
			d.mismatch(p, "a base64 string", n)
			return
		}
		b, err := base64.StdEncoding.DecodeString(n.text)
		if err != nil {
			d.fail(p, "want base64: %v", err)
			return
		}
		v.SetBytes(b)
		return
	}
	if n.kind != kindArray {
		d.mismatch(p, "an array", n)
		return
	}
	s := reflect.MakeSlice(v.Type(), len(n.elems), len(n.elems))
	for i, e := range n.elems {
		d.value(e, s.Index(i), p.Index(i))
	}
	v.Set(s)
}

// structFields is the key table of one struct type.
type structFields struct {
	byKey map[string]fieldInfo
}

type fieldInfo struct {
	name  string // the json tag name: the canonical spelling
	index []int
}

var fieldCache sync.Map // reflect.Type -> *structFields

// fieldsOf returns the keys a struct type accepts: each exported field's
// json tag name (its Go name when untagged) and the spellings of its alias
// tag. Embedded structs without a json tag promote their fields. Two fields
// claiming one key is a programming error and panics.
func fieldsOf(t reflect.Type) *structFields {
	if cached, ok := fieldCache.Load(t); ok {
		return cached.(*structFields)
	}
	fs := &structFields{byKey: map[string]fieldInfo{}}
	collectFields(t, nil, fs)
	cached, _ := fieldCache.LoadOrStore(t, fs)
	return cached.(*structFields)
}

func collectFields(t reflect.Type, index []int, fs *structFields) {
	for i := range t.NumField() {
		sf := t.Field(i)
		tag, hasTag := sf.Tag.Lookup("json")
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" && tag == "-" {
			continue
		}
		idx := append(append([]int(nil), index...), i)
		if sf.Anonymous && !hasTag {
			et := sf.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				collectFields(et, idx, fs)
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		keys := []string{name}
		if alias := sf.Tag.Get("alias"); alias != "" {
			keys = append(keys, strings.Split(alias, ",")...)
		}
		for _, key := range keys {
			if _, dup := fs.byKey[key]; dup {
				panic(fmt.Sprintf("strictjson: %s: key %q claimed by two fields", t, key))
			}
			fs.byKey[key] = fieldInfo{name: name, index: idx}
		}
	}
}
