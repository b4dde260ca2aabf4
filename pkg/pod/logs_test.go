package pod

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/pod/podtest"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// logCopiers counts the goroutines copying container logs.
func logCopiers() int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	return bytes.Count(buf, []byte("pod.(*Pod).copyLogs("))
}

// openUnder counts this process's open files under dir.
func openUnder(t *testing.T, dir string) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && strings.HasPrefix(target, dir+"/") {
			n++
		}
	}
	return n
}

// Each container's stdout and stderr land in the sandbox as
// <taskID>.stdout and <taskID>.stderr (the process executor's names, read
// through the agent's files API), following the container across an
// in-place restart (the same container: nothing copied twice) and a
// re-creation (update-env: a new container), up to what it writes when
// killed; the copier ends with the pod, its files closed.
func TestContainerOutputInSandbox(t *testing.T) {
	c := podtest.Docker(t)
	cfg := testConfig(t, c)
	before := logCopiers()
	web := containerTask("web", `trap 'echo bye; exit 0' TERM; echo "out ${GEN:-1}"; echo "err ${GEN:-1}" >&2; sleep 1000 & wait`)
	p, err := New(cfg, []Task{web})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctxT(t, time.Minute)); err != nil {
		t.Fatalf("start: %v", err)
	}
	stdout, stderr := LogFile(cfg.SandboxDir, web.ID, "stdout"), LogFile(cfg.SandboxDir, web.ID, "stderr")
	if stdout != filepath.Join(cfg.SandboxDir, "task-web.stdout") {
		t.Fatalf("LogFile = %s", stdout)
	}
	has := func(path, want string) func() string {
		return func() string {
			got, _ := os.ReadFile(path)
			if string(got) != want {
				return fmt.Sprintf("%s: %q, want %q", filepath.Base(path), got, want)
			}
			return ""
		}
	}
	eventually(t, 20*time.Second, has(stdout, "out 1\n"))
	eventually(t, 20*time.Second, has(stderr, "err 1\n"))
	if n := logCopiers() - before; n != 1 {
		t.Fatalf("%d log copiers for one container, want 1", n)
	}

	if err := p.Restart(ctxT(t, time.Minute), web.ID); err != nil {
		t.Fatalf("restart: %v", err)
	}
	eventually(t, 20*time.Second, has(stdout, "out 1\nbye\nout 1\n"))
	eventually(t, 20*time.Second, has(stderr, "err 1\nerr 1\n"))

	if err := p.UpdateEnv(ctxT(t, time.Minute), web.ID, []proto.EnvVar{{Name: "GEN", Value: "2"}}); err != nil {
		t.Fatalf("update env: %v", err)
	}
	eventually(t, 20*time.Second, has(stdout, "out 1\nbye\nout 1\nbye\nout 2\n"))
	eventually(t, 20*time.Second, has(stderr, "err 1\nerr 1\nerr 2\n"))

	// Killed, the container's last words are in the file once the pod is
	// done, and nothing of the copier is left.
	if err := p.Kill(ctxT(t, time.Minute), syscall.SIGTERM, -1); err != nil {
		t.Fatalf("kill: %v", err)
	}
	if _, err := p.Wait(ctxT(t, time.Minute)); err != nil {
		t.Fatalf("wait: %v", err)
	}
	if msg := has(stdout, "out 1\nbye\nout 1\nbye\nout 2\nbye\n")(); msg != "" {
		t.Error(msg)
	}
	if n := logCopiers() - before; n != 0 {
		t.Errorf("%d log copiers left after the pod is done", n)
	}
	if n := openUnder(t, cfg.SandboxDir); n != 0 {
		t.Errorf("%d files of the sandbox still open", n)
	}
	if n := labelled(t, c, cfg); n != 0 {
		t.Errorf("%d containers left", n)
	}
}
