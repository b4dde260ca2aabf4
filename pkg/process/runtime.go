package process

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/executor"
	"github.com/bcs-mesos/bcs-mesos/pkg/remotefile"
	"github.com/bcs-mesos/bcs-mesos/pkg/taskstate"
	"github.com/bcs-mesos/bcs-mesos/proto"
	"github.com/jonboulle/clockwork"
)

// Config configures the process runtime.
type Config struct {
	// WorkBaseDir and RunBaseDir are the ${work_base_dir} and
	// ${run_base_dir} roots, absolute; New creates them and makes them
	// 0711: every instance's user passes through to its own directories,
	// none lists the others'. A task touches nothing outside its
	// instance's directories under them.
	WorkBaseDir string
	RunBaseDir  string
	// PackageDirs are the only directories file:// packages may come
	// from; none by default.
	PackageDirs []string
	// CacheDir holds IfNotPresent packages.
	CacheDir string
	// LogDir receives <task>.stdout and <task>.stderr; default the
	// working directory (the sandbox).
	LogDir string
	// DefaultUser runs processes whose spec names no user; default
	// "nobody". Root runs a process only when the spec says "root" (or
	// DefaultUser is root).
	DefaultUser string
	// Cgroups enforces limits and tracks every process of a task; nil
	// leaves only the process group (no limits).
	Cgroups *Cgroups
	// HostIP is where HTTP and TCP health checks connect; default
	// 127.0.0.1 (processes share the host's network).
	HostIP string
	// AgentEndpoint is the agent's API (MESOS_AGENT_ENDPOINT, host:port),
	// which no health check probes.
	AgentEndpoint string
	Clock         clockwork.Clock
	// Logger defaults to discarding.
	Logger *slog.Logger
	// HTTPClient fetches packages; default http.DefaultClient.
	HTTPClient *http.Client
	// Remote fetches the configmap items of type http, https and ftp;
	// nil is a Fetcher with the defaults that keeps no copy.
	Remote *remotefile.Fetcher
	// LivenessInterval is how often a running process is checked;
	// default 1s.
	LivenessInterval time.Duration
	// CommandTimeout bounds reload, exec and stop commands without a
	// timeout of their own, and how long a daemonising start command
	// still running after startGracePeriod is waited for; default 60s.
	CommandTimeout time.Duration
	// TermWait is how long SIGTERM gets after stopCmd and the grace
	// period, before SIGKILL; default 1s.
	TermWait time.Duration
}

// Runtime runs each task of a group as one bare process (seed 000
// "process"). It implements executor.Runtime.
type Runtime struct {
	cfg     Config
	fetcher *Fetcher
	// workRoot and runRoot open WorkBaseDir and RunBaseDir for the
	// runtime's life: every path of a task is opened through them.
	workRoot, runRoot *os.Root

	mu    sync.Mutex
	tasks map[string]*task
}

var _ executor.Runtime = (*Runtime)(nil)

