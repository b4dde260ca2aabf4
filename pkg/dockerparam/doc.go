// Package dockerparam owns the docker parameters of a container (seed 001
// and the original's "parameters": docker run options as key/value pairs):
// which keys are supported, how each value is read (docker CLI's forms:
// sizes with units, "name=soft:hard" ulimits, "path:rate" device limits),
// and how the pod's network mode (HOST, BRIDGE, NONE, USER) becomes docker's,
// USER taking the net parameter.
//
// The scheduler's manifest validation and the container executor read
// parameters with this one parser, so that a parameter the executor would
// refuse is refused when the manifest is submitted.
//
// It is pure data: it must not import docker, Mesos or any bcs-mesos
// package. Its errors are messages; callers name the field and class them.
package dockerparam
