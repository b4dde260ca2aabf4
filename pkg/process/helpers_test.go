package process_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/bcs-mesos/bcs-mesos/internal/testlog"
	"github.com/bcs-mesos/bcs-mesos/pkg/executor"
	"github.com/bcs-mesos/bcs-mesos/pkg/process"
	"github.com/bcs-mesos/bcs-mesos/pkg/taskstate"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// member is one archive member: a file (Body), a directory (Dir), a
// symlink (Link) or a hard link (Hard).
type member struct {
	Name string
	Body string
	Mode int64
	Dir  bool
	Link string
	Hard string
}

func tarGz(t *testing.T, members ...member) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, m := range members {
		h := &tar.Header{Name: m.Name, Mode: m.Mode, Size: int64(len(m.Body)), Typeflag: tar.TypeReg, ModTime: time.Unix(0, 0)}
		if h.Mode == 0 {
			h.Mode = 0o644
		}
		switch {
		case m.Dir:
			h.Typeflag, h.Mode, h.Size = tar.TypeDir, 0o755, 0
		case m.Link != "":
			h.Typeflag, h.Linkname, h.Size = tar.TypeSymlink, m.Link, 0
		case m.Hard != "":
			h.Typeflag, h.Linkname, h.Size = tar.TypeLink, m.Hard, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(m.Body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func zipOf(t *testing.T, members ...member) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, m := range members {
		h := &zip.FileHeader{Name: m.Name, Method: zip.Deflate}
		h.SetMode(0o755)
		body := m.Body
		if m.Link != "" {
			h.SetMode(os.ModeSymlink | 0o777)
			body = m.Link
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// packageServer serves packages with basic auth and an ETag, counting
// full downloads per path.
type packageServer struct {
	*httptest.Server
	user, pwd string
	mu        sync.Mutex
	files     map[string][]byte
	bodies    map[string]int
	requests  atomic.Int32
}

func newPackageServer(t *testing.T) *packageServer {
	s := &packageServer{user: "deploy", pwd: "s3cret-pw", files: map[string][]byte{}, bodies: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		s.mu.Lock()
		defer s.mu.Unlock()
		if u, p, ok := r.BasicAuth(); !ok || u != s.user || p != s.pwd {
			w.Header().Set("WWW-Authenticate", `Basic realm="repo"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		body, ok := s.files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		etag := fmt.Sprintf(`"%x"`, sha256.Sum256(body))
		w.Header().Set("ETag", etag)
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		s.bodies[r.URL.Path]++
		_, _ = w.Write(body)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *packageServer) put(path string, body []byte) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files[path] = body
	return s.URL + path
}

func (s *packageServer) downloads(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bodies[path]
}

// recorder is an executor.Reporter that keeps every report.
type recorder struct {
	t       *testing.T
	mu      sync.Mutex
	reports []executor.Report
	changed chan struct{}
}

func newRecorder(t *testing.T) *recorder { return &recorder{t: t, changed: make(chan struct{}, 1)} }

func (r *recorder) Report(rep executor.Report) {
	r.mu.Lock()
	r.reports = append(r.reports, rep)
	r.mu.Unlock()
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

// await returns the first report of taskID after index from that
// matches pred, and its index.
func (r *recorder) await(what string, from int, pred func(executor.Report) bool) (executor.Report, int) {
	r.t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		r.mu.Lock()
		for i := from; i < len(r.reports); i++ {
			if pred(r.reports[i]) {
				rep := r.reports[i]
				r.mu.Unlock()
				return rep, i
			}
		}
		var states []string
		for _, rep := range r.reports {
			states = append(states, fmt.Sprintf("%s %s %q", rep.TaskID, rep.State, rep.Message))
		}
		r.mu.Unlock()
		select {
		case <-r.changed:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			r.t.Fatalf("no %s; reports: %s", what, strings.Join(states, "; "))
		}
	}
}

// of returns the reports of taskID from index from on.
func (r *recorder) of(taskID string, from int) []executor.Report {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []executor.Report
	for _, rep := range r.reports[min(from, len(r.reports)):] {
		if rep.TaskID == taskID {
			out = append(out, rep)
		}
	}
	return out
}

// next is the index the next report will have.
func (r *recorder) next() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.reports)
}

func (r *recorder) awaitState(id string, s taskstate.State, from int) (executor.Report, int) {
	r.t.Helper()
	return r.await(fmt.Sprintf("%s %s", id, s), from, func(rep executor.Report) bool { return rep.TaskID == id && rep.State == s })
}

func (r *recorder) awaitTerminal(id string) executor.Report {
	r.t.Helper()
	rep, _ := r.await(id+" terminal", 0, func(rep executor.Report) bool { return rep.TaskID == id && rep.State.Terminal() })
	return rep
}

// env is one runtime with its roots under /tmp (reachable by nobody)
// and a private cgroup parent.
type env struct {
	rt      *process.Runtime
	work    string
	run     string
	cache   string
	logs    string // the executor's LogDir: the tasks' stdout and stderr
	cgroups *process.Cgroups
	rec     *recorder
}

func newEnv(t *testing.T, edit func(*process.Config)) *env {
	t.Helper()
	base, err := os.MkdirTemp("/tmp", "bcs-process-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	e := &env{work: filepath.Join(base, "work"), run: filepath.Join(base, "run"), cache: filepath.Join(base, "cache"), rec: newRecorder(t)}
	parent := "bcs-process-test/" + filepath.Base(base)
	cg, err := process.DetectCgroups("/sys/fs/cgroup", parent)
	if err != nil {
		t.Fatalf("cgroups: %v", err)
	}
	e.cgroups = cg
	t.Cleanup(func() {
		for _, c := range []string{"memory", "cpu", "cpuacct"} {
			os.Remove(filepath.Join("/sys/fs/cgroup", c, parent))
			os.Remove(filepath.Join("/sys/fs/cgroup", c, "bcs-process-test")) // fails while other tests use it
		}
	})
	logs := filepath.Join(base, "logs")
	e.logs = logs
	if err := os.MkdirAll(logs, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := process.Config{
		WorkBaseDir: e.work, RunBaseDir: e.run, CacheDir: e.cache, LogDir: logs,
		Cgroups: cg, Logger: testlog.New(t), LivenessInterval: 100 * time.Millisecond, TermWait: 500 * time.Millisecond,
	}
	if edit != nil {
		edit(&cfg)
	}
	rt, err := process.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.rt = rt
	t.Cleanup(func() { rt.Shutdown(5 * time.Second) })
	return e
}

// testNamespace is the namespace of the tests' instances.
const testNamespace = "ns-t"

// instanceOf is instance 0 of the app named app, whose directories
// workDir and runDir are.
func instanceOf(app string) proto.Instance {
	return proto.Instance{Namespace: testNamespace, App: app}
}

// workDir is the work directory of instanceOf(app).
func (e *env) workDir(app string) string {
	return filepath.Join(e.work, testNamespace+"."+app+".0")
}

// runDir is the run directory of instanceOf(app).
func (e *env) runDir(app string) string {
	return filepath.Join(e.run, testNamespace+"."+app+".0")
}

// groupTask is one task of a task group to launch.
type groupTask struct {
	id   string
	spec *proto.TaskSpec
}

// launch starts spec as task id, a group of one.
func (e *env) launch(t *testing.T, id string, spec *proto.TaskSpec) {
	t.Helper()
	e.launchGroup(t, groupTask{id, spec})
}

// launchGroup starts tasks as one task group.
func (e *env) launchGroup(t *testing.T, tasks ...groupTask) {
	t.Helper()
	var group []executor.Task
	for _, gt := range tasks {
		group = append(group, executor.Task{Info: mesos.TaskInfo{TaskID: mesos.TaskID{Value: gt.id}}, Spec: gt.spec,
			KillGrace: time.Duration(gt.spec.KillGracePeriodSeconds * float64(time.Second))})
	}
	e.rt.Launch(t.Context(), group, e.rec)
}

// seedSpec is seed 000's process example with variables expanded for
// instance 0 of ns-a/gamesvc, its package at url.
func (e *env) seedSpec(url, user, pwd string, port int) *proto.TaskSpec {
	outDir := filepath.Join(e.work, "ns-a.gamesvc.0")
	workPath := filepath.Join(outDir, "gamesvc")
	pidFile := filepath.Join(e.run, "ns-a.gamesvc.0", "pid", "gamesvc.pid")
	return &proto.TaskSpec{
		Version:  proto.Version,
		Instance: proto.Instance{Namespace: "ns-a", App: "gamesvc", Index: 0},
		Name:     "gamesvr",
		Process: &proto.ProcessSpec{
			ProcName: "gamesvr", User: "nobody", WorkPath: workPath, PidFile: pidFile,
			URIs:     []proto.URI{{Value: url, User: user, Password: pwd, PullPolicy: process.PullAlways, OutputDir: outDir}},
			StartCmd: fmt.Sprintf("./start.sh --port %d --pidfile %s", port, pidFile), StartGracePeriod: 0.5,
			StopCmd:   "./stop.sh --pidfile " + pidFile,
			ReloadCmd: "./reload.sh --pidfile " + pidFile,
		},
		Ports: []proto.Port{{Name: "http_port", HostPort: port, Protocol: "HTTP"}},
		Env:   []proto.EnvVar{{Name: "http_port", Value: fmt.Sprint(port)}, {Name: "pid_file", Value: pidFile}, {Name: "namespace", Value: "ns-a"}},
		Files: []proto.File{{Path: "conf/game.conf", Content: []byte("level=9\n")}},
		HealthChecks: []proto.HealthCheck{{Type: "HTTP", PortName: "http_port", Path: "/check", IntervalSeconds: 0.2,
			TimeoutSeconds: 1, GracePeriodSeconds: 5, ConsecutiveFailures: 3}},
		KillGracePeriodSeconds: 2,
		Resources:              proto.Resources{CPULimit: 2, MemLimitMB: 500},
	}
}

// gamesvrBinary builds internal/gamesvr once per test binary.
var gamesvrBinary struct {
	once sync.Once
	body []byte
	err  error
}

func gamesvr(t *testing.T) []byte {
	t.Helper()
	gamesvrBinary.once.Do(func() {
		dir, err := os.MkdirTemp("", "gamesvr-")
		if err != nil {
			gamesvrBinary.err = err
			return
		}
		defer os.RemoveAll(dir)
		out, err := exec.Command("go", "build", "-o", filepath.Join(dir, "gamesvr"), "./internal/gamesvr").CombinedOutput()
		if err != nil {
			gamesvrBinary.err = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		gamesvrBinary.body, gamesvrBinary.err = os.ReadFile(filepath.Join(dir, "gamesvr"))
	})
	if gamesvrBinary.err != nil {
		t.Fatal(gamesvrBinary.err)
	}
	return gamesvrBinary.body
}

// seedPackage is the package of the seed example: the gamesvr binary,
// start.sh (daemonises it; the daemon writes the pid file; it records
// what it saw: its uid, conf/game.conf, the package's VERSION and
// $release), stop.sh and reload.sh (act on the pid in the pid file),
// and extra.
func seedPackage(t *testing.T, extra ...member) []byte {
	return tarGz(t, append([]member{
		{Name: "gamesvc/", Dir: true},
		{Name: "gamesvc/gamesvr", Mode: 0o755, Body: string(gamesvr(t))},
		{Name: "gamesvc/start.sh", Mode: 0o755, Body: `#!/bin/sh
# start.sh --port PORT --pidfile FILE
while [ $# -gt 0 ]; do case "$1" in --port) port=$2; shift;; --pidfile) pidfile=$2; shift;; esac; shift; done
id -u > started-as.txt
cat conf/game.conf > seen-conf.txt
cat VERSION > seen-version.txt 2>/dev/null
echo "$release" > seen-release.txt
exec ./gamesvr -daemon -addr "127.0.0.1:$port" -pidfile "$pidfile"
`},
		{Name: "gamesvc/stop.sh", Mode: 0o755, Body: `#!/bin/sh
echo stop >> stop.log
kill "$(cat "$2")"
`},
		{Name: "gamesvc/reload.sh", Mode: 0o755, Body: `#!/bin/sh
kill -HUP "$(cat "$2")"
echo reload-ok pid=$(cat "$2") port=$http_port
`},
	}, extra...)...)
}

func freePort(t *testing.T) int {
	t.Helper()
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	var port int
	fmt.Sscanf(srv.Listener.Addr().String(), "127.0.0.1:%d", &port)
	return port
}

// markerPids finds processes whose command line holds marker.
func markerPids(marker string) []string {
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if strings.Contains(string(stat), ") Z ") {
			continue
		}
		if strings.Contains(strings.ReplaceAll(string(b), "\x00", " "), marker) {
			out = append(out, e.Name())
		}
	}
	return out
}

func uidOf(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "Uid:") {
			return strings.Fields(line)[1]
		}
	}
	return ""
}

// isRunning reports whether pid runs (zombies, which an init that does not
// reap leaves behind, do not count).
func isRunning(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] != 'Z'
}
