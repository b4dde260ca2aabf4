// Package dockerparam owns the docker parameters of a container (seed 001
// and the original's "parameters": docker run options as key/value pairs):
// which keys are supported, how each value is read (docker CLI's forms:
// sizes with units, "name=soft:hard" ulimits, "path:rate" device limits),
// and how the pod's network mode (HOST, BRIDGE, NONE, USER) becomes docker's,
// USER taking the net parameter.
//
// A parameter reaches no further than its own instance. Of docker run's
// options, those that name another container or a namespace, device or
// capability of the host (pid, ipc, uts, userns, cgroupns, cgroup-parent,
// volumes-from, volume, mount, link, device, device-cgroup-rule, cap-add,
// security-opt, privileged) are not parameters; net takes a network's
// name, never container:<name>, which would join another instance's
// network namespace (the containers of an instance share one already).
// The host's network ("net": "host") is the admission policy's to allow.
// The device-*-bps/iops limits name a host device only to throttle the
// container's own I/O on it.
//
// The scheduler's manifest validation and the container executor read
// parameters with this one parser, so that a parameter the executor would
// refuse is refused when the manifest is submitted.
//
// It is pure data: it must not import docker, Mesos or any bcs-mesos
// package. Its errors are messages; callers name the field and class them.
package dockerparam
