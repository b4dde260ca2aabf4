package podruntime

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/bcs-mesos/bcs-mesos/pkg/egress"
	"github.com/bcs-mesos/bcs-mesos/pkg/executor"
	"github.com/bcs-mesos/bcs-mesos/pkg/pod/podtest"
	"github.com/bcs-mesos/bcs-mesos/pkg/remotefile"
	"github.com/bcs-mesos/bcs-mesos/pkg/taskstate"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// TestRemoteConfigMapItems: the container executor fetches a task's
// remote configmap item (HTTP basic auth) before the pod starts and the
// container gets it as the file and the env var the item names, with a
// copy in the sandbox; a wrong password fails the whole task group
// (TASK_FAILED naming the item and the URL, never the password) before
// any container, the network's included, is created.
func TestRemoteConfigMapItems(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if u, pw, _ := r.BasicAuth(); u != "cfg" || pw != "cfg-Pw-1" || r.URL.Path != "/game.conf" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Write([]byte("level=7\nmode=pvp"))
	}))
	defer srv.Close()
	remoteTask := func(password string) executor.Task {
		task := containerTask("game.0", "game", "exec sleep 100000")
		item := proto.RemoteItem{Source: `configmap ns-a/conf item "game"`, Type: "http", URL: srv.URL + "/game.conf",
			User: "cfg", Password: password}
		asFile, asEnv := item, item
		asFile.File = &proto.File{Path: "/etc/game/game.conf", ReadOnly: true}
		asEnv.Env = "GAME_CONF"
		task.Spec.Remote = []proto.RemoteItem{asFile, asEnv}
		return task
	}
	// noPassword fails the test if a file under dir holds the password.
	noPassword := func(dir string) {
		filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
			if b, _ := os.ReadFile(path); err == nil && !info.IsDir() && strings.Contains(string(b), "Pw-") {
				t.Errorf("%s holds a password", path)
			}
			return nil
		})
	}

	t.Run("fetched into the container", func(t *testing.T) {
		c := podtest.Docker(t)
		kept := t.TempDir()
		rt, cfg := newRuntime(t, c, func(cfg *Config) { cfg.Remote = &remotefile.Fetcher{Dir: kept} })
		rep := newReporter(t)
		task := remoteTask("cfg-Pw-1")
		rt.Launch(context.Background(), []executor.Task{task}, rep)
		rep.awaitState(task.ID(), taskstate.Running)
		res := rt.Message(context.Background(), &proto.Message{ID: "exec", Type: proto.MessageExec, TaskID: task.ID(),
			Command: []string{"sh", "-c", `cat /etc/game/game.conf; echo; echo "$GAME_CONF"`}})
		if want := "level=7\nmode=pvp\nlevel=7\nmode=pvp\n"; !res.OK || res.Output != want {
			t.Errorf("file then env in the container: %+v, want output %q", res, want)
		}
		if copies, _ := filepath.Glob(filepath.Join(kept, "game", "*game.conf")); len(copies) != 2 {
			t.Errorf("sandbox copies %v, want one per item", copies)
		}
		noPassword(kept)
		noPassword(cfg.SandboxDir)
	})

	t.Run("wrong password", func(t *testing.T) {
		c := podtest.Docker(t)
		kept := t.TempDir()
		rt, cfg := newRuntime(t, c, func(cfg *Config) { cfg.Remote = &remotefile.Fetcher{Dir: kept} })
		rep := newReporter(t)
		task, side := remoteTask("wrong-Pw-2"), containerTask("side.0", "side", "exec sleep 100000")
		rt.Launch(context.Background(), []executor.Task{task, side}, rep)
		want := `configmap ns-a/conf item "game": GET ` + srv.URL + "/game.conf: HTTP status 401 Unauthorized"
		for _, id := range []string{task.ID(), side.ID()} {
			failed := rep.awaitState(id, taskstate.Failed)
			if !strings.Contains(failed.Message, want) || strings.Contains(failed.Message, "Pw-") {
				t.Errorf("task %q FAILED message %q, want %q and no password", id, failed.Message, want)
			}
			if failed.Reason == nil || *failed.Reason != mesos.REASON_CONTAINER_LAUNCH_FAILED {
				t.Errorf("task %q FAILED reason %v, want a failed launch", id, failed.Reason)
			}
		}
		waitDone(t, rt)
		if left := labelledContainers(t, c, cfg.Labels[podtest.Label]); len(left) != 0 {
			t.Errorf("%d containers left after the fetch failed", len(left))
		}
		noPassword(kept)
		noPassword(cfg.SandboxDir)
	})
	// The spec's egress policy (its namespace's) refuses the server on
	// loopback: the task group fails naming the rule, and the server sees
	// no request.
	t.Run("refused by the egress policy", func(t *testing.T) {
		c := podtest.Docker(t)
		rt, cfg := newRuntime(t, c, nil)
		rep := newReporter(t)
		task := remoteTask("cfg-Pw-1")
		task.Spec.Instance.Namespace = "ns-a"
		task.Spec.Egress = &proto.Egress{Refused: egress.Networks()}
		before := requests.Load()
		rt.Launch(context.Background(), []executor.Task{task}, rep)
		want := `configmap ns-a/conf item "game": GET ` + srv.URL + "/game.conf: egress to " + strings.TrimPrefix(srv.URL, "http://") +
			" refused: loopback (egress policy of namespace ns-a)"
		if failed := rep.awaitState(task.ID(), taskstate.Failed); !strings.Contains(failed.Message, want) {
			t.Errorf("FAILED message %q, want %q", failed.Message, want)
		}
		waitDone(t, rt)
		if left := labelledContainers(t, c, cfg.Labels[podtest.Label]); len(left) != 0 || requests.Load() != before {
			t.Errorf("%d containers left, %d requests reached the server", len(left), requests.Load()-before)
		}
	})
}
