package bcsctl

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/bcs-mesos/bcs-mesos/pkg/apiv1"
	"github.com/bcs-mesos/bcs-mesos/pkg/constraint"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
)

// describer writes a description: "Label:  value" lines aligned per
// section, and tables.
type describer struct {
	out io.Writer
	tw  *tabwriter.Writer
	now time.Time
}

func newDescriber(w io.Writer, now time.Time) *describer {
	return &describer{out: w, tw: tabwriter.NewWriter(w, 0, 8, 2, ' ', 0), now: now}
}

// line writes "label:  value" at an indent level; an empty value leaves
// the line out.
func (d *describer) line(level int, label, value string) {
	if value == "" {
		return
	}
	fmt.Fprintf(d.tw, "%s%s:\t%s\n", strings.Repeat("  ", level), label, strings.ReplaceAll(value, "\n", " "))
}

// section starts a block of lines under label.
func (d *describer) section(level int, label string) {
	d.flush()
	fmt.Fprintf(d.out, "%s%s:\n", strings.Repeat("  ", level), label)
}

func (d *describer) table(level int, t *table) {
	d.flush()
	_ = t.write(d.out, strings.Repeat("  ", level))
}

func (d *describer) flush() { _ = d.tw.Flush() }

// when shows a time and how long ago it was.
func (d *describer) when(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return fmt.Sprintf("%s (%s ago)", t.UTC().Format(time.RFC3339), age(d.now, t))
}

// describeWorkload describes an application or deployment: what it is,
// its spec in short, its rollout, its instances (with why one is pending
// and what is done to it) and its recent events.
func describeWorkload(w io.Writer, a apiv1.AppView, events []eventView, now time.Time) {
	d := newDescriber(w, now)
	d.line(0, "Name", a.Name)
	d.line(0, "Namespace", a.Namespace)
	d.line(0, "Kind", string(a.Kind))
	d.line(0, "Revision", strconv.FormatUint(a.Version, 10))
	d.line(0, "Created", d.when(a.CreatedAt))
	d.line(0, "Updated", d.when(a.UpdatedAt))
	d.line(0, "State", string(a.Status.State))
	d.line(0, "Message", a.Status.Message)
	ready, stopped := readyCount(a)
	replicas := fmt.Sprintf("%d desired, %d ready", a.Instances, ready)
	if stopped > 0 {
		replicas += fmt.Sprintf(", %d stopped", stopped)
	}
	d.line(0, "Replicas", replicas)
	if p := a.DependencyPod; p != nil {
		d.line(0, "Dependency pod", fmt.Sprintf("of depends %s/%s on %s, %d users", p.DependsNamespace, p.DependsName, p.Node, p.Users))
	}
	d.workloadSpec(a.Spec)
	if ro := a.Status.Rollout; ro != nil {
		d.rollout(ro)
	}
	d.section(0, "Instances")
	rows := make([]instanceRow, len(a.Status.Instances))
	for i, inst := range a.Status.Instances {
		rows[i] = instanceRow{Namespace: a.Namespace, App: a.Name, instanceView: inst}
	}
	if len(rows) == 0 {
		fmt.Fprintln(w, "  <none>")
	} else {
		d.table(1, tableOf(rows, instanceColumns(now), false, nil))
		var tasks []instanceTask
		var views []apiv1.TaskView
		for _, inst := range a.Status.Instances {
			for _, task := range inst.Tasks {
				tasks = append(tasks, instanceTask{fmt.Sprintf("%s/%d", a.Name, inst.ID), task})
				views = append(views, task)
			}
		}
		if len(tasks) > 0 {
			d.section(0, "Tasks")
			cols := append([]column[instanceTask]{{header: "INSTANCE", value: func(t instanceTask) string { return t.instance }}},
				columnsOf(taskColumnsFor(views), func(t instanceTask) apiv1.TaskView { return t.TaskView })...)
			d.table(1, tableOf(tasks, cols, false, nil))
		}
		for _, inst := range a.Status.Instances {
			inst.Tasks = nil // shown above
			d.instanceDetails(0, fmt.Sprintf("Instance %s/%d", a.Name, inst.ID), inst)
		}
	}
	d.events(events)
	d.flush()
}

