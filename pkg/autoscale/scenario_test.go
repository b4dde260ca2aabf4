package autoscale_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the windows' zones, whatever the machine has

	"github.com/cockroachdb/datadriven"

	"github.com/bcs-mesos/bcs-mesos/pkg/autoscale"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
)

// TestScenarios runs every testdata/*.txt script (datadriven: a command,
// "----", what it printed). Commands:
//
//	now 2026-01-05T18:59:00+08:00   set the clock (default 2026-01-05T00:00:00Z, a Monday)
//	tick 15s                        advance it
//	spec                            the autoscaler's spec (JSON, the input)
//	fleet replicas=10 ready=8 allocated=(1,2) cpu=0.9 …
//	reading NAME=VALUE | reading NAME err=(…)
//	decide                          decide, print, and apply the decision
//	victims k=3                     who a scale-down of k would remove
//	record                          the stored record, as JSON
//	restart                         a new leader: the record rebuilt from its JSON alone
//	new                             a new autoscaler and fleet: nothing kept
//
// fleet keys (each ID list in parentheses): replicas (the target's size;
// IDs 0…n−1), problem=(why), ordererr=(why the order's values failed),
// reportson=now (usage reports turned on now; reportson=() long ago), ready (how many of the lowest IDs are ready; the
// default all), notrunning, nosample, new (running for 1 s), going,
// allocated, cpu and mem (use per instance, one value or one per ID),
// request and memreq (per instance), values (ID:value, the scale-down
// order). A decision that acts scales the fleet: a scale-up adds ready
// instances with the lowest free IDs, a scale-down removes Victims'.
func TestScenarios(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txt")
	if len(files) == 0 {
		t.Fatal("no scenario scripts")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			h := newHarness()
			datadriven.RunTest(t, file, func(t *testing.T, d *datadriven.TestData) string {
				out, err := h.run(d)
				if err != nil {
					t.Fatalf("%s: %v", d.Pos, err)
				}
				return out
			})
		})
	}
}

var scriptEpoch = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)

// harness is the world an autoscaler decides in: a clock, a target, its
// instances and the readings; and the one thing the autoscaler keeps,
// its record.
type harness struct {
	now      time.Time
	spec     autoscale.Spec
	record   manifest.AutoscalerStatus
	target   autoscale.Target
	ids      map[int]bool
	attrs    map[string]map[int]string // fleet key → ID → value ("*": every ID)
	readings map[string]autoscale.Reading
	names    []string // the reading metrics' names, in spec order
	// orderProblem: the scale-down order's values cannot be read.
	orderProblem string
	// reportsOn is when the target's usage reports were turned on.
	reportsOn time.Time
	revisions int64
}

func newHarness() *harness {
	return &harness{now: scriptEpoch, ids: map[int]bool{}, attrs: map[string]map[int]string{}, readings: map[string]autoscale.Reading{}}
}

func (h *harness) run(d *datadriven.TestData) (string, error) {
	args := map[string][]string{}
	var positional []string
	for _, a := range d.CmdArgs {
		if len(a.Vals) == 0 {
			positional = append(positional, a.Key)
			continue
		}
		args[a.Key] = a.Vals
	}
	switch d.Cmd {
	case "now":
		t, err := time.Parse(time.RFC3339, positional[0])
		h.now = t
		return "", err
	case "tick":
		step, err := time.ParseDuration(positional[0])
		h.now = h.now.Add(step)
		return h.now.UTC().Format(time.RFC3339) + "\n", err
	case "spec":
		return h.specOf(d.Input), nil
	case "fleet":
		return "", h.fleet(args)
	case "reading":
		return "", h.reading(positional, args)
	case "decide":
		return h.decide(), nil
	case "victims":
		k, err := strconv.Atoi(args["k"][0])
		return printVictims(autoscale.Victims(h.candidates(), k)), err
	case "record":
		b, err := json.MarshalIndent(h.record, "", "  ")
		return string(b) + "\n", err
	case "new":
		*h = *newHarness()
		return "", nil
	case "restart":
		b, err := json.Marshal(h.record)
		if err != nil {
			return "", err
		}
		h.record = manifest.AutoscalerStatus{}
		if err := json.Unmarshal(b, &h.record); err != nil {
			return "", err
		}
		return fmt.Sprintf("a new leader read the record (%d recommendations, %d up and %d down events)\n",
			len(h.record.Recommendations), len(h.record.ScaleUp), len(h.record.ScaleDown)), nil
	}
	return "", fmt.Errorf("unknown command %q", d.Cmd)
}

