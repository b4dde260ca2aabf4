package bcsctl

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/apiv1"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
)

// resource is a kind of object bcsctl gets, describes and deletes.
type resource struct {
	// name is the plural users type ("apps"); aliases are accepted too.
	name    string
	aliases []string
	// path is its collection under /v1; listKey names the list in the
	// collection's answer.
	path    string
	listKey string
	// namespaced: objects live in namespaces, the list takes
	// ?namespace= and one object is /v1/<path>/<ns>/<name>. Otherwise
	// one is /v1/<path>/<name>, or, with noGetOne, found in the list.
	namespaced bool
	// namespaceFilter: the list takes ?namespace= though the objects
	// are named without one (notifications).
	namespaceFilter bool
	noGetOne        bool
	table           func(items []json.RawMessage, o tableOptions) (*table, error)
	// deletable: DELETE /v1/<path>/<ns>/<name> removes one; force adds
	// ?force=true.
	deletable, force bool
	// workload: applications, deployments, daemonsets — instances,
	// rollouts, scale.
	workload bool
}

type tableOptions struct {
	wide, allNamespaces bool
	now                 time.Time
}

// tableRows makes a resource's table function from its columns.
func tableRows[T any](cols func(now time.Time) []column[T], namespace func(T) string) func([]json.RawMessage, tableOptions) (*table, error) {
	return func(raw []json.RawMessage, o tableOptions) (*table, error) {
		items := make([]T, len(raw))
		for i, r := range raw {
			if err := json.Unmarshal(r, &items[i]); err != nil {
				return nil, fmt.Errorf("unexpected object from the API: %w", err)
			}
		}
		var ns func(T) string
		if o.allNamespaces {
			ns = namespace
		}
		return tableOf(items, cols(o.now), o.wide, ns), nil
	}
}

var resources = []*resource{
	{name: "apps", aliases: []string{"app", "application", "applications", "process", "processes"}, path: "apps", listKey: "apps",
		namespaced: true, deletable: true, force: true, workload: true, table: tableRows(workloadColumns, func(a apiv1.AppView) string { return a.Namespace })},
	{name: "deployments", aliases: []string{"deployment", "deploy"}, path: "deployments", listKey: "deployments",
		namespaced: true, deletable: true, force: true, workload: true, table: tableRows(workloadColumns, func(a apiv1.AppView) string { return a.Namespace })},
	{name: "daemonsets", aliases: []string{"daemonset", "ds"}, path: "daemonsets", listKey: "daemonsets",
		namespaced: true, deletable: true, force: true, workload: true, table: tableRows(workloadColumns, func(a apiv1.AppView) string { return a.Namespace })},
	// A kubectl user's pods are instances: each is one Mesos task group,
	// a pod of containers or processes.
	{name: "instances", aliases: []string{"instance", "inst", "pods", "pod", "po", "taskgroups", "taskgroup", "tg"}, namespaced: true,
		table: tableRows(instanceColumns, func(i instanceRow) string { return i.Namespace })},
	{name: "agents", aliases: []string{"agent", "nodes", "node"}, path: "agents", listKey: "agents",
		table: tableRows(agentColumns, nil)},
	{name: "hookruns", aliases: []string{"hookrun"}, path: "hookruns", listKey: "hookruns", namespaced: true,
		table: tableRows(hookRunColumns, func(h apiv1.HookRun) string { return h.Namespace })},
	{name: "hooktemplates", aliases: []string{"hooktemplate"}, path: "hooktemplates", listKey: "hooktemplates", namespaced: true,
		deletable: true, table: tableRows(objectColumns(specSummary), objectNamespace)},
	{name: "configmaps", aliases: []string{"configmap", "cm"}, path: "configmaps", listKey: "configmaps", namespaced: true,
		deletable: true, table: tableRows(objectColumns(specSummary), objectNamespace)},
	{name: "secrets", aliases: []string{"secret"}, path: "secrets", listKey: "secrets", namespaced: true,
		deletable: true, table: tableRows(objectColumns(specSummary), objectNamespace)},
	{name: "services", aliases: []string{"service", "svc"}, path: "services", listKey: "services", namespaced: true,
		deletable: true, table: tableRows(objectColumns(specSummary), objectNamespace)},
	{name: "depends", aliases: []string{"dependency", "dependencies"}, path: "depends", listKey: "depends", namespaced: true,
		deletable: true, force: true, table: tableRows(dependsColumns, func(o apiv1.DependsView) string { return o.Namespace })},
	{name: "autoscalers", aliases: []string{"autoscaler", "as", "hpa"}, path: "autoscalers", listKey: "autoscalers", namespaced: true,
		deletable: true, table: tableRows(autoscalerColumns, autoscalerNamespace)},
	{name: "notifications", aliases: []string{"notification"}, path: "notifications", listKey: "notifications", namespaceFilter: true,
		table: tableRows(notificationColumns, nil)},
	{name: "notifies", aliases: []string{"notify", "callbacks"}, path: "notifies", listKey: "notifies", noGetOne: true,
		table: tableRows(notifyColumns, nil)},
}

