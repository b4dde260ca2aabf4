package bcsctl

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/bcs-mesos/bcs-mesos/pkg/apiv1"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
)

// unknown stands for what the leader has not decided yet: an autoscaler
// without a status, a metric without a reading (kubectl's word for HPA).
const unknown = "<unknown>"

func autoscalerColumns(now time.Time) []column[apiv1.AutoscalerView] {
	return []column[apiv1.AutoscalerView]{
		{header: "NAME", value: func(a apiv1.AutoscalerView) string { return a.Name }},
		{header: "TARGET", value: func(a apiv1.AutoscalerView) string { return autoscaleTarget(a.Spec.Spec.Target) }},
		{header: "MIN", value: func(a apiv1.AutoscalerView) string { return autoscalerMin(a) }},
		{header: "MAX", value: func(a apiv1.AutoscalerView) string { return autoscalerMax(a) }},
		{header: "CURRENT", value: func(a apiv1.AutoscalerView) string {
			return statusValue(a, func(s *manifest.AutoscalerStatus) int { return s.CurrentReplicas })
		}},
		{header: "DESIRED", value: func(a apiv1.AutoscalerView) string {
			return statusValue(a, func(s *manifest.AutoscalerStatus) int { return s.DesiredReplicas })
		}},
		{header: "METRICS", value: metricsSummary},
		{header: "LAST-SCALE", value: func(a apiv1.AutoscalerView) string {
			if a.Status == nil || a.Status.LastScale == nil {
				return "never"
			}
			return age(now, a.Status.LastScale.At)
		}},
		{header: "AGE", value: func(a apiv1.AutoscalerView) string { return age(now, a.CreatedAt) }},
		{header: "CONDITIONS", wide: true, value: conditionsSummary},
		{header: "MESSAGE", wide: true, value: autoscalerMessage},
	}
}

func autoscalerNamespace(a apiv1.AutoscalerView) string { return a.Namespace }

// autoscaleTarget names a target kubectl's way: "deployment/gamesvr".
func autoscaleTarget(t manifest.ScaleTarget) string { return string(t.Kind) + "/" + t.Name }

// autoscalerMin and autoscalerMax are the bounds in force (a schedule
// window may set them), or before the first decision the spec's.
func autoscalerMin(a apiv1.AutoscalerView) string {
	switch {
	case a.Status != nil:
		return strconv.Itoa(a.Status.Bounds.Min)
	case a.Spec.Spec.MinReplicas != nil:
		return strconv.Itoa(*a.Spec.Spec.MinReplicas)
	}
	return unknown
}

func autoscalerMax(a apiv1.AutoscalerView) string {
	if a.Status != nil {
		return strconv.Itoa(a.Status.Bounds.Max)
	}
	return strconv.Itoa(a.Spec.Spec.MaxReplicas)
}

func statusValue(a apiv1.AutoscalerView, of func(*manifest.AutoscalerStatus) int) string {
	if a.Status == nil {
		return unknown
	}
	return strconv.Itoa(of(a.Status))
}

// metricsSummary is each metric's current value against its target, as
// kubectl shows an HPA's: "cpu: 45%/60%, players: 1200/40 (avg)".
func metricsSummary(a apiv1.AutoscalerView) string {
	var parts []string
	for _, m := range a.Spec.Spec.Metrics {
		current := unknown
		if s := metricStatus(a.Status, m.MetricName()); s != nil && s.Current != nil {
			current = metricNumber(*s.Current, s.TargetType)
		}
		parts = append(parts, m.MetricName()+": "+current+"/"+metricTarget(m))
	}
	return strings.Join(parts, ", ")
}

// metricStatus is the status of the metric named name, nil when none.
func metricStatus(s *manifest.AutoscalerStatus, name string) *manifest.MetricStatus {
	if s == nil {
		return nil
	}
	for i := range s.Metrics {
		if s.Metrics[i].Name == name {
			return &s.Metrics[i]
		}
	}
	return nil
}

// metricTarget is what a metric aims at, as written in the spec.
func metricTarget(m manifest.AutoscaleMetric) string {
	switch {
	case m.Resource != nil && m.Resource.TargetAverageUtilization != nil:
		return strconv.Itoa(*m.Resource.TargetAverageUtilization) + "%"
	case m.Resource != nil && m.Resource.TargetAverageValue != nil:
		return number(*m.Resource.TargetAverageValue) + " (avg)"
	case m.Buffer != nil && m.Buffer.BufferSize.Percent:
		return strconv.Itoa(m.Buffer.BufferSize.Value) + "% free"
	case m.Buffer != nil:
		return strconv.Itoa(m.Buffer.BufferSize.Value) + " free"
	case m.TargetAverageValue != nil:
		return number(*m.TargetAverageValue) + " (avg)"
	case m.TargetValue != nil:
		return number(*m.TargetValue)
	}
	return unknown
}

func metricNumber(v float64, targetType string) string {
	if targetType == manifest.TargetUtilization {
		return number(v) + "%"
	}
	return number(v)
}