// workloadSpec summarises a workload's manifest.
func (d *describer) workloadSpec(spec json.RawMessage) {
	obj, err := manifest.Parse(spec)
	if obj == nil {
		d.line(0, "Spec", fmt.Sprintf("unreadable: %v", err))
		return
	}
	work, err := manifest.Workload(obj)
	if err != nil {
		d.line(0, "Spec", err.Error())
		return
	}
	var restart manifest.RestartPolicy
	var kill manifest.KillPolicy
	var processes []manifest.ProcessSpec
	var pod manifest.PodSpec
	switch m := work.(type) {
	case *manifest.Process:
		restart, kill, processes = m.RestartPolicy, m.KillPolicy, m.Spec.Template.Spec.Processes
		d.line(0, "Constraints", constraintText(m.Constraint))
		d.line(0, "Stateful", map[bool]string{true: "yes (drains and drifts leave it unless forced)"}[m.Stateful])
	case *manifest.Application:
		restart, kill, pod = m.RestartPolicy, m.KillPolicy, m.Spec.Template.Spec
		d.line(0, "Constraints", constraintText(m.Constraint))
		d.line(0, "Stateful", map[bool]string{true: "yes (drains and drifts leave it unless forced)"}[m.Stateful])
	}
	d.line(0, "Restart Policy", restartText(restart))
	d.line(0, "Kill Policy", fmt.Sprintf("grace period %ds", kill.GracePeriod))
	d.line(0, "Strategy", strategyText(manifest.UpdateStrategyOf(obj)))
	if dep, ok := manifest.AsDeployment(obj); ok && dep.Spec.PreDeleteUpdateStrategy != nil && dep.Spec.PreDeleteUpdateStrategy.Hook != nil {
		pre := dep.Spec.PreDeleteUpdateStrategy
		text := "hook " + pre.Hook.TemplateName
		if pre.TimeoutSeconds > 0 {
			text += fmt.Sprintf(", at most %ds", pre.TimeoutSeconds)
		}
		d.line(0, "PreDelete", text)
	}
	var depends []string
	for _, ref := range manifest.DependsOf(obj) {
		depends = append(depends, fmt.Sprintf("%s/%s (%s)", ref.Namespace, ref.Name, ref.Policy))
	}
	d.line(0, "Depends", strings.Join(depends, ", "))
	if len(processes) > 0 {
		d.section(0, "Processes")
		for _, p := range processes {
			d.section(1, p.ProcName)
			d.line(2, "Start", p.StartCmd)
			var uris []string
			for _, u := range p.URIs {
				uris = append(uris, u.Value)
			}
			d.line(2, "Packages", strings.Join(uris, ", "))
			d.line(2, "Resources", resourcesText(p.Resources))
			var ports []string
			for _, port := range p.Ports {
				ports = append(ports, portText(port.Name, port.Protocol, 0, port.HostPort))
			}
			d.line(2, "Ports", strings.Join(ports, ", "))
			d.line(2, "Health", healthText(p.HealthChecks))
		}
	}
	if len(pod.Containers) > 0 {
		d.line(0, "Network", strings.TrimSpace(string(pod.NetworkMode)+" "+pod.NetworkType))
		d.section(0, "Containers")
		for i, c := range pod.Containers {
			d.section(1, fmt.Sprintf("[%d] %s", i, c.Image))
			d.line(2, "Command", strings.TrimSpace(c.Command+" "+strings.Join(c.Args, " ")))
			d.line(2, "Resources", resourcesText(c.Resources))
			var ports []string
			for _, port := range c.Ports {
				ports = append(ports, portText(port.Name, port.Protocol, port.ContainerPort, port.HostPort))
			}
			d.line(2, "Ports", strings.Join(ports, ", "))
			d.line(2, "Health", healthText(c.HealthChecks))
		}
	}
}

