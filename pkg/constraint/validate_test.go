package constraint_test

import (
	"strings"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/constraint"
	"github.com/bcs-mesos/bcs-mesos/pkg/constraint/constrainttest"
	"github.com/bcs-mesos/bcs-mesos/pkg/field"
)

func TestValidate(t *testing.T) {
	text := func(v string) *constraint.TextValue { return &constraint.TextValue{Value: v} }
	set := func(items ...string) *constraint.SetValue { return &constraint.SetValue{Item: items} }
	cases := []struct {
		name string
		cond constraint.UnionData
		want string // "" = valid; else the one expected error
	}{
		{"UNIQUE needs no parameter", constraint.UnionData{Name: "hostname", Operate: constraint.Unique}, ""},
		{"unknown operator", constraint.UnionData{Name: "hostname", Operate: "NEAR"},
			`constraint.intersectionItem[1].unionData[0].operate: unknown operator "NEAR"`},
		{"missing operator", constraint.UnionData{Name: "hostname"},
			`constraint.intersectionItem[1].unionData[0].operate: required`},
		{"missing name", constraint.UnionData{Operate: constraint.Unique},
			`constraint.intersectionItem[1].unionData[0].name: required`},
		{"MAXPER without a positive integer", constraint.UnionData{Name: "idc", Operate: constraint.MaxPer, Type: constraint.TypeText, Text: text("zero")},
			`constraint.intersectionItem[1].unionData[0].text.value: MAXPER needs a positive integer, got "zero"`},
		{"MAXPER 0", constraint.UnionData{Name: "idc", Operate: constraint.MaxPer, Type: constraint.TypeText, Text: text("0")},
			`text.value: MAXPER needs a positive integer`},
		{"MAXPER with a set has the wrong type", constraint.UnionData{Name: "idc", Operate: constraint.MaxPer, Type: constraint.TypeSet, Set: set("5")},
			`constraint.intersectionItem[1].unionData[0].type: MAXPER needs type 3 (text), got 4 (set)`},
		{"GROUPBY without a set", constraint.UnionData{Name: "idc", Operate: constraint.GroupBy, Type: constraint.TypeSet},
			`constraint.intersectionItem[1].unionData[0].set: required for type 4`},
		{"GROUPBY with an empty set", constraint.UnionData{Name: "idc", Operate: constraint.GroupBy, Type: constraint.TypeSet, Set: set()},
			`unionData[0].set.item: GROUPBY needs at least one item`},
		{"GROUPBY with text has the wrong type", constraint.UnionData{Name: "idc", Operate: constraint.GroupBy, Type: constraint.TypeText, Text: text("sz")},
			`type: GROUPBY needs type 4 (set), got 3 (text)`},
		{"CLUSTER with a set but no items", constraint.UnionData{Name: "idc", Operate: constraint.Cluster, Type: constraint.TypeSet, Set: set()},
			`set.item: CLUSTER needs at least one item`},
		{"CLUSTER type 4 without a set", constraint.UnionData{Name: "idc", Operate: constraint.Cluster, Type: constraint.TypeSet, Text: text("x")},
			`unionData[0].set: required for type 4`},
		{"CLUSTER with type implied by the set", constraint.UnionData{Name: "idc", Operate: constraint.Cluster, Set: set("sz")}, ""},
		{"bad regex in LIKE text", constraint.UnionData{Name: "hostname", Operate: constraint.Like, Type: constraint.TypeText, Text: text("slave[")},
			`constraint.intersectionItem[1].unionData[0].text.value: bad regular expression`},
		{"bad regex in UNLIKE set item 1", constraint.UnionData{Name: "hostname", Operate: constraint.Unlike, Type: constraint.TypeSet, Set: set("ok", "(")},
			`unionData[0].set.item[1]: bad regular expression`},
		// LIKE patterns are Go's RE2 syntax: no backreferences or
		// lookaround, bounded repeats and nesting, matched in linear time.
		{"a backreference is not RE2", constraint.UnionData{Name: "hostname", Operate: constraint.Like, Type: constraint.TypeText, Text: text(`(a)\1`)},
			"text.value: bad regular expression: error parsing regexp: invalid escape sequence: `\\1`"},
		{"lookahead is not RE2", constraint.UnionData{Name: "hostname", Operate: constraint.Like, Type: constraint.TypeText, Text: text(`(?=a)b`)},
			"text.value: bad regular expression: error parsing regexp: invalid or unsupported Perl syntax: `(?=`"},
		{"a repeat that multiplies past 1000", constraint.UnionData{Name: "hostname", Operate: constraint.Like, Type: constraint.TypeText, Text: text(`((a{100}){100}){100}`)},
			"text.value: bad regular expression: error parsing regexp: invalid repeat count"},
		{"nesting too deep", constraint.UnionData{Name: "hostname", Operate: constraint.Like, Type: constraint.TypeText, Text: text(strings.Repeat("(", 2000) + strings.Repeat(")", 2000))},
			"text.value: bad regular expression: error parsing regexp: expression nests too deeply"},
		{"EXCLUDE name must be label", constraint.UnionData{Name: "app", Operate: constraint.Exclude, Type: constraint.TypeSet, Set: set("a:b")},
			`unionData[0].name: EXCLUDE needs name "label", got "app"`},
		{"EXCLUDE item must be key:value", constraint.UnionData{Name: "label", Operate: constraint.Exclude, Type: constraint.TypeSet, Set: set("a:b", "nocolon")},
			`unionData[0].set.item[1]: EXCLUDE needs a key:value label, got "nocolon"`},
		{"GREATER needs a scalar", constraint.UnionData{Name: "cpu", Operate: constraint.Greater, Type: constraint.TypeText, Text: text("3")},
			`type: GREATER needs type 1 (scalar), got 3 (text)`},
		{"unknown type", constraint.UnionData{Name: "cpu", Operate: constraint.Cluster, Type: 2},
			`unionData[0].type: must be 1 (scalar), 3 (text) or 4 (set), got 2`},
		{"ambiguous parameters without a type", constraint.UnionData{Name: "idc", Operate: constraint.Cluster, Text: text("a"), Set: set("b")},
			`unionData[0].type: required when more than one`},
		{"TOLERATION without a value", constraint.UnionData{Name: "maintenance", Operate: constraint.Toleration}, ""},
		{"TOLERATION of one effect", constraint.UnionData{Name: "spot", Operate: constraint.Toleration, Effect: constraint.PreferNoSchedule}, ""},
		{"TOLERATION of an unknown effect", constraint.UnionData{Name: "spot", Operate: constraint.Toleration, Effect: "Evict"},
			`unionData[0].effect: unknown effect "Evict" (want NoSchedule, PreferNoSchedule or NoExecute)`},
		{"NoExecute toleration seconds", constrainttest.TolerateFor("kernel", "old", 60), ""},
		{"negative toleration seconds", constrainttest.TolerateFor("kernel", "old", -1),
			`unionData[0].tolerationSeconds: must be 0 or more, got -1`},
		{"seconds on a NoSchedule toleration", func() constraint.UnionData {
			u := constrainttest.TolerateFor("kernel", "old", 60)
			u.Effect = constraint.NoSchedule
			return u
		}(), `unionData[0].tolerationSeconds: only a TOLERATION of NoExecute taints (effect NoExecute or none) has seconds`},
		{"an effect on another operator", constraint.UnionData{Name: "hostname", Operate: constraint.Unique, Effect: constraint.NoSchedule},
			`unionData[0].effect: only a TOLERATION has an effect, not UNIQUE`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := constrainttest.New().Unique("hostname").Or(tc.cond).Constraint()
			errs := c.Validate(field.Path("constraint"))
			if tc.want == "" {
				if len(errs) != 0 {
					t.Fatalf("want valid, got %v", errs)
				}
				if _, err := constraint.Compile(c); err != nil {
					t.Fatalf("valid constraint does not compile: %v", err)
				}
				return
			}
			if len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.want) {
				t.Fatalf("errors = %v, want one containing %q", errs, tc.want)
			}
			if _, err := constraint.Compile(c); err == nil {
				t.Fatal("invalid constraint compiled")
			}
		})
	}
}

