package process

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
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

// DefaultStartGracePeriod is seed 000's startGracePeriod default.
const DefaultStartGracePeriod = time.Second

// startScript waits on fd 3 until the executor has put the shell into the
// task's cgroup, then becomes the start command.
const startScript = `read -r _ <&3; exec 3<&-; exec /bin/sh -c "$1"`

// task is one process task. opMu serialises launch, kill and restart;
// mu guards the fields below it.
type task struct {
	rt        *Runtime
	id        string
	spec      *proto.TaskSpec
	proc      *proto.ProcessSpec
	killGrace time.Duration
	rep       executor.Reporter
	ctx       context.Context // cancelled when the task is killed
	cancel    context.CancelFunc
	finished  chan struct{}

	opMu sync.Mutex

	mu           sync.Mutex
	acct         *account
	env          []string
	cg           *Cgroup
	inst         *instance
	info         proto.ProcessInfo
	done         bool
	stopping     bool // kill or restart under way: deaths are expected
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
}

func (r *Runtime) newTask(et executor.Task, rep executor.Reporter) *task {
	ctx, cancel := context.WithCancel(context.Background())
	t := &task{rt: r, id: et.ID(), spec: et.Spec, proc: et.Spec.Process, killGrace: et.KillGrace, rep: rep,
		ctx: ctx, cancel: cancel, finished: make(chan struct{}), healthy: map[int]bool{}}
	if t.proc != nil {
		t.info = proto.ProcessInfo{ProcName: t.proc.ProcName, WorkPath: t.proc.WorkPath, Ports: portsOf(et.Spec)}
	}
	return t
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
	done := t.done // killed before the launch began
	t.mu.Unlock()
	if done {
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
	t.running(inst)
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

// running records inst as the live instance, reports RUNNING and starts
// the liveness monitor and the health checks.
func (t *task) running(inst *instance) {
	t.mu.Lock()
	t.inst = inst
	t.stopping = false
	t.info.Pid = inst.mainPid
	t.info.StartedAt = t.rt.cfg.Clock.Now().UTC()
	t.info.ExitCode = nil
	t.lastHealthy = nil
	t.healthy = map[int]bool{}
	t.mu.Unlock()
	t.report(taskstate.Running, nil, "", nil)
	t.startHealthChecks()
	go t.monitor(inst)
}

// prepare resolves the user, creates the work path and pid file
// directories, writes the configmap and secret files, fetches every URI
// and creates the cgroup.
func (t *task) prepare() error {
	p := t.proc
	if p.WorkPath == "" || p.StartCmd == "" {
		return fmt.Errorf("process %q needs workPath and startCmd: %w", p.ProcName, errdefs.ErrInvalidArgument)
	}
	acct, err := lookupAccount(p.User, t.rt.cfg.DefaultUser)
	if err != nil {
		return err
	}
	uid, gid := -1, -1
	if acct.cred != nil {
		uid, gid = acct.uid, acct.gid
	}
	env := []string{
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"HOME=" + acct.home, "USER=" + acct.name, "LOGNAME=" + acct.name,
	}
	for _, e := range t.spec.Env {
		env = append(env, e.Name+"="+e.Value)
	}
	t.mu.Lock()
	t.acct, t.env = acct, env
	t.mu.Unlock()
	if err := mkdirOwned(p.WorkPath, uid, gid); err != nil {
		return err
	}
	if p.PidFile != "" {
		if err := mkdirOwned(filepath.Dir(p.PidFile), uid, gid); err != nil {
			return err
		}
		if err := os.Remove(p.PidFile); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	for _, f := range t.spec.Files {
		if err := writeTaskFile(f, p.WorkPath, acct); err != nil {
			return err
		}
	}
	for _, uri := range p.URIs {
		stats, err := t.rt.fetcher.Fetch(t.ctx, uri, uid, gid)
		if err != nil {
			return err
		}
		t.log().Info("fetched", "url", safeURL(uri.Value), "downloaded", stats.Downloaded, "cache_hit", stats.CacheHit)
	}
	for i, hc := range t.spec.HealthChecks {
		if _, err := t.prober(hc); err != nil {
			return fmt.Errorf("health check %d: %w", i, err)
		}
	}
	limited := t.spec.Resources.CPULimit > 0 || t.spec.Resources.MemLimitMB > 0
	if limited && t.rt.cfg.Cgroups == nil {
		return fmt.Errorf("resource limits (cpu %v, memory %v MB) need cgroups, which this executor has not: %w",
			t.spec.Resources.CPULimit, t.spec.Resources.MemLimitMB, errdefs.ErrUnavailable)
	}
	if t.rt.cfg.Cgroups != nil {
		cg, err := t.rt.cfg.Cgroups.Create(cgroupName(t.id), t.spec.Resources.CPULimit, t.spec.Resources.MemLimitMB)
		if err != nil {
			return err
		}
		t.mu.Lock()
		t.cg = cg
		t.mu.Unlock()
	}
	return t.ctx.Err()
}

func mkdirOwned(dir string, uid, gid int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if uid >= 0 {
		return os.Chown(dir, uid, gid)
	}
	return nil
}

// writeTaskFile writes a configmap or secret item: relative paths are
// under the work path; the owner is the item's user (default root) and
// the group the task's, mode 0640 (0440 read-only) so secrets stay
// private to both.
func writeTaskFile(f proto.File, workPath string, acct *account) error {
	path := f.Path
	if !filepath.IsAbs(path) {
		path = filepath.Join(workPath, path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	mode := os.FileMode(0o640)
	if f.ReadOnly {
		mode = 0o440
	}
	_ = os.Remove(path)
	if err := os.WriteFile(path, f.Content, mode); err != nil {
		return fmt.Errorf("file %s: %w", path, err)
	}
	owner := f.User
	if owner == "" {
		owner = "root"
	}
	o, err := lookupAccount(owner, owner)
	if err != nil {
		return err
	}
	if err := os.Chown(path, o.uid, acct.gid); err != nil {
		return err
	}
	return os.Chmod(path, mode)
}

// start runs command as the task's user in its work path, in a new
// process group inside the cgroup, and waits startGracePeriod; then the
// process is alive when the pid in pidFile runs as procName (or, without
// a pidFile, when the command still runs).
func (t *task) start(command string) (*instance, error) {
	t.mu.Lock()
	acct, env, cg := t.acct, append([]string(nil), t.env...), t.cg
	t.mu.Unlock()
	stdout, err := logFile(t.rt.cfg.LogDir, t.id, "stdout")
	if err != nil {
		return nil, err
	}
	defer stdout.Close()
	stderr, err := logFile(t.rt.cfg.LogDir, t.id, "stderr")
	if err != nil {
		return nil, err
	}
	defer stderr.Close()
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
	inst := &instance{cmd: cmd, pgid: cmd.Process.Pid, mainPid: cmd.Process.Pid, exited: make(chan struct{})}
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
				return nil, fmt.Errorf("start command exited with status %d within startGracePeriod %v", inst.exitCode, grace)
			}
			if t.proc.PidFile == "" {
				return nil, fmt.Errorf("start command exited within startGracePeriod %v and there is no pidFile to follow", grace)
			}
		case <-t.ctx.Done():
			t.killInstance(inst, syscall.SIGKILL)
			return nil, t.ctx.Err()
		}
	}
	if t.proc.PidFile == "" {
		return inst, nil
	}
	pid, err := readPidFile(t.proc.PidFile)
	if err == nil {
		err = checkProcess(pid, t.proc.ProcName)
	}
	if err != nil {
		t.killInstance(inst, syscall.SIGKILL)
		return nil, fmt.Errorf("after startGracePeriod %v: %w", grace, err)
	}
	inst.mainPid = pid
	return inst, nil
}

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
// TASK_FINISHED on exit 0), or the task stops following inst.
func (t *task) monitor(inst *instance) {
	var exited <-chan struct{}
	if inst.mainPid == inst.pgid {
		exited = inst.exited // foreground: our own child, exit code known
	}
	procName := ""
	if t.proc.PidFile != "" {
		procName = t.proc.ProcName
	}
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
		if t.inst != inst || t.done {
			t.mu.Unlock()
			return
		}
		if why == nil || t.stopping {
			t.mu.Unlock()
			continue
		}
		t.stopping = true
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
		msg = fmt.Sprintf("%s: killed for exceeding the memory limit of %v MB", msg, t.spec.Resources.MemLimitMB)
	}
	t.log().Info(msg)
	state := taskstate.Failed
	if code != nil && *code == 0 && reason == nil {
		state = taskstate.Finished
	}
	t.finish(state, reason, msg, code)
}

// kill stops the task: stopCmd, the grace period, SIGTERM, TermWait,
// SIGKILL (without stopCmd: SIGTERM, grace, SIGKILL), to the whole
// process group and everything in the cgroup; then reports state.
func (t *task) kill(grace time.Duration, state taskstate.State, reason *mesos.TaskStatus_Reason, msg string) {
	t.cancel()
	t.opMu.Lock()
	defer t.opMu.Unlock()
	t.mu.Lock()
	if t.done {
		t.mu.Unlock()
		return
	}
	t.stopping = true
	inst := t.inst
	t.mu.Unlock()
	t.stopHealthChecks()
	if inst != nil {
		t.stop(inst, grace)
	}
	t.finish(state, reason, msg, nil)
}

// stop ends inst politely, then by force.
func (t *task) stop(inst *instance, grace time.Duration) {
	if t.proc.StopCmd != "" {
		ctx, cancel := context.WithTimeout(context.Background(), grace)
		out, code, err := t.runCommand(ctx, t.proc.StopCmd)
		cancel()
		t.log().Info("stopCmd ran", "exit", code, "err", err, "output", out)
		if t.waitGone(inst, grace) {
			return
		}
		t.killInstance(inst, syscall.SIGTERM)
		if t.waitGone(inst, t.rt.cfg.TermWait) {
			return
		}
	} else {
		t.killInstance(inst, syscall.SIGTERM)
		if t.waitGone(inst, grace) {
			return
		}
	}
	t.forceKill(inst)
}

// pids lists the live processes of inst: its process group and the
// task's cgroup.
func (t *task) pids(inst *instance) []int {
	t.mu.Lock()
	cg := t.cg
	t.mu.Unlock()
	seen := map[int]bool{}
	var out []int
	add := func(pid int) {
		if !seen[pid] && alive(pid) {
			seen[pid] = true
			out = append(out, pid)
		}
	}
	if cg != nil {
		for _, pid := range cg.Pids() {
			add(pid)
		}
	}
	for _, pid := range groupMembers(inst.pgid) {
		add(pid)
	}
	add(inst.mainPid)
	sort.Ints(out)
	return out
}

// groupMembers scans /proc for the processes of process group pgid.
func groupMembers(pgid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 2 && f[2] == strconv.Itoa(pgid) {
			out = append(out, pid)
		}
	}
	return out
}

