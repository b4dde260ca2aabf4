package executor

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/mesos/mesos-go/api/v1/lib/executor/calls"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/taskstate"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// Usage reports (proto.UsageReport): every task group a UsageReader
// runtime launched has a usageReporter, which measures the group's
// running tasks every interval and sends the samples as one framework
// MESSAGE. The interval comes from the tasks' specs and changes with
// proto.MessageUsageInterval; each wait is the interval ±10 % at random,
// so that a fleet launched at once does not report at once.

// usageJitter is the part of the interval each wait varies by, either
// way.
const usageJitter = 0.1

// usageReporter reports the usage of one task group.
type usageReporter struct {
	d       *Driver
	reader  UsageReader
	groupID string
	tasks   []string // the group's task IDs, in launch order

	mu       sync.Mutex
	interval time.Duration
	stop     chan struct{} // ends the loop that runs; nil when none does
}

// startUsage gives group a reporter when the runtime measures usage, at
// the interval its specs ask for (the longest, should they differ).
func (d *Driver) startUsage(group []Task) {
	reader, ok := d.cfg.Runtime.(UsageReader)
	if !ok || len(group) == 0 {
		return
	}
	u := &usageReporter{d: d, reader: reader, groupID: group[0].Spec.Instance.TaskGroupID}
	if u.groupID == "" {
		u.groupID = d.cfg.Env.ExecutorID
	}
	var interval time.Duration
	for _, t := range group {
		u.tasks = append(u.tasks, t.ID())
		// DecodeTaskSpec checked the interval.
		iv, _ := proto.UsageInterval("usageIntervalSeconds", t.Spec.UsageIntervalSeconds)
		interval = max(interval, iv)
	}
	d.mu.Lock()
	for _, id := range u.tasks {
		d.usage[id] = u
	}
	d.mu.Unlock()
	u.retime(interval)
}

// setUsageInterval carries out a MessageUsageInterval.
func (d *Driver) setUsageInterval(msg *proto.Message) error {
	interval, err := proto.UsageInterval("usageIntervalSeconds", msg.UsageIntervalSeconds)
	if err != nil {
		return fmt.Errorf("%w: %w", err, errdefs.ErrInvalidArgument)
	}
	d.mu.Lock()
	u := d.usage[msg.TaskID]
	d.mu.Unlock()
	if u == nil {
		return fmt.Errorf("task %q: this executor does not measure its usage: %w", msg.TaskID, errdefs.ErrUnavailable)
	}
	u.retime(interval)
	return nil
}

// retime runs the reports at interval from now on; 0 stops them. The
// interval the loop runs at already changes nothing, so that a message
// sent again does not put the next report off.
func (u *usageReporter) retime(interval time.Duration) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if interval == u.interval && (u.stop != nil) == (interval > 0) {
		return
	}
	if u.stop != nil {
		close(u.stop)
		u.stop = nil
	}
	u.interval = interval
	u.d.log().Info("usage reports", "task_group", u.groupID, "interval", interval)
	if interval > 0 {
		u.stop = make(chan struct{})
		go u.run(interval, u.stop)
	}
}

// run reports every interval (jittered) until stop closes, the executor
// is done or every task of the group is terminal.
func (u *usageReporter) run(interval time.Duration, stop <-chan struct{}) {
	d := u.d
	for {
		wait := time.Duration(float64(interval) * (1 - usageJitter + 2*usageJitter*d.cfg.Jitter()))
		timer := d.cfg.Clock.NewTimer(wait)
		select {
		case <-timer.Chan():
		case <-stop:
			timer.Stop()
			return
		case <-d.runtimeCtx.Done():
			timer.Stop()
			return
		}
		running, live := d.runningOf(u.tasks)
		if !live {
			return
		}
		if len(running) == 0 {
			continue
		}
		ctx, cancel := context.WithTimeout(d.runtimeCtx, d.cfg.CallTimeout)
		samples := u.reader.Usage(ctx, running)
		cancel()
		select {
		case <-stop:
			return // retimed or stopped while measuring: the new loop reports
		default:
		}
		if len(samples) > 0 {
			d.sendUsage(&proto.UsageReport{TaskGroupID: u.groupID, Tasks: samples})
		}
	}
}

// runningOf returns the tasks of ids that run; live is false once every
// one of them is terminal.
func (d *Driver) runningOf(ids []string) (running []string, live bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, id := range ids {
		rec, ok := d.tasks[id]
		if !ok {
			continue
		}
		if !rec.state.Terminal() {
			live = true
		}
		if rec.state == taskstate.Running {
			running = append(running, id)
		}
	}
	return running, live
}

// sendUsage sends a report; one that does not go is dropped (the next
// one carries the cumulative counters on).
func (d *Driver) sendUsage(r *proto.UsageReport) {
	data, err := r.Encode()
	if err != nil {
		d.log().Error("encode usage report", "err", err)
		return
	}
	if err := calls.SendNoData(d.runtimeCtx, d.sender, calls.NonStreaming(calls.Message(data))); err != nil {
		d.log().Info("usage report not sent; the next one follows", "task_group", r.TaskGroupID, "err", err)
	}
}
