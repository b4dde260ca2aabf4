// Package numa plans CPU pinning on an agent (seed 001, docker cpuset-cpus
// and cpuset-mems): a task is pinned only when it asks for whole CPUs with
// the pin flag, on exactly one NUMA node chosen at random (seeded) among
// those with enough free CPUs. Pinning is skipped, with a named reason,
// when more CPUs are asked than the machine has, when the pin flag is not
// set, or when the task would need as many NUMA nodes as the machine has
// (or more than one: tasks never span nodes). A machine of one NUMA node
// (or none) gets no NUMA setting: the CPUs are pinned, cpuset-mems stays
// empty, as the original executor did.
//
// Plan is the pure rule (topology, used CPUs, request, random source in;
// decision out). Allocator wraps it with the agent-wide state file that
// every executor on the agent shares under a file lock, so that two pods
// never get the same CPU and allocations survive an executor restart.
// The topology is read from a sysfs root (/sys by default) so tests use
// fake trees.
//
// It must not import docker, Mesos or any other bcs-mesos package except
// errdefs.
package numa
