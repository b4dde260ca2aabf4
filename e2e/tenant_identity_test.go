package e2e_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The tenant-isolation tests of an identity per namespace on the agents:
// each team's instances run as its namespace's own uid, so what the other
// team's instances keep on the same agent is out of their reach.

// onAgent1 pins a manifest's instances to agent-1 (rack r1): the two
// teams' instances share an agent.
func onAgent1(m map[string]any) {
	m["constraint"] = map[string]any{"intersectionItem": []any{map[string]any{"unionData": []any{
		map[string]any{"name": "rack", "operate": "CLUSTER", "type": 3, "text": map[string]any{"value": "r1"}}}}}}
}

// tenantProcess is the process example as a one-instance application
// name of namespace ns on agent-1, edited by edit (its process).
func (s *tenantSystem) tenantProcess(ns, name string, edit func(proc map[string]any)) []byte {
	return s.manifest("process.json", func(m map[string]any) {
		meta := m["metadata"].(map[string]any)
		meta["name"], meta["namespace"] = name, ns
		m["spec"].(map[string]any)["instance"] = 1
		onAgent1(m)
		if edit != nil {
			edit(m["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["processes"].([]any)[0].(map[string]any))
		}
	})
}

// tenantSecret is a secret s of ns holding value as item k.
func tenantSecret(ns, value string) []byte {
	return []byte(fmt.Sprintf(`{"apiVersion":"v4","kind":"secret","metadata":{"name":"s","namespace":%q},"datas":{"k":{"content":%q}}}`,
		ns, base64.StdEncoding.EncodeToString([]byte(value))))
}

// execAs runs command through the API's exec as the caller of token, in
// the first task of task group tg; it returns the reply and the answer's
// bytes.
func (s *tenantSystem) execAs(token, tg, command string) (messageReply, []byte) {
	s.t.Helper()
	body, _ := json.Marshal(map[string]any{"command": []string{"sh", "-c", command + " 2>&1"}})
	code, data := s.callAs(token, "POST", "/v1/taskgroups/"+tg+"/exec", body)
	if code != http.StatusOK {
		s.t.Fatalf("exec %q: %d %s", command, code, data)
	}
	var r messageReply
	_ = json.Unmarshal(data, &r)
	return r, data
}

// uidOfPath is the owner and mode of a path on this machine.
func uidOfPath(t *testing.T, p string) (uint32, os.FileMode) {
	t.Helper()
	info, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return info.Sys().(*syscall.Stat_t).Uid, info.Mode().Perm()
}

// refusedDetail posts a manifest as the caller of token and wants a 400
// whose details hold want.
func (s *tenantSystem) refusedDetail(token, what string, manifest []byte, want string) {
	s.t.Helper()
	code, body := s.callAs(token, "POST", "/v1/apps", manifest)
	refused(s.t, what, code, body, want)
}

// One namespace's processes cannot read another's, through the real
// process executor on one agent: nsb runs a game server with a secret as a
// file and in its environment, and prints it; nsa's game server, on the
// same agent, runs commands through the API (opa's exec) against
// everything of nsb's. Each is refused by the kernel — its own uid is not
// nsb's, nsb's directories are 0700, its files 0400/0600, its output 0600
// in a 0700 sandbox — and no answer holds nsb's secret. Manifests naming
// nsb's uid, root by uid or name, or a user the policy does not list are a
// 400 naming the field and the rule. An archive whose links chain out of
// its outputDir is refused by the executor, naming the member, and leaves
// no link.
func TestTenantIdentityProcesses(t *testing.T) {
	s := startTenants(t)
	const secret = "nsb-secret-value-7f3a9"
	if code, body := s.callAs(tokenOpB, "POST", "/v1/secrets", tenantSecret(tenantB, secret)); code != http.StatusCreated {
		t.Fatalf("nsb's secret: %d %s", code, body)
	}
	victim := s.tenantProcess(tenantB, "victim", func(p map[string]any) {
		p["secrets"] = []any{map[string]any{"secretName": "s", "items": []any{
			map[string]any{"type": "file", "dataKey": "k", "keyOrPath": "${workPath}/secret.pem"},
			map[string]any{"type": "env", "dataKey": "k", "keyOrPath": "SECRET_TOKEN"}}}}
		p["startCmd"] = "echo the token is $SECRET_TOKEN; " + p["startCmd"].(string)
	})
	if code, body := s.callAs(tokenOpB, "POST", "/v1/apps", victim); code != http.StatusCreated {
		t.Fatalf("nsb's victim: %d %s", code, body)
	}
	if code, body := s.callAs(tokenOpA, "POST", "/v1/apps", s.tenantProcess(tenantA, "attacker", nil)); code != http.StatusCreated {
		t.Fatalf("nsa's attacker: %d %s", code, body)
	}
	b := s.running(tenantB, "victim", 1)[0]
	a := s.running(tenantA, "attacker", 1)[0]
	if a.Host != "agent-1" || b.Host != "agent-1" {
		t.Fatalf("not on one agent: nsa on %s, nsb on %s", a.Host, b.Host)
	}
	workB := filepath.Join(s.dir, "work", "agent-1", "nsb.victim.0")
	runB := s.runPath("agent-1", "nsb.victim.0")
	pidB := pidOf(t, filepath.Join(runB, "gamesvr.pid"))
	pidA := pidOf(t, s.runPath("agent-1", "nsa.attacker.0", "gamesvr.pid"))
	stdouts, _ := filepath.Glob(filepath.Join(s.dir, "mesos", "agents", "*", "frameworks", "*", "executors", b.TaskGroupID, "runs", "latest", "*.stdout"))
	if len(stdouts) != 1 {
		t.Fatalf("nsb's task output: %v", stdouts)
	}
	if out, _ := os.ReadFile(stdouts[0]); !strings.Contains(string(out), secret) {
		t.Fatalf("nsb's output %q does not hold its token", out)
	}
	startSh, _ := os.ReadFile(filepath.Join(workB, "start.sh"))

	// Each namespace is its own user: two uids of 20000-29999, nsb's
	// directories, files and output its own alone.
	uidB, _ := uidOfPath(t, workB)
	statusA, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pidA))
	if uidB < 20000 || uidB > 29999 || strings.Contains(string(statusA), fmt.Sprintf("\t%d\t", uidB)) {
		t.Errorf("nsb's uid %d; nsa's process:\n%s", uidB, statusA)
	}
	sandboxB, err := filepath.EvalSymlinks(filepath.Dir(stdouts[0])) // runs/latest is a link
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]struct {
		uid  uint32
		mode os.FileMode
	}{
		workB: {uidB, 0o700}, runB: {uidB, 0o700}, filepath.Join(workB, "secret.pem"): {uidB, 0o400},
		stdouts[0]: {uidB, 0o600}, sandboxB: {0, 0o700}, // the executor's, root's
	} {
		if uid, mode := uidOfPath(t, p); uid != want.uid || mode != want.mode {
			t.Errorf("%s: uid %d mode %o, want uid %d mode %o", p, uid, mode, want.uid, want.mode)
		}
	}
	// nsb itself reads its file: the attacks below fail for want of
	// rights, not of a file.
	if r, _ := s.execAs(tokenOpB, b.TaskGroupID, "cat "+filepath.Join(workB, "secret.pem")); r.Output != secret {
		t.Fatalf("nsb reading its own secret file: %+v", r)
	}

	var answers [][]byte
	for _, attack := range []struct{ name, command string }{
		{"read nsb's secret file", "cat " + filepath.Join(workB, "secret.pem")},
		{"read nsb's environment", fmt.Sprintf("cat /proc/%d/environ", pidB)},
		{"replace nsb's start.sh", "echo 'echo owned' > " + filepath.Join(workB, "start.sh")},
		{"write into nsb's run dir", "echo 1 > " + filepath.Join(runB, "gamesvr.pid")},
		{"read nsb's output in the sandbox", "cat " + stdouts[0]},
		{"stop nsb's game server", fmt.Sprintf("kill -STOP %d", pidB)},
	} {
		r, data := s.execAs(tokenOpA, a.TaskGroupID, attack.command)
		answers = append(answers, data)
		refused := !r.OK && (strings.Contains(r.Output, "Permission denied") || strings.Contains(r.Output, "not permitted"))
		if !refused {
			t.Errorf("%s: the attack worked: %+v", attack.name, r)
		} else {
			t.Logf("%s: refused: exit %d %q", attack.name, r.ExitCode, strings.TrimSpace(r.Output))
		}
	}
	for i, data := range answers {
		if bytes.Contains(data, []byte(secret)) {
			t.Errorf("answer %d holds nsb's secret: %s", i, data)
		}
	}
	if after, _ := os.ReadFile(filepath.Join(workB, "start.sh")); !bytes.Equal(after, startSh) {
		t.Errorf("nsb's start.sh changed: %q", after)
	}
	if pidOf(t, filepath.Join(runB, "gamesvr.pid")) != pidB || procState(pidB) == "T" {
		t.Errorf("nsb's game server was touched: pid file %d, state %q", pidOf(t, filepath.Join(runB, "gamesvr.pid")), procState(pidB))
	}

	// Manifests: nsa may not name nsb's uid, root (by uid or by name), or
	// a user its policy (the default: none) does not list.
	const field = "spec.template.spec.processes[0].user: "
	for i, m := range []struct{ user, want string }{
		{fmt.Sprint(uidB), fmt.Sprintf(`%sid %d belongs to another namespace (--namespace-uids 20000-29999 gives each namespace its own) in namespace "nsa" (admission policy)`, field, uidB)},
		{"0", field + `running as root is not allowed in namespace "nsa" (admission policy)`},
		{"root", field + `running as root is not allowed in namespace "nsa" (admission policy)`},
		{"nobody", field + `running as "nobody" is not allowed (allowed: no "user" (the namespace's own uid) only) in namespace "nsa" (admission policy)`},
	} {
		name := fmt.Sprintf("as-user-%d", i)
		s.refusedDetail(tokenOpA, "a process as "+m.user, s.tenantProcess(tenantA, name, func(p map[string]any) { p["user"] = m.user }), m.want)
		if _, code := s.app(tenantA, name); code != http.StatusNotFound {
			t.Errorf("the manifest naming %s was stored: %d", m.user, code)
		}
	}

	// Item 10: "a → ." then "a/b → .." each stays inside alone; followed
	// as extraction follows them, b lands in the output directory and
	// points above it. The executor refuses the package, naming b.
	chain := tarGzOf(t, []tar.Header{
		{Name: "a", Typeflag: tar.TypeSymlink, Linkname: "."},
		{Name: "a/b", Typeflag: tar.TypeSymlink, Linkname: ".."},
	})
	if err := os.WriteFile(filepath.Join(s.dir, "data", "files", "chain.tar.gz"), chain, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, body := s.callAs(tokenOpA, "POST", "/v1/apps", s.tenantProcess(tenantA, "chain", func(p map[string]any) {
		p["uris"] = []any{map[string]any{"value": "${scheduler_url}/files/chain.tar.gz", "pullPolicy": "Always",
			"outputDir": "${work_base_dir}/${namespace}.${processname}.${instanceid}"}}
	})); code != http.StatusCreated {
		t.Fatalf("nsa's chain: %d %s", code, body)
	}
	var failed string
	s.eventually("the chain's launch failing", func() (bool, string) {
		v, _ := s.app(tenantA, "chain")
		for _, i := range v.Status.Instances {
			if strings.Contains(i.Message, "TASK_FAILED") {
				failed = i.Message
				return true, ""
			}
		}
		return false, fmt.Sprintf("%+v", v.Status.Instances)
	})
	if !strings.Contains(failed, `archive symlink "a/b" → ".." points outside the output directory`) {
		t.Errorf("the chain failed for another reason: %q", failed)
	} else {
		t.Logf("chain: %q", failed)
	}
	if target, err := os.Readlink(filepath.Join(s.dir, "work", "agent-1", "nsa.chain.0", "b")); err == nil {
		t.Errorf("the escaping link is in the work dir: b → %s", target)
	}
}

