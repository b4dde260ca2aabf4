package process

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// An executor killed outright (SIGKILL, OOM, a crash) cannot stop its
// tasks, and daemonised processes outlive it. So every executor keeps its
// task cgroups under <parent>/<framework>.<executor>@<pid>-<start time>:
// the directory name itself says which framework's executor process owns
// it. A later executor of the same framework on the agent sweeps the
// cgroups whose owner no longer runs (that pid is gone, or started at
// another time): it kills their processes and removes them. Another
// framework's (a second cluster sharing the agent's cgroup parent) are
// its own executors' to sweep: that framework may still want them
// reported, and its task IDs may equal ours; only its dead executors'
// empty directories are removed by any. Nothing else is shared
// between executors, so two executors configured differently cannot
// mistake each other for dead. An executor that ends normally releases
// its own.

// Owner is the executor process whose task cgroups a directory holds.
type Owner struct {
	Framework string // MESOS_FRAMEWORK_ID
	Executor  string // MESOS_EXECUTOR_ID
}

// dir names the cgroup directory of o run by process pid.
func (o Owner) dir(pid int) string {
	return fmt.Sprintf("%s.%s@%d-%s", cgroupName(o.Framework), cgroupName(o.Executor), pid, startTime(pid))
}

// sameFramework reports whether the owner directory dir is one of o's
// framework's executors.
func (o Owner) sameFramework(dir string) bool {
	return strings.HasPrefix(dir, cgroupName(o.Framework)+".")
}

// Swept counts what sweeps reaped.
type Swept struct {
	Executors int // dead owners whose cgroups were removed
	Processes int // processes killed in them
}

// Add sums two counts.
func (s Swept) Add(o Swept) Swept {
	return Swept{Executors: s.Executors + o.Executors, Processes: s.Processes + o.Processes}
}

func (s Swept) String() string {
	return fmt.Sprintf("dead executors swept: %d, their processes killed: %d", s.Executors, s.Processes)
}

// SweepDead kills the processes in the cgroups of every owner of owner's
// framework under c that no longer runs, except owner (this process), and
// removes those cgroups.
func (c *Cgroups) SweepDead(owner Owner, log *slog.Logger) Swept {
	self := owner.dir(os.Getpid())
	var total Swept
	entries, _ := os.ReadDir(c.trackingDir(c.Parent))
	for _, e := range entries {
		if !e.IsDir() || e.Name() == self || OwnerAlive(e.Name()) {
			continue
		}
		if !owner.sameFramework(e.Name()) {
			c.removeEmpty(e.Name())
			continue
		}
		killed := c.sweep(e.Name())
		total = total.Add(Swept{Executors: 1, Processes: killed})
		if log != nil {
			log.Info("swept the cgroups of a dead executor", "owner", e.Name(), "killed", killed)
		}
	}
	return total
}

// Claim sweeps the cgroups of dead owners under c (SweepDead) and returns
// the cgroups of owner (this process) and what it swept.
func (c *Cgroups) Claim(owner Owner, log *slog.Logger) (*Cgroups, Swept, error) {
	swept := c.SweepDead(owner, log)
	self := owner.dir(os.Getpid())
	own := &Cgroups{Root: c.Root, Parent: filepath.Join(c.Parent, self), V2: c.V2}
	if c.V2 {
		dir := filepath.Join(c.Root, own.Parent)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, swept, err
		}
		if err := os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("+memory +cpu"), 0); err != nil {
			return nil, swept, fmt.Errorf("cgroup v2 %s: enable memory and cpu: %w", dir, err)
		}
	}
	return own, swept, nil
}

// removeEmpty removes the directories of a dead owner of another
// framework that hold no task cgroup (rmdir refuses one that does, or
// that holds a process): nothing of that framework's is lost, and a
// framework gone for good (a test cluster, a retired one) leaves no
// empty directory per executor behind.
func (c *Cgroups) removeEmpty(owner string) {
	for _, dir := range c.dirsOf(c.Parent, owner) {
		_ = os.Remove(dir)
	}
}

// Release removes owner's (now empty) cgroups.
func (c *Cgroups) Release(owner Owner) {
	c.sweep(owner.dir(os.Getpid()))
}

// OwnerAlive reads an owner directory's name: alive when that pid runs
// and started when recorded (pids are reused). A name without an owner
// suffix is nobody's.
func OwnerAlive(dir string) bool {
	at := strings.LastIndexByte(dir, '@')
	if at < 0 {
		return false
	}
	pidText, start, ok := strings.Cut(dir[at+1:], "-")
	pid, err := strconv.Atoi(pidText)
	if !ok || err != nil || pid <= 0 {
		return false
	}
	return alive(pid) && startTime(pid) == start
}

// trackingDir is where parent's children are listed: the memory
// hierarchy on v1, the unified one on v2.
func (c *Cgroups) trackingDir(parent string) string {
	if c.V2 {
		return filepath.Join(c.Root, parent)
	}
	return filepath.Join(c.Root, "memory", parent)
}

// sweep kills every process in the task cgroups of owner and removes
// them and owner's directories; it returns how many processes it killed.
func (c *Cgroups) sweep(owner string) int {
	killed := 0
	for _, dir := range c.dirsOf(c.Parent, owner) {
		tasks, _ := os.ReadDir(dir)
		for _, task := range tasks {
			if !task.IsDir() {
				continue
			}
			g := &Cgroup{v2: c.V2, dirs: []string{filepath.Join(dir, task.Name())}}
			killed += len(g.Pids())
			_ = g.Remove() // kills what is left first
		}
		_ = os.Remove(dir)
	}
	return killed
}

// startTime is field 22 of /proc/<pid>/stat (clock ticks since boot).
func startTime(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return ""
	}
	return f[19]
}

// mkdirPrivate creates dir readable by root only, and the directories
// above it that are missing with the usual 0755: MkdirAll(dir, 0700) would
// make shared parents such as /data unsearchable for the users processes
// run as.
func mkdirPrivate(dir string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return nil
}
