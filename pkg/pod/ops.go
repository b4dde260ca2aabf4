package pod

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"syscall"

	docker "github.com/fsouza/go-dockerclient"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// running returns the task with Mesos ID taskID when its container runs.
func (p *Pod) running(taskID string) (*task, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, t := range p.tasks {
		if t.id == taskID {
			if t.state != StateRunning {
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
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		t.restarting = nil
		p.mu.Unlock()
		close(done)
	}()
	grace := uint(math.Ceil(t.spec.KillGracePeriodSeconds))
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
