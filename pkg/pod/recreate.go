package pod

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	docker "github.com/fsouza/go-dockerclient"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/taskstate"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// claim marks tasks as being restarted in place, so that their monitors
// follow the switch to a new container (or the restart of the same one)
// instead of reporting the old container's exit. It refuses a task that is
// not running or already restarting, and, unless byUpdate, any task while
// an Update runs. release ends the claim.
func (p *Pod) claim(tasks []*task, byUpdate bool) (release func(), err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.updating != 0 && !byUpdate {
		return nil, fmt.Errorf("pod %q is being updated to revision %d: %w", p.cfg.PodID, p.updating, errdefs.ErrConflict)
	}
	for _, t := range tasks {
		if t.state != taskstate.Running {
			return nil, fmt.Errorf("task %q is %s, not running: %w", t.id, t.state, errdefs.ErrConflict)
		}
		if t.restarting != nil {
			return nil, fmt.Errorf("task %q is already restarting: %w", t.id, errdefs.ErrConflict)
		}
	}
	done := make([]chan struct{}, len(tasks))
	for i, t := range tasks {
		done[i] = make(chan struct{})
		t.restarting = done[i]
		t.restartGen++
	}
	return func() {
		p.mu.Lock()
		for _, t := range tasks {
			t.restarting = nil
		}
		p.mu.Unlock()
		for _, d := range done {
			close(d)
		}
	}, nil
}

// recreation is one task's container to re-create from spec (plan is
// spec's create options).
type recreation struct {
	t    *task
	spec *proto.TaskSpec
	plan containerPlan
}

// replacement is a recreation under way: the old container renamed aside,
// the new one created under the task's name.
type replacement struct {
	recreation
	oldID, newID string
	stopped      bool // the old container was stopped
}

// recreate replaces the containers of the claimed tasks in rs by new ones
// made from their specs, in the pod's network, all or none: every new
// container is created and its configmap/secret files written, then the
// old ones are stopped (each with its task's grace period, together) and
// the new ones started in group order. If a new container cannot be
// created, filled or started, the new ones are removed and the old ones
// started again: the pod runs as before, and the error names the task and
// the cause. The state file names both containers of a task while both
// exist, so Cleanup finds whichever is left. A pod killed or failed
// meanwhile is not restarted.
func (p *Pod) recreate(ctx context.Context, rs []recreation) error {
	// Rollback runs even when ctx is over.
	rbCtx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var done []*replacement
	undo := func(restartOld bool) error {
		var errs []error
		for _, r := range done {
			p.discard(rbCtx, r)
		}
		_ = p.saveRecord()
		if !restartOld || p.isHalted() {
			return nil
		}
		for _, r := range done {
			if !r.stopped {
				continue
			}
			err := p.cfg.Docker.StartContainerWithContext(r.oldID, nil, rbCtx)
			var running *docker.ContainerAlreadyRunning
			if err != nil && !errors.As(err, &running) {
				errs = append(errs, fmt.Errorf("restarting the old container of task %q: %v", r.t.id, err))
			}
		}
		return errors.Join(errs...)
	}
	for _, rc := range rs {
		r, err := p.prepare(ctx, rbCtx, rc)
		if err != nil {
			_ = undo(false)
			return fmt.Errorf("task %q: %w", rc.t.id, err)
		}
		done = append(done, r)
	}
	stopErrs := make([]error, len(done))
	var wg sync.WaitGroup
	for i, r := range done {
		wg.Go(func() { stopErrs[i] = p.stopOld(ctx, r) })
	}
	wg.Wait()
	for i, err := range stopErrs {
		if err != nil {
			return fmt.Errorf("task %q: %w%s", done[i].t.id, err, rolledBack(undo(true)))
		}
	}
	for _, r := range done {
		if p.isHalted() {
			_ = undo(false)
			return fmt.Errorf("pod %q was killed or failed during the re-creation: %w", p.cfg.PodID, errdefs.ErrConflict)
		}
		if err := p.cfg.Docker.StartContainerWithContext(r.newID, nil, ctx); err != nil {
			return fmt.Errorf("task %q: start container %q: %v%s: %w", r.t.id, r.plan.opts.Name, err, rolledBack(undo(true)), dockerClass(err))
		}
	}
	for _, r := range done {
		p.commit(rbCtx, r)
	}
	_ = p.saveRecord()
	return nil
}

