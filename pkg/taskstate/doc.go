// Package taskstate is the one lifecycle of a task on an agent — the
// executor driver's, the process runtime's and a Docker pod's — with its
// one transition table. Each State maps one-to-one onto a Mesos TaskState,
// named by MesosName; pkg/executor turns it into the protobuf enum.
//
// It must not import other bcs-mesos packages but errdefs, nor Mesos,
// Docker or HTTP packages: the pod code uses it without them.
package taskstate
