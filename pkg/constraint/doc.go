// Package constraint owns the placement constraints of a bcs manifest
// (seed 000, "constraint"): their data model, their validation with field
// paths, and the exact semantics of every operator.
//
// A Constraint is an AND over IntersectionItems; each item is an OR over its
// UnionData. An item with a Weight is preferred instead: it never filters,
// Bound.Preference sums the weights of those an agent meets. An agent's
// taints have an effect: NoSchedule and NoExecute ones refuse an instance
// that does not tolerate them (Tolerates), PreferNoSchedule ones only
// count against the agent (Bound.Avoided). Operators: UNIQUE, MAXPER, CLUSTER, LIKE, UNLIKE, GROUPBY,
// EXCLUDE, GREATER and TOLERATION. "hostname" names the agent's hostname;
// every other name is a Mesos agent attribute (TEXT, SCALAR, SET or RANGES).
//
// Compile turns a validated Constraint into a Compiled one that evaluates an
// Agent against a State: the placement facts (active-instance counts, labels
// running on agents) that the caller maintains. The package is pure and
// starts no goroutines: it must not import Mesos, HTTP or storage packages,
// nor any bcs-mesos package but field and errdefs.
package constraint