// constraintText writes a constraint as conditions joined by "and" of
// alternatives joined by "or": "hostname UNIQUE and rack LIKE r[12]".
func constraintText(c *constraint.Constraint) string {
	if c == nil {
		return ""
	}
	var items []string
	for _, item := range c.IntersectionItems {
		items = append(items, unionText(item.UnionData))
	}
	return strings.Join(items, " and ")
}

func unionText(union []constraint.UnionData) string {
	var alternatives []string
	for _, u := range union {
		if len(u.Nested) > 0 {
			alternatives = append(alternatives, unionText(u.Nested))
			continue
		}
		s := u.String()
		switch {
		case u.Text != nil:
			s += " " + u.Text.Value
		case u.Set != nil:
			s += " {" + strings.Join(u.Set.Item, ",") + "}"
		case u.Scalar != nil:
			s += " " + strconv.FormatFloat(u.Scalar.Value, 'f', -1, 64)
		}
		alternatives = append(alternatives, s)
	}
	return strings.Join(alternatives, " or ")
}

func restartText(r manifest.RestartPolicy) string {
	s := string(r.Policy)
	var terms []string
	if r.Interval > 0 {
		terms = append(terms, fmt.Sprintf("after %ds", r.Interval))
	}
	if r.Backoff > 0 {
		terms = append(terms, fmt.Sprintf("+%ds per failure", r.Backoff))
	}
	if r.MaxTimes > 0 {
		terms = append(terms, fmt.Sprintf("at most %d times", r.MaxTimes))
	}
	if len(terms) > 0 {
		s += " (" + strings.Join(terms, ", ") + ")"
	}
	return s
}

func strategyText(s manifest.UpdateStrategy) string {
	text := string(s.Type)
	var terms []string
	if s.MaxUnavailable != nil {
		terms = append(terms, "maxUnavailable "+s.MaxUnavailable.String())
	}
	if s.MaxSurge != nil {
		terms = append(terms, "maxSurge "+s.MaxSurge.String())
	}
	if s.Partition > 0 {
		terms = append(terms, fmt.Sprintf("partition %d", s.Partition))
	}
	if s.RollingManually {
		terms = append(terms, "rollingManually")
	}
	if s.UpgradeDuration > 0 {
		terms = append(terms, fmt.Sprintf("upgradeDuration %ds", s.UpgradeDuration))
	}
	if s.InPlaceUpdateStrategy != nil && s.InPlaceUpdateStrategy.GracePeriodSeconds > 0 {
		terms = append(terms, fmt.Sprintf("in-place grace %ds", s.InPlaceUpdateStrategy.GracePeriodSeconds))
	}
	if s.Paused {
		terms = append(terms, "paused")
	}
	if c := s.Canary; c != nil && len(c.Steps) > 0 {
		var steps []string
		for _, step := range c.Steps {
			switch {
			case step.Partition != nil:
				steps = append(steps, fmt.Sprintf("partition %d", *step.Partition))
			case step.Pause != nil && step.Pause.Duration != nil:
				steps = append(steps, fmt.Sprintf("pause %ds", *step.Pause.Duration))
			case step.Pause != nil:
				steps = append(steps, "pause")
			case step.Hook != nil:
				steps = append(steps, "hook "+step.Hook.TemplateName)
			}
		}
		terms = append(terms, "canary: "+strings.Join(steps, " → "))
	}
	if len(terms) > 0 {
		text += " (" + strings.Join(terms, ", ") + ")"
	}
	return text
}

func resourcesText(r manifest.Resources) string {
	var terms []string
	if r.Limits.CPU != "" {
		terms = append(terms, "cpu "+string(r.Limits.CPU))
	}
	if r.Limits.Memory != "" {
		terms = append(terms, "memory "+string(r.Limits.Memory)+" MB")
	}
	return strings.Join(terms, ", ")
}

