package pod

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	docker "github.com/fsouza/go-dockerclient"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// networkContainerName is the task-name slot of the network container: its
// docker name is ContainerName(framework, podID, networkContainerName).
const networkContainerName = "network"

// hostNetwork tells whether spec asks for the agent's network (HOST, or
// USER with net=host): its containers need no network container, they
// all share the host's.
func hostNetwork(spec *proto.TaskSpec) bool {
	if spec == nil || spec.Container == nil {
		return false
	}
	params, err := parseParams(spec.Container.Parameters)
	if err != nil {
		return false // Start fails on the parameters
	}
	mode, err := networkMode(spec.Container.NetworkMode, params)
	return err == nil && mode == "host"
}

// createNetwork creates the network container that holds the pod's
// network namespace, so that every business container can be re-created
// while the others keep the namespace, the published ports and the
// address: in CNI mode with network none (startNetwork wires it up); in
// CNM mode in the first task's network mode (BRIDGE, NONE, USER),
// publishing every task's ports (BRIDGE) and taking its ip parameter and
// hostname. The state file names it before it starts.
func (p *Pod) createNetwork(ctx context.Context) (string, error) {
	if err := p.pull(ctx, &proto.ContainerSpec{Image: p.cfg.NetworkImage}); err != nil {
		return "", fmt.Errorf("network container: %w", err)
	}
	first := p.tasks[0].spec
	labels := p.cfg.podLabels()
	labels[LabelRole] = "network"
	cfg := &docker.Config{Image: p.cfg.NetworkImage, Cmd: p.cfg.NetworkCommand, Labels: labels, Hostname: first.Container.Hostname}
	hc := &docker.HostConfig{NetworkMode: "none"}
	var netCfg *docker.NetworkingConfig
	if p.cfg.Network == NetworkCNM {
		params, err := parseParams(first.Container.Parameters)
		if err != nil {
			return "", fmt.Errorf("task %q: %w", p.tasks[0].id, err)
		}
		if hc.NetworkMode, err = networkMode(first.Container.NetworkMode, params); err != nil {
			return "", fmt.Errorf("task %q: %w", p.tasks[0].id, err)
		}
		if hc.NetworkMode == "bridge" {
			specs := make([]*proto.TaskSpec, len(p.tasks))
			for i, t := range p.tasks {
				specs[i] = t.spec
			}
			cfg.ExposedPorts, hc.PortBindings = portBindings(specs, p.cfg.PortBindIP)
		}
		netCfg = ipConfig(hc.NetworkMode, params.Address(first.Container.NetworkMode))
	}
	c, err := p.cfg.Docker.CreateContainer(docker.CreateContainerOptions{
		Name: ContainerName(p.cfg.Framework, p.cfg.PodID, networkContainerName), Config: cfg, HostConfig: hc, NetworkingConfig: netCfg, Context: ctx,
	})
	if err != nil {
		return "", fmt.Errorf("create network container: %v: %w", err, dockerClass(err))
	}
	p.mu.Lock()
	p.netContainer = c.ID
	p.mu.Unlock()
	return c.ID, p.saveRecord()
}

// startNetwork starts the network container id and takes the pod's
// address from it, or in CNI mode from CNI ADD on its namespace.
func (p *Pod) startNetwork(ctx context.Context, id string) error {
	if err := p.cfg.Docker.StartContainerWithContext(id, nil, ctx); err != nil {
		return fmt.Errorf("start network container: %v: %w", err, dockerClass(err))
	}
	ins, err := p.cfg.Docker.InspectContainerWithOptions(docker.InspectContainerOptions{ID: id, Context: ctx})
	if err != nil || ins.State.Pid == 0 {
		return fmt.Errorf("network container %q is not running: %v: %w", id, err, errdefs.ErrUnavailable)
	}
	if p.cfg.Network == NetworkCNI {
		return p.setupCNI(ctx, id, ins.State.Pid)
	}
	p.mu.Lock()
	p.podIP, p.podNetMode = containerIP(ins), ins.HostConfig.NetworkMode
	p.mu.Unlock()
	return nil
}

// ipConfig asks docker for address ip on network mode (the ip docker
// parameter in USER mode); nil without one.
func ipConfig(mode, ip string) *docker.NetworkingConfig {
	if ip == "" {
		return nil
	}
	return &docker.NetworkingConfig{EndpointsConfig: map[string]*docker.EndpointConfig{
		mode: {IPAMConfig: &docker.EndpointIPAMConfig{IPv4Address: ip}},
	}}
}

// containerIP is the address docker gave c: the default bridge's, else
// that of its first network.
func containerIP(c *docker.Container) string {
	if c.NetworkSettings == nil {
		return ""
	}
	if c.NetworkSettings.IPAddress != "" {
		return c.NetworkSettings.IPAddress
	}
	for _, n := range c.NetworkSettings.Networks {
		if n.IPAddress != "" {
			return n.IPAddress
		}
	}
	return ""
}

// monitorNetwork fails the pod when its network container exits while the
// pod runs: the business containers have lost their network (as when
// the container owning it exited, seed 001).
func (p *Pod) monitorNetwork() {
	p.mu.Lock()
	id := p.netContainer
	p.mu.Unlock()
	for {
		code, err := p.cfg.Docker.WaitContainerWithContext(id, p.monCtx)
		if p.monCtx.Err() != nil {
			return // torn down
		}
		var nsc *docker.NoSuchContainer
		switch {
		case err == nil:
			p.fail(fmt.Sprintf("the pod's network container %.12s exited with code %d", id, code))
			return
		case errors.As(err, &nsc):
			p.fail(fmt.Sprintf("the pod's network container %.12s was removed", id))
			return
		}
		time.Sleep(100 * time.Millisecond) // dockerd hiccup: wait again, as monitor does
	}
}

// halt closes p.halted once: the pod is being killed or has failed, so an
// update waiting to restart containers gives up.
func (p *Pod) halt() { p.haltOnce.Do(func() { close(p.halted) }) }

// isJoined tells whether a docker network mode joins another container.
func isJoined(mode string) bool { return strings.HasPrefix(mode, "container:") }