func TestValidateEmptyItemAndAllErrors(t *testing.T) {
	c := &constraint.Constraint{IntersectionItems: []constraint.IntersectionItem{
		{},
		{UnionData: []constraint.UnionData{{Name: "idc", Operate: "BAD"}, {Name: "idc", Operate: constraint.MaxPer}}},
	}}
	errs := c.Validate(field.Path("constraint"))
	want := []string{
		"constraint.intersectionItem[0].unionData: must hold at least one condition",
		`constraint.intersectionItem[1].unionData[0].operate: unknown operator "BAD"`,
		"constraint.intersectionItem[1].unionData[1].type: MAXPER needs type 3 (text), got 0",
	}
	if len(errs) != len(want) {
		t.Fatalf("errors = %v, want %d", errs, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(errs[i].Error(), w) {
			t.Errorf("error %d = %q, want prefix %q", i, errs[i], w)
		}
	}
}

// A weighted item is preferred (Kubernetes' preferredDuringScheduling):
// 1 to 100, and never of tolerations, which are not scored.
func TestValidatePreferredWeight(t *testing.T) {
	cases := []struct {
		name   string
		weight int
		cond   constraint.UnionData
		want   string // "" = valid
	}{
		{"weight 1", 1, constrainttest.Cluster("idc", "sz"), ""},
		{"weight 100", 100, constrainttest.Unique("hostname"), ""},
		{"weight 101", 101, constrainttest.Cluster("idc", "sz"), "constraint.intersectionItem[0].weight: must be 1 to 100 (a preferred item), or absent (a required one), got 101"},
		{"negative weight", -1, constrainttest.Cluster("idc", "sz"), "constraint.intersectionItem[0].weight: must be 1 to 100"},
		{"a preferred toleration", 10, constrainttest.Tolerate("spot", "true"), "constraint.intersectionItem[0].weight: an item with TOLERATION cannot be preferred"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := constrainttest.New().Prefer(tc.weight, tc.cond).Constraint()
			errs := c.Validate(field.Path("constraint"))
			if tc.want == "" {
				if len(errs) != 0 {
					t.Fatalf("want valid, got %v", errs)
				}
				return
			}
			if len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), tc.want) {
				t.Fatalf("errors = %v, want one starting %q", errs, tc.want)
			}
		})
	}
}
