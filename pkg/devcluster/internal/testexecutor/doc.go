// Command testexecutor is a tiny custom executor for the devcluster
// protocol tests. It talks to the agent only through mesos-go's own
// executor client (executor/config, executor/calls, httpcli/httpexec), so
// the tests check the dev cluster against an independent client.
//
// Behaviour is chosen with TESTEXECUTOR_MODE (from the CommandInfo
// environment):
//
//	finish  each launched task goes TASK_RUNNING then TASK_FINISHED; the
//	        executor exits 0 once every update is acknowledged (default)
//	run     tasks go TASK_RUNNING and stay until killed (TASK_KILLED)
//	crash   tasks go TASK_RUNNING, then the executor exits 3 once that
//	        update is acknowledged
//	deaf    launches are ignored, as if lost on their way
//
// With TESTEXECUTOR_RESUBSCRIBE=1 and checkpointing on, it subscribes
// again every 100ms when its event stream ends or a subscription fails,
// with its unacknowledged tasks and updates, as an executor recovering
// from an agent restart does; TESTEXECUTOR_STAY=1 makes it stay instead,
// without subscribing again.
//
// TESTEXECUTOR_CODEC=json|protobuf picks the wire format (default
// protobuf). Every KILL is appended to kills.log (the task ID and the
// kill policy's grace period in nanoseconds, or "none"), every
// ACKNOWLEDGED event to acks.log, and the MESOS_* environment is written
// to env.txt in the sandbox; a MESSAGE is echoed back to the scheduler
// prefixed with "echo:".
//
// It must import no bcs-mesos package: it stands for a third-party
// executor binary.
package main
