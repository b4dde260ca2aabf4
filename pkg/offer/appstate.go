package offer

import "github.com/bcs-mesos/bcs-mesos/pkg/constraint"

// appState is the constraint.State of one application during a pass: its
// instances counted per value of every name its constraints count, kept
// current as the pass places more of them.
type appState struct {
	pass   *pass
	agents []int                          // agents of active instances, then of this pass's placements
	counts map[*constraint.Column][]int32 // column → value ID → instances
	// minimums caches MinInstances per GROUPBY set until the next placement.
	minimums map[*int32]int
}

var _ constraint.State = (*appState)(nil)

// app returns the state of req's application, counting every name req's
// constraint needs.
func (p *pass) app(req *Requirements) *appState {
	app, ok := p.apps[req.App]
	if !ok {
		app = &appState{
			pass:     p,
			agents:   append([]int(nil), p.active[req.App]...),
			counts:   map[*constraint.Column][]int32{},
			minimums: map[*int32]int{},
		}
		p.apps[req.App] = app
	}
	if req.Constraint != nil {
		for _, name := range req.Constraint.CountedNames() {
			col := p.table.Column(name)
			if _, ok := app.counts[col]; !ok {
				byValue := make([]int32, col.Len())
				for _, i := range app.agents {
					if v := col.Of(i); v != constraint.Missing {
						byValue[v]++
					}
				}
				app.counts[col] = byValue
			}
		}
	}
	return app
}

// record counts a new instance on agent i.
func (s *appState) record(i int) {
	s.agents = append(s.agents, i)
	clear(s.minimums)
	for col, byValue := range s.counts {
		if v := col.Of(i); v != constraint.Missing {
			byValue[v]++
		}
	}
}

func (s *appState) InstancesWith(col *constraint.Column, value int32) int {
	return int(s.counts[col][value])
}

func (s *appState) MinInstances(col *constraint.Column, values []int32) int {
	if least, ok := s.minimums[&values[0]]; ok {
		return least
	}
	counts := s.counts[col]
	least := int(counts[values[0]])
	for _, v := range values[1:] {
		least = min(least, int(counts[v]))
	}
	s.minimums[&values[0]] = least
	return least
}

func (s *appState) AgentRunsLabel(agent int, label string) bool {
	return s.pass.labels[label][agent] > 0
}
