package e2e_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// egressRun is what the egress tests read of a hook run.
type egressRun struct {
	Status struct {
		Phase         string `json:"phase"`
		Message       string `json:"message"`
		MetricResults []struct {
			Measurements []struct {
				Value string `json:"value"`
			} `json:"measurements"`
		} `json:"metricResults"`
	} `json:"status"`
}

// What is fetched on a tenant's behalf — hook calls, remote configmap
// items, package URIs — is no proxy into the cluster. nsb runs a victim
// whose process prints nsb's configmap item to its stdout, which its
// agent's files API serves on loopback (the test reads it there first: the
// target is real). As nsa's operator, through the real API, hook runner,
// executors and dev cluster, every way there is refused with an error
// naming the address, the rule and nsa's egress policy, and none of nsb's
// bytes is in any answer of the API to nsa, any event of nsa, or any file
// of nsa's instances:
//   - a hook web metric at the agent's /files/read of nsb's sandbox file;
//   - one at the scheduler's --debug-addr (pprof);
//   - one POSTing DEACTIVATE_AGENT to the master (the agent stays active,
//     as the master's own state says);
//   - one at an allowed server that redirects to the agent;
//   - one naming the agent as localhost;
//   - a remote configmap item at the agent's URL (the instance fails;
//     nothing of nsb lands in it);
//   - a package URI at the agent's /files/download.
//
// And a hook at the server nsa's policy allows still measures.
func TestTenantEgress(t *testing.T) {
	secret := fmt.Sprintf("nsb-victim-secret-%d", time.Now().UnixNano())
	var victimURL atomic.Pointer[string]
	allowed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hop" {
			http.Redirect(w, r, *victimURL.Load(), http.StatusFound)
			return
		}
		fmt.Fprint(w, `{"age":12}`)
	}))
	defer allowed.Close()
	allowedHost := strings.TrimPrefix(allowed.URL, "http://")
	debugAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	// nsa's admission policy allows the one server, by host:port.
	policy := admissionPolicy(t, map[string]any{"namespaces": map[string]any{tenantA: map[string]any{"egress": []string{allowedHost}}}})
	s := startTenants(t, policy, "--debug-addr="+debugAddr)
	events := s.subscribe("?namespace="+tenantA, "")

	victim := s.startVictim(secret)
	read := "http://" + victim.agentEndpoint + "/files/read?path=" + url.QueryEscape(victim.stdout) + "&offset=0&length=65536"
	victimURL.Store(&read)
	// The target is real: the agent serves nsb's bytes to whoever asks.
	if code, body := get(read); code != 200 || !strings.Contains(body, secret) {
		t.Fatalf("the agent's /files/read of nsb's stdout: %d %q, want nsb's secret", code, body)
	}
	agentPort := strings.TrimPrefix(victim.agentEndpoint, "127.0.0.1:")
	loopback := func(port string) string {
		return "egress to 127.0.0.1:" + port + " refused: loopback (egress policy of namespace nsa)"
	}

	localhost := strings.Replace(read, "127.0.0.1", "localhost", 1)
	hooks := []struct {
		name     string
		web      map[string]any
		refusal  string // "" for the allowed one
		leaked   string // what must not be in the run
		measured string
	}{
		{name: "agent-files", web: map[string]any{"url": read, "jsonPath": "{$.data}"},
			refusal: "GET " + read + ": " + loopback(agentPort), leaked: secret},
		{name: "debug-pprof", web: map[string]any{"url": "http://" + debugAddr + "/debug/pprof/cmdline"},
			refusal: "GET http://" + debugAddr + "/debug/pprof/cmdline: egress to " + debugAddr +
				" refused: the scheduler's debug address (egress policy of namespace nsa)", leaked: "--token-file"},
		{name: "deactivate-agent", web: map[string]any{"url": s.master + "/api/v1", "method": "POST",
			"body": fmt.Sprintf(`{"type":"DEACTIVATE_AGENT","deactivate_agent":{"agent_id":{"value":%q}}}`, victim.agentID)},
			refusal: "POST " + s.master + "/api/v1: egress to " + strings.TrimPrefix(s.master, "http://") + " refused: a Mesos master (egress policy of namespace nsa)"},
		{name: "redirect", web: map[string]any{"url": allowed.URL + "/hop", "jsonPath": "{$.data}"},
			refusal: "GET " + allowed.URL + "/hop: redirect to " + read + ": " + loopback(agentPort), leaked: secret},
		{name: "localhost", web: map[string]any{"url": localhost, "jsonPath": "{$.data}"},
			refusal: "GET " + localhost + ": " + loopback(agentPort), leaked: secret},
		{name: "allowed", web: map[string]any{"url": allowed.URL + "/age", "jsonPath": "{$.age}"}, measured: "12"},
	}
	for _, h := range hooks {
		s.createAs(tokenOpA, "/v1/hooktemplates", map[string]any{"apiVersion": "v4", "kind": "hooktemplate",
			"metadata": map[string]any{"name": h.name, "namespace": tenantA},
			"spec":     map[string]any{"metrics": []any{map[string]any{"name": "m", "consecutiveErrorLimit": 0, "provider": map[string]any{"web": h.web}}}}})
		s.createAs(tokenOpA, "/v1/hookruns", map[string]any{"kind": "hookrun", "metadata": map[string]any{"name": h.name, "namespace": tenantA},
			"spec": map[string]any{"templateName": h.name}})
	}
	// The process attacks: a remote configmap item and a package URI at
	// the agent, in instances that do not restart.
	s.createAs(tokenOpA, "/v1/configmaps", map[string]any{"apiVersion": "v4", "kind": "configmap",
		"metadata": map[string]any{"name": "steal", "namespace": tenantA},
		"datas":    map[string]any{"game": map[string]any{"type": "http", "content": read}}})
	s.createAs(tokenOpA, "/v1/apps", s.oneInstance(tenantA, "thief-cm", "", takesConfigMap("thief-cm", "steal", "${workPath}/stolen.conf", "")))
	download := "http://" + victim.agentEndpoint + "/files/download?path=" + url.QueryEscape(victim.stdout)
	s.createAs(tokenOpA, "/v1/apps", s.oneInstance(tenantA, "thief-pkg", download, nil))

	for _, h := range hooks {
		t.Run("hook "+h.name, func(t *testing.T) {
			var run egressRun
			var record []byte
			s.eventually("hook run "+h.name+" ended", func() (bool, string) {
				code, body := s.callAs(tokenOpA, "GET", "/v1/hookruns/"+tenantA+"/"+h.name, nil)
				record, run = body, egressRun{}
				_ = json.Unmarshal(body, &run)
				return code == 200 && (run.Status.Phase == "Successful" || run.Status.Phase == "Failed" || run.Status.Phase == "Error"),
					fmt.Sprintf("%d %s", code, body)
			})
			if h.leaked != "" && bytes.Contains(record, []byte(h.leaked)) {
				t.Errorf("nsa's hook run holds %q: the call went through: %s", h.leaked, record)
			}
			if h.refusal == "" {
				if m := run.Status.MetricResults[0].Measurements; run.Status.Phase != "Successful" || m[0].Value != h.measured {
					t.Errorf("the allowed hook: %s %q, measured %+v; want Successful, %s", run.Status.Phase, run.Status.Message, m, h.measured)
				}
				return
			}
			if want := "metric m erred: " + h.refusal; run.Status.Phase != "Error" || run.Status.Message != want {
				t.Errorf("%s %q, want Error %q", run.Status.Phase, run.Status.Message, want)
			}
		})
	}
	t.Run("the agent stays active", func(t *testing.T) {
		code, body := get(s.master + "/master/state")
		var state struct {
			Slaves []struct {
				ID     string `json:"id"`
				Active bool   `json:"active"`
			} `json:"slaves"`
		}
		_ = json.Unmarshal([]byte(body), &state)
		for _, a := range state.Slaves {
			if a.ID == victim.agentID && !a.Active {
				t.Errorf("nsa's hook deactivated agent %s: %s", a.ID, body)
			}
		}
		if code != 200 || len(state.Slaves) != 3 {
			t.Errorf("GET /master/state: %d %s", code, body)
		}
	})
	for _, c := range []struct{ app, refusal string }{
		{"thief-cm", `configmap nsa/steal item "game": GET ` + read + ": " + loopback(agentPort)},
		{"thief-pkg", "download " + download + ": " + loopback(agentPort)},
	} {
		t.Run("instance "+c.app, func(t *testing.T) {
			var inst instanceView
			s.eventually(c.app+" failed or running", func() (bool, string) {
				code, body := s.callAs(tokenOpA, "GET", "/v1/apps/"+tenantA+"/"+c.app, nil)
				var v appView
				_ = json.Unmarshal(body, &v)
				if len(v.Status.Instances) == 1 {
					inst = v.Status.Instances[0]
				}
				return inst.State == "TASK_FAILED" || inst.State == "TASK_RUNNING", fmt.Sprintf("%d %s", code, body)
			})
			if inst.State != "TASK_FAILED" || !strings.Contains(inst.Message, c.refusal) {
				t.Errorf("%s %q, want TASK_FAILED naming %q", inst.State, inst.Message, c.refusal)
			}
		})
	}
	t.Run("no answer, event, file or log has nsb's bytes", func(t *testing.T) {
		for _, f := range nsaFiles(s) {
			if data, _ := os.ReadFile(f); bytes.Contains(data, []byte(secret)) {
				t.Errorf("nsb's secret landed in nsa's %s", f)
			}
		}
		for _, path := range []string{"/v1/hookruns?namespace=" + tenantA, "/v1/apps?namespace=" + tenantA, "/v1/configmaps?namespace=" + tenantA} {
			if code, body := s.callAs(tokenOpA, "GET", path, nil); code != 200 || bytes.Contains(body, []byte(secret)) {
				t.Errorf("GET %s as nsa's operator: %d, holds nsb's secret: %v", path, code, bytes.Contains(body, []byte(secret)))
			}
		}
		for _, c := range events.drain() {
			if data, _ := json.Marshal(c); bytes.Contains(data, []byte(secret)) {
				t.Errorf("an event of nsa holds nsb's secret: %s", data)
			}
		}
		if data, _ := os.ReadFile(filepath.Join(s.dir, "bcs-scheduler.log")); bytes.Contains(data, []byte(secret)) {
			t.Error("bcs-scheduler's log holds nsb's secret")
		}
	})
}

