package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/bcs-mesos/bcs-mesos/pkg/devcluster/devclustertest"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// Agent recovery with checkpointing (mesos-facts.md: a restarted
// agent waits for the executors of a checkpointing framework; one that
// subscribes again keeps its tasks): the real executor reconnects to a
// restarted agent, its process keeps running under the same task ID, and
// a later KILL still reaches it. An update the executor could not send
// while the agent was away arrives once it is back.
func TestExecutorSurvivesAgentRestart(t *testing.T) {
	e := setup(t, devclustertest.Checkpointing)
	pidFile := filepath.Join(e.runBase, "ns.keep.0", "app.pid")
	spec := func(name string) *proto.TaskSpec {
		pidFile := filepath.Join(e.runBase, "ns."+name+".0", "app.pid")
		return &proto.TaskSpec{Name: name, Instance: proto.Instance{Namespace: "ns", App: name}, Process: &proto.ProcessSpec{
			ProcName: "sleep", WorkPath: filepath.Join(e.workBase, "ns."+name+".0"), PidFile: pidFile, StartGracePeriod: 0.3,
			StartCmd: fmt.Sprintf(`sleep 1000 & echo $! > %s`, pidFile),
		}}
	}
	e.launch(t, "exec-keep", "keep.0", spec("keep"))
	e.f.AwaitAck("keep.0", mesos.TASK_STARTING, nil)
	e.f.AwaitAck("keep.0", mesos.TASK_RUNNING, nil)
	pid := readPid(t, pidFile)
	agentID := e.offer.AgentID.Value

	if err := e.c.RestartAgent(agentID, time.Second); err != nil {
		t.Fatal(err)
	}
	// Past the agent's re-registration timeout (2s): nothing failed.
	time.Sleep(3 * time.Second)
	if state, err := e.c.TaskState(e.f.ID, "keep.0"); err != nil || state != mesos.TASK_RUNNING {
		t.Fatalf("after the agent restart the task is %v (%v), want TASK_RUNNING", state, err)
	}
	if syscall.Kill(pid, 0) != nil {
		t.Fatalf("the task's process %d did not survive the agent restart", pid)
	}

	// The process dies while the agent is away: the executor keeps the
	// update and sends it again when it subscribes again.
	restarted := make(chan error, 1)
	go func() { restarted <- e.c.RestartAgent(agentID, 2*time.Second) }()
	time.Sleep(500 * time.Millisecond)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := <-restarted; err != nil {
		t.Fatal(err)
	}
	e.f.AwaitAck("keep.0", mesos.TASK_FAILED, nil)

	// A second task on the same executor's agent: KILL reaches it after a
	// restart.
	e.offer = e.f.Await("OFFERS", func(ev *scheduler.Event) bool { return ev.Type == scheduler.Event_OFFERS }).Offers.Offers[0]
	e.launch(t, "exec-kill", "kill.0", spec("kill"))
	e.f.AwaitAck("kill.0", mesos.TASK_STARTING, nil)
	e.f.AwaitAck("kill.0", mesos.TASK_RUNNING, nil)
	if err := e.c.RestartAgent(agentID, 500*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // the executor's subscription backoff
	e.f.Call(calls.Kill("kill.0", agentID))
	e.f.AwaitAck("kill.0", mesos.TASK_KILLED, nil)
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	var pid int
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if data, err := os.ReadFile(path); err == nil {
			if _, err := fmt.Sscan(string(data), &pid); err == nil && pid > 0 {
				return pid
			}
		}
	}
	t.Fatalf("no pid in %s", path)
	return 0
}