// rolledBack says how a rollback went, for an error message.
func rolledBack(err error) string {
	if err != nil {
		return fmt.Sprintf(" (rollback: %v)", err)
	}
	return " (the old containers run again)"
}

// prepare renames the task's container aside and creates and fills its
// successor under the task's name; on error it undoes what it did.
func (p *Pod) prepare(ctx, rbCtx context.Context, rc recreation) (*replacement, error) {
	t := rc.t
	p.mu.Lock()
	r := &replacement{recreation: rc, oldID: t.containerID}
	aside := fmt.Sprintf("%s-replaced-%d", t.name, t.restartGen)
	p.mu.Unlock()
	if err := p.cfg.Docker.RenameContainer(docker.RenameContainerOptions{ID: r.oldID, Name: aside, Context: ctx}); err != nil {
		return nil, fmt.Errorf("rename container %q: %v: %w", r.oldID, err, dockerClass(err))
	}
	opts := rc.plan.opts
	opts.Context = ctx
	c, err := p.cfg.Docker.CreateContainer(opts)
	if err != nil {
		p.restoreName(rbCtx, r)
		return nil, fmt.Errorf("create container %q: %v: %w", opts.Name, err, dockerClass(err))
	}
	r.newID = c.ID
	p.mu.Lock()
	t.spare = c.ID
	p.mu.Unlock()
	if err := p.saveRecord(); err != nil {
		p.discard(rbCtx, r)
		return nil, err
	}
	if err := p.settle(ctx, c.ID, rc.spec); err != nil {
		p.discard(rbCtx, r)
		return nil, err
	}
	return r, nil
}

// stopOld stops the old container with the grace period of the spec it
// runs.
func (p *Pod) stopOld(ctx context.Context, r *replacement) error {
	p.mu.Lock()
	grace := uint(math.Ceil(r.t.spec.KillGracePeriodSeconds))
	p.mu.Unlock()
	err := p.cfg.Docker.StopContainerWithContext(r.oldID, grace, ctx)
	var notRunning *docker.ContainerNotRunning
	if err != nil && !errors.As(err, &notRunning) {
		return fmt.Errorf("stop container %q: %v: %w", r.oldID, err, dockerClass(err))
	}
	r.stopped = true
	return nil
}

// discard removes r's new container and gives the old one its name back.
func (p *Pod) discard(ctx context.Context, r *replacement) {
	_ = p.cfg.Docker.RemoveContainer(docker.RemoveContainerOptions{ID: r.newID, Force: true, RemoveVolumes: true, Context: ctx})
	p.mu.Lock()
	r.t.spare = ""
	p.mu.Unlock()
	p.restoreName(ctx, r)
}

func (p *Pod) restoreName(ctx context.Context, r *replacement) {
	_ = p.cfg.Docker.RenameContainer(docker.RenameContainerOptions{ID: r.oldID, Name: r.t.name, Context: ctx})
}

// commit switches r's task to its new, started container and removes the
// old one.
func (p *Pod) commit(ctx context.Context, r *replacement) {
	t := r.t
	p.mu.Lock()
	t.containerID, t.spare = r.newID, r.oldID
	t.spec = r.spec
	t.autoRemoved = r.plan.opts.HostConfig.AutoRemove
	t.imageID = r.plan.imageID
	// A monitor still waiting on the old container lets go of it.
	t.restartGen++
	stopping := t.state != taskstate.Running // Kill came meanwhile
	p.mu.Unlock()
	if stopping {
		_ = p.cfg.Docker.KillContainer(docker.KillContainerOptions{ID: r.newID, Signal: docker.SIGKILL, Context: ctx})
	}
	if info, err := p.inspect(t); err == nil {
		p.mu.Lock()
		t.info = info
		p.mu.Unlock()
	}
	// An old container that cannot be removed now stays in the state file
	// (and carries the pod's label) for teardown.
	err := p.cfg.Docker.RemoveContainer(docker.RemoveContainerOptions{ID: r.oldID, Force: true, RemoveVolumes: true, Context: ctx})
	var nsc *docker.NoSuchContainer
	if err == nil || errors.As(err, &nsc) {
		p.mu.Lock()
		t.spare = ""
		p.mu.Unlock()
	}
}

// isHalted tells whether the pod is being killed or has failed.
func (p *Pod) isHalted() bool {
	select {
	case <-p.halted:
		return true
	default:
		return false
	}
}
