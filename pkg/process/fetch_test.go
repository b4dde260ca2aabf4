package process_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/internal/testlog"
	"github.com/bcs-mesos/bcs-mesos/pkg/egress"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/process"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// pullPolicy IfNotPresent: the second fetch revalidates with the ETag
// and gets 304 (a cache hit, no body); Always downloads every time.
func TestFetchPullPolicies(t *testing.T) {
	srv := newPackageServer(t)
	url := srv.put("/repo/app.tar.gz", tarGz(t, member{Name: "app/run.sh", Body: "echo hi\n", Mode: 0o755}))
	f := &process.Fetcher{CacheDir: t.TempDir(), Logger: testlog.New(t)}
	out := t.TempDir()
	uri := proto.URI{Value: url, User: srv.user, Password: srv.pwd, PullPolicy: process.PullIfNotPresent, OutputDir: out}
	for i, want := range []process.FetchStats{{Downloaded: true}, {CacheHit: true}, {CacheHit: true}} {
		stats, err := f.Fetch(context.Background(), uri, openDir(t, out), -1, -1, nil)
		if err != nil || stats != want {
			t.Errorf("IfNotPresent fetch %d: %+v %v, want %+v", i, stats, err, want)
		}
	}
	if n := srv.downloads("/repo/app.tar.gz"); n != 1 {
		t.Errorf("IfNotPresent: %d downloads", n)
	}
	if fi, err := os.Stat(filepath.Join(out, "app/run.sh")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("extracted run.sh: %v %v", fi, err)
	}
	// A new version at the same URL changes the ETag: downloaded again.
	srv.put("/repo/app.tar.gz", tarGz(t, member{Name: "app/run.sh", Body: "echo v2\n", Mode: 0o755}))
	if stats, err := f.Fetch(context.Background(), uri, openDir(t, out), -1, -1, nil); err != nil || !stats.Downloaded {
		t.Errorf("changed content: %+v %v", stats, err)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "app/run.sh")); string(b) != "echo v2\n" {
		t.Errorf("run.sh %q", b)
	}
	uri.PullPolicy = process.PullAlways
	for i := 0; i < 2; i++ {
		if stats, err := f.Fetch(context.Background(), uri, openDir(t, out), -1, -1, nil); err != nil || !stats.Downloaded {
			t.Errorf("Always fetch %d: %+v %v", i, stats, err)
		}
	}
	if n := srv.downloads("/repo/app.tar.gz"); n != 4 {
		t.Errorf("%d downloads in all, want 4", n)
	}
}

// file:// URIs and plain (non-archive) files; every URI, zip included.
func TestFetchFileAndZip(t *testing.T) {
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "tool.bin"), []byte("bin"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "conf.zip"), zipOf(t, member{Name: "conf/a.conf", Body: "a=1"}), 0o600); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	f := &process.Fetcher{CacheDir: t.TempDir(), PackageDirs: []string{src}}
	for _, name := range []string{"tool.bin", "conf.zip"} {
		if _, err := f.Fetch(context.Background(), proto.URI{Value: "file://" + filepath.Join(src, name), OutputDir: out}, openDir(t, out), -1, -1, nil); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	for path, want := range map[string]string{"tool.bin": "bin", "conf/a.conf": "a=1"} {
		if b, err := os.ReadFile(filepath.Join(out, path)); err != nil || string(b) != want {
			t.Errorf("%s: %q %v", path, b, err)
		}
	}
}

// Extraction must not write outside outputDir: "..", absolute paths and
// links pointing out are rejected before anything is written.
func TestArchiveRejectsEscapes(t *testing.T) {
	tests := []struct {
		name    string
		archive func(t *testing.T) []byte
		ext     string
	}{
		{"dot-dot", func(t *testing.T) []byte {
			return tarGz(t, member{Name: "ok.txt", Body: "x"}, member{Name: "a/../../x", Body: "x"})
		}, ".tar.gz"},
		{"absolute", func(t *testing.T) []byte { return tarGz(t, member{Name: "/tmp/abs-escape", Body: "x"}) }, ".tgz"},
		{"symlink absolute", func(t *testing.T) []byte { return tarGz(t, member{Name: "etc", Link: "/etc"}) }, ".tar.gz"},
		{"symlink relative out", func(t *testing.T) []byte { return tarGz(t, member{Name: "d/up", Link: "../../.."}) }, ".tar.gz"},
		{"write through symlink", func(t *testing.T) []byte {
			return tarGz(t, member{Name: "l", Link: "../"}, member{Name: "l/x", Body: "x"})
		}, ".tar.gz"},
		{"hard link out", func(t *testing.T) []byte { return tarGz(t, member{Name: "h", Hard: "../../etc/passwd"}) }, ".tar.gz"},
		{"zip dot-dot", func(t *testing.T) []byte { return zipOf(t, member{Name: "../zip-escape", Body: "x"}) }, ".zip"},
		{"zip symlink out", func(t *testing.T) []byte { return zipOf(t, member{Name: "z", Link: "/etc/passwd"}) }, ".zip"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			out := filepath.Join(base, "out")
			src := filepath.Join(base, "pkg"+tc.ext)
			if err := os.WriteFile(src, tc.archive(t), 0o600); err != nil {
				t.Fatal(err)
			}
			f := &process.Fetcher{CacheDir: filepath.Join(base, "cache"), PackageDirs: []string{base}}
			_, err := f.Fetch(context.Background(), proto.URI{Value: "file://" + src, OutputDir: out}, openDir(t, out), -1, -1, nil)
			if !errors.Is(err, errdefs.ErrInvalidArgument) || !strings.Contains(err.Error(), "output directory") {
				t.Fatalf("err %v", err)
			}
			entries, _ := os.ReadDir(out)
			if len(entries) != 0 {
				t.Errorf("wrote %v before rejecting", entries)
			}
			for _, p := range []string{filepath.Join(base, "x"), "/tmp/abs-escape", filepath.Join(base, "zip-escape")} {
				if _, err := os.Lstat(p); err == nil {
					t.Errorf("%s written", p)
				}
			}
		})
	}
}

