package process

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// Cgroups creates one cgroup per task under Parent, on cgroup v2 (a
// unified hierarchy at Root) or v1 (one hierarchy per controller under
// Root; the memory hierarchy also tracks the task's processes, and
// cpuacct, where it is a hierarchy of its own, counts their CPU time).
type Cgroups struct {
	Root   string
	Parent string
	V2     bool
}

// DetectCgroups looks at root (normally /sys/fs/cgroup): v2 when it has
// cgroup.controllers, v1 when it has a memory hierarchy.
func DetectCgroups(root, parent string) (*Cgroups, error) {
	if _, err := os.Stat(filepath.Join(root, "cgroup.controllers")); err == nil {
		c := &Cgroups{Root: root, Parent: parent, V2: true}
		// Enable the controllers for our parent and its children.
		_ = os.MkdirAll(filepath.Join(root, parent), 0o755)
		_ = os.WriteFile(filepath.Join(root, "cgroup.subtree_control"), []byte("+memory +cpu"), 0)
		if err := os.WriteFile(filepath.Join(root, parent, "cgroup.subtree_control"), []byte("+memory +cpu"), 0); err != nil {
			return nil, fmt.Errorf("cgroup v2 %s: enable memory and cpu: %v: %w", filepath.Join(root, parent), err, errdefs.ErrUnavailable)
		}
		return c, nil
	}
	if _, err := os.Stat(filepath.Join(root, "memory", "memory.limit_in_bytes")); err == nil {
		return &Cgroups{Root: root, Parent: parent}, nil
	}
	return nil, fmt.Errorf("no cgroup v1 memory hierarchy or cgroup v2 under %s: %w", root, errdefs.ErrUnavailable)
}

// Cgroup is one task's cgroup (a directory per v1 controller, or one v2
// directory).
type Cgroup struct {
	v2 bool
	// dirs[0] tracks processes (v1 memory, or v2); v1 has cpu in
	// dirs[1] and the one with cpuacct.usage last (cpu's own when the
	// two share a hierarchy).
	dirs []string
}

// v1Hierarchies are the v1 hierarchies a task cgroup has a directory in:
// memory, cpu, and cpuacct unless cpu's hierarchy has it (mounted
// "cpu,cpuacct").
func (c *Cgroups) v1Hierarchies() []string {
	if _, err := os.Stat(filepath.Join(c.Root, "cpu", "cpuacct.usage")); err == nil {
		return []string{"memory", "cpu"}
	}
	if _, err := os.Stat(filepath.Join(c.Root, "cpuacct", "cpuacct.usage")); err == nil {
		return []string{"memory", "cpu", "cpuacct"}
	}
	return []string{"memory", "cpu"}
}

// dirsOf are the directories of the cgroup parent/name.
func (c *Cgroups) dirsOf(parent, name string) []string {
	if c.V2 {
		return []string{filepath.Join(c.Root, parent, name)}
	}
	var dirs []string
	for _, h := range c.v1Hierarchies() {
		dirs = append(dirs, filepath.Join(c.Root, h, parent, name))
	}
	return dirs
}

const cfsPeriod = 100000 // µs

// Create makes the cgroup name with r's limits (SetLimits). A leftover
// cgroup of the same name (executor crash) is emptied and reused.
func (c *Cgroups) Create(name string, r proto.Resources) (*Cgroup, error) {
	g := &Cgroup{v2: c.V2, dirs: c.dirsOf(c.Parent, name)}
	for _, d := range g.dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("create cgroup %s: %v: %w", d, err, errdefs.ErrUnavailable)
		}
	}
	if err := g.SetLimits(r); err != nil {
		g.Remove()
		return nil, err
	}
	return g, nil
}

