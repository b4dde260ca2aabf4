// Command bcs-process-executor is the Mesos custom executor that runs
// bcs task groups as bare processes (seed 000 "process"): pkg/executor
// speaks the v1 executor API, pkg/process runs the processes.
//
// The agent starts it with the Mesos executor environment (MESOS_*); it
// makes its sandbox 0700 first (executor.PrivateSandbox). Flags set the
// ${work_base_dir} and ${run_base_dir} roots, the package cache, cgroups
// and the default user (of specs without a namespace identity). Task cgroups live under
// <cgroup-parent>/<framework>.<executor>; at start (and for each sweep
// task) it sweeps those of the framework's executors that died without
// cleaning up — never another framework's —, at exit it removes its own.
//
// Framework messages (proto.Message) act on running tasks: reload, exec,
// signal, restart, update-env, update-resources, and update, which moves
// the task group to a new revision in place (new pids, same task IDs,
// work paths and ports) or by hot-patch (same pids, new packages and
// files, then reloadCmd); the tasks report the revision they run in
// TaskStatus.data (see pkg/process).
//
// It exits 0 once every task is terminal and acknowledged (or after
// SHUTDOWN), 1 when the agent is gone for longer than the recovery
// timeout or the setup fails.
//
// It must import only pkg/executor, pkg/process and what they import.
package main
