package e2e_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// bin holds the binaries TestMain builds.
var bin string

func TestMain(m *testing.M) {
	// A sharded run (scripts/test-all) builds the binaries once, into
	// BCS_E2E_BIN, for every test process; a plain go test, into a
	// directory of its own.
	dir, own := os.Getenv("BCS_E2E_BIN"), false
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "bcs-e2e-bin"); err != nil {
			panic(err)
		}
		own = true
	}
	bin = dir
	code := 1
	if err := buildBinaries(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
	} else {
		code = m.Run()
	}
	if own {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

// buildBinaries builds the system's binaries into dir, once: the first
// test process of a sharded run builds them while the others wait, and
// later ones find them built.
func buildBinaries(dir string) error {
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	done := filepath.Join(dir, ".built")
	if _, err := os.Stat(done); err == nil {
		return nil
	}
	for _, b := range []struct{ name, pkg string }{
		{"bcs-scheduler", "./cmd/bcs-scheduler"},
		{"bcs-process-executor", "./cmd/bcs-process-executor"},
		{"bcs-container-executor", "./cmd/bcs-container-executor"},
		{"devcluster", "./cmd/devcluster"},
		{"bcsctl", "./cmd/bcsctl"},
		{"gamesvr", "./examples/gamesvr"},
	} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, b.name), b.pkg)
		cmd.Dir = ".."
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("build %s: %v\n%s", b.name, err, out)
		}
	}
	return os.WriteFile(done, nil, 0o600)
}

// freePort returns a port of this worker's own range (harnessPorts) that
// no one listens on and that it has not returned before. The range lies
// outside the kernel's ephemeral range, so that no other process can take
// a port between its check here and the bind of the process it is for: a
// port the kernel handed out and this closed again went to the other
// worker's scheduler, or to an outgoing connection, before its taker bound
// it ("bind: address already in use").
func freePort(t *testing.T) int {
	t.Helper()
	handedOut.Lock()
	defer handedOut.Unlock()
	for port := harnessPortsFirst; port <= harnessPortsLast; port++ {
		if handedOut.ports[port] {
			continue
		}
		handedOut.ports[port] = true
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue // taken: a process of an earlier test still holds it
		}
		ln.Close()
		return port
	}
	t.Fatalf("no free port left in %d-%d", harnessPortsFirst, harnessPortsLast)
	return 0
}

var handedOut = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// Each worker of a sharded run (BCS_E2E_WORKER, 0, 1, …; one test process
// at a time) has ports of its own, all below the ephemeral range
// (32768-60999) and apart from the dev cluster's default (31000-32000):
// agentPorts for its agents to offer, harnessPorts for the servers of the
// harness (dev masters, schedulers, control APIs, Prometheus).
var (
	agentPortsFirst, agentPortsLast     = agentPorts(os.Getenv("BCS_E2E_WORKER"))
	harnessPortsFirst, harnessPortsLast = agentPortsLast + 1, agentPortsFirst + 1499
)

func agentPorts(worker string) (first, last int) {
	n, _ := strconv.Atoi(worker)
	first = 21000 + 1500*min(max(n, 0), 5)
	return first, first + 1000
}

// system is one machine's bcs: a dev cluster process with three agents
// running real executors, and a bcs-scheduler process pointed at it.
type system struct {
	t         *testing.T
	dir       string
	extraArgs []string // more bcs-scheduler flags
	api       string   // http://127.0.0.1:port
	tokenFile string   // the admin token bcs-scheduler made in its data dir
	master    string
	framework string // bcs-scheduler's framework ID, once frameworkID read it
	// cgroupOwners are the executors' cgroup directories there were
	// before the system started: the others are its executors'.
	cgroupOwners map[string]bool
	control      string // the dev cluster's control API (POST /agents, POST /agents/{id}/remove)
	cluster      *exec.Cmd
	scheduler    *exec.Cmd
	// standbys are more bcs-scheduler replicas (startStandby).
	standbys []*exec.Cmd
}

func startSystem(t *testing.T, schedulerArgs ...string) *system {
	t.Helper()
	return startSystemWith(t, nil, schedulerArgs...)
}

