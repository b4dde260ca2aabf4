package process_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/process"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// cgroup v2 usage: cpu.stat usage_usec, memory.current less memory.stat
// inactive_file (the working set, as the kubelet counts it). This
// machine runs v1, so v2 is read from a fake tree.
func TestCgroupV2Usage(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "cgroup.controllers"), []byte("cpu memory\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cgs, err := process.DetectCgroups(root, "bcs")
	if err != nil {
		t.Fatal(err)
	}
	g, err := cgs.Create("task", proto.Resources{})
	if err != nil {
		t.Fatal(err)
	}
	dir := g.Dirs()[0]
	write := func(file, content string) {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := g.Usage(); !errors.Is(err, errdefs.ErrUnavailable) {
		t.Errorf("Usage without the files: %v", err)
	}
	write("cpu.stat", "usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\n")
	write("memory.current", "104857600\n")
	write("memory.stat", "anon 52428800\nfile 52428800\nactive_file 10485760\ninactive_file 41943040\n")
	cpu, mem, err := g.Usage()
	if err != nil || cpu != 2_500_000_000 || mem != 104857600-41943040 {
		t.Errorf("Usage = %d ns, %d bytes, %v; want 2.5e9 ns and %d bytes", cpu, mem, err, 104857600-41943040)
	}
	write("memory.stat", "inactive_file 209715200\n")
	if _, mem, err := g.Usage(); err != nil || mem != 0 {
		t.Errorf("inactive file above usage: %d bytes, %v; want 0", mem, err)
	}
	write("memory.stat", "anon 1\n")
	if _, _, err := g.Usage(); err == nil || !errors.Is(err, errdefs.ErrUnavailable) {
		t.Errorf("memory.stat without inactive_file: %v", err)
	}
}

// cgroup v1 usage (this machine, where cpuacct is a hierarchy of its
// own): a task cgroup has a cpuacct directory too, which counts the CPU
// time of its processes; it goes with the cgroup.
func TestCgroupV1Usage(t *testing.T) {
	parent := "bcs-process-test/usage-" + strconv.Itoa(os.Getpid())
	cgs, err := process.DetectCgroups("/sys/fs/cgroup", parent)
	if err != nil || cgs.V2 {
		t.Fatalf("DetectCgroups: %+v %v", cgs, err)
	}
	t.Cleanup(func() {
		for _, c := range []string{"memory", "cpu", "cpuacct"} {
			os.Remove(filepath.Join("/sys/fs/cgroup", c, parent))
		}
	})
	g, err := cgs.Create("t", proto.Resources{})
	if err != nil {
		t.Fatal(err)
	}
	dirs := g.Dirs()
	if _, err := os.Stat("/sys/fs/cgroup/cpu/cpuacct.usage"); err != nil && dirs[len(dirs)-1] != filepath.Join("/sys/fs/cgroup/cpuacct", parent, "t") {
		t.Fatalf("dirs %v: want one in the cpuacct hierarchy", dirs)
	}
	cpu, mem, err := g.Usage()
	if err != nil || cpu != 0 || mem != 0 {
		t.Errorf("an empty cgroup: %d ns, %d bytes, %v", cpu, mem, err)
	}
	if err := g.Remove(); err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s still there", d)
		}
	}
	if _, _, err := g.Usage(); !errors.Is(err, errdefs.ErrUnavailable) {
		t.Errorf("Usage of a removed cgroup: %v", err)
	}
}
