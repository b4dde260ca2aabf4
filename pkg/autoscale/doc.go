// Package autoscale is the autoscaler's decision engine, pure: from an
// autoscaler's spec, its persisted decision record, a snapshot of the
// target's instances and the readings of its metrics, Decide says what
// size the workload should have, why, and what the record becomes. It
// follows Kubernetes' HorizontalPodAutoscaler v2 (the replica formula,
// tolerance, not-ready and missing instances, the largest proposal
// winning, stabilization windows, Pods and Percent policies with
// selectPolicy, conditions), Agones' buffer policy (keep ready instances
// free for game sessions), KEDA's cron windows (here they move the
// bounds), and adds what game fleets need: a provider that errors holds
// the size, an allocated instance is never removed, and Victims picks
// who goes (not ready first, then the lowest value, then the highest ID).
//
// Everything a decision needs is in its Input, the record included: the
// stabilization window's recommendations and the policies' scale events
// live in the record (manifest.AutoscalerStatus), not in memory, so a new
// leader decides exactly as the old one would have. Time is Input.Now.
//
// It does no I/O, reads no clock and starts no goroutines. The package
// must not import HTTP, storage (etcd, pkg/store, pkg/registry) or Mesos
// packages, nor any bcs-mesos package but manifest, field and hook (whose
// languages an autoscaler's jsonPaths and allocatedCondition are written
// in).
package autoscale
