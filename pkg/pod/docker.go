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

// createOptions translates t into docker's create options.
func (p *Pod) createOptions(ctx context.Context, t *task, first bool) (docker.CreateContainerOptions, error) {
	return p.createOptionsFor(ctx, t, t.spec, first)
}

// createOptionsFor is createOptions with spec in place of t's own (UpdateEnv
// creates t's next container from a changed copy).
func (p *Pod) createOptionsFor(ctx context.Context, t *task, spec *proto.TaskSpec, first bool) (docker.CreateContainerOptions, error) {
	c := spec.Container
	img, err := p.cfg.Docker.InspectImage(c.Image)
	if err != nil {
		return docker.CreateContainerOptions{}, fmt.Errorf("image %q: %v: %w", c.Image, err, dockerClass(err))
	}
	var imageEntrypoint []string
	if img.Config != nil {
		imageEntrypoint = img.Config.Entrypoint
	}
	entrypoint, cmd, err := commandFor(c, imageEntrypoint)
	if err != nil {
		return docker.CreateContainerOptions{}, err
	}
	params, err := parseParams(c.Parameters)
	if err != nil {
		return docker.CreateContainerOptions{}, err
	}
	env := containerEnv{podID: p.cfg.PodID, nodeAddr: p.cfg.NodeAddr, hostIP: p.cfg.NodeAddr}
	p.mu.Lock()
	netID := p.netID
	if p.cfg.Network == NetworkCNI {
		env.hostIP = p.hostIP
		env.cniName = p.cfg.CNI.IfName
	}
	p.mu.Unlock()
	labels := map[string]string{}
	for k, v := range c.Labels {
		labels[k] = v
	}
	for k, v := range p.cfg.Labels {
		labels[k] = v
	}
	labels[LabelPod] = p.cfg.PodID
	labels[LabelTask] = t.id
	labels[LabelRole] = "business"

	cfg := &docker.Config{
		Image:      c.Image,
		Env:        buildEnv(env, spec),
		Cmd:        cmd,
		Entrypoint: entrypoint,
		Labels:     labels,
	}
	if entrypoint == nil && len(imageEntrypoint) == 0 {
		cfg.Entrypoint = nil
	}
	hc := &docker.HostConfig{
		Privileged:     c.Privileged,
		OOMKillDisable: params.oomKillDisable,
		Ulimits:        params.ulimits,
		AutoRemove:     params.autoRemove,
		ShmSize:        params.shmSize,
	}
	if err := applyResources(hc, spec.Resources); err != nil {
		return docker.CreateContainerOptions{}, err
	}
	if t.cpuset != nil {
		hc.CPUSetCPUs = t.cpuset.CPUs
		hc.CPUSetMEMs = t.cpuset.Mems
	}
	if hc.Binds, err = binds(c.Volumes, p.cfg.PodID, p.cfg.SandboxDir); err != nil {
		return docker.CreateContainerOptions{}, err
	}
	var netCfg *docker.NetworkingConfig
	switch {
	case p.cfg.Network == NetworkCNI || !first:
		hc.NetworkMode = "container:" + netID
	default:
		mode, err := cnmNetworkMode(c.NetworkMode, params)
		if err != nil {
			return docker.CreateContainerOptions{}, err
		}
		hc.NetworkMode = mode
		if mode != "host" {
			cfg.Hostname = c.Hostname
		}
		if mode == "bridge" {
			specs := make([]*proto.TaskSpec, len(p.tasks))
			for i, o := range p.tasks {
				specs[i] = o.spec
				if o == t {
					specs[i] = spec
				}
			}
			cfg.ExposedPorts, hc.PortBindings = portBindings(specs, p.cfg.PortBindIP)
		}
		if params.ip != "" {
			netCfg = &docker.NetworkingConfig{EndpointsConfig: map[string]*docker.EndpointConfig{
				mode: {IPAMConfig: &docker.EndpointIPAMConfig{IPv4Address: params.ip}},
			}}
		}
	}
	return docker.CreateContainerOptions{Name: t.name, Config: cfg, HostConfig: hc, NetworkingConfig: netCfg}, nil
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
	if c.NetworkSettings != nil {
		info.IPAddress = c.NetworkSettings.IPAddress
		for _, n := range c.NetworkSettings.Networks {
			if info.IPAddress == "" {
				info.IPAddress = n.IPAddress
			}
		}
	}
	p.mu.Lock()
	if p.cfg.Network == NetworkCNI {
		info.IPAddress = p.hostIP
		info.NetworkMode = "cni"
	} else if strings.HasPrefix(info.NetworkMode, "container:") {
		// A joined container reports its network owner's address.
		for _, o := range p.tasks {
			if o.containerID == p.netID && o != t {
				info.IPAddress = o.info.IPAddress
				info.NetworkMode = o.info.NetworkMode
			}
		}
	}
	if info.NetworkMode == "host" && info.IPAddress == "" {
		info.IPAddress = p.cfg.NodeAddr
	}
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
