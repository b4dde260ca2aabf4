package scale_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/bcs-mesos/bcs-mesos/pkg/devcluster"
	"github.com/bcs-mesos/bcs-mesos/pkg/schedulerd"
	"github.com/bcs-mesos/bcs-mesos/pkg/simexec"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

var (
	capFlag     = flag.Duration("cap", 10*time.Minute, "stop waiting for Running after this long and report the progress made")
	logFlag     = flag.String("log", "", "file for the dev cluster's log and bcs-scheduler's (level info), one per sub-benchmark: -log run.log writes run.plain.log, run.restart.log …; default none")
	profileFlag = flag.String("schedprofile", "", "file for a CPU profile of bcs-scheduler over the run's first -schedprofile-time")
	profileTime = flag.Duration("schedprofile-time", time.Minute, "how long -schedprofile profiles")
	heapFlag    = flag.String("schedheap", "", "file for bcs-scheduler's heap profile at the end of the run")
	hostHeap    = flag.String("hostheap", "", "file for the benchmark's own heap profile (etcd's and the dev cluster's) at the end of the run")
	argsFlag    = flag.String("schedargs", "", "more bcs-scheduler flags, space-separated, e.g. --max-launching=10000")
	settleFlag  = flag.Duration("settle", 0, "after the run, wait this long and report bcs-scheduler's RSS again (settled-rss-KiB/task)")
	cpuHogFlag  = flag.Int("cpu-hog", 0, "this many processes spinning at normal priority during the run, each taking a core from the system measured")
)

// shape is a workload: apps applications of instances each on agents
// simulated agents, placed as placement says.
type shape struct {
	agents, apps, instances int
	placement               placement
}

// placement is how a shape's applications are constrained.
type placement int

const (
	// spread: each application has one of three constraints by turns,
	// which spread it over hostnames, idcs or districts.
	spread placement = iota
	// plain: no constraint, so instances pack densely on the agents the
	// matcher prefers.
	plain
	// mixed: every other application is plain, the others spread.
	mixed
)

func (p placement) String() string { return [...]string{"spread", "plain", "mixed"}[p] }

// The benchmark's shapes, each placed spread, plain and mixed
// (BenchmarkRunning100kOn5kAgents/plain): Marathon's published rate is
// about 40 tasks/s; the goal is 100,000 on 5,000 agents Running within
// 60 s on a 2-core machine, and 1,000,000 on 10,000 within 10 minutes.
func BenchmarkRunning10kOn100Agents(b *testing.B) {
	benchmarkPlacements(b, shape{agents: 100, apps: 10, instances: 1000})
}

func BenchmarkRunning100kOn5kAgents(b *testing.B) {
	benchmarkPlacements(b, shape{agents: 5000, apps: 100, instances: 1000})
}

func BenchmarkRunning1MOn10kAgents(b *testing.B) {
	benchmarkPlacements(b, shape{agents: 10000, apps: 1000, instances: 1000})
}

func benchmarkPlacements(b *testing.B, sh shape) {
	for _, p := range []placement{spread, plain, mixed} {
		sh.placement = p
		b.Run(p.String(), func(b *testing.B) { benchmarkRunning(b, sh) })
	}
}