// portText shows a port: "http/HTTP 8080 → host any".
func portText(name, protocol string, containerPort, hostPort int) string {
	s := name
	if protocol != "" {
		s += "/" + protocol
	}
	if containerPort > 0 {
		s += " " + strconv.Itoa(containerPort) + " →"
	}
	if hostPort > 0 {
		return s + " host " + strconv.Itoa(hostPort)
	}
	return s + " host any"
}

func healthText(checks []manifest.HealthCheck) string {
	var out []string
	for _, h := range checks {
		s := string(h.Type)
		switch {
		case h.HTTP != nil:
			s += fmt.Sprintf(" %s on %s", cmp.Or(h.HTTP.Path, "/"), checkPort(h.HTTP.PortName, h.HTTP.Port))
		case h.TCP != nil:
			s += " on " + checkPort(h.TCP.PortName, h.TCP.Port)
		case h.Command != nil:
			s += " " + strconv.Quote(h.Command.Value)
		}
		s += fmt.Sprintf(" every %ds", h.IntervalSeconds)
		if h.ConsecutiveFailures > 0 {
			s += fmt.Sprintf(", %d failures kill", h.ConsecutiveFailures)
		}
		out = append(out, s)
	}
	return strings.Join(out, "; ")
}

func checkPort(name string, port int) string {
	if name != "" {
		return name
	}
	return strconv.Itoa(port)
}

func (d *describer) rollout(ro *apiv1.RolloutView) {
	d.section(0, "Rollout")
	d.line(1, "Phase", string(ro.Phase))
	d.line(1, "Message", ro.Message)
	revisions := fmt.Sprintf("current %d, update %d", ro.CurrentRevision, ro.UpdateRevision)
	if ro.Cause != "" {
		revisions += " (" + string(ro.Cause) + ")"
	}
	if ro.RolledBackTo > 0 {
		revisions += fmt.Sprintf(", the spec of revision %d", ro.RolledBackTo)
	}
	d.line(1, "Revisions", revisions)
	d.line(1, "Progress", fmt.Sprintf("%d/%d updated, %d updated ready, %d ready, %d total", ro.Updated, ro.Replicas, ro.UpdatedReady, ro.Ready, ro.Total))
	if ro.Steps > 0 {
		d.line(1, "Canary", fmt.Sprintf("step %d/%d, partition %d", min(ro.CurrentStep+1, ro.Steps), ro.Steps, ro.Partition))
	}
	d.line(1, "Budget", fmt.Sprintf("maxUnavailable %d, maxSurge %d", ro.MaxUnavailable, ro.MaxSurge))
	if ro.Aborted {
		d.line(1, "Aborted", ro.AbortReason)
	}
	if w := ro.Wait; w != nil {
		text := fmt.Sprintf("%s since %s", w.Kind, d.when(w.Since))
		switch {
		case !w.Until.IsZero():
			text += ", until " + w.Until.UTC().Format(time.RFC3339)
		case w.Kind == "hook":
			text += ": the hook run's verdict"
		default:
			text += ": promote to go on"
		}
		d.line(1, "Waiting", text)
	}
	if len(ro.Conditions) > 0 {
		d.section(1, "Conditions")
		d.table(2, tableOf(ro.Conditions, []column[apiv1.Condition]{
			{header: "TYPE", value: func(c apiv1.Condition) string { return c.Type }},
			{header: "STATUS", value: func(c apiv1.Condition) string { return c.Status }},
			{header: "REASON", value: func(c apiv1.Condition) string { return c.Reason }},
			{header: "MESSAGE", value: func(c apiv1.Condition) string { return c.Message }},
		}, false, nil))
	}
}

