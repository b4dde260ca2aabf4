package e2e_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startDev starts `bcs-scheduler --dev` as `make run` does (the embedded
// etcd and dev cluster, real executors, everything under <dir>/data), on
// ports of its own.
func startDev(t *testing.T) (s *system, start func()) {
	t.Helper()
	s = &system{t: t, dir: t.TempDir(), api: fmt.Sprintf("http://127.0.0.1:%d", freePort(t))}
	// Processes run as nobody: every directory above their work paths
	// must be searchable (t.TempDir makes them 0700).
	for _, d := range []string{filepath.Dir(s.dir), s.dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(s.dir, "data", "files"), 0o755); err != nil {
		t.Fatal(err)
	}
	s.packageGamesvr()
	data := filepath.Join(s.dir, "data")
	s.tokenFile = filepath.Join(data, "admin.token")
	s.master = fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
	args := []string{"--dev", "--data-dir", data, "--listen", strings.TrimPrefix(s.api, "http://"),
		"--dev-master-listen", strings.TrimPrefix(s.master, "http://"),
		"--work-base-dir", filepath.Join(data, "work"), "--run-base-dir", filepath.Join(data, "run"),
		"--container-executor-arg=--network-image=bcs-test/busybox:latest",
		"--container-executor-arg=--network-command=sleep 2147483647"}
	start = func() {
		t.Helper()
		s.scheduler = s.spawn("bcs-scheduler", filepath.Join(bin, "bcs-scheduler"), args...)
		s.eventually("the API", func() (bool, string) {
			code, body := get(s.api + "/healthz")
			return code == http.StatusOK, body
		})
	}
	t.Cleanup(s.stop)
	start()
	return s, start
}

// Kill -9 of `make run` (bcs-scheduler --dev) mid-rollout, then
// start it again on the same data dir, as a user whose machine crashed
// does. The dev cluster comes back as a real Mesos master and agents
// restarted on their work dirs do: no instance is relaunched (each
// running one keeps its task group; one the rollout had not reached is
// replaced by it once, never twice), the rollout completes, no `exit`
// notification is sent, and nothing of the old run is left — counted on
// the machine: the executor and game server processes under the data
// dir, the pods' Docker containers, the listening host ports.
func TestDevSurvivesKill9MidRollout(t *testing.T) {
	cb := newCallbackServer(t)
	s, start := startDev(t)
	if code, body := s.call("POST", "/v1/notifies", []byte(fmt.Sprintf(`{"callback": %q}`, cb.URL+"/bcs"))); code != http.StatusAccepted {
		t.Fatalf("POST /v1/notifies: %d %s", code, body)
	}
	strategy := map[string]any{"type": "RollingUpdate", "maxUnavailable": 1, "upgradeDuration": 2}
	games := func(build string) []byte { return s.processDeployment("games", 4, strategy, build, "gamesvr.tar.gz") }
	image := webImage(t, "restart", "web v1")
	webs := func(greeting string) []byte {
		var m map[string]any
		_ = json.Unmarshal(s.containerDeployment("webs", image, greeting, strategy), &m)
		m["spec"].(map[string]any)["instance"] = 3
		out, _ := json.Marshal(m)
		return out
	}
	for _, d := range [][]byte{games("v1"), webs("hello-1")} {
		if code, body := s.call("POST", "/v1/deployments", d); code != 201 {
			t.Fatalf("create: %d %s", code, body)
		}
	}
	s.completed("games", 1, "Completed")
	s.completed("webs", 1, "Completed")
	containersPerPod := len(s.podContainers("demo_webs_")) / 3

	if code, body := s.call("PUT", "/v1/deployments/demo/games", games("v2")); code != 200 {
		t.Fatalf("update games: %d %s", code, body)
	}
	if code, body := s.call("PUT", "/v1/deployments/demo/webs", webs("hello-2")); code != 200 {
		t.Fatalf("update webs: %d %s", code, body)
	}
	// Killed while both roll out, one instance being replaced.
	s.eventually("both rollouts half way", func() (bool, string) {
		var state []string
		halfway, replacing := true, false
		for name, n := range map[string]int{"games": 4, "webs": 3} {
			v := s.deployment(name)
			updated := 0
			for _, i := range v.Status.Instances {
				if i.Revision == 2 && i.Ready {
					updated++
				}
				replacing = replacing || !i.Ready
			}
			halfway = halfway && updated > 0 && updated < n
			state = append(state, fmt.Sprintf("%s %+v", name, v.Status.Instances))
		}
		return halfway && replacing, strings.Join(state, "; ")
	})
	before := map[string][]rolloutInstance{"games": s.deployment("games").Status.Instances, "webs": s.deployment("webs").Status.Instances}
	s.killScheduler()
	if err := os.Rename(filepath.Join(s.dir, "bcs-scheduler.log"), filepath.Join(s.dir, "bcs-scheduler-killed.log")); err != nil {
		t.Fatal(err)
	}
	start()

	after := map[string][]rolloutInstance{"games": s.completed("games", 2, "Completed"), "webs": s.completed("webs", 2, "Completed")}
	for _, name := range []string{"games", "webs"} {
		final := map[int]rolloutInstance{}
		for _, inst := range after[name] {
			final[inst.ID] = inst
		}
		for _, was := range before[name] {
			now, ok := final[was.ID]
			switch {
			case !ok:
				t.Errorf("%s instance %d (%s) gone after the restart", name, was.ID, was.TaskGroupID)
			case was.State == "TASK_RUNNING" && was.Revision == 2 && now.TaskGroupID != was.TaskGroupID:
				t.Errorf("%s instance %d ran %s, updated, when bcs-scheduler was killed; after the restart it runs %s: relaunched",
					name, was.ID, was.TaskGroupID, now.TaskGroupID)
			case launchOf(now.TaskGroupID) > launchOf(was.TaskGroupID)+1:
				t.Errorf("%s instance %d was in %s when bcs-scheduler was killed; after the restart it runs %s: relaunched besides its update",
					name, was.ID, was.TaskGroupID, now.TaskGroupID)
			}
		}
	}
	for _, inst := range after["games"] {
		if !strings.Contains(version(inst), "build=v2") {
			t.Errorf("games instance %d answers %q, want build v2", inst.ID, version(inst))
		}
	}
	for _, inst := range after["webs"] {
		if _, body := get(fmt.Sprintf("http://127.0.0.1:%d/greeting", inst.Ports["http"])); !strings.Contains(body, "hello-2") {
			t.Errorf("webs instance %d answers %q, want hello-2", inst.ID, body)
		}
	}

	// On the machine: only what the instances of now run.
	current := map[string]bool{}
	ports := map[uint32]bool{}
	for _, insts := range after {
		for _, inst := range insts {
			current[inst.TaskGroupID] = true
			for _, p := range inst.Ports {
				ports[p] = true
			}
		}
	}
	var oldPorts []uint32
	for _, insts := range before {
		for _, inst := range insts {
			for _, p := range inst.Ports {
				if !ports[p] {
					oldPorts = append(oldPorts, p)
				}
			}
		}
	}
	s.eventually("nothing of the old run left on the machine", func() (bool, string) {
		var left []string
		if groups := s.masterGroups("demo_"); !maps.EqualFunc(groups, current, func([]string, bool) bool { return true }) {
			left = append(left, fmt.Sprintf("the master runs %v", groups))
		}
		for _, cgroup := range matching("/sys/fs/cgroup/memory/bcs-process", s.frameworkID()+".") {
			if group, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(cgroup), s.frameworkID()+"."), "@"); !current[group] {
				left = append(left, "cgroup "+cgroup)
			}
		}
		executors, gameServers := 0, 0
		for _, pid := range processesUnder(s.dir) {
			comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
			cwd, _ := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
			name := strings.TrimSpace(string(comm))
			switch {
			case strings.HasPrefix(name, "bcs-"):
				executors++
				group := cwd[strings.Index(cwd, "/executors/")+len("/executors/"):]
				if group = group[:strings.Index(group, "/")]; !current[group] {
					left = append(left, fmt.Sprintf("executor %d of %s", pid, group))
				}
			case name == "gamesvr":
				gameServers++
			default:
				left = append(left, fmt.Sprintf("%s %d in %s", name, pid, cwd))
			}
		}
		if executors != 7 || gameServers != 4 {
			left = append(left, fmt.Sprintf("%d executors (want 7), %d game servers (want 4)", executors, gameServers))
		}
		pods := s.podContainers("demo_webs_")
		if len(pods) != 3*containersPerPod {
			left = append(left, fmt.Sprintf("%d containers of pods (want %d)", len(pods), 3*containersPerPod))
		}
		for _, c := range pods {
			if pod := docker(t, "inspect", "-f", `{{index .Config.Labels "io.bcs.pod"}} {{.State.Status}}`, c); !current[strings.Fields(pod)[0]] || !strings.HasSuffix(pod, " running") {
				left = append(left, "container "+c+" of "+pod)
			}
		}
		for _, p := range oldPorts {
			if listening(p) {
				left = append(left, fmt.Sprintf("port %d of the old run listening", p))
			}
		}
		for _, p := range listeningPorts(t, uint32(agentPortsFirst), uint32(agentPortsLast)) {
			if !ports[p] {
				left = append(left, fmt.Sprintf("port %d listening, no instance's", p))
			}
		}
		return len(left) == 0, strings.Join(left, "; ")
	})
	events, _ := cb.accepted()
	for _, e := range events {
		if strings.HasPrefix(e, "exit ") {
			t.Errorf("notified %q: an instance exited across the restart (all notifications: %v)", e, events)
		}
	}
	t.Logf("instances when killed %v; after %v; notifications %v", summary(before), summary(after), events)
}

