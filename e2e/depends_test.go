package e2e_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// dependsView is what GET /v1/depends/{ns}/{name} shows of the pods.
type dependsView struct {
	Status struct {
		ReferencedBy []string `json:"referencedBy"`
		Pods         []struct {
			Namespace string `json:"namespace"`
			Name      string `json:"name"`
			Node      string `json:"node"`
			Users     int    `json:"users"`
			State     string `json:"state"`
			TaskState string `json:"taskState"`
		} `json:"pods"`
	} `json:"status"`
}

func (s *system) depends(ns, name string) dependsView {
	s.t.Helper()
	code, body := s.call("GET", "/v1/depends/"+ns+"/"+name, nil)
	var v dependsView
	if err := json.Unmarshal(body, &v); code != 200 || err != nil {
		s.t.Fatalf("GET depends %s/%s: %d %s", ns, name, code, body)
	}
	return v
}

// Two applications on one agent reference one depends object: one
// dependency pod process runs there, shared; DELETE of the depends object
// is refused while they reference it; once both are scaled to 0 the pod
// goes after the GC delay. The delay is the flag's (5m by default) until
// `bcsctl engine config set` changes it in the running scheduler: made 2s
// while the pod idles, it goes 2s after it idled.
func TestDependencyPodSharedThenCollected(t *testing.T) {
	s := startSystem(t)
	if code, body := s.call("POST", "/v1/depends", s.manifest("depends.json", nil)); code != 201 {
		t.Fatalf("create depends: %d %s", code, body)
	}
	for _, name := range []string{"game-a", "game-b"} {
		m := s.manifest("process.json", func(m map[string]any) {
			m["metadata"].(map[string]any)["name"] = name
			// Both on agent-1.
			m["constraint"] = map[string]any{"intersectionItem": []any{map[string]any{"unionData": []any{
				map[string]any{"name": "rack", "operate": "CLUSTER", "type": 3, "text": map[string]any{"value": "r1"}}}}}}
			spec := m["spec"].(map[string]any)
			spec["instance"] = 1
			spec["template"].(map[string]any)["spec"].(map[string]any)["depends"] = []any{map[string]any{"name": "logagent"}}
		})
		if code, body := s.call("POST", "/v1/apps", m); code != 201 {
			t.Fatalf("create %s: %d %s", name, code, body)
		}
	}
	s.running("demo", "game-a", 1)
	s.running("demo", "game-b", 1)

	var podName string
	s.eventually("one running dependency pod on agent-1 with two users", func() (bool, string) {
		v := s.depends("demo", "logagent")
		if len(v.Status.Pods) != 1 {
			return false, fmt.Sprintf("%+v", v.Status)
		}
		p := v.Status.Pods[0]
		podName = p.Name
		return p.Node == "agent-1" && p.Users == 2 && p.TaskState == "TASK_RUNNING" && p.State == "Running", fmt.Sprintf("%+v", p)
	})
	pod, code := s.dependencyPod(podName)
	if code != 200 || len(pod.Status.Instances) != 1 {
		t.Fatalf("the pod's deployment: %d %+v", code, pod)
	}
	if code, body := get(fmt.Sprintf("http://127.0.0.1:%d/", pod.Status.Instances[0].Ports["http"])); code != 200 || !strings.Contains(body, "instance logagent on") {
		t.Errorf("the dependency pod answers %d %q", code, body)
	}
	// One process of it, and only one, runs (its pid file, and no other
	// dependency pod's directory).
	runDirs, _ := filepath.Glob(s.runPath("*", "demo.logagent-*"))
	if len(runDirs) != 1 {
		t.Fatalf("dependency pod run directories: %v", runDirs)
	}
	pid := pidOf(t, filepath.Join(runDirs[0], "gamesvr.pid"))
	if !alive(pid) {
		t.Fatalf("dependency pod process %d is not running", pid)
	}

	code, body := s.call("DELETE", "/v1/depends/demo/logagent", nil)
	if code != 409 || !strings.Contains(string(body), "referenced by demo/game-a, demo/game-b") {
		t.Errorf("DELETE while referenced: %d %s", code, body)
	}

	for _, name := range []string{"game-a", "game-b"} {
		if code, body := s.call("POST", "/v1/apps/demo/"+name+"/scale", []byte(`{"instances":0}`)); code != 202 {
			t.Fatalf("scale %s: %d %s", name, code, body)
		}
	}
	s.eventually("no users", func() (bool, string) {
		v := s.depends("demo", "logagent")
		return len(v.Status.Pods) == 1 && v.Status.Pods[0].Users == 0, fmt.Sprintf("%+v", v.Status)
	})
	if out := s.ctl("", "engine", "config"); !strings.Contains(out, "dependsGCDelay      5m0s    flag") {
		t.Fatalf("bcsctl engine config before any set:\n%s", out)
	}
	if out := s.ctl("", "engine", "config", "set", "dependsGCDelay=2s"); !strings.Contains(out, "dependsGCDelay      2s      run time") {
		t.Fatalf("bcsctl engine config set:\n%s", out)
	}
	set := time.Now()
	s.eventually("the dependency pod collected", func() (bool, string) {
		v := s.depends("demo", "logagent")
		return len(v.Status.Pods) == 0 && !alive(pid), fmt.Sprintf("%+v, process alive %v", v.Status, alive(pid))
	})
	t.Logf("collected %s after the GC delay was set to 2s", time.Since(set).Round(100*time.Millisecond))
	if _, code := s.dependencyPod(podName); code != 404 {
		t.Errorf("the pod's deployment after collection: %d", code)
	}
	// Once the applications are gone nothing references it: DELETE
	// needs no force.
	for _, name := range []string{"game-a", "game-b"} {
		if code, body := s.call("DELETE", "/v1/apps/demo/"+name, nil); code != 202 {
			t.Fatalf("delete %s: %d %s", name, code, body)
		}
	}
	s.eventually("the applications gone", func() (bool, string) {
		_, a := s.app("demo", "game-a")
		_, b := s.app("demo", "game-b")
		return a == 404 && b == 404, fmt.Sprintf("%d %d", a, b)
	})
	if code, body := s.call("DELETE", "/v1/depends/demo/logagent", nil); code != 204 {
		t.Errorf("DELETE unreferenced: %d %s", code, body)
	}
}

// dependencyPod reads the deployment of a dependency pod in demo.
func (s *system) dependencyPod(name string) (appView, int) {
	code, body := s.call("GET", "/v1/deployments/demo/"+name, nil)
	var v appView
	_ = json.Unmarshal(body, &v)
	return v, code
}
