// Package process is the runtime of bcs-process-executor: every task of a
// task group is one bare process described by a proto.ProcessSpec (seed
// 000 "process"). It implements executor.Runtime; pkg/executor speaks
// Mesos.
//
// It owns, per task:
//   - preparation: the user — with the spec's Identity (its namespace's,
//     proto.Identity), a spec that names none runs as the namespace's
//     uid and gid (no passwd entry needed; no supplementary groups; HOME
//     its work path, USER and LOGNAME bcs-<namespace>), and one it names,
//     a name or "uid[:gid]", must be allowed by the namespace's rule
//     (pkg/identity) by name and by the uid and groups it has on the
//     agent; without an Identity an empty user runs as
//     Config.DefaultUser, "nobody" by default (setuid/setgid with
//     supplementary groups; root only when the spec says "root") —, the
//     sandbox (sandbox.go): every path of the spec — workPath, pidFile,
//     uris[].outputDir, configmap and secret files — lies inside the
//     instance's own directories, <root>/<namespace>.<app>.<index> under
//     the work and run roots, and is opened through an os.Root, so no
//     link leads out; the roots are 0711 (searchable, not listable);
//     the directories it creates belong to the task's user, what exists
//     keeps its owner, and a stale pid file goes only when the task's
//     user wrote it; with an Identity the instance's directories are
//     0700 and its user's alone, given to it with what they hold when
//     another user had them, and those above them 0711; the configmap and secret
//     files (owner the task's user, or the item's, held to the same
//     rule; 0600, 0400 read-only — a secret's always: no other user
//     reads them), the task's output files <task>.stdout and .stderr
//     (0600, the task's user's), the environment (PATH, HOME, USER,
//     LOGNAME and TaskSpec.Env; never the executor's own);
//   - packages (Fetcher): every URI, http(s) with basic auth, or file://
//     from Config.PackageDirs only,
//     pullPolicy Always or IfNotPresent (a content cache keyed by the
//     URL, the namespace and an HMAC of the credential — a namespace
//     never gets another's copy, nor a copy fetched with another
//     credential — revalidated with ETag / Last-Modified, sending the
//     credential), .tar.gz/.tgz/.zip extracted into outputDir with
//     members and links that would leave it rejected, links resolved
//     through those earlier members made; http(s) under the spec's
//     egress policy (pkg/egress), which a cached copy obeys too; errors
//     name the URL and HTTP status or egress rule, never credentials;
//   - the process: startCmd via /bin/sh -c in workPath, in its own process
//     group, moved into the task's cgroup before it runs; after
//     startGracePeriod the pid in pidFile must run as procName (a start
//     command not yet exited is waited for up to CommandTimeout, as
//     systemd waits for a forking service; then a group still short of
//     it — no pid file yet, or not past its exec, on a busy machine —
//     gets another grace period; without a pidFile the start command
//     must still run); liveness is polled
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
//     usage (usage.go, executor.UsageReader) is read from it: CPU time
//     (v1 cpuacct.usage, in a cpuacct directory of its own where cpuacct
//     is not mounted with cpu; v2 cpu.stat usage_usec) and the working
//     set (memory used minus memory.stat's inactive file cache);
//     an executor's task cgroups sit under its own directory, named by
//     its framework, executor ID and process (Owner), so that the next
//     executor of the framework on the agent sweeps the processes of one
//     that was killed outright, and never another framework's (Claim,
//     Release);
//   - health checks through pkg/healthcheck: Healthy on change, and
//     TASK_FAILED after consecutiveFailures failures; HTTP and TCP
//     checks probe any port of the agent's address (HostIP) but never
//     the control plane (egress.Probes: the agent's own API,
//     Config.AgentEndpoint, and the endpoints the spec's egress policy
//     refuses): such a probe fails without connecting, naming the rule.
//
// It must not import the scheduler side, pkg/devcluster or any Mesos
// client; only pkg/executor, pkg/healthcheck, pkg/remotefile (packages
// and remote configmap items), pkg/egress, pkg/confine, pkg/identity,
// pkg/taskstate,
// pkg/errdefs and proto.
package process
