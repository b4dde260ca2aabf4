package pod

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"syscall"
	"time"

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

// ExecResult is the outcome of Exec: stdout and stderr interleaved, and the
// exit code.
type ExecResult struct {
	Output   string
	ExitCode int
}

// Exec runs cmd in taskID's container and returns its output and exit
// code; ctx bounds it.
func (p *Pod) Exec(ctx context.Context, taskID string, cmd []string) (ExecResult, error) {
	t, err := p.running(taskID)
	if err != nil {
		return ExecResult{}, err
	}
	if len(cmd) == 0 {
		return ExecResult{}, fmt.Errorf("exec in task %q: empty command: %w", taskID, errdefs.ErrInvalidArgument)
	}
	ex, err := p.cfg.Docker.CreateExec(docker.CreateExecOptions{
		Container: t.containerID, Cmd: cmd, AttachStdout: true, AttachStderr: true, Context: ctx,
	})
	if err != nil {
		return ExecResult{}, fmt.Errorf("exec in task %q: %v: %w", taskID, err, dockerClass(err))
	}
	var out bytes.Buffer
	if err := p.cfg.Docker.StartExec(ex.ID, docker.StartExecOptions{OutputStream: &out, ErrorStream: &out, Context: ctx}); err != nil {
		return ExecResult{Output: out.String()}, fmt.Errorf("exec in task %q: %v: %w", taskID, err, dockerClass(err))
	}
	ins, err := p.cfg.Docker.InspectExec(ex.ID)
	if err != nil {
		return ExecResult{Output: out.String()}, fmt.Errorf("exec in task %q: %v: %w", taskID, err, dockerClass(err))
	}
	return ExecResult{Output: out.String(), ExitCode: ins.ExitCode}, nil
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
// same network. The container owning the network in CNM mode cannot be
// restarted (the others would lose their network namespace).
func (p *Pod) Restart(ctx context.Context, taskID string) error {
	t, err := p.running(taskID)
	if err != nil {
		return err
	}
	p.mu.Lock()
	if p.cfg.Network == NetworkCNM && t.containerID == p.netID && len(p.tasks) > 1 {
		p.mu.Unlock()
		return fmt.Errorf("task %q owns the pod's network and cannot restart in place: %w", taskID, errdefs.ErrInvalidArgument)
	}
	if t.restarting != nil {
		p.mu.Unlock()
		return fmt.Errorf("task %q is already restarting: %w", taskID, errdefs.ErrConflict)
	}
	done := make(chan struct{})
	t.restarting = done
	t.restartGen++
	grace := uint(math.Ceil(t.spec.KillGracePeriodSeconds))
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		t.restarting = nil
		p.mu.Unlock()
		close(done)
	}()
	if err := p.cfg.Docker.StopContainerWithContext(t.containerID, grace, ctx); err != nil {
		if _, notRunning := err.(*docker.ContainerNotRunning); !notRunning {
			return fmt.Errorf("restart task %q: stop: %v: %w", taskID, err, dockerClass(err))
		}
	}
	if err := p.cfg.Docker.StartContainerWithContext(t.containerID, nil, ctx); err != nil {
		return fmt.Errorf("restart task %q: start: %v: %w", taskID, err, dockerClass(err))
	}
	if info, err := p.inspect(t); err == nil {
		p.mu.Lock()
		info.IPAddress, info.NetworkMode = t.info.IPAddress, t.info.NetworkMode
		t.info = info
		p.mu.Unlock()
	}
	return nil
}

