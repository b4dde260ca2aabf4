package scheduler

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"
	"time"

	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// stepOutput is what a step leaves to do: store writes, then send calls
// to caller (none when nil: not subscribed).
type stepOutput struct {
	writes      []Write
	calls       []*scheduler.Call
	caller      calls.Caller
	frameworkID string
	received    []time.Time
}

// outputsQueued bounds the steps whose output waits for the output
// goroutine: past it the loop waits, and the events queued meanwhile are
// gathered into larger steps.
const outputsQueued = 16

// startOutputs starts the output goroutine (runOutputs); the function it
// returns ends it once the outputs handed to it are stored and sent.
func (d *Driver) startOutputs(ctx context.Context) (stop func()) {
	d.outputs, d.outputFailed = make(chan stepOutput, outputsQueued), make(chan error, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.runOutputs(ctx, d.outputs, d.outputFailed)
	}()
	return func() {
		close(d.outputs)
		<-done
	}
}

// runOutputs stores each step's writes and then sends its calls, step
// after step in order, until outputs is closed: nothing is sent before
// what its step decided is stored. Storing and sending are two stages, so
// that a step's writes are stored while the step before sends its calls.
// The steps queued while a store was under way are stored together, in
// order, as a group commit: a loop that runs ahead of the store (a busy
// machine, a slow disk) makes fewer, fuller transactions instead of
// falling further behind. When storing fails it reports the error on
// outputFailed, and stores and sends nothing more: the driver stops and
// the next leader starts over from the store.
func (d *Driver) runOutputs(ctx context.Context, outputs <-chan stepOutput, failed chan<- error) {
	stored := make(chan stepOutput, outputsQueued)
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		for o := range stored {
			if o.caller != nil {
				d.send(ctx, o.caller, o.frameworkID, o.calls)
			}
			for _, at := range o.received {
				latency := d.cfg.Clock.Since(at) // stored, then acknowledged
				d.cfg.Metrics.acknowledged(latency)
				d.budget.acknowledged(latency)
			}
		}
	}()
	var err error
	for group := range queuedGroups(outputs) {
		if err != nil {
			continue
		}
		var writes []Write
		for _, o := range group {
			writes = append(writes, o.writes...)
		}
		if err = d.persist(ctx, writes); err != nil {
			failed <- fmt.Errorf("persist: %w", err)
			continue
		}
		for _, o := range group {
			stored <- o
		}
	}
	close(stored)
	<-sent
}

// queuedGroups yields each output with those queued behind it, until
// outputs is closed.
func queuedGroups(outputs <-chan stepOutput) iter.Seq[[]stepOutput] {
	return func(yield func([]stepOutput) bool) {
		for o := range outputs {
			group := []stepOutput{o}
			closed := false
		queued:
			for !closed {
				select {
				case more, ok := <-outputs:
					if !ok {
						closed = true
						break queued
					}
					group = append(group, more)
				default:
					break queued
				}
			}
			if !yield(group) || closed {
				return
			}
		}
	}
}

// callsInFlight bounds the calls of a step sent at once.
const callsInFlight = 16

// send sends a step's calls in order, but for runs of calls whose order
// does not matter (callRun: acknowledgements, accepts and declines of
// distinct offers, messages to distinct executors, kills), which go
// callsInFlight at a time: a step of a thousand status updates would otherwise wait a
// thousand round trips, and a rollout's thousands of update messages sent
// one by one held the acknowledgements behind them past the agents'
// resend interval. A failed call is
// logged; the master resends what matters (offers, updates) and the core
// retries kills and reconciliation.
func (d *Driver) send(ctx context.Context, caller calls.Caller, frameworkID string, cs []*scheduler.Call) {
	var (
		wg      sync.WaitGroup
		slots   = make(chan struct{}, callsInFlight)
		mu      sync.Mutex
		failed  int
		lastErr error
		last    scheduler.Call_Type
	)
	one := func(call *scheduler.Call) {
		start := d.cfg.Clock.Now()
		err := calls.CallNoData(ctx, caller, call)
		d.cfg.Metrics.mesosCall(call.GetType(), d.cfg.Clock.Since(start))
		if err != nil {
			mu.Lock()
			failed, lastErr, last = failed+1, err, call.GetType()
			mu.Unlock()
		}
	}
	var run callRun
	for _, call := range cs {
		call = call.With(calls.Framework(frameworkID))
		if !run.admit(call) {
			wg.Wait()
			run = callRun{}
			if !run.admit(call) {
				one(call) // an ordered call goes alone
				run = callRun{}
				continue
			}
		}
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			one(call)
		})
	}
	wg.Wait()
	if failed > 0 {
		d.log.Warn("mesos calls failed", "failed", failed, "of", len(cs), "type", last.String(), "err", lastErr)
	}
}

// callRun is the calls in flight together. Acknowledgements and declines
// go with any; launches (ACCEPT) and messages to distinct executors go
// together, as do kills: a kill must neither overtake a launch or an
// update sent before it nor be overtaken by one sent after, while kills
// of a rolling update's batch need no order among themselves (one by one,
// 10,000 of them held the acknowledgements behind them for a minute).
// The other calls (REVIVE, SUPPRESS, RECONCILE …) go alone.
type callRun struct {
	messaged        map[string]bool // executors messaged
	launches, kills bool
}

