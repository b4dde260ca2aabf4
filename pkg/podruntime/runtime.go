package podruntime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"sync"
	"syscall"
	"time"

	docker "github.com/fsouza/go-dockerclient"
	"github.com/jonboulle/clockwork"
	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/executor"
	"github.com/bcs-mesos/bcs-mesos/pkg/pod"
	"github.com/bcs-mesos/bcs-mesos/pkg/remotefile"
	"github.com/bcs-mesos/bcs-mesos/pkg/taskstate"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// Config configures the pod runtime.
type Config struct {
	// Docker is the client of the local dockerd.
	Docker *docker.Client
	// ExecutorID names the pods: the first task group's pod ID is the
	// executor ID (characters docker refuses in names become '-'), later
	// groups of the same executor get ".2", ".3", …
	ExecutorID string
	// FrameworkID is the framework's (MESOS_FRAMEWORK_ID): its digest is
	// part of container names, and the sweep tears down only its pods.
	FrameworkID string
	// SandboxDir is the executor's sandbox (MESOS_SANDBOX): pod state
	// files, pod-private volumes and the owner file live there.
	SandboxDir string
	// NodeAddr is the agent's address: BCS_NODE_ADDR, HOST in CNM mode,
	// and where HOST-mode and published BRIDGE ports are probed.
	NodeAddr string
	// PortBindIP is the host address BRIDGE ports are published on; ""
	// is every address.
	PortBindIP string
	// AgentEndpoint is the agent's API (MESOS_AGENT_ENDPOINT, host:port),
	// which no health check probes.
	AgentEndpoint string
	// Network is pod.NetworkCNI for --network-mode cni; "" follows each
	// task group's networkType.
	Network pod.NetworkType
	// CNI configures CNI mode.
	CNI pod.CNIConfig
	// NetworkImage and NetworkCommand run the pods' network containers
	// (pod.Config); "" is pod.DefaultNetworkImage.
	NetworkImage   string
	NetworkCommand []string
	// CPUSets pins CPUs (pkg/numa); nil never pins. It is asked only for
	// tasks that want pinning.
	CPUSets pod.CPUSetPlanner
	// Labels go on every container.
	Labels map[string]string
	// Remote fetches the configmap items of type http, https and ftp;
	// nil is a Fetcher with the defaults that keeps no copy.
	Remote *remotefile.Fetcher
	// Clock drives the health checks; nil is the wall clock.
	Clock clockwork.Clock
	// Logger defaults to discarding.
	Logger *slog.Logger
	// CommandTimeout bounds exec, restart and the other messages without
	// a timeout of their own; default 60s.
	CommandTimeout time.Duration
	// UpdateTimeout bounds an update message without a timeout of its
	// own, on top of its grace period: pulling a new image may take
	// minutes; default DefaultUpdateTimeout.
	UpdateTimeout time.Duration
}

// DefaultUpdateTimeout is Config.UpdateTimeout's default.
const DefaultUpdateTimeout = 10 * time.Minute

// Runtime runs task groups as Docker pods. It implements executor.Runtime.
type Runtime struct {
	cfg   Config
	queue *reportQueue

	mu     sync.Mutex
	groups []*group
	byTask map[string]*group
	// swept counts the pods of dead executors torn down since start.
	swept int
}

var _ executor.Runtime = (*Runtime)(nil)

// Reasons set on TaskStatus.reason.
var (
	reasonInvalid      = mesos.REASON_TASK_INVALID
	reasonLaunchFailed = mesos.REASON_CONTAINER_LAUNCH_FAILED
	reasonHealth       = mesos.REASON_TASK_HEALTH_CHECK_STATUS_UPDATED
)

