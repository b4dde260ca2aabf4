package e2e_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// webImage builds bcs-test/web:<tag> locally (no registry is reachable):
// the test busybox with /srv/index.html saying content.
func webImage(t *testing.T, tag, content string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "srv"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "srv", "index.html"), []byte(content+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	image := "bcs-test/web:" + tag
	id := docker(t, "create", "bcs-test/busybox:latest", "true")
	defer docker(t, "rm", id)
	tar := exec.Command("sh", "-c", fmt.Sprintf("tar -C %s -c srv | docker cp - %s:/", dir, id))
	if out, err := tar.CombinedOutput(); err != nil {
		t.Fatalf("copy into %s: %v %s", id, err, out)
	}
	docker(t, "commit", id, image)
	return image
}

// containerDeployment is a deployment of the container example's pod (a
// web server and a sidecar in BRIDGE mode): the web container serves
// /srv of image with greeting in /tmp/www, under strategy.
func (s *system) containerDeployment(name, image, greeting string, strategy map[string]any) []byte {
	s.t.Helper()
	var example map[string]any
	if err := json.Unmarshal(s.manifest("application.json", nil), &example); err != nil {
		s.t.Fatal(err)
	}
	template := example["spec"].(map[string]any)["template"].(map[string]any)
	web := template["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
	web["image"] = image
	web["args"] = []any{"-c", "mkdir -p /tmp/www && echo ok >/tmp/www/check && echo " + greeting + " >/tmp/www/greeting && cp /srv/index.html /tmp/www/ && exec httpd -f -p 8080 -h /tmp/www"}
	check := web["healthChecks"].([]any)[0].(map[string]any)
	check["delaySeconds"], check["intervalSeconds"], check["timeoutSeconds"] = 1, 2, 1
	d := map[string]any{
		"apiVersion": "v4", "kind": "deployment",
		"metadata":      map[string]any{"name": name, "namespace": "demo"},
		"restartPolicy": example["restartPolicy"], "killPolicy": map[string]any{"gracePeriod": 1},
		"spec": map[string]any{"instance": 1, "updateStrategy": strategy, "template": template},
	}
	out, _ := json.Marshal(d)
	return out
}

func containerPid(t *testing.T, id string) string {
	t.Helper()
	return docker(t, "inspect", "-f", "{{.State.Pid}}", id)
}

// InplaceUpdate of containers: the first container of a BRIDGE
// pod of two (the one whose network the other shares) is re-created with
// its new spec; the instance keeps its task group, agent and host port,
// the pod its network namespace, the sidecar its container and process.
func TestContainerInPlaceUpdate(t *testing.T) {
	s := startSystem(t)
	strategy := map[string]any{"type": "InplaceUpdate", "inPlaceUpdateStrategy": map[string]any{"gracePeriodSeconds": 1}}
	image := webImage(t, "inplace", "web v1")
	if code, body := s.call("POST", "/v1/deployments", s.containerDeployment("pod", image, "hello-1", strategy)); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	before := s.completed("pod", 1, "Completed")[0]
	web, sidecar := taskContainer(t, before.TaskGroupID+"_0"), taskContainer(t, before.TaskGroupID+"_1")
	ns, sidecarPid := netns(t, web), containerPid(t, sidecar)

	if code, body := s.call("PUT", "/v1/deployments/demo/pod", s.containerDeployment("pod", image, "hello-2", strategy)); code != 200 {
		t.Fatalf("update: %d %s", code, body)
	}
	after := s.completed("pod", 2, "Completed")[0]
	if after.TaskGroupID != before.TaskGroupID || after.Agent != before.Agent || after.Ports["http"] != before.Ports["http"] || after.Revision != 2 {
		t.Errorf("the instance moved: %+v, was %+v", after, before)
	}
	newWeb := taskContainer(t, after.TaskGroupID+"_0")
	if newWeb == web || newWeb == "" {
		t.Errorf("web container %q, was %q: want a new one", newWeb, web)
	}
	if got := netns(t, newWeb); got != ns {
		t.Errorf("network namespace %s, was %s", got, ns)
	}
	if got := taskContainer(t, after.TaskGroupID+"_1"); got != sidecar || containerPid(t, got) != sidecarPid {
		t.Errorf("sidecar %s (pid %s), was %s (pid %s): want it untouched", got, containerPid(t, got), sidecar, sidecarPid)
	}
	if code, body := get(fmt.Sprintf("http://127.0.0.1:%d/greeting", after.Ports["http"])); code != 200 || !strings.Contains(body, "hello-2") {
		t.Errorf("greeting on the same host port: %d %q", code, body)
	}
}

// HotPatchUpdate of containers: the new image's files are
// copied into the running container and the reload command runs in it;
// the container and its process stay.
func TestContainerHotPatch(t *testing.T) {
	s := startSystem(t)
	strategy := map[string]any{"type": "HotPatchUpdate",
		"hotPatchUpdateStrategy": map[string]any{"command": []string{"sh", "-c", "cp /srv/index.html /tmp/www/ && touch /tmp/reloaded"}}}
	v1, v2 := webImage(t, "hot1", "web v1"), webImage(t, "hot2", "web v2")
	if code, body := s.call("POST", "/v1/deployments", s.containerDeployment("hot", v1, "hello", strategy)); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	before := s.completed("hot", 1, "Completed")[0]
	web := taskContainer(t, before.TaskGroupID+"_0")
	pid := containerPid(t, web)
	if _, body := get(fmt.Sprintf("http://127.0.0.1:%d/", before.Ports["http"])); !strings.Contains(body, "web v1") {
		t.Fatalf("before: %q", body)
	}
	if code, body := s.call("PUT", "/v1/deployments/demo/hot", s.containerDeployment("hot", v2, "hello", strategy)); code != 200 {
		t.Fatalf("update: %d %s", code, body)
	}
	after := s.completed("hot", 2, "Completed")[0]
	if got := taskContainer(t, after.TaskGroupID+"_0"); got != web || containerPid(t, got) != pid {
		t.Errorf("web container %s pid %s, was %s pid %s: want the same", got, containerPid(t, got), web, pid)
	}
	if _, body := get(fmt.Sprintf("http://127.0.0.1:%d/", after.Ports["http"])); !strings.Contains(body, "web v2") {
		t.Errorf("after the hot patch: %q, want web v2", body)
	}
	docker(t, "exec", web, "test", "-f", "/tmp/reloaded")
}

// RollingUpdate of containers, with a surge instance: at every
// sampled instant at least replicas − maxUnavailable instances are ready
// and at most replicas + maxSurge exist; each instance ends in a new
// launch answering with the new spec.
func TestContainerRollingUpdate(t *testing.T) {
	s := startSystem(t)
	strategy := map[string]any{"type": "RollingUpdate", "maxUnavailable": 1, "maxSurge": 1}
	image := webImage(t, "rolling", "web v1")
	create := s.containerDeployment("roll", image, "hello-1", strategy)
	var m map[string]any
	_ = json.Unmarshal(create, &m)
	m["spec"].(map[string]any)["instance"] = 3
	create, _ = json.Marshal(m)
	if code, body := s.call("POST", "/v1/deployments", create); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	before := s.completed("roll", 1, "Completed")
	sm := s.sample("roll")
	update := []byte(strings.Replace(string(create), "hello-1", "hello-2", 1))
	if code, body := s.call("PUT", "/v1/deployments/demo/roll", update); code != 200 {
		t.Fatalf("update: %d %s", code, body)
	}
	after := s.completed("roll", 2, "Completed")
	minReady, maxTotal, _ := sm.finish()
	if minReady < 2 || maxTotal > 4 {
		t.Errorf("during the rollout: at least %d ready (want ≥ 2), at most %d instances (want ≤ 4)", minReady, maxTotal)
	}
	for i, inst := range after {
		if inst.TaskGroupID == before[i].TaskGroupID || inst.Revision != 2 {
			t.Errorf("instance %d: %+v, was %s", i, inst, before[i].TaskGroupID)
		}
		if _, body := get(fmt.Sprintf("http://127.0.0.1:%d/greeting", inst.Ports["http"])); !strings.Contains(body, "hello-2") {
			t.Errorf("instance %d answers %q", i, body)
		}
	}
}

// InplaceUpdate in CNI mode: the pod keeps its CNI IP (the
// network container keeps its host-local lease) while its container is
// re-created.
func TestCNIInPlaceUpdate(t *testing.T) {
	args, _, ipamDir := cniNetwork(t)
	s := startSystem(t, args...)
	var app map[string]any
	if err := json.Unmarshal([]byte(cniApp), &app); err != nil {
		t.Fatal(err)
	}
	deployment := func(greeting string) []byte {
		spec := app["spec"].(map[string]any)
		template := spec["template"].(map[string]any)
		c := template["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
		c["args"] = []any{"-c", "mkdir -p /tmp/www && echo ok >/tmp/www/check && echo " + greeting + " >/tmp/www/greeting && exec httpd -f -p 8080 -h /tmp/www"}
		c["healthChecks"].([]any)[0].(map[string]any)["delaySeconds"] = 1
		d := map[string]any{"apiVersion": "v4", "kind": "deployment",
			"metadata": map[string]any{"name": "cnipod", "namespace": "demo"}, "restartPolicy": app["restartPolicy"], "killPolicy": app["killPolicy"],
			"spec": map[string]any{"instance": 2, "template": template,
				"updateStrategy": map[string]any{"type": "InplaceUpdate", "maxUnavailable": 1}}}
		out, _ := json.Marshal(d)
		return out
	}
	if code, body := s.call("POST", "/v1/deployments", deployment("hello-1")); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	before := s.completed("cnipod", 1, "Completed")
	leases := leaseHolders(ipamDir)
	containers := map[int]string{}
	for _, inst := range before {
		containers[inst.ID] = taskContainer(t, inst.TaskGroupID+"_0")
	}
	if code, body := s.call("PUT", "/v1/deployments/demo/cnipod", deployment("hello-2")); code != 200 {
		t.Fatalf("update: %d %s", code, body)
	}
	after := s.completed("cnipod", 2, "Completed")
	if got := leaseHolders(ipamDir); fmt.Sprint(got) != fmt.Sprint(leases) {
		t.Errorf("host-local leases %v, were %v: want the same IPs held by the same network containers", got, leases)
	}
	for i, inst := range after {
		c := taskContainer(t, inst.TaskGroupID+"_0")
		if inst.TaskGroupID != before[i].TaskGroupID || c == containers[inst.ID] {
			t.Errorf("instance %d: %+v container %s, was %+v container %s", i, inst, c, before[i], containers[inst.ID])
		}
		if out := docker(t, "exec", c, "cat", "/tmp/www/greeting"); out != "hello-2" {
			t.Errorf("instance %d greets %q", i, out)
		}
	}
}

// leaseHolders maps each IP host-local leased to what holds it (the
// network container's ID and interface).
func leaseHolders(ipamDir string) map[string]string {
	out := map[string]string{}
	for _, ip := range allocations(ipamDir) {
		data, _ := os.ReadFile(filepath.Join(ipamDir, "bcs-e2e", ip))
		out[ip] = string(data)
	}
	return out
}
