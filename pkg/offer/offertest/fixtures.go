package offertest

import (
	"fmt"

	"github.com/bcs-mesos/bcs-mesos/pkg/constraint"
	"github.com/bcs-mesos/bcs-mesos/pkg/offer"
)

// Ports is the conventional Mesos agent port range.
var Ports = []offer.PortRange{{Begin: 31000, End: 32000}}

// Agent returns an agent "agent-<n>" with hostname "host-<n>" and one offer
// "offer-<n>" of 8 cpus, 16384 MB mem, 100000 MB disk and ports
// 31000-32000; attrs are TEXT attributes as name, value pairs.
func Agent(n int, attrs ...string) offer.Agent {
	a := offer.Agent{
		Agent: constraint.Agent{
			ID:         fmt.Sprintf("agent-%d", n),
			Hostname:   fmt.Sprintf("host-%d", n),
			Attributes: map[string]constraint.Value{},
		},
		Offers: []offer.Offer{{
			ID:        fmt.Sprintf("offer-%d", n),
			Resources: offer.Resources{CPUs: 8, Mem: 16384, Disk: 100000, Ports: Ports},
		}},
	}
	for i := 0; i+1 < len(attrs); i += 2 {
		a.Attributes[attrs[i]] = constraint.Text(attrs[i+1])
	}
	return a
}

// Requirements returns the needs of application app: 1 cpu, 1024 MB mem,
// 1024 MB disk, no ports, no constraint, no labels.
func Requirements(app string) *offer.Requirements {
	return &offer.Requirements{App: app, Resources: offer.Resources{CPUs: 1, Mem: 1024, Disk: 1024}}
}

// TaskGroups returns n pending instances "<app>-<i>" of req.
func TaskGroups(req *offer.Requirements, n int) []offer.TaskGroup {
	tgs := make([]offer.TaskGroup, n)
	for i := range tgs {
		tgs[i] = offer.TaskGroup{ID: fmt.Sprintf("%s-%d", req.App, i), Req: req}
	}
	return tgs
}

// Matcher returns a matcher with the default executor resources and limit.
func Matcher() *offer.Matcher {
	m, err := offer.New(offer.Config{Executor: offer.DefaultExecutor})
	if err != nil {
		panic(err)
	}
	return m
}
