package pod

import (
	"context"
	"fmt"
	"math"
	"strings"
	"syscall"

	docker "github.com/fsouza/go-dockerclient"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/taskstate"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// running returns the task with Mesos ID taskID when its container runs.
func (p *Pod) running(taskID string) (*task, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, t := range p.tasks {
		if t.id == taskID {
			if t.state != taskstate.Running {
				return nil, fmt.Errorf("task %q is %s, not running: %w", taskID, t.state, errdefs.ErrConflict)
			}
			return t, nil
		}
	}
	return nil, fmt.Errorf("task %q: %w", taskID, errdefs.ErrNotFound)
}

// Signal sends sig to the main process of taskID's container.
func (p *Pod) Signal(ctx context.Context, taskID string, sig syscall.Signal) error {
	t, err := p.running(taskID)
	if err != nil {
		return err
	}
	if err := p.cfg.Docker.KillContainer(docker.KillContainerOptions{ID: t.containerID, Signal: docker.Signal(sig), Context: ctx}); err != nil {
		return fmt.Errorf("signal %d to task %q: %v: %w", sig, taskID, err, dockerClass(err))
	}
	return nil
}

// ExecResult is the outcome of Exec: stdout and stderr interleaved (the
// beginning, proto.OutputBuffer), and the exit code.
type ExecResult struct {
	Output string
	// Truncated: the command wrote more than proto.MaxOutputBytes.
	Truncated bool
	ExitCode  int
}

// ExecRequest is a command to run in a task's container, and how.
type ExecRequest struct {
	Command []string
	// Env ("NAME=value") is added to the container's environment.
	Env []string
	// User and WorkingDir default to the container's.
	User, WorkingDir string
	Privileged       bool
}

// Exec runs req's command in taskID's container and returns its output
// and exit code; ctx bounds it.
func (p *Pod) Exec(ctx context.Context, taskID string, req ExecRequest) (ExecResult, error) {
	t, err := p.running(taskID)
	if err != nil {
		return ExecResult{}, err
	}
	if len(req.Command) == 0 {
		return ExecResult{}, fmt.Errorf("exec in task %q: empty command: %w", taskID, errdefs.ErrInvalidArgument)
	}
	ex, err := p.cfg.Docker.CreateExec(docker.CreateExecOptions{
		Container: t.containerID, Cmd: req.Command, Env: req.Env, User: req.User, WorkingDir: req.WorkingDir,
		Privileged: req.Privileged, AttachStdout: true, AttachStderr: true, Context: ctx,
	})
	if err != nil {
		return ExecResult{}, fmt.Errorf("exec in task %q: %v: %w", taskID, err, dockerClass(err))
	}
	var out proto.OutputBuffer
	res := func() ExecResult { return ExecResult{Output: out.String(), Truncated: out.Truncated()} }
	if err := p.cfg.Docker.StartExec(ex.ID, docker.StartExecOptions{OutputStream: &out, ErrorStream: &out, Context: ctx}); err != nil {
		return res(), fmt.Errorf("exec in task %q: %v: %w", taskID, err, dockerClass(err))
	}
	ins, err := p.cfg.Docker.InspectExec(ex.ID)
	if err != nil {
		return res(), fmt.Errorf("exec in task %q: %v: %w", taskID, err, dockerClass(err))
	}
	done := res()
	done.ExitCode = ins.ExitCode
	return done, nil
}

// WriteFiles writes configmap/secret items into taskID's running container
// (the update-file message); the process sees them on its next read.
func (p *Pod) WriteFiles(ctx context.Context, taskID string, files []proto.File) error {
	t, err := p.running(taskID)
	if err != nil {
		return err
	}
	return p.writeFiles(ctx, t.containerID, files)
}

// Restart restarts taskID's container in place: same container, same pod,
// same network.
func (p *Pod) Restart(ctx context.Context, taskID string) error {
	t, err := p.running(taskID)
	if err != nil {
		return err
	}
	release, err := p.claim([]*task{t}, false)
	if err != nil {
		return err
	}
	defer release()
	p.mu.Lock()
	id, grace := t.containerID, uint(math.Ceil(t.spec.KillGracePeriodSeconds))
	p.mu.Unlock()
	if err := p.cfg.Docker.StopContainerWithContext(id, grace, ctx); err != nil {
		if _, notRunning := err.(*docker.ContainerNotRunning); !notRunning {
			return fmt.Errorf("restart task %q: stop: %v: %w", taskID, err, dockerClass(err))
		}
	}
	if err := p.cfg.Docker.StartContainerWithContext(id, nil, ctx); err != nil {
		return fmt.Errorf("restart task %q: start: %v: %w", taskID, err, dockerClass(err))
	}
	if info, err := p.inspect(t); err == nil {
		p.mu.Lock()
		t.info = info
		p.mu.Unlock()
	}
	return nil
}

// UpdateEnv gives taskID's container a new environment: env merged over
// the task's own (a variable of the same name takes the new value, a new
// one is appended; "$HOST" and "$BCS_POD_ID" are replaced as at launch).
// A container's environment is fixed when it is created, so the container
// is re-created (recreate) with everything else kept: name, image, command
// and args, mounts, resources and cpuset, labels, and the pod's network.
// The task stays running; Info reports the new container.
func (p *Pod) UpdateEnv(ctx context.Context, taskID string, env []proto.EnvVar) error {
	if len(env) == 0 {
		return fmt.Errorf("update env of task %q: no variables: %w", taskID, errdefs.ErrInvalidArgument)
	}
	for _, ev := range env {
		if ev.Name == "" || strings.ContainsAny(ev.Name, "=\x00") {
			return fmt.Errorf("update env of task %q: variable name %q: %w", taskID, ev.Name, errdefs.ErrInvalidArgument)
		}
	}
	t, err := p.running(taskID)
	if err != nil {
		return err
	}
	p.mu.Lock()
	spec := *t.spec
	p.mu.Unlock()
	spec.Env = mergeEnv(spec.Env, env)
	plan, err := p.createOptions(ctx, t, &spec)
	if err != nil {
		return fmt.Errorf("update env of task %q: %w", taskID, err)
	}
	release, err := p.claim([]*task{t}, false)
	if err != nil {
		return err
	}
	defer release()
	if err := p.recreate(ctx, []recreation{{t: t, spec: &spec, plan: plan}}); err != nil {
		return fmt.Errorf("update env of task %q: %w", taskID, err)
	}
	return nil
}

// mergeEnv is old with update applied: same name replaces, new appends.
func mergeEnv(old, update []proto.EnvVar) []proto.EnvVar {
	out := append([]proto.EnvVar(nil), old...)
	for _, ev := range update {
		replaced := false
		for i := range out {
			if out[i].Name == ev.Name {
				out[i], replaced = ev, true
			}
		}
		if !replaced {
			out = append(out, ev)
		}
	}
	return out
}

// UpdateResources changes taskID's cpu-shares, CPU quota and memory limits
// in place (docker update).
func (p *Pod) UpdateResources(ctx context.Context, taskID string, r proto.Resources) error {
	t, err := p.running(taskID)
	if err != nil {
		return err
	}
	return p.updateResources(ctx, t, r)
}

// updateResources applies the cpu and memory fields of r to t's running
// container (docker update) and to its spec.
func (p *Pod) updateResources(ctx context.Context, t *task, r proto.Resources) error {
	p.mu.Lock()
	cur := t.spec
	p.mu.Unlock()
	if r.MemSwapMB == 0 { // not asked to change: the swap limit stays
		r.MemSwapMB = cur.Resources.MemSwapMB
	}
	var hc docker.HostConfig
	if err := applyResources(&hc, proto.Resources{CPUs: r.CPUs, CPULimit: r.CPULimit, MemMB: r.MemMB, MemLimitMB: r.MemLimitMB, MemSwapMB: r.MemSwapMB}); err != nil {
		return err
	}
	if cur.Container != nil { // the cpu-shares and memory-swap parameters stay
		params, _ := parseParams(cur.Container.Parameters) // they made the running container
		if params.CPUShares > 0 {
			hc.CPUShares = params.CPUShares
		}
		if hc.MemorySwap == 0 {
			hc.MemorySwap = swapLimit(hc.Memory, params.MemorySwap)
		}
	}
	opts := docker.UpdateContainerOptions{
		CPUShares: int(hc.CPUShares), CPUPeriod: int(hc.CPUPeriod), CPUQuota: int(hc.CPUQuota),
		Memory: int(hc.Memory), MemorySwap: int(hc.MemorySwap), Context: ctx,
	}
	if opts.Memory > 0 && opts.MemorySwap == 0 {
		// No swap limit of its own: docker's at create, as much swap as
		// memory (docker update would otherwise keep the old total).
		opts.MemorySwap = 2 * opts.Memory
	}
	p.mu.Lock()
	id := t.containerID
	p.mu.Unlock()
	if err := p.cfg.Docker.UpdateContainer(id, opts); err != nil {
		return fmt.Errorf("update resources of task %q: %v: %w", t.id, err, dockerClass(err))
	}
	p.mu.Lock()
	spec := *t.spec // t.spec may be shared with a caller's snapshot
	spec.Resources.CPUs, spec.Resources.CPULimit = r.CPUs, r.CPULimit
	spec.Resources.MemMB, spec.Resources.MemLimitMB, spec.Resources.MemSwapMB = r.MemMB, r.MemLimitMB, r.MemSwapMB
	t.spec = &spec
	p.mu.Unlock()
	return nil
}

// Info returns taskID's container information (seed 001
// BcsContainerInfo), refreshed from dockerd when the task runs.
func (p *Pod) Info(taskID string) (proto.ContainerInfo, error) {
	p.mu.Lock()
	var t *task
	for _, x := range p.tasks {
		if x.id == taskID {
			t = x
		}
	}
	p.mu.Unlock()
	if t == nil {
		return proto.ContainerInfo{}, fmt.Errorf("task %q: %w", taskID, errdefs.ErrNotFound)
	}
	if _, err := p.running(taskID); err == nil {
		if info, err := p.inspect(t); err == nil {
			p.mu.Lock()
			info.IPAddress, info.NetworkMode = t.info.IPAddress, t.info.NetworkMode
			t.info = info
			p.mu.Unlock()
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return t.info, nil
}
