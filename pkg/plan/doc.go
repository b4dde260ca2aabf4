// Package plan is the answer of a dry run (POST /v1/plan, ?dryRun=true):
// what storing a workload manifest would do on the cluster as the
// scheduler knows it — which instances would be placed where, kept,
// updated (and how), recreated or killed, and why those that fit no agent
// would wait. The scheduler core computes it (pkg/scheduler Core.Plan)
// and the REST API returns it; nothing is stored or launched.
//
// It holds data only: it must not import the scheduler, HTTP or Mesos
// packages.
package plan
