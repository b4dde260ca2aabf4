package podruntime

import (
	"sync"

	"github.com/bcs-mesos/bcs-mesos/pkg/executor"
)

// reportQueue forwards reports to the driver in order from one goroutine:
// pod callbacks run with the pod's lock held and the driver's Report sends
// an HTTP call, so the two must not meet on the same stack.
type reportQueue struct {
	mu      sync.Mutex
	pending []queued
	busy    bool // a drain goroutine runs
	idle    *sync.Cond
}

type queued struct {
	to executor.Reporter
	r  executor.Report
}

func newReportQueue() *reportQueue {
	q := &reportQueue{}
	q.idle = sync.NewCond(&q.mu)
	return q
}

// push queues r for to; it never blocks on the driver.
func (q *reportQueue) push(to executor.Reporter, r executor.Report) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.pending = append(q.pending, queued{to: to, r: r})
	if !q.busy {
		q.busy = true
		go q.drain()
	}
}

func (q *reportQueue) drain() {
	for {
		q.mu.Lock()
		if len(q.pending) == 0 {
			q.busy = false
			q.idle.Broadcast()
			q.mu.Unlock()
			return
		}
		next := q.pending[0]
		q.pending = q.pending[1:]
		q.mu.Unlock()
		next.to.Report(next.r)
	}
}

// flush waits until every queued report was handed to its reporter.
func (q *reportQueue) flush() {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.busy {
		q.idle.Wait()
	}
}
