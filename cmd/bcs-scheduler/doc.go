// Command bcs-scheduler is the bcs-mesos Mesos framework: the REST API,
// the etcd store (embedded under --data-dir, or --etcd-endpoints), leader
// election among replicas, and the scheduler that runs applications on the
// Mesos masters of --master. With --dev it also runs an embedded
// Mesos-compatible dev cluster on this machine (make run).
//
// `bcs-scheduler rotate-key --new-key-file FILE` re-seals the store's
// secrets and passwords under a new key while every replica is stopped.
package main