// benchmarkRunning submits the shape's applications and waits until the
// API shows every instance in TASK_RUNNING, or -cap passed. Each
// iteration starts a fresh system (untimed). It reports:
//
//	s-to-running   seconds from the first POST until the API showed every instance in TASK_RUNNING (-cap when it did not)
//	running        instances the API showed in TASK_RUNNING at the end
//	launches/s     tasks the master launched, per second of the run
//	updates/s      status updates the agents sent (each once), per second of the run
//	ack-p50-ms     time from an update's first sending to the scheduler's ACKNOWLEDGE, median and 99th percentile
//	ack-p99-ms
//	resent         status updates sent again for want of an acknowledgement (should be 0)
//	rss-MiB        bcs-scheduler's resident memory at the end
//	rss-KiB/task   its growth since before the first POST, per submitted instance
//	heap-KiB/task  the growth of its live Go heap (after a GC), per submitted instance
//	etcd-B/task    the growth of etcd's database in use, per submitted instance
//	etcd-live-B/task  the same once its history is compacted away: the records alone
//	etcd-file-MiB  etcd's database file at the end, what its quota limits
//	etcd+devcluster-rss-MiB  the benchmark's own resident memory at the end (etcd and the dev cluster)
//	etcd-revs/task etcd's revisions (writing transactions) during the run, per submitted instance
//
// The memory figures are bcs-scheduler's own: it runs as its own
// process, etcd and the dev cluster in the benchmark's. -schedprofile
// saves a CPU profile of it.
func benchmarkRunning(b *testing.B, sh shape) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		sys := startSystem(b, sh)
		before := sys.measure(b)
		profiled := make(chan error, 1)
		if *profileFlag != "" {
			go func() { profiled <- sys.profile(*profileFlag, *profileTime) }()
		} else {
			profiled <- nil
		}
		stopHogs := startCPUHogs(b, *cpuHogFlag)
		b.StartTimer()
		res := sys.run(b, *capFlag, appManifest)
		b.StopTimer()
		stopHogs()
		if err := <-profiled; err != nil {
			b.Error(err)
		}
		if *heapFlag != "" {
			if code, heap := sys.get(sys.debug + "/debug/pprof/heap?gc=1"); code != http.StatusOK {
				b.Errorf("bcs-scheduler's heap profile: %d", code)
			} else if err := os.WriteFile(*heapFlag, heap, 0o644); err != nil {
				b.Error(err)
			}
		}
		writeHostHeap(b)
		after := sys.measure(b)
		if *settleFlag > 0 {
			time.Sleep(*settleFlag)
			settled := residentBytes(b, sys.scheduler.Process.Pid)
			b.ReportMetric(float64(settled-before.rss)/1024/float64(sh.apps*sh.instances), "settled-rss-KiB/task")
		}
		live := sys.compactEtcd(b)
		b.ReportMetric(float64(live-before.etcd)/float64(sh.apps*sh.instances), "etcd-live-B/task")
		sys.stop()
		report(b, sh, res, before, after)
	}
}

// writeHostHeap saves -hostheap, after a GC.
func writeHostHeap(b *testing.B) {
	if *hostHeap == "" {
		return
	}
	runtime.GC()
	f, err := os.Create(*hostHeap)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		b.Error(err)
	}
}

// startCPUHogs starts n processes that spin at normal priority, as a
// build sharing the machine would, and returns what stops them.
func startCPUHogs(b *testing.B, n int) (stop func()) {
	var hogs []*exec.Cmd
	stop = func() {
		for _, h := range hogs {
			_ = h.Process.Kill()
			_ = h.Wait()
		}
		hogs = nil
	}
	b.Cleanup(stop)
	for range n {
		h := exec.Command("/bin/sh", "-c", "while :; do :; done")
		if err := h.Start(); err != nil {
			b.Fatal(err)
		}
		hogs = append(hogs, h)
	}
	return stop
}

// system is one bcs: etcd and the dev cluster in this process, and
// bcs-scheduler, the binary, in its own, so that its memory is its own.
type system struct {
	shape     shape
	etcd      *store.Embedded
	cluster   *devcluster.Cluster
	scheduler *exec.Cmd
	api       string
	debug     string // bcs-scheduler's --debug-addr
	token     string
	logFile   *os.File
	stopped   sync.Once
	// workloads is where run posted the workloads: /v1/apps, /v1/deployments.
	workloads string
}

// schedulerBinary is bcs-scheduler built once per run of the benchmarks,
// in binDir, which TestMain removes.
var schedulerBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "bcs-scale-bin")
	if err != nil {
		return "", err
	}
	binDir = dir
	path := filepath.Join(dir, "bcs-scheduler")
	cmd := exec.Command("go", "build", "-o", path, "./cmd/bcs-scheduler")
	cmd.Dir = "../.."
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build bcs-scheduler: %v\n%s", err, out)
	}
	return path, nil
})

var binDir string

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

