// Command bcs-process-executor is the Mesos custom executor that runs
// bcs task groups as bare processes (seed 000 "process"): pkg/executor
// speaks the v1 executor API, pkg/process runs the processes.
//
// The agent starts it with the Mesos executor environment (MESOS_*);
// flags set the ${work_base_dir} and ${run_base_dir} roots, the package
// cache, cgroups and the default user. Task cgroups live under
// <cgroup-parent>/<framework>.<executor>; at start it sweeps those of
// executors that died without cleaning up, at exit it removes its own. It exits 0 once every task is
// terminal and acknowledged (or after SHUTDOWN), 1 when the agent is gone
// for longer than the recovery timeout or the setup fails.
//
// It must import only pkg/executor, pkg/process and what they import.
package main
