// Package process is the runtime of bcs-process-executor: every task of a
// task group is one bare process described by a proto.ProcessSpec (seed
// 000 "process"). It implements executor.Runtime; pkg/executor speaks
// Mesos.
//
// It owns, per task:
//   - preparation: the user (setuid/setgid with supplementary groups; an
//     empty user runs as Config.DefaultUser, "nobody" by default, so root
//     runs a process only when the manifest says "root"), the sandbox
//     (sandbox.go): every path of the spec — workPath, pidFile,
//     uris[].outputDir, configmap and secret files — lies inside the
//     instance's own directories, <root>/<namespace>.<app>.<index> under
//     the work and run roots, and is opened through an os.Root, so no
//     link leads out; the directories it creates belong to the task's
//     user, what exists keeps its owner, and a stale pid file goes only
//     when the task's user wrote it; the configmap and secret files
//     (owner the task's user, or the item's; 0600, 0400 read-only: no
//     other user reads them), the environment (PATH, HOME, USER, LOGNAME
//     and TaskSpec.Env; never the executor's own);
//   - packages (Fetcher): every URI, http(s) with basic auth, or file://
//     from Config.PackageDirs only,
//     pullPolicy Always or IfNotPresent (a content cache revalidated with
//     ETag / Last-Modified), .tar.gz/.tgz/.zip extracted into outputDir
//     with members and links that would leave it rejected; http(s) under
//     the spec's egress policy (pkg/egress), which a cached copy obeys
//     too; errors name the URL and HTTP status or egress rule, never
//     credentials;
//   - the process: startCmd via /bin/sh -c in workPath, in its own process
//     group, moved into the task's cgroup before it runs; after
//     startGracePeriod the pid in pidFile must run as procName (without
//     a pidFile the start command must still run); liveness is polled
//     after that, and a death is TASK_FAILED (TASK_FINISHED on exit 0 of
//     a foreground process) with the exit code when known and the OOM
//     kill when the memory limit did it;
//   - kill: stopCmd, the grace period, SIGTERM, TermWait, SIGKILL to the
//     process group and every process of the cgroup, until none is left;
//   - messages: reload (reloadCmd), restart (restartCmd, or stop + start),
//     exec, signal, update-env (next start), update-resources (cgroup
//     limits in place);
//   - updates (proto.MessageUpdate, update.go): a task group moves to a
//     new revision, one update at a time, idempotent per revision (the
//     revision every task runs already is only reported again; a
//     duplicate of the update under way answers with its outcome). The
//     whole update is checked first and refused, naming tasks and fields,
//     when it is malformed, a task is not running, or a task would change
//     its name, instance, ports, workPath or pidFile. InPlace restarts the
//     changed tasks (every task with restart): TASK_RUNNING unhealthy, the
//     grace period on Config.Clock, the stop of a kill without ending the
//     task, then prepare and start from the new spec — new pid, same task
//     ID, work path, ports and cgroup; healthy by its checks, at once
//     without. HotPatch keeps the pid: only uris, files, resources,
//     healthChecks and reloadCmd may change; packages and files go over
//     the old ones, limits change in place, checks restart, then the new
//     reloadCmd runs (its failure is the answer's error; the revision
//     moves on anyway). Unchanged tasks only take the revision. Every task
//     reports its revision (ProcessInfo.Revision: Instance.Version at
//     launch) in TaskStatus.data. A kill or executor shutdown interrupts
//     an update; a new start that fails fails the task. ReloadSignal and
//     ReloadCommand of the update are for containers and ignored;
//     killGracePeriod stays the one of the launch (the driver's kill
//     policy comes from the TaskInfo);
//   - limits (Cgroups): limits.cpu as a CFS quota and limits.memory in MB,
//     cgroup v1 or v2, one cgroup per task, removed when the task ends;
//     an executor's task cgroups sit under its own directory, claimed in a
//     state directory, so that the next executor on the agent sweeps the
//     processes of one that was killed outright (Claim, Release);
//   - health checks through pkg/healthcheck: Healthy on change, and
//     TASK_FAILED after consecutiveFailures failures.
//
// It must not import the scheduler side, pkg/devcluster or any Mesos
// client; only pkg/executor, pkg/healthcheck, pkg/remotefile (packages
// and remote configmap items), pkg/egress, pkg/confine, pkg/taskstate,
// pkg/errdefs and proto.
package process