// New checks cfg, writes the owner file into the sandbox and tears down
// what crashed predecessors left (Recover). A dockerd that does not answer
// is not an error here: every task launched later fails with a message
// saying so.
func New(ctx context.Context, cfg Config) (*Runtime, error) {
	if cfg.Docker == nil {
		return nil, fmt.Errorf("pod runtime: no docker client: %w", errdefs.ErrInvalidArgument)
	}
	if cfg.SandboxDir == "" || cfg.ExecutorID == "" {
		return nil, fmt.Errorf("pod runtime: sandbox %q and executor ID %q must be set: %w", cfg.SandboxDir, cfg.ExecutorID, errdefs.ErrInvalidArgument)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.CommandTimeout <= 0 {
		cfg.CommandTimeout = time.Minute
	}
	if cfg.UpdateTimeout <= 0 {
		cfg.UpdateTimeout = DefaultUpdateTimeout
	}
	if cfg.CPUSets != nil {
		cfg.CPUSets = pinOnly{cfg.CPUSets}
	}
	if cfg.Remote == nil {
		cfg.Remote = &remotefile.Fetcher{}
	}
	r := &Runtime{cfg: cfg, queue: newReportQueue(), byTask: map[string]*group{}}
	if err := writeOwner(cfg.SandboxDir); err != nil {
		return nil, err
	}
	if _, err := r.SweepDead(ctx); err != nil {
		cfg.Logger.Warn("cleaning up after a previous executor", "err", err)
	}
	return r, nil
}

// SweepDead tears down the pods dead executors of the framework left on
// this agent (Recover) and says how many pods the runtime has torn down
// so since it started.
func (r *Runtime) SweepDead(ctx context.Context) (string, error) {
	n, err := Recover(ctx, r.podConfig(""))
	r.mu.Lock()
	r.swept += n
	total := r.swept
	r.mu.Unlock()
	if n > 0 {
		r.cfg.Logger.Info("tore down the pods of dead executors", "pods", n)
	}
	return fmt.Sprintf("pods of dead executors torn down: %d", total), err
}

// pinOnly asks the planner only for tasks that want pinning, so that an
// agent-wide state file is touched only when it matters.
type pinOnly struct{ pod.CPUSetPlanner }

func (p pinOnly) Plan(owner string, cpus float64, pin bool) (string, string, error) {
	if !pin {
		return "", "", nil
	}
	return p.CPUSetPlanner.Plan(owner, cpus, pin)
}

// podConfig is the pod.Config of pod podID, without OnUpdate.
func (r *Runtime) podConfig(podID string) pod.Config {
	return pod.Config{
		Docker:     r.cfg.Docker,
		PodID:      podID,
		Framework:  r.cfg.FrameworkID,
		SandboxDir: r.cfg.SandboxDir,
		NodeAddr:   r.cfg.NodeAddr,
		PortBindIP: r.cfg.PortBindIP,
		Network:    r.cfg.Network,
		CNI:        r.cfg.CNI,
		CPUSets:    r.cfg.CPUSets,
		Labels:     r.cfg.Labels,
		Clock:      r.cfg.Clock,
		Remote:     r.cfg.Remote,

		NetworkImage:   r.cfg.NetworkImage,
		NetworkCommand: r.cfg.NetworkCommand,
	}
}

var (
	nameUnsafe = regexp.MustCompile(`[^a-zA-Z0-9_.-]`)
	alnum      = regexp.MustCompile(`^[a-zA-Z0-9]$`)
)

// nextPodIDLocked is the pod ID of the next task group.
func (r *Runtime) nextPodIDLocked() string {
	id := nameUnsafe.ReplaceAllString(r.cfg.ExecutorID, "-")
	if id == "" || !alnum.MatchString(id[:1]) {
		id = "x" + id
	}
	if n := len(r.groups); n > 0 {
		id += "." + strconv.Itoa(n+1)
	}
	return id
}

// Launch implements executor.Runtime: the group becomes one pod. The
// group is known to Kill and Message only once its pod exists.
func (r *Runtime) Launch(ctx context.Context, tasks []executor.Task, rep executor.Reporter) {
	r.mu.Lock()
	g := newGroup(r, r.nextPodIDLocked(), tasks, rep)
	r.groups = append(r.groups, g)
	r.mu.Unlock()

	if err := validate(tasks, g.network); err != nil {
		g.failAll(reasonInvalid, err.Error())
		return
	}
	cfg := r.podConfig(g.id)
	cfg.OnUpdate = g.onUpdate
	podTasks := make([]pod.Task, len(tasks))
	for i, t := range tasks {
		podTasks[i] = pod.Task{ID: t.ID(), Spec: t.Spec}
	}
	p, err := pod.New(cfg, podTasks)
	if err != nil {
		g.failAll(reasonInvalid, err.Error())
		return
	}
	g.setPod(p)
	r.mu.Lock()
	for _, t := range tasks {
		r.byTask[t.ID()] = g
	}
	r.mu.Unlock()
	go func() {
		if err := p.Start(ctx); err != nil {
			r.cfg.Logger.Warn("pod start", "pod", g.id, "err", err)
		}
	}()
}

// Kill implements executor.Runtime. The tasks of a pod share one
// lifecycle (seed 001), so killing one stops the whole pod: SIGTERM, then
// SIGKILL once grace is over.
func (r *Runtime) Kill(taskID string, grace time.Duration) {
	g := r.group(taskID)
	if g == nil {
		r.cfg.Logger.Info("kill of an unknown task ignored", "task", taskID)
		return
	}
	g.kill(taskID, grace)
}

// Shutdown implements executor.Runtime: every pod is killed with its
// tasks' grace period capped at grace, and Shutdown returns once every
// pod is torn down or grace (plus the teardown allowance) is over.
func (r *Runtime) Shutdown(grace time.Duration) {
	r.mu.Lock()
	groups := append([]*group(nil), r.groups...)
	r.mu.Unlock()
	for _, g := range groups {
		g.kill("", grace)
	}
	ctx, cancel := context.WithTimeout(context.Background(), grace+teardownAllowance)
	defer cancel()
	if err := r.Wait(ctx); err != nil {
		r.cfg.Logger.Warn("shutdown", "err", err)
	}
}

// teardownAllowance is the time given to remove containers and the CNI
// attachment after the last container exited.
const teardownAllowance = 10 * time.Second

// Wait returns once every pod launched so far is torn down and every
// report was handed to the driver, or ctx ends. The executor calls it
// before exiting so that no container outlives it.
func (r *Runtime) Wait(ctx context.Context) error {
	r.mu.Lock()
	groups := append([]*group(nil), r.groups...)
	r.mu.Unlock()
	var errs []error
	for _, g := range groups {
		p := g.getPod()
		if p == nil {
			continue
		}
		if _, err := p.Wait(ctx); err != nil {
			errs = append(errs, fmt.Errorf("pod %q: %w", g.id, err))
		}
	}
	flushed := make(chan struct{})
	go func() { r.queue.flush(); close(flushed) }()
	select {
	case <-flushed:
	case <-ctx.Done():
		errs = append(errs, ctx.Err())
	}
	return errors.Join(errs...)
}

func (r *Runtime) group(taskID string) *group {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.byTask[taskID]
}

// Message implements executor.Runtime: signal, exec, restart, update-env,
// update-file, update-resources, report-status and update for a container
// task.
func (r *Runtime) Message(ctx context.Context, msg *proto.Message) proto.MessageResult {
	res := proto.MessageResult{ID: msg.ID, Type: msg.Type, TaskID: msg.TaskID}
	g := r.group(msg.TaskID)
	var p *pod.Pod
	if g != nil {
		p = g.getPod()
	}
	if p == nil {
		res.Error = fmt.Sprintf("task %q: %v", msg.TaskID, errdefs.ErrNotFound)
		return res
	}
	if _, ok := ctx.Deadline(); !ok {
		timeout := r.cfg.CommandTimeout
		if msg.Type == proto.MessageUpdate && msg.Update != nil {
			timeout = r.cfg.UpdateTimeout + time.Duration(msg.Update.GracePeriodSeconds*float64(time.Second))
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	var err error
	switch msg.Type {
	case proto.MessageSignal:
		if msg.Signal <= 0 {
			err = fmt.Errorf("signal %d: %w", msg.Signal, errdefs.ErrInvalidArgument)
			break
		}
		err = p.Signal(ctx, msg.TaskID, syscall.Signal(msg.Signal))
	case proto.MessageExec:
		var out pod.ExecResult
		out, err = p.Exec(ctx, msg.TaskID, pod.ExecRequest{Command: msg.Command, Env: proto.EnvList(msg.Env),
			User: msg.User, WorkingDir: msg.WorkingDir, Privileged: msg.Privileged})
		res.Output, res.Truncated, res.ExitCode = out.Output, out.Truncated, out.ExitCode
	case proto.MessageRestart:
		g.pauseHealth(msg.TaskID)
		if err = p.Restart(ctx, msg.TaskID); err == nil {
			g.rearm(msg.TaskID, "restarted in place")
		} else {
			g.rearm(msg.TaskID, "")
		}
	case proto.MessageUpdateEnv:
		if len(msg.Env) == 0 {
			err = fmt.Errorf("update-env without env: %w", errdefs.ErrInvalidArgument)
			break
		}
		g.pauseHealth(msg.TaskID)
		if err = p.UpdateEnv(ctx, msg.TaskID, msg.Env); err == nil {
			g.rearm(msg.TaskID, "re-created with a new environment")
		} else {
			g.rearm(msg.TaskID, "")
		}
	case proto.MessageUpdateFile:
		if msg.File == nil {
			err = fmt.Errorf("update-file without a file: %w", errdefs.ErrInvalidArgument)
			break
		}
		err = p.WriteFiles(ctx, msg.TaskID, []proto.File{*msg.File})
	case proto.MessageUpdateResources:
		if msg.Resources == nil {
			err = fmt.Errorf("update-resources without resources: %w", errdefs.ErrInvalidArgument)
			break
		}
		err = p.UpdateResources(ctx, msg.TaskID, *msg.Resources)
	case proto.MessageReportStatus:
		err = g.reportStatus(msg.TaskID)
	case proto.MessageUpdate:
		err = g.update(ctx, msg.Update)
	default:
		err = fmt.Errorf("message %q is not supported by the container executor: %w", msg.Type, errdefs.ErrInvalidArgument)
	}
	if err != nil {
		res.Error = err.Error()
	}
	res.OK = err == nil && res.ExitCode == 0
	return res
}

// Tasks returns the pod state of every task by ID, for logs and tests.
func (r *Runtime) Tasks() map[string]taskstate.State {
	r.mu.Lock()
	groups := append([]*group(nil), r.groups...)
	r.mu.Unlock()
	out := map[string]taskstate.State{}
	for _, g := range groups {
		if p := g.getPod(); p != nil {
			for _, s := range p.Tasks() {
				out[s.TaskID] = s.State
			}
		}
	}
	return out
}