// frameworkID is bcs-scheduler's framework ID, as the master shows it.
func (s *system) frameworkID() string {
	s.t.Helper()
	if s.framework != "" {
		return s.framework // a framework's ID never changes
	}
	code, body := get(s.master + "/master/state")
	var st struct {
		Frameworks []struct {
			ID string `json:"id"`
		} `json:"frameworks"`
	}
	if err := json.Unmarshal([]byte(body), &st); code != http.StatusOK || err != nil || len(st.Frameworks) != 1 {
		s.t.Fatalf("GET /master/state: %d %v %.200s", code, err, body)
	}
	s.framework = st.Frameworks[0].ID
	return s.framework
}

func summary(byName map[string][]rolloutInstance) string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		for _, inst := range byName[name] {
			parts = append(parts, fmt.Sprintf("%s r%d %s", inst.TaskGroupID, inst.Revision, inst.State))
		}
	}
	return strings.Join(parts, ", ")
}

// listeningPorts lists the TCP ports in [from, to] something listens on
// (/proc/net/tcp and tcp6, state 0A).
func listeningPorts(t *testing.T, from, to uint32) []uint32 {
	t.Helper()
	var ports []uint32
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		lines := bufio.NewScanner(f)
		for lines.Scan() {
			fields := strings.Fields(lines.Text())
			if len(fields) < 4 || fields[3] != "0A" {
				continue
			}
			_, hexPort, _ := strings.Cut(fields[1], ":")
			if port, err := strconv.ParseUint(hexPort, 16, 32); err == nil && uint32(port) >= from && uint32(port) <= to && !slices.Contains(ports, uint32(port)) {
				ports = append(ports, uint32(port))
			}
		}
		f.Close()
	}
	return ports
}

