// Package hook is the hook engine's pure part (seed 003, bcs-hook-operator;
// Argo Rollouts' AnalysisRun): what a hook run is (RunSpec, RunStatus),
// how a measurement's value is judged by a metric's conditions
// (expr-lang expressions over result), how a value is read out of a JSON
// body (Kubernetes JSONPath, "{$.age}"), and how measurements add up to a
// metric's and a run's phase under the count, interval and limit rules.
// Time is passed in; it does no I/O and starts no goroutines.
//
// The runner (pkg/hookrun) takes the measurements — web calls and
// Prometheus queries — on the leading scheduler and stores the runs; the
// scheduler core creates the runs of canary hook steps and PreDeleteHooks
// and waits for their phase.
//
// It must not import HTTP, storage or Mesos packages.
package hook
