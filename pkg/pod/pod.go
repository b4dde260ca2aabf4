package pod

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	docker "github.com/fsouza/go-dockerclient"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/taskstate"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// NetworkType selects how a pod gets its network.
type NetworkType string

// The network types (executor flag --network-mode: "" is CNM, "cni" is CNI).
const (
	NetworkCNM NetworkType = "cnm"
	NetworkCNI NetworkType = "cni"
)

// Task is one task of the group: a Mesos TaskID and its TaskInfo.data.
type Task struct {
	ID   string
	Spec *proto.TaskSpec
}

// Update is a task state change, for the executor to turn into a Mesos
// TaskStatus. Info is the seed 001 BcsContainerInfo (TaskStatus.data).
type Update struct {
	TaskID  string
	State   taskstate.State
	Message string
	Info    proto.ContainerInfo
}

// CPUSetPlanner pins whole CPUs (pkg/numa implements it, seed 001 NUMA
// rules). Plan returns the docker cpuset-cpus and cpuset-mems values held
// under owner, both "" when the task is not to be pinned; Release frees
// what owner holds.
type CPUSetPlanner interface {
	Plan(owner string, cpus float64, pin bool) (cpusetCPUs, cpusetMems string, err error)
	Release(owner string) error
}

// Config is what a Pod needs besides its tasks.
type Config struct {
	// Docker is the client of the local dockerd.
	Docker *docker.Client
	// PodID is the pod's ID (the executor ID); it names containers and
	// the state file and is injected as BCS_POD_ID.
	PodID string
	// SandboxDir is the executor sandbox: pod-private volumes and the
	// state file live there.
	SandboxDir string
	// NodeAddr is the agent's address (BCS_NODE_ADDR; HOST in CNM mode).
	NodeAddr string
	// PortBindIP is the host address BRIDGE ports are published on; ""
	// is every address.
	PortBindIP string
	// Network is CNM or CNI; "" follows the first task's networkType
	// (cnm when unset).
	Network NetworkType
	// CNI configures CNI mode.
	CNI CNIConfig
	// CPUSets pins CPUs; nil never pins.
	CPUSets CPUSetPlanner
	// Labels are added to every container (tests use them to clean up).
	Labels map[string]string
	// OnUpdate receives every task state change, in order. It is called
	// with the pod's lock held: it must not call back into the Pod.
	OnUpdate func(Update)
	// After is the timer used for kill grace periods; nil is time.After.
	After func(time.Duration) <-chan time.Time
}

// Pod is a task group running as Docker containers sharing one network.
// Start, Wait, Kill and State are the executor contract (STYLE 8).
type Pod struct {
	cfg   Config
	tasks []*task

	mu          sync.Mutex
	state       taskstate.State
	failure     string // why the pod failed; "" otherwise
	killed      bool   // Kill was called
	netID       string // the container whose network the others join
	hostIP      string // HOST
	cni         *cniRecord
	done        chan struct{}
	started     chan struct{} // closed when Start returns
	cancelMon   context.CancelFunc
	monCtx      context.Context
	finishOnce  sync.Once
	startOnce   sync.Once
	teardownErr error // set before done closes
}

type task struct {
	id   string
	spec *proto.TaskSpec

	state       taskstate.State
	message     string
	containerID string
	name        string
	info        proto.ContainerInfo
	exited      chan struct{} // closed (by markExited) once the task is over
	exitOnce    sync.Once
	restartGen  int           // bumped by each in-place restart
	restarting  chan struct{} // non-nil while Restart or UpdateEnv runs; closed when it ends
	spare       string        // UpdateEnv: the next container before the switch, the old one after
	monitoring  bool
	cpuset      *CPUSet
	autoRemoved bool
}

