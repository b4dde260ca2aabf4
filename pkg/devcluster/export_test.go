package devcluster

import "fmt"

// LeftToOfferMismatches compares, for every agent, what the allocator has
// left to offer with what the agent's records leave — its total less what
// its tasks, executors and outstanding offers hold, which the allocator
// once summed up on every pass — and describes the agents where they
// differ, in amount or order.
func (c *Cluster) LeftToOfferMismatches() []string {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	var out []string
	for _, a := range c.m.agentOrder {
		want := a.total.Clone()
		want.Subtract(a.used()...)
		want.Subtract(a.offeredResources()...)
		a.share.mu.Lock()
		got := formatResources(a.share.free)
		a.share.mu.Unlock()
		if got != formatResources(want) {
			out = append(out, a.id+": the allocator has "+got+" left, the agent's records "+formatResources(want))
		}
	}
	return out
}

// AcknowledgedTasksHolding names the tasks whose every update the
// framework acknowledged that still hold an update queue or a timer: a
// settled fleet's tasks hold neither.
func (c *Cluster) AcknowledgedTasksHolding() []string {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	var out []string
	for _, a := range c.m.agentOrder {
		for _, t := range a.tasks {
			if len(t.pending) > 0 {
				continue
			}
			if t.pending != nil || t.retryTimer != nil || t.simTimer != nil {
				out = append(out, fmt.Sprintf("%s (queue %v, resend timer %v, start timer %v)",
					t.info.TaskID.Value, t.pending != nil, t.retryTimer != nil, t.simTimer != nil))
			}
		}
	}
	return out
}
