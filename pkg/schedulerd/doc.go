// Package schedulerd is the bcs-scheduler process: it opens the store
// (an embedded etcd under the data directory, or an external cluster),
// serves the REST API, campaigns for leadership among the replicas sharing
// the etcd, runs the scheduler Driver, the hook runner, the notifier and
// the autoscaler controller (pkg/autoscaler, reading the driver's fleets
// and usage through autoscaling.go's adapters) while it leads, and —
// with Dev — an embedded Mesos-compatible dev cluster on this machine,
// working under <DataDir>/mesos, from which it recovers its executors
// when the process starts again after a kill -9.
// RotateKey is `bcs-scheduler rotate-key`.
//
// What it does as leader it writes through a store fenced by its term
// (store.WithFence): once its etcd session has ended — it was paused or
// cut off past the election TTL and another replica leads — its writes
// are refused, and on the first refusal or the session's end it stops
// them all and campaigns again as a standby. The API's writes, made on
// users' behalf, are not fenced: a follower redirects them to the leader.
//
// With NamespaceUIDs, the driver it runs gives each namespace its own uid
// on the agents, recorded once by the registry, with the users the
// namespace's admission policy allows (proto.Identity), which every
// launch carries; the API checks manifests against the same rule.
//
// Every replica watches etcd's database against its quota (etcdspace.go:
// gauges, a warning near it, an error at each check while etcd refuses
// writes) and makes room in the embedded etcd it runs once that is full
// (store.Embedded.Reclaim).
//
// It reaches etcd over TLS with EtcdTLS (the CA, the client certificate)
// and Mesos with MesosCACert and the framework's credential
// (pkg/mesosconn), loading PEM files through pkg/tlsfiles, as it does
// for the API's own TLS.
//
// At start it gathers the control plane it knows — its API (each local
// address of a wildcard listen, and the advertised URL), --debug-addr,
// the masters, --agent-ports on every address, etcd's members — into
// the egress policies of every namespace (pkg/egress, with the admission
// policy's exceptions and its own /files/ route), which the launches,
// the hook runner, the notifier and the autoscaler controller of each
// term hold to.
//
// The engine's knobs among its Options (intervals, the launch budget …)
// are the defaults of the engine's configuration, which the API shows
// and values set at run time override (scheduler.EngineDefaults).
//
// Run is the composition root: it checks the options, then starts the
// process's components (components.go) — the store, Mesos (the dev
// cluster), the debug server, the API, the leadership — each after those
// it uses, and stops them in reverse (lifecycle): the leadership resigns
// while the API still answers and etcd is up, and etcd stops last. A
// component that fails to start stops those started before it.
//
// It is the wiring only; the logic lives in the packages it starts.
package schedulerd
