package constraint

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/field"
)

// Compiled is a validated constraint prepared for evaluation: regular
// expressions compiled, sets hashed, MAXPER limits parsed, TOLERATION
// conditions separated from the filters, preferred items from the
// required ones. It is immutable and safe for concurrent use.
type Compiled struct {
	clauses     []clause // required
	preferred   []clause // scored by their weight
	tolerations []toleration
}

// clause is one IntersectionItem: it holds when any of its conditions does.
type clause struct {
	conds  []condition
	reason string
	weight int // a preferred clause's
}

type condition struct {
	op       Operator
	name     string
	values   map[string]bool // CLUSTER, GROUPBY: allowed values; EXCLUDE: labels
	items    []string        // the parameters in manifest order
	patterns []*regexp.Regexp
	max      int
	scalar   float64
}

type toleration struct {
	key    string
	values map[string]bool // nil: any value of key
	effect TaintEffect     // "": every effect
	// seconds bounds the stay on an agent with a NoExecute taint; nil: for
	// good.
	seconds *time.Duration
}

// Compile validates c and prepares it for evaluation. The error is a
// field.ErrorList rooted at "constraint".
func Compile(c *Constraint) (*Compiled, error) {
	if errs := c.Validate(field.Path("constraint")); len(errs) > 0 {
		return nil, errs
	}
	compiled := &Compiled{}
	for _, item := range c.IntersectionItems {
		cl := clause{weight: item.Weight}
		for _, u := range flatten(item.UnionData) {
			if u.Operate == Toleration {
				compiled.tolerations = append(compiled.tolerations, compileToleration(u))
				continue
			}
			cl.conds = append(cl.conds, compileCondition(u))
		}
		if len(cl.conds) == 0 {
			continue // an item of tolerations only filters nothing
		}
		names := make([]string, len(cl.conds))
		for i, cond := range cl.conds {
			names[i] = cond.name + " " + string(cond.op)
		}
		cl.reason = strings.Join(names, " or ")
		if cl.weight > 0 {
			compiled.preferred = append(compiled.preferred, cl)
		} else {
			compiled.clauses = append(compiled.clauses, cl)
		}
	}
	return compiled, nil
}

// MustCompile is Compile for constraints known to be valid (tests, fixtures).
func MustCompile(c *Constraint) *Compiled {
	compiled, err := Compile(c)
	if err != nil {
		panic(err)
	}
	return compiled
}

// flatten lifts nested unionData lists into the enclosing OR list.
func flatten(list []UnionData) []UnionData {
	var out []UnionData
	for _, u := range list {
		if u.Operate != "" {
			out = append(out, u)
		}
		out = append(out, flatten(u.Nested)...)
	}
	return out
}

func compileCondition(u UnionData) condition {
	typ, _ := u.effectiveType("")
	cond := condition{op: u.Operate, name: u.Name, items: u.params(typ)}
	switch u.Operate {
	case MaxPer:
		cond.max, _ = strconv.Atoi(strings.TrimSpace(u.Text.Value))
	case Cluster, GroupBy, Exclude:
		cond.values = make(map[string]bool, len(cond.items))
		for _, item := range cond.items {
			cond.values[item] = true
		}
	case Like, Unlike:
		for _, item := range cond.items {
			re, _ := compilePattern(item)
			cond.patterns = append(cond.patterns, re)
		}
	case Greater:
		cond.scalar = u.Scalar.Value
	}
	return cond
}

func compileToleration(u UnionData) toleration {
	typ, _ := u.effectiveType("")
	t := toleration{key: u.Name, effect: u.Effect}
	if u.TolerationSeconds != nil {
		d := time.Duration(*u.TolerationSeconds) * time.Second
		t.seconds = &d
	}
	if items := u.params(typ); items != nil {
		t.values = make(map[string]bool, len(items))
		for _, item := range items {
			t.values[item] = true
		}
	}
	return t
}
