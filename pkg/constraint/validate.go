package constraint

import (
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/bcs-mesos/bcs-mesos/pkg/field"
)

// Validate reports every problem of c, each under path (normally
// field.Path("constraint")). A Constraint that validates compiles.
func (c *Constraint) Validate(path field.Path) field.ErrorList {
	var errs field.ErrorList
	itemsPath := path.Child("intersectionItem")
	for i, item := range c.IntersectionItems {
		unionPath := itemsPath.Index(i).Child("unionData")
		if len(item.UnionData) == 0 {
			errs = append(errs, field.Invalid(unionPath, "must hold at least one condition"))
			continue
		}
		for j, u := range item.UnionData {
			errs = append(errs, u.validate(unionPath.Index(j))...)
		}
		if item.Weight == 0 {
			continue
		}
		weightPath := itemsPath.Index(i).Child("weight")
		if item.Weight < 0 || item.Weight > MaxWeight {
			errs = append(errs, field.Invalid(weightPath, "must be 1 to %d (a preferred item), or absent (a required one), got %d", MaxWeight, item.Weight))
		}
		for _, u := range flatten(item.UnionData) {
			if u.Operate == Toleration {
				errs = append(errs, field.Invalid(weightPath, "an item with TOLERATION cannot be preferred: a toleration is not scored"))
				break
			}
		}
	}
	return errs
}

func (u *UnionData) validate(p field.Path) field.ErrorList {
	var errs field.ErrorList
	for k, nested := range u.Nested {
		errs = append(errs, nested.validate(p.Child("unionData").Index(k))...)
	}
	if len(u.Nested) > 0 && u.Operate == "" && u.Name == "" {
		return errs // a pure grouping element
	}
	if u.Operate == "" {
		return append(errs, field.Required(p.Child("operate")))
	}
	if !operators[u.Operate] {
		return append(errs, field.Invalid(p.Child("operate"), "unknown operator %q (want one of %s)", u.Operate, operatorList()))
	}
	if u.Name == "" {
		errs = append(errs, field.Required(p.Child("name")))
	}
	if u.Effect != "" {
		if _, ok := ParseTaintEffect(string(u.Effect)); !ok {
			errs = append(errs, field.Invalid(p.Child("effect"), "unknown effect %q (want NoSchedule, PreferNoSchedule or NoExecute)", u.Effect))
		} else if u.Operate != Toleration {
			errs = append(errs, field.Invalid(p.Child("effect"), "only a TOLERATION has an effect, not %s", u.Operate))
		}
	}
	if secs := u.TolerationSeconds; secs != nil {
		switch {
		case u.Operate != Toleration || u.Effect != "" && u.Effect != NoExecute:
			errs = append(errs, field.Invalid(p.Child("tolerationSeconds"), "only a TOLERATION of NoExecute taints (effect NoExecute or none) has seconds"))
		case *secs < 0:
			errs = append(errs, field.Invalid(p.Child("tolerationSeconds"), "must be 0 or more, got %d", *secs))
		}
	}
	typ, err := u.effectiveType(p)
	if err != nil {
		return append(errs, *err)
	}
	op := u.Operate
	wantType := func(allowed ...ValueType) bool {
		for _, t := range allowed {
			if typ == t {
				return true
			}
		}
		names := make([]string, len(allowed))
		for i, t := range allowed {
			names[i] = t.String()
		}
		errs = append(errs, field.Invalid(p.Child("type"), "%s needs type %s, got %s", op, strings.Join(names, " or "), typ))
		return false
	}
	switch op {
	case Unique:
	case MaxPer:
		if wantType(TypeText) {
			if n, err := strconv.Atoi(strings.TrimSpace(u.Text.Value)); err != nil || n <= 0 {
				errs = append(errs, field.Invalid(p.Child("text").Child("value"), "%s needs a positive integer, got %q", op, u.Text.Value))
			}
		}
	case Cluster:
		if wantType(TypeText, TypeSet) {
			errs = append(errs, u.validateParams(p, typ)...)
		}
	case Like, Unlike:
		if wantType(TypeText, TypeSet) {
			errs = append(errs, u.validateParams(p, typ)...)
			errs = append(errs, u.validatePatterns(p, typ)...)
		}
	case GroupBy:
		if wantType(TypeSet) {
			errs = append(errs, u.validateParams(p, typ)...)
		}
	case Exclude:
		if u.Name != "" && u.Name != LabelName {
			errs = append(errs, field.Invalid(p.Child("name"), "EXCLUDE needs name %q, got %q", LabelName, u.Name))
		}
		if wantType(TypeSet) {
			errs = append(errs, u.validateParams(p, typ)...)
			for k, item := range u.Set.Item {
				if key, _, ok := strings.Cut(item, ":"); !ok || key == "" {
					errs = append(errs, field.Invalid(p.Child("set").Child("item").Index(k), "EXCLUDE needs a key:value label, got %q", item))
				}
			}
		}
	case Greater:
		wantType(TypeScalar)
	case Toleration:
		if typ != TypeUnset && wantType(TypeText, TypeSet) {
			errs = append(errs, u.validateParams(p, typ)...)
		}
	}
	return errs
}

