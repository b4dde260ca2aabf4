package manifest

import (
	"github.com/bcs-mesos/bcs-mesos/pkg/constraint"
	"github.com/bcs-mesos/bcs-mesos/pkg/field"
)

// Daemonset is kind "daemonset" (the original's BcsDaemonset): one
// instance of a pod template, containers or processes, on every agent
// that passes its constraint, bound to that agent. It has no instance
// count: the agents decide it. Its updates follow a deployment's
// strategies but for surge (one instance per agent leaves no room for a
// second).
type Daemonset struct {
	WorkloadHeader
	Spec DaemonsetSpec `json:"spec"`
}

// DaemonsetSpec is a daemonset's "spec": a deployment's without the
// instance count.
type DaemonsetSpec struct {
	// Instance is the original's spec.instance, which its daemonsets
	// ignored: accepted, and dropped when the manifest is read, as the
	// agents decide the count.
	Instance                int                      `json:"instance,omitempty"`
	Selector                map[string]string        `json:"selector,omitempty"`
	Strategy                *Strategy                `json:"strategy,omitempty"`
	UpdateStrategy          *UpdateStrategy          `json:"updateStrategy,omitempty"`
	PreDeleteUpdateStrategy *PreDeleteUpdateStrategy `json:"preDeleteUpdateStrategy,omitempty"`
	Template                DeploymentTemplate       `json:"template"`
}

// Kind implements Object.
func (*Daemonset) Kind() Kind { return KindDaemonset }

func (d *Daemonset) normalize() {
	d.Metadata.normalize()
	d.Spec.Template.Spec.normalize()
	d.Spec.Instance = 0
	if d.Spec.Strategy == nil && d.Spec.UpdateStrategy == nil {
		d.Spec.UpdateStrategy = &UpdateStrategy{Type: UpdateRolling}
	}
}

// deployment is the daemonset as a deployment of no instances: what its
// instances run, how they are validated and updated.
func (d *Daemonset) deployment() *Deployment {
	return &Deployment{
		WorkloadHeader: d.WorkloadHeader.as(KindDeployment),
		Spec: DeploymentSpec{Selector: d.Spec.Selector, Strategy: d.Spec.Strategy, UpdateStrategy: d.Spec.UpdateStrategy,
			PreDeleteUpdateStrategy: d.Spec.PreDeleteUpdateStrategy, Template: d.Spec.Template},
	}
}

// Validate implements Object: as a deployment, then what a daemonset
// cannot have: surge, constraint operators that count instances (one per
// agent is the daemonset's own rule) and preferred items (it runs on every
// agent it admits: a preference chooses none).
func (d *Daemonset) Validate(r Resolver) field.ErrorList {
	errs := d.deployment().Validate(r)
	us := UpdateStrategyOf(d)
	surgePath := field.Path("spec.updateStrategy.maxSurge")
	if d.Spec.Strategy != nil {
		surgePath = "spec.strategy.rollingupdate.maxSurge"
	}
	if us.MaxSurge != nil && us.MaxSurge.Value > 0 {
		errs = append(errs, field.Invalid(surgePath, "a daemonset runs one instance per agent, leaving no room for a surge instance: want 0, got %s", us.MaxSurge))
	}
	if c := d.Constraint; c != nil {
		items := field.Path("constraint.intersectionItem")
		for i, item := range c.IntersectionItems {
			if item.Weight != 0 {
				errs = append(errs, field.Invalid(items.Index(i).Child("weight"),
					"a daemonset runs on every agent it admits: a preferred item chooses none; drop the weight to require the item"))
			}
			errs = append(errs, countingOperators(items.Index(i).Child("unionData"), item.UnionData)...)
		}
	}
	return errs
}

// countingOperators refuses the conditions of list (at path p) whose
// operator counts instances.
func countingOperators(p field.Path, list []constraint.UnionData) field.ErrorList {
	var errs field.ErrorList
	for j, u := range list {
		errs = append(errs, countingOperators(p.Index(j).Child("unionData"), u.Nested)...)
		switch u.Operate {
		case constraint.Unique, constraint.MaxPer, constraint.GroupBy:
			errs = append(errs, field.Invalid(p.Index(j).Child("operate"),
				"%s counts instances; a daemonset runs one on every agent it admits: choose agents with CLUSTER, LIKE, UNLIKE, EXCLUDE, GREATER or TOLERATION", u.Operate))
		}
	}
	return errs
}