// New prepares the roots and returns a runtime.
func New(cfg Config) (*Runtime, error) {
	if cfg.DefaultUser == "" {
		cfg.DefaultUser = "nobody"
	}
	if cfg.HostIP == "" {
		cfg.HostIP = "127.0.0.1"
	}
	if cfg.Clock == nil {
		cfg.Clock = clockwork.NewRealClock()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.LivenessInterval <= 0 {
		cfg.LivenessInterval = time.Second
	}
	if cfg.CommandTimeout <= 0 {
		cfg.CommandTimeout = time.Minute
	}
	if cfg.TermWait <= 0 {
		cfg.TermWait = time.Second
	}
	if cfg.LogDir == "" {
		cfg.LogDir = "."
	}
	if cfg.Remote == nil {
		cfg.Remote = &remotefile.Fetcher{}
	}
	if cfg.CacheDir == "" {
		return nil, fmt.Errorf("process runtime: no cache dir: %w", errdefs.ErrInvalidArgument)
	}
	var roots [2]*os.Root
	for i, dir := range []string{cfg.WorkBaseDir, cfg.RunBaseDir} {
		if !filepath.IsAbs(dir) {
			return nil, fmt.Errorf("process runtime: base dir %q: want an absolute path: %w", dir, errdefs.ErrInvalidArgument)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("base dir: %w", err)
		}
		if err := os.Chmod(dir, aboveInstanceMode); err != nil {
			return nil, fmt.Errorf("base dir: %w", err)
		}
		root, err := os.OpenRoot(dir)
		if err != nil {
			return nil, fmt.Errorf("base dir: %w", err)
		}
		roots[i] = root
	}
	return &Runtime{
		cfg:      cfg,
		fetcher:  &Fetcher{CacheDir: cfg.CacheDir, Client: cfg.HTTPClient, Logger: cfg.Logger, PackageDirs: cfg.PackageDirs},
		workRoot: roots[0], runRoot: roots[1],
		tasks: map[string]*task{},
	}, nil
}

// Launch implements executor.Runtime: each task starts on its own; the
// group stays together for updates.
func (r *Runtime) Launch(_ context.Context, tasks []executor.Task, rep executor.Reporter) {
	g := &group{rt: r}
	for _, et := range tasks {
		t := r.newTask(et, g, rep)
		g.tasks = append(g.tasks, t)
	}
	for _, t := range g.tasks {
		r.mu.Lock()
		r.tasks[t.id] = t
		r.mu.Unlock()
		if t.proc == nil {
			reason := reasonInvalid
			go t.finish(taskstate.Failed, &reason, "the process executor runs process tasks only; this spec has a container", nil)
			continue
		}
		go t.launch()
	}
}

// Kill implements executor.Runtime.
func (r *Runtime) Kill(id string, grace time.Duration) {
	if t := r.task(id); t != nil {
		go t.kill(grace, taskstate.Killed, nil, "killed")
	}
}

// Shutdown implements executor.Runtime: every task is killed with its
// own grace period capped at grace.
func (r *Runtime) Shutdown(grace time.Duration) {
	r.mu.Lock()
	var all []*task
	for _, t := range r.tasks {
		all = append(all, t)
	}
	r.mu.Unlock()
	for _, t := range all {
		g := t.killGrace
		if g > grace {
			g = grace
		}
		go t.kill(g, taskstate.Killed, nil, "executor shutdown")
	}
	deadline := time.After(grace + 5*time.Second)
	for _, t := range all {
		select {
		case <-t.finished:
		case <-deadline:
			return
		}
	}
}

// Message implements executor.Runtime: reload, restart, exec, signal,
// update-env (for the next start), update-resources (cgroup limits in
// place) and update (the task's group to a new revision, see
// group.update).
func (r *Runtime) Message(ctx context.Context, msg *proto.Message) proto.MessageResult {
	res := proto.MessageResult{}
	t := r.task(msg.TaskID)
	if t == nil {
		res.Error = fmt.Sprintf("task %q: %v", msg.TaskID, errdefs.ErrNotFound)
		return res
	}
	if msg.Type != proto.MessageUpdate {
		// An update lasts as long as its grace periods and starts do; it
		// bounds its reloadCmds itself.
		var cancel context.CancelFunc
		ctx, cancel = r.commandContext(ctx)
		defer cancel()
	}
	var err error
	var out *proto.OutputBuffer // of reload and exec
	switch msg.Type {
	case proto.MessageReload:
		reloadCmd := t.currentSpec().Process.ReloadCmd
		if reloadCmd == "" {
			err = fmt.Errorf("task %q has no reloadCmd: %w", t.id, errdefs.ErrInvalidArgument)
			break
		}
		out, res.ExitCode, err = t.runCommand(ctx, reloadCmd)
	case proto.MessageExec:
		if len(msg.Command) == 0 {
			err = fmt.Errorf("exec without a command: %w", errdefs.ErrInvalidArgument)
			break
		}
		out, res.ExitCode, err = t.runCommandWith(ctx, shellJoin(msg.Command), msg)
	case proto.MessageRestart:
		err = t.restart()
	case proto.MessageSignal:
		err = t.signal(syscall.Signal(msg.Signal))
	case proto.MessageUpdateEnv:
		t.updateEnv(msg.Env)
	case proto.MessageUpdateResources:
		err = t.updateResources(msg.Resources)
	case proto.MessageUpdate:
		err = t.group.update(ctx, msg.Update)
	default:
		err = fmt.Errorf("message %q is not supported by the process executor: %w", msg.Type, errdefs.ErrInvalidArgument)
	}
	if out != nil {
		res.Output, res.Truncated = out.String(), out.Truncated()
	}
	if err != nil {
		res.Error = err.Error()
	}
	res.OK = err == nil && res.ExitCode == 0
	return res
}

// commandContext bounds ctx by CommandTimeout unless it has a deadline.
func (r *Runtime) commandContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, r.cfg.CommandTimeout)
}

func (r *Runtime) task(id string) *task {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.tasks[id]
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]`)

// cgroupName is a task's cgroup directory name.
func cgroupName(taskID string) string { return unsafeName.ReplaceAllString(taskID, "_") }

// shellJoin quotes argv for /bin/sh -c.
func shellJoin(argv []string) string {
	if len(argv) == 1 {
		return argv[0]
	}
	quoted := make([]string, len(argv))
	for i, a := range argv {
		quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(quoted, " ")
}

// logFile opens the task's output file <dir>/<task>.<stream> to append
// to: mode 0600, owned by acct's user, so no other user on the agent
// reads it.
// logPath is the file of a task's stream (stdout, stderr) under dir.
func logPath(dir, taskID, stream string) string {
	return filepath.Join(dir, cgroupName(taskID)+"."+stream)
}

func logFile(dir, taskID, stream string, acct *account) (*os.File, error) {
	f, err := os.OpenFile(logPath(dir, taskID, stream), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	err = f.Chmod(0o600)
	if uid, gid := acct.owner(); err == nil && uid >= 0 {
		err = f.Chown(uid, gid)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
