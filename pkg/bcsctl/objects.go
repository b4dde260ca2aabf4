package bcsctl

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/spf13/cobra"

	"github.com/bcs-mesos/bcs-mesos/pkg/apiv1"
)

func (c *cli) describeCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "describe KIND NAME",
		Short: "Show an object in detail: spec, instances, rollout, why pending, recent events",
		Long: "Show an object in detail. For applications and deployments: a summary of the spec, the\n" +
			"rollout, each instance (why it is pending, what an update or move does to it, its tasks)\n" +
			"and the recent events. Instances are named APP/INDEX, NAMESPACE/APP/INDEX or by task group ID.",
		Example: "  bcsctl describe deployment fleet -n demo\n  bcsctl describe instance demo/gamesvr/0\n  bcsctl describe agent agent-1",
		Args:    args(cobra.RangeArgs(1, 2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, name, err := kindAndName(args)
			if err != nil {
				return err
			}
			if name == "" {
				return usageErrorf("describe %s: which one? give a NAME", r.name)
			}
			return c.describe(cmd.Context(), r, name)
		},
		ValidArgsFunction: c.completeKindAndName,
	}
}

func (c *cli) describe(ctx context.Context, r *resource, name string) error {
	now := c.env.Now()
	switch r.name {
	case "apps", "deployments", "daemonsets":
		ns, name := c.splitName(name)
		a, _, err := c.workload(ctx, ns, name)
		if err != nil {
			return err
		}
		events, err := c.workloadEvents(ctx, ns, name, -1)
		describeWorkload(c.env.Out, a, events, now)
		c.eventsUnavailable(err)
		return nil
	case "instances":
		ref, err := c.parseInstance(name)
		if err != nil {
			return err
		}
		a, _, err := c.workload(ctx, ref.namespace, ref.app)
		if err != nil {
			return err
		}
		for _, inst := range a.Status.Instances {
			if inst.ID == ref.index {
				events, err := c.workloadEvents(ctx, ref.namespace, ref.app, ref.index)
				describeInstance(c.env.Out, a, inst, events, now)
				c.eventsUnavailable(err)
				return nil
			}
		}
		return noInstance(ref.namespace, ref.app, ref.index)
	}
	raw, _, err := c.fetch(ctx, r, name, false)
	if err != nil {
		return err
	}
	switch r.name {
	case "agents":
		var a apiv1.AgentView
		if err := json.Unmarshal(raw, &a); err != nil {
			return err
		}
		describeAgent(c.env.Out, a, now)
		return nil
	case "hookruns":
		var h apiv1.HookRun
		if err := json.Unmarshal(raw, &h); err != nil {
			return err
		}
		describeHookRun(c.env.Out, h, now)
		return nil
	case "autoscalers":
		var a apiv1.AutoscalerView
		if err := json.Unmarshal(raw, &a); err != nil {
			return err
		}
		describeAutoscaler(c.env.Out, a, now)
		return nil
	}
	return describeObject(c.env.Out, raw, now)
}

// eventsUnavailable says why a description has no events, when the
// event stream could not be read: the description stands without them.
func (c *cli) eventsUnavailable(err error) {
	if err != nil {
		fmt.Fprintf(c.env.Err, "warning: no events: %v\n", err)
	}
}

func (c *cli) deleteCommand() *cobra.Command {
	var files []string
	var force, wait bool
	var timeout time.Duration
	var out writeOutput
	cmd := &cobra.Command{
		Use:   "delete (KIND NAME | -f FILE)",
		Short: "Delete an object, or the objects a manifest file names",
		Long: "Delete an object, or those the manifests of -f name. Applications and deployments are deleted\n" +
			"by the scheduler (their instances killed first); delete waits until they are gone (--wait=false\n" +
			"returns at once). --force skips PreDeleteHooks, and deletes a depends object still referenced.",
		Example: "  bcsctl delete app gamesvr -n demo\n  bcsctl delete -f examples/deployment.json",
		Args:    args(cobra.MaximumNArgs(2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			var targets []objectTarget
			switch {
			case len(files) > 0 && len(args) > 0:
				return usageErrorf("give KIND NAME or -f, not both")
			case len(files) > 0:
				docs, err := readManifests(files, c.env.In)
				if err != nil {
					return err
				}
				for _, doc := range docs {
					r, err := resourceOfKind(doc.kind)
					if err != nil {
						return fmt.Errorf("%s: %w", doc.source, err)
					}
					targets = append(targets, objectTarget{r, doc.namespace, doc.name})
				}
			case len(args) == 0:
				return usageErrorf("give KIND NAME or -f FILE")
			default:
				r, name, err := kindAndName(args)
				if err != nil {
					return err
				}
				if name == "" {
					return usageErrorf("delete %s: which one? give a NAME", r.name)
				}
				ns, name := c.splitName(name)
				targets = append(targets, objectTarget{r, ns, name})
			}
			for _, t := range targets {
				if !t.resource.deletable {
					return usageErrorf("%s cannot be deleted with bcsctl delete", t.resource.name)
				}
			}
			ctx := cmd.Context()
			if timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, timeout)
				defer cancel()
			}
			for _, t := range targets {
				if err := c.delete(ctx, t, force, wait, &out); err != nil {
					return err
				}
			}
			return nil
		},
		ValidArgsFunction: c.completeKindAndName,
	}
	cmd.Flags().StringArrayVarP(&files, "filename", "f", nil, "a manifest file, a directory of them, or - for stdin")
	cmd.Flags().BoolVar(&force, "force", false, "skip PreDeleteHooks; delete a referenced depends object, stopping its pods")
	cmd.Flags().BoolVar(&wait, "wait", true, "wait until an application or deployment is gone")
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "give up waiting after this long (0: no limit)")
	out.add(cmd)
	return cmd
}

