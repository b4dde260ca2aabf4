package constraint

import "time"

// State is what the operators read beyond the agent itself, for the
// application being placed. The caller keeps it current as it places
// instances, so constraints see the placements made earlier in the same
// pass. Agents and values are those of the Table the constraint is bound to.
type State interface {
	// InstancesWith counts the application's active instances on agents
	// whose value in col is value. Active: the task group is not in a
	// terminal state.
	InstancesWith(col *Column, value int32) int
	// MinInstances returns the fewest active instances on any of values
	// (non-empty; every value exists in col). values is a bound
	// constraint's own slice: callers may cache by its identity until the
	// next instance is placed.
	MinInstances(col *Column, values []int32) int
	// AgentRunsLabel reports whether agent runs an active instance of any
	// application, in any namespace, labelled label ("key:value").
	AgentRunsLabel(agent int, label string) bool
}

// NoClause is the index Fits returns when every clause holds.
const NoClause = -1

// Bound is a Compiled constraint resolved against one Table: every
// condition knows its column and the IDs of its values. Like the table, it
// memoises regular expression matches, so it belongs to one goroutine.
type Bound struct {
	*Compiled
	table     *Table
	clauses   [][]boundCondition
	preferred [][]boundCondition
}

type boundCondition struct {
	*condition
	col     *Column
	allowed map[int32]bool // CLUSTER, GROUPBY: the set's values that exist
	group   []int32        // GROUPBY: the set's values that exist
	matched []int8         // LIKE, UNLIKE: the table's memo of the patterns
}

// Bind resolves c against t.
func (c *Compiled) Bind(t *Table) *Bound {
	b := &Bound{Compiled: c, table: t}
	b.clauses = bindClauses(c.clauses, t)
	b.preferred = bindClauses(c.preferred, t)
	return b
}

func bindClauses(clauses []clause, t *Table) [][]boundCondition {
	bound := make([][]boundCondition, len(clauses))
	for i := range clauses {
		for k := range clauses[i].conds {
			cond := &clauses[i].conds[k]
			bc := boundCondition{condition: cond}
			if cond.op != Exclude {
				bc.col = t.Column(cond.name)
			}
			switch cond.op {
			case Cluster, GroupBy:
				bc.allowed = map[int32]bool{}
				for _, item := range cond.items {
					if id, ok := bc.col.ID(item); ok && !bc.allowed[id] {
						bc.allowed[id] = true
						bc.group = append(bc.group, id)
					}
				}
			case Like, Unlike:
				bc.matched = t.matchMemo(bc.col, cond.items)
			}
			bound[i] = append(bound[i], bc)
		}
	}
	return bound
}

// Fits reports whether agent satisfies every clause, given the placement
// state. When it does not, it returns the index of the first failing clause
// (see Reason). Taints are checked separately by Tolerates.
func (b *Bound) Fits(agent int, s State) (bool, int) {
	for i, conds := range b.clauses {
		if !anyHolds(conds, agent, s) {
			return false, i
		}
	}
	return true, NoClause
}

// Preference returns the sum of the weights of the preferred clauses agent
// meets, given the placement state: the more, the better a place.
func (b *Bound) Preference(agent int, s State) int {
	sum := 0
	for i, conds := range b.preferred {
		if anyHolds(conds, agent, s) {
			sum += b.Compiled.preferred[i].weight
		}
	}
	return sum
}

func anyHolds(conds []boundCondition, agent int, s State) bool {
	for k := range conds {
		if conds[k].holds(agent, s) {
			return true
		}
	}
	return false
}

// Tolerates reports whether agent's NoSchedule and NoExecute taints are all
// tolerated.
func (b *Bound) Tolerates(agent int) bool {
	if !b.table.Tainted(agent) {
		return true
	}
	ok, _ := b.Compiled.Tolerates(b.table.taints[agent])
	return ok
}

// Avoided returns how many of agent's PreferNoSchedule taints are not
// tolerated: the fewer, the better a place.
func (b *Bound) Avoided(agent int) int {
	if b.table.Avoided(agent) == 0 {
		return 0
	}
	n := 0
	for _, taint := range b.table.taints[agent] {
		if !taint.Hard() && !b.Compiled.ToleratesTaint(taint) {
			n++
		}
	}
	return n
}

func (bc *boundCondition) holds(agent int, s State) bool {
	if bc.op == Exclude {
		for _, label := range bc.items {
			if s.AgentRunsLabel(agent, label) {
				return false
			}
		}
		return true
	}
	value := bc.col.Of(agent)
	if value == Missing {
		return bc.op == Unlike // seed 000: a missing attribute never fits, except UNLIKE (and EXCLUDE)
	}
	switch bc.op {
	case Unique:
		return s.InstancesWith(bc.col, value) == 0
	case MaxPer:
		return s.InstancesWith(bc.col, value) < bc.max
	case Cluster:
		return bc.allowed[value]
	case Like:
		return bc.matches(value)
	case Unlike:
		return !bc.matches(value)
	case GroupBy:
		// Only a value whose count is the minimum over the set's existing
		// values may take the instance: 3 instances over 2 IDCs end 2+1.
		return bc.allowed[value] && s.InstancesWith(bc.col, value) <= s.MinInstances(bc.col, bc.group)
	case Greater:
		return bc.col.scalars[value] > bc.scalar // NaN (not a SCALAR) compares false
	}
	return false
}

