package bcsctl

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/bcs-mesos/bcs-mesos/pkg/apiv1"
)

func (c *cli) getCommand() *cobra.Command {
	var out outputFlag
	var all bool
	cmd := &cobra.Command{
		Use:   "get KIND [NAME]",
		Short: "List objects of a kind as a table, or show one; `get all` lists every kind a namespace has",
		Long: "List objects of a kind as a table, or show one. Kinds: " + resourceNames() + ";\n" +
			"all: a table of each kind the namespace has (" + strings.Join(allKinds, ", ") + ").\n\n" +
			"NAME may be NAMESPACE/NAME. Instances (kubectl's pods: pods and po work too) are named\n" +
			"APP/INDEX; `get instances APP` lists an application's. Applications and processes are apps;\n" +
			"deployments and daemonsets are kinds of their own.",
		Example: "  bcsctl get all -n demo\n  bcsctl get apps -n demo\n  bcsctl get instances gamesvr -n demo -o wide\n  bcsctl get deployments -A\n  bcsctl get agents",
		Args:    args(cobra.RangeArgs(1, 2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.EqualFold(args[0], "all") {
				if len(args) > 1 {
					return usageErrorf("get all lists every kind: give no NAME")
				}
				return c.getAll(cmd.Context(), all, out.format)
			}
			r, name, err := kindAndName(args)
			if err != nil {
				return err
			}
			return c.get(cmd.Context(), r, name, all, out.format)
		},
		ValidArgsFunction: c.completeKindAndName,
	}
	out.add(cmd, "wide", "json", "yaml")
	cmd.Flags().BoolVarP(&all, "all-namespaces", "A", false, "list the objects of every namespace")
	return cmd
}

// kindAndName reads KIND [NAME] or KIND/NAME.
func kindAndName(args []string) (*resource, string, error) {
	kind, name := args[0], ""
	if len(args) == 2 {
		name = args[1]
	} else if k, n, ok := strings.Cut(kind, "/"); ok {
		kind, name = k, n
	}
	r, err := resourceNamed(kind)
	return r, name, err
}

// splitName reads NAME or NAMESPACE/NAME.
func (c *cli) splitName(name string) (namespace, base string) {
	if ns, n, ok := strings.Cut(name, "/"); ok {
		return ns, n
	}
	return c.namespace, name
}

func (c *cli) get(ctx context.Context, r *resource, name string, all bool, format string) error {
	if all && name != "" {
		return usageErrorf("a name and --all-namespaces do not go together")
	}
	raw, items, err := c.fetch(ctx, r, name, all)
	if err != nil {
		return err
	}
	if format == "json" || format == "yaml" {
		return printRaw(c.env.Out, format, raw)
	}
	if len(items) == 0 {
		c.noneFound(r.namespaced || r.namespaceFilter, all)
	} else {
		t, err := r.table(items, tableOptions{wide: format == "wide", allNamespaces: all && r.namespaced, now: c.env.Now()})
		if err != nil {
			return err
		}
		if err := t.write(c.env.Out, ""); err != nil {
			return err
		}
	}
	if r.name == "apps" && name == "" {
		return c.workloadsElsewhere(ctx, all)
	}
	return nil
}

// noneFound says, as kubectl does, that a list is empty.
func (c *cli) noneFound(namespaced, all bool) {
	if !namespaced || all {
		fmt.Fprintln(c.env.Err, "No resources found")
		return
	}
	fmt.Fprintf(c.env.Err, "No resources found in %s namespace.\n", c.namespace)
}

// workloadsElsewhere says, after a list of apps, where the deployments
// and daemonsets of its namespace (or of every one) are: a kubectl user
// looks for every workload under apps.
func (c *cli) workloadsElsewhere(ctx context.Context, all bool) error {
	scope := " -n " + c.namespace
	query := url.Values{"namespace": {c.namespace}, "limit": {"1"}}
	if all {
		scope = " -A"
		query.Del("namespace")
	}
	var where []string
	var kinds []string
	for _, r := range []string{"deployments", "daemonsets"} {
		var page map[string][]json.RawMessage
		if _, err := c.client.get(ctx, pathOf(r), query, &page); err != nil {
			return err
		}
		if len(page[r]) > 0 {
			kinds = append(kinds, r)
			where = append(where, "bcsctl get "+r+scope)
		}
	}
	if len(kinds) > 0 {
		fmt.Fprintf(c.env.Err, "There are %s too, listed apart: %s (bcsctl get all%s lists every kind).\n",
			strings.Join(kinds, " and "), strings.Join(where, ", "), scope)
	}
	return nil
}

// allKinds are the kinds `get all` lists: the workloads, their
// instances, and what they use.
var allKinds = []string{"apps", "deployments", "daemonsets", "instances", "services", "configmaps", "secrets", "hooktemplates", "hookruns", "depends"}

// getAll lists every kind of allKinds the namespace (or every one) has,
// a table each with its objects named KIND/NAME, as kubectl's get all;
// -o json|yaml prints the lists as the API answered them, by kind.
func (c *cli) getAll(ctx context.Context, all bool, format string) error {
	raw := map[string][]json.RawMessage{}
	var tables []*table
	for _, kind := range allKinds {
		r, err := resourceNamed(kind)
		if err != nil {
			return err
		}
		_, items, err := c.fetch(ctx, r, "", all)
		if err != nil {
			return fmt.Errorf("%s: %w", kind, err)
		}
		raw[kind] = nonNil(items)
		if len(items) == 0 || format == "json" || format == "yaml" {
			continue
		}
		t, err := r.table(items, tableOptions{wide: format == "wide", allNamespaces: all, now: c.env.Now()})
		if err != nil {
			return err
		}
		t.prefix("NAME", kindPrefix(r))
		tables = append(tables, t)
	}
	if format == "json" || format == "yaml" {
		data, err := json.Marshal(raw)
		if err != nil {
			return err
		}
		return printRaw(c.env.Out, format, data)
	}
	if len(tables) == 0 {
		c.noneFound(true, all)
		return nil
	}
	for i, t := range tables {
		if i > 0 {
			fmt.Fprintln(c.env.Out)
		}
		if err := t.write(c.env.Out, ""); err != nil {
			return err
		}
	}
	return nil
}

// fetch reads one object (name) or the list of a resource: the answer
// as sent (for -o json|yaml) and its items.
func (c *cli) fetch(ctx context.Context, r *resource, name string, all bool) (raw []byte, items []json.RawMessage, err error) {
	if r.name == "instances" {
		return c.fetchInstances(ctx, name, all)
	}
	ns := c.namespace
	if name != "" && !r.noGetOne {
		path := pathOf(r.path, name)
		if r.namespaced {
			ns, name = c.splitName(name)
			path = pathOf(r.path, ns, name)
		}
		raw, err = c.client.get(ctx, path, nil, nil)
		return raw, []json.RawMessage{raw}, err
	}
	query := url.Values{}
	if (r.namespaced || r.namespaceFilter) && !all {
		query.Set("namespace", ns)
	}
	if items, err = c.client.list(ctx, pathOf(r.path), r.listKey, query); err != nil {
		return nil, nil, err
	}
	if name == "" {
		raw, err = json.Marshal(map[string]any{r.listKey: nonNil(items)})
		return raw, items, err
	}
	for _, item := range items {
		if itemName(r, item) == name {
			return item, []json.RawMessage{item}, nil
		}
	}
	return nil, nil, notFoundf("%s %q not found", strings.TrimSuffix(r.name, "s"), name)
}

// fetchInstances lists the instances of applications, deployments and
// daemonsets:
// of one namespace or all, of one application (APP) or one instance
// (APP/INDEX, NAMESPACE/APP/INDEX, or its task group ID).
func (c *cli) fetchInstances(ctx context.Context, name string, all bool) ([]byte, []json.RawMessage, error) {
	ns, app, index := c.namespace, "", -1
	switch {
	case name == "":
	case strings.ContainsAny(name, "/_"):
		ref, err := c.parseInstance(name)
		if err != nil {
			return nil, nil, err
		}
		ns, app, index = ref.namespace, ref.app, ref.index
	default:
		app = name
	}
	var apps []apiv1.AppView
	var raws []json.RawMessage
	if app != "" {
		a, raw, err := c.workload(ctx, ns, app)
		if err != nil {
			return nil, nil, err
		}
		apps, raws = []apiv1.AppView{a}, []json.RawMessage{raw}
	} else {
		query := url.Values{}
		if !all {
			query.Set("namespace", ns)
		}
		for _, r := range []string{"apps", "deployments", "daemonsets"} {
			list, err := c.client.list(ctx, pathOf(r), r, query)
			if err != nil {
				return nil, nil, err
			}
			for _, item := range list {
				var a apiv1.AppView
				if err := json.Unmarshal(item, &a); err != nil {
					return nil, nil, err
				}
				apps, raws = append(apps, a), append(raws, item)
			}
		}
	}
	var items []json.RawMessage
	for i, a := range apps {
		var view struct {
			Status struct {
				Instances []map[string]any `json:"instances"`
			} `json:"status"`
		}
		if err := json.Unmarshal(raws[i], &view); err != nil {
			return nil, nil, err
		}
		for j, inst := range view.Status.Instances {
			if index >= 0 && a.Status.Instances[j].ID != index {
				continue
			}
			inst["namespace"], inst["app"] = a.Namespace, a.Name
			item, err := json.Marshal(inst)
			if err != nil {
				return nil, nil, err
			}
			items = append(items, item)
		}
	}
	if index >= 0 && len(items) == 0 {
		return nil, nil, noInstance(ns, app, index)
	}
	if index >= 0 {
		return items[0], items, nil
	}
	raw, err := json.Marshal(map[string]any{"instances": nonNil(items)})
	return raw, items, err
}

func nonNil[T any](list []T) []T {
	if list == nil {
		return []T{}
	}
	return list
}

// workload reads an application, a deployment or a daemonset of that
// name: they share names, served at /v1/apps, /v1/deployments or
// /v1/daemonsets by kind.
func (c *cli) workload(ctx context.Context, ns, name string) (apiv1.AppView, []byte, error) {
	for _, path := range []string{"apps", "deployments", "daemonsets"} {
		var a apiv1.AppView
		raw, err := c.client.get(ctx, pathOf(path, ns, name), nil, &a)
		if !notFound(err) {
			return a, raw, err
		}
	}
	return apiv1.AppView{}, nil, notFoundf("no application, deployment or daemonset %s/%s", ns, name)
}

// instanceRef names one instance.
type instanceRef struct {
	namespace, app string
	index          int
	// taskGroupID, when given, is the launch named.
	taskGroupID string
}

func (r instanceRef) String() string { return fmt.Sprintf("%s/%s/%d", r.namespace, r.app, r.index) }

// parseInstance reads NAMESPACE/APP/INDEX, APP/INDEX (in -n) or a task
// group ID (<namespace>_<app>_<index>_<launch>.<incarnation>).
func (c *cli) parseInstance(s string) (instanceRef, error) {
	ref := instanceRef{namespace: c.namespace}
	parts := strings.Split(s, "/")
	if len(parts) == 1 {
		parts = strings.Split(s, "_")
		if len(parts) != 4 {
			return ref, usageErrorf("instance %q: want NAMESPACE/APP/INDEX, APP/INDEX or a task group ID", s)
		}
		ref.taskGroupID = s
		parts = parts[:3]
	}
	switch len(parts) {
	case 2:
		ref.app = parts[0]
	case 3:
		ref.namespace, ref.app = parts[0], parts[1]
	default:
		return ref, usageErrorf("instance %q: want NAMESPACE/APP/INDEX, APP/INDEX or a task group ID", s)
	}
	index, err := strconv.Atoi(parts[len(parts)-1])
	if err != nil || index < 0 || ref.app == "" || ref.namespace == "" {
		return ref, usageErrorf("instance %q: want NAMESPACE/APP/INDEX, APP/INDEX or a task group ID", s)
	}
	ref.index = index
	return ref, nil
}

// taskGroupOf returns the task group ID of the instance s names: the ID
// itself, or the current launch of NAMESPACE/APP/INDEX.
func (c *cli) taskGroupOf(ctx context.Context, s string) (string, error) {
	ref, err := c.parseInstance(s)
	if err != nil || ref.taskGroupID != "" {
		return ref.taskGroupID, err
	}
	a, _, err := c.workload(ctx, ref.namespace, ref.app)
	if err != nil {
		return "", err
	}
	for _, inst := range a.Status.Instances {
		if inst.ID != ref.index {
			continue
		}
		if inst.TaskGroupID == "" {
			return "", fmt.Errorf("instance %s is not launched (%s)", ref, cmp.Or(pendingSummary(inst.Pending), cmp.Or(inst.Message, "pending")))
		}
		return inst.TaskGroupID, nil
	}
	return "", noInstance(ref.namespace, ref.app, ref.index)
}

// completeKindAndName completes a kind, then the names the server has.
func (c *cli) completeKindAndName(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	switch len(args) {
	case 0:
		kinds := []string{"all"}
		for _, r := range resources {
			kinds = append(kinds, r.name)
		}
		return kinds, cobra.ShellCompDirectiveNoFileComp
	case 1:
		r, err := resourceNamed(args[0])
		if err != nil || c.connect(cmd) != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return c.names(cmd.Context(), r), cobra.ShellCompDirectiveNoFileComp
	}
	return nil, cobra.ShellCompDirectiveNoFileComp
}

// completionTimeout bounds the API call a completion makes: a shell
// waits for it.
const completionTimeout = 2 * time.Second

// names lists the names of a resource's objects in the namespace, for
// completion; nothing when the API does not answer.
func (c *cli) names(ctx context.Context, r *resource) []string {
	ctx, cancel := context.WithTimeout(ctx, completionTimeout)
	defer cancel()
	_, items, err := c.fetch(ctx, r, "", false)
	if err != nil {
		return nil
	}
	var names []string
	for _, item := range items {
		names = append(names, itemName(r, item))
	}
	return names
}

// itemName is the name an item of a resource's list goes by: an
// instance's APP/INDEX, an agent's hostname, an object's name, else its
// ID (a notification, a notify callback).
func itemName(r *resource, item json.RawMessage) string {
	var v struct {
		Name     string `json:"name"`
		Hostname string `json:"hostname"`
		ID       any    `json:"id"`
		App      string `json:"app"`
	}
	_ = json.Unmarshal(item, &v)
	switch {
	case r.name == "instances":
		return fmt.Sprintf("%s/%v", v.App, v.ID)
	case r.name == "agents":
		return v.Hostname
	case v.Name != "":
		return v.Name
	}
	return fmt.Sprint(v.ID)
}