// Links that stay inside are fine.
func TestArchiveKeepsInnerLinks(t *testing.T) {
	base := t.TempDir()
	src := filepath.Join(base, "pkg.tar.gz")
	if err := os.WriteFile(src, tarGz(t, member{Name: "bin/real", Body: "r", Mode: 0o755}, member{Name: "bin/alias", Link: "real"},
		member{Name: "top", Link: "bin/real"}, member{Name: "hard", Hard: "bin/real"}), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(base, "out")
	f := &process.Fetcher{CacheDir: filepath.Join(base, "cache"), PackageDirs: []string{base}}
	if _, err := f.Fetch(context.Background(), proto.URI{Value: "file://" + src, OutputDir: out}, openDir(t, out), -1, -1, nil); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"bin/alias", "top", "hard"} {
		if b, err := os.ReadFile(filepath.Join(out, p)); err != nil || string(b) != "r" {
			t.Errorf("%s: %q %v", p, b, err)
		}
	}
}

// openDir creates dir and opens it as the root a fetch writes into.
func openDir(t *testing.T, dir string) *os.Root {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return root
}

// Issue 18: a file:// package comes from the executor's package
// directories only, and a link there cannot lead out (it copied the
// scheduler's secret.key into a task directory).
func TestFetchFilePackagesOnlyFromPackageDirs(t *testing.T) {
	base := t.TempDir()
	pkgs, secret := filepath.Join(base, "packages"), filepath.Join(base, "secret.key")
	if err := os.MkdirAll(pkgs, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secret, []byte("sealing key"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pkgs, "ok.bin"), []byte("ok"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(pkgs, "link.bin")); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(base, "out")
	for _, tt := range []struct {
		name, dirs, url, wantErr string
	}{
		{"no package dirs", "", "file://" + secret, "file packages come from the executor's --package-dirs only"},
		{"outside the package dirs", pkgs, "file://" + secret, "is outside"},
		{"dot-dot out of a package dir", pkgs, "file://" + pkgs + "/../secret.key", `must not contain ".."`},
		{"link out of a package dir", pkgs, "file://" + pkgs + "/link.bin", "path escapes from parent"},
		{"a package", pkgs, "file://" + pkgs + "/ok.bin", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := &process.Fetcher{CacheDir: filepath.Join(base, "cache")}
			if tt.dirs != "" {
				f.PackageDirs = []string{tt.dirs}
			}
			_, err := f.Fetch(context.Background(), proto.URI{Value: tt.url, OutputDir: out}, openDir(t, out), -1, -1, nil)
			if tt.wantErr == "" {
				if b, rerr := os.ReadFile(filepath.Join(out, "ok.bin")); err != nil || string(b) != "ok" {
					t.Fatalf("fetch: %v; ok.bin %q %v", err, b, rerr)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err %v, want %q", err, tt.wantErr)
			}
			for _, name := range []string{"secret.key", "link.bin"} {
				if _, err := os.Lstat(filepath.Join(out, name)); err == nil {
					t.Errorf("%s copied", name)
				}
			}
		})
	}
}

// A package URI is fetched under the task's egress policy: refused, the
// error names the address, the rule and the namespace, and the server
// sees no request; a copy cached under another policy (another
// namespace's, which allowed the server) is not used either. The
// namespace's allowed exception lets it through.
func TestFetchHoldsToTheEgressPolicy(t *testing.T) {
	srv := newPackageServer(t)
	url := srv.put("/repo/app.tar.gz", tarGz(t, member{Name: "app/run.sh", Body: "echo hi\n", Mode: 0o755}))
	host := strings.TrimPrefix(srv.URL, "http://")
	policy := func(namespace string, allowed ...string) *egress.Policy {
		p, err := egress.Compile("namespace "+namespace, &proto.Egress{Refused: egress.Networks(), Allowed: allowed})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	f := &process.Fetcher{CacheDir: t.TempDir(), Logger: testlog.New(t)}
	out := t.TempDir()
	uri := proto.URI{Value: url, User: srv.user, Password: srv.pwd, PullPolicy: process.PullIfNotPresent, OutputDir: out}
	if _, err := f.Fetch(context.Background(), uri, openDir(t, out), -1, -1, policy("nsb", host)); err != nil {
		t.Fatalf("allowed: %v", err)
	}
	requests := srv.requests.Load()
	for _, pull := range []string{process.PullIfNotPresent, process.PullAlways} {
		uri.PullPolicy = pull
		stats, err := f.Fetch(context.Background(), uri, openDir(t, out), -1, -1, policy("nsa"))
		want := "download " + url + ": egress to " + host + " refused: loopback (egress policy of namespace nsa)"
		if err == nil || err.Error() != want || !errors.Is(err, errdefs.ErrPermissionDenied) || stats.CacheHit {
			t.Errorf("%s: %+v, %v; want %q", pull, stats, err, want)
		}
	}
	if got := srv.requests.Load(); got != requests {
		t.Errorf("%d requests reached the server under the refusing policy", got-requests)
	}
}