// killInstance signals inst's process group, then every other process of
// the task (the cgroup's, those that left the group): once each.
func (t *task) killInstance(inst *instance, sig syscall.Signal) {
	pids := t.pids(inst)
	_ = syscall.Kill(-inst.pgid, sig)
	for _, pid := range pids {
		if pg, err := syscall.Getpgid(pid); err == nil && pg != inst.pgid {
			_ = syscall.Kill(pid, sig)
		}
	}
}

// waitGone polls until inst has no live process or d passes.
func (t *task) waitGone(inst *instance, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if len(t.pids(inst)) == 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// forceKill SIGKILLs inst until nothing of it is left (bounded).
func (t *task) forceKill(inst *instance) {
	for i := 0; i < 250; i++ {
		if len(t.pids(inst)) == 0 {
			return
		}
		t.killInstance(inst, syscall.SIGKILL)
		time.Sleep(20 * time.Millisecond)
	}
	t.log().Error("processes survived SIGKILL", "pids", t.pids(inst))
}

// finish kills what is left, removes the cgroup and reports the terminal
// state once.
func (t *task) finish(state taskstate.State, reason *mesos.TaskStatus_Reason, msg string, code *int) {
	t.mu.Lock()
	if t.done {
		t.mu.Unlock()
		return
	}
	t.done, t.stopping = true, true
	inst, cg := t.inst, t.cg
	t.info.ExitCode = code
	t.mu.Unlock()
	t.cancel()
	t.stopHealthChecks()
	if inst != nil {
		t.forceKill(inst)
	}
	if cg != nil {
		if err := cg.Remove(); err != nil {
			t.log().Warn("remove cgroup", "err", err)
		}
	}
	var healthy *bool
	if state == taskstate.Failed && reason != nil && *reason == reasonHealth {
		f := false
		healthy = &f
	}
	t.report(state, reason, msg, healthy)
	close(t.finished)
}

// runCommand runs a stop, reload or exec command as the task's user in
// its work path.
func (t *task) runCommand(ctx context.Context, command string) (string, int, error) {
	t.mu.Lock()
	acct, env := t.acct, append([]string(nil), t.env...)
	t.mu.Unlock()
	if acct == nil {
		return "", -1, fmt.Errorf("task %q has not started: %w", t.id, errdefs.ErrConflict)
	}
	out, code, err := healthcheck.Shell(t.proc.WorkPath, env, acct.cred)(ctx, command)
	return string(out), code, err
}

// restart runs restartCmd as a new start of the task, or without one
// stops the process and starts it again; the task stays RUNNING and
// reports the new pid.
func (t *task) restart() error {
	t.opMu.Lock()
	defer t.opMu.Unlock()
	t.mu.Lock()
	if t.done || t.inst == nil {
		t.mu.Unlock()
		return fmt.Errorf("task %q is not running: %w", t.id, errdefs.ErrConflict)
	}
	t.stopping = true
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
		reason := reasonLaunchFailed
		msg := "restart: " + err.Error()
		go t.finish(taskstate.Failed, &reason, msg, nil)
		return errors.New(msg)
	}
	t.running(inst)
	return nil
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

// prober builds a health check's probe: ports by name from the task's
// ports (processes share the host network: hostPort, else
// containerPort), commands through the shell as the task's user.
func (t *task) prober(hc proto.HealthCheck) (healthcheck.Prober, error) {
	ports := func(name string) (int, bool) {
		p, ok := portsOf(t.spec)[name]
		return p, ok
	}
	t.mu.Lock()
	run := healthcheck.Shell(t.proc.WorkPath, append([]string(nil), t.env...), t.acct.cred)
	t.mu.Unlock()
	return healthcheck.NewProber(hc, t.rt.cfg.HostIP, ports, run)
}

func (t *task) startHealthChecks() {
	if len(t.spec.HealthChecks) == 0 {
		return
	}
	ctx, cancel := context.WithCancel(t.ctx)
	t.mu.Lock()
	t.healthCancel = cancel
	t.mu.Unlock()
	for i, hc := range t.spec.HealthChecks {
		p, err := t.prober(hc)
		if err != nil { // validated in prepare
			t.log().Warn("health check", "index", i, "err", err)
			continue
		}
		c := &healthcheck.Checker{Prober: p, Policy: healthcheck.PolicyOf(hc), Clock: t.rt.cfg.Clock}
		go c.Run(ctx, func(r healthcheck.Result) { t.healthResult(ctx, i, r) })
	}
}

func (t *task) stopHealthChecks() {
	t.mu.Lock()
	cancel := t.healthCancel
	t.healthCancel = nil
	t.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// healthResult turns check results into TaskStatus.healthy (reported on
// change; healthy means every check passed last time) and kills the task
// after consecutiveFailures failures.
func (t *task) healthResult(ctx context.Context, i int, r healthcheck.Result) {
	if r.InGrace {
		return
	}
	t.mu.Lock()
	if ctx.Err() != nil || t.done || t.stopping {
		t.mu.Unlock()
		return
	}
	t.healthy[i] = r.Healthy
	// Unhealthy as soon as one check fails; healthy once every check
	// has passed.
	var verdict *bool
	failing := false
	for _, ok := range t.healthy {
		failing = failing || !ok
	}
	if failing || len(t.healthy) == len(t.spec.HealthChecks) {
		v := !failing
		verdict = &v
	}
	changed := verdict != nil && (t.lastHealthy == nil || *t.lastHealthy != *verdict)
	if verdict != nil {
		t.lastHealthy = verdict
	}
	t.mu.Unlock()
	if r.Kill {
		reason := reasonHealth
		msg := fmt.Sprintf("health check %s failed %d times in a row: %s", t.spec.HealthChecks[i].Type, r.ConsecutiveFailures, r.Message)
		t.log().Info(msg)
		go t.kill(t.killGrace, taskstate.Failed, &reason, msg)
		return
	}
	if changed {
		reason := reasonHealth
		msg := ""
		if !*verdict {
			msg = r.Message
		}
		t.report(taskstate.Running, &reason, msg, verdict)
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
	return cg.SetLimits(res.CPULimit, res.MemLimitMB)
}