func startSystem(b *testing.B, sh shape) *system {
	b.Helper()
	binary, err := schedulerBinary()
	if err != nil {
		b.Fatal(err)
	}
	// etcd and the dev cluster share this process: at a million tasks its
	// heap (the dev cluster's ~7 KiB a task) would grow to twice its live
	// size between GCs, past what this machine leaves once bcs-scheduler
	// has its share. A soft limit makes the GC work harder instead.
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(hostMemoryLimit)
	}
	// Below the limit, this process collects less often than Go's
	// default: it stands for a C++ Mesos master and an etcd of their own,
	// and on two cores its collector's work (a third of its CPU at 100k)
	// was taken from the bcs-scheduler measured. The memory it uses
	// instead is this machine's to spare, up to the limit.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(hostGCPercent)
	}
	dir := b.TempDir()
	sys := &system{shape: sh}
	b.Cleanup(sys.stop)
	logger := slog.New(slog.DiscardHandler)
	var schedulerLog io.Writer = io.Discard
	if *logFlag != "" {
		f, err := os.Create(subBenchmarkFile(*logFlag, b.Name()))
		if err != nil {
			b.Fatal(err)
		}
		sys.logFile, schedulerLog = f, f
		logger = slog.New(slog.NewTextHandler(f, nil))
	}
	ctx := context.Background()
	if sys.etcd, err = store.StartEmbedded(ctx, filepath.Join(dir, "etcd")); err != nil {
		b.Fatal(err)
	}
	sys.cluster, err = devcluster.Start(ctx, devcluster.Config{
		ListenAddr: "127.0.0.1:0", WorkDir: filepath.Join(dir, "mesos"), ExecutorMode: devcluster.ExecutorSimulated,
		SimulatedMessages: simexec.Answer, Agents: agents(sh), Logger: logger.With("component", "devcluster"),
	})
	if err != nil {
		b.Fatal(err)
	}
	listen, debug := freeAddr(b), freeAddr(b)
	sys.api, sys.debug = "http://"+listen, "http://"+debug
	dataDir := filepath.Join(dir, "data")
	sys.scheduler = exec.Command(binary, "--listen", listen, "--debug-addr", debug, "--data-dir", dataDir,
		"--etcd-endpoints", strings.Join(sys.etcd.Endpoints(), ","), "--master", sys.cluster.MasterURL(),
		"--container-executor-uri", "file:///opt/bcs/bcs-container-executor", "--process-executor-uri", "file:///opt/bcs/bcs-process-executor")
	sys.scheduler.Args = append(sys.scheduler.Args, strings.Fields(*argsFlag)...)
	sys.scheduler.Stdout, sys.scheduler.Stderr = schedulerLog, schedulerLog
	if err := sys.scheduler.Start(); err != nil {
		b.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if code, _ := sys.get(sys.api + "/healthz"); code == http.StatusOK && len(sys.cluster.Frameworks()) > 0 {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("bcs-scheduler did not answer and subscribe to the master within a minute")
		}
	}
	token, err := os.ReadFile(filepath.Join(dataDir, schedulerd.AdminTokenFile))
	if err != nil {
		b.Fatal(err)
	}
	sys.token = strings.TrimSpace(string(token))
	return sys
}

// subBenchmarkFile is path with the last element of the benchmark's name
// before its extension: each sub-benchmark (a placement, a failover mode)
// writes its own file.
func subBenchmarkFile(path, benchmark string) string {
	ext := filepath.Ext(path)
	return strings.TrimSuffix(path, ext) + "." + benchmark[strings.LastIndexByte(benchmark, '/')+1:] + ext
}

// hostMemoryLimit is the benchmark process's soft memory limit, unless
// GOMEMLIMIT sets another.
const hostMemoryLimit = 12 << 30

// hostGCPercent is the benchmark process's GOGC, unless GOGC sets another.
const hostGCPercent = 400

func freeAddr(b *testing.B) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// stop ends what startSystem started, once.
func (sys *system) stop() {
	sys.stopped.Do(func() {
		if sys.scheduler != nil && sys.scheduler.Process != nil {
			_ = sys.scheduler.Process.Signal(syscall.SIGTERM)
			_ = sys.scheduler.Wait()
		}
		if sys.cluster != nil {
			sys.cluster.Stop()
		}
		if sys.etcd != nil {
			sys.etcd.Close()
		}
		if sys.logFile != nil {
			sys.logFile.Close()
		}
	})
}

// Agent attributes the constraints use: idc ×20, district ×5.
const idcs, districts = 20, 5

