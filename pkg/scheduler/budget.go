package scheduler

import (
	"sync"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// LaunchBudget sets how many launches may be under way at most, below
// Config.MaxLaunching: the driver's adaptive budget (launchBudget). Zero
// leaves Config.MaxLaunching alone.
type LaunchBudget struct{ Max int }

func (LaunchBudget) input() {}

// maxLaunching is the launch budget in force: Config.MaxLaunching, or
// less while the driver's adaptive budget says so.
func (c *Core) maxLaunching() int {
	if c.budget > 0 {
		return min(c.budget, c.cfg.MaxLaunching)
	}
	return c.cfg.MaxLaunching
}

// budgetRoom is how many more launches, updates or replacements the
// launch budget lets go now: an in-place update or hot patch sent and not
// yet applied brings a status update of every task, as a launch does, and
// a replacement brings its kill's and then its launch's. An applied update
// leaves updatesSent at once (updateApplied), a relaunched replacement
// replacing (trackPhase); the others given up are pruned each tick
// (pruneUnderWay): a count of every call would walk them all for each
// update sent.
func (c *Core) budgetRoom() int {
	return c.maxLaunching() - len(c.launching) - len(c.updatesSent) - len(c.replacing)
}

// pruneUnderWay drops from the launches, updates and replacements under
// way those done or given up since.
func (c *Core) pruneUnderWay() {
	c.underWay()
	for inst := range c.updatesSent {
		if !c.updateLive(inst) || inst.rec.Update.Sent.IsZero() {
			delete(c.updatesSent, inst)
		}
	}
	for inst := range c.replacing {
		if p := inst.phase(); p != PhaseKilling && p != PhasePending || c.apps[inst.app.key()] != inst.app {
			delete(c.replacing, inst)
		}
	}
}

// updateLive reports whether inst still has an in-place update or hot
// patch to send or to wait for.
func (c *Core) updateLive(inst *instance) bool {
	u := inst.rec.Update
	return u != nil && u.Mode != registry.UpdateReplace && u.Error == "" && inst.phase() == PhaseRunning &&
		c.apps[inst.app.key()] == inst.app && c.attached(inst)
}

// heldLive reports whether inst still has the update or replacement it
// was held for to send.
func (c *Core) heldLive(inst *instance) bool {
	if u := inst.rec.Update; u != nil && u.Mode == registry.UpdateReplace {
		return inst.phase() == PhaseRunning && c.apps[inst.app.key()] == inst.app && c.attached(inst)
	}
	return c.updateLive(inst) && inst.rec.Update.Sent.IsZero()
}

// holdUpdate holds inst's update or replacement back until the budget has
// room; they go in the order they were held (sendHeldUpdates).
func (c *Core) holdUpdate(inst *instance) {
	if !c.updatesHeld[inst] {
		c.updatesHeld[inst] = true
		c.heldOrder = append(c.heldOrder, inst)
	}
	c.launchesHeld = true
}

// sendHeldUpdates sends the updates and replacements the launch budget
// held back, first held first, as far as it has room now. A step costs
// what it sends: the queue is neither sorted nor walked past the first
// that waits.
func (c *Core) sendHeldUpdates() {
	for len(c.heldOrder) > 0 {
		inst := c.heldOrder[0]
		switch {
		case !c.updatesHeld[inst]:
			// sent or given up since it was held
		case !c.heldLive(inst):
			delete(c.updatesHeld, inst)
		case c.budgetRoom() > 0 && inst.rec.Update.Mode == registry.UpdateReplace:
			c.sendReplace(inst)
		case c.budgetRoom() > 0:
			c.sendUpdate(inst)
			c.persist(inst)
		default:
			c.launchesHeld = true
			return
		}
		c.heldOrder[0] = nil
		c.heldOrder = c.heldOrder[1:]
	}
	c.heldOrder = nil // its array, grown by a whole fleet's rollout
}

// LaunchesHeld reports whether the last placement pass left launches
// waiting for the launch budget: the driver grows its budget only while
// it is used up.
func (c *Core) LaunchesHeld() bool { return c.launchesHeld }

// The adaptive launch budget's rules. An agent sends a status update again
// when it is not acknowledged within 10 s (Mesos's first status update
// retry interval), so acknowledgements must stay well below that, whatever
// the machine's speed today: the budget is cut when they take half of it,
// and grows while they take less than a fifth and it is used up. Between
// the two it holds: more launches under way make fuller store
// transactions, and acknowledgements later but not late.
const (
	budgetFloor     = 100
	budgetGrowBelow = 2 * time.Second
	budgetCutAbove  = 5 * time.Second
	// budgetSlowShare is the share of an interval's acknowledgements that,
	// slower than budgetCutAbove, cuts the budget; one slow store (an
	// fsync that took long) must not.
	budgetSlowShare = 0.1
	// budgetIdleRestart is how many intervals without acknowledgements or
	// launches held bring the budget back to where it starts: a budget
	// grown on a quiet fleet's launches says nothing of the burst a
	// rollout of the whole fleet starts with (TCP restarts its window
	// after idle, RFC 5681 §4.1).
	budgetIdleRestart = 5
)

// launchBudget adapts the launches under way to how fast the status
// updates they bring are stored and acknowledged, as TCP adapts its window
// to the round trips it measures: from an eighth of the ceiling it doubles
// each interval (slow start) until the first cut, then grows by a
// twentieth of the ceiling an interval, and halves when too many
// acknowledgements were slow (budgetSlowShare). It grows while nine in
// ten were quick, and starts again from an eighth after an idle spell
// (budgetIdleRestart). A busy machine (a CPU taken by another
// process) thus launches slower instead of collapsing into resends. The
// output goroutine reports acknowledgements; the loop adjusts it each tick.
type launchBudget struct {
	mu                sync.Mutex
	window, threshold int
	acks, slow, fast  int
	used              bool
	idle              int // intervals in a row without acknowledgements or launches held
}

// acknowledged records an acknowledgement sent latency after its status
// update came.
func (b *launchBudget) acknowledged(latency time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.acks++
	switch {
	case latency > budgetCutAbove:
		b.slow++
	case latency < budgetGrowBelow:
		b.fast++
	}
}

// usedUp records that the budget held launches back since the last
// adjustment: only a budget in use grows.
func (b *launchBudget) usedUp() {
	b.mu.Lock()
	b.used = true
	b.mu.Unlock()
}

// adjust ends an interval and returns the budget for the next, at most
// ceiling (Config.MaxLaunching, which may change at run time).
func (b *launchBudget) adjust(ceiling int) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	floor, start := min(budgetFloor, ceiling), max(ceiling/8, min(budgetFloor, ceiling))
	if b.window == 0 {
		b.window, b.threshold = start, ceiling
	}
	if b.acks == 0 && !b.used {
		b.idle++
	} else {
		b.idle = 0
	}
	if b.idle >= budgetIdleRestart {
		b.window = min(b.window, start)
	}
	acks := float64(b.acks)
	quick := b.acks > 0 && b.used && float64(b.fast) >= (1-budgetSlowShare)*acks
	switch {
	case b.acks > 0 && float64(b.slow) >= budgetSlowShare*acks:
		b.threshold = max(b.window/2, floor)
		b.window = b.threshold
	case quick && b.window < b.threshold:
		b.window = min(2*b.window, b.threshold)
	case quick:
		b.window += max(ceiling/20, 1)
	}
	b.window = max(min(b.window, ceiling), floor)
	b.acks, b.slow, b.fast, b.used = 0, 0, 0, false
	return b.window
}
