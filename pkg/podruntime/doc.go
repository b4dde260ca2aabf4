// Package podruntime is the executor.Runtime of bcs-container-executor: it
// runs each LAUNCH_GROUP task group as one Docker pod (pkg/pod) and turns
// what the pod does into task reports for the executor protocol driver
// (pkg/executor).
//
// It owns:
//   - the mapping of pod task states onto executor states (seed 001:
//     TASK_STARTING, TASK_RUNNING with proto.ContainerInfo JSON as
//     TaskStatus.data, TASK_FINISHED, TASK_FAILED, TASK_KILLED), reported in
//     order from one goroutine so that no report is sent with a pod lock
//     held;
//   - the task's executor-side health checks (pkg/healthcheck): HTTP and TCP
//     probe the published host port in BRIDGE mode (hostPort > 0), the
//     node address in HOST mode and the container IP otherwise (CNI, USER,
//     BRIDGE without a host port); COMMAND runs through docker exec. The
//     verdict goes out as TaskStatus.healthy, and after consecutiveFailures
//     failures the whole group is killed and every task reported TASK_FAILED
//     with the health check's reason;
//   - killing (one task's KILL stops the whole pod: its tasks share one
//     lifecycle, seed 001; a task whose container exited 0 is
//     TASK_FINISHED while the others run on, see pkg/pod) and the scheduler messages signal, exec, restart,
//     update-env (the container is re-created, the task stays RUNNING),
//     update-file, update-resources and report-status;
//   - the update message (proto.GroupUpdate): one update per pod at a
//     time, idempotent per revision, with its reports: the tasks an
//     in-place update restarts go RUNNING healthy=false for the grace
//     period and come back with their new container data, healthy by
//     their new checks; every task's data carries the revision it runs;
//   - usage (usage.go, executor.UsageReader): one docker stats, not
//     streamed, per running container, read at once: cumulative CPU time
//     and the working set (usage less the inactive file cache), at the
//     time dockerd read them;
//   - crash recovery: New tears down, with pod.Cleanup, every pod left in
//     this sandbox and in the sandboxes of dead executors of the same
//     framework on the agent (a Mesos sandbox is
//     .../executors/<executor>/runs/<run>; each run writes an owner file
//     naming its process, so a live executor's pods are never touched).
//
// It must not import the scheduler side or pkg/devcluster; it talks to
// dockerd only through pkg/pod, but for the read-only stats of usage,
// and fetches remote configmap items (for
// updates) with pkg/remotefile.
package podruntime
