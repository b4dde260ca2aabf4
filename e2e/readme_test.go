package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// quickStart returns the commands of the README's quick start block.
func quickStart(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	start := strings.Index(text, "## Quick start")
	if start < 0 {
		t.Fatal("README has no Quick start section")
	}
	block := regexp.MustCompile("(?s)```sh\n(.*?)```").FindStringSubmatch(text[start:])
	if block == nil {
		t.Fatal("the Quick start section has no sh block")
	}
	var cmds []string
	for _, line := range strings.Split(block[1], "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			cmds = append(cmds, line)
		}
	}
	return cmds
}

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

// Issue 11: the README's quick start, verbatim, against `make run` in a
// fresh clone with the default relative DATA, as a new user runs it: the
// process and the container example reach Running and answer on the host
// ports the API shows; reload, scale and delete do what they say.
func TestReadmeQuickStart(t *testing.T) {
	cmds := quickStart(t)
	if len(cmds) < 10 {
		t.Fatalf("quick start has %d commands: %v", len(cmds), cmds)
	}
	base := t.TempDir()
	// Processes run as nobody under bcs-data: the directories above it
	// must be searchable (t.TempDir makes them 0700).
	for _, d := range []string{filepath.Dir(base), base} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
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
	t.Cleanup(func() {
		_ = syscall.Kill(-makeRun.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			t.Error("make run did not stop within 30s of SIGTERM")
			_ = syscall.Kill(-makeRun.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		if pids := processesUnder(base); len(pids) > 0 {
			t.Errorf("processes left running under %s after make run stopped: %v", base, pids)
			for _, pid := range pids {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		if t.Failed() {
			data, _ := os.ReadFile(logPath)
			t.Logf("make run (last 6000 bytes):\n%s", tail(data, 6000))
		}
	})
	s := &system{t: t, dir: base, api: "http://127.0.0.1:8080"}
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

	run := func(cmd string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		c := exec.CommandContext(ctx, "bash", "-c", cmd)
		c.Dir = clone
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", cmd, err, out)
		}
		return string(out)
	}
	answers := map[string]string{"gamesvr": "gamesvr instance 0", "web": "hello from web"}
	appOf := regexp.MustCompile(`/v1/apps/demo/([a-z]+)`)
	for _, cmd := range cmds {
		app := ""
		if m := appOf.FindStringSubmatch(cmd); m != nil {
			app = m[1]
		}
		switch {
		case strings.Contains(cmd, "-XPOST") && strings.Contains(cmd, "/v1/apps -d"):
			var v appView
			if out := run(cmd); json.Unmarshal([]byte(out), &v) != nil || v.Status.State != "Deploying" {
				t.Errorf("%s:\n%s", cmd, out)
			}
		case strings.HasPrefix(cmd, "until "):
			run(cmd) // returns once the application is Running
		case strings.HasPrefix(cmd, "curl -s localhost:$("):
			if out := run(cmd); !strings.Contains(out, answers[app]) {
				t.Errorf("%s: %q, want %q", cmd, out, answers[app])
			}
		case strings.HasPrefix(cmd, "curl -s localhost:8080/v1/apps/demo/") && !strings.Contains(cmd, "-X"):
			var v appView
			out := run(cmd)
			if json.Unmarshal([]byte(out), &v) != nil || v.Status.State != "Running" || len(v.Status.Instances) != v.Instances {
				t.Errorf("%s: want Running with every instance:\n%s", cmd, out)
			}
		case strings.Contains(cmd, "/reload"):
			out := run(cmd)
			var reply map[string]string
			if json.Unmarshal([]byte(out), &reply) != nil || reply["operation"] != "reload" {
				t.Errorf("%s: %s", cmd, out)
			}
		case strings.Contains(cmd, "/scale"):
			run(cmd)
			s.eventually("scaled to one instance", func() (bool, string) {
				v, _ := s.app("demo", app)
				return len(v.Status.Instances) == 1 && v.Status.State == "Running", fmt.Sprintf("%+v", v.Status)
			})
		case strings.Contains(cmd, "-XDELETE"):
			run(cmd)
			s.eventually("the application deleted", func() (bool, string) {
				_, code := s.app("demo", app)
				return code == 404, fmt.Sprint(code)
			})
		default:
			t.Errorf("the test does not know the README command %q: teach it", cmd)
		}
	}
	// Every path the dev agents were handed was absolute (a relative one
	// made every launch fail), and the data stayed in the clone.
	if data, _ := os.ReadFile(logPath); bytes.Contains(data, []byte("no such file or directory")) {
		t.Errorf("make run logged a missing file:\n%s", tail(data, 3000))
	}
	if _, err := os.Stat(filepath.Join(clone, "bcs-data", "mesos")); err != nil {
		t.Errorf("the dev cluster's work dir is not under ./bcs-data: %v", err)
	}
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
