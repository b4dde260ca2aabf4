package bcsctl

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/bcs-mesos/bcs-mesos/pkg/apiv1"
)

func (c *cli) rolloutCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rollout",
		Short: "Follow and steer the rollout of an application or deployment",
		Long: "Follow and steer the rollout of an application or deployment: status waits until it is done,\n" +
			"pause and resume hold and continue it, promote ends a canary pause (or a rollingManually batch),\n" +
			"abort sends every instance back to the stable revision, undo rolls out an earlier revision's\n" +
			"spec, restart restarts every instance by the strategy, history lists the revisions.",
	}
	cmd.AddCommand(c.rolloutStatusCommand(), c.rolloutHistoryCommand(), c.rolloutUndoCommand())
	for _, op := range []workloadOperation{
		{"pause", "Hold the rollout where it is", "paused"},
		{"resume", "Continue a paused rollout", "resumed"},
		{"promote", "End the rollout's current wait (a canary pause, a rollingManually batch, an inconclusive hook)", "promoted"},
		{"abort", "Send every instance back to the stable revision", "aborted"},
		{"restart", "Restart every instance, by the strategy", "restarted"},
	} {
		cmd.AddCommand(c.workloadOperationCommand(op))
	}
	return cmd
}

// workloadOperation is a POST /v1/KIND/NS/NAME/OP without a body: its
// name, help and what the command prints once it is done.
type workloadOperation struct{ name, short, done string }

