package simexec_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/bcs-mesos/bcs-mesos/pkg/devcluster"
	"github.com/bcs-mesos/bcs-mesos/pkg/devcluster/devclustertest"
	"github.com/bcs-mesos/bcs-mesos/pkg/simexec"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// A simulated executor answers an update as bcs's executors do: after the
// answer delay its task reports the new revision in its TaskStatus.data,
// and the executor sends the update's MessageResult, OK.
func TestSimulatedExecutorAnswersAnUpdate(t *testing.T) {
	c, err := devcluster.Start(context.Background(), devcluster.Config{
		ListenAddr: "127.0.0.1:0", WorkDir: t.TempDir(), ExecutorMode: devcluster.ExecutorSimulated,
		SimulatedMessages: simexec.Answer, SimulatedStartDelay: devcluster.Duration(10 * time.Millisecond),
		SimulatedAnswerDelay: devcluster.Duration(300 * time.Millisecond),
		Agents:               []devcluster.AgentSpec{{Hostname: "agent-1", Resources: devcluster.ResourceSpec{CPUs: 2, MemMB: 1024}}},
		Logger:               slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	f := devclustertest.Subscribe(t, c.MasterURL(), "simexec-test")
	o := f.AwaitOffer()
	cmd := "bcs-process-executor"
	ex := mesos.ExecutorInfo{Type: mesos.ExecutorInfo_CUSTOM, ExecutorID: mesos.ExecutorID{Value: "tg-1"}, FrameworkID: &mesos.FrameworkID{Value: f.ID},
		Command: &mesos.CommandInfo{Value: &cmd}, Resources: []mesos.Resource{devclustertest.Scalar("cpus", 0.1), devclustertest.Scalar("mem", 32), devclustertest.Scalar("disk", 10)}}
	task := mesos.TaskInfo{Name: "svr", TaskID: mesos.TaskID{Value: "tg-1_0"}, AgentID: o.AgentID,
		Resources: []mesos.Resource{devclustertest.Scalar("cpus", 0.5), devclustertest.Scalar("mem", 64)}}
	f.Call(calls.Accept(calls.OfferOperations{calls.OpLaunchGroup(ex, task)}.WithOffers(o.ID)))
	f.AwaitAck("tg-1_0", mesos.TASK_RUNNING, nil)

	update := proto.Message{ID: "m-1", Type: proto.MessageUpdate, TaskID: "tg-1_0",
		Update: &proto.GroupUpdate{Revision: 7, Mode: proto.UpdateInPlace, Tasks: []proto.TaskUpdate{{TaskID: "tg-1_0"}}}}
	data, err := update.Encode()
	if err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	f.Call(calls.Message(o.AgentID.Value, "tg-1", data))
	f.AwaitAck("tg-1_0", mesos.TASK_RUNNING, func(st mesos.TaskStatus) bool { return proto.RevisionOf(st.Data) == 7 })
	if waited := time.Since(sent); waited < 300*time.Millisecond {
		t.Errorf("the new revision reported after %v, before the answer delay", waited)
	}
	ev := f.Await("the update's result", func(e *scheduler.Event) bool { return e.Type == scheduler.Event_MESSAGE })
	res, err := proto.DecodeMessageResult(ev.Message.Data)
	if err != nil || !res.OK || res.ID != "m-1" || res.Type != proto.MessageUpdate || ev.Message.ExecutorID.Value != "tg-1" {
		t.Fatalf("result %+v, %v from %s; want update m-1 OK from tg-1", res, err, ev.Message.ExecutorID.Value)
	}
}

// Messages other than updates get no answer.
func TestSimulatedExecutorIgnoresOtherMessages(t *testing.T) {
	for _, msg := range []proto.Message{{ID: "m-2", Type: proto.MessageReload, TaskID: "tg-1_0"}, {ID: "m-3", Type: proto.MessageUpdate, TaskID: "tg-1_0"}} {
		data, _ := msg.Encode()
		if answer := simexec.Answer(data); answer.TaskData != nil || answer.Message != nil {
			t.Errorf("%s %s: answered %+v", msg.Type, msg.ID, answer)
		}
	}
	if answer := simexec.Answer([]byte("not json")); answer.TaskData != nil || answer.Message != nil {
		t.Errorf("garbage answered %+v", answer)
	}
}
