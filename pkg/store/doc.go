// Package store is the etcd v3 persistence layer of bcs-scheduler: a
// generic, versioned key-value store that typed packages (applications,
// task groups, rollouts, configmaps, secrets, …) build on.
//
// # What it owns
//
//   - Talking to etcd through go.etcd.io/etcd/client/v3, and only through it.
//     An embedded single-node etcd (StartEmbedded, for the default
//     ./bcs-data setup) and an external cluster take the same code path:
//     the embedded launcher only produces client endpoints for Open.
//   - Optimistic concurrency: every Entry carries its etcd mod revision;
//     Update, Delete and Apply compare it, so a write based on a stale read
//     fails with errdefs.ErrConflict instead of losing the other write.
//   - Error classes: a missing key is errdefs.ErrNotFound, creating an
//     existing key is errdefs.ErrAlreadyExists, a stale revision is
//     errdefs.ErrConflict (these three, when a write's precondition
//     fails, as a *PreconditionError naming the key and the revisions:
//     the server's to log, not its clients' to read), a write refused by
//     a fence is ErrDeposed (an errdefs.ErrUnavailable), a malformed key
//     or request is
//     errdefs.ErrInvalidArgument, and an unreachable or timed-out etcd is
//     errdefs.ErrUnavailable (every request is bounded by
//     Config.RequestTimeout). An etcd whose TLS refuses this client, or
//     whose certificate this client cannot verify (Config.TLS), fails Open
//     with errdefs.ErrUnauthenticated saying which (tlscheck.go), where
//     the etcd client would only time out.
//   - Leader election (NewElection) and fencing: a view WithFence makes
//     every write conditional on the leader key of the term Campaign won,
//     so a leader deposed while paused or cut off writes nothing
//     (ErrDeposed) whatever it still believes.
//   - Batches: a Batch applies many writes in order in as few
//     transactions as etcd's default limits allow (128 ops, 1.5 MiB per
//     request), each transaction fenced like Apply.
//   - Encryption at rest of everything under secrets/ and notifytargets/
//     (callback URLs, which may carry credentials): values are sealed
//     with AES-256-GCM (Sealer) using the object key as associated data, so
//     a ciphertext cannot be moved to another key. In every other value
//     the passwords a manifest holds (SealedMembers) and the values of its
//     HTTP checks' and hook web metrics' headers (SealedMapMembers) are
//     sealed alone, in place, so the rest stays readable JSON. The store
//     never logs values.
//   - One sealing key per store: Open with Config.KeyFile checks the key
//     file against the fingerprint recorded at first use, and
//     RotateSealingKey moves every sealed value to a new key.
//   - Checking the embedded etcd's data directory before etcd opens it,
//     where etcd would panic or hang (datadir.go).
//   - etcd's space (space.go): the embedded etcd's quota and compaction;
//     a write etcd refuses at its quota is ErrNoSpace (an
//     errdefs.ErrUnavailable saying the way out); Space reads the
//     database's size, quota and NOSPACE alarm; Embedded.Reclaim compacts,
//     defragments and disarms the alarm when that made room.
//   - The key layout below.
//
// # Key layout
//
// Keys are relative to Config.Prefix (default "/bcs/") and are built from
// segments joined by "/"; see ValidateSegment for what a segment may hold.
//
//	apps/<namespace>/<name>                        application, process or deployment (current definition)
//	appversions/<namespace>/<name>/<seq>           application version history; seq is
//	                                               zero-padded so keys sort numerically
//	taskgroups/<namespace>/<app>/<taskgroup id>    task group (pod) and its instances
//	tasks/<namespace>/<app>/<taskgroup id>/<task>  runtime state of one task
//	rollouts/<namespace>/<name>                    the update state of an application (the scheduler's)
//	hooktemplates/<namespace>/<name>               hook template (seed 003)
//	hookruns/<namespace>/<name>                    hook run: its spec and its measurements
//	configmaps/<namespace>/<name>                  configmap
//	secrets/<namespace>/<name>                     secret (value sealed at rest)
//	services/<namespace>/<name>                    service (the original's bcs-service)
//	depends/<namespace>/<name>                     depends object (seed 002's Dependency)
//	framework/id                                   the Mesos framework ID
//	agents/<agent id>                              an agent as the scheduler saw it
//	agentsettings/<hostname>                       the operator's settings of an agent: cordon, taints, drain
//	engine/mode                                    the engine's mode: running, maintenance, stopped
//	engine/config                                  the engine's configuration set at run time (intervals,
//	                                               launch budget …), over bcs-scheduler's flags
//	sweeps/<agent id>                              the sweep owed an agent after executors died
//	allocations/<namespace>/<app>/<id>             an allocated instance (registry.Allocation)
//	notifycallbacks/<callback id>                  a notify callback, its URL redacted
//	notifytargets/<callback id>                    that callback's URL (sealed at rest)
//	notifications/<notification id>                a notification and its deliveries; ids
//	                                               begin with the UTC time, so keys sort by time
//	sealing/fingerprint                            SHA-256 of the sealing key (never the key)
//	sealing/rotation                               the new key's fingerprint while a rotation runs
//	namespaceuids/<namespace>                      the namespace's own uid on the agents
//	uids/<uid>                                     the namespace that uid was given to (written with
//	                                               the namespace's key, in one transaction, once)
//	autoscalers/<namespace>/<name>                 autoscaler (kind autoscaler): its manifest
//	autoscalerstatus/<namespace>/<name>            what the leader decided for it (fenced writes)
//	autoscaletargets/<namespace>/<workload>        the autoscaler scaling that workload (created with it)
//	audit/<entry id>                               one write to the API: who, what, the answer; ids
//	                                               begin with the UTC time; the newest N are kept (Trim)
//
// Key, Prefix and AppVersionKey build these keys and validate user-supplied
// segments. An application update and its new version-history entry are
// written atomically with Apply.
//
// # What it must not import
//
// No HTTP server or client (the embedded etcd serves only its gRPC client
// port; its HTTP gateway is disabled), no Mesos client or protobufs, and no
// other bcs-mesos package except errdefs; bbolt only to check the embedded
// etcd's database file. Typed objects live in the packages that
// own them; this package only moves bytes (and JSON through GetJSON and
// friends).
package store
