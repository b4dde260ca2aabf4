package schedulerd_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/internal/testlog"
	"github.com/bcs-mesos/bcs-mesos/pkg/apiv1"
	"github.com/bcs-mesos/bcs-mesos/pkg/devcluster"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/schedulerd"
)

// sleeper is a deployment of one process that sleeps, named as its
// procName: instances are ready as soon as they run.
const sleeper = `{"apiVersion": "v4", "kind": "deployment", "metadata": {"name": "sleeper", "namespace": "ns-a"},
 "killPolicy": {"gracePeriod": 1},
 "spec": {"instance": 3, "template": {"spec": {"processes": [{"procName": "sleeper",
  "workPath": "${work_base_dir}/${namespace}.${processname}.${instanceid}",
  "pidFile": "${run_base_dir}/${namespace}.${processname}.${instanceid}/sleeper.pid",
  "startCmd": "mkdir -p $(dirname ${pidFile}) && cp /bin/sleep ./sleeper && echo $$ >${pidFile} && exec ./sleeper 100000",
  "resources": {"limits": {"cpu": "0.1", "memory": "16"}}}]}}}}`

// bufferOfTwo keeps two instances of sleeper ready and not allocated,
// deciding every 5 s (the least); a scale-down waits for a 10 s window.
const bufferOfTwo = `{"apiVersion": "v4", "kind": "autoscaler", "metadata": {"name": "sleeper", "namespace": "ns-a"},
 "spec": {"target": {"kind": "deployment", "name": "sleeper"}, "minReplicas": 1, "maxReplicas": 8, "intervalSeconds": 5,
  "metrics": [{"type": "buffer", "buffer": {"bufferSize": 2}}],
  "behavior": {"scaleDown": {"stabilizationWindowSeconds": 10}}}}`

