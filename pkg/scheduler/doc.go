// Package scheduler is the heart of bcs-scheduler: a deterministic state
// machine (Core) that turns stored applications into running Mesos task
// groups and keeps them there, and the Driver that connects it to a Mesos
// master and the store.
//
// Core.Step takes one input — a Mesos event (SUBSCRIBED, OFFERS, RESCIND,
// UPDATE, MESSAGE, FAILURE), a change of an application record, an
// operator request, or a clock tick — with the current time, and returns
// an Output: records to persist and Mesos calls to send, in that order.
// The Driver persists the records before it sends the calls, so a status
// update is acknowledged only once its state is stored. Core does no I/O,
// starts no goroutines and reads no clock: tests drive it with scripts.
//
// For a large fleet the Driver hands the core in one step the
// status updates that queued while it was busy (StatusUpdates), then in
// one more the offers that queued with them (OffersIn), stores a
// step's records in a few etcd transactions and sends its calls from an
// output goroutine while the loop runs the next step (always in step
// order, records before calls; the outputs queued meanwhile stored
// together), acknowledgements and accepts 16 at a time; the core launches
// at most Config.MaxLaunching instances at once, less while the driver's
// adaptive budget (budget.go) sees acknowledgements slow, so that status
// updates never come faster than they are stored.
//
// Lifecycle of an instance (one task group), see phase.go:
//
//	Pending ─launch─▶ Launched ─all tasks running─▶ Running
//	   ▲                 │                              │
//	   └── restartPolicy ◀── group terminal ◀───────────┘
//	                     └──▶ Failed / Finished (no restart)
//	any live phase ─kill (scale-down, delete, reschedule)─▶ Killing ─▶ gone
//	any phase ─stop─▶ (Killing ─▶) Stopped ─start─▶ Pending
//
// Stop and start (operate.go; seed 002's optype=stop/start): a Stopped
// instance is defined and runs nothing, and nothing relaunches it; start
// makes it Pending with TaskGroup.Prefer, the agent it ran on, which the
// matcher takes if it fits. An application's Stopped flag stops every
// instance, marked StoppedWithApp, and those a scale adds; clearing it
// starts the marked ones. Rollouts count Stopped instances as ready and
// move them on paper.
// The group is terminal when one task fails (or is killed unasked, or
// lost): the others are killed, and followed (kills retried, reconciled,
// also after a restart) until their own terminal states land in the
// record; a later launch of the instance stops following them. A task's
// terminal state is final: it leaves the tracked tasks, so a stale status
// after it finds no launch. A task that finishes (exit 0) ends only
// itself (seed 001): the instance runs on by its other tasks and is
// Finished once the last one finished.
//
// The core's files, by responsibility: core.go (state, Step, instances),
// reconcile.go (subscription, reconciliation a batch of tasks at a time,
// kill retries), offers.go
// (offers kept or declined, SUPPRESS/REVIVE, what each agent has free),
// placement.go (matching pending instances, and why those left wait),
// plan.go (what a manifest would do: POST /v1/plan), launch.go (ACCEPT and LAUNCH_GROUP), status.go
// (task status updates), restart.go (the restart policy), remotehealth.go
// (REMOTE_* checks, probed where a client reaches the instance: a CNI or
// USER pod's own IP, as its status reports it, else its agent),
// appstatus.go, operate.go (restart, reload, reschedule, stop, start), references.go
// (configmaps, secrets, depends objects), rollouts.go and update.go
// (updates), sweep.go, notices.go (what the notify callbacks are told),
// depends.go (dependency pods), agents.go and moves.go (cordon, drain,
// drift, NoExecute evictions, engine modes, and EngineConfigChanged: the
// engine's configuration set at run time, whose knobs the core reads where
// it uses them; the driver keeps its own, the agent sync interval),
// maintenance.go (Mesos maintenance windows and
// inverse offers), daemonsets.go (one instance bound to every eligible
// agent, and the master's agent list), ranks.go (the IDs an application
// wants, holes left by removals included, and the ranks the rollout
// controller counts them by), allocations.go (allocated instances, which
// a scale-down holds until released), usagereport.go (usage reports
// asked of an application's executors, opt-in), fleet.go (Core.Fleet:
// the instances of chosen applications, for the autoscaler).
//
// The driver's files: driver.go (the Driver and its loop, which takes one
// input at a time and steps the core), restore.go (every kind of stored
// record read at start into one Restore), watches.go (the store's watches
// fanned into one stream, with an adapter per kind of record that turns
// its changes into the core's inputs), subscription.go (the Mesos
// subscription: SUBSCRIBE, the event stream and its heartbeats,
// reconnecting), output.go (a step's records stored, then its calls sent
// to Mesos, on a goroutine of their own), probes.go (the remote health
// checks, held off the control plane), agentsync.go (the master's agents,
// read through its operator API), messages.go (executor messages whose
// answer a caller waits for: exec, signal …), usage.go (the executors'
// usage reports, kept beside the core and never stepped: Driver.Usage)
// and secrets.go (secrets' values read from their backend, e.g. Vault,
// off the loop and retried; SecretUnreadable while they cannot be).
//
// Updates (rollouts.go, update.go): every application has a rollout
// (pkg/rollout plans it, a registry.Rollout records it). A new version
// with another pod template moves instances from the stable to the update
// revision by the strategy: RollingUpdate kills and launches anew
// (KillUpdate), InplaceUpdate and HotPatchUpdate send the executor the
// new task specs (proto.MessageUpdate) and wait until every task reports
// the new revision in TaskStatus.data, sending it again when no answer
// came. An instance that cannot be updated in place (more resources than
// its launch took, other ports) is replaced, and says why.
//
// When an agent reports that an executor died under its tasks, the core
// owes that agent a sweep (sweep.go): the executor binary relaunched with
// a sweep task reaps what dead executors left, and the dead instance's
// host ports stay out of that agent's offers until it finished.
//
// Identities (identities.go): with an IdentitySource, the driver asks
// for the identity of each application's namespace on the agents (its
// uid, recorded in etcd once; the users its policy allows) before it
// hands the application to the core, and feeds it as data
// (NamespaceIdentity); launches and in-place updates carry it
// (proto.TaskSpec.Identity). An instance of a namespace without one
// waits, saying why, until the driver, asking again every BackoffMax
// (30 s), gets it.
//
// Plans (plan.go) are read-only queries: Driver.Plan runs Core.Plan on
// the loop's goroutine between two steps, and nothing is stored or sent.
//
// It must not import HTTP packages; pkg/api talks to it through the
// registry and the Driver.
package scheduler
