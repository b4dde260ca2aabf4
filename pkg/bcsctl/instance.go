package bcsctl

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/bcs-mesos/bcs-mesos/pkg/apiv1"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
)

const instanceHelp = "INSTANCE is NAMESPACE/APP/INDEX, APP/INDEX (in -n) or a task group ID."

func (c *cli) execCommand() *cobra.Command {
	var task string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "exec INSTANCE [-c TASK] -- COMMAND [ARG...]",
		Short: "Run a command in an instance's container or next to its process; exit with its exit code",
		Long: "Run a command in a container of an instance (or, for processes, in the process's environment)\n" +
			"through its executor, print what it wrote and exit with its exit code.\n" + instanceHelp + "\n" +
			"-c names the container or process; the only one when there is one.",
		Example: "  bcsctl exec demo/web/0 -- cat /www/index.html\n  bcsctl exec web/0 -n demo -c 1 -- ps",
		Args: args(func(cmd *cobra.Command, args []string) error {
			if dash := cmd.ArgsLenAtDash(); dash != 1 || len(args) < 2 {
				return fmt.Errorf("want INSTANCE -- COMMAND [ARG...]")
			}
			return nil
		}),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := c.taskGroupOf(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			body := apiv1.ExecRequest{TaskRequest: apiv1.TaskRequest{Task: task, Timeout: manifest.Duration(timeout.String())}, Command: args[1:]}
			return c.taskGroupCall(cmd, id, "exec", body, nil, "")
		},
	}
	cmd.Flags().StringVarP(&task, "container", "c", "", "the container or process (task) to run it in")
	cmd.Flags().DurationVar(&timeout, "timeout", 30*time.Second, "how long the command may run")
	return cmd
}

func (c *cli) signalCommand() *cobra.Command {
	var task string
	var out writeOutput
	cmd := &cobra.Command{
		Use:     "signal INSTANCE [-c TASK] SIGNAL",
		Short:   "Send a signal (SIGHUP, HUP, 1) to an instance's container or process",
		Long:    "Send a signal to the main process of an instance's container or to its process.\n" + instanceHelp,
		Example: "  bcsctl signal demo/gamesvr/0 SIGHUP",
		Args:    args(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := c.taskGroupOf(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			body := apiv1.SignalRequest{TaskRequest: apiv1.TaskRequest{Task: task}, Signal: apiv1.SignalName(args[1])}
			return c.taskGroupCall(cmd, id, "signal", body, &out, args[1])
		},
	}
	cmd.Flags().StringVarP(&task, "container", "c", "", "the container or process (task) to signal")
	out.add(cmd)
	return cmd
}

// taskGroupCall sends exec or signal to a task group's executor, prints
// what it answered and ends with the command's exit code; a signal's
// out prints the line saying what was sent or, with -o, the answer.
func (c *cli) taskGroupCall(cmd *cobra.Command, id, op string, body any, out *writeOutput, sent string) error {
	var res apiv1.MessageReply
	raw, err := c.client.call(cmd.Context(), http.MethodPost, pathOf("taskgroups", id, op), nil, body, &res)
	if err != nil {
		return err
	}
	fmt.Fprint(c.env.Out, res.Output)
	if res.Truncated {
		fmt.Fprintln(c.env.Err, "warning: the output was longer; this is its beginning")
	}
	if res.Error != "" {
		fmt.Fprintf(c.env.Err, "error: %s\n", res.Error)
	}
	switch {
	case res.ExitCode > 0:
		return &exitError{res.ExitCode}
	case !res.OK:
		return &exitError{exitFailure}
	}
	if out != nil {
		return out.done(c.env.Out, raw, "%s sent to %s (task %s)", sent, res.TaskGroupID, res.Task)
	}
	return nil
}

// instanceCommand is what the executor or the scheduler does to one
// instance: reload, restart, reschedule, stop, start.
func (c *cli) instanceCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "instance",
		Short: "Reload, restart, reschedule, stop or start one instance",
	}
	for _, op := range []struct{ name, short string }{
		{"reload", "Run the instance's reloadCmd (processes) or send its reload signal"},
		{"restart", "Restart the instance's containers or processes where they are"},
		{"reschedule", "Move the instance to another agent: its successor runs first, then it is killed"},
		{"stop", "Kill the instance's tasks and keep it defined: nothing relaunches it until start"},
		{"start", "Place a stopped instance again, on the agent it ran on if it fits"},
	} {
		var out writeOutput
		sub := &cobra.Command{
			Use:   op.name + " INSTANCE",
			Short: op.short,
			Long:  op.short + ".\n" + instanceHelp,
			Args:  args(cobra.ExactArgs(1)),
			RunE: func(cmd *cobra.Command, args []string) error {
				id, err := c.taskGroupOf(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				raw, err := c.client.call(cmd.Context(), http.MethodPost, pathOf("taskgroups", id, op.name), nil, nil, nil)
				if err != nil {
					return err
				}
				return out.done(c.env.Out, raw, "%s of %s requested", op.name, id)
			},
		}
		out.add(sub)
		cmd.AddCommand(sub)
	}
	cmd.AddCommand(c.allocationCommand("allocate"), c.allocationCommand("release"))
	return cmd
}