// The autoscaler controller runs on the leading scheduler and scales a
// deployment of real processes: a buffer of 2 unallocated instances
// grows the deployment as instances are allocated through the API, the
// new instances running; released, it shrinks once the 10 s down window
// has passed, removing the highest IDs not allocated and leaving a hole
// rather than removing the allocated instance above it. POST /v1/plan of
// the autoscaler answers with the leader's decision, storing nothing.
// The controller's provider calls hold to the namespace's egress policy
// as hooks do: a web metric reads a server the policy lets through, and
// is refused the scheduler's own API.
func TestAutoscalerScalesADeployment(t *testing.T) {
	matchmaker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, `{"waiting": 150}`)
	}))
	t.Cleanup(matchmaker.Close)
	api := startDevScheduler(t, egressPolicyFile(t, strings.TrimPrefix(matchmaker.URL, "http://")))
	call(t, "POST", api+"/v1/deployments", sleeper, http.StatusCreated)
	first := runningInstances(t, api+sleeperPath, 0, 1, 2)
	call(t, "POST", api+"/v1/deployments/ns-a/sleeper/instances/1/allocate", "", http.StatusOK)
	call(t, "POST", api+"/v1/deployments/ns-a/sleeper/instances/2/allocate", "", http.StatusOK)

	var plan apiv1.AutoscalerView
	decode(t, call(t, "POST", api+"/v1/plan", bufferOfTwo, http.StatusOK), &plan)
	if plan.Status == nil || plan.Status.DesiredReplicas != 4 {
		t.Fatalf("plan: %+v, want 2 allocated + a buffer of 2 = 4", plan.Status)
	}
	if code := getJSON(t, api+"/v1/autoscalers/ns-a/sleeper", nil); code != http.StatusNotFound {
		t.Fatalf("GET the planned autoscaler: %d, want 404: a plan stores nothing", code)
	}
	for _, c := range []struct{ url, want string }{
		{matchmaker.URL + "/queue", "150"},
		{api + "/v1/autoscalers", "refused: the scheduler's API (egress policy of namespace ns-a)"},
	} {
		withWeb := strings.Replace(bufferOfTwo, `"metrics": [`,
			`"metrics": [{"type": "web", "name": "waiting", "web": {"url": "`+c.url+`", "jsonPath": "{$.waiting}"}, "targetValue": 100}, `, 1)
		var p apiv1.AutoscalerView
		decode(t, call(t, "POST", api+"/v1/plan", withWeb, http.StatusOK), &p)
		if got := metricShown(p.Status, "waiting"); !strings.Contains(got, c.want) {
			t.Errorf("plan reading %s: the metric shows %q, want %q", c.url, got, c.want)
		}
	}

	call(t, "POST", api+"/v1/autoscalers", bufferOfTwo, http.StatusCreated)
	runningInstances(t, api+sleeperPath, 0, 1, 2, 3)
	call(t, "POST", api+"/v1/deployments/ns-a/sleeper/instances/3/allocate", "", http.StatusOK)
	grown := runningInstances(t, api+sleeperPath, 0, 1, 2, 3, 4)
	for id := range 3 {
		if grown[id] != first[id] {
			t.Errorf("instance %d relaunched by the scale-up: %s → %s", id, first[id], grown[id])
		}
	}

	released := time.Now()
	call(t, "POST", api+"/v1/deployments/ns-a/sleeper/instances/1/release", "", http.StatusOK)
	call(t, "POST", api+"/v1/deployments/ns-a/sleeper/instances/2/release", "", http.StatusOK)
	// 1 allocated + 2: two of 0, 1, 2 and 4 go, the highest; 3 stays.
	shrunk := runningInstances(t, api+sleeperPath, 0, 1, 3)
	if shrunk[3] != grown[3] {
		t.Errorf("the allocated instance 3 was relaunched: %s → %s", grown[3], shrunk[3])
	}
	var view apiv1.AutoscalerView
	getJSON(t, api+"/v1/autoscalers/ns-a/sleeper", &view)
	last := view.Status.LastScale
	if last == nil || last.From != 5 || last.To != 3 || fmt.Sprint(removedIDs(last.Removed)) != "[2 4]" {
		t.Fatalf("last scale %+v, want 5 → 3 removing 2 and 4", last)
	}
	// The window holds the recommendation made before the release for
	// at least the decision after it.
	if waited := last.At.Sub(released); waited < 4*time.Second {
		t.Errorf("scaled down %v after the release: the 10 s down window held it for no decision", waited)
	}
}

// bufferOfGame keeps two instances of the process game ready and not
// allocated, deciding every 5 s.
const bufferOfGame = `{"apiVersion": "v4", "kind": "autoscaler", "metadata": {"name": "game", "namespace": "ns-a"},
 "spec": {"target": {"kind": "process", "name": "game"}, "minReplicas": 1, "maxReplicas": 8, "intervalSeconds": 5,
  "metrics": [{"type": "buffer", "buffer": {"bufferSize": 2}}]}}`

