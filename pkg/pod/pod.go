package pod

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"sync"

	docker "github.com/fsouza/go-dockerclient"
	"github.com/jonboulle/clockwork"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/remotefile"
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

// DefaultNetworkImage runs the network container when Config.NetworkImage
// is empty; agents must have it or reach its registry.
const DefaultNetworkImage = "registry.k8s.io/pause:3.9"

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
	// Framework is the Mesos framework's ID (MESOS_FRAMEWORK_ID): two
	// frameworks on one dockerd (two clusters) may run pods of the same
	// ID, so container names carry a digest of it and containers its
	// label, and a crashed executor's successor tears down only its own
	// framework's.
	Framework string
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
	// NetworkImage and NetworkCommand run the network (pause-like)
	// container that holds the network of a CNI pod and of a CNM pod of
	// several containers (not HOST); the image must be present or
	// pullable (default DefaultNetworkImage) and the command must keep
	// running (nil is the image's own).
	NetworkImage   string
	NetworkCommand []string
	// CPUSets pins CPUs; nil never pins.
	CPUSets CPUSetPlanner
	// Labels are added to every container (tests use them to clean up).
	Labels map[string]string
	// Remote fetches the tasks' configmap items of type http, https and
	// ftp when the pod starts; nil is a Fetcher with the defaults.
	Remote *remotefile.Fetcher
	// OnUpdate receives every task state change, in order. It is called
	// with the pod's lock held: it must not call back into the Pod.
	OnUpdate func(Update)
	// Clock times kill grace periods and an in-place update's drain
	// period; nil is the wall clock.
	Clock clockwork.Clock
}

// Pod is a task group running as Docker containers sharing one network.
// Start, Wait, Kill and State are the executor contract (STYLE 8).
type Pod struct {
	cfg   Config
	tasks []*task

	// netShared: the business containers join a network container
	// (CNI, or CNM with several containers outside HOST mode); else
	// each container has a network of its own (HOST, or a pod of one).
	netShared bool

	mu           sync.Mutex
	state        taskstate.State
	failure      string // why the pod failed; "" otherwise
	killed       bool   // Kill was called
	netContainer string // the network container the business containers join
	podIP        string // the network container's address (CNI: HOST)
	podNetMode   string // what joined containers report as NetworkMode: "cni", or the network container's
	cni          *cniRecord
	updating     uint64 // the revision an Update is moving the pod to; 0 when none runs
	done         chan struct{}
	started      chan struct{} // closed when Start returns
	halted       chan struct{} // closed once the pod is killed or failed
	cancelMon    context.CancelFunc
	monCtx       context.Context
	finishOnce   sync.Once
	startOnce    sync.Once
	haltOnce     sync.Once
	teardownErr  error // set before done closes

	// The log copiers (copyLogs) read under logsCtx, which ends once the
	// pod is torn down.
	logCopiers sync.WaitGroup
	logsCtx    context.Context
	cancelLogs context.CancelFunc
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
	restarting  chan struct{} // non-nil while Restart, UpdateEnv or an in-place update runs; closed when it ends
	spare       string        // re-creation: the next container before the switch, the old one after
	monitoring  bool
	cpuset      *CPUSet
	autoRemoved bool
	// revision is the application revision the container runs
	// (ContainerInfo.Revision).
	revision uint64
	// imageID is the image whose files the container has: the image it
	// was created from, or the one a hot-patch copied in last (docker
	// still names the first).
	imageID string
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
	if cfg.Remote == nil {
		cfg.Remote = &remotefile.Fetcher{}
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
	if cfg.Clock == nil {
		cfg.Clock = clockwork.NewRealClock()
	}
	if cfg.NetworkImage == "" {
		cfg.NetworkImage = DefaultNetworkImage
	}
	cfg.CNI = cfg.CNI.withDefaults()
	p := &Pod{cfg: cfg, state: taskstate.Staging, done: make(chan struct{}), started: make(chan struct{}), halted: make(chan struct{})}
	p.monCtx, p.cancelMon = context.WithCancel(context.Background())
	p.logsCtx, p.cancelLogs = context.WithCancel(context.Background())
	p.netShared = cfg.Network == NetworkCNI || (len(tasks) > 1 && !hostNetwork(tasks[0].Spec))
	seen := map[string]bool{}
	for _, t := range tasks {
		if !validName.MatchString(t.ID) {
			return nil, fmt.Errorf("task ID %q: want [a-zA-Z0-9][a-zA-Z0-9_.-]* (it names the task's log files): %w", t.ID, errdefs.ErrInvalidArgument)
		}
		if t.Spec == nil || t.Spec.Container == nil {
			return nil, fmt.Errorf("task %q: not a container task: %w", t.ID, errdefs.ErrInvalidArgument)
		}
		if !validName.MatchString(t.Spec.Name) || seen[t.Spec.Name] {
			return nil, fmt.Errorf("task %q: container name %q empty, invalid or repeated: %w", t.ID, t.Spec.Name, errdefs.ErrInvalidArgument)
		}
		if p.netShared && t.Spec.Name == networkContainerName {
			return nil, fmt.Errorf("task %q: container name %q is the pod's network container's: %w", t.ID, t.Spec.Name, errdefs.ErrInvalidArgument)
		}
		seen[t.Spec.Name] = true
		p.tasks = append(p.tasks, &task{
			id: t.ID, spec: t.Spec, state: taskstate.Staging,
			name:     ContainerName(cfg.Framework, cfg.PodID, t.Spec.Name),
			exited:   make(chan struct{}),
			revision: t.Spec.Instance.Version,
		})
	}
	return p, nil
}

var validName = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]*$`)

// ContainerName is the docker name of container name of pod podID of
// framework: bcs-<digest>-<pod>-<name>, the digest the first 8 hex
// digits of the framework ID's SHA-256 (a framework ID is 40 characters).
func ContainerName(framework, podID, name string) string {
	digest := sha256.Sum256([]byte(framework))
	return "bcs-" + hex.EncodeToString(digest[:4]) + "-" + podID + "-" + name
}

// podLabels are the labels of every container of the pod: the
// configured ones, the pod's and its framework's.
func (cfg *Config) podLabels() map[string]string {
	labels := map[string]string{}
	for k, v := range cfg.Labels {
		labels[k] = v
	}
	labels[LabelPod] = cfg.PodID
	labels[LabelFramework] = cfg.Framework
	return labels
}

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
	// Spec is the spec the task's container runs (the launch's, or the
	// last update's); callers must not modify it.
	Spec *proto.TaskSpec
}

// Tasks returns a snapshot of every task, in group order.
func (p *Pod) Tasks() []TaskStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]TaskStatus, len(p.tasks))
	for i, t := range p.tasks {
		out[i] = TaskStatus{TaskID: t.id, State: t.state, Message: t.message, Info: t.info, Spec: t.spec}
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