// allocationCommand allocates an instance to the caller (a game session
// runs on it: scale-downs and rollouts keep it) or releases it.
func (c *cli) allocationCommand(op string) *cobra.Command {
	var note string
	var out writeOutput
	short := map[string]string{
		"allocate": "Mark an instance allocated to you: scale-downs and rollouts keep it until it is released",
		"release":  "Release an instance allocated through the API",
	}[op]
	cmd := &cobra.Command{
		Use:   op + " INSTANCE",
		Short: short,
		Long:  short + ".\n" + instanceHelp,
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			ref, err := c.parseInstance(args[0])
			if err != nil {
				return err
			}
			a, _, err := c.workload(cmd.Context(), ref.namespace, ref.app)
			if err != nil {
				return err
			}
			kind := "apps"
			if a.Kind == manifest.KindDeployment {
				kind = "deployments"
			}
			var body any
			if note != "" {
				body = apiv1.AllocateRequest{Note: note}
			}
			raw, err := c.client.call(cmd.Context(), http.MethodPost, pathOf(kind, ref.namespace, ref.app, "instances", strconv.Itoa(ref.index), op), nil, body, nil)
			if err != nil {
				return err
			}
			return out.done(c.env.Out, raw, "instance %s %sd", ref, op)
		},
	}
	if op == "allocate" {
		cmd.Flags().StringVar(&note, "note", "", "what runs on it (a match, a session), shown with the allocation")
	}
	out.add(cmd)
	return cmd
}