// createAs POSTs obj as the caller of token, which must create it.
func (s *tenantSystem) createAs(token, path string, obj any) {
	s.t.Helper()
	body, ok := obj.([]byte)
	if !ok {
		body, _ = json.Marshal(obj)
	}
	if code, answer := s.callAs(token, "POST", path, body); code != http.StatusCreated {
		s.t.Fatalf("POST %s: %d %s", path, code, answer)
	}
}

// victim is nsb's instance whose bytes nsa goes after.
type victim struct {
	agentID, agentEndpoint string
	// stdout is its process's stdout in its sandbox, which its agent's
	// files API serves.
	stdout string
}

// startVictim runs nsb's instance, which prints nsb's configmap item
// (secret) to its stdout, and waits until it did.
func (s *tenantSystem) startVictim(secret string) victim {
	s.t.Helper()
	s.createAs(tokenOpB, "/v1/configmaps", map[string]any{"apiVersion": "v4", "kind": "configmap",
		"metadata": map[string]any{"name": "victim", "namespace": tenantB},
		"datas":    map[string]any{"game": map[string]any{"type": "file", "content": base64.StdEncoding.EncodeToString([]byte(secret))}}})
	m := s.oneInstance(tenantB, "victim", "", func(m map[string]any) {
		takesConfigMap("victim", "victim", "${workPath}/victim.conf", "")(m)
		proc := m["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["processes"].([]any)[0].(map[string]any)
		proc["startCmd"] = "cat victim.conf && " + proc["startCmd"].(string)
	})
	s.createAs(tokenOpB, "/v1/apps", m)
	inst := s.running(tenantB, "victim", 1)[0]
	var v victim
	s.eventually("the victim's stdout in its sandbox", func() (bool, string) {
		runs, _ := filepath.Glob(filepath.Join(s.dir, "mesos", "agents", "*", "frameworks", "*", "executors", inst.TaskGroupID, "runs", "latest"))
		for _, run := range runs {
			dir, err := filepath.EvalSymlinks(run)
			if err != nil {
				continue
			}
			outs, _ := filepath.Glob(filepath.Join(dir, "*.stdout"))
			for _, out := range outs {
				if data, _ := os.ReadFile(out); bytes.Contains(data, []byte(secret)) {
					v.stdout = out
					return true, ""
				}
			}
		}
		return false, fmt.Sprintf("runs %v", runs)
	})
	_, body := s.call("GET", "/v1/agents/"+inst.Host, nil)
	var agent struct {
		ID       string `json:"id"`
		Endpoint string `json:"endpoint"`
	}
	if err := json.Unmarshal(body, &agent); err != nil || agent.Endpoint == "" || agent.ID != inst.Agent {
		s.t.Fatalf("the victim's agent %s: %s", inst.Host, body)
	}
	v.agentID, v.agentEndpoint = agent.ID, agent.Endpoint
	return v
}

// oneInstance is examples/process.json as the one-instance application
// name of namespace ns that never restarts, with extraURI (if any) after
// its package, edited by edit.
func (s *tenantSystem) oneInstance(ns, name, extraURI string, edit func(m map[string]any)) []byte {
	return s.manifest("process.json", func(m map[string]any) {
		m["metadata"].(map[string]any)["name"] = name
		m["metadata"].(map[string]any)["namespace"] = ns
		m["spec"].(map[string]any)["instance"] = 1
		m["restartPolicy"] = map[string]any{"policy": "Never"}
		delete(m, "constraint")
		if edit != nil {
			edit(m)
		}
		proc := m["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["processes"].([]any)[0].(map[string]any)
		if extraURI != "" {
			proc["uris"] = append(proc["uris"].([]any), map[string]any{"value": extraURI, "pullPolicy": "Always", "outputDir": "${workPath}"})
		}
	})
}

// nsaFiles are the files of nsa's instances: their work and run
// directories and their executors' sandboxes.
func nsaFiles(s *tenantSystem) []string {
	var files []string
	roots, _ := filepath.Glob(filepath.Join(s.dir, "work", "*", tenantA+".*"))
	runs, _ := filepath.Glob(filepath.Join(s.dir, "run", "*", tenantA+".*"))
	sandboxes, _ := filepath.Glob(filepath.Join(s.dir, "mesos", "agents", "*", "frameworks", "*", "executors", tenantA+"_*"))
	for _, root := range append(append(roots, runs...), sandboxes...) {
		_ = filepath.Walk(root, func(path string, info os.FileInfo, err error) error {
			if err == nil && info.Mode().IsRegular() {
				files = append(files, path)
			}
			return nil
		})
	}
	return files
}

// drain returns the changes read so far.
func (sub *subscription) drain() []change {
	var got []change
	for {
		select {
		case c, ok := <-sub.changes:
			if !ok {
				return got
			}
			got = append(got, c)
		default:
			return got
		}
	}
}
