package pod

import (
	"context"
	"errors"
	"fmt"
	"strings"

	docker "github.com/fsouza/go-dockerclient"

	"github.com/bcs-mesos/bcs-mesos/pkg/dockerparam"
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
	var imageUser string
	if img.Config != nil {
		imageEntrypoint, imageUser = img.Config.Entrypoint, img.Config.User
	}
	entrypoint, cmd, err := commandFor(c, imageEntrypoint)
	if err != nil {
		return containerPlan{}, err
	}
	params, err := parseParams(c.Parameters)
	if err != nil {
		return containerPlan{}, err
	}
	pn, err := p.podNetworkFor(t, spec, params)
	if err != nil {
		return containerPlan{}, err
	}
	user, err := containerUser(spec.Identity, params.User, imageUser)
	if err != nil {
		return containerPlan{}, err
	}
	cfg := &docker.Config{
		Image:      c.Image,
		Env:        buildEnv(pn.env, spec),
		Cmd:        cmd,
		Entrypoint: entrypoint,
		Labels:     p.businessLabels(t, c),
		User:       user,
	}
	if entrypoint == nil && len(imageEntrypoint) == 0 {
		cfg.Entrypoint = nil
	}
	hc, err := p.hostConfig(c, spec.Resources, params, pn.cpuset)
	if err != nil {
		return containerPlan{}, err
	}
	netCfg, err := p.joinNetwork(cfg, hc, c, params, pn)
	if err != nil {
		return containerPlan{}, err
	}
	opts := docker.CreateContainerOptions{Name: t.name, Config: cfg, HostConfig: hc, NetworkingConfig: netCfg}
	return containerPlan{opts: opts, imageID: img.ID}, nil
}

// podNetwork is what a business container's options take from its pod,
// read under p.mu.
type podNetwork struct {
	env containerEnv
	// netContainer is the network container's ID; "" in a pod without
	// one, which is HOST (every container takes the first task's mode)
	// or has one container.
	netContainer string
	// netSpec and netParams set the network when there is no network
	// container: the first task's.
	netSpec   *proto.ContainerSpec
	netParams dockerparam.Options
	// specs are every task's spec, spec in t's place: their ports are
	// published together.
	specs  []*proto.TaskSpec
	cpuset *CPUSet
}

// podNetworkFor reads the pod's network as t's container with spec
// (whose parsed parameters are params) would join it.
func (p *Pod) podNetworkFor(t *task, spec *proto.TaskSpec, params dockerparam.Options) (podNetwork, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pn := podNetwork{
		env:          containerEnv{podID: p.cfg.PodID, nodeAddr: p.cfg.NodeAddr, hostIP: p.cfg.NodeAddr},
		netContainer: p.netContainer,
		netSpec:      p.tasks[0].spec.Container,
		netParams:    params,
		specs:        make([]*proto.TaskSpec, len(p.tasks)),
		cpuset:       t.cpuset,
	}
	if p.cfg.Network == NetworkCNI {
		pn.env.hostIP = p.podIP
		pn.env.cniName = p.cfg.CNI.IfName
	}
	if t != p.tasks[0] {
		var err error
		if pn.netParams, err = parseParams(pn.netSpec.Parameters); err != nil {
			return podNetwork{}, fmt.Errorf("task %q: %w", p.tasks[0].id, err)
		}
	} else {
		pn.netSpec = spec.Container
	}
	for i, o := range p.tasks {
		pn.specs[i] = o.spec
		if o == t {
			pn.specs[i] = spec
		}
	}
	return pn, nil
}

// businessLabels are the labels of t's container c: its own, the pod's,
// and those naming its task and role.
func (p *Pod) businessLabels(t *task, c *proto.ContainerSpec) map[string]string {
	labels := map[string]string{}
	for k, v := range c.Labels {
		labels[k] = v
	}
	for k, v := range p.cfg.podLabels() {
		labels[k] = v
	}
	labels[LabelTask] = t.id
	labels[LabelRole] = "business"
	return labels
}

// hostConfig is container c's host configuration but for its network:
// privileges, resources, docker parameters, pinned cores and volumes.
func (p *Pod) hostConfig(c *proto.ContainerSpec, res proto.Resources, params dockerparam.Options, cpuset *CPUSet) (*docker.HostConfig, error) {
	hc := &docker.HostConfig{Privileged: c.Privileged}
	if err := applyResources(hc, res); err != nil {
		return nil, err
	}
	applyParams(hc, params)
	if cpuset != nil {
		hc.CPUSetCPUs = cpuset.CPUs
		hc.CPUSetMEMs = cpuset.Mems
	}
	var err error
	if hc.Binds, err = binds(c.Volumes, p.cfg.PodID, p.cfg.SandboxDir); err != nil {
		return nil, err
	}
	return hc, nil
}

// joinNetwork puts container c in the pod's network: the network
// container's when there is one, else a network of its own in the first
// task's mode, with the pod's ports published in bridge mode.
func (p *Pod) joinNetwork(cfg *docker.Config, hc *docker.HostConfig, c *proto.ContainerSpec, params dockerparam.Options, pn podNetwork) (*docker.NetworkingConfig, error) {
	if pn.netContainer != "" {
		hc.NetworkMode = "container:" + pn.netContainer
		return nil, nil
	}
	mode, err := networkMode(pn.netSpec.NetworkMode, pn.netParams)
	if err != nil {
		return nil, err
	}
	hc.NetworkMode = mode
	if mode != "host" {
		cfg.Hostname = c.Hostname
	}
	if mode == "bridge" {
		cfg.ExposedPorts, hc.PortBindings = portBindings(pn.specs, p.cfg.PortBindIP)
	}
	return ipConfig(mode, params.Address(pn.netSpec.NetworkMode)), nil
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
