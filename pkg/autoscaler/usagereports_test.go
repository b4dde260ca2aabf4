package autoscaler_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/autoscaler"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest/manifesttest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// storedFleet is the scheduler's side read from the registry: each
// workload's record as stored, its instances ready, requesting a core
// and reporting nothing.
type storedFleet struct {
	*fleet
}

func (f storedFleet) Fleet(ctx context.Context, refs []autoscaler.Ref) ([]autoscaler.Fleet, error) {
	out := make([]autoscaler.Fleet, len(refs))
	for i, ref := range refs {
		app, err := f.reg.GetApp(ctx, ref.Namespace, ref.Name)
		if err != nil {
			out[i].Problem = err.Error()
			continue
		}
		out[i].App, out[i].Replicas = app, app.Instances
		for _, id := range registry.WantedIDs(app.Instances, app.Removed) {
			out[i].Instances = append(out[i].Instances, autoscaler.Instance{ID: id, TaskGroupID: registry.TaskGroupID(ns, ref.Name, "", id, 1),
				Ready: true, RunningSince: t0, CPUs: 1, MemMB: 64})
		}
	}
	return out, nil
}

func cpuAutoscaler(name, target string) *manifest.Autoscaler {
	return &manifest.Autoscaler{APIVersion: "v4", KindName: "autoscaler", Metadata: manifest.ObjectMeta{Name: name, Namespace: ns},
		Spec: manifest.AutoscalerSpec{Target: manifest.ScaleTarget{Kind: manifest.KindProcess, Name: target}, MaxReplicas: 5, IntervalSeconds: 10,
			Metrics: []manifest.AutoscaleMetric{{Type: manifest.MetricResource,
				Resource: &manifest.ResourceMetric{Name: "cpu", TargetAverageUtilization: intp(50)}}}}}
}

// The controller turns on the usage reports of the workload its
// resource metric reads, says it awaits the first ones, and turns off
// those no resource metric reads: one a past leader left on (its first
// round's sweep), one whose autoscaler is deleted (at once) and one
// turned on by hand (the sweep every few minutes).
func TestUsageReportsFollowResourceMetrics(t *testing.T) {
	ctx := context.Background()
	e := openEnv(t, map[string]int{}, cpuAutoscaler("game", "gamesvc"))
	for _, name := range []string{"gamesvc", "lobby"} {
		p := manifesttest.Process()
		p.Metadata.Name, p.Spec.Instance = name, 2
		if _, err := e.reg.CreateApp(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.reg.SetUsageReport(ctx, ns, "lobby", true, 0); err != nil {
		t.Fatal(err)
	}
	e.fleet = &fleet{replicas: map[string]int{}, reg: e.reg}
	e.source = storedFleet{e.fleet}
	e.start()
	defer e.stop()
	reporting := func(want ...string) {
		t.Helper()
		apps, err := e.reg.AppsReportingUsage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, a := range apps {
			got = append(got, a.Name)
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("usage reports on for %v, want %v", got, want)
		}
	}
	reporting("gamesvc") // on for the new autoscaler's target, off for what no metric reads

	e.tick()
	metric := e.status("game").Metrics[0]
	if !strings.Contains(metric.Message, "waiting for the first usage reports") {
		t.Errorf("cpu metric %+v just after reports were turned on; want it waiting for the first", metric)
	}

	if _, err := e.reg.SetUsageReport(ctx, ns, "lobby", true, 0); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(5 * time.Minute)
	e.wait()
	reporting("gamesvc")

	if err := e.reg.DeleteAutoscaler(ctx, ns, "game"); err != nil {
		t.Fatal(err)
	}
	e.tick()
	reporting()
}
