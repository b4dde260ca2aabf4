// Package scale holds the end-to-end scale benchmark: the
// whole system on one machine — an embedded etcd and the dev cluster with
// simulated executors in the benchmark's process, bcs-scheduler (the
// binary) in its own so that its memory is measured alone — driven
// through the API as a user would: applications submitted by POST,
// launched over the Mesos v1 scheduler API, their simulated executors'
// status updates stored and read back by GET until every instance is
// Running. make bench-e2e runs it; the package has no other code.
package scale
