package e2e_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
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

// podContainers lists the containers (any state) of this system's pods
// whose ID starts with prefix, e.g. "demo_web_": other tests, packages
// and the other e2e worker run pods of their own, of the same names too,
// on the same dockerd.
func (s *system) podContainers(prefix string) []string {
	s.t.Helper()
	var ids []string
	for _, line := range strings.Split(docker(s.t, "ps", "-a", "--filter", "label=io.bcs.framework="+s.frameworkID(),
		"--format", `{{.ID}} {{.Label "io.bcs.pod"}}`), "\n") {
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

// The container example reaches RUNNING; both containers share one network
// namespace; its host port answers; it is healthy by its one checked
// container; docker kill of one container fails the whole task group and
// it is relaunched per its restart policy; delete leaves no container.
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
	// Healthy over the checks that exist — the web container's
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
		left := s.podContainers("demo_web_")
		_, code := s.app("demo", "web")
		return len(left) == 0 && code == 404, strings.Join(left, " ")
	})
}

// Seed 001 through the scheduler: the example's sidecar exiting 0 is
// TASK_FINISHED (exitCode 0) in the instance's tasks while web runs on,
// healthy, in the same launch with no restart; web then killed from
// outside (137) fails the group and it is relaunched. An application
// whose every container exits 0 ends Finished, not restarted, its tasks
// TASK_FINISHED, with no container left.
func TestContainerExitsThroughScheduler(t *testing.T) {
	s := startSystem(t)
	sidecarExits := func(m map[string]any) {
		containers := m["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)
		containers[1].(map[string]any)["args"] = []any{"-c", "sleep 2; exit 0"}
	}
	if code, body := s.call("POST", "/v1/apps", s.manifest("application.json", sidecarExits)); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	var inst instanceView
	s.eventually("the sidecar finished, web running and healthy", func() (bool, string) {
		v, _ := s.app("demo", "web")
		if len(v.Status.Instances) != 1 {
			return false, fmt.Sprintf("%+v", v.Status.Instances)
		}
		inst = v.Status.Instances[0]
		if len(inst.Tasks) != 2 {
			return false, fmt.Sprintf("%+v", inst)
		}
		web, side := inst.Tasks[0], inst.Tasks[1]
		sideDone := side.State == "TASK_FINISHED" && side.Container != nil && side.Container.ExitCode != nil && *side.Container.ExitCode == 0
		webUp := web.State == "TASK_RUNNING" && inst.State == "TASK_RUNNING" && inst.Healthy != nil && *inst.Healthy && v.Status.State == "Running"
		return sideDone && webUp, fmt.Sprintf("%s %+v", v.Status.State, inst)
	})
	if inst.Restarts != 0 {
		t.Errorf("restarts %d after the sidecar finished, want 0", inst.Restarts)
	}
	if code, body := get(fmt.Sprintf("http://127.0.0.1:%d/", inst.Ports["http"])); code != 200 || !strings.Contains(body, "hello from web") {
		t.Errorf("web after the sidecar finished: %d %q", code, body)
	}
	web := taskContainer(t, inst.TaskGroupID+"_0")
	if web == "" {
		t.Fatal("web's container is gone")
	}

	docker(t, "kill", web)
	s.eventually("the group relaunched after web failed", func() (bool, string) {
		v, _ := s.app("demo", "web")
		i := v.Status.Instances[0]
		return i.Restarts == 1 && i.TaskGroupID != inst.TaskGroupID && i.Tasks[0].State == "TASK_RUNNING", fmt.Sprintf("%+v", i)
	})

	done := s.manifest("application.json", func(m map[string]any) {
		sidecarExits(m)
		m["metadata"].(map[string]any)["name"] = "done"
		spec := m["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
		first := spec["containers"].([]any)[0].(map[string]any)
		first["args"], first["healthChecks"], first["ports"] = []any{"-c", "sleep 3; exit 0"}, nil, nil
	})
	if code, body := s.call("POST", "/v1/apps", done); code != 201 {
		t.Fatalf("create done: %d %s", code, body)
	}
	s.eventually("every task finished, the instance not restarted", func() (bool, string) {
		v, _ := s.app("demo", "done")
		if len(v.Status.Instances) != 1 {
			return false, fmt.Sprintf("%+v", v.Status.Instances)
		}
		i := v.Status.Instances[0]
		ok := i.State == "TASK_FINISHED" && i.Restarts == 0 && strings.Contains(i.Message, "not restarted: finished") && len(i.Tasks) == 2
		for _, task := range i.Tasks {
			ok = ok && task.State == "TASK_FINISHED"
		}
		return ok, fmt.Sprintf("%+v", i)
	})
	s.eventually("no container of the finished application left", func() (bool, string) {
		left := s.podContainers("demo_done_")
		return len(left) == 0, strings.Join(left, " ")
	})
	failedPodEndsEveryTask(t, s)

	if code, body := s.call("DELETE", "/v1/apps/demo/web", nil); code != 202 {
		t.Fatalf("delete: %d %s", code, body)
	}
	s.eventually("no container of the application left", func() (bool, string) {
		left := s.podContainers("demo_web_")
		return len(left) == 0, strings.Join(left, " ")
	})
}

// Through bcs-scheduler --dev, a container asking "cpuset" gets
// one core of this machine to itself (seed 001: one NUMA node here, so no
// memory node), its docker parameters reach dockerd, and the core is
// released when the application is deleted.
func TestContainerPinnedWithParametersThroughScheduler(t *testing.T) {
	s := startSystem(t)
	dev := ""
	for _, name := range []string{"vda", "sda", "nvme0n1", "xvda", "loop0"} {
		if _, err := os.Stat("/dev/" + name); err == nil {
			dev = "/dev/" + name
			break
		}
	}
	if dev == "" {
		t.Fatal("no block device for device-read-bps")
	}
	pinned := s.manifest("application.json", func(m map[string]any) {
		spec := m["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
		web := spec["containers"].([]any)[0].(map[string]any)
		web["cpuset"] = true
		web["resources"] = map[string]any{"limits": map[string]any{"cpu": "1", "memory": "32"}}
		web["parameters"] = []any{
			map[string]any{"key": "cpu-shares", "value": "512"}, map[string]any{"key": "memory-swap", "value": "64m"},
			map[string]any{"key": "memory-swappiness", "value": "0"}, map[string]any{"key": "device-read-bps", "value": dev + ":1mb"},
		}
	})
	if code, body := s.call("POST", "/v1/apps", pinned); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	inst := s.running("demo", "web", 1)[0]
	web := taskContainer(t, inst.TaskGroupID+"_0")
	got := docker(t, "inspect", "-f", "{{.HostConfig.CpusetCpus}}|{{.HostConfig.CpusetMems}}|{{.HostConfig.CpuShares}}|{{.HostConfig.MemorySwap}}|{{.HostConfig.MemorySwappiness}}|{{range .HostConfig.BlkioDeviceReadBps}}{{.Path}}:{{.Rate}}{{end}}", web)
	fields := strings.Split(got, "|")
	if _, err := strconv.Atoi(fields[0]); len(fields) != 6 || err != nil {
		t.Fatalf("web's cpuset-cpus: %q, want one CPU", got)
	}
	if want := fmt.Sprintf("%s||512|%d|0|%s:%d", fields[0], 64<<20, dev, 1<<20); got != want {
		t.Errorf("web's host config %q, want %q", got, want)
	}
	if inCgroup := docker(t, "exec", web, "cat", "/sys/fs/cgroup/cpuset/cpuset.cpus"); inCgroup != fields[0] {
		t.Errorf("cpuset.cpus in web: %q, want %q", inCgroup, fields[0])
	}
	if side := docker(t, "inspect", "-f", "{{.HostConfig.CpusetCpus}}", taskContainer(t, inst.TaskGroupID+"_1")); side != "" {
		t.Errorf("the sidecar, not pinned, has cpuset-cpus %q", side)
	}

	if code, body := s.call("DELETE", "/v1/apps/demo/web", nil); code != 202 {
		t.Fatalf("delete: %d %s", code, body)
	}
	s.eventually("no container left and the core released", func() (bool, string) {
		left := s.podContainers("demo_web_")
		state, _ := os.ReadFile("/data/bcs/bcs-container-executor/numa-cpusets.json")
		return len(left) == 0 && !strings.Contains(string(state), "demo_web_"), strings.Join(left, " ") + " " + string(state)
	})
}

// Seed 001 ("TaskGroup中共有一个失败,所有设置为失败,强杀所有容器") with
// restartPolicy Never, so that nothing replaces the launch: a container
// exiting 1 ends its sibling too, and one whose image cannot be pulled
// fails its sibling that never started. Every task of the launch shows
// its terminal state in the API, as the master has it (Mesos reports
// every task of a failed task group terminal), and no container is left.
func failedPodEndsEveryTask(t *testing.T, s *system) {
	t.Helper()
	apps := map[string]func(containers []any){
		"exits1": func(containers []any) {
			containers[0].(map[string]any)["args"] = []any{"-c", "sleep 2; exit 1"}
		},
		"badimage": func(containers []any) {
			containers[1].(map[string]any)["image"] = "bcs-test/no-such-image:latest"
		},
	}
	for name, edit := range apps {
		m := s.manifest("application.json", func(m map[string]any) {
			m["metadata"].(map[string]any)["name"] = name
			m["restartPolicy"] = map[string]any{"policy": "Never"}
			spec := m["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
			first := spec["containers"].([]any)[0].(map[string]any)
			first["healthChecks"], first["ports"] = nil, nil
			edit(spec["containers"].([]any))
		})
		if code, body := s.call("POST", "/v1/apps", m); code != 201 {
			t.Fatalf("create %s: %d %s", name, code, body)
		}
	}
	for _, name := range []string{"exits1", "badimage"} {
		s.eventually(name+": every task of the failed launch terminal, in the API as in the master", func() (bool, string) {
			v, _ := s.app("demo", name)
			if len(v.Status.Instances) != 1 || len(v.Status.Instances[0].Tasks) != 2 {
				return false, fmt.Sprintf("%+v", v.Status.Instances)
			}
			i := v.Status.Instances[0]
			master := s.masterTaskStates()
			ok := i.State == "TASK_FAILED" && strings.Contains(i.Message, "not restarted")
			var got []string
			for _, task := range i.Tasks {
				ok = ok && terminalTaskState(task.State) && task.State == master[task.ID]
				got = append(got, fmt.Sprintf("%s api %s master %s", task.ID, task.State, master[task.ID]))
			}
			return ok, fmt.Sprintf("%s %q; %s", i.State, i.Message, strings.Join(got, ", "))
		})
		s.eventually(name+": no container left", func() (bool, string) {
			left := s.podContainers("demo_" + name + "_")
			return len(left) == 0, strings.Join(left, " ")
		})
	}
}

// masterTaskStates is every task of ours the master knows (live,
// unreachable or completed) by ID, with its state, as GET /master/tasks
// lists them.
func (s *system) masterTaskStates() map[string]string {
	s.t.Helper()
	code, body := get(s.master + "/master/tasks?limit=10000")
	var st struct {
		Tasks []struct {
			ID    string `json:"id"`
			State string `json:"state"`
		} `json:"tasks"`
	}
	if err := json.Unmarshal([]byte(body), &st); code != http.StatusOK || err != nil {
		s.t.Fatalf("GET /master/tasks: %d %v %.200s", code, err, body)
	}
	states := map[string]string{}
	for _, task := range st.Tasks {
		states[task.ID] = task.State
	}
	return states
}