// instanceDetails writes what an instance's table row leaves out, when
// there is any: why it is pending, its update, move or PreDeleteHook
// wait, its remote checks, its tasks. A heading, when given, goes above.
func (d *describer) instanceDetails(level int, heading string, inst apiv1.InstanceView) {
	if inst.Pending == nil && inst.Message == "" && inst.Update == nil && inst.Move == nil && inst.PreDelete == nil &&
		len(inst.RemoteChecks) == 0 && len(inst.Tasks) == 0 {
		return
	}
	if heading != "" {
		d.section(level, heading)
		level++
	}
	if p := inst.Pending; p != nil {
		text := pendingSummary(p)
		if !p.LastEvaluated.IsZero() {
			text += fmt.Sprintf(" (evaluated %s ago)", age(d.now, p.LastEvaluated))
		}
		d.line(level, "Pending", text)
	}
	d.line(level, "Message", inst.Message)
	if u := inst.Update; u != nil {
		text := fmt.Sprintf("%s to revision %d since %s", u.Mode, u.Version, d.when(u.Since))
		if u.Message != "" {
			text += ": " + u.Message
		}
		d.line(level, "Update", text)
		d.line(level, "Update error", u.Error)
	}
	if m := inst.Move; m != nil {
		text := fmt.Sprintf("%s from %s since %s", m.Reason, m.FromHost, d.when(m.Since))
		if m.ToHost != "" {
			text += " to " + m.ToHost
		}
		if s := m.Successor; s != nil {
			text += fmt.Sprintf("; successor %s %s on %s", s.TaskGroupID, taskState(s.State), cmp.Or(s.Host, "no agent yet"))
		}
		d.line(level, "Move", text)
	}
	if p := inst.PreDelete; p != nil {
		text := fmt.Sprintf("%s waits for hook run %s (attempt %d) since %s", p.Reason, p.Run, p.Attempt, d.when(p.Since))
		if p.Message != "" {
			text += ": " + p.Message
		}
		d.line(level, "PreDelete", text)
	}
	for _, rc := range inst.RemoteChecks {
		verdict := map[bool]string{true: "healthy", false: "unhealthy"}[rc.Healthy]
		if rc.Address != "" {
			verdict += " (probed " + rc.Address + ")"
		}
		if rc.Message != "" {
			verdict += ": " + rc.Message
		}
		d.line(level, "Remote check "+rc.Name, verdict)
	}
	if len(inst.Tasks) > 0 {
		d.section(level, "Tasks")
		d.table(level+1, tableOf(inst.Tasks, taskColumnsFor(inst.Tasks), false, nil))
	}
}

// instanceTask is a task of an instance, in a table of several
// instances' tasks.
type instanceTask struct {
	instance string
	apiv1.TaskView
}

// columnsOf makes columns of T show columns of the part of T that part
// returns.
func columnsOf[T, P any](cols []column[P], part func(T) P) []column[T] {
	out := make([]column[T], len(cols))
	for i, c := range cols {
		out[i] = column[T]{header: c.header, wide: c.wide, value: func(t T) string { return c.value(part(t)) }}
	}
	return out
}

// taskColumns show a task with what its executor reports: the pid, the
// container and the pod's address, the exit code once it exited.
var taskColumns = []column[apiv1.TaskView]{
	{header: "NAME", value: func(t apiv1.TaskView) string { return t.Name }},
	{header: "STATE", value: func(t apiv1.TaskView) string { return taskState(t.State) }},
	{header: "HEALTHY", value: func(t apiv1.TaskView) string { return optBool(t.Healthy) }},
	{header: "PID", value: func(t apiv1.TaskView) string {
		switch {
		case t.Container != nil && t.Container.Pid > 0:
			return strconv.Itoa(t.Container.Pid)
		case t.Process != nil && t.Process.Pid > 0:
			return strconv.Itoa(t.Process.Pid)
		}
		return ""
	}},
	{header: "CONTAINER", value: func(t apiv1.TaskView) string {
		if t.Container == nil {
			return ""
		}
		return strings.TrimSpace(shortID(t.Container.ID) + " " + t.Container.Status)
	}},
	{header: "IP", value: func(t apiv1.TaskView) string {
		if t.Container == nil {
			return ""
		}
		return t.Container.IPAddress
	}},
	{header: "EXIT", value: func(t apiv1.TaskView) string {
		var code *int
		switch {
		case t.Container != nil:
			code = t.Container.ExitCode
		case t.Process != nil:
			code = t.Process.ExitCode
		}
		if code == nil {
			return ""
		}
		return strconv.Itoa(*code)
	}},
	{header: "MESSAGE", value: func(t apiv1.TaskView) string { return t.Message }},
}

