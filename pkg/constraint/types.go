package constraint

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Operator names a constraint operator. Manifests may spell it in any case;
// UnmarshalJSON stores it upper-cased (seed 000's own example writes "ClUSTER").
type Operator string

// The operators of seed 000 plus TOLERATION from the application reference.
const (
	Unique     Operator = "UNIQUE"
	MaxPer     Operator = "MAXPER"
	Cluster    Operator = "CLUSTER"
	Like       Operator = "LIKE"
	Unlike     Operator = "UNLIKE"
	GroupBy    Operator = "GROUPBY"
	Exclude    Operator = "EXCLUDE"
	Greater    Operator = "GREATER"
	Toleration Operator = "TOLERATION"
)

var operators = map[Operator]bool{
	Unique: true, MaxPer: true, Cluster: true, Like: true, Unlike: true,
	GroupBy: true, Exclude: true, Greater: true, Toleration: true,
}

// UnmarshalJSON upper-cases the operator so "ClUSTER" reads as CLUSTER.
func (o *Operator) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	*o = Operator(strings.ToUpper(strings.TrimSpace(s)))
	return nil
}

// ValueType is the manifest's "type" of a UnionData parameter.
type ValueType int

// Seed 000: "1: scaler: float64 3:text 4:set". 0 means "not given".
const (
	TypeUnset  ValueType = 0
	TypeScalar ValueType = 1
	TypeText   ValueType = 3
	TypeSet    ValueType = 4
)

func (t ValueType) String() string {
	switch t {
	case TypeScalar:
		return "1 (scalar)"
	case TypeText:
		return "3 (text)"
	case TypeSet:
		return "4 (set)"
	}
	return strconv.Itoa(int(t))
}

// LabelName is the only name EXCLUDE accepts.
const LabelName = "label"

// HostnameName resolves to the agent's hostname, not to an attribute.
const HostnameName = "hostname"

// Constraint is the manifest's "constraint": an AND over its items.
type Constraint struct {
	IntersectionItems []IntersectionItem `json:"intersectionItem,omitempty" alias:"IntersectionItem"`
}

// IntersectionItem is an OR over its UnionData. With a Weight it is
// preferred, not required: placement favours the agents where it holds, by
// the sum of the weights of the preferred items met, and never refuses one
// where it does not.
type IntersectionItem struct {
	UnionData []UnionData `json:"unionData,omitempty" alias:"UnionData"`
	// Weight, 1 to 100, makes the item preferred; 0 (absent) required.
	Weight int `json:"weight,omitempty"`
}

// MaxWeight is the largest weight of a preferred item.
const MaxWeight = 100

// UnionData is one condition.
//
// Nested holds a "unionData" list found inside a UnionData element, a shape
// the process reference file contains. Structurally it sits in an OR list,
// so its conditions join the enclosing OR (see Flatten).
type UnionData struct {
	Name    string       `json:"name,omitempty"`
	Operate Operator     `json:"operate,omitempty"`
	Type    ValueType    `json:"type,omitempty"`
	Scalar  *ScalarValue `json:"scalar,omitempty"`
	Text    *TextValue   `json:"text,omitempty"`
	Set     *SetValue    `json:"set,omitempty"`
	Nested  []UnionData  `json:"unionData,omitempty" alias:"UnionData"`
	// Effect, for TOLERATION only, limits the toleration to taints of that
	// effect; empty tolerates every effect (as Kubernetes' tolerations).
	Effect TaintEffect `json:"effect,omitempty"`
	// TolerationSeconds, for a TOLERATION of NoExecute taints (Effect
	// NoExecute or empty), is how long a running instance stays on an agent
	// after the taint was set; nil stays for good.
	TolerationSeconds *int64 `json:"tolerationSeconds,omitempty"`
}

// ScalarValue is the parameter of type 1.
type ScalarValue struct {
	Value float64 `json:"value"`
}

// TextValue is the parameter of type 3.
type TextValue struct {
	Value string `json:"value"`
}

// SetValue is the parameter of type 4.
type SetValue struct {
	Item []string `json:"item"`
}

// String renders the condition as reasons name it: "hostname UNIQUE".
func (u UnionData) String() string { return u.Name + " " + string(u.Operate) }