// admit reports whether call may go with the run's calls, and adds it.
func (r *callRun) admit(call *scheduler.Call) bool {
	switch call.GetType() {
	case scheduler.Call_ACKNOWLEDGE, scheduler.Call_DECLINE:
		return true
	case scheduler.Call_ACCEPT:
		if r.kills {
			return false
		}
		r.launches = true
		return true
	case scheduler.Call_MESSAGE:
		executor := call.GetMessage().GetExecutorID().Value
		if r.kills || r.messaged[executor] {
			return false
		}
		if r.messaged == nil {
			r.messaged = map[string]bool{}
		}
		r.messaged[executor], r.launches = true, true
		return true
	case scheduler.Call_KILL:
		if r.launches {
			return false
		}
		r.kills = true
		return true
	}
	return false
}

// persist stores a step's writes in order, all of them before any of
// the step's calls is sent: the plain writes of the scheduler's own
// records in as few store transactions as etcd allows (registry.Txn),
// committed before each write that reads or checks what is stored (an
// application's status, an agent, a dependency pod...) and at the end.
func (d *Driver) persist(ctx context.Context, writes []Write) error {
	txn := d.cfg.Registry.Txn()
	var notices []registry.Notice // of the writes in txn, logged once stored
	commit := func() error {
		if txn.Len() == 0 {
			return nil
		}
		start := d.cfg.Clock.Now()
		err := txn.Commit(ctx)
		d.cfg.Metrics.storeWrite(d.cfg.Clock.Since(start))
		if err != nil {
			return err
		}
		for _, n := range notices {
			d.log.Info("notice", "type", n.Type, "taskgroup", n.TaskGroupID, "id", n.ID, "message", n.Message)
		}
		txn, notices = d.cfg.Registry.Txn(), nil
		return nil
	}
	for i := 0; i < len(writes); i++ {
		w := writes[i]
		added, err := addToTxn(txn, w)
		if err != nil {
			return err
		}
		if added {
			notices = append(notices, w.Notices...)
			continue
		}
		if err := commit(); err != nil {
			return err
		}
		start := d.cfg.Clock.Now()
		switch {
		case w.AppStatus != nil:
			// A step's statuses come together (refreshStatuses): stored
			// together.
			var statuses []registry.AppStatusChange
			for ; i < len(writes) && writes[i].AppStatus != nil; i++ {
				statuses = append(statuses, writes[i].AppStatus.change())
			}
			i--
			err = d.cfg.Registry.SetAppStatuses(ctx, statuses)
		case w.Agent != nil:
			// The agents of one offers event come together: stored
			// together.
			var seen []registry.AgentSeen
			for ; i < len(writes) && writes[i].Agent != nil; i++ {
				seen = append(seen, *writes[i].Agent)
			}
			i--
			err = d.cfg.Registry.RecordAgents(ctx, seen)
		default:
			err = d.persistOne(ctx, w)
		}
		if err != nil {
			return err
		}
		d.cfg.Metrics.storeWrite(d.cfg.Clock.Since(start))
	}
	return commit()
}

// addToTxn adds w to txn if it is a plain write of the scheduler's own
// records, and tells whether it did.
func addToTxn(txn *registry.Txn, w Write) (bool, error) {
	switch {
	case w.TaskGroup != nil:
		return true, txn.PutTaskGroup(w.TaskGroup, w.Notices...)
	case w.DeleteGroup != nil:
		return true, txn.DeleteTaskGroup(w.DeleteGroup.Namespace, w.DeleteGroup.App, w.DeleteGroup.Index)
	case w.FrameworkID != "":
		txn.SetFrameworkID(w.FrameworkID)
		return true, nil
	case w.Sweep != nil:
		return true, txn.PutSweep(w.Sweep)
	case w.DeleteSweep != "":
		return true, txn.DeleteSweep(w.DeleteSweep)
	case w.Rollout != nil:
		return true, txn.PutRollout(w.Rollout)
	case w.DeleteHook != nil:
		return true, txn.DeleteHookRun(w.DeleteHook.Namespace, w.DeleteHook.Name)
	}
	return false, nil
}

// persistOne stores a write that reads or checks what is stored, in its
// own transaction.
func (d *Driver) persistOne(ctx context.Context, w Write) error {
	r := d.cfg.Registry
	switch {
	case w.RemoveApp != nil:
		err := r.RemoveApp(ctx, w.RemoveApp.Namespace, w.RemoveApp.Name)
		if errors.Is(err, errdefs.ErrNotFound) {
			return nil
		}
		return err
	case w.Maintenance != nil:
		return r.SetAgentMaintenance(ctx, w.Maintenance.AgentID, w.Maintenance.Hostname, w.Maintenance.Window)
	case w.HookRun != nil:
		if err := r.CreateHookRun(ctx, w.HookRun); err != nil && !errors.Is(err, errdefs.ErrAlreadyExists) {
			return err
		}
		return nil
	case w.DependencyPod != nil:
		err := r.PutDependencyPod(ctx, w.DependencyPod)
		if errors.Is(err, errdefs.ErrConflict) {
			// The pod is being deleted (the core asks again once it is
			// gone), or an operator's application holds its name (it stays
			// refused: the log says why the pod is missing).
			d.log.Warn("dependency pod not written", "namespace", w.DependencyPod.Namespace, "name", w.DependencyPod.Name, "err", err)
			return nil
		}
		return err
	case w.DeleteDependencyPod != nil:
		err := r.DeleteDependencyPod(ctx, w.DeleteDependencyPod.Namespace, w.DeleteDependencyPod.Name)
		switch {
		case errors.Is(err, errdefs.ErrNotFound):
			return nil // gone already
		case errors.Is(err, errdefs.ErrConflict):
			d.log.Warn("dependency pod not deleted", "namespace", w.DeleteDependencyPod.Namespace, "name", w.DeleteDependencyPod.Name, "err", err)
			return nil
		}
		return err
	}
	return nil
}