// New checks the tasks and returns a staged pod. It talks to nobody.
func New(cfg Config, tasks []Task) (*Pod, error) {
	if cfg.Docker == nil {
		return nil, fmt.Errorf("pod %q: no docker client: %w", cfg.PodID, errdefs.ErrInvalidArgument)
	}
	if !validName.MatchString(cfg.PodID) {
		return nil, fmt.Errorf("pod ID %q: want [a-zA-Z0-9][a-zA-Z0-9_.-]*: %w", cfg.PodID, errdefs.ErrInvalidArgument)
	}
	if cfg.SandboxDir == "" {
		return nil, fmt.Errorf("pod %q: no sandbox directory: %w", cfg.PodID, errdefs.ErrInvalidArgument)
	}
	if len(tasks) == 0 {
		return nil, fmt.Errorf("pod %q: no tasks: %w", cfg.PodID, errdefs.ErrInvalidArgument)
	}
	// Config.Network "" follows the first task's networkType.
	switch cfg.Network {
	case "":
		cfg.Network = NetworkCNM
		if tasks[0].Spec != nil && tasks[0].Spec.Container != nil && strings.EqualFold(tasks[0].Spec.Container.NetworkType, string(NetworkCNI)) {
			cfg.Network = NetworkCNI
		}
	case NetworkCNM, NetworkCNI:
	default:
		return nil, fmt.Errorf("pod %q: network type %q (cnm, cni): %w", cfg.PodID, cfg.Network, errdefs.ErrInvalidArgument)
	}
	if cfg.After == nil {
		cfg.After = time.After
	}
	cfg.CNI = cfg.CNI.withDefaults()
	p := &Pod{cfg: cfg, state: taskstate.Staging, done: make(chan struct{}), started: make(chan struct{})}
	p.monCtx, p.cancelMon = context.WithCancel(context.Background())
	seen := map[string]bool{}
	for _, t := range tasks {
		if t.Spec == nil || t.Spec.Container == nil {
			return nil, fmt.Errorf("task %q: not a container task: %w", t.ID, errdefs.ErrInvalidArgument)
		}
		if !validName.MatchString(t.Spec.Name) || seen[t.Spec.Name] {
			return nil, fmt.Errorf("task %q: container name %q empty, invalid or repeated: %w", t.ID, t.Spec.Name, errdefs.ErrInvalidArgument)
		}
		seen[t.Spec.Name] = true
		p.tasks = append(p.tasks, &task{
			id: t.ID, spec: t.Spec, state: taskstate.Staging,
			name:   containerName(cfg.PodID, t.Spec.Name),
			exited: make(chan struct{}),
		})
	}
	return p, nil
}

