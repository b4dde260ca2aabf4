// Package pod runs the tasks of one Mesos task group as a pod of Docker
// containers (seed 001, bcs-container-executor): the first container owns
// the network and the others join it with `container:<id>` (CNM: HOST,
// BRIDGE, NONE, USER), or a network container is created first and wired up
// with CNI through libcni and every business container joins it.
//
// It owns the translation of a proto.TaskSpec into a docker container
// (command and args, docker parameters, volumes, resources, env injection,
// configmap/secret files), the pod and task lifecycle (on pkg/taskstate's
// one transition table, shared with the executors), killing with a grace period, the in-place
// operations (signal, exec, restart one container, re-create one with a new
// environment in the same network, update limits) and the sandbox state
// file that lets a restarted executor tear down what a crashed one left
// behind (containers, CNI attachment, network container).
//
// It talks to dockerd through go-dockerclient and runs CNI plugins through
// libcni. It must not import the Mesos client, the executor protocol driver
// (pkg/executor) or pkg/healthcheck: the executor drives a Pod, not the
// other way round. CPU pinning is asked of a CPUSetPlanner (pkg/numa
// implements it) through a small interface defined here.
package pod
