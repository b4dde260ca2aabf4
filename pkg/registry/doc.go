// Package registry keeps bcs-scheduler's objects in the store: applications
// (kind application or process) with their version history and desired
// instance count, the task groups that run them, deployments, configmaps,
// secrets, hook templates and depends objects, and the dependency pods the
// scheduler runs for the latter (applications only it may change). It
// turns manifests into stored records and back, and maps every failure
// onto the errdefs classes.
//
// Writes are optimistic: each record carries the etcd revision it was read
// at, and a write based on a stale read fails with errdefs.ErrConflict.
// An application change and its version-history entry land in one etcd
// transaction, so nothing is half written on a crash. The scheduler's own
// records (task groups, rollouts, sweeps...) have one writer and are
// written unconditionally, many at a time with a Txn.
//
// A secret's item values are kept by a SecretValues backend: in its record
// (InRecord, sealed by the store; the default) or outside etcd
// (pkg/vaultsecrets), the record then keeping its items without content
// and the backend version it points to (ValuesRef). ResolveSecret puts
// the values back for the scheduler's driver.
//
// Each namespace's own uid on the agents (identities.go) is recorded once,
// namespace → uid and uid → namespace created together in one
// transaction, so that racing writers never give one uid to two
// namespaces: EnsureNamespaceUID gives the lowest free uid of a range the
// first time, NamespaceUID reads it.
//
// Task group and task IDs (ids.go) name the application's incarnation
// besides its namespace, name, instance and launch, so that an
// application deleted and created again under its name reuses no task ID;
// IDs written before incarnations still parse, and LaunchByID finds any
// launch from the one record its ID names.
//
// Autoscalers (autoscalers.go) are stored as Objects with the claim of
// the workload they scale (autoscaletargets/) in the same transaction,
// so a workload has one autoscaler and a second is refused naming the
// first. Their status is the leader's: PutAutoscalerStatuses writes it
// in batches through the term's fenced store, and a deposed leader's
// write is refused. The size of a workload an autoscaler scales is the
// autoscaler's: ApplyScaleDecision writes it, manual scales are refused
// until the autoscaler is paused, and UpdateApp keeps it (and the holes)
// whatever the new manifest's spec.instance, holding to the claim as
// read.
//
// A replica that does not lead keeps every task group in memory
// (TaskGroupMirror, mirror.go: read once, then fed by the store's watch);
// when it takes over, Take checks it against the stored keys and
// revisions and reads only the records it lacks.
//
// The engine's mode and its configuration set at run time
// (engineconfig.go: EngineSettings, values by name over the flags',
// each checked by its rule before anything is stored) are the cluster's.
//
// It must not import HTTP or Mesos packages: the REST layer (pkg/api) and the
// scheduler use it.
package registry
