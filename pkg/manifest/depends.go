package manifest

import (
	"github.com/bcs-mesos/bcs-mesos/pkg/constraint"
	"github.com/bcs-mesos/bcs-mesos/pkg/field"
)

// Depends is kind "depends", seed 002's Dependency: a pod template that
// applications name in spec.template.spec.depends. Storing it runs
// nothing; the scheduler deploys it on demand, one dependency pod on each
// agent where an instance of a referencing application runs (policy
// node), or one per namespace of such instances there (policy namespace).
type Depends struct {
	APIVersion string     `json:"apiVersion"`
	KindName   string     `json:"kind"`
	Metadata   ObjectMeta `json:"metadata"`
	// RestartPolicy defaults to Always: a dependency is kept running for
	// as long as it is used.
	RestartPolicy RestartPolicy `json:"restartPolicy"`
	KillPolicy    KillPolicy    `json:"killPolicy"`
	Spec          DependsSpec   `json:"spec"`
}

// DependsSpec is a depends object's "spec": the pod template of its
// dependency pods, containers or processes (a deployment's template).
type DependsSpec struct {
	Template DeploymentTemplate `json:"template"`
}

// Kind implements Object.
func (*Depends) Kind() Kind { return KindDepends }

// Default sets the default namespace, restartPolicy Always and the
// kill grace period.
func (d *Depends) Default() {
	d.Metadata.Default()
	d.RestartPolicy = RestartPolicy{Policy: RestartAlways}
	d.KillPolicy.Default()
}

func (d *Depends) normalize() {
	d.Metadata.normalize()
	d.Spec.Template.Spec.normalize()
}

// DeepCopy returns a copy of d that shares no map, slice or pointer with it.
func (d *Depends) DeepCopy() *Depends { return deepCopy(d) }

// DependsPolicy is how instances share a dependency pod (seed 002's
// DependencyPolicy).
type DependsPolicy string

// Seed 002: "一种是Node级别的,一种是Namespace级别的".
const (
	// DependsPerNode: one dependency pod per agent, shared by every
	// referencing instance there (the default).
	DependsPerNode DependsPolicy = "node"
	// DependsPerNamespace: one dependency pod per agent and namespace,
	// shared by the referencing instances of that namespace there.
	DependsPerNamespace DependsPolicy = "namespace"
)

// DependsRef is one entry of a pod template's "depends": a depends object
// the instances need next to them.
type DependsRef struct {
	Name string `json:"name"`
	// Namespace is the depends object's; empty is the application's own.
	Namespace string        `json:"namespace,omitempty"`
	Policy    DependsPolicy `json:"policy"`
}

// Default sets policy node.
func (r *DependsRef) Default() { r.Policy = DependsPerNode }

// DependsObjects looks up depends objects; a Resolver that implements it
// lets validation check a manifest's depends references.
type DependsObjects interface {
	Depends(namespace, name string) (*Depends, bool)
}

// DependsOf returns the depends references of a workload manifest
// (application, process, deployment or daemonset) with every namespace
// filled in; nil for other kinds.
func DependsOf(obj Object) []DependsRef {
	var refs []DependsRef
	switch m := obj.(type) {
	case *Application:
		refs = m.Spec.Template.Spec.Depends
	case *Process:
		refs = m.Spec.Template.Spec.Depends
	case *Deployment:
		refs = m.Spec.Template.Spec.Depends
	case *Daemonset:
		refs = m.Spec.Template.Spec.Depends
	default:
		return nil
	}
	meta, _ := MetaOf(obj)
	out := make([]DependsRef, len(refs))
	for i, r := range refs {
		if r.Namespace == "" {
			r.Namespace = meta.Namespace
		}
		out[i] = r
	}
	return out
}

// Validate implements Object: the template as a deployment's would be
// validated; a dependency pod cannot depend on others.
func (d *Depends) Validate(r Resolver) field.ErrorList {
	pod := d.Pod(d.Metadata, "")
	errs := pod.Validate(r)
	if len(d.Spec.Template.Spec.Depends) > 0 {
		errs = append(errs, field.Invalid("spec.template.spec.depends", "a dependency pod cannot depend on other pods"))
	}
	return errs
}

// Pod returns the deployment that runs one dependency pod of d, named by
// meta, on the agent whose hostname is node ("" places it anywhere):
// one instance, updated in place when d changes.
func (d *Depends) Pod(meta ObjectMeta, node string) *Deployment {
	c := d.DeepCopy()
	pod := &Deployment{WorkloadHeader: WorkloadHeader{APIVersion: c.APIVersion, KindName: string(KindDeployment), Metadata: meta,
		RestartPolicy: c.RestartPolicy, KillPolicy: c.KillPolicy}}
	if node != "" {
		pod.Constraint = &constraint.Constraint{IntersectionItems: []constraint.IntersectionItem{{UnionData: []constraint.UnionData{{
			Name: constraint.HostnameName, Operate: constraint.Cluster, Type: constraint.TypeText, Text: &constraint.TextValue{Value: node},
		}}}}}
	}
	pod.Spec.Instance = 1
	// One instance: without maxUnavailable 1 the default 25% rounds to 0
	// and nothing could ever be updated.
	pod.Spec.UpdateStrategy = &UpdateStrategy{Type: UpdateInPlace, MaxUnavailable: Count(1)}
	pod.Spec.Template = c.Spec.Template
	pod.Spec.Template.Spec.Depends = nil
	return pod
}

// dependsRefs checks the depends references of a pod template: each
// names a depends object that exists (when the resolver knows them),
// once, with a known policy.
func (v *validator) dependsRefs(p field.Path, refs []DependsRef) {
	objects, _ := v.resolver.(DependsObjects)
	seen := map[string]field.Path{}
	for i, ref := range refs {
		rp := p.Index(i)
		v.name(rp.Child("name"), ref.Name)
		ns := ref.Namespace
		if ns == "" {
			ns = v.namespace
		} else {
			v.namespaceName(rp.Child("namespace"), ns)
		}
		oneOf(v, rp.Child("policy"), ref.Policy, DependsPerNode, DependsPerNamespace)
		if ref.Name == "" {
			continue
		}
		key := ns + "/" + ref.Name
		if first, dup := seen[key]; dup {
			v.invalid(rp.Child("name"), "duplicate reference to depends %s (also %s)", key, first)
			continue
		}
		seen[key] = rp
		if objects != nil {
			if _, ok := objects.Depends(ns, ref.Name); !ok {
				v.invalid(rp.Child("name"), "depends %q not found in namespace %q", ref.Name, ns)
			}
		}
	}
}
