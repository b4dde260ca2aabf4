package devcluster

import (
	"time"

	"github.com/jonboulle/clockwork"
)

// lockedTimer is a timer of the cluster's clock whose function runs under
// m.mu, unless the timer was stopped first — also when it fired and was
// waiting for the lock while being stopped, which the clock's own Stop
// cannot prevent; so nothing needs a generation counter.
type lockedTimer struct {
	timer   clockwork.Timer
	stopped bool // guarded by m.mu
}

// afterFunc runs fn under m.mu after d, unless the timer is stopped or
// the cluster stops first. Caller holds m.mu.
func (m *master) afterFunc(d time.Duration, fn func()) *lockedTimer {
	lt := &lockedTimer{}
	lt.timer = m.cfg.Clock.AfterFunc(d, func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if lt.stopped || m.stopped {
			return
		}
		lt.stopped = true
		fn()
	})
	return lt
}

// stop keeps the timer's function from running; a nil timer is stopped.
// Caller holds m.mu.
func (lt *lockedTimer) stop() {
	if lt != nil && !lt.stopped {
		lt.stopped = true
		lt.timer.Stop()
	}
}
