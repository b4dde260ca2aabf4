package bcsctl

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sse "github.com/tmaxmax/go-sse"

	"github.com/bcs-mesos/bcs-mesos/pkg/apiv1"
	"github.com/bcs-mesos/bcs-mesos/pkg/strictjson"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.golden with what the code prints now")

// The inputs are real API views: testdata/views holds what a
// bcs-scheduler --dev answered (testdata/capture.sh made them), so the
// tables and descriptions are checked against the API as it is.

// capturedAt is the time the views were captured: ages are counted
// from it.
func capturedAt(t *testing.T) time.Time {
	t.Helper()
	data, err := os.ReadFile("testdata/views/captured-at")
	if err != nil {
		t.Fatal(err)
	}
	now, err := time.Parse(time.RFC3339, strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	return now
}

func view(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "views", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// items reads the list named key of a captured list answer.
func items(t *testing.T, file, key string) []json.RawMessage {
	t.Helper()
	var list map[string][]json.RawMessage
	if err := json.Unmarshal(view(t, file), &list); err != nil {
		t.Fatal(err)
	}
	return list[key]
}

func decode[T any](t *testing.T, data []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// capturedEvents reads the captured event stream of namespace demo.
func capturedEvents(t *testing.T) []eventView {
	t.Helper()
	var events []eventView
	for ev, err := range sse.Read(bytes.NewReader(view(t, "events-demo.txt")), &sse.ReadConfig{MaxEventSize: 1 << 20}) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Data == "" {
			continue
		}
		e := decode[eventView](t, []byte(ev.Data))
		e.data = ev.Data
		events = append(events, e)
	}
	return events
}

// golden compares got with testdata/golden/name.golden, or rewrites it
// with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name+".golden")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from %s (run with -update to accept):\n--- got\n%s\n--- want\n%s", name, path, got, want)
	}
}

