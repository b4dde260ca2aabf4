package api_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/api"
)

// The dev setup serves packages for agents to fetch from /files/, read
// only and never outside the directory.
func TestFilesAreServed(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "game.tar.gz"), []byte("package"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.NewServer(api.Config{FilesDir: dir}))
	defer srv.Close()
	get := func(path string) (int, string) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/files/game.tar.gz"); code != 200 || body != "package" {
		t.Errorf("GET package: %d %q", code, body)
	}
	if code, _ := get("/files/../../etc/passwd"); code == 200 {
		t.Error("served a file outside the directory")
	}
	req, _ := http.NewRequest(http.MethodPut, srv.URL+"/files/x", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("PUT /files/x: %d, want 405", resp.StatusCode)
	}
}

// /files/ serves regular files inside its directory only. A
// link planted there (by a task's root startCmd) to the scheduler's own
// key is not followed out, a link that stays inside is, and directories
// are not listed.
func TestFilesRefusesLinksOut(t *testing.T) {
	base := t.TempDir()
	dir, key := filepath.Join(base, "files"), filepath.Join(base, "secret.key")
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for p, body := range map[string]string{key: "sealing key", filepath.Join(dir, "sub", "game.tgz"): "package"} {
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"key": key, "up": "../secret.key", "outdir": base, "inside": "sub/game.tgz"} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(api.NewServer(api.Config{FilesDir: dir}))
	defer srv.Close()
	for path, want := range map[string]int{
		"/files/key": 404, "/files/up": 404, "/files/outdir/secret.key": 404, "/files/sub/": 404, "/files/": 404,
		"/files/%2e%2e/secret.key": 404, "/files/inside": 200, "/files/sub/game.tgz": 200,
	} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want || (want == 200) != (string(body) == "package") {
			t.Errorf("GET %s: %d %q, want %d", path, resp.StatusCode, body, want)
		}
		if strings.Contains(string(body), "sealing key") {
			t.Errorf("GET %s served the key", path)
		}
	}
}