// params returns the parameters of a condition of type typ as strings:
// text.value or the set items.
func (u UnionData) params(typ ValueType) []string {
	switch typ {
	case TypeSet:
		return u.Set.Item
	case TypeText:
		return []string{u.Text.Value}
	}
	return nil
}

// AttributeType is the Mesos Value.Type of an agent attribute.
type AttributeType int

// Mesos attribute types.
const (
	AttrText AttributeType = iota
	AttrScalar
	AttrSet
	AttrRanges
)

// Range is an inclusive [Begin, End] range of a RANGES attribute.
type Range struct{ Begin, End uint64 }

// Value is an agent attribute as Mesos reports it.
type Value struct {
	Type   AttributeType
	Text   string
	Scalar float64
	Set    []string
	Ranges []Range
}

// Text returns a TEXT attribute value.
func Text(s string) Value { return Value{Type: AttrText, Text: s} }

// Scalar returns a SCALAR attribute value.
func Scalar(f float64) Value { return Value{Type: AttrScalar, Scalar: f} }

// Set returns a SET attribute value.
func Set(items ...string) Value { return Value{Type: AttrSet, Set: items} }

// Ranges returns a RANGES attribute value.
func Ranges(r ...Range) Value { return Value{Type: AttrRanges, Ranges: r} }

// String is the canonical form every operator compares: the text; the
// scalar in shortest decimal form; the set items sorted and comma-joined
// inside braces; the ranges as "[b-e,b-e]". Mesos prints attributes the
// same way, so a manifest written against `mesos-agent --attributes` reads
// naturally.
func (v Value) String() string {
	switch v.Type {
	case AttrScalar:
		return strconv.FormatFloat(v.Scalar, 'f', -1, 64)
	case AttrSet:
		items := append([]string(nil), v.Set...)
		sort.Strings(items)
		return "{" + strings.Join(items, ",") + "}"
	case AttrRanges:
		parts := make([]string, len(v.Ranges))
		for i, r := range v.Ranges {
			parts[i] = fmt.Sprintf("%d-%d", r.Begin, r.End)
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	return v.Text
}

// TaintEffect says what an untolerated taint does to an instance.
type TaintEffect string

// The taint effects, as Kubernetes names them.
const (
	// NoSchedule: no new instance is placed on the agent.
	NoSchedule TaintEffect = "NoSchedule"
	// PreferNoSchedule: placement avoids the agent when another fits (a
	// score, never a refusal).
	PreferNoSchedule TaintEffect = "PreferNoSchedule"
	// NoExecute: NoSchedule, and a running instance is moved off the agent,
	// at once or after its toleration's seconds.
	NoExecute TaintEffect = "NoExecute"
)

// ParseTaintEffect checks an effect's name.
func ParseTaintEffect(s string) (TaintEffect, bool) {
	switch e := TaintEffect(s); e {
	case NoSchedule, PreferNoSchedule, NoExecute:
		return e, true
	}
	return "", false
}

// Taint marks an agent (agent maintenance): instances land on it only when
// they tolerate every NoSchedule and NoExecute taint it carries.
type Taint struct {
	Key   string
	Value string
	// Effect is NoSchedule when empty (taints stored before effects).
	Effect TaintEffect `json:",omitempty"`
	// Since is when a NoExecute taint was set: tolerationSeconds count
	// from then.
	Since time.Time `json:",omitzero"`
}

// EffectOrDefault returns the taint's effect, NoSchedule when unset.
func (t Taint) EffectOrDefault() TaintEffect {
	if t.Effect == "" {
		return NoSchedule
	}
	return t.Effect
}

// Hard reports whether the taint refuses placements (NoSchedule, NoExecute).
func (t Taint) Hard() bool { return t.EffectOrDefault() != PreferNoSchedule }

func (t Taint) String() string { return t.Key + "=" + t.Value + ":" + string(t.EffectOrDefault()) }

// Agent is what constraints read about a Mesos agent.
type Agent struct {
	ID         string
	Hostname   string
	Attributes map[string]Value
	Taints     []Taint
}

// Lookup returns the value constraint name `name` sees on the agent.
func (a *Agent) Lookup(name string) (string, bool) {
	if name == HostnameName {
		return a.Hostname, a.Hostname != ""
	}
	v, ok := a.Attributes[name]
	if !ok {
		return "", false
	}
	return v.String(), true
}