// agents are sized to hold twice the shape's instances (0.06 CPUs and
// 64 MB each, its executor's share included).
func agents(sh shape) []devcluster.AgentSpec {
	perAgent := 2 * float64(sh.apps*sh.instances) / float64(sh.agents)
	specs := make([]devcluster.AgentSpec, sh.agents)
	for i := range specs {
		specs[i] = devcluster.AgentSpec{
			Hostname:  fmt.Sprintf("agent-%d", i+1),
			Resources: devcluster.ResourceSpec{CPUs: math.Ceil(perAgent * 0.06), MemMB: math.Ceil(perAgent * 64)},
			Attributes: []devcluster.AttributeSpec{
				devcluster.TextAttribute("idc", fmt.Sprintf("idc-%d", i%idcs)),
				devcluster.TextAttribute("district", fmt.Sprintf("district-%d", i%districts)),
			},
		}
	}
	return specs
}

// manifest is application i of the shape: processes and applications
// (containers) by turns; a spread one with one of three constraints by
// turns: UNIQUE hostname (MAXPER hostname at twice the fair share when
// there are fewer agents than instances), MAXPER idc at twice the fair
// share, GROUPBY district.
func manifest(sh shape, i int) []byte {
	var constraint string
	switch {
	case sh.placement == plain || sh.placement == mixed && i%2 == 0:
	case i%3 == 0:
		if sh.instances <= sh.agents {
			constraint = `{"name":"hostname","operate":"UNIQUE"}`
		} else {
			constraint = fmt.Sprintf(`{"name":"hostname","operate":"MAXPER","type":3,"text":{"value":"%d"}}`, 2*sh.instances/sh.agents)
		}
	case i%3 == 1:
		constraint = fmt.Sprintf(`{"name":"idc","operate":"MAXPER","type":3,"text":{"value":"%d"}}`, 2*sh.instances/idcs)
	default:
		var items []string
		for d := 0; d < districts; d++ {
			items = append(items, strconv.Quote(fmt.Sprintf("district-%d", d)))
		}
		constraint = `{"name":"district","operate":"GROUPBY","type":4,"set":{"item":[` + strings.Join(items, ",") + `]}}`
	}
	resources := `"resources":{"limits":{"cpu":"0.05","memory":"32"}}`
	var kind, template string
	if i%2 == 0 {
		kind = "process"
		template = `{"processes":[{"procName":"svr","workPath":"${work_base_dir}/${namespace}.${processname}.${instanceid}",` +
			`"pidFile":"${run_base_dir}/${namespace}.${processname}.${instanceid}/svr.pid",` +
			`"startCmd":"./start.sh ${ports.http}","ports":[{"name":"http","hostPort":0,"protocol":"HTTP"}],` + resources + `}]}`
	} else {
		kind = "application"
		template = `{"networkMode":"BRIDGE","containers":[{"image":"bcs-test/busybox:latest","command":"/bin/sh","args":["-c","sleep 1d"],` + resources + `}]}`
	}
	if constraint != "" {
		constraint = `"constraint":{"intersectionItem":[{"unionData":[` + constraint + `]}]},`
	}
	return fmt.Appendf(nil, `{"apiVersion":"v4","kind":%q,"metadata":{"name":%q,"namespace":"bench"},`+
		`%s"spec":{"instance":%d,"template":{"spec":%s}}}`,
		kind, appName(i), constraint, sh.instances, template)
}

func appName(i int) string { return fmt.Sprintf("app-%03d", i) }

// result is what a run achieved.
type result struct {
	elapsed time.Duration
	capped  bool
	running int
}

// appManifest posts application i of the shape as manifest makes it.
func appManifest(sh shape, i int) (path string, body []byte) {
	return "/v1/apps", manifest(sh, i)
}