func (h *harness) specOf(body string) string {
	doc := `{"apiVersion":"v4","kind":"autoscaler","metadata":{"name":"gamesvr","namespace":"demo"},"spec":` + body + `}`
	obj, err := manifest.Parse([]byte(doc))
	if err != nil {
		return "error: " + err.Error() + "\n"
	}
	a := obj.(*manifest.Autoscaler)
	if errs := autoscale.Check(a); len(errs) > 0 {
		return "error: " + errs.Error() + "\n"
	}
	spec, err := autoscale.SpecOf(a)
	if err != nil {
		return "error: " + strings.ReplaceAll(err.Error(), "; ", "\nerror: ") + "\n"
	}
	h.spec, h.revisions = spec, h.revisions+1
	h.names = nil
	for _, m := range spec.Metrics {
		if m.Type == manifest.MetricPrometheus || m.Type == manifest.MetricWeb {
			h.names = append(h.names, m.MetricName())
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "bounds %d…%d interval %s\n", spec.Min, spec.Max, spec.Interval)
	for _, r := range []struct {
		dir   string
		rules autoscale.Rules
	}{{"up", spec.Up}, {"down", spec.Down}} {
		var pols []string
		for _, p := range r.rules.Policies {
			pols = append(pols, fmt.Sprintf("%s %d/%ds", p.Type, p.Value, p.PeriodSeconds))
		}
		fmt.Fprintf(&b, "%s: window %s select %s policies [%s] tolerance %g\n", r.dir, r.rules.Window, r.rules.Select, strings.Join(pols, ", "), r.rules.Tolerance)
	}
	return b.String()
}

// fleet sets the target and its instances' attributes; each call
// replaces the attributes it names.
func (h *harness) fleet(args map[string][]string) error {
	for key, vals := range args {
		switch key {
		case "replicas":
			n, err := strconv.Atoi(vals[0])
			if err != nil {
				return err
			}
			h.target.Replicas, h.ids = n, map[int]bool{}
			for id := 0; id < n; id++ {
				h.ids[id] = true
			}
		case "problem":
			h.target.Problem = strings.Join(vals, ", ")
		case "ordererr":
			h.orderProblem = strings.Join(vals, ", ")
		case "reportson":
			h.reportsOn = time.Time{}
			if vals[0] == "now" {
				h.reportsOn = h.now
			}
		case "ready":
			h.attrs[key] = map[int]string{-1: vals[0]}
		case "cpu", "mem", "values", "request", "memreq":
			h.attrs[key] = perID(vals)
		case "notrunning", "nosample", "new", "going", "allocated":
			h.attrs[key] = map[int]string{}
			for _, v := range vals {
				if v == "" {
					continue
				}
				id, err := strconv.Atoi(v)
				if err != nil {
					return fmt.Errorf("%s: %v", key, err)
				}
				h.attrs[key][id] = "yes"
			}
		default:
			return fmt.Errorf("unknown fleet key %q", key)
		}
	}
	return nil
}

// perID reads one value for every ID, one value per ID in order, or
// ID:value pairs.
func perID(vals []string) map[int]string {
	out := map[int]string{}
	if len(vals) == 1 && vals[0] == "" {
		return out
	}
	if len(vals) == 1 && !strings.Contains(vals[0], ":") {
		out[-1] = vals[0]
		return out
	}
	for i, v := range vals {
		if id, val, ok := strings.Cut(v, ":"); ok {
			n, _ := strconv.Atoi(id)
			out[n] = val
			continue
		}
		out[i] = v
	}
	return out
}

func (h *harness) attr(key string, id int) (string, bool) {
	if v, ok := h.attrs[key][id]; ok {
		return v, true
	}
	v, ok := h.attrs[key][-1]
	return v, ok
}

func (h *harness) number(key string, id int, def float64) float64 {
	if v, ok := h.attr(key, id); ok {
		f, _ := strconv.ParseFloat(v, 64)
		return f
	}
	return def
}

func (h *harness) sortedIDs() []int {
	var ids []int
	for id := range h.ids {
		ids = append(ids, id)
	}
	for id := range h.attrs["going"] {
		if !h.ids[id] {
			ids = append(ids, id)
		}
	}
	sort.Ints(ids)
	return ids
}

func (h *harness) instances() []autoscale.Instance {
	readyCount := len(h.ids)
	if v, ok := h.attr("ready", -1); ok {
		readyCount, _ = strconv.Atoi(v)
	}
	var out []autoscale.Instance
	for i, id := range h.sortedIDs() {
		_, notRunning := h.attr("notrunning", id)
		_, noSample := h.attr("nosample", id)
		_, isNew := h.attr("new", id)
		_, going := h.attr("going", id)
		_, allocated := h.attr("allocated", id)
		inst := autoscale.Instance{ID: id, Going: going, Allocated: allocated,
			Request: autoscale.Resources{CPU: h.number("request", id, 1), MemMB: h.number("memreq", id, 1024)}}
		if !notRunning {
			inst.RunningSince = h.now.Add(-time.Hour)
			if isNew {
				inst.RunningSince = h.now.Add(-time.Second)
			}
			inst.Ready = i < readyCount
			_, hasCPU := h.attr("cpu", id)
			_, hasMem := h.attr("mem", id)
			if !noSample && (hasCPU || hasMem) {
				inst.Usage = &autoscale.Usage{At: h.now, Resources: autoscale.Resources{CPU: h.number("cpu", id, 0), MemMB: h.number("mem", id, 0)}}
			}
		}
		out = append(out, inst)
	}
	return out
}

func (h *harness) candidates() []autoscale.Candidate {
	var out []autoscale.Candidate
	for _, inst := range h.instances() {
		c := autoscale.Candidate{ID: inst.ID, Running: !inst.RunningSince.IsZero(), Ready: inst.Ready, Allocated: inst.Allocated, Going: inst.Going}
		if v, ok := h.attr("values", inst.ID); ok {
			f, _ := strconv.ParseFloat(v, 64)
			c.Value = &f
		}
		out = append(out, c)
	}
	return out
}

func (h *harness) reading(positional []string, args map[string][]string) error {
	if len(positional) != 1 && len(args) == 0 {
		return fmt.Errorf("reading NAME VALUE or reading NAME err=…")
	}
	if e, ok := args["err"]; ok {
		h.readings[positional[0]] = autoscale.Reading{Err: strings.Join(e, ", ")}
		return nil
	}
	for name, v := range args {
		f, err := strconv.ParseFloat(v[0], 64)
		if err != nil {
			return err
		}
		h.readings[name] = autoscale.Reading{Value: f}
	}
	return nil
}

func (h *harness) decide() string {
	in := autoscale.Input{Now: h.now, Spec: h.spec, Revision: h.revisions, Record: h.record, Target: h.target, Instances: h.instances(), OrderProblem: h.orderProblem,
		UsageReportsSince: h.reportsOn}
	for _, name := range h.names {
		r, ok := h.readings[name]
		if !ok {
			r = autoscale.Reading{Err: "no reading"}
		}
		in.Readings = append(in.Readings, r)
	}
	d := autoscale.Decide(in)
	var removed []manifest.RemovedInstance
	if d.NeedVictims > 0 {
		removed = autoscale.Victims(h.candidates(), d.NeedVictims)
		d.Remove(removed)
	}
	h.record = d.Record
	if d.Act {
		h.scale(d.Desired, removed)
	}
	return h.print(d, removed)
}

// scale applies a decision as the scheduler would: new instances take
// the lowest free IDs; a scale-down removes the chosen ones.
func (h *harness) scale(desired int, removed []manifest.RemovedInstance) {
	for _, r := range removed {
		delete(h.ids, r.ID)
	}
	for id := 0; len(h.ids) < desired; id++ {
		h.ids[id] = true
	}
	h.target.Replicas = desired
}

func (h *harness) print(d autoscale.Decision, removed []manifest.RemovedInstance) string {
	var b strings.Builder
	rec := d.Record
	verb := "holds"
	switch {
	case d.Act:
		verb = "scales"
	case d.Desired != rec.CurrentReplicas:
		verb = "would scale"
	}
	fmt.Fprintf(&b, "%s %d → %d (bounds %d…%d%s)\n", verb, rec.CurrentReplicas, d.Desired, rec.Bounds.Min, rec.Bounds.Max, printWindows(rec.Bounds))
	fmt.Fprintf(&b, "why: %s\n", rec.Decisions[len(rec.Decisions)-1].Why)
	for _, m := range rec.Metrics {
		fmt.Fprintf(&b, "metric %s %s target %g current %s proposal %s", m.Name, m.TargetType, m.Target, optFloat(m.Current), optInt(m.Proposal))
		if m.Message != "" {
			fmt.Fprintf(&b, " %q", m.Message)
		}
		b.WriteString("\n")
	}
	for _, c := range rec.Conditions {
		fmt.Fprintf(&b, "%s %s %s (since %s)\n", c.Type, c.Status, c.Reason, h.ago(c.LastTransitionTime))
	}
	switch {
	case len(removed) > 10:
		fmt.Fprintf(&b, "removes %d, first %s", len(removed), printVictims(removed[:3]))
	case len(removed) > 0:
		b.WriteString("removes " + printVictims(removed))
	}
	fmt.Fprintf(&b, "record: recommendations %s up %s down %s\n", h.printRecs(rec.Recommendations), h.printEvents(rec.ScaleUp), h.printEvents(rec.ScaleDown))
	return b.String()
}

func printWindows(b manifest.ScaleBounds) string {
	var s string
	for _, w := range b.Windows {
		s += fmt.Sprintf(", window %s until %s", w.Name, w.Until.Format("2006-01-02 15:04:05 MST"))
	}
	return s
}

func printVictims(v []manifest.RemovedInstance) string {
	parts := make([]string, len(v))
	for i, r := range v {
		parts[i] = fmt.Sprintf("%d (%s)", r.ID, r.Why)
	}
	return "[" + strings.Join(parts, ", ") + "]\n"
}

// age prints how long before now t was: "now", "-15s".
func (h *harness) age(t time.Time) string {
	if t.Equal(h.now) {
		return "now"
	}
	return "-" + h.now.Sub(t).String()
}

func (h *harness) ago(t time.Time) string {
	if t.Equal(h.now) {
		return "now"
	}
	return h.now.Sub(t).String() + " ago"
}

func (h *harness) printRecs(recs []manifest.Recommendation) string {
	parts := make([]string, len(recs))
	for i, r := range recs {
		parts[i] = fmt.Sprintf("%d@%s", r.Replicas, h.age(r.At))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func (h *harness) printEvents(events []manifest.ScaleChange) string {
	parts := make([]string, len(events))
	for i, e := range events {
		parts[i] = fmt.Sprintf("%d@%s", e.Change, h.age(e.At))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func optFloat(f *float64) string {
	if f == nil {
		return "-"
	}
	return strconv.FormatFloat(*f, 'g', 4, 64)
}

func optInt(n *int) string {
	if n == nil {
		return "-"
	}
	return strconv.Itoa(*n)
}
