// Package pod runs the tasks of one Mesos task group as a pod of Docker
// containers (seed 001, bcs-container-executor) sharing one network. The
// network is held by a network (pause) container that every business
// container joins with `container:<id>`: in CNI mode it is wired up with
// CNI through libcni; in CNM mode (BRIDGE, NONE, USER) a pod of several
// containers gets one in the first task's network mode, publishing every
// task's ports. So any business container, the first one included, can be
// re-created in place while the others keep the pod's namespace, host
// ports and address. In HOST mode every container uses the host's
// network, and a CNM pod of one container has a network of its own (an
// in-place update keeps its host ports; in BRIDGE mode docker may give
// the new container another bridge address, which ContainerInfo reports).
//
// How containers end (seed 001): a container that exits 0 is finished
// (TASK_FINISHED) and the others run on; one that fails (exits non-zero,
// is OOM-killed or killed by anyone but the pod) fails its task and every
// task still running, whose containers are killed at once (SIGKILL); a
// finished task stays finished. The pod is done when every container has
// exited. No business container owns the network, so a finished one,
// the first included, takes nothing from the others; the network
// container exiting, whatever its code, fails the pod. An in-place
// restart or re-creation is no exit, and an update leaves a finished task
// as it ran.
//
// It owns the translation of a proto.TaskSpec into a docker container
// (command and args, docker parameters, volumes, resources, env injection,
// configmap/secret files), who the container runs as — with the spec's
// namespace identity, the "user" parameter (which the namespace's rule,
// pkg/identity, must allow) or the image's user when the rule allows it
// (none is root), else the namespace's uid:gid; the uid a name resolves
// to in the image must be allowed too —, whose configmap/secret files
// (0600, 0400 read-only) and pod-private volumes are that uid's, the pod
// and task lifecycle (on pkg/taskstate's
// one transition table, shared with the executors), killing with a grace
// period, the in-place operations (signal, exec, restart one container,
// re-create one with a new environment in the same network, update
// limits), the update of the whole pod to a new revision
// (proto.GroupUpdate: PlanUpdate, then Update), and the sandbox state file
// that lets a restarted executor tear down what a crashed one left behind
// (containers, CNI attachment, network container). Containers are named
// bcs-<framework digest>-<pod ID>-<name> (ContainerName) and labelled
// with their pod and framework: two frameworks sharing a dockerd (two
// clusters) run pods of the same ID — the same namespace and application
// names — side by side, and a teardown never takes another framework's.
//
// An in-place update re-creates the changed containers from their new
// specs (new image per pullPolicy, env, command, args, resources, files)
// in the same pod and network, all or none: if a new container cannot be
// created or started, the old ones run again.
//
// A hot-patch restarts nothing: container IDs and processes stay. What it
// changes in a running container:
//   - its files: those the new image added or changed against the image
//     the container's files came from are copied in, those it deleted are
//     removed (both images' root filesystems are read through temporary,
//     never started containers and compared by type, mode, owner, size,
//     link target and content digest; mounts, /dev, /proc, /sys and
//     docker's /etc/hosts, /etc/hostname, /etc/resolv.conf are left
//     alone). Files the process changed at run time that the images do not
//     differ in are kept;
//   - cpu shares, CPU quota and memory limits (docker update);
//   - its configmap/secret files (written; those dropped from the spec
//     removed);
//   - then the update's reload signal or command for each container whose
//     files changed; the executor re-arms health checks of the new spec.
//
// What it does not change: the container's image in docker's eyes (stock
// Docker cannot swap a running container's image, so `docker inspect`
// still shows the old image ID and name; TaskStatus data and the pod track
// the new one), the image's configuration (entrypoint, env, user,
// working dir, exposed ports, volumes), nor anything of the spec that
// needs a new container (command, args, env, ports, volumes, privileged,
// network, hostname, labels, docker parameters (swap, swappiness, device
// limits among them), pinned CPUs): such a change refuses the whole hot-patch before
// anything is touched. Running processes keep files they opened; only
// what they read again (after the reload) is new.
//
// Each container's stdout and stderr are appended to the sandbox as
// <taskID>.stdout and <taskID>.stderr (LogFile; the process executor's
// names, so the agent's files API serves both kinds alike), copied from
// docker's log of the container: across in-place restarts and
// re-creations, nothing copied twice, until the container is over; the
// pod is done only once the copy is.
//
// It talks to dockerd through go-dockerclient, runs CNI plugins through
// libcni and reaches a running container's root filesystem through
// /proc/<pid>/root (the executor shares the agent's pid namespace). It
// must not import the Mesos client, the executor protocol driver
// (pkg/executor) or pkg/healthcheck: the executor drives a Pod, not the
// other way round. CPU pinning is asked of a CPUSetPlanner (pkg/numa
// implements it) through a small interface defined here. Docker
// parameters are read by pkg/dockerparam, the parser the scheduler
// validates manifests with; remote configmap items are fetched by
// pkg/remotefile. Of bcs-mesos it imports only proto, errdefs, taskstate,
// dockerparam, identity and remotefile.
package pod