// resourceNamed finds a resource by its name or an alias.
func resourceNamed(name string) (*resource, error) {
	name = strings.ToLower(name)
	for _, r := range resources {
		if r.name == name || slices.Contains(r.aliases, name) {
			return r, nil
		}
	}
	if hint, ok := kubectlKinds[name]; ok {
		return nil, usageErrorf("no kind %q here: %s", name, hint)
	}
	return nil, usageErrorf("unknown kind %q (want one of %s)", name, resourceNames())
}

// kubectlKinds are kinds a kubectl user asks for that bcs-scheduler
// serves another way: what to type instead.
var kubectlKinds = func() map[string]string {
	kinds := map[string]string{}
	for names, hint := range map[string]string{
		"events,event,ev":           "the changes are a stream, bcsctl events (-w follows them)",
		"namespaces,namespace,ns":   "a namespace is made by the manifests that name it; bcsctl get all -A lists what each holds",
		"replicasets,replicaset,rs": "a deployment's revisions are listed by bcsctl rollout history deployment NAME",
	} {
		for name := range strings.SplitSeq(names, ",") {
			kinds[name] = hint
		}
	}
	return kinds
}()

// kindPrefix is how `get all` names a resource's objects, kubectl's way
// ("deployment/fleet"), a name describe takes.
func kindPrefix(r *resource) string {
	if r.name == "depends" {
		return "depends/"
	}
	return strings.TrimSuffix(r.name, "s") + "/"
}

func resourceNames() string {
	var names []string
	for _, r := range resources {
		names = append(names, r.name)
	}
	return strings.Join(names, ", ")
}

// workloadColumns are the columns of applications, deployments and
// daemonsets (READY out of the desired count: a daemonset's eligible
// agents).
func workloadColumns(now time.Time) []column[apiv1.AppView] {
	return []column[apiv1.AppView]{
		{header: "NAME", value: func(a apiv1.AppView) string { return a.Name }},
		{header: "KIND", value: func(a apiv1.AppView) string { return string(a.Kind) }},
		{header: "STATE", value: func(a apiv1.AppView) string { return string(a.Status.State) }},
		{header: "READY", value: func(a apiv1.AppView) string {
			ready, _ := readyCount(a)
			return fmt.Sprintf("%d/%d", ready, a.Instances)
		}},
		{header: "UP-TO-DATE", value: func(a apiv1.AppView) string {
			if ro := a.Status.Rollout; ro != nil {
				return strconv.Itoa(ro.Updated)
			}
			return ""
		}},
		{header: "REVISION", value: func(a apiv1.AppView) string { return strconv.FormatUint(a.Version, 10) }},
		{header: "ROLLOUT", value: func(a apiv1.AppView) string {
			if ro := a.Status.Rollout; ro != nil {
				return string(ro.Phase)
			}
			return ""
		}},
		{header: "AGE", value: func(a apiv1.AppView) string { return age(now, a.CreatedAt) }},
		{header: "MESSAGE", wide: true, value: workloadMessage},
	}
}

