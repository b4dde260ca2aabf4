package process

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/executor"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

var _ executor.UsageReader = (*Runtime)(nil)

// Usage implements executor.UsageReader from the tasks' cgroups; a task
// without one (not started yet, ended, an executor run without cgroups)
// is left out.
func (r *Runtime) Usage(_ context.Context, taskIDs []string) []proto.TaskUsage {
	var out []proto.TaskUsage
	for _, id := range taskIDs {
		t := r.task(id)
		if t == nil {
			continue
		}
		t.mu.Lock()
		cg := t.cg
		t.mu.Unlock()
		if cg == nil {
			continue
		}
		cpu, mem, err := cg.Usage()
		if err != nil {
			r.cfg.Logger.Debug("task usage not measured", "task", id, "err", err)
			continue
		}
		out = append(out, proto.TaskUsage{TaskID: id, CPUNanos: cpu, MemBytes: mem, At: r.cfg.Clock.Now()})
	}
	return out
}

// Usage reads the CPU time the cgroup's processes have used (ns) and
// their working set (bytes): memory used minus the inactive file cache.
// v1: cpuacct.usage, memory.usage_in_bytes − memory.stat
// total_inactive_file; v2: cpu.stat usage_usec, memory.current −
// memory.stat inactive_file.
func (g *Cgroup) Usage() (cpuNanos, memBytes uint64, err error) {
	dir := g.dirs[0]
	cpu, used, inactive := g.v1Usage, "memory.usage_in_bytes", "total_inactive_file"
	if g.v2 {
		cpu, used, inactive = g.v2Usage, "memory.current", "inactive_file"
	}
	if cpuNanos, err = cpu(); err != nil {
		return 0, 0, err
	}
	if memBytes, err = readUint(filepath.Join(dir, used)); err != nil {
		return 0, 0, err
	}
	cache, err := readStat(filepath.Join(dir, "memory.stat"), inactive)
	if err != nil {
		return 0, 0, err
	}
	return cpuNanos, memBytes - min(cache, memBytes), nil
}

func (g *Cgroup) v1Usage() (uint64, error) {
	return readUint(filepath.Join(g.dirs[len(g.dirs)-1], "cpuacct.usage"))
}

func (g *Cgroup) v2Usage() (uint64, error) {
	usec, err := readStat(filepath.Join(g.dirs[0], "cpu.stat"), "usage_usec")
	return usec * 1000, err
}

// readUint reads a cgroup file holding one number.
func readUint(file string) (uint64, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, fmt.Errorf("cgroup usage: %v: %w", err, errdefs.ErrUnavailable)
	}
	n, err := strconv.ParseUint(string(bytes.TrimSpace(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("cgroup usage: %s: %v: %w", file, err, errdefs.ErrUnavailable)
	}
	return n, nil
}

// readStat reads key from the "key value" lines of a cgroup stat file.
func readStat(file, key string) (uint64, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, fmt.Errorf("cgroup usage: %v: %w", err, errdefs.ErrUnavailable)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), " ")
		if ok && k == key {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("cgroup usage: %s %s: %v: %w", file, key, err, errdefs.ErrUnavailable)
			}
			return n, nil
		}
	}
	return 0, fmt.Errorf("cgroup usage: %s has no %s: %w", file, key, errdefs.ErrUnavailable)
}
