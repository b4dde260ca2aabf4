// Command bcs-container-executor is the Mesos custom executor that runs
// bcs-scheduler's application task groups as Docker pods (seed 001): the
// executor protocol comes from pkg/executor, the pods from pkg/podruntime
// on pkg/pod, CPU pinning from pkg/numa.
//
// Flags: --docker-endpoint, --network-mode ("" for CNM, "cni"),
// --cni-plugin-dir (default /data/bcs/bcs-cni/bin, seed 001),
// --cni-conf-dir, --cni-cache-dir, --network-image and --network-command
// (the network container of CNI pods and of CNM pods of several
// containers outside HOST mode, default registry.k8s.io/pause:3.9, which
// agents must have or pull; --cni-network-image and --cni-network-command
// are older names of the same flags), --node-addr (BCS_NODE_ADDR; default
// the host of MESOS_AGENT_ENDPOINT), --port-bind-ip, --numa-state (default /data/bcs/bcs-container-executor/
// numa-cpusets.json: agent-wide, shared by every executor of the agent under
// a file lock, so it cannot live in one executor's sandbox; touched only
// when a task asks for pinned CPUs), --sysfs-root, --label, --ack-timeout,
// --codec.
//
// On start it makes its sandbox 0700 (executor.PrivateSandbox), then
// tears down what a crashed predecessor of its framework left behind
// (podruntime.Recover); before exiting it waits for its pods to be torn
// down. Its containers' names and labels carry MESOS_FRAMEWORK_ID (a
// digest of it in the name), so that frameworks sharing a dockerd never
// clash.
package main