// readyCount counts an application's ready and stopped instances.
func readyCount(a apiv1.AppView) (ready, stopped int) {
	if ro := a.Status.Rollout; ro != nil && len(a.Status.Instances) == 0 {
		return ro.Ready, 0 // a rollout counts stopped instances as ready
	}
	for _, i := range a.Status.Instances {
		switch {
		case i.Ready:
			ready++
		case i.Stopped:
			stopped++
		}
	}
	return ready, stopped
}

// workloadMessage is what needs saying of an application: its own
// message, or else its rollout's while one is under way.
func workloadMessage(a apiv1.AppView) string {
	if a.Status.Message != "" {
		return a.Status.Message
	}
	if ro := a.Status.Rollout; ro != nil && ro.Phase != "Completed" {
		return ro.Message
	}
	return ""
}

// instanceRow is an instance with the application it belongs to.
type instanceRow struct {
	Namespace string `json:"namespace"`
	App       string `json:"app"`
	instanceView
}

// instanceView names the instance a row embeds.
type instanceView = apiv1.InstanceView

func instanceColumns(now time.Time) []column[instanceRow] {
	return []column[instanceRow]{
		{header: "NAME", value: func(i instanceRow) string { return fmt.Sprintf("%s/%d", i.App, i.ID) }},
		{header: "STATE", value: func(i instanceRow) string { return instanceState(i.instanceView) }},
		{header: "READY", value: func(i instanceRow) string { return strconv.FormatBool(i.Ready) }},
		{header: "HEALTHY", value: func(i instanceRow) string { return optBool(i.Healthy) }},
		{header: "RESTARTS", value: func(i instanceRow) string { return strconv.Itoa(i.Restarts) }},
		{header: "REVISION", value: func(i instanceRow) string { return strconv.FormatUint(i.Revision, 10) }},
		{header: "HOST", value: func(i instanceRow) string { return i.Host }},
		{header: "PORTS", value: func(i instanceRow) string { return portList(i.Ports) }},
		{header: "ALLOCATED", value: func(i instanceRow) string { return allocatedMark(now, i.Allocated) }},
		{header: "TASKGROUP", wide: true, value: func(i instanceRow) string { return i.TaskGroupID }},
		{header: "MESSAGE", wide: true, value: func(i instanceRow) string { return instanceNote(i.instanceView) }},
	}
}

// allocatedMark says who allocated an instance and for how long; empty
// when nobody did.
func allocatedMark(now time.Time, a *apiv1.AllocationView) string {
	if a == nil {
		return ""
	}
	return fmt.Sprintf("%s %s", cmp.Or(a.By, a.Source), age(now, a.Since))
}

// instanceNote is the one thing to know about an instance beyond its
// state: why it is pending, what an update, a move or a PreDeleteHook
// does to it, or its message.
func instanceNote(i apiv1.InstanceView) string {
	switch {
	case i.Pending != nil:
		return pendingSummary(i.Pending)
	case i.Update != nil && i.Update.Error != "":
		return fmt.Sprintf("%s update to revision %d failed: %s", i.Update.Mode, i.Update.Version, i.Update.Error)
	case i.Update != nil:
		return fmt.Sprintf("%s update to revision %d", i.Update.Mode, i.Update.Version)
	case i.Move != nil:
		to := "another agent"
		if i.Move.ToHost != "" {
			to = i.Move.ToHost
		}
		return fmt.Sprintf("%s: moving from %s to %s", i.Move.Reason, i.Move.FromHost, to)
	case i.PreDelete != nil:
		return fmt.Sprintf("%s waits for PreDeleteHook run %s (attempt %d)", i.PreDelete.Reason, i.PreDelete.Run, i.PreDelete.Attempt)
	}
	return i.Message
}

