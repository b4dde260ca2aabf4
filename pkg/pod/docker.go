package pod

import (
	"context"
	"errors"
	"fmt"
	"strings"

	docker "github.com/fsouza/go-dockerclient"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// containerPlan is what a business container is created from.
type containerPlan struct {
	opts docker.CreateContainerOptions
	// imageID is the image opts.Config.Image named when it was checked.
	imageID string
}

// createOptions translates spec, t's spec or the one it is re-created
// from, into docker's create options. It checks everything about spec
// that docker would refuse later, and changes nothing.
func (p *Pod) createOptions(ctx context.Context, t *task, spec *proto.TaskSpec) (containerPlan, error) {
	c := spec.Container
	img, err := p.cfg.Docker.InspectImage(c.Image)
	if err != nil {
		return containerPlan{}, fmt.Errorf("image %q: %v: %w", c.Image, err, dockerClass(err))
	}
	var imageEntrypoint []string
	if img.Config != nil {
		imageEntrypoint = img.Config.Entrypoint
	}
	entrypoint, cmd, err := commandFor(c, imageEntrypoint)
	if err != nil {
		return containerPlan{}, err
	}
	params, err := parseParams(c.Parameters)
	if err != nil {
		return containerPlan{}, err
	}
	env := containerEnv{podID: p.cfg.PodID, nodeAddr: p.cfg.NodeAddr, hostIP: p.cfg.NodeAddr}
	p.mu.Lock()
	netContainer := p.netContainer
	if p.cfg.Network == NetworkCNI {
		env.hostIP = p.podIP
		env.cniName = p.cfg.CNI.IfName
	}
	// A pod without a network container is HOST (every container takes
	// the first task's mode) or has one container.
	netSpec, netParams := p.tasks[0].spec.Container, params
	if t != p.tasks[0] {
		if netParams, err = parseParams(netSpec.Parameters); err != nil {
			p.mu.Unlock()
			return containerPlan{}, fmt.Errorf("task %q: %w", p.tasks[0].id, err)
		}
	} else {
		netSpec = c
	}
	specs := make([]*proto.TaskSpec, len(p.tasks))
	for i, o := range p.tasks {
		specs[i] = o.spec
		if o == t {
			specs[i] = spec
		}
	}
	cpuset := t.cpuset
	p.mu.Unlock()
	labels := map[string]string{}
	for k, v := range c.Labels {
		labels[k] = v
	}
	for k, v := range p.cfg.podLabels() {
		labels[k] = v
	}
	labels[LabelTask] = t.id
	labels[LabelRole] = "business"

	var imageUser string
	if img.Config != nil {
		imageUser = img.Config.User
	}
	user, err := containerUser(spec.Identity, params.User, imageUser)
	if err != nil {
		return containerPlan{}, err
	}
	cfg := &docker.Config{
		Image:      c.Image,
		Env:        buildEnv(env, spec),
		Cmd:        cmd,
		Entrypoint: entrypoint,
		Labels:     labels,
		User:       user,
	}
	if entrypoint == nil && len(imageEntrypoint) == 0 {
		cfg.Entrypoint = nil
	}
	hc := &docker.HostConfig{Privileged: c.Privileged}
	if err := applyResources(hc, spec.Resources); err != nil {
		return containerPlan{}, err
	}
	applyParams(hc, params)
	if cpuset != nil {
		hc.CPUSetCPUs = cpuset.CPUs
		hc.CPUSetMEMs = cpuset.Mems
	}
	if hc.Binds, err = binds(c.Volumes, p.cfg.PodID, p.cfg.SandboxDir); err != nil {
		return containerPlan{}, err
	}
	var netCfg *docker.NetworkingConfig
	if netContainer != "" {
		hc.NetworkMode = "container:" + netContainer
	} else {
		mode, err := networkMode(netSpec.NetworkMode, netParams)
		if err != nil {
			return containerPlan{}, err
		}
		hc.NetworkMode = mode
		if mode != "host" {
			cfg.Hostname = c.Hostname
		}
		if mode == "bridge" {
			cfg.ExposedPorts, hc.PortBindings = portBindings(specs, p.cfg.PortBindIP)
		}
		netCfg = ipConfig(mode, params.Address(netSpec.NetworkMode))
	}
	opts := docker.CreateContainerOptions{Name: t.name, Config: cfg, HostConfig: hc, NetworkingConfig: netCfg}
	return containerPlan{opts: opts, imageID: img.ID}, nil
}

// pull fetches c's image per its pull policy: Always pulls, IfNotPresent
// (the default) pulls only when the image is missing.
func (p *Pod) pull(ctx context.Context, c *proto.ContainerSpec) error {
	policy := c.PullPolicy
	switch policy {
	case "", "IfNotPresent":
		if _, err := p.cfg.Docker.InspectImage(c.Image); err == nil {
			return nil
		} else if !errors.Is(err, docker.ErrNoSuchImage) {
			return fmt.Errorf("inspect image %q: %v: %w", c.Image, err, dockerClass(err))
		}
	case "Always":
	default:
		return fmt.Errorf("image pull policy %q (Always, IfNotPresent): %w", policy, errdefs.ErrInvalidArgument)
	}
	repo, tag := docker.ParseRepositoryTag(c.Image)
	if tag == "" {
		tag = "latest"
	}
	auth := docker.AuthConfiguration{Username: c.PullUser, Password: c.PullPassword}
	if first, _, ok := strings.Cut(repo, "/"); ok && strings.ContainsAny(first, ".:") {
		auth.ServerAddress = first
	}
	err := p.cfg.Docker.PullImage(docker.PullImageOptions{Repository: repo, Tag: tag, Context: ctx}, auth)
	if err != nil {
		return fmt.Errorf("pull image %q (policy %s): %v: %w", c.Image, policyName(policy), err, errdefs.ErrUnavailable)
	}
	return nil
}

func policyName(p string) string {
	if p == "" {
		return "IfNotPresent"
	}
	return p
}

func (p *Pod) inspect(t *task) (proto.ContainerInfo, error) {
	c, err := p.cfg.Docker.InspectContainerWithOptions(docker.InspectContainerOptions{ID: t.containerID})
	if err != nil {
		return proto.ContainerInfo{}, err
	}
	info := proto.ContainerInfo{
		ID:       c.ID,
		Name:     strings.TrimPrefix(c.Name, "/"),
		Pid:      c.State.Pid,
		StartAt:  c.State.StartedAt,
		FinishAt: c.State.FinishedAt,
		Status:   c.State.Status,
		ExitCode: c.State.ExitCode,
	}
	if c.Config != nil {
		info.Hostname = c.Config.Hostname
	}
	if c.HostConfig != nil {
		info.NetworkMode = c.HostConfig.NetworkMode
	}
	info.IPAddress = containerIP(c)
	p.mu.Lock()
	if isJoined(info.NetworkMode) {
		// A joined container reports the pod's network: the network
		// container's address and mode ("cni" in CNI mode).
		info.IPAddress, info.NetworkMode = p.podIP, p.podNetMode
	}
	if info.NetworkMode == "host" && info.IPAddress == "" {
		info.IPAddress = p.cfg.NodeAddr
	}
	info.Revision = t.revision
	p.mu.Unlock()
	return info, nil
}

// dockerClass maps a go-dockerclient error to an error class.
func dockerClass(err error) error {
	var nsc *docker.NoSuchContainer
	var derr *docker.Error
	switch {
	case errors.Is(err, docker.ErrNoSuchImage), errors.As(err, &nsc):
		return errdefs.ErrNotFound
	case errors.Is(err, docker.ErrContainerAlreadyExists):
		return errdefs.ErrAlreadyExists
	case errors.As(err, &derr) && derr.Status >= 400 && derr.Status < 500:
		return errdefs.ErrInvalidArgument
	}
	return errdefs.ErrUnavailable
}