// run submits the workloads (post gives each one's path and manifest)
// and waits until the API shows all their instances in TASK_RUNNING, or
// until limit.
func (sys *system) run(b *testing.B, limit time.Duration, post func(sh shape, i int) (string, []byte)) result {
	start := time.Now()
	deadline := start.Add(limit)
	for i := 0; i < sys.shape.apps; i++ {
		path, manifest := post(sys.shape, i)
		sys.workloads = path
		if code, body := sys.call("POST", path, manifest); code != http.StatusCreated {
			b.Fatalf("POST %s: %d %s", appName(i), code, body)
		}
	}
	fmt.Fprintf(os.Stderr, "%d applications submitted in %v\n", sys.shape.apps, time.Since(start).Round(time.Millisecond))
	total := sys.shape.apps * sys.shape.instances
	progress := func(apiRunning string) {
		st := sys.cluster.Stats()
		fmt.Fprintf(os.Stderr, "%6.1fs: %d launched, %d running on the master, %s in the API; %d status updates (%d resent)\n",
			time.Since(start).Seconds(), st.TasksLaunched, st.TasksRunning, apiRunning, st.StatusUpdates, st.StatusUpdatesResent)
	}
	// The API shows no more than the master runs: until the master runs
	// every task, watch it, not the API, whose reads of every record would
	// slow the system measured.
	lastProgress := start
	for sys.cluster.Stats().TasksRunning < int64(total) && time.Now().Before(deadline) {
		if time.Since(lastProgress) >= 10*time.Second {
			progress("not read yet")
			lastProgress = time.Now()
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Each read of an application reads all its instances' records: a
	// pass over the applications not yet running is followed by a pause
	// as long, so that the reading takes at most half a core.
	running := make([]int, sys.shape.apps)
	for {
		pass := time.Now()
		n := 0
		for i, r := range running {
			if r < sys.shape.instances {
				running[i] = sys.runningInstances(b, appName(i))
			}
			n += running[i]
		}
		elapsed := time.Since(start)
		if n == total || elapsed >= limit {
			progress(strconv.Itoa(n))
			return result{elapsed: elapsed, capped: n < total, running: n}
		}
		if time.Since(lastProgress) >= 10*time.Second {
			progress(strconv.Itoa(n))
			lastProgress = time.Now()
		}
		time.Sleep(max(500*time.Millisecond, time.Since(pass)))
	}
}

// runningInstances counts the instances of an application the API shows
// in TASK_RUNNING.
func (sys *system) runningInstances(b *testing.B, name string) int {
	code, body := sys.call("GET", sys.workloads+"/bench/"+name, nil)
	if code != http.StatusOK {
		b.Fatalf("GET %s: %d %s", name, code, body)
	}
	var view struct {
		Status struct {
			Instances []struct {
				State string `json:"state"`
			} `json:"instances"`
		} `json:"status"`
	}
	if err := json.Unmarshal(body, &view); err != nil {
		b.Fatalf("GET %s: %v", name, err)
	}
	n := 0
	for _, inst := range view.Status.Instances {
		if inst.State == "TASK_RUNNING" {
			n++
		}
	}
	return n
}

// get reads url, unauthenticated (/healthz, the debug address).
func (sys *system) get(url string) (int, []byte) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, []byte(err.Error())
	}
	return do(req)
}

// call sends an API request as the admin.
func (sys *system) call(method, path string, body []byte) (int, []byte) {
	req, err := http.NewRequest(method, sys.api+path, bytes.NewReader(body))
	if err != nil {
		return 0, []byte(err.Error())
	}
	req.Header.Set("Authorization", "Bearer "+sys.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return do(req)
}

func do(req *http.Request) (int, []byte) {
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, []byte(err.Error())
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data
}

// footprint is bcs-scheduler's memory and etcd's database at one moment.
type footprint struct {
	rss, heap, etcd int64 // bytes
	// etcdFile is etcd's database file, what its quota limits (in use
	// and free pages); etcdRevision its store's revision, one per
	// transaction that wrote.
	etcdFile, etcdRevision int64
	// hostRSS is this process's resident memory: etcd's and the dev
	// cluster's.
	hostRSS int64
	stats   devcluster.Stats
	// storeWrites counts the driver's etcd transactions, storeWriteSecs
	// sums their durations (bcs_scheduler_store_write_seconds).
	storeWrites, storeWriteSecs float64
}

func (sys *system) measure(b *testing.B) footprint {
	b.Helper()
	f := footprint{stats: sys.cluster.Stats()}
	f.rss = residentBytes(b, sys.scheduler.Process.Pid)
	f.hostRSS = residentBytes(b, os.Getpid())
	// The heap profile's text form ends with the runtime's MemStats,
	// after a GC (gc=1).
	code, heap := sys.get(sys.debug + "/debug/pprof/heap?debug=1&gc=1")
	if code != http.StatusOK {
		b.Fatalf("bcs-scheduler's heap profile: %d", code)
	}
	for line := range strings.Lines(string(heap)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "# HeapInuse = "); ok {
			f.heap, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: sys.etcd.Endpoints(), DialTimeout: 5 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	status, err := cli.Status(ctx, sys.etcd.Endpoints()[0])
	if err != nil {
		b.Fatal(err)
	}
	f.etcd, f.etcdFile, f.etcdRevision = status.DbSizeInUse, status.DbSize, status.Header.Revision
	code, metrics := sys.call(http.MethodGet, "/metrics", nil)
	if code != http.StatusOK {
		b.Fatalf("GET /metrics: %d %s", code, metrics)
	}
	for line := range strings.Lines(string(metrics)) {
		name, value, _ := strings.Cut(strings.TrimSpace(line), " ")
		v, _ := strconv.ParseFloat(value, 64)
		switch name {
		case "bcs_scheduler_store_write_seconds_count":
			f.storeWrites = v
		case "bcs_scheduler_store_write_seconds_sum":
			f.storeWriteSecs = v
		}
	}
	return f
}

// compactEtcd compacts etcd's history away, once the run is over, and
// returns the size in use of what is left: the live records.
func (sys *system) compactEtcd(b *testing.B) int64 {
	b.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: sys.etcd.Endpoints(), DialTimeout: 5 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	status, err := cli.Status(ctx, sys.etcd.Endpoints()[0])
	if err != nil {
		b.Fatal(err)
	}
	if _, err := cli.Compact(ctx, status.Header.Revision, clientv3.WithCompactPhysical()); err != nil {
		b.Fatal(err)
	}
	if status, err = cli.Status(ctx, sys.etcd.Endpoints()[0]); err != nil {
		b.Fatal(err)
	}
	return status.DbSizeInUse
}

// residentBytes is VmRSS of /proc/<pid>/status.
func residentBytes(b *testing.B, pid int) int64 {
	b.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb << 10
		}
	}
	b.Fatal("no VmRSS in /proc/<pid>/status")
	return 0
}