// effectiveType returns the declared type, or the type implied by the one
// parameter given when "type" is absent. A declared type must come with its
// parameter.
func (u *UnionData) effectiveType(p field.Path) (ValueType, *field.Error) {
	given := 0
	implied := TypeUnset
	if u.Scalar != nil {
		given, implied = given+1, TypeScalar
	}
	if u.Text != nil {
		given, implied = given+1, TypeText
	}
	if u.Set != nil {
		given, implied = given+1, TypeSet
	}
	switch u.Type {
	case TypeUnset:
		if given > 1 {
			e := field.Invalid(p.Child("type"), "required when more than one of scalar, text and set is given")
			return 0, &e
		}
		return implied, nil
	case TypeScalar:
		if u.Scalar == nil {
			e := field.Invalid(p.Child("scalar"), "required for type 1")
			return 0, &e
		}
	case TypeText:
		if u.Text == nil {
			e := field.Invalid(p.Child("text"), "required for type 3")
			return 0, &e
		}
	case TypeSet:
		if u.Set == nil {
			e := field.Invalid(p.Child("set"), "required for type 4")
			return 0, &e
		}
	default:
		e := field.Invalid(p.Child("type"), "must be 1 (scalar), 3 (text) or 4 (set), got %d", int(u.Type))
		return 0, &e
	}
	return u.Type, nil
}

func (u *UnionData) validateParams(p field.Path, typ ValueType) field.ErrorList {
	if typ == TypeSet && len(u.Set.Item) == 0 {
		return field.ErrorList{field.Invalid(p.Child("set").Child("item"), "%s needs at least one item", u.Operate)}
	}
	return nil
}

func (u *UnionData) validatePatterns(p field.Path, typ ValueType) field.ErrorList {
	var errs field.ErrorList
	if typ == TypeSet {
		for k, item := range u.Set.Item {
			if _, err := compilePattern(item); err != nil {
				errs = append(errs, field.Invalid(p.Child("set").Child("item").Index(k), "bad regular expression: %v", err))
			}
		}
		return errs
	}
	if _, err := compilePattern(u.Text.Value); err != nil {
		errs = append(errs, field.Invalid(p.Child("text").Child("value"), "bad regular expression: %v", err))
	}
	return errs
}

// compilePattern anchors a LIKE pattern: the whole value must match.
func compilePattern(pattern string) (*regexp.Regexp, error) {
	return regexp.Compile("^(?:" + pattern + ")$")
}

func operatorList() string {
	names := make([]string, 0, len(operators))
	for op := range operators {
		names = append(names, string(op))
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