func (c *cli) workloadOperationCommand(op workloadOperation) *cobra.Command {
	var out writeOutput
	cmd := &cobra.Command{
		Use:   op.name + " KIND NAME",
		Short: op.short,
		Args:  args(cobra.RangeArgs(1, 2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, ns, name, err := c.workloadArgs(args)
			if err != nil {
				return err
			}
			var a apiv1.AppView
			raw, err := c.client.call(cmd.Context(), http.MethodPost, pathOf(r.path, ns, name, op.name), nil, nil, &a)
			if err != nil {
				return err
			}
			return out.done(c.env.Out, raw, "%s %s/%s %s", a.Kind, ns, name, op.done)
		},
		ValidArgsFunction: c.completeKindAndName,
	}
	out.add(cmd)
	return cmd
}

// stopCommand and startCommand stop and start every instance of an
// application, process or deployment (seed 002's optype=stop/start).
func (c *cli) stopCommand() *cobra.Command {
	return c.workloadOperationCommand(workloadOperation{"stop",
		"Stop every instance of an application, process or deployment: killed, kept defined, not relaunched until start", "stopped"})
}

func (c *cli) startCommand() *cobra.Command {
	return c.workloadOperationCommand(workloadOperation{"start",
		"Start the instances of a stopped application, process or deployment again, each on its agent if it fits", "started"})
}

func (c *cli) rolloutUndoCommand() *cobra.Command {
	var revision uint64
	var out writeOutput
	cmd := &cobra.Command{
		Use:   "undo KIND NAME [--to-revision N]",
		Short: "Roll out the spec of an earlier revision (the previous one by default), as a new revision",
		Args:  args(cobra.RangeArgs(1, 2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, ns, name, err := c.workloadArgs(args)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			if revision == 0 {
				if revision, err = c.previousRevision(ctx, r, ns, name); err != nil {
					return err
				}
			}
			var a apiv1.AppView
			raw, err := c.client.call(ctx, http.MethodPost, pathOf(r.path, ns, name, "rollback"), nil, map[string]uint64{"revision": revision}, &a)
			if err != nil {
				return err
			}
			return out.done(c.env.Out, raw, "%s %s/%s rolled back to the spec of revision %d (as revision %d)", a.Kind, ns, name, revision, a.Version)
		},
		ValidArgsFunction: c.completeKindAndName,
	}
	cmd.Flags().Uint64Var(&revision, "to-revision", 0, "the revision whose spec to roll out (default: the one before the current)")
	out.add(cmd)
	return cmd
}

// previousRevision is the newest revision before the current one.
func (c *cli) previousRevision(ctx context.Context, r *resource, ns, name string) (uint64, error) {
	var a apiv1.AppView
	if _, err := c.client.get(ctx, pathOf(r.path, ns, name), nil, &a); err != nil {
		return 0, err
	}
	var history struct {
		Versions []apiv1.AppVersion `json:"versions"`
	}
	if _, err := c.client.get(ctx, pathOf(r.path, ns, name, "versions"), nil, &history); err != nil {
		return 0, err
	}
	var prev uint64
	for _, v := range history.Versions {
		if v.Version < a.Version && v.Version > prev {
			prev = v.Version
		}
	}
	if prev == 0 {
		return 0, fmt.Errorf("%s %s/%s has no revision before %d to go back to", a.Kind, ns, name, a.Version)
	}
	return prev, nil
}

func (c *cli) rolloutHistoryCommand() *cobra.Command {
	var revision uint64
	var out outputFlag
	cmd := &cobra.Command{
		Use:   "history KIND NAME [--revision N]",
		Short: "List the revisions of an application or deployment, or show one's spec",
		Args:  args(cobra.RangeArgs(1, 2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, ns, name, err := c.workloadArgs(args)
			if err != nil {
				return err
			}
			var history struct {
				Versions []apiv1.AppVersion `json:"versions"`
			}
			raw, err := c.client.get(cmd.Context(), pathOf(r.path, ns, name, "versions"), nil, &history)
			if err != nil {
				return err
			}
			if revision > 0 {
				for _, v := range history.Versions {
					if v.Version == revision {
						return printRaw(c.env.Out, cmp.Or(out.format, "yaml"), v.Spec)
					}
				}
				return fmt.Errorf("%s/%s has no revision %d", ns, name, revision)
			}
			if out.raw() {
				return printRaw(c.env.Out, out.format, raw)
			}
			return historyTable(history.Versions, c.env.Now()).write(c.env.Out, "")
		},
		ValidArgsFunction: c.completeKindAndName,
	}
	cmd.Flags().Uint64Var(&revision, "revision", 0, "show this revision's spec")
	out.add(cmd, "json", "yaml")
	return cmd
}

func historyTable(versions []apiv1.AppVersion, now time.Time) *table {
	return tableOf(versions, []column[apiv1.AppVersion]{
		{header: "REVISION", value: func(v apiv1.AppVersion) string { return strconv.FormatUint(v.Version, 10) }},
		{header: "CAUSE", value: func(v apiv1.AppVersion) string {
			if v.RolledBackTo > 0 {
				return fmt.Sprintf("%s to %d", v.Cause, v.RolledBackTo)
			}
			return string(v.Cause)
		}},
		{header: "AGE", value: func(v apiv1.AppVersion) string { return age(now, v.CreatedAt) }},
	}, false, nil)
}

func (c *cli) rolloutStatusCommand() *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "status KIND NAME",
		Short: "Follow a rollout until it is done (exit 0) or fails (exit 1)",
		Long: "Follow the rollout of an application's or deployment's current revision until every instance\n" +
			"runs it and is ready (exit code 0) or the rollout is aborted (exit code 1): a progress bar on a\n" +
			"terminal, a line per change otherwise. A paused rollout is waited for (promote or resume it).",
		Example: "  bcsctl rollout status deployment fleet -n demo\n  bcsctl rollout status deployment/fleet -n demo --timeout 5m",
		Args:    args(cobra.RangeArgs(1, 2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, ns, name, err := c.workloadArgs(args)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			if timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, timeout)
				defer cancel()
			}
			return c.rolloutStatus(ctx, r, ns, name)
		},
		ValidArgsFunction: c.completeKindAndName,
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "give up after this long, exit code 1 (0: no limit)")
	return cmd
}

// rolloutVerdict is where a rollout stands for rollout status.
type rolloutVerdict int

const (
	rolloutGoing rolloutVerdict = iota
	rolloutDone
	rolloutFailed
)

