package process_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/process"
	"github.com/bcs-mesos/bcs-mesos/pkg/taskstate"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// identityOf is the identity of a namespace given uid of 20000-29999.
func identityOf(uid uint32, users ...string) *proto.Identity {
	return &proto.Identity{UID: uid, GID: uid, Users: users, Range: "20000-29999"}
}

// tenantSpec runs sleep as instance 0 of ns/app with the namespace's
// identity, a secret and a configmap file, and a secret in its
// environment.
func (e *env) tenantSpec(ns, app string, id *proto.Identity) *proto.TaskSpec {
	work := filepath.Join(e.work, ns+"."+app+".0")
	return &proto.TaskSpec{Version: proto.Version, Name: app, Instance: proto.Instance{Namespace: ns, App: app},
		Identity: id,
		Process: &proto.ProcessSpec{ProcName: "sleep", WorkPath: filepath.Join(work, "bin"),
			PidFile: filepath.Join(e.run, ns+"."+app+".0", "pid"), StartGracePeriod: 0.3,
			StartCmd: "echo started $USER $HOME; sleep 60 & echo $! > " + filepath.Join(e.run, ns+"."+app+".0", "pid")},
		Env: []proto.EnvVar{{Name: "SECRET_TOKEN", Value: "token-of-" + ns}},
		Files: []proto.File{
			{Path: filepath.Join(work, "secret.pem"), Content: []byte("secret-of-" + ns), ReadOnly: true},
			{Path: "game.conf", Content: []byte("conf-of-" + ns)},
		},
	}
}

// exec runs command in task id's context and returns its output and exit
// code.
func (e *env) exec(t *testing.T, id, command string) (string, int) {
	t.Helper()
	res := e.rt.Message(t.Context(), &proto.Message{ID: "x", Type: proto.MessageExec, TaskID: id, Command: []string{"sh", "-c", command}})
	if res.Error != "" && res.ExitCode == 0 {
		t.Fatalf("exec %q: %s", command, res.Error)
	}
	return res.Output, res.ExitCode
}

func ownerMode(t *testing.T, p string) (uint32, os.FileMode) {
	t.Helper()
	info, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return info.Sys().(*syscall.Stat_t).Uid, info.Mode().Perm()
}

// With an identity, a process that names no user runs as its
// namespace's uid and gid (no passwd entry), HOME its work path; its
// instance's directories are 0700 and its, the roots above 0711, its
// secret file 0400 and configmap file 0600, its output 0600, all its.
// Another namespace's process reads none of it — files, environment,
// output — and writes into none of its directories.
func TestNamespaceIdentities(t *testing.T) {
	logs := ""
	e := newEnv(t, func(c *process.Config) { logs = c.LogDir })
	if err := os.Chmod(logs, 0o700); err != nil { // a sandbox, as the executor makes it
		t.Fatal(err)
	}
	e.launch(t, "a", e.tenantSpec("nsa", "victim", identityOf(20001)))
	e.launch(t, "b", e.tenantSpec("nsb", "victim", identityOf(20002)))
	ra, _ := e.rec.awaitState("a", taskstate.Running, 0)
	rb, _ := e.rec.awaitState("b", taskstate.Running, 0)
	pidA, pidB := processInfo(t, ra).Pid, processInfo(t, rb).Pid
	if uid := uidOf(t, pidA); uid != "20001" {
		t.Errorf("nsa's process runs as uid %s", uid)
	}
	workB := filepath.Join(e.work, "nsb.victim.0")
	for p, want := range map[string]struct {
		uid  uint32
		mode os.FileMode
	}{
		e.work: {0, 0o711}, e.run: {0, 0o711},
		workB: {20002, 0o700}, filepath.Join(e.run, "nsb.victim.0"): {20002, 0o700},
		filepath.Join(workB, "secret.pem"): {20002, 0o400}, filepath.Join(workB, "bin", "game.conf"): {20002, 0o600},
		filepath.Join(logs, "b.stdout"): {20002, 0o600}, filepath.Join(logs, "b.stderr"): {20002, 0o600},
	} {
		if uid, mode := ownerMode(t, p); uid != want.uid || mode != want.mode {
			t.Errorf("%s: uid %d mode %o, want uid %d mode %o", p, uid, mode, want.uid, want.mode)
		}
	}
	out, _ := os.ReadFile(filepath.Join(logs, "a.stdout"))
	if want := "started bcs-nsa " + filepath.Join(e.work, "nsa.victim.0", "bin"); !strings.Contains(string(out), want) {
		t.Errorf("nsa's output %q, want %q", out, want)
	}

	// nsa's process tries everything nsb has.
	for what, command := range map[string]string{
		"read nsb's secret file": "cat " + filepath.Join(workB, "secret.pem"),
		"read nsb's environment": fmt.Sprintf("cat /proc/%d/environ", pidB),
		"replace nsb's work":     "echo evil > " + filepath.Join(workB, "bin", "start.sh"),
		"write nsb's run dir":    "echo 1 > " + filepath.Join(e.run, "nsb.victim.0", "pid"),
		"read nsb's output":      "cat " + filepath.Join(logs, "b.stdout"),
		"list the instances":     "ls " + e.work,
		"signal nsb's process":   fmt.Sprintf("kill -STOP %d", pidB),
	} {
		out, code := e.exec(t, "a", command+" 2>&1")
		t.Logf("%s: exit %d %q", what, code, out)
		if code == 0 || !strings.Contains(out, "Permission denied") && !strings.Contains(out, "not permitted") {
			t.Errorf("%s: exit %d %q, want refused", what, code, out)
		}
		if strings.Contains(out, "secret-of-nsb") || strings.Contains(out, "token-of-nsb") {
			t.Errorf("%s: nsb's secret leaked: %q", what, out)
		}
	}
	if !isRunning(pidB) {
		t.Error("nsb's process is gone")
	}
}

