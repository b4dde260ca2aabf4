// Command devcluster runs the embedded Mesos-compatible dev cluster
// (package devcluster) as a process, so that a whole bcs-mesos system can
// run on one machine: point schedulers at the printed master URL.
//
//	devcluster -config cluster.json
//	devcluster -listen 127.0.0.1:5050 -executors process -work-dir /tmp/dc
//
// Flags override the config file. It prints "master: <url>" once the
// master listens and stops cleanly on SIGINT or SIGTERM, killing every
// executor. Started again on the same -work-dir with process executors,
// it takes back its frameworks and agents (their IDs and addresses) and,
// after a kill -9, which leaves the executors running, their executors
// and tasks, as a Mesos master and agents restarted on their work dirs
// do. With -control
// ADDR (loopback) it also serves a test control API, POST
// /agents/{id}/remove, and prints "control: <url>". It is a dev/test
// tool, not a Mesos replacement. It imports only packages devcluster and
// errdefs.
package main
