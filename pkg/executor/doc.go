// Package executor is the Mesos v1 executor protocol driver shared by
// bcs-process-executor and bcs-container-executor ("one executor
// contract, many runtimes").
//
// It owns:
//   - subscribing to the agent from the MESOS_* environment with mesos-go's
//     executor client, and re-subscribing with the unacknowledged tasks and
//     updates when the connection drops; with checkpointing on, it tries
//     at once and then after random waits, as Mesos' executor library
//     does, of at most half of MESOS_SUBSCRIPTION_BACKOFF_MAX (so that it
//     is back well within a restarted agent's executor re-registration
//     window), and gives up after MESOS_RECOVERY_TIMEOUT; without
//     checkpointing a lost agent ends the executor, as in Mesos;
//   - the events LAUNCH_GROUP, LAUNCH, KILL (kill policy grace period from
//     the KILL event, the TaskInfo or the TaskSpec, in that order),
//     ACKNOWLEDGED, MESSAGE (bcs proto.Message in, proto.MessageResult
//     out), SHUTDOWN, ERROR and HEARTBEAT;
//   - the task lifecycle (pkg/taskstate, mapped one-to-one onto
//     mesos.TaskState) and every TaskStatus field the executor sets:
//     uuid (16 random bytes), source SOURCE_EXECUTOR, timestamp, healthy,
//     reason, message, data, and container_status.network_infos with
//     the container's addresses (Report.IPAddresses), where Mesos reports
//     a container's IPs;
//   - exiting once every task is terminal and every update acknowledged,
//     or AckTimeout after every task became terminal;
//   - Updates, which both runtimes apply a task group's update messages
//     with: one at a time, duplicates sharing the outcome;
//   - usage reports (usage.go): for a runtime that measures usage
//     (UsageReader), one framework MESSAGE per task group every
//     TaskSpec.UsageIntervalSeconds, ±10 % at random, with a sample of
//     each running task (proto.UsageReport); the usage-interval message
//     starts, retimes or stops them; a report that does not go is
//     dropped.
//
// A Runtime (processes, Docker pods) runs the tasks and reports their
// changes through a Reporter; the driver never touches processes or
// containers itself. runtimetest is the conformance suite every Runtime
// runs. Time comes from a Clock so tests can control it.
//
// An agent that serves HTTPS (LIBPROCESS_SSL_ENABLED, passed on to its
// executors) is spoken to over HTTPS, verified as the libprocess
// variables say (AgentTLS).
//
// It must not import other bcs-mesos packages except proto, errdefs,
// mesoswire, taskstate and tlsfiles, and never the scheduler side or
// pkg/devcluster.
package executor