// judgeRollout says whether the rollout of a's current revision is done,
// failed or still going, and in a line where it is.
func judgeRollout(a apiv1.AppView) (rolloutVerdict, string) {
	ro := a.Status.Rollout
	switch {
	case ro == nil || ro.UpdateRevision != a.Version:
		return rolloutGoing, fmt.Sprintf("waiting for the scheduler to begin revision %d", a.Version)
	case ro.Aborted || ro.Phase == "Aborted":
		return rolloutFailed, fmt.Sprintf("rollout of revision %d aborted: %s", a.Version, ro.Message)
	case ro.Phase == "Completed" || ro.Phase == "RolledBack":
		return rolloutDone, ro.Message
	case ro.Phase == "Progressing" && stalled(ro.Conditions):
		return rolloutFailed, fmt.Sprintf("rollout of revision %d stalled: %s", a.Version, ro.Message)
	}
	return rolloutGoing, string(ro.Phase) + ": " + ro.Message
}

// stalled reports a rollout that will not progress until an operator acts
// (Progressing False: instances failed to update), as kubectl gives up on
// a deployment past its progress deadline.
func stalled(conditions []apiv1.Condition) bool {
	for _, c := range conditions {
		if c.Type == "Progressing" && c.Status == "False" {
			return true
		}
	}
	return false
}

// rolloutStatus follows a rollout until it is done or fails.
func (c *cli) rolloutStatus(ctx context.Context, r *resource, ns, name string) error {
	bar := &progress{out: c.env.Out, terminal: c.env.Terminal, width: c.env.Width}
	var verdict rolloutVerdict
	var a apiv1.AppView
	err := c.poll(ctx, func() (bool, error) {
		a = apiv1.AppView{}
		if _, err := c.client.get(ctx, pathOf(r.path, ns, name), nil, &a); err != nil {
			return false, err
		}
		var line string
		verdict, line = judgeRollout(a)
		bar.show(a, line)
		return verdict != rolloutGoing, nil
	})
	bar.end()
	switch {
	case err != nil && ctx.Err() == context.DeadlineExceeded:
		return fmt.Errorf("timed out waiting for the rollout of %s/%s: %s", ns, name, bar.last)
	case err != nil:
		return err
	case verdict == rolloutFailed:
		fmt.Fprintf(c.env.Err, "error: %s %s/%s: %s\n", a.Kind, ns, name, bar.last)
		return &exitError{exitFailure}
	}
	fmt.Fprintf(c.env.Out, "%s %s/%s successfully rolled out: %s\n", a.Kind, ns, name, bar.last)
	return nil
}

// progress shows a rollout as it goes: on a terminal one line redrawn
// in place with a bar of the instances updated and ready; elsewhere a
// line each time something changed.
type progress struct {
	out      io.Writer
	terminal bool
	width    func() int
	// last is the last line shown; drawn says a terminal line is open.
	last  string
	drawn bool
}

func (p *progress) show(a apiv1.AppView, line string) {
	if !p.terminal {
		if line != p.last {
			fmt.Fprintf(p.out, "%s %s/%s: %s\n", a.Kind, a.Namespace, a.Name, line)
		}
		p.last = line
		return
	}
	p.last = line
	done, total := 0, max(a.Instances, 1)
	if ro := a.Status.Rollout; ro != nil && ro.UpdateRevision == a.Version {
		done, total = ro.UpdatedReady, max(ro.Replicas, 1)
	}
	const barWidth = 20
	filled := min(barWidth, done*barWidth/total)
	text := fmt.Sprintf("%s [%s%s] %d/%d %s", a.Name, strings.Repeat("#", filled), strings.Repeat("-", barWidth-filled), done, total, line)
	if w := p.width(); w > 1 && len([]rune(text)) >= w {
		text = string([]rune(text)[:w-1]) // a wrapped line would not redraw in place
	}
	fmt.Fprintf(p.out, "\r\x1b[K%s", text)
	p.drawn = true
}

// end closes the terminal line.
func (p *progress) end() {
	if p.drawn {
		fmt.Fprintln(p.out)
		p.drawn = false
	}
}