// objectTarget names one object of a resource.
type objectTarget struct {
	resource        *resource
	namespace, name string
}

func (c *cli) delete(ctx context.Context, t objectTarget, force, wait bool, out *writeOutput) error {
	query := url.Values{}
	if force && t.resource.force {
		query.Set("force", "true")
	}
	path := pathOf(t.resource.path, t.namespace, t.name)
	var answer struct {
		Kind string `json:"kind"`
	}
	raw, err := c.client.call(ctx, http.MethodDelete, path, query, nil, &answer)
	if err != nil {
		return err
	}
	kind := cmp.Or(answer.Kind, singular(t.resource))
	if wait && t.resource.workload {
		err := c.poll(ctx, func() (bool, error) {
			_, err := c.client.get(ctx, path, nil, nil)
			if notFound(err) {
				return true, nil
			}
			return false, err
		})
		if err != nil {
			return fmt.Errorf("%s %s/%s: waiting for it to go: %w", kind, t.namespace, t.name, err)
		}
	}
	return out.done(c.env.Out, raw, "%s %s/%s deleted", kind, t.namespace, t.name)
}

// singular names one object of a resource in messages.
func singular(r *resource) string {
	switch r.name {
	case "apps":
		return "application"
	case "depends":
		return "depends"
	}
	return r.name[:len(r.name)-1]
}

// poll calls done every Poll until it is true, fails, or ctx ends.
func (c *cli) poll(ctx context.Context, done func() (bool, error)) error {
	for {
		ok, err := done()
		if ok || err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(c.env.Poll):
		}
	}
}

func (c *cli) scaleCommand() *cobra.Command {
	replicas := -1
	var force bool
	var out writeOutput
	cmd := &cobra.Command{
		Use:     "scale KIND NAME --replicas N",
		Short:   "Set the number of instances of an application or deployment",
		Example: "  bcsctl scale app gamesvr --replicas 1 -n demo",
		Args:    args(cobra.RangeArgs(1, 2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, ns, name, err := c.workloadArgs(args)
			if err != nil {
				return err
			}
			if replicas < 0 {
				return usageErrorf("--replicas: give the number of instances (≥ 0)")
			}
			var a apiv1.AppView
			body := apiv1.ScaleRequest{Instances: &replicas, Force: force}
			raw, err := c.client.call(cmd.Context(), http.MethodPost, pathOf(r.path, ns, name, "scale"), nil, body, &a)
			if err != nil {
				return err
			}
			return out.done(c.env.Out, raw, "%s %s/%s scaled to %d", a.Kind, ns, name, replicas)
		},
		ValidArgsFunction: c.completeKindAndName,
	}
	cmd.Flags().IntVar(&replicas, "replicas", -1, "the number of instances")
	cmd.Flags().BoolVar(&force, "force", false, "skip the PreDeleteHooks of the instances removed")
	out.add(cmd)
	return cmd
}

// workloadArgs reads KIND NAME (or KIND/NAME) naming an application, a
// deployment or a daemonset, and the namespace NAME or -n gives.
func (c *cli) workloadArgs(args []string) (r *resource, namespace, name string, err error) {
	r, name, err = kindAndName(args)
	if err != nil {
		return nil, "", "", err
	}
	if !r.workload {
		return nil, "", "", usageErrorf("%s: want an application (apps), a deployment (deployments) or a daemonset (daemonsets)", r.name)
	}
	if name == "" {
		return nil, "", "", usageErrorf("which %s? give a NAME", singular(r))
	}
	namespace, name = c.splitName(name)
	return r, namespace, name, nil
}
