package process_test

import (
	"bytes"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/process"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// startInCgroup starts sleep in a new task cgroup of cgs.
func startInCgroup(t *testing.T, cgs *process.Cgroups, name string) (*process.Cgroup, *exec.Cmd, chan error) {
	t.Helper()
	g, err := cgs.Create(name, proto.Resources{})
	if err != nil {
		t.Fatal(err)
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
	return g, cmd, done
}

// An executor killed outright leaves its tasks' processes behind; the
// next executor of its framework on the agent finds their cgroups without
// a live owner, kills them and removes the cgroups. Cgroups of running
// executors are left alone, and so are another framework's dead
// executor's (a second cluster on the agent, same executor IDs): its own
// executors sweep them.
func TestClaimSweepsDeadExecutors(t *testing.T) {
	parent := "bcs-process-test/sweep-" + strconv.Itoa(os.Getpid())
	base, err := process.DetectCgroups("/sys/fs/cgroup", parent)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, owner := range []process.Owner{{Framework: "fw", Executor: "alive"}, {Framework: "fw", Executor: "me"}, {Framework: "other", Executor: "me"}} {
			base.Release(owner)
		}
		for _, c := range []string{"memory", "cpu", "cpuacct"} {
			os.Remove(filepath.Join("/sys/fs/cgroup", c, parent))
		}
	})
	alive, _, err := base.Claim(process.Owner{Framework: "fw", Executor: "alive"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	aliveGroup, aliveCmd, aliveDone := startInCgroup(t, alive, "task-2")
	// A dead executor: its cgroup names a process that no longer runs.
	dead := &process.Cgroups{Root: base.Root, Parent: filepath.Join(parent, "fw.dead@999999999-1"), V2: base.V2}
	deadGroup, _, deadDone := startInCgroup(t, dead, "task-1")
	otherDead := &process.Cgroups{Root: base.Root, Parent: filepath.Join(parent, "other.dead@999999999-1"), V2: base.V2}
	otherGroup, otherCmd, otherDone := startInCgroup(t, otherDead, "task-1")
	// Another framework's dead executor that left no task: its empty
	// directories go, whoever sweeps.
	otherEmpty := &process.Cgroups{Root: base.Root, Parent: filepath.Join(parent, "retired.dead@999999999-1"), V2: base.V2}
	emptyGroup, err := otherEmpty.Create("task-9", proto.Resources{})
	if err != nil {
		t.Fatal(err)
	}
	emptyDirs := make([]string, 0, 3)
	for _, d := range emptyGroup.Dirs() {
		emptyDirs = append(emptyDirs, filepath.Dir(d))
	}
	t.Cleanup(func() {
		for _, d := range emptyDirs {
			os.Remove(d)
		}
	})
	if err := emptyGroup.Remove(); err != nil {
		t.Fatal(err)
	}

	var logs bytes.Buffer
	_, swept, err := base.Claim(process.Owner{Framework: "fw", Executor: "me"}, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if swept != (process.Swept{Executors: 1, Processes: 1}) {
		t.Errorf("swept %+v, want one executor and its process", swept)
	}
	select {
	case <-deadDone:
	case <-time.After(5 * time.Second):
		t.Fatal("the dead executor's task survived the sweep")
	}
	for _, d := range deadGroup.Dirs() {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s not removed", d)
		}
	}
	if n := strings.Count(logs.String(), "swept the cgroups of a dead executor"); n != 1 || !strings.Contains(logs.String(), "fw.dead@999999999-1") {
		t.Errorf("logs %q", logs.String())
	}
	select {
	case err := <-aliveDone:
		t.Fatalf("a live executor's task was swept: %v", err)
	default:
	}
	if pids := aliveGroup.Pids(); len(pids) != 1 || pids[0] != aliveCmd.Process.Pid {
		t.Errorf("live executor's cgroup %v", pids)
	}
	select {
	case err := <-otherDone:
		t.Fatalf("another framework's dead executor's task was swept: %v", err)
	default:
	}
	if pids := otherGroup.Pids(); len(pids) != 1 || pids[0] != otherCmd.Process.Pid {
		t.Errorf("another framework's dead executor's cgroup %v", pids)
	}
	for _, d := range emptyDirs {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("another framework's dead executor's empty directory %s not removed", d)
		}
	}
	// That framework's next executor sweeps it.
	if _, swept, err = base.Claim(process.Owner{Framework: "other", Executor: "me"}, nil); err != nil || swept != (process.Swept{Executors: 1, Processes: 1}) {
		t.Errorf("the other framework's executor swept %+v (%v), want its dead executor and its process", swept, err)
	}
	<-otherDone
	base.Release(process.Owner{Framework: "fw", Executor: "alive"})
	<-aliveDone
}
