package process

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/executor"
	"github.com/bcs-mesos/bcs-mesos/pkg/healthcheck"
	"github.com/bcs-mesos/bcs-mesos/pkg/taskstate"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

var (
	reasonInvalid      = mesos.REASON_TASK_INVALID
	reasonLaunchFailed = mesos.REASON_CONTAINER_LAUNCH_FAILED
	reasonMemory       = mesos.REASON_CONTAINER_LIMITATION_MEMORY
	reasonHealth       = mesos.REASON_TASK_HEALTH_CHECK_STATUS_UPDATED
)

// task is one process task. opMu serialises the operations that take
// time and do I/O — launch, restart, update, kill — so a kill waits for
// a launch, restart or update to settle (each gives up early once the
// kill cancels ctx); mu guards the fields below it and is never held
// across I/O, so the liveness monitor and health checks are not blocked
// behind a stop command.
type task struct {
	rt        *Runtime
	id        string
	group     *group
	killGrace time.Duration
	rep       executor.Reporter
	ctx       context.Context // cancelled when the task is killed
	cancel    context.CancelFunc
	finished  chan struct{}

	opMu sync.Mutex

	mu sync.Mutex
	// spec and proc (spec.Process) change with an update, which holds
	// opMu and mu: read them under either.
	spec         *proto.TaskSpec
	proc         *proto.ProcessSpec
	acct         *account
	env          []string
	cg           *Cgroup
	inst         *instance
	info         proto.ProcessInfo
	life         lifecycle
	healthCancel context.CancelFunc
	healthy      map[int]bool
	lastHealthy  *bool
}

// instance is one start of the task's command.
type instance struct {
	cmd      *exec.Cmd
	pgid     int
	mainPid  int
	exited   chan struct{} // the start shell was reaped
	exitCode int           // valid once exited is closed
	output   outputMark    // where its output begins in the log files
}

func (r *Runtime) newTask(et executor.Task, g *group, rep executor.Reporter) *task {
	ctx, cancel := context.WithCancel(context.Background())
	t := &task{rt: r, id: et.ID(), group: g, spec: et.Spec, proc: et.Spec.Process, killGrace: et.KillGrace, rep: rep,
		ctx: ctx, cancel: cancel, finished: make(chan struct{}), healthy: map[int]bool{}}
	if t.proc != nil {
		t.info = proto.ProcessInfo{ProcName: t.proc.ProcName, WorkPath: t.proc.WorkPath, Ports: portsOf(et.Spec),
			Revision: et.Spec.Instance.Version}
	}
	return t
}

// setSpec makes spec the task's spec. Caller holds opMu and mu.
func (t *task) setSpec(spec *proto.TaskSpec) {
	t.spec, t.proc = spec, spec.Process
	t.info.ProcName = spec.Process.ProcName
}

// currentSpec is the task's spec now, for readers outside opMu.
func (t *task) currentSpec() *proto.TaskSpec {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.spec
}

func portsOf(spec *proto.TaskSpec) map[string]int {
	if len(spec.Ports) == 0 {
		return nil
	}
	m := map[string]int{}
	for _, p := range spec.Ports {
		if p.HostPort > 0 {
			m[p.Name] = p.HostPort
		} else {
			m[p.Name] = p.ContainerPort
		}
	}
	return m
}

func (t *task) log() *slog.Logger { return t.rt.cfg.Logger.With("task", t.id) }

func (t *task) report(state taskstate.State, reason *mesos.TaskStatus_Reason, msg string, healthy *bool) {
	t.mu.Lock()
	data, _ := json.Marshal(t.info)
	t.mu.Unlock()
	t.rep.Report(executor.Report{TaskID: t.id, State: state, Reason: reason, Message: msg, Healthy: healthy, Data: data})
}

// launch prepares and starts the task and reports it RUNNING, or fails it.
func (t *task) launch() {
	t.opMu.Lock()
	defer t.opMu.Unlock()
	t.mu.Lock()
	launching := t.advance(lifeLaunching) // false: killed before the launch began
	t.mu.Unlock()
	if !launching {
		return
	}
	t.report(taskstate.Starting, nil, "", nil)
	if err := t.prepare(); err != nil {
		reason := reasonLaunchFailed
		if errors.Is(err, errdefs.ErrInvalidArgument) {
			reason = reasonInvalid
		}
		t.endLaunch(err, reason)
		return
	}
	inst, err := t.start(t.proc.StartCmd)
	if err != nil {
		t.endLaunch(err, reasonLaunchFailed)
		return
	}
	t.running(inst, "", nil)
}

// endLaunch reports a launch that did not get to RUNNING: killed when the
// task's context was cancelled, else failed.
func (t *task) endLaunch(err error, reason mesos.TaskStatus_Reason) {
	if t.ctx.Err() != nil {
		t.finish(taskstate.Killed, nil, "killed during launch", nil)
		return
	}
	t.log().Warn("launch failed", "err", err)
	t.finish(taskstate.Failed, &reason, err.Error(), nil)
}

