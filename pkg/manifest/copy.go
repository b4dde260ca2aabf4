package manifest

import (
	"reflect"
	"sort"
	"strings"

	"github.com/bcs-mesos/bcs-mesos/pkg/field"
)

// DeepCopy returns a copy of a that shares no map, slice or pointer with it.
func (a *Application) DeepCopy() *Application { return deepCopy(a) }

// DeepCopy returns a copy of d that shares no map, slice or pointer with it.
func (d *Deployment) DeepCopy() *Deployment { return deepCopy(d) }

// DeepCopy returns a copy of p that shares no map, slice or pointer with it.
func (p *Process) DeepCopy() *Process { return deepCopy(p) }

// DeepCopy returns a copy of c that shares no map, slice or pointer with it.
func (c *ConfigMap) DeepCopy() *ConfigMap { return deepCopy(c) }

// DeepCopy returns a copy of s that shares no map, slice or pointer with it.
func (s *Secret) DeepCopy() *Secret { return deepCopy(s) }

// DeepCopy returns a copy of s that shares no map, slice or pointer with it.
func (s *Service) DeepCopy() *Service { return deepCopy(s) }

// DeepCopy returns a copy of c that shares no map, slice or pointer with it.
func (c *Command) DeepCopy() *Command { return deepCopy(c) }

func deepCopy[T any](v *T) *T {
	if v == nil {
		return nil
	}
	out := rewrite(reflect.ValueOf(v).Elem(), "", nil)
	result := out.Interface().(T)
	return &result
}

// stringRewriter replaces the string at path p; nil keeps every string.
type stringRewriter func(p field.Path, s string) string

// fieldPath is the path of struct field sf of the struct at p: its json
// name; an embedded struct without one is inline, as encoding/json reads
// it.
func fieldPath(p field.Path, sf reflect.StructField) field.Path {
	name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
	switch {
	case name != "":
		return p.Child(name)
	case sf.Anonymous:
		return p
	}
	return p.Child(sf.Name)
}

// visitStructs calls fn with every struct value under v (v's own too), in
// struct fields, slices, maps and pointers, and its path.
func visitStructs(v reflect.Value, p field.Path, fn func(p field.Path, v any)) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			visitStructs(v.Elem(), p, fn)
		}
	case reflect.Struct:
		fn(p, v.Interface())
		t := v.Type()
		for i := range t.NumField() {
			if sf := t.Field(i); sf.IsExported() {
				visitStructs(v.Field(i), fieldPath(p, sf), fn)
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			visitStructs(v.Index(i), p.Index(i), fn)
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			visitStructs(iter.Value(), p.Key(iter.Key().String()), fn)
		}
	}
}

// rewrite returns a deep copy of v in which every string (struct fields,
// slice elements, map values; not map keys) went through fn. Paths name
// struct fields by their json tag.
func rewrite(v reflect.Value, p field.Path, fn stringRewriter) reflect.Value {
	out := reflect.New(v.Type()).Elem()
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			out.Set(rewrite(v.Elem(), p, fn).Addr())
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			if sf := t.Field(i); sf.IsExported() {
				out.Field(i).Set(rewrite(v.Field(i), fieldPath(p, sf), fn))
			}
		}
	case reflect.Slice:
		if !v.IsNil() {
			out.Set(reflect.MakeSlice(v.Type(), v.Len(), v.Len()))
			for i := range v.Len() {
				out.Index(i).Set(rewrite(v.Index(i), p.Index(i), fn))
			}
		}
	case reflect.Map:
		if !v.IsNil() {
			out.Set(reflect.MakeMapWithSize(v.Type(), v.Len()))
			keys := v.MapKeys()
			sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
			for _, k := range keys {
				out.SetMapIndex(k, rewrite(v.MapIndex(k), p.Key(k.String()), fn))
			}
		}
	case reflect.String:
		s := v.String()
		if fn != nil {
			s = fn(p, s)
		}
		out.SetString(s)
	default:
		out.Set(v)
	}
	return out
}