// A standby that takes over from a leader killed outright (SIGKILL, no
// resignation) carries on from the autoscaler's stored status: the old
// leader's decisions stay in the record, what it scaled is not scaled
// again, and the next change is scaled once.
func TestStandbyContinuesAutoscaling(t *testing.T) {
	etcd, cluster := startEtcdAndCluster(t)
	keyFile := filepath.Join(t.TempDir(), "secret.key")
	replica := func() *replica {
		return startReplicaWith(t, map[string]any{"Etcd": etcd.Endpoints()[0], "Master": cluster.MasterURL(), "DataDir": t.TempDir(),
			"KeyFile": keyFile})
	}
	leader, follower := whoLeads(t, replica(), replica())
	api := "http://" + leader.addr
	call(t, "POST", api+"/v1/apps", spreadApp, http.StatusCreated)
	runningInstances(t, api+gamePath, 0, 1, 2)
	call(t, "POST", api+gamePath+"/instances/0/allocate", "", http.StatusOK)
	call(t, "POST", api+gamePath+"/instances/1/allocate", "", http.StatusOK)
	call(t, "POST", api+"/v1/autoscalers", bufferOfGame, http.StatusCreated)
	runningInstances(t, api+gamePath, 0, 1, 2, 3)
	first := gameAutoscaler(t, follower.addr).LastScale
	if first == nil || first.From != 3 || first.To != 4 {
		t.Fatalf("the leader's scale: %+v, want 3 → 4 (2 allocated and a buffer of 2)", first)
	}

	leader.kill()
	eventually(t, "the follower to lead", func() (bool, string) {
		var v leaderView
		getJSON(t, "http://"+follower.addr+"/v1/leader", &v)
		return v.Self, fmt.Sprintf("%+v", v)
	})
	api = "http://" + follower.addr
	call(t, "POST", api+gamePath+"/instances/2/allocate", "", http.StatusOK)
	runningInstances(t, api+gamePath, 0, 1, 2, 3, 4)
	status := gameAutoscaler(t, follower.addr)
	var acted []string
	for _, d := range status.Decisions {
		if d.Acted {
			acted = append(acted, fmt.Sprintf("%d→%d at %s", d.Current, d.Desired, d.At.Format(time.RFC3339Nano)))
		}
	}
	want := []string{fmt.Sprintf("3→4 at %s", first.At.Format(time.RFC3339Nano)), fmt.Sprintf("4→5 at %s", status.LastScale.At.Format(time.RFC3339Nano))}
	if fmt.Sprint(acted) != fmt.Sprint(want) {
		t.Errorf("scales in the record: %v, want the old leader's and one of the new leader's: %v", acted, want)
	}
}

// spreadApp is the process game of 3 instances without a constraint.
const spreadApp = `{"apiVersion":"v4","kind":"process","metadata":{"name":"game","namespace":"ns-a"},
 "spec":{"instance":3,"template":{"spec":{"processes":[{"procName":"game",
  "workPath":"${work_base_dir}/${namespace}.${processname}.${instanceid}",
  "pidFile":"${run_base_dir}/${namespace}.${processname}.${instanceid}/pid",
  "startCmd":"./start.sh","resources":{"limits":{"cpu":"0.1","memory":"16"}}}]}}}}`

const gamePath = "/v1/apps/ns-a/game"

func gameAutoscaler(t *testing.T, addr string) *manifest.AutoscalerStatus {
	t.Helper()
	var v apiv1.AutoscalerView
	getJSON(t, "http://"+addr+"/v1/autoscalers/ns-a/game", &v)
	if v.Status == nil {
		t.Fatalf("autoscaler ns-a/game has no status")
	}
	return v.Status
}

// startDevScheduler runs bcs-scheduler in this process with its dev
// cluster of one agent running the real process executor, built for the
// test, and the admission policy file policy; it returns its API's URL.
func startDevScheduler(t *testing.T, policy string) string {
	t.Helper()
	return startDevSchedulerWith(t, policy, nil)
}

// startDevSchedulerWith is startDevScheduler with its options changed
// by change, when not nil.
func startDevSchedulerWith(t *testing.T, policy string, change func(*schedulerd.Options)) string {
	t.Helper()
	base, err := os.MkdirTemp("/tmp", "bcs-schedulerd-autoscale-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	// Processes run as their namespace's user: the directories above
	// their work paths must be searchable.
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	executor := filepath.Join(base, "bcs-process-executor")
	if out, err := exec.Command("go", "build", "-o", executor, "../../cmd/bcs-process-executor").CombinedOutput(); err != nil {
		t.Fatalf("go build bcs-process-executor: %v\n%s", err, out)
	}
	cgroupParent := filepath.Join("bcs-schedulerd-test", filepath.Base(base))
	o := schedulerd.Options{DataDir: filepath.Join(base, "data"), Dev: true, ProcessExecutorURI: "file://" + executor, AdmissionPolicy: policy,
		TickInterval: 50 * time.Millisecond, Logger: testlog.New(t),
		DevConfig: devcluster.Config{ListenAddr: "127.0.0.1:0", ExecutorMode: devcluster.ExecutorProcess,
			AllocationInterval: devcluster.Duration(50 * time.Millisecond), DefaultRefuse: devcluster.Duration(100 * time.Millisecond),
			ExecutorShutdownGracePeriod: devcluster.Duration(2 * time.Second),
			Agents:                      []devcluster.AgentSpec{{Hostname: "autoscale-1"}}}}
	o.Scheduler.PerAgentBaseDirs = true
	o.Scheduler.ProcessExecutor.Args = []string{"--cgroup-parent=" + cgroupParent, "--liveness-interval=100ms"}
	if change != nil {
		change(&o)
	}
	addr, stop, err := runInProcess(t, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stop(); removeCgroups(cgroupParent) })
	return "http://" + addr
}

