package schedulertest

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest/manifesttest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/rollout"
	"github.com/bcs-mesos/bcs-mesos/pkg/scheduler"
)

// putDependencyPod stores a dependency pod as registry.PutDependencyPod
// does — created, or a new version when its spec changed — and queues
// the application change the store's watch would bring.
func (h *Harness) putDependencyPod(want *registry.App) string {
	key := want.Namespace + "/" + want.Name
	state := *want.DependencyPod
	a := h.apps[key]
	version := "v1"
	switch {
	case a == nil:
		a = &registry.App{Namespace: want.Namespace, Name: want.Name, Kind: manifest.KindDeployment, Version: 1, Instances: 1,
			Spec: want.Spec, State: registry.AppDeploying, Cause: rollout.CauseUpdate}
		h.apps[key] = a
		h.history[key], h.generations[key] = [][]byte{want.Spec}, []int{0}
	case a.DependencyPod == nil || a.State == registry.AppDeleting:
		return "store refused dependency pod " + key
	case !bytes.Equal(a.Spec, want.Spec):
		a.Version++
		a.Spec, a.Cause = want.Spec, rollout.CauseUpdate
		h.history[key] = append(h.history[key], want.Spec)
		h.generations[key] = append(h.generations[key], a.RestartGeneration)
		version = fmt.Sprintf("v%d", a.Version)
	default:
		version = fmt.Sprintf("v%d (same spec)", a.Version)
	}
	a.DependencyPod = &state // a new pointer: the core holds the old record
	cp := *a
	h.echoes = append(h.echoes, scheduler.AppChanged{App: &cp})
	line := fmt.Sprintf("store dependency pod %s %s of %s on %s users=%d", key, version, state.Depends(), state.Node, state.Users)
	if state.ServedNamespace != "" {
		line += " for " + state.ServedNamespace
	}
	if !state.IdleSince.IsZero() {
		line += " idle=" + h.now.Sub(state.IdleSince).String()
	}
	return line
}

// deleteDependencyPod marks a dependency pod for deletion as
// registry.DeleteDependencyPod does, removing it at once when no instance
// is stored, and queues what the watch would bring.
func (h *Harness) deleteDependencyPod(ref *scheduler.AppRef) string {
	key := ref.Namespace + "/" + ref.Name
	a := h.apps[key]
	if a == nil || a.DependencyPod == nil {
		return "store delete dependency pod " + key + " (not found)"
	}
	a.State = registry.AppDeleting
	cp := *a
	h.echoes = append(h.echoes, scheduler.AppChanged{App: &cp})
	for k := range h.groups {
		if strings.HasPrefix(k, key+"/") {
			return "store delete dependency pod " + key
		}
	}
	delete(h.apps, key)
	delete(h.rollouts, key)
	h.echoes = append(h.echoes, scheduler.AppRemoved{Namespace: ref.Namespace, Name: ref.Name})
	return "store delete dependency pod " + key + " (removed)"
}

// dependsObject is the fixture depends object under another name; build
// changes its start command (a new spec).
func dependsObject(ns, name, build string) *manifest.Depends {
	d := manifesttest.Depends()
	d.Metadata.Namespace, d.Metadata.Name = ns, name
	if build != "" {
		d.Spec.Template.Spec.Processes[0].StartCmd += " --build " + build
	}
	return d
}

// dependsRefs reads depends=NAME[:POLICY][,NS/NAME[:POLICY]...].
func dependsRefs(s string) []manifest.DependsRef {
	var refs []manifest.DependsRef
	for _, item := range strings.Split(s, ",") {
		if item == "" {
			continue
		}
		name, policy, _ := strings.Cut(item, ":")
		ref := manifest.DependsRef{Name: name, Policy: manifest.DependsPolicy(orDefault(policy, string(manifest.DependsPerNode)))}
		if ns, n, ok := strings.Cut(name, "/"); ok {
			ref.Namespace, ref.Name = ns, n
		}
		refs = append(refs, ref)
	}
	return refs
}

// resolver validates scenario manifests: the fixtures' configmap,
// secret and hook template (a script may delete the stored ones to see
// what a launch does without), and the stored objects.
func (h *Harness) resolver() *manifesttest.Resolver {
	r := manifesttest.NewResolver()
	r.DependsList = nil
	for _, k := range sortedKeys(h.objects) {
		switch o := h.objects[k].(type) {
		case *manifest.ConfigMap:
			r.ConfigMaps = append(r.ConfigMaps, o)
		case *manifest.Secret:
			r.Secrets = append(r.Secrets, o)
		case *manifest.Depends:
			r.DependsList = append(r.DependsList, o)
		}
	}
	return r
}
