// Package hookrun is the hook runner (seed 003's hookrun-controller;
// Argo Rollouts' AnalysisRun controller): on the leading scheduler it
// drives every stored hook run that has not ended. It resolves a run's
// template (metrics and arguments) when the run starts, takes each
// metric's measurements when they are due — web calls and Prometheus
// instant queries, each in its own goroutine under the metric's timeout —
// judges them with pkg/hook, and writes the status back with
// registry.ModifyHookRun, so a Terminate written by the API meanwhile
// is never lost. A run ends when pkg/hook says so, on Terminate, or when
// its record is deleted.
//
// Resume: the stored status is the whole state. A runner started on a
// new leader lists the runs and carries on from their measurements: the
// next one is due an interval after the last stored one finished, and a
// measurement is written together with its counts, in one write, only
// if the metric has not gained a measurement since it began. A call
// under way when the old leader stopped, or whose write failed, left no
// trace and is taken again: its provider may see that call twice, the
// run never counts it twice.
//
// Egress: each call — a web metric's and its redirects, a Prometheus
// query — holds to the egress policy of the run's namespace (pkg/egress:
// no loopback, link-local or control-plane address unless the
// namespace's admission policy allows it), checked on every connection.
// A refused call is an Error measurement naming the address, the rule
// and the namespace; no error quotes what a server answered.
//
// It owns the providers' I/O; what a measurement means is pkg/hook's.
// It must not import Mesos packages, the scheduler core or the API
// (pkg/scheduler, pkg/api): those create runs and read their phase
// through the registry.
package hookrun
