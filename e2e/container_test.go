package e2e_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// docker runs the docker CLI and returns its trimmed output.
func docker(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("docker", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("docker %s: %v %s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// podContainers lists the containers (any state) of the pods whose ID
// starts with prefix, e.g. "demo_web_": other tests and packages run
// pods of their own on the same dockerd.
func podContainers(t *testing.T, prefix string) []string {
	t.Helper()
	var ids []string
	for _, line := range strings.Split(docker(t, "ps", "-a", "--filter", "label=io.bcs.pod", "--format", `{{.ID}} {{.Label "io.bcs.pod"}}`), "\n") {
		if id, pod, ok := strings.Cut(line, " "); ok && strings.HasPrefix(pod, prefix) {
			ids = append(ids, id)
		}
	}
	return ids
}

// taskContainer returns the running container of a Mesos task.
func taskContainer(t *testing.T, taskID string) string {
	t.Helper()
	return docker(t, "ps", "-q", "--filter", "label=io.bcs.task="+taskID)
}

func netns(t *testing.T, container string) string {
	t.Helper()
	pid := docker(t, "inspect", "-f", "{{.State.Pid}}", container)
	link, err := os.Readlink("/proc/" + pid + "/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	return link
}

// Issue 8 scenario 2: the container example reaches RUNNING; both
// containers share one network namespace; its host port answers; it is
// healthy by its one checked container; docker
// kill of one container fails the whole task group and it is relaunched
// per its restart policy; delete leaves no container.
func TestContainerExample(t *testing.T) {
	s := startSystem(t)
	if code, body := s.call("POST", "/v1/apps", s.manifest("application.json", nil)); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	inst := s.running("demo", "web", 1)[0]
	url := fmt.Sprintf("http://127.0.0.1:%d/", inst.Ports["http"])
	if code, body := get(url); code != 200 || !strings.Contains(body, "hello from web") {
		t.Errorf("%s: %d %q", url, code, body)
	}
	web, sidecar := taskContainer(t, inst.TaskGroupID+"_0"), taskContainer(t, inst.TaskGroupID+"_1")
	if web == "" || sidecar == "" {
		t.Fatalf("containers %q %q", web, sidecar)
	}
	if a, b := netns(t, web), netns(t, sidecar); a != b {
		t.Errorf("network namespaces differ: %s %s", a, b)
	}
	// Issue 16: healthy over the checks that exist — the web container's
	// HTTP check; the sidecar has none.
	s.eventually("the pod healthy by its checked container", func() (bool, string) {
		v, _ := s.app("demo", "web")
		i := v.Status.Instances[0]
		return i.Healthy != nil && *i.Healthy, fmt.Sprintf("%+v", i)
	})

	docker(t, "kill", sidecar)
	s.eventually("the group relaunched after interval 3s", func() (bool, string) {
		v, _ := s.app("demo", "web")
		if len(v.Status.Instances) != 1 {
			return false, fmt.Sprintf("%+v", v.Status.Instances)
		}
		i := v.Status.Instances[0]
		return i.Restarts == 1 && i.State == "TASK_RUNNING" && i.TaskGroupID != inst.TaskGroupID, fmt.Sprintf("%+v", i)
	})
	if c := docker(t, "ps", "-aq", "--filter", "label=io.bcs.task="+inst.TaskGroupID+"_0"); c != "" {
		t.Errorf("the first launch's web container %s is still there after the group failed", c)
	}

	if code, body := s.call("DELETE", "/v1/apps/demo/web", nil); code != 202 {
		t.Fatalf("delete: %d %s", code, body)
	}
	s.eventually("no container of the application left", func() (bool, string) {
		left := podContainers(t, "demo_web_")
		_, code := s.app("demo", "web")
		return len(left) == 0 && code == 404, strings.Join(left, " ")
	})
}