// taskColumnsFor leaves the container's columns out of a table of tasks
// none of which is a container.
func taskColumnsFor(tasks []apiv1.TaskView) []column[apiv1.TaskView] {
	if slices.ContainsFunc(tasks, func(t apiv1.TaskView) bool { return t.Container != nil }) {
		return taskColumns
	}
	return slices.DeleteFunc(slices.Clone(taskColumns), func(c column[apiv1.TaskView]) bool { return c.header == "CONTAINER" || c.header == "IP" })
}

// shortID is a container ID as docker ps shows it.
func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// describeInstance describes one instance of an application.
func describeInstance(w io.Writer, a apiv1.AppView, inst apiv1.InstanceView, events []eventView, now time.Time) {
	d := newDescriber(w, now)
	d.line(0, "Name", fmt.Sprintf("%s/%s/%d", a.Namespace, a.Name, inst.ID))
	d.line(0, "Application", fmt.Sprintf("%s %s/%s (revision %d)", a.Kind, a.Namespace, a.Name, a.Version))
	d.line(0, "Task group", inst.TaskGroupID)
	d.line(0, "State", instanceState(inst))
	d.line(0, "Ready", strconv.FormatBool(inst.Ready))
	d.line(0, "Healthy", optBool(inst.Healthy))
	d.line(0, "Remote healthy", optBool(inst.RemoteHealthy))
	d.line(0, "Revision", strconv.FormatUint(inst.Revision, 10))
	d.line(0, "Host", strings.TrimSpace(inst.Host+" "+inst.HostIP))
	d.line(0, "Agent", inst.Agent)
	d.line(0, "Ports", portList(inst.Ports))
	d.line(0, "Restarts", strconv.Itoa(inst.Restarts))
	if a := inst.Allocated; a != nil {
		d.line(0, "Allocated", strings.TrimSuffix(fmt.Sprintf("%s by %q since %s: %s", a.Source, a.By, d.when(a.Since), a.Note), ": "))
	}
	d.instanceDetails(0, "", inst)
	d.events(events)
	d.flush()
}

// maxEvents bounds the events a description shows (the latest).
const maxEvents = 20

func (d *describer) events(events []eventView) {
	d.section(0, "Events")
	if len(events) == 0 {
		fmt.Fprintln(d.out, "  <none>")
		return
	}
	if len(events) > maxEvents {
		events = events[len(events)-maxEvents:]
	}
	d.table(1, tableOf(events, []column[eventView]{
		{header: "EVENT", value: func(e eventView) string { return e.ID }},
		{header: "TYPE", value: func(e eventView) string { return e.Type }},
		{header: "OBJECT", value: func(e eventView) string { return e.Name }},
		{header: "MESSAGE", value: func(e eventView) string { return eventMessage(e) }},
	}, false, nil))
}

