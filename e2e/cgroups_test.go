package e2e_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/process"
)

// The process executors keep their task cgroups under bcs-process/
// <framework>.<executor>@<pid>-<start time>, in each controller's
// hierarchy (or the unified one), and a later executor of the framework
// sweeps those of the dead ones. After a test's teardown no executor
// comes later, so the harness sweeps what its system's executors left.

// cgroupParents are the bcs-process directories of every hierarchy.
func cgroupParents() []string {
	parents, _ := filepath.Glob("/sys/fs/cgroup/*/bcs-process")
	if _, err := os.Stat("/sys/fs/cgroup/bcs-process"); err == nil {
		parents = append(parents, "/sys/fs/cgroup/bcs-process")
	}
	return parents
}

// cgroupOwners are the names of the executor directories under
// bcs-process in any hierarchy.
func cgroupOwners() map[string]bool {
	owners := map[string]bool{}
	for _, parent := range cgroupParents() {
		entries, _ := os.ReadDir(parent)
		for _, e := range entries {
			if e.IsDir() {
				owners[e.Name()] = true
			}
		}
	}
	return owners
}

// sweepCgroups removes the cgroups of the executors that are not in
// before and no longer run, as a later executor would, and returns what
// leaked: the task cgroups that still held a process (killed now) and
// the directories that could not be removed.
func sweepCgroups(before map[string]bool) []string {
	var leaked []string
	for _, parent := range cgroupParents() {
		entries, _ := os.ReadDir(parent)
		for _, e := range entries {
			if !e.IsDir() || before[e.Name()] || process.OwnerAlive(e.Name()) {
				continue
			}
			leaked = append(leaked, removeCgroup(filepath.Join(parent, e.Name()))...)
		}
	}
	return leaked
}

// removeCgroup kills the processes of dir and its children and removes
// them, children first; it returns the cgroups that held a process or
// stayed.
func removeCgroup(dir string) []string {
	var leaked []string
	children, _ := os.ReadDir(dir)
	for _, c := range children {
		if c.IsDir() {
			leaked = append(leaked, removeCgroup(filepath.Join(dir, c.Name()))...)
		}
	}
	if pids := cgroupPids(dir); len(pids) > 0 {
		leaked = append(leaked, fmt.Sprintf("%s (processes %v)", dir, pids))
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	var err error
	for range 50 { // a killed process leaves its cgroup a moment later
		if err = os.Remove(dir); err == nil || os.IsNotExist(err) {
			return leaked
		}
		time.Sleep(20 * time.Millisecond)
	}
	return append(leaked, fmt.Sprintf("%s (not removed: %v)", dir, err))
}

func cgroupPids(dir string) []int {
	data, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	var pids []int
	for _, f := range strings.Fields(string(data)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// The harness's teardown sweeps the cgroups a dead executor left, and a
// cgroup still holding a process is a leak it reports (and kills). A
// directory shaped as an executor's, in the memory hierarchy, with a
// task cgroup holding a sleep and an empty one.
func TestHarnessSweepsDeadExecutorsCgroups(t *testing.T) {
	parent := "/sys/fs/cgroup/memory/bcs-process"
	// The machine's cgroup v1 memory hierarchy, which the process
	// executors use: without it this test fails, it does not skip.
	if err := os.MkdirAll(parent, 0o755); err != nil {
		t.Fatalf("no cgroup v1 memory hierarchy to write: %v", err)
	}
	before := cgroupOwners()
	owner := filepath.Join(parent, fmt.Sprintf("harness-test.executor@%d-0", 1<<22+os.Getpid())) // a pid that cannot run
	busy, idle := filepath.Join(owner, "busy"), filepath.Join(owner, "idle")
	for _, dir := range []string{busy, idle} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = removeCgroup(owner) })
	sleep := exec.Command("sleep", "600")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sleep.Process.Kill(); _ = sleep.Wait() }()
	if err := os.WriteFile(filepath.Join(busy, "cgroup.procs"), []byte(strconv.Itoa(sleep.Process.Pid)), 0); err != nil {
		t.Fatal(err)
	}

	leaked := sweepCgroups(before)
	if len(leaked) != 1 || !strings.HasPrefix(leaked[0], busy+" (processes ") {
		t.Errorf("leaked = %q, want the busy task cgroup alone", leaked)
	}
	if _, err := os.Stat(owner); !os.IsNotExist(err) {
		t.Errorf("the dead executor's cgroup %s is still there (%v)", owner, err)
	}
	if err := sleep.Wait(); err == nil {
		t.Error("the process in the leaked cgroup was not killed")
	}
}
