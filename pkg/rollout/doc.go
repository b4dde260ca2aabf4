// Package rollout is the update controller of a workload (seed 004
// GameDeployment): given the strategy, the rollout's state and what each
// instance runs, Plan says which instances to move to which revision now,
// how many surge instances to keep, and what the rollout's status is. It
// is pure — no I/O, no clock, no goroutines — so the scheduler core calls
// it after every input and tests drive it with tables and scenarios.
//
// Revisions. A rollout moves instances from the stable revision (what the
// whole fleet last ran: currentRevision) to the update revision (the
// newest version: updateRevision). Instances are compared by their
// template, not their version number, so a change of replicas or
// strategy alone updates nothing.
//
// Targets. An instance with an ID ≥ the effective partition targets the
// update revision, the others the stable one. The effective partition is
// the strategy's partition, or while canary steps run, the latest
// partition step's (no instance before the first one). An aborted rollout
// targets the stable revision everywhere.
//
// Budget. At every instant at least replicas − maxUnavailable instances
// are ready and at most replicas + maxSurge exist: an instance that is
// not ready (crashed, pending) moves to its target for free, a ready one
// only while enough others are ready; surge instances (IDs ≥ replicas)
// are created first (the original's rollingOrder CreateFirst) and removed
// when every instance of the step runs its target and is ready. Highest
// IDs go first.
//
// Canary steps apply to updates from a stable revision: not to a first
// deployment, an aborted rollout or a rollback.
//
// Waits. Canary pause steps wait for promote or a duration, hook steps for
// a verdict (Successful: next step; Failed or Error: abort; Inconclusive:
// pause until promote), upgradeDuration between batches, rollingManually a
// promote after each batch; an operator's pause holds everything new.
//
// Allocated instances (Instance.Held: a game session runs on them) are
// not moved until released, or until Strategy.AllocatedTimeout after the
// rollout began (State.Began); the status names them (Progressing reason
// AllocatedInstancesHeld while nothing else can move), and those the
// deadline let go.
//
// Failures. An instance whose update cannot go on (Instance.UpdateError:
// the executor refused it, its launch cannot take the revision) stalls
// the rollout until an operator acts: the status names the instances and
// their errors, and Progressing is False (InstanceUpdateFailed).
//
// It must not import the scheduler, the registry or anything that does
// I/O; the scheduler core (pkg/scheduler) owns applying the plan.
package rollout
