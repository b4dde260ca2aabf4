package constraint

import (
	"math"
	"strings"
)

// Table interns, for a fixed list of agents, the values every constraint
// name has on them: a Column per name maps each agent to a small integer
// value ID. Placement reads many agents many times per pass; comparing and
// counting IDs in flat slices is what keeps a check cheap on large clusters.
//
// Agents are addressed by their index in the list. Columns are built on
// first use. A Table is not safe for concurrent use.
type Table struct {
	agents []*Agent
	taints [][]Taint // by agent, beside the columns: checked on every visit
	// hard and soft count each agent's taints that refuse placements
	// (NoSchedule, NoExecute) and those that only steer them away
	// (PreferNoSchedule).
	hard, soft []int32
	columns    map[string]*Column
	// matches memoises LIKE/UNLIKE patterns per value ID, shared by every
	// constraint bound to the table: a pattern is tried once per value per
	// pass, however many applications use it.
	matches map[string][]int8
}

// NewTable returns a table over agents, with no columns built yet.
func NewTable(agents []*Agent) *Table {
	t := &Table{agents: agents, taints: make([][]Taint, len(agents)), columns: map[string]*Column{},
		matches: map[string][]int8{}, hard: make([]int32, len(agents)), soft: make([]int32, len(agents))}
	for i, a := range agents {
		t.taints[i] = a.Taints
		for _, taint := range a.Taints {
			if taint.Hard() {
				t.hard[i]++
			} else {
				t.soft[i]++
			}
		}
	}
	return t
}

// Tainted reports whether agent i carries a taint that refuses placements
// (NoSchedule or NoExecute).
func (t *Table) Tainted(i int) bool { return t.hard[i] > 0 }

// Avoided returns how many PreferNoSchedule taints agent i carries: what
// an instance tolerating none of them holds against the agent.
func (t *Table) Avoided(i int) int { return int(t.soft[i]) }

// Column returns the interned values of name (an attribute or "hostname").
func (t *Table) Column(name string) *Column {
	if col, ok := t.columns[name]; ok {
		return col
	}
	col := &Column{name: name, ids: map[string]int32{}, byAgent: make([]int32, len(t.agents))}
	for i, a := range t.agents {
		v, ok := a.Lookup(name)
		if !ok {
			col.byAgent[i] = Missing
			continue
		}
		id, seen := col.ids[v]
		if !seen {
			id = int32(len(col.values))
			col.ids[v] = id
			col.values = append(col.values, v)
			scalar := math.NaN()
			if attr, ok := a.Attributes[name]; ok && name != HostnameName && attr.Type == AttrScalar {
				scalar = attr.Scalar
			}
			col.scalars = append(col.scalars, scalar)
		}
		col.byAgent[i] = id
	}
	t.columns[name] = col
	return col
}

// Missing is the value ID of an agent that lacks the column's attribute.
const Missing int32 = -1

// Column is one name's values across a Table's agents.
type Column struct {
	name     string
	values   []string // value ID → value
	scalars  []float64
	ids      map[string]int32
	byAgent  []int32   // agent → value ID or Missing
	postings [][]int32 // value ID → agents, ascending; built on first use
}

// Name returns the constraint name the column holds.
func (c *Column) Name() string { return c.name }

// Len returns the number of distinct values.
func (c *Column) Len() int { return len(c.values) }

// Value returns the value with ID id.
func (c *Column) Value(id int32) string { return c.values[id] }

// ID returns the ID of value; ok is false when no agent has it.
func (c *Column) ID(value string) (int32, bool) {
	id, ok := c.ids[value]
	return id, ok
}

// Of returns agent i's value ID, or Missing.
func (c *Column) Of(i int) int32 { return c.byAgent[i] }

// AgentsWith returns the agents whose value is id, in ascending order. The
// slice belongs to the column.
func (c *Column) AgentsWith(id int32) []int32 {
	if c.postings == nil {
		c.postings = make([][]int32, len(c.values))
		for i, v := range c.byAgent {
			if v != Missing {
				c.postings[v] = append(c.postings[v], int32(i))
			}
		}
	}
	return c.postings[id]
}

// matchMemo returns the shared memo of the patterns items on col: per value
// ID, 0 not tried yet, 1 some pattern matches, 2 none does.
func (t *Table) matchMemo(col *Column, items []string) []int8 {
	key := col.name + "\x00" + strings.Join(items, "\x00")
	memo, ok := t.matches[key]
	if !ok {
		memo = make([]int8, col.Len())
		t.matches[key] = memo
	}
	return memo
}
