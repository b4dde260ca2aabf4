package scheduler

import (
	"context"
	"fmt"
	"time"

	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// DefaultAnswerMargin is how long past a message's timeout the driver
// waits for the executor's answer: the executor stops the command at the
// timeout, and its answer then travels through the agent and the master.
const DefaultAnswerMargin = 5 * time.Second

// Executor messages with an answer (Driver.Message) bypass the core: the
// caller's goroutine registers a waiter under the message ID, the loop
// sends the MESSAGE call, and the loop hands the executor's MessageResult
// to the waiter instead of the core. A result nobody waits for (a reload
// or restart the core sent, an answer that came too late) goes on to the
// core. The caller removes its waiter whatever happens, so an answer that
// never comes (the executor died, the agent is lost) leaves nothing
// behind.

// waiter is a caller waiting for the answer to one message.
type waiter struct {
	executorID string
	answer     chan *proto.MessageResult // buffered: the loop never blocks
}

// messageRequest asks the loop to send a message to a task of a task
// group; sent says whether it went.
type messageRequest struct {
	taskGroupID, task string
	msg               proto.Message
	sent              chan error
}

// Message sends msg to the executor of the running task group
// taskGroupID (an instance's current launch or its move's successor), for
// its task named task (registry.TaskGroup.FindTask), and returns the
// executor's answer. It waits msg.Timeout, which the executor applies to
// the command, plus AnswerMargin. Errors: ErrNotFound for no such task
// group or task, ErrConflict when it does not run, ErrUnavailable without
// a connection to the master, ErrTimeout when no answer came in time.
func (d *Driver) Message(ctx context.Context, taskGroupID, task string, msg proto.Message) (*proto.MessageResult, error) {
	if msg.Timeout <= 0 {
		return nil, fmt.Errorf("message %s without a timeout: %w", msg.Type, errdefs.ErrInvalidArgument)
	}
	msg.ID = fmt.Sprintf("%s-%s-%d", msg.Type, d.messageRun, d.messageSeq.Add(1))
	w := waiter{executorID: taskGroupID, answer: make(chan *proto.MessageResult, 1)}
	d.waitersMu.Lock()
	d.waiters[msg.ID] = w
	d.waitersMu.Unlock()
	defer d.dropWaiter(msg.ID)

	wait := msg.Timeout + d.cfg.AnswerMargin
	deadline := d.cfg.Clock.After(wait)
	timedOut := func() error {
		return fmt.Errorf("no answer from the executor of task group %q within %s (it may still carry out the %s): %w",
			taskGroupID, wait, msg.Type, errdefs.ErrTimeout)
	}
	req := messageRequest{taskGroupID: taskGroupID, task: task, msg: msg, sent: make(chan error, 1)}
	select {
	case d.messages <- req:
	case <-deadline:
		return nil, timedOut()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case err := <-req.sent:
		if err != nil {
			return nil, err
		}
	case <-deadline:
		return nil, timedOut()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case res := <-w.answer:
		return res, nil
	case <-deadline:
		return nil, timedOut()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (d *Driver) dropWaiter(id string) {
	d.waitersMu.Lock()
	delete(d.waiters, id)
	d.waitersMu.Unlock()
}

// sendMessage resolves the task of a message request against the core's
// state and sends the MESSAGE call. Run's goroutine calls it: it owns the
// core and the caller. The message is not logged: env values may be
// secrets.
func (d *Driver) sendMessage(ctx context.Context, req messageRequest) error {
	rec, ok := d.core.TaskGroup(req.taskGroupID)
	if !ok {
		return fmt.Errorf("task group %q: %w", req.taskGroupID, errdefs.ErrNotFound)
	}
	if rec.Phase != string(PhaseRunning) {
		return fmt.Errorf("task group %q is %s, not running: %w", rec.ID, rec.Phase, errdefs.ErrConflict)
	}
	task, err := rec.FindTask(req.task)
	if err != nil {
		return err
	}
	if d.caller == nil {
		return fmt.Errorf("not connected to the Mesos master: %w", errdefs.ErrUnavailable)
	}
	msg := req.msg
	msg.TaskID = task.ID
	data, err := msg.Encode()
	if err != nil {
		return err
	}
	call := calls.Message(rec.AgentID, rec.ID, data).With(calls.Framework(d.core.FrameworkID()))
	if err := calls.CallNoData(ctx, d.caller, call); err != nil {
		return fmt.Errorf("sending the %s message to the Mesos master: %v: %w", msg.Type, err, errdefs.ErrUnavailable)
	}
	d.log.Info("executor message sent", "type", msg.Type, "id", msg.ID, "task", task.ID)
	return nil
}

// answered hands an executor's MessageResult to the caller waiting for
// it; false when nobody waits (the core takes it).
func (d *Driver) answered(m ExecutorMessage) bool {
	res, err := proto.DecodeMessageResult(m.Data)
	if err != nil {
		return false
	}
	d.waitersMu.Lock()
	w, ok := d.waiters[res.ID]
	if ok && w.executorID == m.ExecutorID {
		delete(d.waiters, res.ID)
	}
	d.waitersMu.Unlock()
	if !ok || w.executorID != m.ExecutorID {
		return false
	}
	w.answer <- res
	return true
}

// offLoop takes, on the subscription's goroutine, the executor messages
// the core has nothing to do with, so that they never queue before the
// loop nor cost a step: usage reports go to the usage table (usage.go),
// and the answer to a usage-interval message nobody waits for is only
// logged (an executor from before usage reports refuses it). It reports
// whether it took in.
func (d *Driver) offLoop(in Input) bool {
	m, ok := in.(ExecutorMessage)
	if !ok {
		return false
	}
	if r, isUsage, err := proto.DecodeUsageReport(m.Data); isUsage {
		if err != nil {
			d.log.Warn("usage report dropped", "executor", m.ExecutorID, "err", err)
			return true
		}
		d.usage.record(m.ExecutorID, r, d.cfg.Clock.Now())
		return true
	}
	res, err := proto.DecodeMessageResult(m.Data)
	if err != nil || res.Type != proto.MessageUsageInterval {
		return false
	}
	d.waitersMu.Lock()
	_, waited := d.waiters[res.ID]
	d.waitersMu.Unlock()
	if waited {
		return false // answered hands it to its caller
	}
	if !res.OK {
		d.log.Info("executor refused the usage interval", "executor", m.ExecutorID, "task", res.TaskID, "err", res.Error)
	}
	return true
}
