package pod

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"

	docker "github.com/fsouza/go-dockerclient"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/taskstate"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

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
// group order (seed 001). The pod's network is held by a network container
// that every business container joins (CNI; CNM with several containers
// outside HOST mode), so that any of them can be re-created in place; a
// HOST pod's containers all use the host's network and a CNM pod of one
// container has its own. Any failure fails every task, kills what was
// started and tears the pod down; the error is returned as well.
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
			p.logCopiers.Add(1)
			go p.copyLogs(t)
		}
	}
	if err == nil && !killed && p.netContainer != "" {
		go p.monitorNetwork()
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
		resolved, err := p.cfg.Remote.Resolve(ctx, t.spec)
		if err != nil {
			return fmt.Errorf("task %q: %w", t.id, err)
		}
		p.mu.Lock()
		t.spec = resolved
		p.mu.Unlock()
	}
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
	// The network container's start (veth, addresses, published ports) is
	// the slowest step: in CNM mode the business containers are created
	// meanwhile; in CNI mode they wait for the address (their HOST).
	networkUp := func() error { return nil }
	if p.netShared {
		id, err := p.createNetwork(ctx)
		if err != nil {
			return err
		}
		started := make(chan error, 1)
		go func() { started <- p.startNetwork(ctx, id) }()
		networkUp = sync.OnceValue(func() error { return <-started })
		defer networkUp() // nothing returns while it starts
		if p.cfg.Network == NetworkCNI {
			if err := networkUp(); err != nil {
				return err
			}
		}
	}
	for _, t := range p.tasks {
		p.mu.Lock()
		if p.killed {
			p.mu.Unlock()
			return nil
		}
		p.setTask(t, taskstate.Starting, "")
		p.mu.Unlock()
		if err := p.createTask(ctx, t); err != nil {
			return fmt.Errorf("task %q: %w", t.id, err)
		}
	}
	if err := networkUp(); err != nil {
		return err
	}
	for _, t := range p.tasks {
		p.mu.Lock()
		killed, id := p.killed, t.containerID
		p.mu.Unlock()
		if killed {
			return nil
		}
		if err := p.cfg.Docker.StartContainerWithContext(id, nil, ctx); err != nil {
			return fmt.Errorf("task %q: start container %q: %v: %w", t.id, t.name, err, dockerClass(err))
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

// createTask creates t's container and writes its files into it.
func (p *Pod) createTask(ctx context.Context, t *task) error {
	c, err := p.createOptions(ctx, t, t.spec)
	if err != nil {
		return err
	}
	opts := c.opts
	opts.Context = ctx
	created, err := p.cfg.Docker.CreateContainer(opts)
	if err != nil {
		return fmt.Errorf("create container %q: %v: %w", opts.Name, err, dockerClass(err))
	}
	p.mu.Lock()
	t.containerID = created.ID
	t.autoRemoved = opts.HostConfig.AutoRemove
	t.imageID = c.imageID
	p.mu.Unlock()
	if err := p.saveRecord(); err != nil {
		return err
	}
	return p.settle(ctx, created.ID, t.spec)
}

func (p *Pod) cpusetOwner(t *task) string { return p.cfg.PodID + "/" + t.spec.Name }

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
	output := ""
	if code != nil {
		info, inspectErr = p.inspect(t)
		if *code != 0 {
			output = p.lastOutput(t)
		}
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
		msg := fmt.Sprintf("task %q failed: container exited with code %d%s", t.id, *code, output)
		p.failure = msg
		p.setTask(t, taskstate.Failed, msg)
		killOthers = true
		p.halt()
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
	p.halt()
	for _, t := range p.tasks {
		if t.containerID == "" && !t.state.Terminal() {
			p.setTask(t, taskstate.Failed, msg)
			p.markExited(t)
		}
	}
	p.mu.Unlock()
	p.killAll(syscall.SIGKILL)
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
		p.halt()
		p.cancelMon()
		p.awaitLogs()
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