func (c *cli) logsCommand() *cobra.Command {
	var task string
	var stderr, follow bool
	var tail int64
	cmd := &cobra.Command{
		Use:   "logs INSTANCE [-c TASK] [--stderr] [-f] [--tail BYTES]",
		Short: "Print an instance's output (its sandbox's stdout or stderr)",
		Long: "Print what a container or process of an instance wrote to stdout (or --stderr), from its\n" +
			"sandbox on the agent: the last --tail bytes, and with -f what it writes next.\n" + instanceHelp,
		Example: "  bcsctl logs demo/gamesvr/0\n  bcsctl logs web/0 -n demo -c 0 --stderr --tail 4096 -f",
		Args:    args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := c.taskGroupOf(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			query := url.Values{}
			if task != "" {
				query.Set("task", task)
			}
			if stderr {
				query.Set("stream", "stderr")
			}
			if cmd.Flags().Changed("tail") {
				query.Set("tail", strconv.FormatInt(tail, 10))
			}
			if follow {
				query.Set("follow", "true")
			}
			body, err := c.client.stream(cmd.Context(), pathOf("taskgroups", id, "logs"), query)
			if err != nil {
				return err
			}
			defer body.Close()
			if _, err := io.Copy(c.env.Out, body); err != nil && cmd.Context().Err() == nil {
				return fmt.Errorf("reading the logs: %w", err)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&task, "container", "c", "", "the container or process (task)")
	cmd.Flags().BoolVar(&stderr, "stderr", false, "stderr instead of stdout")
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "go on printing what is written")
	cmd.Flags().Int64Var(&tail, "tail", 0, "how many of the last bytes come first (default: the server's, 1 MiB)")
	return cmd
}

// agentCommand is cordon, uncordon or drain of an agent.
func (c *cli) agentCommand(op string) *cobra.Command {
	var reason string
	var force, wait bool
	var timeout time.Duration
	var out writeOutput
	short := map[string]string{
		"cordon":   "Place no new instance on an agent",
		"uncordon": "Let an agent take instances again (ends a cordon and a drain)",
		"drain":    "Move every instance off an agent, one at a time (its successor runs first), and place none there",
	}[op]
	cmd := &cobra.Command{
		Use:   op + " AGENT",
		Short: short,
		Long:  short + ".\nAGENT is a hostname or a Mesos agent ID.",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			body := apiv1.AgentRequest{Reason: reason, Force: force}
			var a apiv1.AgentView
			raw, err := c.client.call(ctx, http.MethodPost, pathOf("agents", args[0], op), nil, body, &a)
			if err != nil {
				return err
			}
			switch {
			case op == "uncordon" && a.Drain != nil:
				if raw, err = c.client.call(ctx, http.MethodPost, pathOf("agents", args[0], "undrain"), nil, nil, &a); err != nil {
					return err
				}
				return out.done(c.env.Out, raw, "agent %s uncordoned, its drain ended", a.Hostname)
			case op == "drain" && wait:
				if timeout > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, timeout)
					defer cancel()
				}
				return c.waitDrained(ctx, args[0], a, &out)
			}
			return out.done(c.env.Out, raw, "agent %s %s", a.Hostname, map[string]string{"cordon": "cordoned", "uncordon": "uncordoned", "drain": "draining"}[op])
		},
	}
	out.add(cmd)
	if op != "uncordon" {
		cmd.Flags().StringVar(&reason, "reason", "", "why, shown with the agent")
	}
	if op == "drain" {
		cmd.Flags().BoolVar(&force, "force", false, "move stateful applications' instances too")
		cmd.Flags().BoolVar(&wait, "wait", true, "wait until only kept (stateful) instances or none are left")
		cmd.Flags().DurationVar(&timeout, "timeout", 0, "give up waiting after this long (0: no limit)")
	}
	return cmd
}

// waitDrained follows a drain until the agent is drained, a line per
// change; with -o, it prints the agent as it is then, and nothing before.
func (c *cli) waitDrained(ctx context.Context, agent string, a apiv1.AgentView, out *writeOutput) error {
	last := ""
	var raw []byte
	err := c.poll(ctx, func() (bool, error) {
		var err error
		if raw, err = c.client.get(ctx, pathOf("agents", agent), nil, &a); err != nil {
			return false, err
		}
		if a.Drain == nil {
			return false, fmt.Errorf("agent %s is no longer draining", a.Hostname)
		}
		line := fmt.Sprintf("agent %s %s: %s to move", a.Hostname, a.Drain.State, count(a.Drain.Remaining, "instance"))
		if len(a.Drain.Moving) > 0 {
			line += " (moving " + strings.Join(a.Drain.Moving, ", ") + ")"
		}
		for _, b := range a.Drain.Blocked {
			line += "; " + b.Instance + " fits on no agent: " + b.Why
		}
		if line != last && !out.raw() {
			fmt.Fprintln(c.env.Out, line)
		}
		last = line
		return a.Drain.State == "drained", nil
	})
	switch {
	case err != nil && ctx.Err() == context.DeadlineExceeded:
		return fmt.Errorf("timed out waiting for the drain: %s; `bcsctl describe` of its instances says why one waits", last)
	case err != nil:
		return err
	case len(a.Drain.Kept) > 0:
		return out.done(c.env.Out, raw, "agent %s drained; kept (stateful, --force moves them): %s", a.Hostname, strings.Join(a.Drain.Kept, ", "))
	}
	return out.done(c.env.Out, raw, "agent %s drained", a.Hostname)
}
