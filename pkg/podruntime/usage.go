package podruntime

import (
	"context"
	"fmt"
	"sync"

	docker "github.com/fsouza/go-dockerclient"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/executor"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

var _ executor.UsageReader = (*Runtime)(nil)

// Usage implements executor.UsageReader with one docker stats each (not
// streamed), read at once for every container: the container's
// cumulative CPU time (cpu_stats.cpu_usage.total_usage) and working set
// (memory_stats.usage less the inactive file cache), at the time dockerd
// read them. A task not running, or whose stats do not come, is left
// out. dockerd answers a stats call once it has read twice, about a
// second apart.
func (r *Runtime) Usage(ctx context.Context, taskIDs []string) []proto.TaskUsage {
	out := make([]proto.TaskUsage, len(taskIDs))
	var wg sync.WaitGroup
	for i, id := range taskIDs {
		container := r.runningContainer(id)
		if container == "" {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if s, err := r.stats(ctx, container); err != nil {
				r.cfg.Logger.Debug("task usage not measured", "task", id, "err", err)
			} else {
				out[i] = proto.TaskUsage{TaskID: id, CPUNanos: s.CPUStats.CPUUsage.TotalUsage, MemBytes: workingSet(s), At: s.Read}
			}
		}()
	}
	wg.Wait()
	measured := out[:0]
	for _, u := range out {
		if u.TaskID != "" {
			measured = append(measured, u)
		}
	}
	return measured
}

// runningContainer is the container of task taskID while it runs; ""
// when it does not.
func (r *Runtime) runningContainer(taskID string) string {
	g := r.group(taskID)
	if g == nil {
		return ""
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	gt := g.tasks[taskID]
	if gt == nil || !gt.running || gt.stopping {
		return ""
	}
	return gt.info.ID
}

// stats reads one docker stats of container. It gives up when ctx ends
// whatever the client does: go-dockerclient's Stats waits for ever when
// it cannot reach dockerd.
func (r *Runtime) stats(ctx context.Context, container string) (*docker.Stats, error) {
	ch := make(chan *docker.Stats, 1)
	errc := make(chan error, 1)
	go func() { errc <- r.cfg.Docker.Stats(docker.StatsOptions{ID: container, Stats: ch, Context: ctx}) }()
	select {
	case s, ok := <-ch:
		if ok {
			return s, nil
		}
		if err := <-errc; err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("docker stats of container %s: no stats: %w", container, errdefs.ErrUnavailable)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// workingSet is the memory usage less the inactive file cache, as
// docker stats shows it: total_inactive_file on cgroup v1, inactive_file
// on v2.
func workingSet(s *docker.Stats) uint64 {
	mem := s.MemoryStats
	cache := mem.Stats.TotalInactiveFile
	if cache == 0 {
		cache = mem.Stats.InactiveFile
	}
	return mem.Usage - min(cache, mem.Usage)
}