func agentColumns(now time.Time) []column[apiv1.AgentView] {
	return []column[apiv1.AgentView]{
		{header: "NAME", value: func(a apiv1.AgentView) string { return a.Hostname }},
		{header: "STATUS", value: agentStatus},
		{header: "INSTANCES", value: func(a apiv1.AgentView) string { return strconv.Itoa(len(a.Instances) + a.Others) }},
		{header: "CPUS", value: func(a apiv1.AgentView) string {
			if a.Master == nil {
				return number(a.Used.CPUs)
			}
			return number(a.Used.CPUs) + "/" + number(a.Master.Total.CPUs)
		}},
		{header: "MEM(MB)", value: func(a apiv1.AgentView) string {
			if a.Master == nil {
				return number(a.Used.MemMB)
			}
			return number(a.Used.MemMB) + "/" + number(a.Master.Total.MemMB)
		}},
		{header: "LAST SEEN", value: func(a apiv1.AgentView) string {
			if a.LastSeen == nil {
				return "never"
			}
			return age(now, *a.LastSeen)
		}},
		{header: "ID", wide: true, value: func(a apiv1.AgentView) string { return a.ID }},
		{header: "ATTRIBUTES", wide: true, value: func(a apiv1.AgentView) string {
			var kv []string
			for _, k := range slices.Sorted(maps.Keys(a.Attributes)) {
				kv = append(kv, k+"="+a.Attributes[k])
			}
			return strings.Join(kv, ",")
		}},
		{header: "TAINTS", wide: true, value: func(a apiv1.AgentView) string { return strings.Join(a.Taints, ",") }},
		{header: "REASON", wide: true, value: func(a apiv1.AgentView) string { return a.Reason }},
	}
}

// agentStatus sums an agent up kubectl's way: Ready, or what keeps
// instances off it ("Cordoned,Draining").
func agentStatus(a apiv1.AgentView) string {
	var parts []string
	if m := a.Master; m != nil && !m.Active {
		parts = append(parts, map[bool]string{true: "Deactivated", false: "Inactive"}[m.Deactivated])
	}
	if a.Cordoned {
		parts = append(parts, "Cordoned")
	}
	if d := a.Drain; d != nil {
		parts = append(parts, title(d.State))
	}
	if m := a.Master; m != nil && m.Drain != "" {
		parts = append(parts, "Mesos"+title(m.Drain))
	}
	if a.Maintenance != nil {
		parts = append(parts, "Maintenance")
	}
	if len(parts) == 0 {
		return map[bool]string{true: "Ready", false: "Unschedulable"}[a.Schedulable]
	}
	return strings.Join(parts, ",")
}

func hookRunColumns(now time.Time) []column[apiv1.HookRun] {
	return []column[apiv1.HookRun]{
		{header: "NAME", value: func(h apiv1.HookRun) string { return h.Name }},
		{header: "PHASE", value: func(h apiv1.HookRun) string { return h.Status.Phase }},
		{header: "TEMPLATE", value: func(h apiv1.HookRun) string { return h.Spec.TemplateName }},
		{header: "OWNER", value: hookRunOwner},
		{header: "AGE", value: func(h apiv1.HookRun) string { return age(now, h.CreatedAt) }},
		{header: "MESSAGE", wide: true, value: func(h apiv1.HookRun) string { return h.Status.Message }},
	}
}

// hookRunOwner says who waits for a run: "fleet canary step 2 (revision
// 3)", "fleet/1 PreDelete".
func hookRunOwner(h apiv1.HookRun) string {
	o := h.Spec.Owner
	switch {
	case o == nil:
		return ""
	case o.Kind == "CanaryStep":
		return fmt.Sprintf("%s canary step %d (revision %d)", o.App, o.Step+1, o.Revision)
	case o.Kind == "PreDelete":
		return fmt.Sprintf("%s/%d PreDelete", o.App, o.Instance)
	}
	return o.App + " " + o.Kind
}

