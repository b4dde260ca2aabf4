package devcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// createSandbox creates an executor run's directory, mirroring the Mesos
// agent layout
// <work>/agents/<agent>/frameworks/<fw>/executors/<executor>/runs/<container>
// with runs/latest linking to it, and attaches it to the agent's files
// API the three ways a Mesos 1.12 agent does (Framework::addExecutor):
// as /frameworks/<fw>/executors/<executor>/runs/latest, as
// <work>/…/runs/latest and as its own path. Caller holds a.m.mu.
func (a *agent) createSandbox(fwID, execID, containerID string) string {
	sandbox := filepath.Join(a.m.cfg.WorkDir, "agents", a.id, "frameworks", fwID, "executors", execID, "runs", containerID)
	if err := os.MkdirAll(sandbox, 0o755); err != nil {
		return sandbox // the launch fails on it
	}
	latest := filepath.Join(filepath.Dir(sandbox), "latest")
	_ = os.Remove(latest)
	if err := os.Symlink(sandbox, latest); err != nil {
		a.m.log().Warn("sandbox: runs/latest link", "sandbox", sandbox, "err", err)
	}
	a.attachSandbox(fwID, execID, sandbox)
	return sandbox
}

// attachSandbox makes a sandbox readable through the agent's files API.
func (a *agent) attachSandbox(fwID, execID, sandbox string) {
	for _, virtual := range sandboxVirtualPaths(fwID, execID, sandbox) {
		if err := a.files.attach(sandbox, virtual); err != nil {
			a.m.log().Warn("sandbox: attach to the files API", "sandbox", sandbox, "virtual_path", virtual, "err", err)
		}
	}
}

func sandboxVirtualPaths(fwID, execID, sandbox string) []string {
	return []string{
		"/frameworks/" + fwID + "/executors/" + execID + "/runs/latest",
		filepath.Join(filepath.Dir(sandbox), "latest"),
		sandbox,
	}
}

// collectSandbox removes an ended executor's directory (its runs) after
// the GC delay, then detaches it from the files API: until that, its
// files stay readable. A Mesos agent too detaches a path once its GC
// has removed it (Slave::removeExecutor), so a 404 means the files are
// gone. Caller holds a.m.mu.
func (a *agent) collectSandbox(fwID, execID, sandbox string) {
	a.m.cfg.Clock.AfterFunc(a.m.cfg.SandboxGCDelay.D(), func() {
		_ = os.RemoveAll(filepath.Dir(filepath.Dir(sandbox)))
		for _, virtual := range sandboxVirtualPaths(fwID, execID, sandbox) {
			a.files.detach(virtual)
		}
	})
}

// startExecutorProcess prepares the sandbox and starts the executor in the
// background. Caller holds a.m.mu.
func (a *agent) startExecutorProcess(ex *executorRun) {
	ex.sandbox = a.createSandbox(ex.fw.id, ex.id, ex.containerID)
	env := a.executorEnv(ex)
	cmdInfo := *ex.info.Command
	sandbox := ex.sandbox
	a.m.procs.Add(1)
	go func() {
		defer a.m.procs.Done()
		cmd, err := a.prepareAndStart(cmdInfo, sandbox, env)
		a.m.mu.Lock()
		defer a.m.mu.Unlock()
		if err != nil {
			a.m.log().Warn("executor launch failed", "executor", ex.id, "framework", ex.fw.id, "err", err)
			a.executorTerminated(ex, -1, "Failed to launch container: "+err.Error())
			return
		}
		ex.sid, ex.launched = cmd.Process.Pid, true
		ex.startTime = startTimeOf(ex.sid)
		a.checkpointExecutor(ex)
		a.m.procs.Add(1)
		go a.waitExecutor(ex, cmd)
		if a.m.stopped || ex.terminating || a.removed {
			ex.destroy()
			return
		}
		ex.regTimer = a.killUnlessSubscribed(ex, a.m.cfg.ExecutorRegistrationTimeout.D(), &ex.regTimedOut, "executor did not subscribe in time; killing it")
		a.m.log().Info("executor started", "executor", ex.id, "framework", ex.fw.id, "agent", a.id, "pid", ex.sid, "sandbox", sandbox)
	}()
}