// profile writes a CPU profile of bcs-scheduler over the next d to path.
func (sys *system) profile(path string, d time.Duration) error {
	code, data := sys.get(fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", sys.debug, int(d.Seconds())))
	if code != http.StatusOK {
		return fmt.Errorf("bcs-scheduler's CPU profile: %d %s", code, data)
	}
	return os.WriteFile(path, data, 0o644)
}

func report(b *testing.B, sh shape, res result, before, after footprint) {
	tasks := float64(sh.apps * sh.instances)
	secs := res.elapsed.Seconds()
	launched := after.stats.TasksLaunched - before.stats.TasksLaunched
	updates := after.stats.StatusUpdates - before.stats.StatusUpdates
	if res.capped {
		b.Logf("capped at %v: %d of %d instances Running in the API", res.elapsed.Round(time.Second), res.running, int(tasks))
	}
	b.ReportMetric(secs, "s-to-running")
	b.ReportMetric(float64(res.running), "running")
	b.ReportMetric(float64(launched)/secs, "launches/s")
	b.ReportMetric(float64(updates)/secs, "updates/s")
	b.ReportMetric(float64(after.stats.AckLatency.Quantile(0.5).Microseconds())/1000, "ack-p50-ms")
	b.ReportMetric(float64(after.stats.AckLatency.Quantile(0.99).Microseconds())/1000, "ack-p99-ms")
	b.ReportMetric(float64(after.stats.StatusUpdatesResent-before.stats.StatusUpdatesResent), "resent")
	b.ReportMetric(float64(after.rss)/(1<<20), "rss-MiB")
	b.ReportMetric(float64(after.rss-before.rss)/1024/tasks, "rss-KiB/task")
	b.ReportMetric(float64(after.heap-before.heap)/1024/tasks, "heap-KiB/task")
	b.ReportMetric(float64(after.etcd-before.etcd)/tasks, "etcd-B/task")
	b.ReportMetric(float64(after.etcdFile)/(1<<20), "etcd-file-MiB")
	b.ReportMetric(float64(after.hostRSS)/(1<<20), "etcd+devcluster-rss-MiB")
	b.ReportMetric(float64(after.etcdRevision-before.etcdRevision)/tasks, "etcd-revs/task")
	if txns := after.storeWrites - before.storeWrites; txns > 0 {
		b.ReportMetric(txns, "store-txns")
		b.ReportMetric((after.storeWriteSecs-before.storeWriteSecs)/txns*1000, "store-txn-ms")
		b.ReportMetric(after.storeWriteSecs-before.storeWriteSecs, "store-s")
	}
}