// removeCgroups kills what is left under parent in each controller and
// removes its cgroups, deepest first, and parent's own parent.
func removeCgroups(parent string) {
	for _, ctl := range []string{"memory", "cpu", "cpuacct"} {
		var dirs []string
		_ = filepath.WalkDir(filepath.Join("/sys/fs/cgroup", ctl, parent), func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		for _, dir := range slices.Backward(dirs) {
			procs, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
			for _, p := range strings.Fields(string(procs)) {
				if pid, err := strconv.Atoi(p); err == nil {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
			for try := 0; try < 50 && os.Remove(dir) != nil; try++ {
				time.Sleep(20 * time.Millisecond)
			}
		}
		os.Remove(filepath.Join("/sys/fs/cgroup", ctl, filepath.Dir(parent))) // fails while another test uses it
	}
}

// call sends body (JSON) to url and fails unless it answers want; it
// returns the answer's body.
func call(t *testing.T, method, url, body string, want int) []byte {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s: %d %s, want %d", method, url, resp.StatusCode, got, want)
	}
	return got
}

func decode(t *testing.T, body []byte, v any) {
	t.Helper()
	if err := json.NewDecoder(bytes.NewReader(body)).Decode(v); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
}

const sleeperPath = "/v1/deployments/ns-a/sleeper"

// runningInstances waits until the workload at url has exactly the
// instances ids, each running, and returns their task group IDs by
// instance ID.
func runningInstances(t *testing.T, url string, ids ...int) map[int]string {
	t.Helper()
	groups := map[int]string{}
	// A decision every 5 s, a scale-down after a 10 s window.
	eventuallyWithin(t, 45*time.Second, fmt.Sprintf("instances %v running", ids), func() (bool, string) {
		var v apiv1.AppView
		getJSON(t, url, &v)
		clear(groups)
		var have []int
		for _, inst := range v.Status.Instances {
			have = append(have, inst.ID)
			if inst.State == "TASK_RUNNING" {
				groups[inst.ID] = inst.TaskGroupID
			}
		}
		return fmt.Sprint(have) == fmt.Sprint(ids) && len(groups) == len(ids), fmt.Sprintf("%+v", v.Status.Instances)
	})
	return groups
}

// metricShown is the value of metric name in status, or why it has none.
func metricShown(status *manifest.AutoscalerStatus, name string) string {
	if status == nil {
		return "no status"
	}
	for _, m := range status.Metrics {
		if m.Name == name && m.Current != nil {
			return strconv.FormatFloat(*m.Current, 'f', -1, 64)
		}
		if m.Name == name {
			return m.Message
		}
	}
	return fmt.Sprintf("no metric %s in %+v", name, status.Metrics)
}

// removedIDs are the IDs of a scale's removed instances, sorted.
func removedIDs(removed []manifest.RemovedInstance) []int {
	ids := make([]int, len(removed))
	for i, r := range removed {
		ids[i] = r.ID
	}
	slices.Sort(ids)
	return ids
}