// running records inst as the live instance, reports RUNNING (with msg
// and healthy, nil to keep the last verdict) and starts the liveness
// monitor and the health checks.
func (t *task) running(inst *instance, msg string, healthy *bool) {
	t.mu.Lock()
	t.inst = inst
	t.advance(lifeRunning)
	t.info.Pid = inst.mainPid
	t.info.StartedAt = t.rt.cfg.Clock.Now().UTC()
	t.info.ExitCode = nil
	t.lastHealthy = nil
	t.healthy = map[int]bool{}
	t.mu.Unlock()
	t.report(taskstate.Running, nil, msg, healthy)
	t.startHealthChecks()
	go t.monitor(inst)
}

// runCommand runs a stop, reload or exec command as the task's user in
// its work path.
func (t *task) runCommand(ctx context.Context, command string) (*proto.OutputBuffer, int, error) {
	return t.runCommandWith(ctx, command, &proto.Message{})
}

// runCommandWith is runCommand with exec's additions: msg.Env added to the
// environment, msg.WorkingDir instead of the work path. It runs as the
// task's user only: msg.User may name no other, and nothing runs
// privileged.
func (t *task) runCommandWith(ctx context.Context, command string, msg *proto.Message) (*proto.OutputBuffer, int, error) {
	t.mu.Lock()
	acct, env, dir := t.acct, append(append([]string(nil), t.env...), proto.EnvList(msg.Env)...), t.proc.WorkPath
	t.mu.Unlock()
	out := &proto.OutputBuffer{}
	switch {
	case acct == nil:
		return out, -1, fmt.Errorf("task %q has not started: %w", t.id, errdefs.ErrConflict)
	case msg.User != "" && msg.User != acct.name:
		return out, -1, fmt.Errorf("task %q runs commands as its user %q, not %q: %w", t.id, acct.name, msg.User, errdefs.ErrInvalidArgument)
	case msg.Privileged:
		return out, -1, fmt.Errorf("task %q is a process: nothing runs privileged: %w", t.id, errdefs.ErrInvalidArgument)
	}
	if msg.WorkingDir != "" {
		dir = msg.WorkingDir
	}
	code, err := healthcheck.RunShell(ctx, dir, env, acct.cred, command, out)
	return out, code, err
}

// restart runs restartCmd as a new start of the task, or without one
// stops the process and starts it again; the task stays RUNNING and
// reports the new pid.
func (t *task) restart() error {
	t.opMu.Lock()
	defer t.opMu.Unlock()
	t.mu.Lock()
	if t.life != lifeRunning || t.inst == nil {
		t.mu.Unlock()
		return fmt.Errorf("task %q is not running: %w", t.id, errdefs.ErrConflict)
	}
	t.advance(lifeStopping)
	old := t.inst
	t.mu.Unlock()
	t.stopHealthChecks()
	command := t.proc.RestartCmd
	if command == "" {
		t.stop(old, t.killGrace)
		command = t.proc.StartCmd
	}
	inst, err := t.start(command)
	if err != nil {
		return t.failRestart("restart", err)
	}
	t.running(inst, "", nil)
	return nil
}

// failRestart ends a task whose process did not start again (what: the
// restart or update it was part of). A kill that cancelled the start
// waits for opMu and reports the task killed; otherwise it failed.
func (t *task) failRestart(what string, err error) error {
	if t.ctx.Err() != nil {
		return fmt.Errorf("%s of task %q: interrupted, the task is being killed: %w", what, t.id, errdefs.ErrConflict)
	}
	reason := reasonLaunchFailed
	if errors.Is(err, errdefs.ErrInvalidArgument) {
		reason = reasonInvalid
	}
	msg := fmt.Sprintf("%s: %v", what, err)
	t.log().Warn("restart failed", "what", what, "err", err)
	t.finish(taskstate.Failed, &reason, msg, nil)
	return fmt.Errorf("task %q failed: %s", t.id, msg)
}

func (t *task) signal(sig syscall.Signal) error {
	t.mu.Lock()
	inst := t.inst
	t.mu.Unlock()
	if inst == nil || sig <= 0 {
		return fmt.Errorf("task %q: no process or signal %d: %w", t.id, int(sig), errdefs.ErrInvalidArgument)
	}
	return syscall.Kill(inst.mainPid, sig)
}

func (t *task) updateEnv(vars []proto.EnvVar) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, v := range vars {
		prefix := v.Name + "="
		replaced := false
		for i, kv := range t.env {
			if strings.HasPrefix(kv, prefix) {
				t.env[i], replaced = prefix+v.Value, true
			}
		}
		if !replaced {
			t.env = append(t.env, prefix+v.Value)
		}
	}
}

// updateResources changes the cgroup limits in place.
func (t *task) updateResources(res *proto.Resources) error {
	t.mu.Lock()
	cg := t.cg
	t.mu.Unlock()
	if res == nil {
		return fmt.Errorf("update-resources without resources: %w", errdefs.ErrInvalidArgument)
	}
	if cg == nil {
		return fmt.Errorf("task %q has no cgroup to update: %w", t.id, errdefs.ErrConflict)
	}
	return cg.SetLimits(*res)
}
