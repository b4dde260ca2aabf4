package schedulertest

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/bcs-mesos/bcs-mesos/pkg/constraint"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/rollout"
	"github.com/bcs-mesos/bcs-mesos/pkg/scheduler"
)

// runDaemonsets runs the commands of daemonsets and the master's agent
// list:
//
//	daemonset NS/NAME [deploy's options but instances]   create a process
//	                    daemonset, or store its next version
//	listed AGENT ... [inactive=AGENT,...]   the master lists these agents
//	                    (hostname host-N, idc attribute, as offers have
//	                    them): active, but those named inactive
func (h *Harness) runDaemonsets(f []string, args map[string]string) (lines []string, ok bool) {
	switch f[0] {
	case "daemonset":
		return h.daemonset(f[1], args), true
	case "plan":
		if f[1] == "daemonset" {
			return h.describePlan(h.daemonsetManifest(f[2], args)), true
		}
	case "listed":
		in := scheduler.AgentsListed{At: h.now}
		inactive := map[string]bool{}
		for _, a := range strings.Split(args["inactive"], ",") {
			inactive[a] = a != ""
		}
		var agents []string
		for _, a := range f[1:] {
			if !strings.Contains(a, "=") {
				agents = append(agents, a)
			}
		}
		agents = append(agents, sortedKeys(inactive)...)
		for _, a := range agents {
			if a == "" {
				continue
			}
			o := h.offers([]string{a}, "", "")[0]
			h.offerNo--
			in.Agents = append(in.Agents, scheduler.ListedAgent{ID: a, Hostname: o.Hostname, Active: !inactive[a],
				Attributes: map[string]constraint.Value{"idc": constraint.Text(o.Attributes[0].GetText().GetValue())}})
		}
		return h.step(in), true
	}
	return nil, false
}

// daemonsetManifest is the fixture process as a daemonset, built from
// deploy's options (instances aside).
func (h *Harness) daemonsetManifest(key string, args map[string]string) *manifest.Daemonset {
	d := h.deployment(key, args)
	ds := &manifest.Daemonset{WorkloadHeader: manifest.WorkloadHeader{APIVersion: d.APIVersion, KindName: "daemonset", Metadata: d.Metadata, RestartPolicy: d.RestartPolicy,
		KillPolicy: d.KillPolicy, Constraint: d.Constraint}}
	ds.Spec.UpdateStrategy, ds.Spec.PreDeleteUpdateStrategy, ds.Spec.Template = d.Spec.UpdateStrategy, d.Spec.PreDeleteUpdateStrategy, d.Spec.Template
	if errs := ds.Validate(h.resolver()); len(errs) > 0 {
		h.t.Fatalf("scenario daemonset invalid: %v", errs)
	}
	return ds
}

// daemonset creates a daemonset (version 1) or stores its next version.
func (h *Harness) daemonset(key string, args map[string]string) []string {
	ds := h.daemonsetManifest(key, args)
	spec, _ := json.Marshal(ds)
	if h.apps[key] != nil {
		h.apps[key].Paused = ds.Spec.UpdateStrategy.Paused
		return h.newVersion(key, spec, rollout.CauseUpdate, 0)
	}
	a := &registry.App{Namespace: ds.Metadata.Namespace, Name: ds.Metadata.Name, Kind: manifest.KindDaemonset, Version: 1,
		Spec: spec, State: registry.AppDeploying, Cause: rollout.CauseUpdate, Paused: ds.Spec.UpdateStrategy.Paused}
	h.apps[key] = a
	h.history[key], h.generations[key] = [][]byte{spec}, []int{0}
	cp := *a
	return h.step(scheduler.AppChanged{App: &cp})
}

// showsRevisions reports whether an application's instance lines show
// their revision and its rollout is shown: deployments and daemonsets.
func showsRevisions(a *registry.App) bool {
	return a != nil && (a.Kind == manifest.KindDeployment || a.Kind == manifest.KindDaemonset)
}

// describeDesired is a daemonset's desired count in a status line.
func describeDesired(st *scheduler.AppStatus) string {
	if !st.Daemonset {
		return ""
	}
	return fmt.Sprintf(" desired=%d", st.Desired)
}