// killUnlessSubscribed destroys ex's container when it has not subscribed
// within timeout, marking why in timedOut. Caller holds a.m.mu.
func (a *agent) killUnlessSubscribed(ex *executorRun, timeout time.Duration, timedOut *bool, why string) *lockedTimer {
	return a.m.afterFunc(timeout, func() {
		if !ex.subscribed && a.executors[ex.key()] == ex {
			a.m.log().Warn(why, "executor", ex.id, "framework", ex.fw.id, "timeout", timeout)
			*timedOut = true
			ex.destroy()
		}
	})
}

func (a *agent) waitExecutor(ex *executorRun, cmd *exec.Cmd) {
	defer a.m.procs.Done()
	err := cmd.Wait()
	status := int32(-1)
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok {
		status = int32(ws)
	}
	msg := "Executor terminated"
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			msg = "Executor terminated: " + err.Error()
		}
	}
	a.executorEnded(ex, status, msg)
}

// executorEnded destroys what is left of the container of an executor
// whose process exited, and reports the executor terminated.
func (a *agent) executorEnded(ex *executorRun, status int32, msg string) {
	ex.destroy() // the container ends with its executor: reap leftovers
	close(ex.exited)
	a.m.mu.Lock()
	defer a.m.mu.Unlock()
	if !a.m.stopped {
		a.m.log().Info("executor exited", "executor", ex.id, "framework", ex.fw.id, "wait_status", status)
	}
	a.executorTerminated(ex, status, msg)
}

// startTimeOf is the start time of a process, which tells it from a later
// one of the same pid; 0 when it is gone.
func startTimeOf(pid int) uint64 {
	st, _ := readProcStat(pid)
	return st.startTime
}

// prepareAndStart creates the sandbox, fetches the URIs and starts the
// command in its own session with stdout/stderr files in the
// sandbox, like the Mesos containerizer.
func (a *agent) prepareAndStart(ci mesos.CommandInfo, sandbox string, env []string) (*exec.Cmd, error) {
	if err := os.MkdirAll(sandbox, 0o755); err != nil {
		return nil, fmt.Errorf("create sandbox: %w", err)
	}
	ctx, cancel := context.WithTimeout(a.m.procCtx, 5*time.Minute)
	defer cancel()
	if err := fetchURIs(ctx, ci.URIs, sandbox); err != nil {
		return nil, err
	}
	stdout, err := os.Create(filepath.Join(sandbox, "stdout"))
	if err != nil {
		return nil, err
	}
	defer stdout.Close()
	stderr, err := os.Create(filepath.Join(sandbox, "stderr"))
	if err != nil {
		return nil, err
	}
	defer stderr.Close()
	// A fork elsewhere in this process may still hold the fetched binary
	// open for writing when we exec it (golang/go#22315): ETXTBSY is
	// transient, so try again shortly.
	var cmd *exec.Cmd
	for attempt := 0; ; attempt++ {
		cmd = executorCommand(&ci, sandbox, env)
		cmd.Stdout, cmd.Stderr = stdout, stderr
		err = cmd.Start()
		if !errors.Is(err, syscall.ETXTBSY) || attempt == 20 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		return nil, err
	}
	return cmd, nil
}

