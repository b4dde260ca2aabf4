package e2e_test

import (
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

// Issue 8: every command of the README's quick start works, run as a
// user would, against bcs-scheduler --dev started the way make run starts
// it (API on 127.0.0.1:8080, master on 127.0.0.1:5050, real executors).
func TestReadmeQuickStart(t *testing.T) {
	cmds := quickStart(t)
	if len(cmds) < 6 {
		t.Fatalf("quick start has %d commands: %v", len(cmds), cmds)
	}
	// make run: the binaries side by side, the example package in
	// <data>/files, work and run directories under the data directory.
	dir := t.TempDir()
	if err := os.Chmod(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "bcs-data")
	s := &system{t: t, dir: dir, api: "http://127.0.0.1:8080"}
	if err := os.MkdirAll(filepath.Join(data, "files"), 0o755); err != nil {
		t.Fatal(err)
	}
	pkg := exec.Command("sh", "-c", fmt.Sprintf("mkdir -p %[1]s/pkg && cp %[2]s/gamesvr %[1]s/pkg/ && cp ../examples/gamesvr/package/*.sh %[1]s/pkg/ && tar -C %[1]s/pkg -czf %[3]s/files/gamesvr.tar.gz .", dir, bin, data))
	if out, err := pkg.CombinedOutput(); err != nil {
		t.Fatalf("package: %v %s", err, out)
	}
	s.scheduler = s.spawn("bcs-scheduler", filepath.Join(bin, "bcs-scheduler"), "--dev", "--data-dir", data,
		"--work-base-dir", filepath.Join(data, "work"), "--run-base-dir", filepath.Join(data, "run"))
	t.Cleanup(func() {
		_ = s.scheduler.Process.Signal(syscall.SIGTERM)
		_, _ = s.scheduler.Process.Wait()
	})
	s.eventually("the API on 127.0.0.1:8080", func() (bool, string) {
		code, body := get(s.api + "/healthz")
		return code == 200, body
	})

	run := func(cmd string) string {
		t.Helper()
		c := exec.Command("sh", "-c", cmd)
		c.Dir = ".."
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", cmd, err, out)
		}
		return string(out)
	}
	port := regexp.MustCompile(`localhost:(31\d{3})/`)
	for _, cmd := range cmds {
		switch {
		case strings.Contains(cmd, "-XPOST") && strings.Contains(cmd, "/v1/apps -d"):
			if out := run(cmd); !strings.Contains(out, `"state": "Deploying"`) {
				t.Errorf("%s:\n%s", cmd, out)
			}
		case strings.HasSuffix(cmd, "/v1/apps/demo/gamesvr") && !strings.Contains(cmd, "-X"):
			// The README says to wait for "Running".
			deadline := time.Now().Add(40 * time.Second)
			out := ""
			for time.Now().Before(deadline) && !strings.Contains(out, `"state": "Running"`) {
				time.Sleep(300 * time.Millisecond)
				out = run(cmd)
			}
			if !strings.Contains(out, `"state": "Running"`) {
				t.Fatalf("%s never showed Running:\n%s", cmd, out)
			}
		case port.MatchString(cmd):
			// The README's port is an example: use instance 0's.
			v, _ := s.app("demo", "gamesvr")
			var p uint32
			for _, i := range v.Status.Instances {
				if i.ID == 0 {
					p = i.Ports["http"]
				}
			}
			cmd = port.ReplaceAllString(cmd, fmt.Sprintf("localhost:%d/", p))
			if out := run(cmd); !strings.Contains(out, "gamesvr instance 0") {
				t.Errorf("%s: %q", cmd, out)
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
				v, _ := s.app("demo", "gamesvr")
				return len(v.Status.Instances) == 1 && v.Status.State == "Running", fmt.Sprintf("%+v", v.Status)
			})
		case strings.Contains(cmd, "-XDELETE"):
			run(cmd)
			s.eventually("the application deleted", func() (bool, string) {
				_, code := s.app("demo", "gamesvr")
				return code == 404, fmt.Sprint(code)
			})
		default:
			t.Errorf("the test does not know the README command %q: teach it", cmd)
		}
	}
}
