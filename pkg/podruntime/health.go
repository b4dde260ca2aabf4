package podruntime

import (
	"context"
	"fmt"
	"strings"

	"github.com/bcs-mesos/bcs-mesos/pkg/egress"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/executor"
	"github.com/bcs-mesos/bcs-mesos/pkg/healthcheck"
	"github.com/bcs-mesos/bcs-mesos/pkg/pod"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// validate refuses, before anything is created, a group whose tasks are
// not containers or whose health checks can never run.
func validate(tasks []executor.Task, network string) error {
	for _, t := range tasks {
		if t.Spec == nil || t.Spec.Container == nil {
			return fmt.Errorf("task %q: the container executor runs container tasks only: %w", t.ID(), errdefs.ErrInvalidArgument)
		}
		for i, hc := range t.Spec.HealthChecks {
			if err := checkable(t.Spec, hc, network); err != nil {
				return fmt.Errorf("task %q: health check %d: %w", t.ID(), i, err)
			}
		}
	}
	return nil
}

// checkable tells whether hc can run against a container in network.
func checkable(spec *proto.TaskSpec, hc proto.HealthCheck, network string) error {
	switch strings.ToUpper(hc.Type) {
	case "COMMAND":
		if hc.Command == "" {
			return fmt.Errorf("COMMAND check without a command: %w", errdefs.ErrInvalidArgument)
		}
		return nil
	case "HTTP", "TCP":
	default:
		return fmt.Errorf("type %q (HTTP, TCP, COMMAND; REMOTE_* checks are the scheduler's): %w", hc.Type, errdefs.ErrInvalidArgument)
	}
	if network == "NONE" {
		return fmt.Errorf("%s check in network mode NONE: nothing can reach the container: %w", hc.Type, errdefs.ErrInvalidArgument)
	}
	if hc.Port > 0 {
		return nil
	}
	if _, ok := portNamed(spec, hc.PortName); !ok {
		return fmt.Errorf("%s check: no port and port name %q is not a port of the task: %w", hc.Type, hc.PortName, errdefs.ErrInvalidArgument)
	}
	return nil
}

func portNamed(spec *proto.TaskSpec, name string) (proto.Port, bool) {
	for _, p := range spec.Ports {
		if name != "" && p.Name == name {
			return p, true
		}
	}
	return proto.Port{}, false
}

// target is where an HTTP or TCP check of a task connects (seed 000 port
// rule): a named port with a hostPort in BRIDGE mode is probed where
// dockerd publishes it; HOST mode shares the node's network; every other
// case reaches the container's own address on the container port.
func (g *group) target(spec *proto.TaskSpec, hc proto.HealthCheck, info proto.ContainerInfo) (string, int, error) {
	node := g.nodeHost()
	if hc.Port > 0 {
		if g.network == "HOST" {
			return node, hc.Port, nil
		}
		return containerHost(info, hc.Port)
	}
	p, ok := portNamed(spec, hc.PortName)
	if !ok {
		return "", 0, fmt.Errorf("port name %q: %w", hc.PortName, errdefs.ErrNotFound)
	}
	inside := p.ContainerPort
	if inside <= 0 {
		inside = p.HostPort
	}
	switch {
	case g.network == "BRIDGE" && p.HostPort > 0:
		return node, p.HostPort, nil
	case g.network == "HOST":
		return node, inside, nil
	}
	return containerHost(info, inside)
}

func containerHost(info proto.ContainerInfo, port int) (string, int, error) {
	if info.IPAddress == "" {
		return "", 0, fmt.Errorf("container %q has no IP address to check: %w", info.Name, errdefs.ErrUnavailable)
	}
	if port <= 0 {
		return "", 0, fmt.Errorf("no port to check: %w", errdefs.ErrInvalidArgument)
	}
	return info.IPAddress, port, nil
}

// nodeHost is the node address published and host-network ports answer
// on.
func (g *group) nodeHost() string {
	cfg := g.rt.cfg
	switch {
	case cfg.PortBindIP != "" && cfg.PortBindIP != "0.0.0.0":
		return cfg.PortBindIP
	case cfg.NodeAddr != "":
		return cfg.NodeAddr
	}
	return "127.0.0.1"
}

// prober builds the probe of one check of task t, whose container info
// describes. A probe of the agent's address (HOST mode, a published
// port) may reach any port there but the control plane's: neither the
// agent's own API nor an endpoint the spec's egress policy refuses
// (egress.Probes). One of the container's own address reaches only it.
func (g *group) prober(t executor.Task, hc proto.HealthCheck, info proto.ContainerInfo) (healthcheck.Prober, error) {
	if strings.EqualFold(hc.Type, "COMMAND") {
		return healthcheck.NewProber(hc, "", nil, g.dockerExec(t.ID()), nil)
	}
	host, port, err := g.target(t.Spec, hc, info)
	if err != nil {
		return nil, err
	}
	resolved := hc
	resolved.Port, resolved.PortName = port, ""
	var dial healthcheck.DialFunc
	if host == g.nodeHost() {
		policy, err := egress.Probes("namespace "+t.Spec.Instance.Namespace, t.Spec.Egress, []string{g.rt.cfg.AgentEndpoint})
		if err != nil {
			return nil, err
		}
		dial = policy.DialContext
	}
	return healthcheck.NewProber(resolved, host, nil, nil, dial)
}

// dockerExec runs COMMAND checks with docker exec in the task's container.
func (g *group) dockerExec(taskID string) healthcheck.ExecFunc {
	return func(ctx context.Context, command string) ([]byte, int, error) {
		p := g.getPod()
		res, err := p.Exec(ctx, taskID, pod.ExecRequest{Command: []string{"/bin/sh", "-c", command}})
		return []byte(res.Output), res.ExitCode, err
	}
}

// brokenProbe fails every check with the reason the probe could not be
// built, so the verdict (and the kill) follows the check's policy.
type brokenProbe struct{ err error }

var _ healthcheck.Prober = brokenProbe{}

func (b brokenProbe) Probe(context.Context) error { return b.err }
