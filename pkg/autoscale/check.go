package autoscale

import (
	"github.com/bcs-mesos/bcs-mesos/pkg/field"
	"github.com/bcs-mesos/bcs-mesos/pkg/hook"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
)

// Check compiles what manifest validation leaves to the engines, the
// hook languages an autoscaler writes in: its web sources' jsonPaths and
// its allocatedCondition, each error naming its field. The API runs it
// beside Validate, as it runs hook.Check for hook templates.
func Check(a *manifest.Autoscaler) field.ErrorList {
	var errs field.ErrorList
	sp := field.Path("spec")
	for i, m := range a.Spec.Metrics {
		if m.Web != nil {
			errs = append(errs, hookLanguage(sp.Child("metrics").Index(i).Child("web"), m.Web, "")...)
		}
	}
	if o := a.Spec.ScaleDownOrder; o != nil && o.Web != nil {
		errs = append(errs, hookLanguage(sp.Child("scaleDownOrder").Child("web"), o.Web, "")...)
	}
	if al := a.Spec.Allocation; al != nil {
		ap := sp.Child("allocation")
		if al.Probe.Web != nil {
			errs = append(errs, hookLanguage(ap.Child("probe").Child("web"), al.Probe.Web, "")...)
		}
		errs = append(errs, hookLanguage(ap.Child("allocatedCondition"), nil, al.AllocatedCondition)...)
	}
	return errs
}

// hookLanguage checks a web source's jsonPath or a condition with the
// hook engine's own check, through a one-metric template, reporting the
// errors at p.
func hookLanguage(p field.Path, web *manifest.WebProvider, condition string) field.ErrorList {
	m := manifest.HookMetric{SuccessCondition: condition, Provider: manifest.HookProvider{Web: web}}
	var errs field.ErrorList
	for _, e := range hook.Check(&manifest.HookTemplate{Spec: manifest.HookTemplateSpec{Metrics: []manifest.HookMetric{m}}}) {
		at := p
		if web != nil {
			at = p.Child("jsonPath")
		}
		errs = append(errs, field.Error{Path: at, Message: e.Message})
	}
	return errs
}