// executorCommand builds the executor's command from its CommandInfo.
func executorCommand(ci *mesos.CommandInfo, sandbox string, env []string) *exec.Cmd {
	var cmd *exec.Cmd
	if ci.Shell == nil || *ci.Shell {
		cmd = exec.Command("/bin/sh", "-c", ci.GetValue())
	} else {
		path := ci.GetValue()
		if !filepath.IsAbs(path) && filepath.Base(path) != path {
			path = filepath.Join(sandbox, path)
		}
		cmd = exec.Command(path)
		if len(ci.Arguments) > 0 {
			cmd.Args = append([]string(nil), ci.Arguments...)
		}
	}
	cmd.Dir = sandbox
	cmd.Env = env
	for _, v := range ci.GetEnvironment().GetVariables() {
		if v.Value != nil {
			cmd.Env = append(cmd.Env, v.Name+"="+*v.Value)
		}
	}
	// Like Mesos' posix launcher: the executor leads a session of its own,
	// and destroying its container kills that session.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	return cmd
}

// executorEnv is the environment Mesos gives a custom executor: the
// agent's own environment plus the MESOS_* variables. Caller holds a.m.mu.
func (a *agent) executorEnv(ex *executorRun) []string {
	checkpoint := ex.fw.info.Checkpoint != nil && *ex.fw.info.Checkpoint
	env := append(os.Environ(),
		"MESOS_FRAMEWORK_ID="+ex.fw.id,
		"MESOS_EXECUTOR_ID="+ex.id,
		"MESOS_DIRECTORY="+ex.sandbox,
		"MESOS_SANDBOX="+ex.sandbox,
		"MESOS_AGENT_ENDPOINT="+a.endpoint,
		"MESOS_SLAVE_ID="+a.id,
		"MESOS_SLAVE_PID=slave(1)@"+a.endpoint,
		"MESOS_CHECKPOINT="+boolDigit(checkpoint),
		"MESOS_HTTP_COMMAND_EXECUTOR=0",
		"MESOS_EXECUTOR_SHUTDOWN_GRACE_PERIOD="+mesosDuration(ex.gracePeriod(a.m.cfg.ExecutorShutdownGracePeriod.D())),
	)
	if checkpoint {
		env = append(env,
			"MESOS_RECOVERY_TIMEOUT="+mesosDuration(a.m.cfg.RecoveryTimeout.D()),
			"MESOS_SUBSCRIPTION_BACKOFF_MAX="+mesosDuration(a.m.cfg.SubscriptionBackoffMax.D()),
		)
	}
	// The agent serves HTTPS only: its executors must speak it.
	if a.m.security.tls != nil {
		env = append(env, "LIBPROCESS_SSL_ENABLED=true")
		if a.m.cfg.SSLCAFile != "" {
			env = append(env, "LIBPROCESS_SSL_CA_FILE="+a.m.cfg.SSLCAFile, "LIBPROCESS_SSL_VERIFY_SERVER_CERT=true")
		}
	}
	return env
}