// eventMessage says in a line what an event tells of its object.
func eventMessage(e eventView) string {
	if e.Action == "delete" {
		return "deleted"
	}
	if e.Message != "" || len(e.Object) == 0 || string(e.Object) == "null" {
		return e.Message
	}
	switch e.Type {
	case "instance":
		var i apiv1.InstanceView
		if json.Unmarshal(e.Object, &i) != nil {
			break
		}
		s := instanceState(i)
		if i.Host != "" {
			s += " on " + i.Host
		}
		if i.Ready {
			s += ", ready"
		}
		if note := instanceNote(i); note != "" {
			s += ": " + note
		}
		return s
	case "app", "deployment", "daemonset":
		var a apiv1.AppView
		if json.Unmarshal(e.Object, &a) != nil {
			break
		}
		s := fmt.Sprintf("revision %d, %d instances: %s", a.Version, a.Instances, a.Status.State)
		if a.Status.Message != "" {
			s += ": " + a.Status.Message
		}
		return s
	case "rollout":
		var ro apiv1.RolloutView
		if json.Unmarshal(e.Object, &ro) != nil {
			break
		}
		return string(ro.Phase) + ": " + ro.Message
	case "hookrun":
		var h apiv1.HookRun
		if json.Unmarshal(e.Object, &h) != nil {
			break
		}
		return strings.TrimSuffix(h.Status.Phase+": "+h.Status.Message, ": ")
	case "agent":
		var a apiv1.AgentView
		if json.Unmarshal(e.Object, &a) != nil {
			break
		}
		return a.Hostname + " " + agentStatus(a)
	}
	return e.Action
}

// describeAgent describes an agent: what it is, whether it takes
// instances and why not, what runs on it.
func describeAgent(w io.Writer, a apiv1.AgentView, now time.Time) {
	d := newDescriber(w, now)
	d.line(0, "Name", a.Hostname)
	d.line(0, "ID", a.ID)
	d.line(0, "Status", agentStatus(a))
	d.line(0, "Schedulable", strconv.FormatBool(a.Schedulable))
	d.line(0, "Reason", a.Reason)
	var attrs []string
	for _, k := range slices.Sorted(maps.Keys(a.Attributes)) {
		attrs = append(attrs, k+"="+a.Attributes[k])
	}
	d.line(0, "Attributes", strings.Join(attrs, ", "))
	d.line(0, "Taints", strings.Join(a.Taints, ", "))
	if a.LastSeen != nil {
		d.line(0, "Last seen", d.when(*a.LastSeen))
	}
	if m := a.Master; m != nil {
		d.section(0, "Master")
		d.line(1, "Active", strconv.FormatBool(m.Active))
		d.line(1, "Deactivated", map[bool]string{true: "true"}[m.Deactivated])
		d.line(1, "Drain", m.Drain)
		d.line(1, "Total", fmt.Sprintf("cpus %s, mem %s MB, disk %s MB, %d ports",
			number(m.Total.CPUs), number(m.Total.MemMB), number(m.Total.DiskMB), m.Total.Ports))
	}
	if m := a.Maintenance; m != nil {
		text := "from " + m.Start.UTC().Format(time.RFC3339)
		if !m.End.IsZero() {
			text += " to " + m.End.UTC().Format(time.RFC3339)
		}
		if m.Answer != "" {
			text += ", inverse offer " + m.Answer
		}
		d.line(0, "Maintenance", text)
	}
	if len(a.Evictions) > 0 {
		d.section(0, "Evictions (NoExecute taints)")
		for _, ev := range a.Evictions {
			d.line(1, ev.Instance, "at "+ev.At.UTC().Format(time.RFC3339))
		}
	}
	if dr := a.Drain; dr != nil {
		d.section(0, "Drain")
		d.line(1, "State", dr.State)
		d.line(1, "Since", d.when(dr.Since))
		d.line(1, "Force", map[bool]string{true: "true"}[dr.Force])
		d.line(1, "Remaining", strconv.Itoa(dr.Remaining))
		d.line(1, "Moving", strings.Join(dr.Moving, ", "))
		for _, b := range dr.Blocked {
			d.line(1, "Blocked", b.Instance+": "+b.Why)
		}
		d.line(1, "Kept", strings.Join(dr.Kept, ", "))
	}
	d.line(0, "Used", fmt.Sprintf("cpus %s, mem %s MB", number(a.Used.CPUs), number(a.Used.MemMB)))
	d.section(0, "Instances")
	switch {
	case len(a.Instances) == 0 && a.Others == 0:
		fmt.Fprintln(w, "  <none>")
	case len(a.Instances) > 0:
		d.table(1, tableOf(a.Instances, []column[apiv1.AgentInstance]{
			{header: "INSTANCE", value: func(i apiv1.AgentInstance) string { return fmt.Sprintf("%s/%d", i.App, i.Index) }},
			{header: "TASKGROUP", value: func(i apiv1.AgentInstance) string { return i.ID }},
			{header: "PHASE", value: func(i apiv1.AgentInstance) string { return i.Phase }},
			{header: "MOVE", value: func(i apiv1.AgentInstance) string {
				if i.Successor {
					return "successor"
				}
				return i.Move
			}},
		}, false, nil))
	}
	if a.Others > 0 {
		fmt.Fprintf(w, "  %d more of namespaces you may not read\n", a.Others)
	}
	d.flush()
}

