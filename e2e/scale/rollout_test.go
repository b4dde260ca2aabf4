package scale_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"
)

// update is a rollout the benchmark measures: the deployments' update
// strategy, and the change of their template that their new version makes.
type update struct {
	name     string
	strategy string
	change   func(task map[string]any)
}

// The updates: every deployment moves from revision 1 to 2 with at most
// 10 % of its instances unavailable; the rolling and in-place ones change
// an environment variable, the hot patch a CPU limit (what a hot patch can
// apply without a restart).
var updates = []update{
	{"rolling", `{"type":"RollingUpdate","maxUnavailable":"10%","maxSurge":0}`, setBuild},
	{"inplace", `{"type":"InplaceUpdate","maxUnavailable":"10%","inPlaceUpdateStrategy":{"gracePeriodSeconds":0}}`, setBuild},
	{"hotpatch", `{"type":"HotPatchUpdate","maxUnavailable":"10%"}`, func(task map[string]any) {
		task["resources"].(map[string]any)["limits"].(map[string]any)["cpu"] = "0.04"
	}},
}

func setBuild(task map[string]any) {
	env, _ := task["env"].([]any)
	task["env"] = append(env, map[string]any{"name": "BUILD", "value": "2"})
}

// Rollouts at fleet size: the shape's applications as deployments, all
// running, then a new version of each, until every rollout is Completed
// (the targets at 100k: rolling 3 minutes, in place 2, hot patch 1). The
// simulated executors answer updates as bcs's do (simexec);
// -schedprofile profiles bcs-scheduler from the first PUT. It reports:
//
//	s-to-completed      seconds from the first PUT until every rollout was Completed with every instance ready (-cap when not)
//	completed           deployments whose rollout completed
//	worst-unavailable   the most instances of one deployment not ready at a sample, over its maxUnavailable (≤ 1 keeps the budget)
//	launches/s, resent  as BenchmarkRunning reports them, over the rollout
func BenchmarkRollout10kOn100Agents(b *testing.B) {
	benchmarkRollouts(b, shape{agents: 100, apps: 10, instances: 1000})
}

func BenchmarkRollout100kOn5kAgents(b *testing.B) {
	benchmarkRollouts(b, shape{agents: 5000, apps: 100, instances: 1000})
}

func benchmarkRollouts(b *testing.B, sh shape) {
	for _, u := range updates {
		b.Run(u.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				sys := startSystem(b, sh)
				deploy := func(sh shape, i int) (string, []byte) { return "/v1/deployments", deployment(b, sh, i, u, false) }
				if res := sys.run(b, *capFlag, deploy); res.capped {
					b.Fatalf("only %d of %d instances running before the rollout", res.running, sh.apps*sh.instances)
				}
				before := sys.cluster.Stats()
				profiled := make(chan error, 1)
				if *profileFlag != "" {
					go func() { profiled <- sys.profile(*profileFlag, *profileTime) }()
				} else {
					profiled <- nil
				}
				b.StartTimer()
				start := time.Now()
				for i := range sh.apps {
					if code, body := sys.call(http.MethodPut, "/v1/deployments/bench/"+appName(i), deployment(b, sh, i, u, true)); code != http.StatusOK {
						b.Fatalf("PUT %s: %d %s", appName(i), code, body)
					}
				}
				completed, worst := sys.awaitRollouts(b, start.Add(*capFlag))
				b.StopTimer()
				elapsed := time.Since(start)
				if err := <-profiled; err != nil {
					b.Error(err)
				}
				after := sys.cluster.Stats()
				sys.stop()
				b.ReportMetric(elapsed.Seconds(), "s-to-completed")
				b.ReportMetric(float64(completed), "completed")
				b.ReportMetric(worst, "worst-unavailable")
				b.ReportMetric(float64(after.TasksLaunched-before.TasksLaunched)/elapsed.Seconds(), "launches/s")
				b.ReportMetric(float64(after.StatusUpdatesResent-before.StatusUpdatesResent), "resent")
			}
		})
	}
}

// deployment is application i of the shape as a deployment updated by u,
// at its second version when updated.
func deployment(b *testing.B, sh shape, i int, u update, updated bool) []byte {
	var d map[string]any
	if err := json.Unmarshal(manifest(sh, i), &d); err != nil {
		b.Fatal(err)
	}
	d["kind"] = "deployment"
	spec := d["spec"].(map[string]any)
	spec["updateStrategy"] = json.RawMessage(u.strategy)
	if updated {
		template := spec["template"].(map[string]any)["spec"].(map[string]any)
		tasks, ok := template["processes"].([]any)
		if !ok {
			tasks = template["containers"].([]any)
		}
		u.change(tasks[0].(map[string]any))
	}
	out, err := json.Marshal(d)
	if err != nil {
		b.Fatal(err)
	}
	return out
}

// awaitRollouts samples every deployment's rollout every 2 s until all
// completed at revision 2 with every instance ready, or deadline: it
// returns how many did and the worst sample of instances not ready over a
// deployment's maxUnavailable (10 % of its instances). A sample reads
// each deployment's records from etcd, which weighs on the run measured.
func (sys *system) awaitRollouts(b *testing.B, deadline time.Time) (completed int, worst float64) {
	maxUnavailable := float64(sys.shape.instances / 10)
	done := make([]bool, sys.shape.apps)
	for lastProgress := time.Now(); ; time.Sleep(2 * time.Second) {
		completed = 0
		for i := range done {
			if !done[i] {
				ro := sys.rollout(b, appName(i))
				worst = max(worst, float64(ro.Replicas-ro.Ready)/maxUnavailable)
				done[i] = ro.Phase == "Completed" && ro.UpdateRevision == 2 && ro.Ready == ro.Replicas && ro.Total == ro.Replicas
			}
			if done[i] {
				completed++
			}
		}
		if completed == len(done) || time.Now().After(deadline) {
			return completed, worst
		}
		if time.Since(lastProgress) >= 10*time.Second {
			st := sys.cluster.Stats()
			fmt.Fprintf(os.Stderr, "%d of %d rollouts completed; %d launched, %d status updates (%d resent)\n",
				completed, len(done), st.TasksLaunched, st.StatusUpdates, st.StatusUpdatesResent)
			lastProgress = time.Now()
		}
	}
}

// rolloutStatus is the part of a deployment's rollout status the
// benchmark reads.
type rolloutStatus struct {
	Phase          string `json:"phase"`
	Replicas       int    `json:"replicas"`
	Ready          int    `json:"ready"`
	Total          int    `json:"total"`
	UpdateRevision int    `json:"updateRevision"`
}

// rollout reads a deployment's rollout status, its instances left out.
func (sys *system) rollout(b *testing.B, name string) rolloutStatus {
	code, body := sys.call(http.MethodGet, "/v1/deployments/bench/"+name+"?summary=true", nil)
	if code != http.StatusOK {
		b.Fatalf("GET %s: %d %s", name, code, body)
	}
	var view struct {
		Status struct {
			Rollout *rolloutStatus `json:"rollout"`
		} `json:"status"`
	}
	if err := json.Unmarshal(body, &view); err != nil || view.Status.Rollout == nil {
		b.Fatalf("GET %s: %v, %s", name, err, body)
	}
	return *view.Status.Rollout
}
