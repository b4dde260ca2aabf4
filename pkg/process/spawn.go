package process

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/bcs-mesos/bcs-mesos/pkg/taskstate"
)

// startScript waits on fd 3 until the executor has put the shell into the
// task's cgroup, then becomes the start command.
const startScript = `read -r _ <&3; exec 3<&-; exec /bin/sh -c "$1"`

// DefaultStartGracePeriod is seed 000's startGracePeriod default.
const DefaultStartGracePeriod = time.Second

// start runs command as the task's user in its work path, in a new
// process group inside the cgroup, and waits startGracePeriod; then the
// process is alive when the pid in pidFile runs as procName (or, without
// a pidFile, when the command still runs).
func (t *task) start(command string) (*instance, error) {
	t.mu.Lock()
	acct, env, cg := t.acct, append([]string(nil), t.env...), t.cg
	t.mu.Unlock()
	stdout, err := logFile(t.rt.cfg.LogDir, t.id, "stdout", acct)
	if err != nil {
		return nil, err
	}
	defer stdout.Close()
	stderr, err := logFile(t.rt.cfg.LogDir, t.id, "stderr", acct)
	if err != nil {
		return nil, err
	}
	defer stderr.Close()
	output := markOutput(stdout, stderr)
	gate, release, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("/bin/sh", "-c", startScript, "bcs-start", command)
	cmd.Dir, cmd.Env = t.proc.WorkPath, env
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.ExtraFiles = []*os.File{gate}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: acct.cred}
	err = cmd.Start()
	gate.Close()
	if err != nil {
		release.Close()
		return nil, fmt.Errorf("start %q: %w", command, err)
	}
	inst := &instance{cmd: cmd, pgid: cmd.Process.Pid, mainPid: cmd.Process.Pid, exited: make(chan struct{}), output: output}
	go func() {
		err := cmd.Wait()
		inst.exitCode = exitCode(err)
		close(inst.exited)
	}()
	if cg != nil {
		if err := cg.Add(cmd.Process.Pid); err != nil {
			release.Close()
			t.killInstance(inst, syscall.SIGKILL)
			return nil, err
		}
	}
	_, _ = release.Write([]byte("go\n"))
	release.Close()

	grace := DefaultStartGracePeriod
	if t.proc.StartGracePeriod > 0 {
		grace = time.Duration(t.proc.StartGracePeriod * float64(time.Second))
	}
	timer := t.rt.cfg.Clock.After(grace)
	exited := inst.exited
wait:
	for {
		select {
		case <-timer:
			break wait
		case <-exited:
			exited = nil
			if inst.exitCode != 0 {
				t.killInstance(inst, syscall.SIGKILL)
				return nil, fmt.Errorf("start command exited with status %d within startGracePeriod %v%s", inst.exitCode, grace, t.outputOf(inst))
			}
			if t.proc.PidFile == "" {
				return nil, fmt.Errorf("start command exited within startGracePeriod %v and there is no pidFile to follow%s", grace, t.outputOf(inst))
			}
		case <-t.ctx.Done():
			t.killInstance(inst, syscall.SIGKILL)
			return nil, t.ctx.Err()
		}
	}
	if t.proc.PidFile == "" {
		return inst, nil
	}
	pid, err := t.awaitStarted(inst, grace)
	if err != nil {
		t.killInstance(inst, syscall.SIGKILL)
		return nil, fmt.Errorf("after startGracePeriod %v: %w%s", grace, err, t.outputOf(inst))
	}
	inst.mainPid = pid
	return inst, nil
}

