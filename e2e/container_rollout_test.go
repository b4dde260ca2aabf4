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
// /srv of image with greeting in /www, under strategy.
func (s *system) containerDeployment(name, image, greeting string, strategy map[string]any) []byte {
	s.t.Helper()
	var example map[string]any
	if err := json.Unmarshal(s.manifest("application.json", nil), &example); err != nil {
		s.t.Fatal(err)
	}
	template := example["spec"].(map[string]any)["template"].(map[string]any)
	web := template["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
	web["image"] = image
	web["args"] = []any{"-c", "mkdir -p /www && echo ok >/www/check && echo " + greeting + " >/www/greeting && cp /srv/index.html /www/ && exec httpd -f -p 8080 -h /www"}
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

// Issue 13 InplaceUpdate of containers: the first container of a BRIDGE
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

// Issue 13 HotPatchUpdate of containers: the new image's files are
// copied into the running container and the reload command runs in it;
// the container and its process stay.
func TestContainerHotPatch(t *testing.T) {
	s := startSystem(t)
	strategy := map[string]any{"type": "HotPatchUpdate",
		"hotPatchUpdateStrategy": map[string]any{"command": []string{"sh", "-c", "cp /srv/index.html /www/ && touch /tmp/reloaded"}}}
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
