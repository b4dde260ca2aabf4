package constraint_test

import (
	"encoding/json"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/constraint"
	"github.com/bcs-mesos/bcs-mesos/pkg/constraint/constrainttest"
	"github.com/bcs-mesos/bcs-mesos/pkg/field"
)

// FuzzConstraint feeds arbitrary JSON through decode, validation, compile,
// bind and evaluation: a constraint that validates must compile and
// evaluate on any agent without panicking, and one that does not validate
// must not compile.
func FuzzConstraint(f *testing.F) {
	f.Add([]byte(referenceConstraint))
	f.Add([]byte(`{"intersectionItem":[{"unionData":[{"name":"hostname","operate":"UNIQUE"}]}]}`))
	f.Add([]byte(`{"intersectionItem":[{"unionData":[{"name":"idc","operate":"MAXPER","type":3,"text":{"value":"2"}}]}]}`))
	f.Add([]byte(`{"intersectionItem":[{"unionData":[{"name":"gen","operate":"GREATER","type":1,"scalar":{"value":2.5}}]}]}`))
	f.Add([]byte(`{"intersectionItem":[{"unionData":[{"name":"hostname","operate":"LIKE","type":4,"set":{"item":["slave[1-3]","x.*"]}}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var c constraint.Constraint
		if json.Unmarshal(data, &c) != nil {
			return
		}
		errs := c.Validate(field.Path("constraint"))
		compiled, err := constraint.Compile(&c)
		if (len(errs) == 0) != (err == nil) {
			t.Fatalf("validate says %v, compile says %v", errs, err)
		}
		if err != nil {
			return
		}
		agents := cluster()
		agents = append(agents, &constraint.Agent{ID: "s", Hostname: "s", Attributes: map[string]constraint.Value{
			"gen": constraint.Scalar(3), "tags": constraint.Set("a", "b"),
			"ports": constraint.Ranges(constraint.Range{Begin: 1, End: 9}),
		}, Taints: []constraint.Taint{{Key: "k", Value: "v"}}})
		state := constrainttest.NewState(agents...)
		state.Place("a1")
		state.RunLabel("a2", "appname:gamesvr")
		for _, a := range agents {
			ok, clause := state.Fits(compiled, a.ID)
			if !ok {
				_ = compiled.Reason(clause)
				_ = compiled.Permanent(clause)
			}
			_, _ = compiled.Tolerates(a.Taints)
		}
	})
}