// Every kind's table, as get prints it, with -o wide and -A.
func TestTablesGolden(t *testing.T) {
	now := capturedAt(t)
	apps := append(items(t, "apps.json", "apps"), items(t, "deployments.json", "deployments")...)
	var instances []json.RawMessage
	for _, raw := range apps {
		a := decode[appView](t, raw)
		for _, inst := range a.Status.Instances {
			data, _ := json.Marshal(instanceRow{Namespace: a.Namespace, App: a.Name, instanceView: inst})
			instances = append(instances, data)
		}
	}
	for _, c := range []struct {
		name, kind string
		items      []json.RawMessage
		opts       tableOptions
	}{
		{"get-apps", "apps", items(t, "apps.json", "apps"), tableOptions{}},
		{"get-apps-wide-all", "apps", items(t, "apps.json", "apps"), tableOptions{wide: true, allNamespaces: true}},
		{"get-deployments", "deployments", items(t, "deployments.json", "deployments"), tableOptions{}},
		{"get-instances", "instances", instances, tableOptions{}},
		{"get-instances-wide", "instances", instances, tableOptions{wide: true}},
		{"get-agents", "agents", items(t, "agents.json", "agents"), tableOptions{}},
		{"get-agents-wide", "agents", items(t, "agents.json", "agents"), tableOptions{wide: true}},
		{"get-agents-of-others", "agents", othersOnly(t, items(t, "agents.json", "agents")), tableOptions{}},
		{"get-hookruns-wide", "hookruns", items(t, "hookruns.json", "hookruns"), tableOptions{wide: true}},
		{"get-hooktemplates", "hooktemplates", items(t, "hooktemplates.json", "hooktemplates"), tableOptions{}},
		{"get-configmaps", "configmaps", items(t, "configmaps.json", "configmaps"), tableOptions{}},
		{"get-secrets", "secrets", items(t, "secrets.json", "secrets"), tableOptions{allNamespaces: true}},
		{"get-depends", "depends", items(t, "depends.json", "depends"), tableOptions{}},
		{"get-notifies", "notifies", items(t, "notifies.json", "notifies"), tableOptions{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := resourceNamed(c.kind)
			if err != nil {
				t.Fatal(err)
			}
			c.opts.now = now
			tab, err := r.table(c.items, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := tab.write(&out, ""); err != nil {
				t.Fatal(err)
			}
			golden(t, c.name, out.Bytes())
		})
	}
}

// othersOnly is agents as a caller who may read none of their instances'
// namespaces gets them: every instance counted in others, none named.
func othersOnly(t *testing.T, agents []json.RawMessage) []json.RawMessage {
	t.Helper()
	var out []json.RawMessage
	for _, raw := range agents {
		var a map[string]any
		if err := json.Unmarshal(raw, &a); err != nil {
			t.Fatal(err)
		}
		a["others"], a["instances"] = len(a["instances"].([]any)), []any{}
		data, _ := json.Marshal(a)
		out = append(out, data)
	}
	return out
}

// eventsOf keeps the captured events of one application, as describe
// asks the stream for them.
func eventsOf(events []eventView, app string) []eventView {
	var out []eventView
	last := map[string]string{}
	for _, e := range events {
		if e.Type == "hookrun" || e.Name != app && !strings.HasPrefix(e.Name, app+"/") {
			continue
		}
		key, msg := e.Type+" "+e.Name, eventMessage(e)
		if last[key] != msg {
			last[key] = msg
			out = append(out, e)
		}
	}
	return out
}

// printPlan prints a captured plan as bcsctl plan does.
func printPlan(t *testing.T, b *bytes.Buffer, file string) {
	t.Helper()
	p := decode[planView](t, view(t, file))
	b.WriteString(planHeading(p) + "\n")
	if err := writePlan(b, p, "  "); err != nil {
		t.Fatal(err)
	}
}

// describe shows a spec summary, the rollout, the instances
// with why one is pending and the recent events; of agents and hook
// runs, what keeps an agent from taking instances and each metric's
// measurements; a plan, what it would do to each instance and why one
// would wait.
func TestDescribeGolden(t *testing.T) {
	now := capturedAt(t)
	events := capturedEvents(t)
	for _, c := range []struct {
		name   string
		render func(*bytes.Buffer)
	}{
		{"describe-deployment-canary-paused", func(b *bytes.Buffer) {
			describeWorkload(b, decode[appView](t, view(t, "deployment-fleet.json")), eventsOf(events, "fleet"), now)
		}},
		{"describe-process-pending-instance", func(b *bytes.Buffer) {
			describeWorkload(b, decode[appView](t, view(t, "app-crowded.json")), eventsOf(events, "crowded"), now)
		}},
		{"describe-application-containers", func(b *bytes.Buffer) {
			describeWorkload(b, decode[appView](t, view(t, "app-web.json")), nil, now)
		}},
		{"describe-instance", func(b *bytes.Buffer) {
			a := decode[appView](t, view(t, "deployment-fleet.json"))
			describeInstance(b, a, a.Status.Instances[2], eventsOf(events, "fleet/2"), now)
		}},
		{"describe-agent-cordoned", func(b *bytes.Buffer) {
			describeAgent(b, decode[agentView](t, view(t, "agent-3.json")), now)
		}},
		// A NoExecute taint moves two instances off: one at once, one
		// when its toleration's seconds are over.
		{"describe-agent-evicting", func(b *bytes.Buffer) {
			a := decode[agentView](t, view(t, "agent-3.json"))
			a.Taints = []string{"kernel=old:NoExecute"}
			a.Evictions = decode[agentView](t, []byte(`{"evictions": [{"instance": "demo/web/0", "at": "2026-11-22T08:00:00Z"},
				{"instance": "demo/fleet/2", "at": "2026-11-22T08:05:00Z"}]}`)).Evictions
			describeAgent(b, a, now)
		}},
		// As an operator of another namespace than demo reads it: demo's
		// instances counted, not named.
		{"describe-agent-others", func(b *bytes.Buffer) {
			a := decode[agentView](t, view(t, "agent-3.json"))
			a.Instances, a.Others = a.Instances[:1], len(a.Instances)-1
			describeAgent(b, a, now)
		}},
		{"describe-hookrun", func(b *bytes.Buffer) {
			describeHookRun(b, decode[hookRunView](t, view(t, "hookrun-age-by-hand.json")), now)
		}},
		{"describe-configmap", func(b *bytes.Buffer) {
			if err := describeObject(b, items(t, "configmaps.json", "configmaps")[0], now); err != nil {
				t.Fatal(err)
			}
		}},
		{"plan-pending", func(b *bytes.Buffer) { printPlan(t, b, "plan-crowded.json") }},
		{"plan-in-place", func(b *bytes.Buffer) { printPlan(t, b, "plan-fleet.json") }},
		{"rollout-history", func(b *bytes.Buffer) {
			versions := decode[struct {
				Versions []versionView `json:"versions"`
			}](t, view(t, "versions-fleet.json"))
			if err := historyTable(versions.Versions, now).write(b, ""); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			c.render(&out)
			golden(t, c.name, out.Bytes())
		})
	}
}

// A daemonset is listed and described as a workload: READY out of the
// agents it wants (agent-3 was cordoned: two), its instances by agent.
// Its views were captured after the others (testdata/capture.sh makes
// them all now), at views/daemonset-captured-at.
func TestDaemonsetGolden(t *testing.T) {
	data, err := os.ReadFile("testdata/views/daemonset-captured-at")
	if err != nil {
		t.Fatal(err)
	}
	now, err := time.Parse(time.RFC3339, strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	r, err := resourceNamed("ds")
	if err != nil {
		t.Fatal(err)
	}
	tab, err := r.table(items(t, "daemonsets.json", "daemonsets"), tableOptions{now: now})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := tab.write(&out, ""); err != nil {
		t.Fatal(err)
	}
	golden(t, "get-daemonsets", out.Bytes())
	out.Reset()
	describeWorkload(&out, decode[appView](t, view(t, "daemonset-logagent.json")), nil, now)
	golden(t, "describe-daemonset", out.Bytes())
}

// autoscalerViewOf decodes an autoscaler view strictly: a field the
// wire type lacks must fail here rather than be ignored.
func autoscalerViewOf(t *testing.T, data []byte) apiv1.AutoscalerView {
	t.Helper()
	var v apiv1.AutoscalerView
	if err := strictjson.Decode(data, &v); err != nil {
		t.Fatalf("autoscaler view: %v", err)
	}
	return v
}

// Autoscalers and allocated instances as a leader running the
// controller showed them (testdata/capture-autoscalers.sh, at
// views/autoscalers-captured-at): the quick start's deployment sized by
// a buffer in an open schedule window, two of its instances allocated,
// after a scale-down and a scale-up; the process held by a Prometheus
// metric its namespace may not reach; an autoscaler not decided yet.
func TestAutoscalerGolden(t *testing.T) {
	data, err := os.ReadFile("testdata/views/autoscalers-captured-at")
	if err != nil {
		t.Fatal(err)
	}
	now, err := time.Parse(time.RFC3339, strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	list := items(t, "autoscalers.json", "autoscalers")
	byName := map[string]apiv1.AutoscalerView{}
	for _, raw := range list {
		v := autoscalerViewOf(t, raw)
		byName[v.Name] = v
	}
	fleet := decode[appView](t, view(t, "deployment-fleet-autoscaled.json"))
	var instances []json.RawMessage
	for _, inst := range fleet.Status.Instances {
		data, _ := json.Marshal(instanceRow{Namespace: fleet.Namespace, App: fleet.Name, instanceView: inst})
		instances = append(instances, data)
	}
	for _, c := range []struct {
		name, kind string
		items      []json.RawMessage
		opts       tableOptions
	}{
		{"get-autoscalers", "autoscalers", list, tableOptions{}},
		{"get-autoscalers-wide-all", "hpa", list, tableOptions{wide: true, allNamespaces: true}},
		{"get-instances-allocated", "instances", instances, tableOptions{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := resourceNamed(c.kind)
			if err != nil {
				t.Fatal(err)
			}
			c.opts.now = now
			tab, err := r.table(c.items, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := tab.write(&out, ""); err != nil {
				t.Fatal(err)
			}
			golden(t, c.name, out.Bytes())
		})
	}
	for _, c := range []struct {
		name   string
		render func(*bytes.Buffer)
	}{
		// Scaled down (the instance removed named) and up again by its
		// buffer, in a window that set the maximum.
		{"describe-autoscaler", func(b *bytes.Buffer) {
			describeAutoscaler(b, autoscalerViewOf(t, view(t, "autoscaler-fleet.json")), now)
		}},
		// The size held: its metric cannot be read.
		{"describe-autoscaler-held", func(b *bytes.Buffer) { describeAutoscaler(b, byName["lobby"], now) }},
		// Before the leader's first decision.
		{"describe-autoscaler-undecided", func(b *bytes.Buffer) { describeAutoscaler(b, byName["arena"], now) }},
		{"describe-instance-allocated", func(b *bytes.Buffer) {
			describeInstance(b, fleet, fleet.Status.Instances[0], nil, now)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			c.render(&out)
			golden(t, c.name, out.Bytes())
		})
	}
	if byName["arena"].Status != nil || byName["lobby"].Status == nil || fleet.Status.Instances[0].Allocated == nil {
		t.Fatalf("the views are not of the states the goldens name: arena %+v, lobby %+v, fleet/0 %+v",
			byName["arena"].Status, byName["lobby"].Status, fleet.Status.Instances[0].Allocated)
	}
}