// procState is the state letter of a process ("T": stopped), "" when gone.
func procState(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i > 0 && i+2 < len(s) {
		return s[i+2 : i+3]
	}
	return ""
}

// tarGzOf is a .tar.gz of headers without content.
func tarGzOf(t *testing.T, headers []tar.Header) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for i := range headers {
		headers[i].Mode, headers[i].ModTime = 0o777, time.Unix(0, 0)
		if err := tw.WriteHeader(&headers[i]); err != nil {
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

// The package cache leaks no package to another namespace: nsb fetches its
// package from a server that wants a password (and tells no ETag or
// Last-Modified to revalidate with); nsa, on the same agent, names the
// same URL without one. The process executor's cache is keyed by namespace
// and credential: nsa's fetch goes to the server, which refuses it, and
// nsa's instance fails saying so; nsb's package is nowhere in nsa's work
// dir.
func TestTenantPackageCache(t *testing.T) {
	pkg, err := os.ReadFile(filepath.Join("..", "examples", "gamesvr", "package", "start.sh"))
	if err != nil {
		t.Fatal(err)
	}
	const user, pwd = "team-b", "nsb-repo-Pw-4c1d"
	var mu sync.Mutex
	var requests []string // "user" of each request, "-" for none
	var body []byte       // the package, once the system made it
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		mu.Lock()
		defer mu.Unlock()
		requests = append(requests, map[bool]string{true: u, false: "-"}[ok])
		if !ok || u != user || p != pwd {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	// Both teams may fetch from the server (it listens on loopback, which
	// the egress policy refuses otherwise): what keeps nsb's package from
	// nsa is the cache, not the network.
	s := startTenants(t, allowEgress(t, strings.TrimPrefix(srv.URL, "http://")))
	pkgBody, err := os.ReadFile(filepath.Join(s.dir, "data", "files", "gamesvr.tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	body = pkgBody
	mu.Unlock()
	url := srv.URL + "/private/gamesvr.tar.gz"
	withPackage := func(withCredential bool) func(p map[string]any) {
		return func(p map[string]any) {
			uri := map[string]any{"value": url, "pullPolicy": "IfNotPresent",
				"outputDir": "${work_base_dir}/${namespace}.${processname}.${instanceid}"}
			if withCredential {
				uri["user"], uri["pwd"] = user, pwd
			}
			p["uris"] = []any{uri}
		}
	}
	if code, b := s.callAs(tokenOpB, "POST", "/v1/apps", s.tenantProcess(tenantB, "private", withPackage(true))); code != http.StatusCreated {
		t.Fatalf("nsb's app: %d %s", code, b)
	}
	s.running(tenantB, "private", 1)
	mu.Lock()
	before := len(requests)
	mu.Unlock()
	if code, b := s.callAs(tokenOpA, "POST", "/v1/apps", s.tenantProcess(tenantA, "freeload", withPackage(false))); code != http.StatusCreated {
		t.Fatalf("nsa's app: %d %s", code, b)
	}
	want := "401 Unauthorized"
	s.eventually("nsa's fetch refused by the server", func() (bool, string) {
		v, _ := s.app(tenantA, "freeload")
		for _, i := range v.Status.Instances {
			if strings.Contains(i.Message, want) && strings.Contains(i.Message, url) {
				t.Logf("nsa's instance: %q", i.Message)
				return true, ""
			}
			if i.State == "TASK_RUNNING" {
				return false, "nsa's instance runs nsb's package: " + i.Message
			}
		}
		return false, fmt.Sprintf("%+v", v.Status.Instances)
	})
	mu.Lock()
	after := slices.Clone(requests[before:])
	mu.Unlock()
	if len(after) == 0 || after[0] != "-" {
		t.Errorf("the server saw no request of nsa's: %v", after)
	}
	if got, err := os.ReadFile(filepath.Join(s.dir, "work", "agent-1", "nsa.freeload.0", "start.sh")); err == nil && bytes.Equal(got, pkg) {
		t.Error("nsa's work dir holds nsb's package")
	}
	v, _ := s.app(tenantA, "freeload")
	shown, _ := json.Marshal(v)
	if bytes.Contains(shown, []byte(pwd)) {
		t.Errorf("nsa's application shows nsb's password: %s", shown)
	}
}

// A container runs as its namespace's uid whatever its image's user, and
// its files are that uid's alone, through the real container executor and
// dockerd: nsa's container, whose image's user is root, runs as nsa's uid
// (the default policy allows no image user), and its secret file is 0400
// and that uid's — not 0444 root, which any user of the container would
// read.
func TestTenantIdentityContainer(t *testing.T) {
	s := startTenants(t)
	const secret = "nsa-container-secret-51be"
	if code, body := s.callAs(tokenOpA, "POST", "/v1/secrets", tenantSecret(tenantA, secret)); code != http.StatusCreated {
		t.Fatalf("nsa's secret: %d %s", code, body)
	}
	m := s.manifest("application.json", func(m map[string]any) {
		meta := m["metadata"].(map[string]any)
		meta["name"], meta["namespace"] = "web", tenantA
		c := m["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
		c["secrets"] = []any{map[string]any{"secretName": "s", "items": []any{
			map[string]any{"type": "file", "dataKey": "k", "keyOrPath": "/etc/game/secret.pem"}}}}
	})
	if code, body := s.callAs(tokenOpA, "POST", "/v1/apps", m); code != http.StatusCreated {
		t.Fatalf("nsa's web: %d %s", code, body)
	}
	inst := s.running(tenantA, "web", 1)[0]
	body, _ := json.Marshal(map[string]any{"task": "container-0", "command": []string{"sh", "-c", "id -u; id -g; stat -c '%u %a' /etc/game/secret.pem"}})
	code, data := s.callAs(tokenOpA, "POST", "/v1/taskgroups/"+inst.TaskGroupID+"/exec", body)
	var r messageReply
	_ = json.Unmarshal(data, &r)
	lines := strings.Fields(r.Output)
	if code != http.StatusOK || !r.OK || len(lines) != 4 {
		t.Fatalf("exec in nsa's container: %d %s", code, data)
	}
	uid := lines[0]
	if n, _ := strconv.Atoi(uid); n < 20000 || n > 29999 || lines[1] != uid || lines[2] != uid || lines[3] != "400" {
		t.Errorf("nsa's container runs as uid %s gid %s, its secret file is uid %s's with mode %s; want nsa's uid of 20000-29999, mode 400",
			uid, lines[1], lines[2], lines[3])
	} else {
		t.Logf("nsa's container: uid %s, secret file uid %s mode %s", uid, lines[2], lines[3])
	}
	// What runs in the container is what docker says.
	if user := docker(t, "inspect", "-f", "{{.Config.User}}", taskContainer(t, inst.Tasks[0].ID)); user != uid+":"+uid {
		t.Errorf("docker says the container runs as %q", user)
	}
}
