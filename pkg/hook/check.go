package hook

import (
	"github.com/bcs-mesos/bcs-mesos/pkg/field"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
)

// Check compiles what manifest.Validate leaves to the engine, the
// languages of a template's metrics: every condition (expr-lang) and
// every jsonPath (Kubernetes JSONPath), each error naming its field.
func Check(t *manifest.HookTemplate) field.ErrorList {
	return checkMetrics("spec.metrics", t.Spec.Metrics)
}

func checkMetrics(at field.Path, metrics []manifest.HookMetric) field.ErrorList {
	var errs field.ErrorList
	for i, m := range metrics {
		p := at.Index(i)
		for _, c := range []struct{ name, condition string }{
			{"successCondition", m.SuccessCondition}, {"failureCondition", m.FailureCondition},
		} {
			if c.condition == "" {
				continue
			}
			if _, err := compileCondition(c.condition); err != nil {
				errs = append(errs, field.Invalid(p.Child(c.name), "%v", err))
			}
		}
		if web := m.Provider.Web; web != nil && web.JSONPath != "" {
			if _, err := parseJSONPath(web.JSONPath); err != nil {
				errs = append(errs, field.Invalid(p.Child("provider").Child("web").Child("jsonPath"), "%v", err))
			}
		}
	}
	return errs
}