// A user the namespace's rule refuses fails the launch, naming it: another
// namespace's uid (even under "*"), root by uid, a name the policy does
// not list; the owner of a file item likewise.
func TestNamespaceIdentityRefusesUsers(t *testing.T) {
	e := newEnv(t, nil)
	for i, tt := range []struct {
		id   *proto.Identity
		user string
		file string
		want string
	}{
		{identityOf(20001, "*"), "20002", "", "id 20002 belongs to another namespace"},
		{identityOf(20001, "*"), "0:0", "", "running as root is not allowed"},
		{identityOf(20001), "nobody", "", `running as "nobody" is not allowed`},
		{identityOf(20001, "*"), "", "20002", "id 20002 belongs to another namespace"},
	} {
		id := fmt.Sprintf("refused-%d", i)
		spec := e.tenantSpec("nsa", id, tt.id)
		spec.Process.User = tt.user
		spec.Files[1].User = tt.file
		e.launch(t, id, spec)
		if rep := e.rec.awaitTerminal(id); rep.State != taskstate.Failed || !strings.Contains(rep.Message, tt.want) {
			t.Errorf("user %q, file owner %q: %s %q, want failed saying %q", tt.user, tt.file, rep.State, rep.Message, tt.want)
		}
	}
	// Allowed by name, "*" runs nobody.
	spec := e.tenantSpec("nsa", "named", identityOf(20001, "*"))
	spec.Process.User = "nobody"
	e.launch(t, "named", spec)
	if rep, _ := e.rec.awaitState("named", taskstate.Running, 0); uidOf(t, processInfo(t, rep).Pid) != "65534" {
		t.Error("nobody, allowed by *, does not run as nobody")
	}
}

// Directories an executor that ran every namespace as nobody left (0755,
// nobody's) are the namespace's after the next launch, with what they
// hold; a link in them is given, not followed.
func TestNamespaceIdentityClaimsOldDirectories(t *testing.T) {
	e := newEnv(t, nil)
	v := newVictims(t)
	work := filepath.Join(e.work, "nsa.old.0")
	if err := os.MkdirAll(filepath.Join(work, "bin", "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "bin", "data", "save"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(v.file, filepath.Join(work, "bin", "key")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{work, filepath.Join(work, "bin"), filepath.Join(work, "bin", "data"), filepath.Join(work, "bin", "data", "save"), filepath.Join(work, "bin", "key")} {
		if err := os.Lchown(p, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	e.launch(t, "old", e.tenantSpec("nsa", "old", identityOf(20001)))
	e.rec.awaitState("old", taskstate.Running, 0)
	for _, p := range []string{work, filepath.Join(work, "bin", "data", "save"), filepath.Join(work, "bin", "key")} {
		if uid, _ := ownerMode(t, p); uid != 20001 {
			t.Errorf("%s: uid %d, want 20001", p, uid)
		}
	}
	if _, mode := ownerMode(t, work); mode != 0o700 {
		t.Errorf("%s: mode %o", work, mode)
	}
	v.unchanged(t)
}
