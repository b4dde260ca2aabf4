// Command devcluster runs the embedded Mesos-compatible dev cluster
// (package devcluster) as a process, so that a whole bcs-mesos system can
// run on one machine: point schedulers at the printed master URL.
//
//	devcluster -config cluster.json
//	devcluster -listen 127.0.0.1:5050 -executors process -work-dir /tmp/dc
//
// Flags override the config file. It prints "master: <url>" once the
// master listens and stops cleanly on SIGINT or SIGTERM. With -control
// ADDR (loopback) it also serves a test control API, POST
// /agents/{id}/remove, and prints "control: <url>". It is a dev/test
// tool, not a Mesos replacement. It imports only packages devcluster and
// errdefs.
package main
