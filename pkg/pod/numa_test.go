package pod

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	docker "github.com/fsouza/go-dockerclient"

	"github.com/bcs-mesos/bcs-mesos/pkg/numa"
	"github.com/bcs-mesos/bcs-mesos/pkg/pod/podtest"
)

// Seed 001 NUMA: a pinned task gets cpuset-cpus and cpuset-mems of one
// node with free CPUs; the pod releases them when it ends. The fake
// topology has two nodes (this machine has one): node 1's CPUs are already
// held by another pod, so node 0 (CPUs 0-1, which exist here) is chosen.
func TestPinnedCPUsFromNUMAPlanner(t *testing.T) {
	c := podtest.Docker(t)
	cfg := testConfig(t, c)
	sysfs := t.TempDir()
	for node, cpus := range map[string]string{"node0": "0-1", "node1": "2-3"} {
		dir := filepath.Join(sysfs, "devices/system/node", node)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "cpulist"), []byte(cpus+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	statePath := filepath.Join(t.TempDir(), "cpusets.json")
	held, _ := json.Marshal(map[string]any{"owners": map[string]any{"other-pod/x": map[string]any{"node": 1, "cpus": []int{2, 3}}}})
	if err := os.WriteFile(statePath, held, 0o644); err != nil {
		t.Fatal(err)
	}
	alloc := &numa.Allocator{SysfsRoot: sysfs, StatePath: statePath}
	cfg.CPUSets = alloc

	pinned := containerTask("pinned", "exec sleep 100000")
	pinned.Spec.Resources.CPUs, pinned.Spec.Resources.PinCPUs = 2, true
	free := containerTask("free", "exec sleep 100000")
	p, err := New(cfg, []Task{pinned, free})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctxT(t, time.Minute)); err != nil {
		t.Fatal(err)
	}
	for i, want := range [][2]string{{"0-1", "0"}, {"", ""}} {
		ins, err := c.InspectContainerWithOptions(docker.InspectContainerOptions{ID: p.Tasks()[i].Info.ID})
		if err != nil {
			t.Fatal(err)
		}
		if ins.HostConfig.CPUSetCPUs != want[0] || ins.HostConfig.CPUSetMEMs != want[1] {
			t.Errorf("task %d: cpuset-cpus %q cpuset-mems %q, want %q %q", i, ins.HostConfig.CPUSetCPUs, ins.HostConfig.CPUSetMEMs, want[0], want[1])
		}
	}
	if all, _ := alloc.Allocations(); len(all) != 2 {
		t.Errorf("allocations while running: %v", all)
	}
	if err := p.Kill(ctxT(t, 30*time.Second), syscall.SIGKILL, 0); err != nil {
		t.Fatal(err)
	}
	if all, _ := alloc.Allocations(); len(all) != 1 || all["other-pod/x"].Node != 1 {
		t.Errorf("allocations after the pod: %v, want only other-pod's", all)
	}
}

// This machine's own topology (sysfs, one NUMA node): a pinned task gets
// one of its CPUs to itself and no memory node (seed 001: one node, no
// NUMA setting); the container's cpuset cgroup holds that CPU alone.
func TestPinnedCPUOnThisMachine(t *testing.T) {
	c := podtest.Docker(t)
	cfg := testConfig(t, c)
	topo, err := numa.ReadTopology("/sys")
	if err != nil {
		t.Fatal(err)
	}
	alloc := &numa.Allocator{StatePath: filepath.Join(t.TempDir(), "cpusets.json")}
	cfg.CPUSets = alloc
	pinned := containerTask("pinned", "exec sleep 100000")
	pinned.Spec.Resources.CPUs, pinned.Spec.Resources.CPULimit, pinned.Spec.Resources.PinCPUs = 1, 1, true
	p, err := New(cfg, []Task{pinned})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctxT(t, time.Minute)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Kill(context.Background(), syscall.SIGKILL, 0) })
	ins, err := c.InspectContainerWithOptions(docker.InspectContainerOptions{ID: p.Tasks()[0].Info.ID})
	if err != nil {
		t.Fatal(err)
	}
	cpus, err := numa.ParseCPUList(ins.HostConfig.CPUSetCPUs)
	if err != nil || len(cpus) != 1 || cpus[0] >= topo.NumCPUs() {
		t.Fatalf("cpuset-cpus %q, want one CPU of the machine's %d", ins.HostConfig.CPUSetCPUs, topo.NumCPUs())
	}
	if len(topo.Nodes) == 1 && ins.HostConfig.CPUSetMEMs != "" {
		t.Errorf("cpuset-mems %q on a machine of one NUMA node, want none", ins.HostConfig.CPUSetMEMs)
	}
	if all, _ := alloc.Allocations(); len(all) != 1 || numa.FormatCPUList(all[p.cpusetOwner(p.tasks[0])].CPUs) != ins.HostConfig.CPUSetCPUs {
		t.Errorf("allocations %v, want the pinned task's CPU %s", all, ins.HostConfig.CPUSetCPUs)
	}
	out, _ := p.Exec(ctxT(t, 30*time.Second), pinned.ID, ExecRequest{Command: []string{"sh", "-c",
		"cat /sys/fs/cgroup/cpuset/cpuset.cpus 2>/dev/null || cat /sys/fs/cgroup/cpuset.cpus.effective"}})
	if strings.TrimSpace(out.Output) != ins.HostConfig.CPUSetCPUs {
		t.Errorf("cpuset.cpus in the container %q, want %q", out.Output, ins.HostConfig.CPUSetCPUs)
	}
	if err := p.Kill(ctxT(t, 30*time.Second), syscall.SIGKILL, 0); err != nil {
		t.Fatal(err)
	}
	if all, _ := alloc.Allocations(); len(all) != 0 {
		t.Errorf("allocations after the pod: %v", all)
	}
}