// startSystemWith is startSystem with the dev cluster's config (as its
// JSON file) edited; its master URL is https:// when it serves TLS.
func startSystemWith(t *testing.T, editCluster func(config map[string]any), schedulerArgs ...string) *system {
	t.Helper()
	s := &system{t: t, dir: t.TempDir(), extraArgs: schedulerArgs, cgroupOwners: cgroupOwners()}
	for _, d := range []string{"data/files", "work", "run", "mesos"} {
		if err := os.MkdirAll(filepath.Join(s.dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Processes run as their namespaces' uids: every directory above
	// their work paths must be searchable (t.TempDir makes them 0700).
	for _, d := range []string{filepath.Dir(s.dir), s.dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s.packageGamesvr()
	masterPort := freePort(t)
	s.master = fmt.Sprintf("http://127.0.0.1:%d", masterPort)
	// Three agents on one machine: each gets its own slice of
	// agentPortsFirst-agentPortsLast, which no other package's tests
	// offer (the dev cluster's default 31000-32000 is theirs).
	config := map[string]any{
		"allocation_interval": "200ms", "default_refuse": "1s", "sandbox_gc_delay": "1s",
		"agents": []map[string]any{
			{"hostname": "agent-1", "resources": map[string]any{"ports": []map[string]int{{"begin": agentPortsFirst, "end": agentPortsFirst + 332}}},
				"attributes": []map[string]any{{"name": "rack", "text": "r1"}}},
			{"hostname": "agent-2", "resources": map[string]any{"ports": []map[string]int{{"begin": agentPortsFirst + 333, "end": agentPortsFirst + 665}}},
				"attributes": []map[string]any{{"name": "rack", "text": "r2"}}},
			{"hostname": "agent-3", "resources": map[string]any{"ports": []map[string]int{{"begin": agentPortsFirst + 666, "end": agentPortsLast}}},
				"attributes": []map[string]any{{"name": "rack", "text": "r3"}}},
		},
	}
	if editCluster != nil {
		editCluster(config)
		if config["ssl_cert_file"] != nil {
			s.master = fmt.Sprintf("https://127.0.0.1:%d", masterPort)
		}
	}
	data, _ := json.Marshal(config)
	configFile := filepath.Join(s.dir, "cluster.json")
	if err := os.WriteFile(configFile, data, 0o644); err != nil {
		t.Fatal(err)
	}
	s.control = fmt.Sprintf("127.0.0.1:%d", freePort(t))
	s.cluster = s.spawn("devcluster", filepath.Join(bin, "devcluster"), "-config", configFile,
		"-listen", fmt.Sprintf("127.0.0.1:%d", masterPort), "-executors", "process", "-work-dir", filepath.Join(s.dir, "mesos"),
		"-control", s.control)
	s.api = fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
	s.tokenFile = filepath.Join(s.dir, "data", "admin.token")
	t.Cleanup(s.stop) // also when the scheduler does not come up: its log is shown
	s.startScheduler()
	return s
}

// allowEgress is the --admission-policy of the default rules (processes
// and containers run as their namespaces' uids) whose namespaces' hooks,
// callbacks and fetches may reach allowed besides what the egress policy
// lets through: the tests' servers listen on loopback, which it refuses
// otherwise, and are opened as a user opens a Prometheus on 127.0.0.1.
func allowEgress(t *testing.T, allowed ...string) string {
	t.Helper()
	return admissionPolicy(t, map[string]any{"default": map[string]any{"egress": allowed}})
}

// admissionPolicy writes policy into a file and returns the
// --admission-policy flag naming it.
func admissionPolicy(t *testing.T, policy map[string]any) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "admission-policy.json")
	data, _ := json.Marshal(policy)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return "--admission-policy=" + path
}

func (s *system) packageGamesvr() {
	pkg := filepath.Join(s.dir, "gamesvr-package")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		s.t.Fatal(err)
	}
	cp := exec.Command("sh", "-c", fmt.Sprintf("cp %s %s/ && cp ../examples/gamesvr/package/*.sh %s/ && tar -C %s -czf %s .",
		filepath.Join(bin, "gamesvr"), pkg, pkg, pkg, filepath.Join(s.dir, "data", "files", "gamesvr.tar.gz")))
	if out, err := cp.CombinedOutput(); err != nil {
		s.t.Fatalf("package gamesvr: %v %s", err, out)
	}
}

func (s *system) startScheduler() {
	s.t.Helper()
	s.scheduler = s.spawnScheduler("bcs-scheduler", s.api)
}

// spawnScheduler starts bcs-scheduler with its API at api (as name.log)
// and waits until the API answers.
func (s *system) spawnScheduler(name, api string) *exec.Cmd {
	s.t.Helper()
	listen := strings.TrimPrefix(api, "http://")
	args := append([]string{"--listen", listen, "--data-dir", filepath.Join(s.dir, "data"), "--master", s.master,
		"--process-executor-uri", "file://" + filepath.Join(bin, "bcs-process-executor"),
		"--container-executor-uri", "file://" + filepath.Join(bin, "bcs-container-executor"),
		"--work-base-dir", filepath.Join(s.dir, "work"), "--run-base-dir", filepath.Join(s.dir, "run"), "--per-agent-base-dirs",
		// No registry: pods' network containers run the test image.
		"--container-executor-arg=--network-image=bcs-test/busybox:latest",
		"--container-executor-arg=--network-command=sleep 2147483647"}, s.extraArgs...)
	cmd := s.spawn(name, filepath.Join(bin, "bcs-scheduler"), args...)
	s.eventually("the API", func() (bool, string) {
		resp, err := http.Get(api + "/healthz")
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == 200, resp.Status
	})
	return cmd
}

// spawn starts a binary in its own process group, logging to a file.
func (s *system) spawn(name, path string, args ...string) *exec.Cmd {
	s.t.Helper()
	logFile, err := os.Create(filepath.Join(s.dir, name+".log"))
	if err != nil {
		s.t.Fatal(err)
	}
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	return cmd
}

// killScheduler ends bcs-scheduler with SIGKILL, as a crash would.
func (s *system) killScheduler() {
	_ = s.scheduler.Process.Kill()
	_, _ = s.scheduler.Process.Wait()
}

func (s *system) stop() {
	for _, cmd := range append(s.standbys, s.scheduler, s.cluster) {
		if cmd != nil && cmd.ProcessState == nil {
			_ = cmd.Process.Signal(syscall.SIGCONT) // a test may have frozen it
			_ = cmd.Process.Signal(syscall.SIGTERM)
			done := make(chan struct{})
			go func() { _, _ = cmd.Process.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(15 * time.Second):
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				<-done
			}
		}
	}
	// Nothing the system started may outlive it: a leftover holds ports
	// and cgroups the next test needs.
	if pids := processesUnder(s.dir); len(pids) > 0 {
		s.t.Errorf("processes left running under %s after the system stopped: %v", s.dir, pids)
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	// Its dead executors' empty cgroups are swept, as the next executor
	// would; a cgroup still holding a process, or that stays, leaked.
	if leaked := sweepCgroups(s.cgroupOwners); len(leaked) > 0 {
		s.t.Errorf("cgroups left by the system after it stopped: %v", leaked)
	}
	if s.t.Failed() {
		for _, name := range []string{"bcs-scheduler", "bcs-scheduler-standby", "devcluster"} {
			if data, err := os.ReadFile(filepath.Join(s.dir, name+".log")); err == nil {
				s.t.Logf("%s.log (last 4000 bytes):\n%s", name, tail(data, 4000))
			}
		}
		// The executors whose tasks failed, and the last one.
		logs, _ := filepath.Glob(filepath.Join(s.dir, "mesos", "agents", "*", "frameworks", "*", "executors", "*", "runs", "latest", "stderr"))
		shown := 0
		for i, f := range logs {
			data, _ := os.ReadFile(f)
			if (bytes.Contains(data, []byte("TASK_FAILED")) && shown < 3) || i == len(logs)-1 {
				shown++
				s.t.Logf("%s:\n%s", f, tail(data, 2000))
			}
		}
	}
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

func (s *system) eventually(what string, cond func() (bool, string)) {
	s.t.Helper()
	s.eventuallyWithin(40*time.Second, "timed out waiting for "+what, cond)
}

// eventuallyWithin polls cond until it holds or d passes, then fails with
// failure and cond's last word.
func (s *system) eventuallyWithin(d time.Duration, failure string, cond func() (bool, string)) {
	s.t.Helper()
	deadline := time.Now().Add(d)
	last := ""
	for time.Now().Before(deadline) {
		ok, state := cond()
		if ok {
			return
		}
		last = state
		time.Sleep(200 * time.Millisecond)
	}
	s.t.Fatalf("%s; last: %s", failure, last)
}

// call sends a JSON request and returns the status and body.
func (s *system) call(method, path string, body []byte) (int, []byte) {
	s.t.Helper()
	code, data, err := s.attempt(http.DefaultClient, s.api, method, path, body)
	if err != nil {
		s.t.Fatal(err)
	}
	return code, data
}

// attempt sends a JSON request as the admin to the replica at api with
// client; err is a transport error: no HTTP answer.
func (s *system) attempt(client *http.Client, api, method, path string, body []byte) (int, []byte, error) {
	return s.send(client, api, s.token(), method, path, body)
}

// attemptAs is attempt to the leader's API as the caller of token.
func (s *system) attemptAs(client *http.Client, token, method, path string, body []byte) (int, []byte, error) {
	return s.send(client, s.api, token, method, path, body)
}

func (s *system) send(client *http.Client, api, token, method, path string, body []byte) (int, []byte, error) {
	req, err := http.NewRequest(method, api+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data, nil
}

// token is the admin token bcs-scheduler made at its first start (no
// --token-file).
func (s *system) token() string {
	s.t.Helper()
	data, err := os.ReadFile(s.tokenFile)
	if err != nil {
		s.t.Fatalf("the admin token: %v", err)
	}
	return strings.TrimSpace(string(data))
}

// authorize makes req the admin's.
func (s *system) authorize(req *http.Request) {
	s.t.Helper()
	req.Header.Set("Authorization", "Bearer "+s.token())
}

// clientEnv is the environment of a client of the API (bcsctl, scripts):
// its address and the admin's token.
func (s *system) clientEnv() []string {
	s.t.Helper()
	return append(os.Environ(), "BCS_SERVER="+s.api, "BCS_TOKEN="+s.token())
}

type instanceView struct {
	ID          int               `json:"id"`
	TaskGroupID string            `json:"taskGroupID"`
	State       string            `json:"state"`
	Stopped     bool              `json:"stopped"`
	Phase       string            `json:"phase"`
	Agent       string            `json:"agent"`
	Host        string            `json:"host"`
	Ports       map[string]uint32 `json:"ports"`
	Healthy     *bool             `json:"healthy"`
	Restarts    int               `json:"restarts"`
	Message     string            `json:"message"`
	Tasks       []taskView        `json:"tasks"`
	Move        *struct {
		Reason    string `json:"reason"`
		Successor *struct {
			Host string `json:"host"`
		} `json:"successor"`
	} `json:"move"`
}

type appView struct {
	Version   int `json:"version"`
	Instances int `json:"instances"`
	Status    struct {
		State     string         `json:"state"`
		Message   string         `json:"message"`
		Instances []instanceView `json:"instances"`
	} `json:"status"`
}

func (s *system) app(ns, name string) (appView, int) {
	code, body := s.call("GET", "/v1/apps/"+ns+"/"+name, nil)
	var v appView
	_ = json.Unmarshal(body, &v)
	return v, code
}

// running waits for n running instances and the application Running.
func (s *system) running(ns, name string, n int) []instanceView {
	s.t.Helper()
	var got []instanceView
	s.eventually(fmt.Sprintf("%d running instances of %s/%s", n, ns, name), func() (bool, string) {
		v, _ := s.app(ns, name)
		got = v.Status.Instances
		running := 0
		for _, i := range got {
			if i.State == "TASK_RUNNING" {
				running++
			}
		}
		return running == n && len(got) == n && v.Status.State == "Running", fmt.Sprintf("%s %q %+v", v.Status.State, v.Status.Message, got)
	})
	return got
}

// get fetches a URL on this machine.
func get(url string) (int, string) {
	client := http.Client{Timeout: 2 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// manifest reads an example manifest (its package URL is the scheduler's
// own, ${scheduler_url}), edited by edit.
func (s *system) manifest(file string, edit func(m map[string]any)) []byte {
	s.t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "examples", file))
	if err != nil {
		s.t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		s.t.Fatal(err)
	}
	if edit != nil {
		edit(m)
	}
	out, _ := json.Marshal(m)
	return out
}

// runPath is a path under an agent's ${run_base_dir} (the agents share
// this machine: each has its own, --per-agent-base-dirs).
func (s *system) runPath(host string, parts ...string) string {
	return filepath.Join(append([]string{s.dir, "run", host}, parts...)...)
}

func pidOf(t *testing.T, pidFile string) int {
	t.Helper()
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// processesUnder lists the processes whose working directory is under dir.
func processesUnder(dir string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if err == nil && strings.HasPrefix(strings.TrimSuffix(cwd, " (deleted)"), dir+"/") && alive(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// metric reads GET /metrics: a counter's or gauge's value, or a
// histogram's count of observations, summed over the series that carry
// labels (name, value pairs).
func (s *system) metric(name string, labels ...string) float64 {
	s.t.Helper()
	resp, err := http.Get(s.api + "/metrics")
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		s.t.Fatalf("GET /metrics: %v", err)
	}
	var sum float64
	for _, m := range families[name].GetMetric() {
		matches := true
		for i := 0; i+1 < len(labels); i += 2 {
			matches = matches && slices.ContainsFunc(m.GetLabel(), func(l *dto.LabelPair) bool {
				return l.GetName() == labels[i] && l.GetValue() == labels[i+1]
			})
		}
		if matches {
			sum += m.GetCounter().GetValue() + m.GetGauge().GetValue() + float64(m.GetHistogram().GetSampleCount())
		}
	}
	return sum
}