// UpdateEnv gives taskID's container a new environment: env merged over
// the task's own (a variable of the same name takes the new value, a new
// one is appended; "$HOST" and "$BCS_POD_ID" are replaced as at launch).
// A container's environment is fixed when it is created, so the container
// is re-created with everything else kept: name, image, command and args,
// mounts, resources and cpuset, labels, and the pod's network, which the
// new container joins as the old one did (container:<network owner> in
// CNM, the network container in CNI). The configmap/secret files are
// written before it starts, then the old container is stopped (with the
// task's grace period) and the new one started. The task stays running;
// Info reports the new container.
//
// In CNM mode the first container owns the network the others joined:
// re-creating it would cut them off, so it is refused (ErrInvalidArgument)
// unless it is the pod's only container. Nothing changes when the new
// container cannot be created or filled; when it cannot start, it is
// removed and the old one started again. The state file names both
// containers while both exist, so Cleanup finds whichever is left.
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
	ownsNetwork := p.cfg.Network == NetworkCNM && t.containerID == p.netID
	if ownsNetwork && len(p.tasks) > 1 {
		p.mu.Unlock()
		return fmt.Errorf("task %q owns the pod's network in CNM mode (the other containers joined it as container:%s): "+
			"re-creating its container to change the environment would cut them off: %w", taskID, t.containerID, errdefs.ErrInvalidArgument)
	}
	if t.restarting != nil {
		p.mu.Unlock()
		return fmt.Errorf("task %q is already restarting: %w", taskID, errdefs.ErrConflict)
	}
	done := make(chan struct{})
	t.restarting = done
	t.restartGen++
	oldID := t.containerID
	spec := *t.spec
	spec.Env = mergeEnv(t.spec.Env, env)
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		t.restarting = nil
		p.mu.Unlock()
		close(done)
	}()
	if err := p.recreate(ctx, t, &spec, oldID, ownsNetwork); err != nil {
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

// recreate replaces t's container oldID by a new one made from spec, in the
// pod's network (owner: it is the CNM network owner, alone in its pod).
// Caller has set t.restarting so that the monitor follows the switch.
func (p *Pod) recreate(ctx context.Context, t *task, spec *proto.TaskSpec, oldID string, owner bool) error {
	opts, err := p.createOptionsFor(ctx, t, spec, owner)
	if err != nil {
		return err
	}
	opts.Context = ctx
	// Rollback runs even when ctx is over.
	rbCtx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p.mu.Lock()
	aside := fmt.Sprintf("%s-replaced-%d", t.name, t.restartGen)
	p.mu.Unlock()
	// The old container steps aside so the new one takes its name.
	if err := p.cfg.Docker.RenameContainer(docker.RenameContainerOptions{ID: oldID, Name: aside, Context: ctx}); err != nil {
		return fmt.Errorf("rename container %q: %v: %w", oldID, err, dockerClass(err))
	}
	restoreName := func() {
		_ = p.cfg.Docker.RenameContainer(docker.RenameContainerOptions{ID: oldID, Name: t.name, Context: rbCtx})
	}
	c, err := p.cfg.Docker.CreateContainer(opts)
	if err != nil {
		restoreName()
		return fmt.Errorf("create container %q: %v: %w", opts.Name, err, dockerClass(err))
	}
	p.mu.Lock()
	t.spare = c.ID
	p.mu.Unlock()
	discardNew := func() {
		_ = p.cfg.Docker.RemoveContainer(docker.RemoveContainerOptions{ID: c.ID, Force: true, RemoveVolumes: true, Context: rbCtx})
		p.mu.Lock()
		t.spare = ""
		p.mu.Unlock()
		restoreName()
		_ = p.saveRecord()
	}
	if err := p.saveRecord(); err != nil {
		discardNew()
		return err
	}
	if err := p.writeFiles(ctx, c.ID, spec.Files); err != nil {
		discardNew()
		return err
	}
	grace := uint(math.Ceil(spec.KillGracePeriodSeconds))
	if err := p.cfg.Docker.StopContainerWithContext(oldID, grace, ctx); err != nil {
		if _, notRunning := err.(*docker.ContainerNotRunning); !notRunning {
			discardNew()
			return fmt.Errorf("stop container %q: %v: %w", oldID, err, dockerClass(err))
		}
	}
	if err := p.cfg.Docker.StartContainerWithContext(c.ID, nil, ctx); err != nil {
		discardNew()
		if startErr := p.cfg.Docker.StartContainerWithContext(oldID, nil, rbCtx); startErr != nil {
			return fmt.Errorf("start container %q: %v; restarting the old container %q: %v: %w", opts.Name, err, oldID, startErr, dockerClass(err))
		}
		return fmt.Errorf("start container %q: %v (the old container runs again): %w", opts.Name, err, dockerClass(err))
	}

	// The switch: from here on the task is the new container.
	p.mu.Lock()
	t.containerID, t.spare = c.ID, oldID
	t.spec = spec
	t.autoRemoved = opts.HostConfig.AutoRemove
	t.restartGen++ // a monitor still waiting on oldID lets go of it
	if owner {
		p.netID = c.ID
	}
	stopping := t.state != taskstate.Running // Kill came meanwhile
	p.mu.Unlock()
	if stopping {
		_ = p.cfg.Docker.KillContainer(docker.KillContainerOptions{ID: c.ID, Signal: docker.SIGKILL, Context: rbCtx})
	}
	if info, err := p.inspect(t); err == nil {
		p.mu.Lock()
		t.info = info
		p.mu.Unlock()
	}
	// The update is done: an old container that cannot be removed now stays
	// in the state file (and carries the pod's label) for teardown.
	err = p.cfg.Docker.RemoveContainer(docker.RemoveContainerOptions{ID: oldID, Force: true, RemoveVolumes: true, Context: rbCtx})
	var nsc *docker.NoSuchContainer
	if err == nil || errors.As(err, &nsc) {
		p.mu.Lock()
		t.spare = ""
		p.mu.Unlock()
	}
	_ = p.saveRecord()
	return nil
}

// UpdateResources changes taskID's cpu-shares, CPU quota and memory limits
// in place (docker update).
func (p *Pod) UpdateResources(ctx context.Context, taskID string, r proto.Resources) error {
	t, err := p.running(taskID)
	if err != nil {
		return err
	}
	var hc docker.HostConfig
	if err := applyResources(&hc, proto.Resources{CPUs: r.CPUs, CPULimit: r.CPULimit, MemMB: r.MemMB, MemLimitMB: r.MemLimitMB, MemSwapMB: r.MemSwapMB}); err != nil {
		return err
	}
	opts := docker.UpdateContainerOptions{
		CPUShares: int(hc.CPUShares), CPUPeriod: int(hc.CPUPeriod), CPUQuota: int(hc.CPUQuota),
		Memory: int(hc.Memory), MemorySwap: int(hc.MemorySwap), Context: ctx,
	}
	if opts.Memory > 0 && opts.MemorySwap == 0 {
		opts.MemorySwap = -1 // unlimited swap, so a lower memory is accepted
	}
	if err := p.cfg.Docker.UpdateContainer(t.containerID, opts); err != nil {
		return fmt.Errorf("update resources of task %q: %v: %w", taskID, err, dockerClass(err))
	}
	p.mu.Lock()
	t.spec.Resources.CPUs, t.spec.Resources.CPULimit = r.CPUs, r.CPULimit
	t.spec.Resources.MemMB, t.spec.Resources.MemLimitMB = r.MemMB, r.MemLimitMB
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
