package constrainttest

import "github.com/bcs-mesos/bcs-mesos/pkg/constraint"

// State is a plain constraint.State over a table of agents: the
// application's instances by agent index, and the labels each agent runs.
// It recounts by scanning on every question.
type State struct {
	Table     *constraint.Table
	index     map[string]int // agent ID → table index
	instances []int
	labels    map[int]map[string]bool
}

// NewState returns a State over agents with no instances.
func NewState(agents ...*constraint.Agent) *State {
	s := &State{Table: constraint.NewTable(agents), index: map[string]int{}, labels: map[int]map[string]bool{}}
	for i, a := range agents {
		s.index[a.ID] = i
	}
	return s
}

// Index returns the table index of agentID.
func (s *State) Index(agentID string) int { return s.index[agentID] }

// Place records an active instance of the application on agentID.
func (s *State) Place(agentID string) { s.instances = append(s.instances, s.index[agentID]) }

// RunLabel records an active instance labelled label on agentID.
func (s *State) RunLabel(agentID, label string) {
	i := s.index[agentID]
	if s.labels[i] == nil {
		s.labels[i] = map[string]bool{}
	}
	s.labels[i][label] = true
}

// InstancesWith implements constraint.State by scanning every instance.
func (s *State) InstancesWith(col *constraint.Column, value int32) int {
	n := 0
	for _, i := range s.instances {
		if col.Of(i) == value {
			n++
		}
	}
	return n
}

// MinInstances implements constraint.State by counting every value.
func (s *State) MinInstances(col *constraint.Column, values []int32) int {
	least := s.InstancesWith(col, values[0])
	for _, v := range values[1:] {
		least = min(least, s.InstancesWith(col, v))
	}
	return least
}

// AgentRunsLabel implements constraint.State.
func (s *State) AgentRunsLabel(agent int, label string) bool { return s.labels[agent][label] }

// Fits evaluates c on agentID against the state.
func (s *State) Fits(c *constraint.Compiled, agentID string) (bool, int) {
	return c.Bind(s.Table).Fits(s.index[agentID], s)
}

// Preference sums the weights of c's preferred items agentID meets.
func (s *State) Preference(c *constraint.Compiled, agentID string) int {
	return c.Bind(s.Table).Preference(s.index[agentID], s)
}

var _ constraint.State = (*State)(nil)
