package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/schedulerd"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
)

// build builds bcs-scheduler once for the test binary.
func build(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "bcs-scheduler-test-")
		if err != nil {
			buildErr = err
			return
		}
		binary = filepath.Join(dir, "bcs-scheduler")
		if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
			buildErr = errors.New(string(out))
		}
	})
	if buildErr != nil {
		t.Fatalf("go build: %v", buildErr)
	}
	return binary
}

// process is a running bcs-scheduler.
type process struct {
	cmd    *exec.Cmd
	stderr bytes.Buffer
	mu     sync.Mutex
	exited chan struct{}
}

func (p *process) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.Write(b)
}

func (p *process) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

func start(t *testing.T, args ...string) *process {
	t.Helper()
	p := &process{cmd: exec.Command(build(t), args...), exited: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p, p
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.exited
	})
	return p
}

// wait returns the exit status once the process ends, failing the test
// if it is still running after limit.
func (p *process) wait(t *testing.T, limit time.Duration) int {
	t.Helper()
	select {
	case <-p.exited:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(limit):
		t.Fatalf("bcs-scheduler still running after %s; output:\n%s", limit, p.output())
		return 0
	}
}

func waitFor(t *testing.T, p *process, text string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(p.output(), text) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in 30s; output:\n%s", text, p.output())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// SIGTERM always ends the process: while the embedded etcd
// starts and once the API serves, SIGTERM ends bcs-scheduler within
// seconds with status 0; a second process on the same data dir meanwhile
// is refused saying so. Then `rotate-key` on the same data dir, after
// which a start with the old key file fails naming it.
func TestSIGTERMAndRotateKey(t *testing.T) {
	dataDir := t.TempDir()
	args := []string{"--data-dir", dataDir, "--listen", "127.0.0.1:0"}

	early := start(t, args...)
	time.Sleep(100 * time.Millisecond) // within the etcd start
	if err := early.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	early.wait(t, 10*time.Second)

	p := start(t, args...)
	waitFor(t, p, "API listening")
	second := start(t, args...)
	if code := second.wait(t, 10*time.Second); code != 1 || !strings.Contains(second.output(), "is another bcs-scheduler running with this data directory?") {
		t.Errorf("a second bcs-scheduler on the data dir: status %d:\n%s", code, second.output())
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, 10*time.Second); code != 0 {
		t.Fatalf("exit status %d after SIGTERM; output:\n%s", code, p.output())
	}

	newKey := filepath.Join(t.TempDir(), "new.key")
	rotate := start(t, "rotate-key", "--data-dir", dataDir, "--new-key-file", newKey)
	if code := rotate.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("rotate-key: status %d:\n%s", code, rotate.output())
	}
	if !strings.Contains(rotate.output(), "give it to every replica as its --secret-key-file") {
		t.Errorf("rotate-key says:\n%s", rotate.output())
	}
	old := start(t, args...)
	if code := old.wait(t, 30*time.Second); code != 1 || !strings.Contains(old.output(), filepath.Join(dataDir, "secret.key")) {
		t.Fatalf("start with the old key after rotate-key: status %d:\n%s", code, old.output())
	}
}

// seed leaves an embedded etcd's data dir with some keys in dataDir.
func seed(t *testing.T, dataDir string) {
	t.Helper()
	ctx := context.Background()
	e, err := store.StartEmbedded(ctx, dataDir)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s, err := store.Open(ctx, store.Config{Endpoints: e.Endpoints()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 50 {
		if _, err := s.Put(ctx, fmt.Sprintf("agents/agent-%d", i), bytes.Repeat([]byte("x"), 512)); err != nil {
			t.Fatal(err)
		}
	}
}

// A damaged data dir fails fast: the real binary on a data dir whose WAL
// was deleted, or whose database was overwritten, exits within seconds
// with status 1 and a message naming the file, not a panic or a hang.
func TestDamagedDataDirFailsFast(t *testing.T) {
	for name, damage := range map[string]func(etcdDir string) error{
		"WAL deleted": func(etcdDir string) error { return os.RemoveAll(filepath.Join(etcdDir, "member", "wal")) },
		// Every page after the two meta pages: which pages the keys landed
		// on varies, and overwriting some left only unreachable ones
		// damaged now and then (the start then rightly succeeded).
		"database overwritten": func(etcdDir string) error {
			f, err := os.OpenFile(filepath.Join(etcdDir, "member", "snap", "db"), os.O_RDWR, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			info, err := f.Stat()
			if err != nil {
				return err
			}
			const metaPages = 2 * 4096
			_, err = f.WriteAt(bytes.Repeat([]byte{0xab}, int(info.Size())-metaPages), metaPages)
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			dataDir := t.TempDir()
			seed(t, dataDir)
			if err := damage(filepath.Join(dataDir, "etcd")); err != nil {
				t.Fatal(err)
			}
			p := start(t, "--data-dir", dataDir, "--listen", "127.0.0.1:0")
			code := p.wait(t, 10*time.Second)
			out := p.output()
			db := filepath.Join(dataDir, "etcd", "member", "snap", "db")
			if code != 1 || !strings.Contains(out, db) || strings.Contains(out, "panic") {
				t.Fatalf("status %d, want 1 with a message naming %s:\n%s", code, db, out)
			}
			t.Logf("%s", out)
		})
	}
}

// --dev tells its user where the API, its token, the console
// and the master are and what to run next; an API moved off its default
// address comes with the BCS_SERVER bcsctl then needs.
func TestDevWelcome(t *testing.T) {
	var o schedulerd.Options
	o.DataDir = "./bcs-data"
	o.DevConfig.ListenAddr = "127.0.0.1:5050"
	var out bytes.Buffer
	printDevWelcome(&out, o, "127.0.0.1:8080")
	for _, want := range []string{"API      http://127.0.0.1:8080   token: bcs-data/admin.token (bcsctl reads it)",
		"console  http://127.0.0.1:8080/ui/", "master   http://127.0.0.1:5050/master/state", "  bin/bcsctl apply -f examples/process.json\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("welcome lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "BCS_SERVER") {
		t.Errorf("the default address needs no BCS_SERVER:\n%s", out.String())
	}
	out.Reset()
	printDevWelcome(&out, o, "127.0.0.1:9080")
	if !strings.Contains(out.String(), "  export BCS_SERVER=http://127.0.0.1:9080\n") {
		t.Errorf("a moved API's welcome lacks its BCS_SERVER:\n%s", out.String())
	}
}