func objectNamespace(o apiv1.ObjectView) string { return o.Namespace }

// objectColumns are the columns of configmaps, secrets, hook templates
// and services: their name, what their spec holds and their age.
func objectColumns(summary func(apiv1.ObjectView) string) func(now time.Time) []column[apiv1.ObjectView] {
	return func(now time.Time) []column[apiv1.ObjectView] {
		return []column[apiv1.ObjectView]{
			{header: "NAME", value: func(o apiv1.ObjectView) string { return o.Name }},
			{header: "DATA", value: summary},
			{header: "AGE", value: func(o apiv1.ObjectView) string { return age(now, o.CreatedAt) }},
		}
	}
}

// specSummary counts what an object's manifest holds: a configmap's or
// secret's items, a hook template's metrics.
func specSummary(o apiv1.ObjectView) string {
	obj, err := manifest.Parse(o.Spec)
	switch m := obj.(type) {
	case nil:
		return fmt.Sprintf("unreadable spec: %v", err)
	case *manifest.ConfigMap:
		return count(len(m.Datas), "item")
	case *manifest.Secret:
		return count(len(m.Datas), "item")
	case *manifest.HookTemplate:
		return count(len(m.Spec.Metrics), "metric") + ", " + count(len(m.Spec.Args), "arg")
	case *manifest.Service:
		return string(m.Spec.Type) + ", " + count(len(m.Spec.Ports), "port")
	}
	return string(obj.Kind())
}

func dependsColumns(now time.Time) []column[apiv1.DependsView] {
	return []column[apiv1.DependsView]{
		{header: "NAME", value: func(o apiv1.DependsView) string { return o.Name }},
		{header: "REFERENCED-BY", value: func(o apiv1.DependsView) string { return strings.Join(o.Status.ReferencedBy, ",") }},
		{header: "PODS", value: func(o apiv1.DependsView) string { return strconv.Itoa(len(o.Status.Pods)) }},
		{header: "AGE", value: func(o apiv1.DependsView) string { return age(now, o.CreatedAt) }},
	}
}

func notificationColumns(now time.Time) []column[apiv1.NotificationView] {
	return []column[apiv1.NotificationView]{
		{header: "ID", value: func(n apiv1.NotificationView) string { return n.ID }},
		{header: "TYPE", value: func(n apiv1.NotificationView) string { return n.Type }},
		{header: "INSTANCE", value: func(n apiv1.NotificationView) string { return fmt.Sprintf("%s/%s/%d", n.Namespace, n.App, n.Instance) }},
		{header: "TASK-STATE", value: func(n apiv1.NotificationView) string { return n.TaskState }},
		{header: "STATE", value: func(n apiv1.NotificationView) string { return n.State }},
		{header: "AGE", value: func(n apiv1.NotificationView) string { return age(now, n.Time) }},
		{header: "MESSAGE", wide: true, value: func(n apiv1.NotificationView) string { return n.Message }},
	}
}

func notifyColumns(now time.Time) []column[apiv1.NotifyCallback] {
	return []column[apiv1.NotifyCallback]{
		{header: "ID", value: func(n apiv1.NotifyCallback) string { return n.ID }},
		{header: "URL", value: func(n apiv1.NotifyCallback) string { return n.URL }},
		{header: "EVENTS", value: func(n apiv1.NotifyCallback) string {
			if len(n.Events) == 0 {
				return "all"
			}
			return strings.Join(n.Events, ",")
		}},
		{header: "AGE", value: func(n apiv1.NotifyCallback) string { return age(now, n.CreatedAt) }},
	}
}

// count writes n things: "1 item", "3 items".
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
