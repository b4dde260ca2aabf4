// Package schedulerd is the bcs-scheduler process: it opens the store
// (an embedded etcd under the data directory, or an external cluster),
// serves the REST API, campaigns for leadership among the replicas sharing
// the etcd, runs the scheduler Driver, the hook runner and the notifier
// while it leads, and — with Dev — an embedded Mesos-compatible dev
// cluster on this machine. RotateKey is `bcs-scheduler rotate-key`.
//
// It is the wiring only; the logic lives in the packages it starts.
package schedulerd