// conditionsSummary lists the conditions that are not as a working
// autoscaler has them: "ScalingLimited=True(TooManyReplicas)".
func conditionsSummary(a apiv1.AutoscalerView) string {
	if a.Status == nil {
		return ""
	}
	var parts []string
	for _, c := range a.Status.Conditions {
		if (c.Type == "ScalingLimited") == (c.Status == "True") {
			parts = append(parts, fmt.Sprintf("%s=%s(%s)", c.Type, c.Status, c.Reason))
		}
	}
	return strings.Join(parts, ",")
}

func autoscalerMessage(a apiv1.AutoscalerView) string {
	if a.Status == nil {
		return "no decision yet"
	}
	return a.Status.Message
}

// describeAutoscaler describes an autoscaler: its target and bounds (the
// spec's, and those in force with the windows setting them), its
// metrics with their current values and proposals, its conditions, its
// last scale and its last decisions with why.
func describeAutoscaler(w io.Writer, a apiv1.AutoscalerView, now time.Time) {
	d := newDescriber(w, now)
	spec, st := a.Spec.Spec, a.Status
	d.line(0, "Name", a.Name)
	d.line(0, "Namespace", a.Namespace)
	d.line(0, "Target", autoscaleTarget(spec.Target))
	d.line(0, "Created", d.when(a.CreatedAt))
	d.line(0, "Updated", d.when(a.UpdatedAt))
	d.line(0, "Revision", strconv.FormatInt(a.Revision, 10))
	d.line(0, "Bounds", specBounds(spec))
	if st != nil {
		d.line(0, "In force", inForce(st.Bounds))
	}
	d.line(0, "Interval", seconds(spec.IntervalSeconds))
	d.line(0, "Paused", map[bool]string{true: "yes: decides and reports, never scales"}[spec.Paused])
	d.line(0, "Dry run", map[bool]string{true: "yes: records what it would do, never scales"}[spec.DryRun])
	if len(spec.Schedule) > 0 {
		d.section(0, "Schedule")
		d.table(1, tableOf(spec.Schedule, []column[manifest.ScaleWindow]{
			{header: "NAME", value: func(s manifest.ScaleWindow) string { return s.Name }},
			{header: "START", value: func(s manifest.ScaleWindow) string { return s.Start }},
			{header: "END", value: func(s manifest.ScaleWindow) string { return s.End }},
			{header: "ZONE", value: func(s manifest.ScaleWindow) string { return s.TimeZone }},
			{header: "MIN", value: func(s manifest.ScaleWindow) string { return optInt(s.MinReplicas) }},
			{header: "MAX", value: func(s manifest.ScaleWindow) string { return optInt(s.MaxReplicas) }},
		}, false, nil))
	}
	if st == nil {
		d.line(0, "Status", "no decision yet: the leading scheduler has not evaluated it")
		d.describeMetrics(spec, st)
		d.flush()
		return
	}
	d.line(0, "Replicas", fmt.Sprintf("%d current, %d desired", st.CurrentReplicas, st.DesiredReplicas))
	d.line(0, "Message", st.Message)
	d.line(0, "Last scale", lastScale(st.LastScale, d))
	d.describeMetrics(spec, st)
	d.describeConditions(st.Conditions)
	d.describeDecisions(st.Decisions)
	d.flush()
}

// specBounds are the bounds the spec writes.
func specBounds(spec manifest.AutoscalerSpec) string {
	min := "unset"
	if spec.MinReplicas != nil {
		min = strconv.Itoa(*spec.MinReplicas)
	}
	return fmt.Sprintf("min %s, max %d", min, spec.MaxReplicas)
}

// inForce are the bounds the last decision used, and the schedule
// windows that set them.
func inForce(b manifest.ScaleBounds) string {
	s := fmt.Sprintf("min %d, max %d", b.Min, b.Max)
	for _, w := range b.Windows {
		s += fmt.Sprintf("; window %s until %s", w.Name, w.Until.UTC().Format(time.RFC3339))
	}
	return s
}

func lastScale(s *manifest.ScaleRecord, d *describer) string {
	if s == nil {
		return "never"
	}
	out := fmt.Sprintf("%d to %d at %s: %s", s.From, s.To, d.when(s.At), s.Reason)
	if len(s.Removed) > 0 {
		out += "; removed " + removedList(s.Removed)
	}
	return out
}

func removedList(removed []manifest.RemovedInstance) string {
	parts := make([]string, len(removed))
	for i, r := range removed {
		parts[i] = fmt.Sprintf("%d (%s)", r.ID, r.Why)
	}
	return strings.Join(parts, ", ")
}

func (d *describer) describeMetrics(spec manifest.AutoscalerSpec, st *manifest.AutoscalerStatus) {
	d.section(0, "Metrics")
	d.table(1, tableOf(spec.Metrics, []column[manifest.AutoscaleMetric]{
		{header: "NAME", value: func(m manifest.AutoscaleMetric) string { return m.MetricName() }},
		{header: "TYPE", value: func(m manifest.AutoscaleMetric) string { return string(m.Type) }},
		{header: "CURRENT", value: func(m manifest.AutoscaleMetric) string {
			if s := metricStatus(st, m.MetricName()); s != nil && s.Current != nil {
				return metricNumber(*s.Current, s.TargetType)
			}
			return unknown
		}},
		{header: "TARGET", value: metricTarget},
		{header: "PROPOSAL", value: func(m manifest.AutoscaleMetric) string {
			if s := metricStatus(st, m.MetricName()); s != nil {
				return optInt(s.Proposal)
			}
			return ""
		}},
		{header: "MESSAGE", value: func(m manifest.AutoscaleMetric) string {
			if s := metricStatus(st, m.MetricName()); s != nil {
				return s.Message
			}
			return ""
		}},
	}, false, nil))
}

