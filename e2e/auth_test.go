package e2e_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// API authentication as a user of `make run` meets it: bcs-scheduler --dev
// makes an admin token in <data-dir>/admin.token (0600) and logs where;
// the real API refuses a request without it (401 asking for a bearer
// token); bcsctl run next to that data directory sends it with no flag,
// and its writes land in the audit log under the admin's name, the token
// nowhere in it.
func TestDevAdminToken(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	s := &system{t: t, dir: dir, api: fmt.Sprintf("http://127.0.0.1:%d", freePort(t)),
		tokenFile: filepath.Join(dir, "bcs-data", "admin.token")}
	s.scheduler = s.spawn("bcs-scheduler", filepath.Join(bin, "bcs-scheduler"), "--dev", "--dev-executors", "simulated",
		"--listen", strings.TrimPrefix(s.api, "http://"), "--dev-master-listen", fmt.Sprintf("127.0.0.1:%d", freePort(t)),
		"--data-dir", filepath.Join(dir, "bcs-data"))
	t.Cleanup(s.stop)
	s.eventually("the API", func() (bool, string) {
		code, body := get(s.api + "/healthz")
		return code == http.StatusOK, body
	})

	resp, err := http.Get(s.api + "/v1/apps")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") ||
		!strings.Contains(string(body), `"code": "Unauthenticated"`) {
		t.Fatalf("GET /v1/apps without a token = %d %q %s, want 401 asking for a bearer token", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body)
	}
	fi, err := os.Stat(s.tokenFile)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("admin token file: %v %v, want mode 0600", err, fi)
	}
	log, _ := os.ReadFile(filepath.Join(dir, "bcs-scheduler.log"))
	if !bytes.Contains(log, []byte("the API takes the admin token in "+s.tokenFile)) || bytes.Contains(log, []byte(s.token())) {
		t.Errorf("the log does not say where the admin token is, or shows it:\n%s", log)
	}

	// bcsctl with no flag next to bcs-data: the token is the file's.
	ctl := func(dir, stdin string, args ...string) (string, int) {
		cmd := exec.Command(filepath.Join(bin, "bcsctl"), args...)
		cmd.Dir, cmd.Stdin = dir, strings.NewReader(stdin)
		cmd.Env = append(withoutVar(os.Environ(), "BCS_TOKEN"), "BCS_SERVER="+s.api)
		out, err := cmd.CombinedOutput()
		code := 0
		if exit, ok := err.(*exec.ExitError); ok {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}
	configmap := "apiVersion: v4\nkind: configmap\nmetadata: {name: settings, namespace: demo}\ndatas: {level: {type: file, content: debug}}\n"
	if out, code := ctl(dir, configmap, "apply", "-f", "-"); code != 0 || out != "configmap demo/settings created\n" {
		t.Fatalf("bcsctl apply next to bcs-data: exit %d %q", code, out)
	}
	s.eventually("bcsctl get agents to show the three dev agents", func() (bool, string) {
		out, code := ctl(dir, "", "get", "agents")
		return code == 0 && strings.Count(out, "\n") == 4, out
	})
	if out, code := ctl(t.TempDir(), "", "get", "configmaps", "-n", "demo"); code != 1 || !strings.Contains(out, "no credentials") ||
		!strings.Contains(out, "bcs-data/admin.token") {
		t.Errorf("bcsctl elsewhere, without a token: exit %d %q; want 1 saying where the token comes from", code, out)
	}

	code, audit := s.call("GET", "/v1/audit?namespace=demo", nil)
	var page struct {
		Entries []struct{ User, Role, Route, Name string }
	}
	if err := json.Unmarshal(audit, &page); code != http.StatusOK || err != nil || len(page.Entries) != 1 {
		t.Fatalf("GET /v1/audit = %d %s", code, audit)
	}
	if e := page.Entries[0]; e.User != "admin" || e.Role != "admin" || e.Route != "POST /v1/configmaps" || e.Name != "settings" {
		t.Errorf("audit entry %+v, want the admin's POST /v1/configmaps of settings", e)
	}
	if bytes.Contains(audit, []byte(s.token())) || bytes.Contains(audit, []byte("debug")) {
		t.Errorf("the audit log shows the token or the configmap's data: %s", audit)
	}
}
