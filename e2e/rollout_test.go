package e2e_test

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// rolloutView is what the rollout tests read of GET /v1/deployments/….
type rolloutView struct {
	Version int `json:"version"`
	Status  struct {
		State     string            `json:"state"`
		Instances []rolloutInstance `json:"instances"`
		Rollout   *struct {
			Phase           string `json:"phase"`
			Message         string `json:"message"`
			Replicas        int    `json:"replicas"`
			Updated         int    `json:"updated"`
			Ready           int    `json:"ready"`
			Total           int    `json:"total"`
			CurrentRevision int    `json:"currentRevision"`
			UpdateRevision  int    `json:"updateRevision"`
			Wait            *struct {
				Kind string `json:"kind"`
			} `json:"wait"`
			Conditions []struct {
				Type   string `json:"type"`
				Status string `json:"status"`
				Reason string `json:"reason"`
			} `json:"conditions"`
		} `json:"rollout"`
	} `json:"status"`
}

type rolloutInstance struct {
	ID          int               `json:"id"`
	TaskGroupID string            `json:"taskGroupID"`
	State       string            `json:"state"`
	Revision    int               `json:"revision"`
	Ready       bool              `json:"ready"`
	Agent       string            `json:"agent"`
	Ports       map[string]uint32 `json:"ports"`
	Update      *struct {
		Mode    string `json:"mode"`
		Version int    `json:"version"`
		Message string `json:"message"`
		Error   string `json:"error"`
	} `json:"update"`
}

func (s *system) deployment(name string) rolloutView {
	s.t.Helper()
	_, body := s.call("GET", "/v1/deployments/demo/"+name, nil)
	var v rolloutView
	_ = json.Unmarshal(body, &v)
	return v
}