var validName = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]*$`)

func containerName(podID, name string) string { return "bcs-" + podID + "-" + name }

// State is the pod's state.
func (p *Pod) State() taskstate.State {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.state
}

// TaskStatus is a snapshot of one task.
type TaskStatus struct {
	TaskID  string
	State   taskstate.State
	Message string
	Info    proto.ContainerInfo
}

// Tasks returns a snapshot of every task, in group order.
func (p *Pod) Tasks() []TaskStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]TaskStatus, len(p.tasks))
	for i, t := range p.tasks {
		out[i] = TaskStatus{TaskID: t.id, State: t.state, Message: t.message, Info: t.info}
	}
	return out
}

// Done is closed once every container has exited and the pod is torn down.
func (p *Pod) Done() <-chan struct{} { return p.done }

// Wait blocks until the pod is done and returns its final state, and the
// teardown error if something could not be removed (the state file then
// stays for Cleanup).
func (p *Pod) Wait(ctx context.Context) (taskstate.State, error) {
	select {
	case <-p.done:
		return p.State(), p.teardownErr
	case <-ctx.Done():
		return p.State(), ctx.Err()
	}
}

// setTask moves t to state with message and reports it. Caller holds mu.
func (p *Pod) setTask(t *task, to taskstate.State, msg string) {
	if t.state == to {
		return
	}
	next, err := taskstate.Transition(t.state, to)
	if err != nil {
		return // a late event for a task already terminal
	}
	t.state = next
	t.message = msg
	if p.cfg.OnUpdate != nil {
		p.cfg.OnUpdate(Update{TaskID: t.id, State: next, Message: msg, Info: t.info})
	}
}

func (p *Pod) setPod(to taskstate.State) {
	if next, err := taskstate.Transition(p.state, to); err == nil {
		p.state = next
	}
}

// Start pulls the images, sets up the network and starts the containers in
// group order (seed 001): the first container starts first and owns the
// network (CNM), or a network container does (CNI); the others join it.
// Any failure fails every task, kills what was started and tears the pod
// down; the error is returned as well.
func (p *Pod) Start(ctx context.Context) error {
	defer p.startOnce.Do(func() { close(p.started) })
	p.mu.Lock()
	if p.state != taskstate.Staging {
		p.mu.Unlock()
		return fmt.Errorf("pod %q: start in state %s: %w", p.cfg.PodID, p.state, errdefs.ErrConflict)
	}
	p.setPod(taskstate.Starting)
	p.mu.Unlock()

	if err := p.cfg.Docker.PingWithContext(ctx); err != nil {
		err = fmt.Errorf("cannot reach dockerd (%s): %v: %w", p.cfg.Docker.Endpoint(), err, errdefs.ErrUnavailable)
		p.fail(err.Error())
		p.finish()
		return err
	}
	if err := p.saveRecord(); err != nil {
		p.fail(err.Error())
		p.finish()
		return err
	}
	err := p.start(ctx)
	if err != nil {
		p.fail(err.Error())
	}
	p.mu.Lock()
	killed := p.killed
	if err == nil && !killed {
		p.setPod(taskstate.Running)
	}
	for _, t := range p.tasks {
		if t.containerID != "" && !t.monitoring {
			t.monitoring = true
			go p.monitor(t)
		}
	}
	var pending []*task
	for _, t := range p.tasks {
		if t.containerID == "" && !t.state.Terminal() {
			pending = append(pending, t)
		}
	}
	all := len(pending) == 0
	for _, t := range p.tasks {
		all = all && t.state.Terminal()
	}
	p.mu.Unlock()
	for _, t := range pending {
		p.exitedTask(t, nil)
	}
	if all {
		go p.finishAfterStart()
	}
	if killed {
		// Containers created while Kill ran have not been signalled.
		go p.killAll(syscall.SIGKILL)
	}
	if err == nil && killed {
		return fmt.Errorf("pod %q: killed while starting: %w", p.cfg.PodID, errdefs.ErrConflict)
	}
	return err
}

func (p *Pod) start(ctx context.Context) error {
	for _, t := range p.tasks {
		if err := p.pull(ctx, t.spec.Container); err != nil {
			return fmt.Errorf("task %q: %w", t.id, err)
		}
	}
	if p.cfg.CPUSets != nil {
		for _, t := range p.tasks {
			cpus, mems, err := p.cfg.CPUSets.Plan(p.cpusetOwner(t), t.spec.Resources.CPUs, t.spec.Resources.PinCPUs)
			if err != nil {
				return fmt.Errorf("task %q: cpuset: %w", t.id, err)
			}
			if cpus != "" {
				p.mu.Lock()
				t.cpuset = &CPUSet{CPUs: cpus, Mems: mems}
				p.mu.Unlock()
			}
		}
		if err := p.saveRecord(); err != nil { // names the cpuset owners
			return err
		}
	}
	if p.cfg.Network == NetworkCNI {
		if err := p.setupCNI(ctx); err != nil {
			return err
		}
	}
	for i, t := range p.tasks {
		p.mu.Lock()
		if p.killed {
			p.mu.Unlock()
			return nil
		}
		p.setTask(t, taskstate.Starting, "")
		p.mu.Unlock()
		if err := p.startTask(ctx, t, i == 0); err != nil {
			if i > 0 {
				return fmt.Errorf("task %q: joining the network of task %q: %w", t.id, p.tasks[0].id, err)
			}
			return fmt.Errorf("task %q: %w", t.id, err)
		}
	}
	for _, t := range p.tasks {
		info, err := p.inspect(t)
		p.mu.Lock()
		if err == nil {
			t.info = info
		}
		p.setTask(t, taskstate.Running, "")
		p.mu.Unlock()
	}
	return nil
}

func (p *Pod) cpusetOwner(t *task) string { return p.cfg.PodID + "/" + t.spec.Name }

// startTask creates, fills and starts t's container.
func (p *Pod) startTask(ctx context.Context, t *task, first bool) error {
	opts, err := p.createOptions(ctx, t, first)
	if err != nil {
		return err
	}
	opts.Context = ctx
	c, err := p.cfg.Docker.CreateContainer(opts)
	if err != nil {
		return fmt.Errorf("create container %q: %v: %w", opts.Name, err, dockerClass(err))
	}
	p.mu.Lock()
	t.containerID = c.ID
	t.autoRemoved = opts.HostConfig.AutoRemove
	if first && p.netID == "" {
		p.netID = c.ID
	}
	p.mu.Unlock()
	if err := p.saveRecord(); err != nil {
		return err
	}
	if err := p.writeFiles(ctx, c.ID, t.spec.Files); err != nil {
		return err
	}
	if err := p.cfg.Docker.StartContainerWithContext(c.ID, nil, ctx); err != nil {
		return fmt.Errorf("start container %q: %v: %w", opts.Name, err, dockerClass(err))
	}
	return nil
}

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

// monitor waits for t's container to exit, across in-place restarts.
func (p *Pod) monitor(t *task) {
	for {
		p.mu.Lock()
		gen, id := t.restartGen, t.containerID
		p.mu.Unlock()
		code, err := p.cfg.Docker.WaitContainerWithContext(id, p.monCtx)
		p.mu.Lock()
		restarting, restarted := t.restarting, t.restartGen != gen
		p.mu.Unlock()
		if restarting != nil {
			<-restarting
			continue
		}
		if restarted {
			continue
		}
		if err != nil && p.monCtx.Err() != nil {
			return
		}
		if err != nil {
			var nsc *docker.NoSuchContainer
			if !errors.As(err, &nsc) {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			code = -1
		}
		p.exitedTask(t, &code)
		return
	}
}

// exitedTask records that t's container exited (code nil: never created)
// and applies seed 001: a failure fails every task and kills every
// container; once all have exited the pod is done.
func (p *Pod) exitedTask(t *task, code *int) {
	p.mu.Lock()
	if t.state.Terminal() {
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	info, inspectErr := proto.ContainerInfo{}, error(nil)
	if code != nil {
		info, inspectErr = p.inspect(t)
	}
	p.mu.Lock()
	if inspectErr == nil && code != nil {
		info.IPAddress, info.NetworkMode = t.info.IPAddress, t.info.NetworkMode
		t.info = info
	} else if code != nil {
		t.info.Status, t.info.ExitCode = "exited", *code
	}
	var killOthers bool
	switch {
	case p.failure != "":
		p.setTask(t, taskstate.Failed, p.failure)
	case code == nil:
		p.setTask(t, taskstate.Killed, "killed before its container was created")
	case t.state == taskstate.Killing:
		p.setTask(t, taskstate.Killed, fmt.Sprintf("killed; container exited with code %d", *code))
	case *code == 0:
		p.setTask(t, taskstate.Finished, "container exited with code 0")
	default:
		msg := fmt.Sprintf("task %q failed: container exited with code %d", t.id, *code)
		p.failure = msg
		p.setTask(t, taskstate.Failed, msg)
		killOthers = true
	}
	p.markExited(t)
	all := true
	for _, o := range p.tasks {
		if !o.state.Terminal() {
			all = false
		}
	}
	p.mu.Unlock()
	if killOthers {
		go p.killAll(syscall.SIGKILL)
	}
	if all {
		go p.finishAfterStart()
	}
}

// markExited closes t.exited once.
func (p *Pod) markExited(t *task) { t.exitOnce.Do(func() { close(t.exited) }) }

// fail records msg as the pod's failure and fails every task that has no
// container yet or is still running; running containers are killed.
func (p *Pod) fail(msg string) {
	p.mu.Lock()
	if p.failure == "" {
		p.failure = msg
	}
	for _, t := range p.tasks {
		if t.containerID == "" && !t.state.Terminal() {
			p.setTask(t, taskstate.Failed, msg)
			p.markExited(t)
		}
	}
	p.mu.Unlock()
	p.killAll(syscall.SIGKILL)
}

// killAll sends sig to every container that has not exited.
func (p *Pod) killAll(sig syscall.Signal) {
	p.mu.Lock()
	var ids []string
	for _, t := range p.tasks {
		if t.containerID != "" && !t.state.Terminal() {
			ids = append(ids, t.containerID)
		}
	}
	p.mu.Unlock()
	for _, id := range ids {
		_ = p.cfg.Docker.KillContainer(docker.KillContainerOptions{ID: id, Signal: docker.Signal(sig)})
	}
}

// Kill stops every task: sig first (SIGTERM when 0), then SIGKILL once a
// task's grace period ends. grace < 0 takes each task's
// KillGracePeriodSeconds. Kill returns when the pod is done or ctx ends.
func (p *Pod) Kill(ctx context.Context, sig syscall.Signal, grace time.Duration) error {
	if sig == 0 {
		sig = syscall.SIGTERM
	}
	p.mu.Lock()
	if p.state.Terminal() {
		p.mu.Unlock()
		return nil
	}
	p.killed = true
	if p.state == taskstate.Staging { // never started: nothing to stop
		for _, t := range p.tasks {
			p.setTask(t, taskstate.Killed, "killed before start")
			p.markExited(t)
		}
		p.setPod(taskstate.Killed)
		p.startOnce.Do(func() { close(p.started) })
		p.mu.Unlock()
		p.finish()
		return nil
	}
	if p.state == taskstate.Running {
		p.setPod(taskstate.Killing)
	}
	var running []*task
	var graces []time.Duration // read under mu: UpdateEnv swaps t.spec
	for _, t := range p.tasks {
		if t.state == taskstate.Running || t.state == taskstate.Starting {
			p.setTask(t, taskstate.Killing, "")
			running = append(running, t)
			g := grace
			if g < 0 {
				g = time.Duration(t.spec.KillGracePeriodSeconds * float64(time.Second))
			}
			graces = append(graces, g)
		}
	}
	p.mu.Unlock()
	for i, t := range running {
		go p.killTask(t, sig, graces[i])
	}
	select {
	case <-p.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// killTask sends sig to t's container and SIGKILL after grace.
func (p *Pod) killTask(t *task, sig syscall.Signal, grace time.Duration) {
	p.mu.Lock()
	id := t.containerID
	p.mu.Unlock()
	if id == "" {
		return // Start notices p.killed
	}
	if sig != syscall.SIGKILL {
		_ = p.cfg.Docker.KillContainer(docker.KillContainerOptions{ID: id, Signal: docker.Signal(sig)})
		select {
		case <-t.exited:
			return
		case <-p.cfg.After(grace):
		}
	}
	_ = p.cfg.Docker.KillContainer(docker.KillContainerOptions{ID: id, Signal: docker.SIGKILL})
}

// finishAfterStart tears the pod down once Start has returned.
func (p *Pod) finishAfterStart() {
	<-p.started
	p.finish()
}

// finish tears the pod down once: business containers, then the CNI
// attachment, then the network container, then cpusets and the state file.
func (p *Pod) finish() {
	p.finishOnce.Do(func() {
		p.cancelMon()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		p.teardownErr = teardown(ctx, p.cfg, p.record())
		p.mu.Lock()
		switch {
		case p.failure != "":
			p.setPod(taskstate.Failed)
		case p.killed:
			if p.state != taskstate.Killing {
				p.setPod(taskstate.Killing)
			}
			p.setPod(taskstate.Killed)
		default:
			p.setPod(taskstate.Finished)
		}
		if !p.state.Terminal() { // failed before running
			p.state = taskstate.Failed
		}
		p.mu.Unlock()
		close(p.done)
	})
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
