package constrainttest

import (
	"strconv"

	"github.com/bcs-mesos/bcs-mesos/pkg/constraint"
)

// Builder accumulates intersection items; each method adds one item holding
// one condition, Or adds one item holding several.
type Builder struct{ c constraint.Constraint }

// New starts an empty constraint.
func New() *Builder { return &Builder{} }

// Unique adds `name UNIQUE`.
func (b *Builder) Unique(name string) *Builder { return b.Or(Unique(name)) }

// MaxPer adds `name MAXPER n`.
func (b *Builder) MaxPer(name string, n int) *Builder { return b.Or(MaxPer(name, n)) }

// Cluster adds `name CLUSTER {values}`.
func (b *Builder) Cluster(name string, values ...string) *Builder {
	return b.Or(Cluster(name, values...))
}

// Like adds `name LIKE {patterns}`.
func (b *Builder) Like(name string, patterns ...string) *Builder {
	return b.Or(Like(name, patterns...))
}

// Unlike adds `name UNLIKE {patterns}`.
func (b *Builder) Unlike(name string, patterns ...string) *Builder {
	return b.Or(Unlike(name, patterns...))
}

// GroupBy adds `name GROUPBY {values}`.
func (b *Builder) GroupBy(name string, values ...string) *Builder {
	return b.Or(GroupBy(name, values...))
}

// Exclude adds `label EXCLUDE {labels}`.
func (b *Builder) Exclude(labels ...string) *Builder { return b.Or(Exclude(labels...)) }

// Greater adds `name GREATER v`.
func (b *Builder) Greater(name string, v float64) *Builder { return b.Or(Greater(name, v)) }

// Tolerate adds `key TOLERATION value`.
func (b *Builder) Tolerate(key, value string) *Builder { return b.Or(Tolerate(key, value)) }

// Prefer adds one preferred intersection item of the given weight.
func (b *Builder) Prefer(weight int, conds ...constraint.UnionData) *Builder {
	b.c.IntersectionItems = append(b.c.IntersectionItems, constraint.IntersectionItem{UnionData: conds, Weight: weight})
	return b
}

// Or adds one intersection item that holds when any condition does.
func (b *Builder) Or(conds ...constraint.UnionData) *Builder {
	b.c.IntersectionItems = append(b.c.IntersectionItems, constraint.IntersectionItem{UnionData: conds})
	return b
}

// Constraint returns the built constraint.
func (b *Builder) Constraint() *constraint.Constraint {
	c := b.c
	return &c
}

// Build compiles the constraint; it panics on an invalid one.
func (b *Builder) Build() *constraint.Compiled { return constraint.MustCompile(b.Constraint()) }

// Unique is the condition `name UNIQUE`.
func Unique(name string) constraint.UnionData {
	return constraint.UnionData{Name: name, Operate: constraint.Unique}
}

// MaxPer is the condition `name MAXPER n`.
func MaxPer(name string, n int) constraint.UnionData {
	return text(name, constraint.MaxPer, strconv.Itoa(n))
}

// Cluster is `name CLUSTER` with one text value or a set of values.
func Cluster(name string, values ...string) constraint.UnionData {
	return textOrSet(name, constraint.Cluster, values)
}

// Like is `name LIKE` with one pattern (text) or several (set).
func Like(name string, patterns ...string) constraint.UnionData {
	return textOrSet(name, constraint.Like, patterns)
}

// Unlike is `name UNLIKE` with one pattern (text) or several (set).
func Unlike(name string, patterns ...string) constraint.UnionData {
	return textOrSet(name, constraint.Unlike, patterns)
}

// GroupBy is `name GROUPBY {values}`.
func GroupBy(name string, values ...string) constraint.UnionData {
	return set(name, constraint.GroupBy, values)
}

// Exclude is `label EXCLUDE {labels}`, each label "key:value".
func Exclude(labels ...string) constraint.UnionData {
	return set(constraint.LabelName, constraint.Exclude, labels)
}

// Greater is `name GREATER v`.
func Greater(name string, v float64) constraint.UnionData {
	return constraint.UnionData{Name: name, Operate: constraint.Greater, Type: constraint.TypeScalar,
		Scalar: &constraint.ScalarValue{Value: v}}
}

// Tolerate is `key TOLERATION value`.
func Tolerate(key, value string) constraint.UnionData {
	return text(key, constraint.Toleration, value)
}

// TolerateEffect is `key TOLERATION value` of taints of one effect only.
func TolerateEffect(key, value string, effect constraint.TaintEffect) constraint.UnionData {
	u := Tolerate(key, value)
	u.Effect = effect
	return u
}

// TolerateFor is `key TOLERATION value` of NoExecute taints for seconds.
func TolerateFor(key, value string, seconds int64) constraint.UnionData {
	u := TolerateEffect(key, value, constraint.NoExecute)
	u.TolerationSeconds = &seconds
	return u
}

func text(name string, op constraint.Operator, value string) constraint.UnionData {
	return constraint.UnionData{Name: name, Operate: op, Type: constraint.TypeText,
		Text: &constraint.TextValue{Value: value}}
}

func set(name string, op constraint.Operator, items []string) constraint.UnionData {
	return constraint.UnionData{Name: name, Operate: op, Type: constraint.TypeSet,
		Set: &constraint.SetValue{Item: items}}
}

func textOrSet(name string, op constraint.Operator, values []string) constraint.UnionData {
	if len(values) == 1 {
		return text(name, op, values[0])
	}
	return set(name, op, values)
}
