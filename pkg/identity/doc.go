// Package identity owns who a namespace's workloads are on the agents:
// the namespace's own uid (its gid is the same number), taken from the
// operator's range (bcs-scheduler --namespace-uids, Range), and the rule
// of which other users a workload may name (Rule): those the namespace's
// admission policy lists, root only when listed — recognised by its uid
// as well as its name —, and never a uid of the range that is not the
// namespace's own, whatever the list says. The scheduler's admission
// checks manifests with it; the executors check again what only an
// agent knows: the uid a user name has there, or a container image's
// user.
//
// Reach says whether a user may search its way to a directory (an
// instance's work directory under a 0700 home directory is not), naming
// the directory in the way; it is the one part that reads the file
// system. The rest is pure logic. It must not import any other bcs-mesos
// package.
package identity
