package e2e_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// remoteConfigMap is a configmap of namespace demo whose item "game" is
// fetched over HTTP with user cfg and password.
func remoteConfigMap(name, url, password string) []byte {
	data, _ := json.Marshal(map[string]any{
		"apiVersion": "v4", "kind": "configmap",
		"metadata": map[string]any{"name": name, "namespace": "demo"},
		"datas": map[string]any{"game": map[string]any{
			"type": "http", "content": url, "RemoteUser": "cfg", "remotePasswd": password}},
	})
	return data
}

// takesConfigMap edits an example manifest into the one-instance
// application name whose first process or container takes item "game" of
// configmap cm as the file path (owned by user, "" for root) and as the
// variable GAME_CONF.
func takesConfigMap(name, cm, path, user string) func(m map[string]any) {
	return func(m map[string]any) {
		m["metadata"].(map[string]any)["name"] = name
		spec := m["spec"].(map[string]any)
		spec["instance"] = 1
		tmpl := spec["template"].(map[string]any)["spec"].(map[string]any)
		workloads, ok := tmpl["processes"].([]any)
		if !ok {
			workloads = tmpl["containers"].([]any)
		}
		workloads[0].(map[string]any)["configmaps"] = []any{map[string]any{"name": cm, "items": []any{
			map[string]any{"type": "file", "dataKey": "game", "keyOrPath": path, "readOnly": true, "user": user},
			map[string]any{"type": "env", "dataKey": "game", "keyOrPath": "GAME_CONF"},
		}}}
	}
}

// Configmap items of type http through the whole system: the process
// executor and the container executor fetch the item (basic auth, from a
// server on this machine) and their process and container see it as the
// file and the variable (exec through the API). With a wrong password
// both applications' instances fail naming the item and the address and
// are relaunched per their restart policy, again and again; the password
// is in no answer of the API, no event and no log; deleting the
// applications leaves no container.
func TestRemoteConfigMapItems(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, pw, _ := r.BasicAuth(); u != "cfg" || pw != "cfg-Pw-1" || r.URL.Path != "/game.conf" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Write([]byte("level=7\nmode=pvp"))
	}))
	defer srv.Close()
	url := srv.URL + "/game.conf"
	s := startSystem(t, allowEgress(t, strings.TrimPrefix(srv.URL, "http://")))
	events := s.subscribe("?namespace=demo", "")
	create := func(path string, body []byte) {
		t.Helper()
		if code, resp := s.call("POST", path, body); code != 201 {
			t.Fatalf("POST %s: %d %s", path, code, resp)
		}
	}

	// The process runs as its namespace's uid, which owns its file (0400),
	// in its work path, where exec runs.
	procFile, containerFile := "${workPath}/game.conf", "/etc/game/game.conf"
	create("/v1/configmaps", remoteConfigMap("conf", url, "cfg-Pw-1"))
	create("/v1/apps", s.manifest("process.json", takesConfigMap("rcm-proc", "conf", procFile, "")))
	create("/v1/apps", s.manifest("application.json", takesConfigMap("rcm-web", "conf", containerFile, "")))
	for _, w := range []struct{ app, task, path string }{{"rcm-proc", "gamesvr", "game.conf"}, {"rcm-web", "container-0", containerFile}} {
		app, path := w.app, w.path
		inst := s.running("demo", app, 1)[0]
		r := s.message(inst.TaskGroupID, "exec", 200,
			fmt.Sprintf(`{"task":%q,"command":["sh","-c","cat %s; echo; echo \"$GAME_CONF\""]}`, w.task, path))
		if want := "level=7\nmode=pvp\nlevel=7\nmode=pvp\n"; !r.OK || r.Output != want {
			t.Errorf("%s: file %s then GAME_CONF: %+v, want output %q", app, path, r, want)
		}
	}

	create("/v1/configmaps", remoteConfigMap("conf-bad", url, "wrong-Pw-2"))
	create("/v1/apps", s.manifest("process.json", takesConfigMap("rcm-bad-proc", "conf-bad", procFile, "")))
	create("/v1/apps", s.manifest("application.json", takesConfigMap("rcm-bad-web", "conf-bad", containerFile, "")))
	start := time.Now()
	want := `configmap demo/conf-bad item "game": GET ` + url + ": HTTP status 401 Unauthorized"
	for _, app := range []string{"rcm-bad-proc", "rcm-bad-web"} {
		s.eventuallyWithin(90*time.Second, app+": no second relaunch after failed fetches", func() (bool, string) {
			v, _ := s.app("demo", app)
			if len(v.Status.Instances) != 1 {
				return false, fmt.Sprintf("%+v", v.Status.Instances)
			}
			i := v.Status.Instances[0]
			return i.Restarts >= 2 && strings.Contains(i.Message, want), fmt.Sprintf("%+v", i)
		})
		v, _ := s.app("demo", app)
		t.Logf("%s after %v: restarts %d, %q", app, time.Since(start).Round(time.Millisecond), v.Status.Instances[0].Restarts, v.Status.Instances[0].Message)
	}

	// Every answer and every event so far: the failures are told, the
	// passwords never.
	var answers []string
	for _, path := range []string{"/v1/apps?namespace=demo", "/v1/apps/demo/rcm-bad-proc", "/v1/apps/demo/rcm-bad-web",
		"/v1/configmaps?namespace=demo", "/v1/configmaps/demo/conf-bad"} {
		code, body := s.call("GET", path, nil)
		if code != 200 {
			t.Errorf("GET %s: %d %s", path, code, body)
		}
		answers = append(answers, fmt.Sprintf("GET %s: %s", path, body))
	}
	for quiet := false; !quiet; {
		select {
		case c := <-events.changes:
			answers = append(answers, fmt.Sprintf("event %s %s %s: %s", c.Type, c.Action, c.Name, c.Object))
		case <-time.After(time.Second):
			quiet = true
		}
	}
	told := 0
	for _, a := range answers {
		if strings.Contains(a, "Pw-") {
			t.Errorf("a password in %s", a)
		}
		if strings.HasPrefix(a, "event instance") && strings.Contains(a, "HTTP status 401 Unauthorized") {
			told++
		}
	}
	t.Logf("%d answers and events, %d instance events tell the failure", len(answers), told)
	if told == 0 {
		t.Errorf("no instance event tells the failed fetch among %d answers and events", len(answers))
	}
	logs, _ := filepath.Glob(filepath.Join(s.dir, "*.log"))
	sandboxLogs, _ := filepath.Glob(filepath.Join(s.dir, "mesos", "agents", "*", "frameworks", "*", "executors", "*", "runs", "*", "std*"))
	for _, f := range append(logs, sandboxLogs...) {
		if data, _ := os.ReadFile(f); strings.Contains(string(data), "Pw-") {
			t.Errorf("a password in %s", f)
		}
	}
	if len(sandboxLogs) == 0 {
		t.Errorf("no executor log under %s", s.dir)
	}

	for _, app := range []string{"rcm-proc", "rcm-web", "rcm-bad-proc", "rcm-bad-web"} {
		if code, body := s.call("DELETE", "/v1/apps/demo/"+app, nil); code != 202 {
			t.Fatalf("delete %s: %d %s", app, code, body)
		}
	}
	s.eventually("no container of the applications left", func() (bool, string) {
		left := append(s.podContainers("demo_rcm-web_"), s.podContainers("demo_rcm-bad-web_")...)
		return len(left) == 0, strings.Join(left, " ")
	})
}