// processDeployment is the process example as a deployment of n
// instances (no UNIQUE constraint: agents host several) with an update
// strategy; build sets the BUILD variable, pkg the package file.
func (s *system) processDeployment(name string, n int, strategy map[string]any, build, pkg string) []byte {
	s.t.Helper()
	var example map[string]any
	if err := json.Unmarshal(s.manifest("process.json", nil), &example); err != nil {
		s.t.Fatal(err)
	}
	procs := example["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["processes"].([]any)
	proc := procs[0].(map[string]any)
	proc["env"] = append(proc["env"].([]any), map[string]any{"name": "BUILD", "value": build})
	// Frequent checks: readiness follows an update quickly.
	check := proc["healthChecks"].([]any)[0].(map[string]any)
	check["delaySeconds"], check["intervalSeconds"], check["timeoutSeconds"] = 1, 2, 1
	uris := proc["uris"].([]any)
	uris[0].(map[string]any)["value"] = "${scheduler_url}/files/" + pkg
	d := map[string]any{
		"apiVersion": "v4", "kind": "deployment",
		"metadata":      map[string]any{"name": name, "namespace": "demo"},
		"restartPolicy": example["restartPolicy"], "killPolicy": map[string]any{"gracePeriod": 1},
		"spec": map[string]any{"instance": n, "updateStrategy": strategy,
			"template": map[string]any{"spec": map[string]any{"processes": procs}}},
	}
	out, _ := json.Marshal(d)
	return out
}

// packageVersion writes gamesvr-<version>.tar.gz: the example package
// with a VERSION file, which gamesvr shows at /version.
func (s *system) packageVersion(version string) string {
	s.t.Helper()
	dir := filepath.Join(s.dir, "gamesvr-"+version)
	file := "gamesvr-" + version + ".tar.gz"
	script := fmt.Sprintf("mkdir -p %[1]s && tar -C %[1]s -xzf %[2]s/gamesvr.tar.gz && echo %[3]s >%[1]s/VERSION && tar -C %[1]s -czf %[2]s/%[4]s .",
		dir, filepath.Join(s.dir, "data", "files"), version, file)
	if out, err := exec.Command("sh", "-c", script).CombinedOutput(); err != nil {
		s.t.Fatalf("package %s: %v %s", version, err, out)
	}
	return file
}

// completed waits for the rollout of revision to complete with every
// instance ready, and returns the instances.
func (s *system) completed(name string, revision int, phase string) []rolloutInstance {
	s.t.Helper()
	var v rolloutView
	s.eventuallyWithin(90*time.Second, fmt.Sprintf("the rollout of %s revision %d %s", name, revision, phase), func() (bool, string) {
		v = s.deployment(name)
		ro := v.Status.Rollout
		if ro == nil {
			return false, "no rollout yet"
		}
		return ro.Phase == phase && ro.UpdateRevision == revision && ro.Ready == ro.Replicas && ro.Total == ro.Replicas &&
				len(v.Status.Instances) == ro.Replicas, // the surge instances are gone too
			fmt.Sprintf("%s %q %+v", ro.Phase, ro.Message, v.Status.Instances)
	})
	return v.Status.Instances
}

// version asks an instance's gamesvr what it runs.
func version(inst rolloutInstance) string {
	_, body := get(fmt.Sprintf("http://127.0.0.1:%d/version", inst.Ports["http"]))
	return strings.TrimSpace(body)
}

func launchOf(taskGroupID string) int {
	launch, _, _ := strings.Cut(taskGroupID[strings.LastIndex(taskGroupID, "_")+1:], ".") // less the incarnation
	n, _ := strconv.Atoi(launch)
	return n
}

// sampler reads a deployment every 100ms while a rollout runs: the
// fewest ready instances and the most instances seen, and whether an
// instance was seen not ready while updated in place.
type sampler struct {
	s          *system
	name       string
	stop, done chan struct{}
	mu         sync.Mutex
	minReady   int
	maxTotal   int
	sawInPlace bool
}

func (s *system) sample(name string) *sampler {
	sm := &sampler{s: s, name: name, stop: make(chan struct{}), done: make(chan struct{}), minReady: 1 << 30}
	go func() {
		defer close(sm.done)
		for {
			select {
			case <-sm.stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			_, body := s.call("GET", "/v1/deployments/demo/"+name, nil)
			var v rolloutView
			if json.Unmarshal(body, &v) != nil {
				continue
			}
			ready := 0
			sm.mu.Lock()
			for _, i := range v.Status.Instances {
				if i.Ready {
					ready++
				}
				if i.Update != nil && i.Update.Mode == "InPlace" && !i.Ready {
					sm.sawInPlace = true
				}
			}
			sm.minReady = min(sm.minReady, ready)
			sm.maxTotal = max(sm.maxTotal, len(v.Status.Instances))
			sm.mu.Unlock()
		}
	}()
	return sm
}

func (sm *sampler) finish() (minReady, maxTotal int, sawInPlace bool) {
	close(sm.stop)
	<-sm.done
	return sm.minReady, sm.maxTotal, sm.sawInPlace
}

// RollingUpdate of processes: every instance is replaced by a
// new launch of the new revision, highest ID first, and at every sampled
// instant at least replicas − maxUnavailable instances are ready and no
// more than replicas exist (maxSurge 0).
func TestProcessRollingUpdate(t *testing.T) {
	s := startSystem(t)
	strategy := map[string]any{"type": "RollingUpdate", "maxUnavailable": 1}
	if code, body := s.call("POST", "/v1/deployments", s.processDeployment("roll", 4, strategy, "v1", "gamesvr.tar.gz")); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	before := s.completed("roll", 1, "Completed")
	sm := s.sample("roll")
	if code, body := s.call("PUT", "/v1/deployments/demo/roll", s.processDeployment("roll", 4, strategy, "v2", "gamesvr.tar.gz")); code != 200 {
		t.Fatalf("update: %d %s", code, body)
	}
	after := s.completed("roll", 2, "Completed")
	minReady, maxTotal, _ := sm.finish()
	if minReady < 3 || maxTotal > 4 {
		t.Errorf("during the rollout: at least %d ready (want ≥ 3), at most %d instances (want ≤ 4)", minReady, maxTotal)
	}
	for i, inst := range after {
		if inst.Revision != 2 || inst.TaskGroupID == before[i].TaskGroupID || launchOf(inst.TaskGroupID) != 2 {
			t.Errorf("instance %d: %+v, want revision 2 in its second launch (was %s)", i, inst, before[i].TaskGroupID)
		}
		if v := version(inst); !strings.Contains(v, "build=v2") {
			t.Errorf("instance %d answers %q", i, v)
		}
	}
}

// InplaceUpdate of processes: same agent, task group, instance
// and host port; the process restarts (new pid) with the new spec after
// it was shown not ready for gracePeriodSeconds.
func TestProcessInPlaceUpdate(t *testing.T) {
	s := startSystem(t)
	strategy := map[string]any{"type": "InplaceUpdate", "maxUnavailable": 1, "inPlaceUpdateStrategy": map[string]any{"gracePeriodSeconds": 2}}
	if code, body := s.call("POST", "/v1/deployments", s.processDeployment("inplace", 2, strategy, "v1", "gamesvr.tar.gz")); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	before := s.completed("inplace", 1, "Completed")
	pids := map[int]string{}
	for _, inst := range before {
		pids[inst.ID] = version(inst)
	}
	sm := s.sample("inplace")
	if code, body := s.call("PUT", "/v1/deployments/demo/inplace", s.processDeployment("inplace", 2, strategy, "v2", "gamesvr.tar.gz")); code != 200 {
		t.Fatalf("update: %d %s", code, body)
	}
	after := s.completed("inplace", 2, "Completed")
	minReady, _, sawInPlace := sm.finish()
	if minReady < 1 || !sawInPlace {
		t.Errorf("during the rollout: at least %d ready (want ≥ 1); an instance seen not ready while updated in place: %v", minReady, sawInPlace)
	}
	for i, inst := range after {
		b := before[i]
		if inst.TaskGroupID != b.TaskGroupID || inst.Agent != b.Agent || inst.Ports["http"] != b.Ports["http"] || inst.Revision != 2 {
			t.Errorf("instance %d moved: %+v, was %+v", i, inst, b)
		}
		v := version(inst)
		if !strings.Contains(v, "build=v2") || pidOfVersion(v) == pidOfVersion(pids[inst.ID]) {
			t.Errorf("instance %d answers %q, was %q: want build v2 under a new pid", i, v, pids[inst.ID])
		}
	}
}

func pidOfVersion(v string) string {
	for _, f := range strings.Fields(v) {
		if p, ok := strings.CutPrefix(f, "pid="); ok {
			return p
		}
	}
	return ""
}

// HotPatchUpdate of processes: the new package is unpacked over
// the running process's files and its reloadCmd runs; the pid stays.
func TestProcessHotPatch(t *testing.T) {
	s := startSystem(t)
	strategy := map[string]any{"type": "HotPatchUpdate", "maxUnavailable": 1}
	v1, v2 := s.packageVersion("v1"), s.packageVersion("v2")
	if code, body := s.call("POST", "/v1/deployments", s.processDeployment("hot", 2, strategy, "v1", v1)); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	before := s.completed("hot", 1, "Completed")
	if code, body := s.call("PUT", "/v1/deployments/demo/hot", s.processDeployment("hot", 2, strategy, "v1", v2)); code != 200 {
		t.Fatalf("update: %d %s", code, body)
	}
	after := s.completed("hot", 2, "Completed")
	for i, inst := range after {
		was, is := version(before[i]), version(inst)
		if inst.TaskGroupID != before[i].TaskGroupID || !strings.Contains(is, "version=v2") || !strings.Contains(is, "reloads=1") ||
			pidOfVersion(is) != pidOfVersion(was) {
			t.Errorf("instance %d answers %q (was %q): want version v2, one reload, the same pid", i, is, was)
		}
	}
	// A change that needs a restart is refused before anything happens,
	// and so is more memory than the launches took from Mesos.
	code, body := s.call("PUT", "/v1/deployments/demo/hot", s.processDeployment("hot", 2, strategy, "v3", v2))
	if code != 400 || !strings.Contains(string(body), "spec.template.spec.processes[0].env: HotPatchUpdate cannot change it") {
		t.Errorf("env change under HotPatchUpdate: %d %s", code, body)
	}
	var more map[string]any
	_ = json.Unmarshal(s.processDeployment("hot", 2, strategy, "v1", v2), &more)
	proc := more["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["processes"].([]any)[0].(map[string]any)
	proc["resources"] = map[string]any{"limits": map[string]any{"cpu": "0.2", "memory": "128"}}
	moreMemory, _ := json.Marshal(more)
	code, body = s.call("PUT", "/v1/deployments/demo/hot", moreMemory)
	if code != 400 || !strings.Contains(string(body), "spec.template.spec.processes[0].resources.limits.memory: HotPatchUpdate cannot grow what a running task took from Mesos (64 MB) to 128 MB") {
		t.Errorf("limits.memory 64 → 128 under HotPatchUpdate: %d %s", code, body)
	}
	if v := s.deployment("hot"); v.Version != 2 {
		t.Errorf("after the refused PUTs: version %d, want 2", v.Version)
	}

	// A hot patch the executor refuses (its package is missing) stalls the
	// rollout at once: its status names the instance and the error, and
	// bcsctl rollout status gives up with it.
	if code, body := s.call("PUT", "/v1/deployments/demo/hot", s.processDeployment("hot", 2, strategy, "v1", "missing.tar.gz")); code != 200 {
		t.Fatalf("update to a missing package: %d %s", code, body)
	}
	s.eventually("the rollout stalled, naming the instance that failed to update", func() (bool, string) {
		ro := s.deployment("hot").Status.Rollout
		if ro == nil || ro.UpdateRevision != 3 || len(ro.Conditions) < 2 {
			return false, fmt.Sprintf("%+v", ro)
		}
		progressing := ro.Conditions[1]
		return ro.Phase == "Progressing" && progressing.Status == "False" && progressing.Reason == "InstanceUpdateFailed" &&
			strings.Contains(ro.Message, "instances failed to update (instance ") && strings.Contains(ro.Message, "hot patch refused") &&
			strings.Contains(ro.Message, "missing.tar.gz"), fmt.Sprintf("%s %q %+v", ro.Phase, ro.Message, ro.Conditions)
	})
	r := s.bcsctl("", "rollout", "status", "deployment", "hot", "-n", "demo", "--timeout", "30s")
	if r.code != 1 || !strings.Contains(r.err, "rollout of revision 3 stalled: ") || !strings.Contains(r.err, "missing.tar.gz") {
		t.Errorf("bcsctl rollout status of the stalled rollout: exit %d\n%s%s", r.code, r.out, r.err)
	}
}

// Partition, canary, abort and rollback: the canary steps
// partition 2 then pause update exactly instances 2 and 3 and wait;
// promote finishes; the next revision is aborted at its pause and every
// instance returns to the stable revision; a rollback to revision 1
// brings its spec back as a new revision.
func TestCanaryAbortRollback(t *testing.T) {
	s := startSystem(t)
	strategy := map[string]any{"type": "RollingUpdate", "maxUnavailable": 2,
		"canary": map[string]any{"steps": []any{map[string]any{"partition": 2}, map[string]any{"pause": map[string]any{}}}}}
	put := func(build string) {
		t.Helper()
		if code, body := s.call("PUT", "/v1/deployments/demo/canary", s.processDeployment("canary", 4, strategy, build, "gamesvr.tar.gz")); code != 200 {
			t.Fatalf("update %s: %d %s", build, code, body)
		}
	}
	op := func(name string, body []byte) {
		t.Helper()
		if code, out := s.call("POST", "/v1/deployments/demo/canary/"+name, body); code != 202 {
			t.Fatalf("%s: %d %s", name, code, out)
		}
	}
	if code, body := s.call("POST", "/v1/deployments", s.processDeployment("canary", 4, strategy, "v1", "gamesvr.tar.gz")); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	s.completed("canary", 1, "Completed")
	put("v2")
	paused := s.completed("canary", 2, "Paused")
	for _, inst := range paused {
		if want := map[bool]int{true: 2, false: 1}[inst.ID >= 2]; inst.Revision != want {
			t.Errorf("at the pause: instance %d runs revision %d, want %d", inst.ID, inst.Revision, want)
		}
	}
	op("promote", nil)
	s.completed("canary", 2, "Completed")

	put("v3")
	s.completed("canary", 3, "Paused")
	op("abort", nil)
	for _, inst := range s.completed("canary", 3, "Aborted") {
		if inst.Revision != 2 || !strings.Contains(version(inst), "build=v2") {
			t.Errorf("after abort: instance %d %+v answers %q", inst.ID, inst, version(inst))
		}
	}

	op("rollback", []byte(`{"revision": 1}`))
	for _, inst := range s.completed("canary", 4, "RolledBack") {
		if inst.Revision != 4 || !strings.Contains(version(inst), "build=v1") {
			t.Errorf("after rollback: instance %d %+v answers %q", inst.ID, inst, version(inst))
		}
	}
}

// A rollout survives a scheduler kill -9 at any point: it resumes where
// it stood, no instance is updated twice or skipped. Killed after
// the first replacement, the scheduler comes back and finishes: every
// instance is in its second launch, none in a third.
func TestSchedulerKilledMidRollout(t *testing.T) {
	s := startSystem(t)
	strategy := map[string]any{"type": "RollingUpdate", "maxUnavailable": 1, "upgradeDuration": 2}
	if code, body := s.call("POST", "/v1/deployments", s.processDeployment("crash", 3, strategy, "v1", "gamesvr.tar.gz")); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	s.completed("crash", 1, "Completed")
	if code, body := s.call("PUT", "/v1/deployments/demo/crash", s.processDeployment("crash", 3, strategy, "v2", "gamesvr.tar.gz")); code != 200 {
		t.Fatalf("update: %d %s", code, body)
	}
	s.eventually("the first instance updated", func() (bool, string) {
		v := s.deployment("crash")
		n := 0
		for _, i := range v.Status.Instances {
			if i.Revision == 2 && i.Ready {
				n++
			}
		}
		return n >= 1, fmt.Sprintf("%+v", v.Status.Instances)
	})
	s.killScheduler()
	s.startScheduler()
	for _, inst := range s.completed("crash", 2, "Completed") {
		if launchOf(inst.TaskGroupID) != 2 || inst.Revision != 2 {
			t.Errorf("instance %d: %+v, want revision 2 in its second launch", inst.ID, inst)
		}
	}
	if files, _ := filepath.Glob(s.runPath("*", "demo.crash.*", "gamesvr.pid")); len(files) != 3 {
		t.Errorf("pid files %v, want 3", files)
	}
}

// An application or process PUT also rolls out, with RollingUpdate
// defaults, so that no spec change is ever silently left unapplied: the
// process example's instances each get a new launch of version 2; a PUT
// that only scales updates nothing.
func TestApplicationPutRollsOut(t *testing.T) {
	s := startSystem(t)
	if code, body := s.call("POST", "/v1/apps", s.manifest("process.json", nil)); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	before := s.running("demo", "gamesvr", 3)
	edit := func(build string, instances int) []byte {
		return s.manifest("process.json", func(m map[string]any) {
			m["spec"].(map[string]any)["instance"] = instances
			proc := m["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["processes"].([]any)[0].(map[string]any)
			proc["env"] = append(proc["env"].([]any), map[string]any{"name": "BUILD", "value": build})
		})
	}
	if code, body := s.call("PUT", "/v1/apps/demo/gamesvr", edit("v2", 3)); code != 200 {
		t.Fatalf("update: %d %s", code, body)
	}
	var after []instanceView
	s.eventuallyWithin(90*time.Second, "every instance replaced by version 2", func() (bool, string) {
		_, body := s.call("GET", "/v1/apps/demo/gamesvr", nil)
		var v struct {
			Status struct {
				Instances []rolloutInstance
				Rollout   struct{ Phase string }
			}
		}
		_ = json.Unmarshal(body, &v)
		done := v.Status.Rollout.Phase == "Completed"
		for _, i := range v.Status.Instances {
			done = done && i.Revision == 2 && i.Ready
		}
		after = s.running("demo", "gamesvr", 3)
		return done, fmt.Sprintf("%+v", v.Status)
	})
	for i := range after {
		if after[i].TaskGroupID == before[i].TaskGroupID {
			t.Errorf("instance %d kept %s", i, after[i].TaskGroupID)
		}
		if _, body := get(fmt.Sprintf("http://127.0.0.1:%d/version", after[i].Ports["http"])); !strings.Contains(body, "build=v2") {
			t.Errorf("instance %d answers %q", i, body)
		}
	}
	// Version 3 only scales: the instances keep running, relabelled.
	if code, body := s.call("PUT", "/v1/apps/demo/gamesvr", edit("v2", 2)); code != 200 {
		t.Fatalf("scale by PUT: %d %s", code, body)
	}
	two := s.running("demo", "gamesvr", 2)
	for i := range two {
		if two[i].TaskGroupID != after[i].TaskGroupID {
			t.Errorf("instance %d relaunched by a PUT that only scaled: %s → %s", i, after[i].TaskGroupID, two[i].TaskGroupID)
		}
	}
}
