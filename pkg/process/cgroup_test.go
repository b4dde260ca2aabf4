package process_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/process"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// cgroup v2 is detected by cgroup.controllers; limits.cpu becomes
// cpu.max "quota period", limits.memory (MB) memory.max, -1 "max",
// requests.cpu cpu.weight (as runc converts shares). This machine runs
// v1, so v2 is checked on a fake tree.
func TestCgroupV2Files(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "cgroup.controllers"), []byte("cpu memory\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cgs, err := process.DetectCgroups(root, "bcs")
	if err != nil || !cgs.V2 {
		t.Fatalf("DetectCgroups: %+v %v", cgs, err)
	}
	tests := []struct {
		name                         string
		request, cpu, mem            float64
		wantCPU, wantMem, wantWeight string
	}{
		{"limited", 0.5, 1.5, 256, "150000 100000", strconv.Itoa(256 << 20), "20"},
		{"unlimited", -1, -1, -1, "max 100000", "max", "100"},
		{"zero is none", 0, 0, 0, "max 100000", "max", "100"},
		{"two cores", 2, 0, 0, "max 100000", "max", "79"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, err := cgs.Create("task-"+tc.name, proto.Resources{CPUs: tc.request, CPULimit: tc.cpu, MemLimitMB: tc.mem})
			if err != nil {
				t.Fatal(err)
			}
			dir := g.Dirs()[0]
			if dir != filepath.Join(root, "bcs", "task-"+tc.name) {
				t.Errorf("dir %s", dir)
			}
			for file, want := range map[string]string{"cpu.max": tc.wantCPU, "memory.max": tc.wantMem, "cpu.weight": tc.wantWeight} {
				if b, _ := os.ReadFile(filepath.Join(dir, file)); string(b) != want {
					t.Errorf("%s = %q, want %q", file, b, want)
				}
			}
		})
	}
	if b, _ := os.ReadFile(filepath.Join(root, "bcs", "cgroup.subtree_control")); string(b) != "+memory +cpu" {
		t.Errorf("subtree_control %q", b)
	}
}

func TestDetectCgroupsNone(t *testing.T) {
	if _, err := process.DetectCgroups(t.TempDir(), "bcs"); !errors.Is(err, errdefs.ErrUnavailable) {
		t.Errorf("err %v", err)
	}
}

// cgroup v1 (this machine): a task cgroup in the memory and cpu
// hierarchies tracks its processes; Remove kills them and removes both
// directories.
func TestCgroupV1TrackAndRemove(t *testing.T) {
	parent := "bcs-process-test/v1-" + strconv.Itoa(os.Getpid())
	cgs, err := process.DetectCgroups("/sys/fs/cgroup", parent)
	if err != nil || cgs.V2 {
		t.Fatalf("DetectCgroups: %+v %v", cgs, err)
	}
	t.Cleanup(func() {
		for _, c := range []string{"memory", "cpu", "cpuacct"} {
			os.Remove(filepath.Join("/sys/fs/cgroup", c, parent))
		}
	})
	g, err := cgs.Create("t", proto.Resources{CPUs: 0.25, CPULimit: 0.5, MemLimitMB: 64})
	if err != nil {
		t.Fatal(err)
	}
	// requests.cpu is the task's share of CPU time (docker's
	// --cpu-shares: 1024 a core), the limit its CFS quota.
	for file, want := range map[string]string{"cpu.shares": "256", "cpu.cfs_quota_us": "50000"} {
		if b, _ := os.ReadFile(filepath.Join(g.Dirs()[1], file)); string(b) != want+"\n" {
			t.Errorf("%s = %q, want %s", file, b, want)
		}
	}
	if err := g.SetLimits(proto.Resources{}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(g.Dirs()[1], "cpu.shares")); string(b) != "1024\n" {
		t.Errorf("cpu.shares = %q without a request, want the default 1024", b)
	}
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	if err := g.Add(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	if pids := g.Pids(); len(pids) != 1 || pids[0] != cmd.Process.Pid {
		t.Errorf("Pids %v", pids)
	}
	if err := g.Remove(); err != nil {
		t.Fatal(err)
	}
	<-done
	for _, d := range g.Dirs() {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s still there", d)
		}
	}
}
