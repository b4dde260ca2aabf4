// Package simexec stands in for bcs's executors in the dev cluster's
// simulated mode (devcluster.ExecutorSimulated), so that what the
// scheduler asks of executors at fleet size can be measured without
// processes: an update (proto.MessageUpdate) is answered as the real
// executors answer it, each task reporting the new revision in its
// TaskStatus.data and the executor a MessageResult.
//
// It must not import other bcs-mesos packages except pkg/devcluster and
// proto; bcs-scheduler --dev, cmd/devcluster and the scale benchmark use it.
package simexec
