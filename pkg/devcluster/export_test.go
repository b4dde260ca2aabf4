package devcluster

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
