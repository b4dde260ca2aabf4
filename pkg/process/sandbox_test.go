package process_test

import (
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/taskstate"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// victims are root-owned files and a directory outside every instance's
// directories, with what they were.
type victims struct {
	dir, file string
	before    map[string]os.FileInfo
}

func newVictims(t *testing.T) *victims {
	t.Helper()
	v := &victims{dir: filepath.Join(t.TempDir(), "root-only"), before: map[string]os.FileInfo{}}
	v.file = filepath.Join(v.dir, "secret.key")
	if err := os.Mkdir(v.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(v.file, []byte("sealing key"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{v.dir, v.file} {
		info, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		v.before[p] = info
	}
	return v
}

// unchanged fails t when a victim is gone or changed owner, mode or
// content, or the directory got a new entry.
func (v *victims) unchanged(t *testing.T) {
	t.Helper()
	for p, was := range v.before {
		info, err := os.Lstat(p)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		now, before := info.Sys().(*syscall.Stat_t), was.Sys().(*syscall.Stat_t)
		if info.Mode() != was.Mode() || now.Uid != before.Uid || now.Gid != before.Gid {
			t.Errorf("%s: mode %v owner %d:%d, was %v %d:%d", p, info.Mode(), now.Uid, now.Gid, was.Mode(), before.Uid, before.Gid)
		}
	}
	if b, err := os.ReadFile(v.file); err != nil || string(b) != "sealing key" {
		t.Errorf("%s: %q %v", v.file, b, err)
	}
	if entries, _ := os.ReadDir(v.dir); len(entries) != 1 {
		t.Errorf("%s holds %d entries, want 1", v.dir, len(entries))
	}
}

// Hostile paths in a process spec cannot touch a root-owned
// file or directory outside the instance's directories: not by naming it,
// not through "..", not through a link planted inside. The launch fails
// naming the field, and the victims keep their existence, owner and mode.
func TestHostilePathsTouchNothingOutside(t *testing.T) {
	e := newEnv(t, nil)
	v := newVictims(t)
	for _, tt := range []struct {
		name    string
		link    string // a link planted at this path inside the work dir, to v.dir
		mutate  func(app string, p *proto.TaskSpec)
		wantErr string
	}{
		{name: "pidFile on a root file", mutate: func(_ string, s *proto.TaskSpec) { s.Process.PidFile = v.file },
			wantErr: "pidFile: " + strconv.Quote(v.file) + " is outside"},
		{name: "workPath a root dir", mutate: func(_ string, s *proto.TaskSpec) { s.Process.WorkPath = v.dir },
			wantErr: "workPath: " + strconv.Quote(v.dir) + " is outside"},
		{name: "secret with dot-dot", mutate: func(app string, s *proto.TaskSpec) {
			s.Files = []proto.File{{Path: e.workDir(app) + "/../../../../" + strings.TrimPrefix(v.dir, "/") + "/planted", Content: []byte("x")}}
		}, wantErr: `file: must not contain ".."`},
		{name: "outputDir anywhere", mutate: func(_ string, s *proto.TaskSpec) {
			s.Process.URIs = []proto.URI{{Value: "http://127.0.0.1:1/a.tgz", PullPolicy: "Always", OutputDir: v.dir}}
		}, wantErr: "uris[0].outputDir: " + strconv.Quote(v.dir) + " is outside"},
		{name: "file package", mutate: func(app string, s *proto.TaskSpec) {
			s.Process.URIs = []proto.URI{{Value: "file://" + v.file, PullPolicy: "Always", OutputDir: e.workDir(app)}}
		}, wantErr: "file packages come from the executor's --package-dirs only"},
		{name: "pidFile through a planted link", link: "out", mutate: func(app string, s *proto.TaskSpec) {
			s.Process.PidFile = e.workDir(app) + "/out/secret.key"
		}, wantErr: "escapes"},
		{name: "pidFile a planted link", link: "app.pid", mutate: func(app string, s *proto.TaskSpec) {
			s.Process.PidFile = e.workDir(app) + "/app.pid"
		}, wantErr: "is not a file of the task's user: left alone"},
		{name: "workPath through a planted link", link: "out", mutate: func(app string, s *proto.TaskSpec) {
			s.Process.WorkPath = e.workDir(app) + "/out/sub"
		}, wantErr: "escapes"},
		{name: "secret through a planted link", link: "conf", mutate: func(app string, s *proto.TaskSpec) {
			s.Files = []proto.File{{Path: "conf/planted", Content: []byte("x")}}
		}, wantErr: "escapes"},
		{name: "outputDir through a planted link", link: "pkg", mutate: func(app string, s *proto.TaskSpec) {
			s.Process.URIs = []proto.URI{{Value: "http://127.0.0.1:1/a.tgz", PullPolicy: "Always", OutputDir: e.workDir(app) + "/pkg"}}
		}, wantErr: "escapes"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			app := strings.ReplaceAll(tt.name, " ", "-")
			if tt.link != "" {
				if err := os.MkdirAll(e.workDir(app), 0o755); err != nil {
					t.Fatal(err)
				}
				target := v.dir
				if strings.HasSuffix(tt.link, ".pid") {
					target = v.file
				}
				if err := os.Symlink(target, filepath.Join(e.workDir(app), tt.link)); err != nil {
					t.Fatal(err)
				}
			}
			spec := &proto.TaskSpec{Version: proto.Version, Name: app, Instance: instanceOf(app), Process: &proto.ProcessSpec{
				ProcName: "sleep", User: "nobody", WorkPath: e.workDir(app), PidFile: filepath.Join(e.runDir(app), "app.pid"),
				StartCmd: "exec sleep 60", StartGracePeriod: 0.2,
			}}
			tt.mutate(app, spec)
			e.launch(t, app, spec)
			rep := e.rec.awaitTerminal(app)
			if rep.State != taskstate.Failed || !strings.Contains(rep.Message, tt.wantErr) {
				t.Errorf("%s %q, want failed with %q", rep.State, rep.Message, tt.wantErr)
			}
			v.unchanged(t)
		})
	}
}

// Configmap and secret files belong to the process's user and only it
// reads them (0600, 0400 read-only): before, they were root:nogroup 0640
// and every process running as nobody read every other's secrets. A link
// at the item's path is replaced, not followed, and an existing directory
// the executor did not create keeps its owner.
func TestTaskFilesPrivateToTheTaskUser(t *testing.T) {
	e := newEnv(t, nil)
	v := newVictims(t)
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(nobody.Uid)
	app := "private"
	rootDir := filepath.Join(e.workDir(app), "root-made")
	if err := os.MkdirAll(rootDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(v.file, filepath.Join(e.workDir(app), "linked.conf")); err != nil {
		t.Fatal(err)
	}
	spec := &proto.TaskSpec{Version: proto.Version, Name: app, Instance: instanceOf(app), Process: &proto.ProcessSpec{
		ProcName: "sleep", User: "nobody", WorkPath: rootDir, StartCmd: "cat ../conf/key.pem ../ro.pem > /dev/null && exec sleep 60",
		StartGracePeriod: 0.3,
	}, Files: []proto.File{
		{Path: filepath.Join(e.workDir(app), "conf", "key.pem"), Content: []byte("k")},
		{Path: filepath.Join(e.workDir(app), "ro.pem"), Content: []byte("r"), ReadOnly: true},
		{Path: filepath.Join(e.workDir(app), "linked.conf"), Content: []byte("l")},
	}}
	e.launch(t, app, spec)
	e.rec.awaitState(app, taskstate.Running, 0)
	for name, mode := range map[string]os.FileMode{"conf/key.pem": 0o600, "ro.pem": 0o400, "linked.conf": 0o600} {
		p := filepath.Join(e.workDir(app), name)
		info, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st := info.Sys().(*syscall.Stat_t); info.Mode() != mode || int(st.Uid) != uid {
			t.Errorf("%s: %v uid %d, want %v uid %d (nobody)", name, info.Mode(), st.Uid, mode, uid)
		}
	}
	v.unchanged(t)
	for dir, wantUID := range map[string]int{rootDir: 0, filepath.Join(e.workDir(app), "conf"): uid} {
		info, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		if st := info.Sys().(*syscall.Stat_t); int(st.Uid) != wantUID {
			t.Errorf("%s: uid %d, want %d", dir, st.Uid, wantUID)
		}
	}
}
