package process_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/process"
	"github.com/bcs-mesos/bcs-mesos/pkg/remotefile"
	"github.com/bcs-mesos/bcs-mesos/pkg/taskstate"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// TestRemoteConfigMapItems: the process executor fetches a task's remote
// configmap items (seed 001: into the sandbox) before start and gives
// them to the process as the file and the env var they name; a wrong
// password fails the task naming the item and the URL, never the
// password, which the sandbox does not hold either.
func TestRemoteConfigMapItems(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, pw, _ := r.BasicAuth(); u != "cfg" || pw != "cfg-Pw-1" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Write([]byte("level=7"))
	}))
	defer srv.Close()
	sandbox := t.TempDir()
	e := newEnv(t, func(c *process.Config) { c.Remote = &remotefile.Fetcher{Dir: sandbox} })
	spec := func(name, password string) *proto.TaskSpec {
		work := e.workDir(name)
		item := proto.RemoteItem{Source: `configmap ns-a/conf item "game"`, Type: "http", URL: srv.URL + "/game.conf",
			User: "cfg", Password: password}
		asFile, asEnv := item, item
		asFile.File = &proto.File{Path: "conf/remote.conf"}
		asEnv.Env = "GAME_CONF"
		return &proto.TaskSpec{
			Version: proto.Version, Name: name, Instance: instanceOf(name),
			Process: &proto.ProcessSpec{ProcName: name, WorkPath: work,
				StartCmd: `echo "$GAME_CONF" > env.txt; cat conf/remote.conf > file.txt; exec sleep 100`},
			Remote: []proto.RemoteItem{asFile, asEnv},
		}
	}
	good := spec("good", "cfg-Pw-1")
	e.launch(t, "good", good)
	e.rec.awaitState("good", taskstate.Running, 0)
	// RUNNING comes once the process started, maybe before it wrote.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(good.Process.WorkPath, "file.txt")); err == nil {
			break
		}
	}
	for file, want := range map[string]string{"env.txt": "level=7\n", "file.txt": "level=7"} {
		if got, _ := os.ReadFile(filepath.Join(good.Process.WorkPath, file)); string(got) != want {
			t.Errorf("%s = %q, want %q", file, got, want)
		}
	}

	e.launch(t, "bad", spec("bad", "wrong-Pw-2"))
	failed := e.rec.awaitTerminal("bad")
	want := `configmap ns-a/conf item "game": GET ` + srv.URL + "/game.conf: HTTP status 401 Unauthorized"
	if failed.State != taskstate.Failed || !strings.Contains(failed.Message, want) {
		t.Errorf("wrong password: %s %q, want TASK_FAILED with %q", failed.State, failed.Message, want)
	}
	filepath.Walk(sandbox, func(path string, info os.FileInfo, err error) error {
		if b, _ := os.ReadFile(path); err == nil && !info.IsDir() && strings.Contains(string(b), "Pw-") {
			t.Errorf("%s holds a password", path)
		}
		return nil
	})
	if kept, _ := filepath.Glob(filepath.Join(sandbox, "good", "*")); len(kept) != 2 {
		t.Errorf("sandbox keeps %v, want both items of good", kept)
	}
}
