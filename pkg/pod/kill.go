package pod

import (
	"context"
	"syscall"
	"time"

	docker "github.com/fsouza/go-dockerclient"

	"github.com/bcs-mesos/bcs-mesos/pkg/taskstate"
)

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
	p.halt()
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
		case <-p.cfg.Clock.After(grace):
		}
	}
	_ = p.cfg.Docker.KillContainer(docker.KillContainerOptions{ID: id, Signal: docker.SIGKILL})
}