// SetLimits sets (or changes in place) r's CPU request as the cgroup's
// share of CPU time against the others (cpu.shares, 1024 a core, as
// docker's --cpu-shares), its CPU limit in cores as a CFS quota and its
// memory limit in MB; zero or negative means none (the default share).
func (g *Cgroup) SetLimits(r proto.Resources) error {
	write := func(dir, file, value string) error {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(value), 0); err != nil {
			return fmt.Errorf("cgroup %s: write %s=%s: %v: %w", dir, file, value, err, errdefs.ErrUnavailable)
		}
		return nil
	}
	shares := int64(1024)
	if r.CPUs > 0 {
		shares = max(2, int64(math.Round(r.CPUs*1024)))
	}
	if g.v2 {
		mem, cpu := "max", "max "+strconv.Itoa(cfsPeriod)
		if r.MemLimitMB > 0 {
			mem = strconv.FormatInt(int64(r.MemLimitMB*1024*1024), 10)
		}
		if r.CPULimit > 0 {
			cpu = fmt.Sprintf("%d %d", int64(r.CPULimit*cfsPeriod), cfsPeriod)
		}
		if r.MemLimitMB > 0 {
			_ = write(g.dirs[0], "memory.swap.max", "0")
		}
		// cpu.weight from shares as runc converts them (1024 → 39 … 100
		// is v2's default: the default share maps to it).
		weight := 1 + (shares-2)*9999/262142
		if r.CPUs <= 0 {
			weight = 100
		}
		return errors.Join(write(g.dirs[0], "memory.max", mem), write(g.dirs[0], "cpu.max", cpu),
			write(g.dirs[0], "cpu.weight", strconv.FormatInt(weight, 10)))
	}
	mem, quota := "-1", "-1"
	if r.MemLimitMB > 0 {
		mem = strconv.FormatInt(int64(r.MemLimitMB*1024*1024), 10)
	}
	if r.CPULimit > 0 {
		quota = strconv.FormatInt(int64(r.CPULimit*cfsPeriod), 10)
	}
	// memory.memsw (no swapping around the limit; absent without swap
	// accounting) must stay >= memory.limit: write it before and after so
	// that raising and lowering both work.
	_ = write(g.dirs[0], "memory.memsw.limit_in_bytes", mem)
	err := errors.Join(write(g.dirs[0], "memory.limit_in_bytes", mem),
		write(g.dirs[1], "cpu.cfs_period_us", strconv.Itoa(cfsPeriod)),
		write(g.dirs[1], "cpu.cfs_quota_us", quota),
		write(g.dirs[1], "cpu.shares", strconv.FormatInt(shares, 10)))
	_ = write(g.dirs[0], "memory.memsw.limit_in_bytes", mem)
	return err
}

// Dirs are the cgroup's directories.
func (g *Cgroup) Dirs() []string { return append([]string(nil), g.dirs...) }

// Add moves pid into the cgroup.
func (g *Cgroup) Add(pid int) error {
	for _, d := range g.dirs {
		if err := os.WriteFile(filepath.Join(d, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
			return fmt.Errorf("add pid %d to cgroup %s: %v: %w", pid, d, err, errdefs.ErrUnavailable)
		}
	}
	return nil
}

// Pids lists the processes in the cgroup.
func (g *Cgroup) Pids() []int {
	f, err := os.Open(filepath.Join(g.dirs[0], "cgroup.procs"))
	if err != nil {
		return nil
	}
	defer f.Close()
	var pids []int
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if pid, err := strconv.Atoi(strings.TrimSpace(sc.Text())); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// OOMKills is how many processes the kernel killed for the memory limit.
func (g *Cgroup) OOMKills() int {
	file := "memory.oom_control"
	if g.v2 {
		file = "memory.events"
	}
	b, err := os.ReadFile(filepath.Join(g.dirs[0], file))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, " "); ok && k == "oom_kill" {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

// Signal sends sig to every process in the cgroup and returns how many
// there were.
func (g *Cgroup) Signal(sig syscall.Signal) int {
	pids := g.Pids()
	for _, pid := range pids {
		_ = syscall.Kill(pid, sig)
	}
	return len(pids)
}

// Remove kills what is left and removes the directories.
func (g *Cgroup) Remove() error {
	var errs []error
	for i := 0; i < 100 && g.Signal(syscall.SIGKILL) > 0; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	for _, d := range g.dirs {
		var err error
		for i := 0; i < 50; i++ {
			if err = os.Remove(d); err == nil || os.IsNotExist(err) {
				err = nil
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