// awaitStarted reads pidFile and checks that its process runs as
// procName, looking again while the start command's process group may
// still get there. A start command that has not yet exited (and is not
// itself the process the pid file names) is waited for up to
// CommandTimeout, as systemd waits for a forking service's start: on a
// host whose CPU is taken, a daemonising script may simply not have had
// its turn. Then the process it left gets one more grace period.
func (t *task) awaitStarted(inst *instance, grace time.Duration) (int, error) {
	limit := t.rt.cfg.Clock.After(t.rt.cfg.CommandTimeout)
	var extra <-chan time.Time
	for {
		pid, err := readPidFile(t.proc.PidFile)
		if err == nil {
			if err = checkProcess(pid, t.proc.ProcName); err == nil {
				return pid, nil
			}
		}
		if !stillStarting(inst, pid) {
			return 0, err
		}
		if extra == nil && !startCommandRunning(inst, pid) {
			extra = t.rt.cfg.Clock.After(grace)
		}
		select {
		case <-extra:
			return 0, err
		case <-limit:
			return 0, fmt.Errorf("the start command still runs %v later: %w", t.rt.cfg.CommandTimeout, err)
		case <-t.ctx.Done():
			return 0, t.ctx.Err()
		case <-t.rt.cfg.Clock.After(procNamePoll):
		}
	}
}

// startCommandRunning reports whether the start command has yet to exit
// while the pid file names some other process (or none).
func startCommandRunning(inst *instance, pid int) bool {
	select {
	case <-inst.exited:
		return false
	default:
		return pid != inst.pgid
	}
}

// stillStarting reports whether the start command's process group may
// still get there: pid (0 when the pid file could not be read) is one of
// its live processes, or without one the group has a live process.
func stillStarting(inst *instance, pid int) bool {
	if pid <= 0 {
		return syscall.Kill(-inst.pgid, 0) == nil
	}
	pg, err := syscall.Getpgid(pid)
	return err == nil && pg == inst.pgid && alive(pid)
}

// procNamePoll is how often awaitStarted looks again.
const procNamePoll = 50 * time.Millisecond

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// monitor watches inst's main process until it dies (TASK_FAILED, or
// TASK_FINISHED on exit 0, when the task was running; when a kill,
// restart or update was stopping it, that reports), or the task stops
// following inst.
func (t *task) monitor(inst *instance) {
	var exited <-chan struct{}
	if inst.mainPid == inst.pgid {
		exited = inst.exited // foreground: our own child, exit code known
	}
	procName := ""
	t.mu.Lock()
	if t.proc.PidFile != "" {
		procName = t.proc.ProcName
	}
	t.mu.Unlock()
	for {
		var why error
		select {
		case <-exited:
			why = fmt.Errorf("process %d exited with status %d", inst.mainPid, inst.exitCode)
		case <-t.rt.cfg.Clock.After(t.rt.cfg.LivenessInterval):
			why = checkProcess(inst.mainPid, procName)
		case <-t.ctx.Done():
			return
		}
		t.mu.Lock()
		if t.inst != inst || t.life == lifeDone {
			t.mu.Unlock()
			return
		}
		if why == nil {
			t.mu.Unlock()
			continue
		}
		if t.life != lifeRunning {
			t.mu.Unlock()
			return
		}
		t.advance(lifeStopping)
		cg := t.cg
		t.mu.Unlock()
		t.died(inst, cg, why)
		return
	}
}

func (t *task) died(inst *instance, cg *Cgroup, why error) {
	var code *int
	msg := why.Error()
	if inst.mainPid == inst.pgid {
		// Our own child: its exit status is on the way.
		select {
		case <-inst.exited:
			c := inst.exitCode
			code = &c
			msg = fmt.Sprintf("process %d exited with status %d", inst.mainPid, c)
		case <-time.After(time.Second):
		}
	}
	var reason *mesos.TaskStatus_Reason
	if cg != nil && cg.OOMKills() > 0 {
		r := reasonMemory
		reason = &r
		msg = fmt.Sprintf("%s: killed for exceeding the memory limit of %v MB", msg, t.currentSpec().Resources.MemLimitMB)
	}
	if code == nil || *code != 0 {
		msg += t.outputOf(inst)
	}
	t.log().Info(msg)
	state := taskstate.Failed
	if code != nil && *code == 0 && reason == nil {
		state = taskstate.Finished
	}
	t.finish(state, reason, msg, code)
}