func (d *describer) describeConditions(conditions []manifest.AutoscalerCondition) {
	if len(conditions) == 0 {
		return
	}
	d.section(0, "Conditions")
	d.table(1, tableOf(conditions, []column[manifest.AutoscalerCondition]{
		{header: "TYPE", value: func(c manifest.AutoscalerCondition) string { return c.Type }},
		{header: "STATUS", value: func(c manifest.AutoscalerCondition) string { return c.Status }},
		{header: "REASON", value: func(c manifest.AutoscalerCondition) string { return c.Reason }},
		{header: "SINCE", value: func(c manifest.AutoscalerCondition) string { return age(d.now, c.LastTransitionTime) }},
		{header: "MESSAGE", value: func(c manifest.AutoscalerCondition) string { return c.Message }},
	}, false, nil))
}

// describeDecisions shows the last decisions, newest first: why it
// scaled, or why it did not.
func (d *describer) describeDecisions(decisions []manifest.DecisionSummary) {
	if len(decisions) == 0 {
		return
	}
	newest := make([]manifest.DecisionSummary, len(decisions))
	for i, dec := range decisions {
		newest[len(decisions)-1-i] = dec
	}
	d.section(0, "Decisions")
	d.table(1, tableOf(newest, []column[manifest.DecisionSummary]{
		{header: "AGE", value: func(x manifest.DecisionSummary) string { return age(d.now, x.At) }},
		{header: "CURRENT", value: func(x manifest.DecisionSummary) string { return strconv.Itoa(x.Current) }},
		{header: "PROPOSAL", value: func(x manifest.DecisionSummary) string { return strconv.Itoa(x.Proposal) }},
		{header: "DESIRED", value: func(x manifest.DecisionSummary) string { return strconv.Itoa(x.Desired) }},
		{header: "ACTED", value: func(x manifest.DecisionSummary) string { return map[bool]string{true: "yes", false: "no"}[x.Acted] }},
		{header: "WHY", value: func(x manifest.DecisionSummary) string {
			if len(x.Removed) > 0 {
				return x.Why + "; removes " + removedList(x.Removed)
			}
			return x.Why
		}},
	}, false, nil))
}

func optInt(p *int) string {
	if p == nil {
		return ""
	}
	return strconv.Itoa(*p)
}

func seconds(s int) string {
	if s == 0 {
		return ""
	}
	return (time.Duration(s) * time.Second).String()
}

// writeAutoscalerPlan shows what an autoscaler's dry run answered: the
// decision the leader would make now, when it says one.
func writeAutoscalerPlan(w io.Writer, a apiv1.AutoscalerView) {
	if a.Status == nil {
		fmt.Fprintln(w, "  Decision: none (no autoscaler controller answered)")
		return
	}
	fmt.Fprintf(w, "  Decision: %d current, %d desired: %s\n", a.Status.CurrentReplicas, a.Status.DesiredReplicas, a.Status.Message)
}

// autoscaleCommand pauses and resumes autoscalers: a paused one decides
// and reports but never scales, and its workload may be scaled by hand.
func (c *cli) autoscaleCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "autoscale",
		Short: "Pause or resume an autoscaler",
	}
	for _, op := range []struct{ name, short, done string }{
		{"pause", "Pause an autoscaler: it decides and reports, never scales; its workload may then be scaled by hand", "paused"},
		{"resume", "Resume a paused autoscaler", "resumed"},
	} {
		var out writeOutput
		sub := &cobra.Command{
			Use:   op.name + " NAME",
			Short: op.short,
			Long:  op.short + ".\nNAME is the autoscaler's, or NAMESPACE/NAME.",
			Args:  args(cobra.ExactArgs(1)),
			RunE: func(cmd *cobra.Command, args []string) error {
				ns, name := c.splitName(args[0])
				raw, err := c.client.call(cmd.Context(), http.MethodPost, pathOf("autoscalers", ns, name, op.name), nil, nil, nil)
				if err != nil {
					return err
				}
				return out.done(c.env.Out, raw, "autoscaler %s/%s %s", ns, name, op.done)
			},
			ValidArgsFunction: func(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
				if len(args) > 0 || c.connect(cmd) != nil {
					return nil, cobra.ShellCompDirectiveNoFileComp
				}
				r, err := resourceNamed("autoscalers")
				if err != nil {
					return nil, cobra.ShellCompDirectiveNoFileComp
				}
				return c.names(cmd.Context(), r), cobra.ShellCompDirectiveNoFileComp
			},
		}
		out.add(sub)
		cmd.AddCommand(sub)
	}
	return cmd
}
