package process_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
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
		stats, err := f.Fetch(context.Background(), "ns-a", uri, openDir(t, out), -1, -1, nil)
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
	if stats, err := f.Fetch(context.Background(), "ns-a", uri, openDir(t, out), -1, -1, nil); err != nil || !stats.Downloaded {
		t.Errorf("changed content: %+v %v", stats, err)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "app/run.sh")); string(b) != "echo v2\n" {
		t.Errorf("run.sh %q", b)
	}
	uri.PullPolicy = process.PullAlways
	for i := 0; i < 2; i++ {
		if stats, err := f.Fetch(context.Background(), "ns-a", uri, openDir(t, out), -1, -1, nil); err != nil || !stats.Downloaded {
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
		if _, err := f.Fetch(context.Background(), "ns-a", proto.URI{Value: "file://" + filepath.Join(src, name), OutputDir: out}, openDir(t, out), -1, -1, nil); err != nil {
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
		// Each link alone stays inside; the second resolves through the
		// first: b lands in the output directory and points above it.
		{"link chain", func(t *testing.T) []byte {
			return tarGz(t, member{Name: "a", Link: "."}, member{Name: "a/b", Link: ".."})
		}, ".tar.gz"},
		{"link chain through a directory entry", func(t *testing.T) []byte {
			return tarGz(t, member{Name: "d", Dir: true}, member{Name: "d/up", Link: ".."}, member{Name: "d", Dir: true},
				member{Name: "d/up/x", Link: ".."})
		}, ".tar.gz"},
		// Lexically "a/.." is ".", but the kernel climbs from where a led.
		{"dot-dot after a link", func(t *testing.T) []byte {
			return tarGz(t, member{Name: "a", Link: "."}, member{Name: "c", Link: "a/.."})
		}, ".tar.gz"},
		{"link loop", func(t *testing.T) []byte {
			return tarGz(t, member{Name: "p", Link: "q"}, member{Name: "q", Link: "p"}, member{Name: "p/x", Body: "x"})
		}, ".tar.gz"},
		{"zip link chain", func(t *testing.T) []byte {
			return zipOf(t, member{Name: "a", Link: "."}, member{Name: "a/b", Link: ".."})
		}, ".zip"},
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
			_, err := f.Fetch(context.Background(), "ns-a", proto.URI{Value: "file://" + src, OutputDir: out}, openDir(t, out), -1, -1, nil)
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
		member{Name: "top", Link: "bin/real"}, member{Name: "hard", Hard: "bin/real"},
		// Through a link to a directory inside, and back up to its parent.
		member{Name: "b", Link: "bin"}, member{Name: "b/up", Link: ".."}, member{Name: "b/up/via", Link: "bin/real"}), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(base, "out")
	f := &process.Fetcher{CacheDir: filepath.Join(base, "cache"), PackageDirs: []string{base}}
	if _, err := f.Fetch(context.Background(), "ns-a", proto.URI{Value: "file://" + src, OutputDir: out}, openDir(t, out), -1, -1, nil); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"bin/alias", "top", "hard", "via", "bin/up/bin/real"} {
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

// A file:// package comes from the executor's package directories only,
// and a link there cannot lead out (one copied the scheduler's secret.key
// into a task directory).
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
			_, err := f.Fetch(context.Background(), "ns-a", proto.URI{Value: tt.url, OutputDir: out}, openDir(t, out), -1, -1, nil)
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
	if _, err := f.Fetch(context.Background(), "ns-a", uri, openDir(t, out), -1, -1, policy("nsb", host)); err != nil {
		t.Fatalf("allowed: %v", err)
	}
	requests := srv.requests.Load()
	for _, pull := range []string{process.PullIfNotPresent, process.PullAlways} {
		uri.PullPolicy = pull
		stats, err := f.Fetch(context.Background(), "ns-a", uri, openDir(t, out), -1, -1, policy("nsa"))
		want := "download " + url + ": egress to " + host + " refused: loopback (egress policy of namespace nsa)"
		if err == nil || err.Error() != want || !errors.Is(err, errdefs.ErrPermissionDenied) || stats.CacheHit {
			t.Errorf("%s: %+v, %v; want %q", pull, stats, err, want)
		}
	}
	if got := srv.requests.Load(); got != requests {
		t.Errorf("%d requests reached the server under the refusing policy", got-requests)
	}
}

// The package cache is keyed by the namespace and the credential, not the
// URL alone. Another namespace naming the same URL without the credential
// reaches the server (and is refused); so does the same namespace with a
// wrong one. The credential is on disk in no form a guess could be checked
// against. A server that can revalidate (ETag) is asked with the
// credential each time: a revoked one stops working.
func TestFetchCacheKeyedByNamespaceAndCredential(t *testing.T) {
	var requests atomic.Int32
	const user, pwd = "deploy", "s3cret-pw"
	body := tarGz(t, member{Name: "app/run.sh", Body: "echo nsb\n", Mode: 0o755})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if u, p, ok := r.BasicAuth(); !ok || u != user || p != pwd {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		_, _ = w.Write(body) // no ETag, no Last-Modified: nothing to revalidate with
	}))
	defer srv.Close()
	cache := t.TempDir()
	f := &process.Fetcher{CacheDir: cache, Logger: testlog.New(t)}
	fetch := func(ns, u, p string) (process.FetchStats, error) {
		out := t.TempDir()
		return f.Fetch(context.Background(), ns, proto.URI{Value: srv.URL + "/app.tar.gz", User: u, Password: p,
			PullPolicy: process.PullIfNotPresent, OutputDir: out}, openDir(t, out), -1, -1, nil)
	}
	if stats, err := fetch("nsb", user, pwd); err != nil || !stats.Downloaded {
		t.Fatalf("nsb with its credential: %+v %v", stats, err)
	}
	for _, c := range []struct{ ns, user, pwd string }{{"nsa", "", ""}, {"nsa", user, "guess"}, {"nsb", user, "guess"}, {"nsb", "", ""}} {
		before := requests.Load()
		stats, err := fetch(c.ns, c.user, c.pwd)
		if err == nil || !strings.Contains(err.Error(), "401") || stats.CacheHit {
			t.Errorf("%s with %q:%q: %+v %v, want the server's 401", c.ns, c.user, c.pwd, stats, err)
		}
		if requests.Load() != before+1 {
			t.Errorf("%s with %q:%q: the server saw no request", c.ns, c.user, c.pwd)
		}
	}
	before := requests.Load()
	if stats, err := fetch("nsb", user, pwd); err != nil || !stats.CacheHit || requests.Load() != before {
		t.Errorf("nsb again: %+v %v, %d requests, want its cached copy", stats, err, requests.Load()-before)
	}
	_ = filepath.WalkDir(cache, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		sum := sha256.Sum256([]byte(pwd))
		if strings.Contains(d.Name(), hex.EncodeToString(sum[:])) {
			t.Errorf("%s is named by the password's hash", p)
		}
		if data, _ := os.ReadFile(p); !d.IsDir() && bytes.Contains(data, []byte(pwd)) {
			t.Errorf("%s holds the password", p)
		}
		return nil
	})

	// A server with an ETag is asked again, with the credential: once it
	// is revoked, the cached copy is no more.
	repo := newPackageServer(t)
	url := repo.put("/repo/app.tar.gz", body)
	uri := func() (process.FetchStats, error) {
		out := t.TempDir()
		return f.Fetch(context.Background(), "nsb", proto.URI{Value: url, User: repo.user, Password: "s3cret-pw",
			PullPolicy: process.PullIfNotPresent, OutputDir: out}, openDir(t, out), -1, -1, nil)
	}
	if stats, err := uri(); err != nil || !stats.Downloaded {
		t.Fatalf("first: %+v %v", stats, err)
	}
	if stats, err := uri(); err != nil || !stats.CacheHit {
		t.Fatalf("revalidated: %+v %v", stats, err)
	}
	repo.mu.Lock()
	repo.pwd = "rotated"
	repo.mu.Unlock()
	if stats, err := uri(); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("a revoked credential: %+v %v, want the server's 401", stats, err)
	}
}