// An executor that does not subscribe again after the restart
// (frozen here, as a hung one would be) is killed with its session when
// the agent's re-registration timeout expires; its task is reported
// TASK_GONE with REASON_EXECUTOR_REREGISTRATION_TIMEOUT, so bcs-scheduler
// owes its agent a sweep, which reaps what the executor's session did not
// hold: the game server it started with setsid and its cgroups, the pod's
// Docker containers and their host port.
func TestDevRestartSweepsExecutorsThatDoNotComeBack(t *testing.T) {
	s, start := startDev(t)
	never := map[string]any{"policy": "Never"}
	proc := s.manifest("process.json", func(m map[string]any) {
		m["metadata"].(map[string]any)["name"] = "hung"
		m["spec"].(map[string]any)["instance"] = 1
		m["restartPolicy"] = never
		delete(m, "constraint")
		p := m["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["processes"].([]any)[0].(map[string]any)
		p["startCmd"] = "setsid ./start.sh ${ports.http} ${pidFile}"
	})
	web := s.manifest("application.json", func(m map[string]any) {
		m["metadata"].(map[string]any)["name"] = "hungweb"
		m["restartPolicy"] = never
	})
	for _, m := range [][]byte{proc, web} {
		if code, body := s.call("POST", "/v1/apps", m); code != 201 {
			t.Fatalf("create: %d %s", code, body)
		}
	}
	game, pod := s.running("demo", "hung", 1)[0], s.running("demo", "hungweb", 1)[0]
	// make run's ${run_base_dir} is under the data dir.
	gameServer := pidOf(t, filepath.Join(s.dir, "data", "run", game.Host, "demo.hung.0", "gamesvr.pid"))
	if cgroups := matching("/sys/fs/cgroup/memory/bcs-process", game.TaskGroupID+"@"); len(cgroups) != 1 {
		t.Fatalf("cgroups of %s: %v", game.TaskGroupID, cgroups)
	}
	if containers := s.podContainers(pod.TaskGroupID); len(containers) == 0 {
		t.Fatalf("no container of %s", pod.TaskGroupID)
	}
	for _, group := range []string{game.TaskGroupID, pod.TaskGroupID} {
		executor := executorPid(t, group)
		if err := syscall.Kill(executor, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = syscall.Kill(executor, syscall.SIGKILL) })
	}
	s.killScheduler()
	start()

	s.eventuallyWithin(60*time.Second, "the executors that did not come back, and what they left, reaped", func() (bool, string) {
		var left []string
		if alive(gameServer) {
			left = append(left, fmt.Sprintf("game server %d", gameServer))
		}
		left = append(left, matching("/sys/fs/cgroup/memory/bcs-process", game.TaskGroupID+"@")...)
		left = append(left, s.podContainers(pod.TaskGroupID)...)
		for _, p := range []uint32{game.Ports["http"], pod.Ports["http"]} {
			if listening(p) {
				left = append(left, fmt.Sprintf("port %d", p))
			}
		}
		if pids := processesUnder(s.dir); len(pids) > 0 {
			left = append(left, fmt.Sprintf("processes %v", pids))
		}
		return len(left) == 0, strings.Join(left, ", ")
	})
	for _, name := range []string{"hung", "hungweb"} {
		v, _ := s.app("demo", name)
		if len(v.Status.Instances) != 1 || !strings.Contains(v.Status.Instances[0].Message, "Executor did not reregister within 10s") {
			t.Errorf("%s after its executor did not come back: %+v, want the agent's reason", name, v.Status)
		}
	}
}
