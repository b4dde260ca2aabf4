// Command bcs-scheduler is the bcs-mesos Mesos framework. Today it serves
// the REST API (pkg/api) over the etcd store: an embedded single-node etcd
// under --data-dir by default, or an external cluster with
// --etcd-endpoints. The Mesos side (--master, and --dev for the embedded
// dev cluster) comes with the framework core.
package main
