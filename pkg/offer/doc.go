// Package offer is the placement engine of bcs-scheduler: given a snapshot of
// the cluster (agents with their outstanding Mesos offers, attributes and
// taints, and the active instances of every application) and the pending
// task groups, it decides which offer launches which task group with which
// host ports, which offers to decline, and — for every task group it could
// not place — how many agents were rejected for each reason.
//
// The engine is pure: no goroutines, no I/O, no Mesos client, no storage.
// Time (now) and randomness (a seed) are inputs, so a plan is a function of
// its inputs and tests and benchmarks are deterministic.
//
// How a placement is chosen. Candidates for an application are all agents
// holding offers, in one seeded random order, or — when a constraint clause
// admits only some values of one attribute (CLUSTER, GROUPBY) — the agents
// looked up for those values in an index. Each placement walks the
// candidates from where the application's previous placement stopped,
// checks each one (resources, host ports, taints, then the constraint
// clauses in manifest order), and among the first Limit that fit picks the
// best by soft rules, scores and never refusals (seed 002, deployd's soft
// constraints): the fewest untolerated PreferNoSchedule taints, then the
// most weight of preferred constraint items met, then the fewest instances
// of the application — spreading them across agents is the default
// preference — then the least loaded (cpu and memory share after placing;
// ties broken by the seeded order). With Limit at least the number of
// agents this is exactly the best of all that fit; on large clusters it is
// the classic power-of-choices sampling, which keeps the cost of a
// placement independent of the cluster size. A task group that prefers an agent (TaskGroup.Prefer:
// a started instance's last agent) takes it first when it fits there,
// without a look at the others. Placements made earlier in the same pass
// are visible to later checks: resources, ports, per-value instance counts
// (UNIQUE, MAXPER, GROUPBY) and the label index EXCLUDE reads.
//
// Explain is Place that also counts, for each application version it
// places, the agents it fits: given every agent with what it has free
// (offer in hand or not), it says why a task group still waits.
//
// It is pure and starts no goroutines: it must not import Mesos, HTTP or
// storage packages, nor any bcs-mesos package but constraint and errdefs.
package offer
