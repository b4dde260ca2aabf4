// Package autoscaler is the autoscaler controller on the leading
// scheduler: it evaluates every stored autoscaler every intervalSeconds
// and scales its workload as pkg/autoscale decides.
//
// Timing: each autoscaler is due at a phase of its interval given by a
// hash of its namespace and name, in whole seconds, so that a thousand
// autoscalers of the same interval spread over it rather than all
// firing at once, and those of one second make one batch rather than a
// wake each (a wake lists the specs). One wake takes every autoscaler
// due as a batch: one fleet snapshot and one
// usage read for all their workloads, their providers' readings in
// goroutines (at most Config.MaxCalls at a time, each under the egress
// policy of its autoscaler's namespace), one autoscale.Decide each.
// Values per instance (the scale-down order) are read only when a
// decision removes instances: one Prometheus query whose samples name
// their instance by a label, or one web call per instance rendered with
// its arguments (PreDeleteHook's); an instance without a value goes
// after those with one.
//
// Allocation probes run on their own interval, in the same loop: each
// autoscaler's probe reads a value per running instance the same way,
// its allocatedCondition judges it, and where the verdict differs from
// the instance's allocation the probe allocates it (source "probe") or
// releases its own allocation. An allocation made through the API is
// never touched; an instance the probe cannot judge keeps its state.
// The round's outcome goes into the autoscaler's status with its next
// decision.
//
// Usage reports: the executors report the use of a workload's instances
// only while its record asks (registry.App.UsageReport). The controller
// sets the flag of the targets of its resource metrics, clears it on
// workloads none reads, and tells a resource metric's status that it
// awaits the first reports in the intervals after it turned them on
// (usagereports.go).
//
// Writes: a decision that scales goes through Scaler, which writes the
// new size, the removed instances and the status in one transaction, so
// that a scale is never acted on without its record. Other statuses are
// written together through StatusWriter, only those that show a reader
// something new (not a new round's times, nor a metric's value within
// 1 %) or were last written a minute ago (statuswrites.go). Both go
// through the leader's fenced store: a write refused because the leader
// was deposed ends Run.
//
// Resume: the stored status is the whole state (stabilization
// recommendations and scale events included); a controller started on a
// new leader reads the statuses once and carries on from them, the
// workload's size read from the scheduler, so it never scales twice for
// one decision.
//
// It defines the interfaces it reads the scheduler through (FleetSource,
// UsageSource) and must not import the scheduler core, the API or Mesos
// packages (pkg/scheduler, pkg/api): schedulerd adapts the driver to them.
package autoscaler
