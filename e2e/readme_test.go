package e2e_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// freshClone copies what a clone of this repository holds — the tracked
// files and the new ones git does not ignore, as they are in the working
// tree — into dir: no binaries, no bcs-data, nothing built.
func freshClone(t *testing.T, dir string) {
	t.Helper()
	out, err := exec.Command("git", "-C", "..", "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		src := filepath.Join("..", name)
		fi, err := os.Lstat(src)
		if err != nil || !fi.Mode().IsRegular() {
			continue // deleted in the working tree, or a link
		}
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, fi.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
}

// The README's quick start, verbatim, against `make run` in a fresh clone
// with the default relative DATA, as a new user runs it: the process and
// the container example reach Running and answer on the host ports the
// API shows; bin/bcsctl, which make run built, applies, reads, execs,
// reloads, scales and deletes. Before it, docs/updates.md's "Updating a
// fleet" block (each strategy's update shows on the game server's
// /version) and every other sh block of the reference pages (docs_test.go).
func TestReadmeQuickStart(t *testing.T) {
	cmds := shBlock(t, "README.md", "Quick start")
	if len(cmds) < 10 {
		t.Fatalf("quick start has %d commands: %v", len(cmds), cmds)
	}
	updates := shBlock(t, "docs/updates.md", "Updating a fleet")
	// t.TempDir's parent is 0700, as root's home directory, where a user
	// clones: the instances, running as their namespaces' uids, cannot
	// reach ./bcs-data there, and make run puts their directories where
	// they can.
	base := t.TempDir()
	clone := filepath.Join(base, "bcs-mesos")
	freshClone(t, clone)

	logPath := filepath.Join(base, "make-run.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	makeRun := exec.Command("make", "run")
	makeRun.Dir = clone
	makeRun.Env = withoutVar(os.Environ(), "DATA")
	makeRun.Stdout, makeRun.Stderr = logFile, logFile
	makeRun.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := makeRun.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = makeRun.Wait(); close(exited) }()
	stopMakeRun := sync.OnceFunc(func() {
		_ = syscall.Kill(-makeRun.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			t.Error("make run did not stop within 30s of SIGTERM")
			_ = syscall.Kill(-makeRun.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	})
	t.Cleanup(func() {
		stopMakeRun()
		instanceDirs := instanceDirsOf(logPath)
		for _, dir := range []string{base, instanceDirs} {
			if pids := processesUnder(dir); dir != "" && len(pids) > 0 {
				t.Errorf("processes left running under %s after make run stopped: %v", dir, pids)
				for _, pid := range pids {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		}
		if instanceDirs != "" {
			os.RemoveAll(instanceDirs)
		}
		if t.Failed() {
			data, _ := os.ReadFile(logPath)
			t.Logf("make run (last 6000 bytes):\n%s", tail(data, 6000))
		}
	})
	s := &system{t: t, dir: base, api: "http://127.0.0.1:8080", tokenFile: filepath.Join(clone, "bcs-data", "admin.token")}
	// The first make run builds everything.
	deadline := time.Now().Add(5 * time.Minute)
	for {
		code, _ := get(s.api + "/healthz")
		if code == 200 {
			break
		}
		select {
		case <-exited:
			t.Fatal("make run exited before the API answered")
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the API on 127.0.0.1:8080 did not answer within 5 minutes of make run")
		}
		time.Sleep(500 * time.Millisecond)
	}

	sh := &docShell{s: s, dir: clone}
	run := sh.run
	// docs/api.md's set-up line, which its commands and the other pages'
	// curl lines take.
	curl := &docShell{s: s, dir: clone, exports: "export BCS_TOKEN=$(cat bcs-data/admin.token) BCS_SERVER=http://127.0.0.1:8080\n"}
	// Each quick start command, and what it must print or do.
	answers := map[string]string{"gamesvr": "gamesvr instance 0", "web": "hello from web"}
	appOf := regexp.MustCompile(`(?:app|instance) (gamesvr|web)\b`)
	// Each block stands on its own, with make run running: the updates
	// block of docs/updates.md first, then the quick start.
	runUpdates(t, s, updates, run)
	runNotificationsBlock(t, s, curl)
	runAPIFirstSteps(t, s, curl)
	runWorkloadsPage(t, s, curl)
	withGamesvr := sync.OnceFunc(func() { runAPIWithGamesvr(t, s, curl) })
	for _, cmd := range cmds {
		app := ""
		if m := appOf.FindStringSubmatch(cmd); m != nil {
			app = m[1]
		}
		switch {
		case strings.HasPrefix(cmd, "bin/bcsctl apply -f examples/"):
			if out := run(cmd); !regexp.MustCompile(`^(process demo/gamesvr|application demo/web) created\n$`).MatchString(out) {
				t.Errorf("%s: %q", cmd, out)
			}
		case strings.HasPrefix(cmd, "bin/bcsctl rollout status app "):
			if out := run(cmd); !strings.Contains(out, "successfully rolled out: every instance runs revision 1") {
				t.Errorf("%s:\n%s", cmd, out)
			}
		case cmd == "bin/bcsctl get instances -n demo":
			if out := run(cmd); strings.Count(out, "   Running   true    true ") != 3 {
				t.Errorf("%s: want 3 running, ready and healthy instances:\n%s", cmd, out)
			}
		case strings.HasPrefix(cmd, "bin/bcsctl describe app "):
			if out := run(cmd); !strings.Contains(out, "State:           Running\n") || !strings.Contains(out, "Replicas:        3 desired, 3 ready\n") {
				t.Errorf("%s:\n%s", cmd, out)
			}
		case strings.HasPrefix(cmd, "curl -s localhost:$("):
			if out := run(cmd); !strings.Contains(out, answers[app]) {
				t.Errorf("%s: %q, want %q", cmd, out, answers[app])
			}
		case strings.HasPrefix(cmd, "bin/bcsctl exec gamesvr/0 "):
			if out := run(cmd); !regexp.MustCompile(`^instance 0 in /.*/demo\.gamesvr\.0\n$`).MatchString(out) {
				t.Errorf("%s: %q", cmd, out)
			}
		case strings.HasPrefix(cmd, "bin/bcsctl exec web/0 "):
			if out := run(cmd); out != "hello from web\n" {
				t.Errorf("%s: %q", cmd, out)
			}
		case strings.HasPrefix(cmd, "bin/bcsctl logs web/0 "):
			// The sidecar prints the page every 5 s: its first line may
			// be a few seconds away.
			s.eventually("the sidecar's output", func() (bool, string) {
				c := exec.Command("bash", "-c", cmd)
				c.Dir = clone
				out, err := c.CombinedOutput()
				return err == nil && strings.HasSuffix(string(out), "hello from web\n") && len(out) <= 100, string(out)
			})
		case strings.HasPrefix(cmd, "bin/bcsctl logs gamesvr/0 "):
			// The reload above runs on the executor while bcsctl returns.
			s.eventually("the game server's output", func() (bool, string) {
				c := exec.Command("bash", "-c", cmd)
				c.Dir = clone
				out, err := c.CombinedOutput()
				// What the executor answered to the reload shows in the
				// instance's message.
				_, app := s.call("GET", "/v1/apps/demo/gamesvr/instances", nil)
				return err == nil && strings.Contains(string(out), "instance 0 serving on 127.0.0.1:") &&
					strings.HasSuffix(string(out), "reloaded (1)\n"), fmt.Sprintf("%s (instances: %s)", out, tail(app, 2000))
			})
		case strings.HasPrefix(cmd, "bin/bcsctl instance reload "):
			if out := run(cmd); !regexp.MustCompile(`^reload of demo_gamesvr_0_1\.[0-9a-z]+ requested\n$`).MatchString(out) {
				t.Errorf("%s: %q", cmd, out)
			}
		case strings.HasPrefix(cmd, "bin/bcsctl scale "):
			withGamesvr() // with the quick start's three game servers
			run(cmd)
			s.eventually("scaled to one instance", func() (bool, string) {
				v, _ := s.app("demo", app)
				return len(v.Status.Instances) == 1 && v.Status.State == "Running", fmt.Sprintf("%+v", v.Status)
			})
		case strings.HasPrefix(cmd, "bin/bcsctl delete app "):
			if app == "web" {
				runTaskLogsBlock(t, s, curl, "web")
			}
			// bcsctl waits until the application is gone.
			if out := run(cmd); !strings.HasSuffix(out, " demo/"+app+" deleted\n") {
				t.Errorf("%s: %q", cmd, out)
			}
			if _, code := s.app("demo", app); code != 404 {
				t.Errorf("%s: the application is still there (%d)", cmd, code)
			}
		default:
			t.Errorf("the test does not know the README command %q: teach it", cmd)
		}
	}
	// Every path the dev agents were handed was absolute (a relative one
	// made every launch fail), and the data stayed in the clone.
	data, _ := os.ReadFile(logPath)
	if bytes.Contains(data, []byte("no such file or directory")) {
		t.Errorf("make run logged a missing file:\n%s", tail(data, 3000))
	}
	// It said where things are and what to do next, and no line per
	// module it downloaded.
	for _, want := range []string{"bcs-mesos is running", "  bin/bcsctl apply -f examples/process.json\n", "token: bcs-data/admin.token"} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("make run did not print %q:\n%s", want, tail(data, 3000))
		}
	}
	if bytes.Contains(data, []byte("go: downloading")) {
		t.Error("make run printed go's module downloads")
	}
	if dirs := instanceDirsOf(logPath); !strings.HasPrefix(dirs, "/var/tmp/bcs-mesos-dev/") {
		t.Errorf("the instances' directories of a checkout under a 0700 directory: %q, want under /var/tmp/bcs-mesos-dev", dirs)
	}
	if _, err := os.Stat(filepath.Join(clone, "bcs-data", "mesos")); err != nil {
		t.Errorf("the dev cluster's work dir is not under ./bcs-data: %v", err)
	}
	// The operations page's commands run with make run stopped, as it says.
	stopMakeRun()
	runOperationsPage(t, sh)
}

// instanceDirsOf is the directory make run's log says it put the
// instances' directories in, when not under the data directory.
func instanceDirsOf(logPath string) string {
	data, _ := os.ReadFile(logPath)
	m := regexp.MustCompile(`work_base_dir=(/var/tmp/bcs-mesos-dev/[0-9a-f]+)/work`).FindSubmatch(data)
	if m == nil {
		return ""
	}
	return string(m[1])
}

func withoutVar(env []string, name string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// runUpdates runs the README's "Updating a fleet" commands and checks
// what each shows: the version each update PUT makes, and what instance
// 0's game server answers after each kind of update — a new launch
// (RollingUpdate), a new pid in the same task group (InplaceUpdate), the
// new package under the same pid (HotPatchUpdate).
func runUpdates(t *testing.T, s *system, cmds []string, run func(string) string) {
	t.Helper()
	versions := []string{"2", "3", "4", "5", "6"}
	answers := []string{"version= build=v2", "version= build=v3", "version=v2 build=v3"}
	var pids []string
	// The block is one shell session: what it exports, its later
	// commands see.
	exports := ""
	outer := run
	run = func(cmd string) string {
		t.Helper()
		return outer(exports + cmd)
	}
	for _, cmd := range cmds {
		switch {
		case strings.HasPrefix(cmd, "export "):
			exports += cmd + "\n" // a line of its own: it may end with a comment
		case strings.Contains(cmd, "-XPOST") && strings.Contains(cmd, "/v1/deployments -d"):
			var v appView
			if out := run(cmd); json.Unmarshal([]byte(out), &v) != nil || v.Version != 1 {
				t.Errorf("%s:\n%s", cmd, out)
			}
		case strings.HasSuffix(cmd, "| jq .version"):
			if out := strings.TrimSpace(run(cmd)); len(versions) == 0 || out != versions[0] {
				t.Errorf("%s: version %q, want %v", cmd, out, versions)
			} else {
				versions = versions[1:]
			}
		case strings.HasPrefix(cmd, "until "):
			run(cmd)
		case strings.HasSuffix(cmd, "/version"):
			out := run(cmd)
			if len(answers) == 0 || !strings.HasPrefix(out, answers[0]) {
				t.Errorf("%s: %q, want %v", cmd, out, answers)
			} else {
				answers = answers[1:]
			}
			pids = append(pids, pidOfVersion(out))
		case strings.HasSuffix(cmd, "/promote"):
			if out := strings.TrimSpace(run(cmd)); out != "202" {
				t.Errorf("%s: %q", cmd, out)
			}
		case strings.Contains(cmd, "{id, revision, ready}"):
			want := `[{"id":0,"revision":4,"ready":true},{"id":1,"revision":4,"ready":true},{"id":2,"revision":5,"ready":true},{"id":3,"revision":5,"ready":true}]`
			if out := strings.TrimSpace(run(cmd)); out != want {
				t.Errorf("%s: %s, want %s", cmd, out, want)
			}
		case strings.Contains(cmd, "{phase, replicas"):
			want := `{"phase":"RolledBack","replicas":4,"updated":4,"updatedReady":4,"ready":4,"total":4,"currentRevision":6,"updateRevision":6}`
			if out := strings.TrimSpace(run(cmd)); out != want {
				t.Errorf("%s: %s, want %s", cmd, out, want)
			}
		case strings.Contains(cmd, "-XDELETE"):
			run(cmd)
			s.eventually("the deployment deleted", func() (bool, string) {
				code, _ := s.call("GET", "/v1/deployments/demo/fleet", nil)
				return code == 404, fmt.Sprint(code)
			})
		default:
			t.Errorf("the test does not know the README command %q: teach it", cmd)
		}
	}
	if len(versions) != 0 || len(answers) != 0 {
		t.Errorf("README commands missing: versions %v, answers %v", versions, answers)
	}
	// In place restarts (a new pid); a hot patch does not.
	if len(pids) == 3 && (pids[1] == pids[0] || pids[2] != pids[1]) {
		t.Errorf("pids after rolling, in-place, hot patch: %v; want a new one in place and the same after the hot patch", pids)
	}
}
