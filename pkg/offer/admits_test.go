package offer_test

import (
	"slices"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/constraint"
	"github.com/bcs-mesos/bcs-mesos/pkg/constraint/constrainttest"
	"github.com/bcs-mesos/bcs-mesos/pkg/offer"
	"github.com/bcs-mesos/bcs-mesos/pkg/offer/offertest"
)

// Admits is a daemonset's choice of agents: resources aside, an agent
// cordoned or drained, in maintenance, tainted against the requirements
// or failing the constraint is out; the application's own instances do
// not count for the constraint (EXCLUDE reads the others').
func TestAdmits(t *testing.T) {
	agents := func() []offer.Agent {
		out := []offer.Agent{offertest.Agent(1, "idc", "a"), offertest.Agent(2, "idc", "b"), offertest.Agent(3, "idc", "a"), offertest.Agent(4, "idc", "a")}
		out[3].Offers = nil // no offer in hand: still admitted
		return out
	}
	tests := []struct {
		name string
		edit func(snap *offer.Snapshot, req *offer.Requirements)
		want []string
	}{
		{"every agent", func(*offer.Snapshot, *offer.Requirements) {}, []string{"agent-1", "agent-2", "agent-3", "agent-4"}},
		{"cordoned and in maintenance", func(s *offer.Snapshot, _ *offer.Requirements) {
			s.Agents[0].Unschedulable, s.Agents[2].Maintenance = true, true
		}, []string{"agent-2", "agent-4"}},
		{"CLUSTER", func(_ *offer.Snapshot, r *offer.Requirements) {
			r.Constraint = constrainttest.New().Cluster("idc", "a").Build()
		}, []string{"agent-1", "agent-3", "agent-4"}},
		{"a taint not tolerated", func(s *offer.Snapshot, _ *offer.Requirements) {
			s.Agents[1].Taints = []constraint.Taint{{Key: "gpu", Value: "yes"}}
		}, []string{"agent-1", "agent-3", "agent-4"}},
		{"a taint tolerated", func(s *offer.Snapshot, r *offer.Requirements) {
			s.Agents[1].Taints = []constraint.Taint{{Key: "gpu", Value: "yes"}}
			r.Constraint = constrainttest.New().Tolerate("gpu", "yes").Build()
		}, []string{"agent-1", "agent-2", "agent-3", "agent-4"}},
		{"EXCLUDE counts the others, not its own", func(s *offer.Snapshot, r *offer.Requirements) {
			r.Labels = []string{"app:logs"}
			r.Constraint = constrainttest.New().Exclude("app:db").Build()
			s.Active = []offer.Instance{{App: "ns/db", AgentID: "agent-2", Labels: []string{"app:db"}},
				{App: r.App, AgentID: "agent-1", Labels: []string{"app:db"}}}
		}, []string{"agent-1", "agent-3", "agent-4"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := &offer.Snapshot{Agents: agents()}
			req := offertest.Requirements("ns/logs")
			tt.edit(snap, req)
			if got := offertest.Matcher().Admits(snap, req); !slices.Equal(got, tt.want) {
				t.Errorf("Admits = %v, want %v", got, tt.want)
			}
		})
	}
}