func boolDigit(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// mesosDuration prints d in Mesos' Duration syntax ("5secs", "1.5mins",
// "500ms"): the largest unit that keeps the value at least one.
func mesosDuration(d time.Duration) string {
	units := []struct {
		name string
		size time.Duration
	}{
		{"weeks", 7 * 24 * time.Hour}, {"days", 24 * time.Hour}, {"hrs", time.Hour},
		{"mins", time.Minute}, {"secs", time.Second}, {"ms", time.Millisecond}, {"us", time.Microsecond},
	}
	for _, u := range units {
		if d >= u.size {
			return strconv.FormatFloat(float64(d)/float64(u.size), 'g', -1, 64) + u.name
		}
	}
	return strconv.FormatInt(int64(d), 10) + "ns"
}

// startCommandTask runs a LAUNCH task that has a CommandInfo and no
// executor, the way the Mesos command executor would: TASK_STARTING,
// TASK_RUNNING once the process runs, then TASK_FINISHED on exit status 0
// or TASK_FAILED. Caller holds a.m.mu.
func (a *agent) startCommandTask(t *task) {
	ct := &commandTask{task: t, containerID: newUUIDString(), exited: make(chan struct{})}
	t.command = ct
	a.commandTasks[t.key()] = ct
	ct.sandbox = a.createSandbox(t.fw.id, t.info.TaskID.Value, ct.containerID)
	env := append(os.Environ(),
		"MESOS_FRAMEWORK_ID="+t.fw.id,
		"MESOS_EXECUTOR_ID="+t.info.TaskID.Value,
		"MESOS_TASK_ID="+t.info.TaskID.Value,
		"MESOS_DIRECTORY="+ct.sandbox,
		"MESOS_SANDBOX="+ct.sandbox,
		"MESOS_AGENT_ENDPOINT="+a.endpoint,
		"MESOS_SLAVE_ID="+a.id,
	)
	ci := *t.info.Command
	a.statusUpdate(t, t.status(a.m.cfg.Clock.Now(), mesos.TASK_STARTING, mesos.SOURCE_EXECUTOR, 0, ""), false)
	a.m.procs.Add(1)
	go func() {
		defer a.m.procs.Done()
		cmd, err := a.prepareAndStart(ci, ct.sandbox, env)
		a.m.mu.Lock()
		if err != nil {
			close(ct.exited)
			a.collectSandbox(t.fw.id, t.info.TaskID.Value, ct.sandbox)
			st := t.status(a.m.cfg.Clock.Now(), mesos.TASK_FAILED, mesos.SOURCE_EXECUTOR, mesos.REASON_CONTAINER_LAUNCH_FAILED, "Failed to launch task: "+err.Error())
			if !isTerminal(t.state) {
				a.statusUpdate(t, st, false)
			}
			a.m.mu.Unlock()
			return
		}
		ct.sid = cmd.Process.Pid
		ct.startTime = startTimeOf(ct.sid)
		a.checkpointCommand(ct)
		if t.killing || a.m.stopped || a.removed {
			ct.destroy()
		} else if !isTerminal(t.state) {
			a.statusUpdate(t, t.status(a.m.cfg.Clock.Now(), mesos.TASK_RUNNING, mesos.SOURCE_EXECUTOR, 0, ""), false)
		}
		a.m.mu.Unlock()

		err = cmd.Wait()
		ct.destroy()
		close(ct.exited)
		a.m.mu.Lock()
		defer a.m.mu.Unlock()
		a.collectSandbox(t.fw.id, t.info.TaskID.Value, ct.sandbox)
		if isTerminal(t.state) {
			return
		}
		switch {
		case t.killing:
			a.statusUpdate(t, t.status(a.m.cfg.Clock.Now(), mesos.TASK_KILLED, mesos.SOURCE_EXECUTOR, 0, "Command terminated with signal Killed"), false)
		case err == nil:
			a.statusUpdate(t, t.status(a.m.cfg.Clock.Now(), mesos.TASK_FINISHED, mesos.SOURCE_EXECUTOR, 0, "Command exited with status 0"), false)
		default:
			a.statusUpdate(t, t.status(a.m.cfg.Clock.Now(), mesos.TASK_FAILED, mesos.SOURCE_EXECUTOR, mesos.REASON_COMMAND_EXECUTOR_FAILED, "Command "+describeExit(cmd)), false)
		}
	}()
}

func describeExit(cmd *exec.Cmd) string {
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok {
		if ws.Signaled() {
			return "terminated with signal " + ws.Signal().String()
		}
		return "exited with status " + strconv.Itoa(ws.ExitStatus())
	}
	return "exited"
}

// killCommandTask sends SIGTERM, then SIGKILL after the kill policy's
// grace period (default 3s, like the command executor). Caller holds a.m.mu.
func (a *agent) killCommandTask(ct *commandTask, policy *mesos.KillPolicy) {
	grace := 3 * time.Second
	if policy != nil && policy.GracePeriod != nil {
		grace = time.Duration(policy.GracePeriod.Nanoseconds)
	}
	if ct.sid <= 0 {
		return // not started yet: the launcher sees t.killing
	}
	_ = syscall.Kill(-ct.sid, syscall.SIGTERM)
	go func() {
		select {
		case <-ct.exited:
		case <-a.m.cfg.Clock.After(grace):
			ct.destroy()
		}
	}()
}
