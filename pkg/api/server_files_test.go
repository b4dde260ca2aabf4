package api_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
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