func (bc *boundCondition) matches(value int32) bool {
	if m := bc.matched[value]; m != 0 {
		return m == 1
	}
	v := bc.col.Value(value)
	result := int8(2)
	for _, re := range bc.patterns {
		if re.MatchString(v) {
			result = 1
			break
		}
	}
	bc.matched[value] = result
	return result == 1
}

// Reason names clause i for rejection counts: "hostname UNIQUE", or the
// conditions of an OR joined by " or ".
func (c *Compiled) Reason(i int) string { return c.clauses[i].reason }

// Permanent reports whether clause i, once failed on an agent, stays failed
// while instances are only added: true unless it contains a GROUPBY, whose
// minimum moves as instances land elsewhere.
func (c *Compiled) Permanent(i int) bool {
	for _, cond := range c.clauses[i].conds {
		if cond.op == GroupBy {
			return false
		}
	}
	return true
}

// Clauses returns the number of clauses (filtering IntersectionItems).
func (c *Compiled) Clauses() int { return len(c.clauses) }

// Tolerates reports whether the constraint's TOLERATION conditions tolerate
// every taint that refuses placements (PreferNoSchedule ones only steer
// them, see Bound.Avoided); when not, it returns the first taint left
// untolerated.
func (c *Compiled) Tolerates(taints []Taint) (bool, Taint) {
	for _, taint := range taints {
		if taint.Hard() && !c.ToleratesTaint(taint) {
			return false, taint
		}
	}
	return true, Taint{}
}

// Eviction says when an instance placed under c must leave an agent
// carrying taints: never (evict false) unless a NoExecute taint is there;
// at the taint's Since when c does not tolerate it; at Since plus the
// shortest tolerationSeconds of the tolerations that match it when any has
// seconds (as Kubernetes' taint manager); with several such taints, at the
// earliest. A nil c tolerates nothing.
func (c *Compiled) Eviction(taints []Taint) (at time.Time, evict bool) {
	for _, taint := range taints {
		if taint.EffectOrDefault() != NoExecute {
			continue
		}
		deadline, leaves := taint.Since, true
		if c != nil {
			deadline, leaves = c.evictionFor(taint)
		}
		if leaves && (!evict || deadline.Before(at)) {
			at, evict = deadline, true
		}
	}
	return at, evict
}

func (c *Compiled) evictionFor(taint Taint) (time.Time, bool) {
	var shortest *time.Duration
	matched := false
	for _, t := range c.tolerations {
		if !t.matches(taint) {
			continue
		}
		matched = true
		if t.seconds != nil && (shortest == nil || *t.seconds < *shortest) {
			shortest = t.seconds
		}
	}
	switch {
	case !matched:
		return taint.Since, true
	case shortest == nil:
		return time.Time{}, false
	}
	return taint.Since.Add(*shortest), true
}

// ToleratesTaint reports whether a TOLERATION condition matches taint: its
// key, its value (a condition without values takes any) and its effect (a
// condition without one takes any).
func (c *Compiled) ToleratesTaint(taint Taint) bool {
	for _, t := range c.tolerations {
		if t.matches(taint) {
			return true
		}
	}
	return false
}

func (t *toleration) matches(taint Taint) bool {
	return t.key == taint.Key && (t.values == nil || t.values[taint.Value]) &&
		(t.effect == "" || t.effect == taint.EffectOrDefault())
}

// CountedNames returns the names whose per-value instance counts the
// constraint's required and preferred clauses read (UNIQUE, MAXPER,
// GROUPBY), so a caller maintains only those.
func (c *Compiled) CountedNames() []string {
	var names []string
	seen := map[string]bool{}
	for _, cl := range append(c.clauses[:len(c.clauses):len(c.clauses)], c.preferred...) {
		for _, cond := range cl.conds {
			switch cond.op {
			case Unique, MaxPer, GroupBy:
				if !seen[cond.name] {
					seen[cond.name] = true
					names = append(names, cond.name)
				}
			}
		}
	}
	return names
}

// ValueFilter is a necessary condition derived from one clause: the agent's
// value for Name must be one of Values. Callers use it to look candidates up
// in an index instead of scanning every agent.
type ValueFilter struct {
	Clause int
	Name   string
	Values []string
}

// ValueFilters returns a filter for every clause made only of CLUSTER and
// GROUPBY conditions on one name.
func (c *Compiled) ValueFilters() []ValueFilter {
	var filters []ValueFilter
	for i, cl := range c.clauses {
		name := cl.conds[0].name
		var values []string
		indexable := true
		for _, cond := range cl.conds {
			if cond.name != name || (cond.op != Cluster && cond.op != GroupBy) {
				indexable = false
				break
			}
			values = append(values, cond.items...)
		}
		if indexable {
			filters = append(filters, ValueFilter{Clause: i, Name: name, Values: values})
		}
	}
	return filters
}
