package manifest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	"github.com/bcs-mesos/bcs-mesos/pkg/field"
)

// Hot-patchable fields: what HotPatchUpdate may change in a container or
// a process without restarting it. Everything else needs a restart.
var (
	hotPatchableContainer = []string{"image", "imagePullPolicy", "imagePullUser", "imagePullPasswd", "resources", "healthChecks", "configmaps", "secrets"}
	hotPatchableProcess   = []string{"uris", "resources", "healthChecks", "configmaps", "secrets", "reloadCmd"}
)

// HotPatchChanges lists the changes from old to new that a hot patch
// cannot apply, at the new manifest's paths: anything in the pod template
// but container images and pull settings, resources, health checks and
// configmap/secret items (containers), or packages, resources, health
// checks, configmap/secret items and reloadCmd (processes); and resources
// that take more from Mesos than before (Resources.Taken), which the
// running launch did not take.
func HotPatchChanges(old, new Object) field.ErrorList {
	ow, err := Workload(old)
	if err != nil {
		return nil
	}
	nw, err := Workload(new)
	if err != nil {
		return nil
	}
	const why = "HotPatchUpdate cannot change it without a restart (use InplaceUpdate, or RollingUpdate)"
	var errs field.ErrorList
	switch o := ow.(type) {
	case *Application:
		n, ok := nw.(*Application)
		if !ok {
			return field.ErrorList{field.Invalid("spec.template.spec", "%s: containers became processes", why)}
		}
		sp := field.Path("spec.template.spec")
		os, ns := o.Spec.Template.Spec, n.Spec.Template.Spec
		if os.NetworkMode != ns.NetworkMode || os.NetworkType != ns.NetworkType || !reflect.DeepEqual(os.NetLimit, ns.NetLimit) {
			errs = append(errs, field.Invalid(sp.Child("networkMode"), "%s", why))
		}
		errs = append(errs, listChanges(sp.Child("containers"), os.Containers, ns.Containers, hotPatchableContainer, why)...)
		errs = append(errs, resourceGrowth(sp.Child("containers"), resourcesOf(os.Containers, containerResources), resourcesOf(ns.Containers, containerResources))...)
	case *Process:
		n, ok := nw.(*Process)
		if !ok {
			return field.ErrorList{field.Invalid("spec.template.spec", "%s: processes became containers", why)}
		}
		sp := field.Path("spec.template.spec.processes")
		op, np := o.Spec.Template.Spec.Processes, n.Spec.Template.Spec.Processes
		errs = listChanges(sp, op, np, hotPatchableProcess, why)
		errs = append(errs, resourceGrowth(sp, resourcesOf(op, processResources), resourcesOf(np, processResources))...)
	}
	return errs
}

// listChanges compares two lists element by element, field by field (by
// JSON name), and reports the changed fields not in allowed.
func listChanges[T any](p field.Path, old, new []T, allowed []string, why string) field.ErrorList {
	if len(old) != len(new) {
		return field.ErrorList{field.Invalid(p, "%s: %d entries become %d", why, len(old), len(new))}
	}
	var errs field.ErrorList
	for i := range new {
		o, n := jsonFields(old[i]), jsonFields(new[i])
		keys := map[string]bool{}
		for k := range o {
			keys[k] = true
		}
		for k := range n {
			keys[k] = true
		}
		for _, k := range sortedKeys(keys) {
			if !slices.Contains(allowed, k) && string(o[k]) != string(n[k]) {
				errs = append(errs, field.Invalid(p.Index(i).Child(k), "%s", why))
			}
		}
	}
	return errs
}

func jsonFields(v any) map[string]json.RawMessage {
	data, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("manifest: %v", err)) // plain structs always encode
	}
	var m map[string]json.RawMessage
	_ = json.Unmarshal(data, &m)
	return m
}

// resourcesOf lists the resources of each container or process.
func resourcesOf[T any](tasks []T, of func(T) Resources) []Resources {
	out := make([]Resources, len(tasks))
	for i, t := range tasks {
		out[i] = of(t)
	}
	return out
}

// resourceGrowth reports the tasks that would take more cpu or memory
// from Mesos than they do: a hot patch keeps each task's launch, which
// took what the old spec asked.
func resourceGrowth(p field.Path, old, new []Resources) field.ErrorList {
	if len(old) != len(new) {
		return nil // listChanges reports it
	}
	var errs field.ErrorList
	for i := range new {
		was, errO := old[i].Taken()
		is, errN := new[i].Taken()
		if errO != nil || errN != nil {
			continue // Validate reports it
		}
		for _, r := range []struct {
			field, unit string
			from, to    float64
		}{{is.CPUField, "cpus", was.CPUs, is.CPUs}, {is.MemField, "MB", was.MemMB, is.MemMB}} {
			if r.to > r.from+1e-9 {
				at := p.Index(i).Child("resources")
				if r.field != "" {
					at = at.Child(r.field) // else the defaults grew: the field went
				}
				errs = append(errs, field.Invalid(at,
					"HotPatchUpdate cannot grow what a running task took from Mesos (%g %s) to %g %s: it keeps its launch "+
						"(use InplaceUpdate, which relaunches an instance that needs more, or RollingUpdate)", r.from, r.unit, r.to, r.unit))
			}
		}
	}
	return errs
}

func containerResources(c Container) Resources { return c.Resources }

func processResources(p ProcessSpec) Resources { return p.Resources }
