package scheduler_test

import (
	"context"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/devcluster"
)

// Seed 002 (deployd): a podgroup's instances are spread across nodes
// unless told otherwise. Four instances with no constraint run one on each
// of four agents, although one agent is eight times larger than the others
// and the least loaded for all four.
func TestDriverSpreadsInstancesAcrossAgentsByDefault(t *testing.T) {
	large := devcluster.AgentSpec{Resources: devcluster.ResourceSpec{CPUs: 32, MemMB: 65536}}
	s := startSystem(t, large, devcluster.AgentSpec{}, devcluster.AgentSpec{}, devcluster.AgentSpec{})
	p := processApp("spread", 4)
	p.Constraint = nil
	if _, err := s.reg.CreateApp(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	s.running("spread", 4) // four running instances on four distinct agents
}