// describeHookRun describes a hook run: its template and arguments, who
// waits for it, and each metric's measurements.
func describeHookRun(w io.Writer, h apiv1.HookRun, now time.Time) {
	d := newDescriber(w, now)
	d.line(0, "Name", h.Name)
	d.line(0, "Namespace", h.Namespace)
	d.line(0, "Template", h.Spec.TemplateName)
	var args []string
	for _, a := range h.Spec.Args {
		args = append(args, a.Name+"="+a.Value)
	}
	d.line(0, "Args", strings.Join(args, ", "))
	d.line(0, "Owner", hookRunOwner(h))
	d.line(0, "Phase", h.Status.Phase)
	d.line(0, "Message", h.Status.Message)
	d.line(0, "Terminate", map[bool]string{true: "requested"}[h.Spec.Terminate])
	d.line(0, "Started", d.when(h.Status.StartedAt))
	d.line(0, "Finished", d.when(h.Status.FinishedAt))
	d.section(0, "Metrics")
	for _, m := range h.Status.MetricResults {
		d.section(1, m.Name)
		d.line(2, "Phase", m.Phase)
		d.line(2, "Message", m.Message)
		d.line(2, "Measured", fmt.Sprintf("%d: %d successful, %d failed, %d inconclusive; %d errors",
			m.Count, m.Successful, m.Failed, m.Inconclusive, m.Error))
		if len(m.Measurements) > 0 {
			d.table(2, tableOf(m.Measurements, []column[apiv1.Measurement]{
				{header: "AGE", value: func(x apiv1.Measurement) string { return age(now, x.StartedAt) }},
				{header: "PHASE", value: func(x apiv1.Measurement) string { return x.Phase }},
				{header: "VALUE", value: func(x apiv1.Measurement) string { return x.Value }},
				{header: "MESSAGE", value: func(x apiv1.Measurement) string { return x.Message }},
			}, false, nil))
		}
	}
	d.flush()
}

// describeObject describes the other kinds: their name, times and the
// rest of what the API shows, as YAML.
func describeObject(w io.Writer, raw []byte, now time.Time) error {
	var head struct {
		Name      string    `json:"name"`
		Namespace string    `json:"namespace"`
		Kind      string    `json:"kind"`
		CreatedAt time.Time `json:"createdAt"`
		UpdatedAt time.Time `json:"updatedAt"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return err
	}
	var rest map[string]any
	if err := json.Unmarshal(raw, &rest); err != nil {
		return err
	}
	for _, k := range []string{"name", "namespace", "kind", "createdAt", "updatedAt", "revision"} {
		delete(rest, k)
	}
	d := newDescriber(w, now)
	d.line(0, "Name", head.Name)
	d.line(0, "Namespace", head.Namespace)
	d.line(0, "Kind", head.Kind)
	d.line(0, "Created", d.when(head.CreatedAt))
	d.line(0, "Updated", d.when(head.UpdatedAt))
	d.flush()
	out, err := yaml.Marshal(rest)
	if err != nil {
		return err
	}
	_, err = w.Write(out)
	return err
}
