package e2e_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// answerServer is the web endpoint hooks call: it answers with body and
// records the requests' paths.
type answerServer struct {
	mu    sync.Mutex
	body  string
	paths []string
	url   string
}

func newAnswerServer(t *testing.T, body string) *answerServer {
	t.Helper()
	a := &answerServer{body: body}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		defer a.mu.Unlock()
		a.paths = append(a.paths, r.URL.RequestURI())
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, a.body)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	a.url = "http://" + ln.Addr().String()
	return a
}

// host is the server's host:port, as an egress policy allows it.
func (a *answerServer) host() string { return strings.TrimPrefix(a.url, "http://") }

func (a *answerServer) set(body string) {
	a.mu.Lock()
	a.body = body
	a.mu.Unlock()
}

func (a *answerServer) requests() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.paths...)
}

// hookTemplate is a one-call web hook template: successCondition over
// the value jsonPath selects from url's answer.
func hookTemplate(name, url, jsonPath, condition string, args ...string) []byte {
	var declared []map[string]string
	for _, a := range args {
		declared = append(declared, map[string]string{"name": a})
	}
	t := map[string]any{"apiVersion": "v4", "kind": "hooktemplate", "metadata": map[string]any{"name": name, "namespace": "demo"},
		"spec": map[string]any{"args": declared, "metrics": []any{map[string]any{
			"name": "web", "successCondition": condition,
			"provider": map[string]any{"web": map[string]any{"url": url, "jsonPath": jsonPath, "timeoutSeconds": 2}},
		}}}}
	out, _ := json.Marshal(t)
	return out
}

// A canary hook step gates a real update — seed 003's example
// answer {"name":"bryan","male":"yes","age":45} under asInt(result) < 30:
// with age 20 the rollout goes on and completes; with 45 the run fails,
// the rollout aborts back to the stable revision and says which
// measurement failed and why.
func TestCanaryHookGatesTheRollout(t *testing.T) {
	web := newAnswerServer(t, `{"name":"bryan","male":"yes","age":20}`)
	s := startSystem(t, allowEgress(t, web.host()))
	if code, body := s.call("POST", "/v1/hooktemplates", hookTemplate("age", web.url+"/age?app={{ args.AppName }}", "{$.age}", "asInt(result) < 30", "AppName")); code != 201 {
		t.Fatalf("template: %d %s", code, body)
	}
	strategy := map[string]any{"type": "RollingUpdate", "maxUnavailable": 1,
		"canary": map[string]any{"steps": []any{map[string]any{"partition": 2}, map[string]any{"hook": map[string]any{"templateName": "age"}}}}}
	put := func(build string) {
		t.Helper()
		if code, body := s.call("PUT", "/v1/deployments/demo/gated", s.processDeployment("gated", 3, strategy, build, "gamesvr.tar.gz")); code != 200 {
			t.Fatalf("update %s: %d %s", build, code, body)
		}
	}
	if code, body := s.call("POST", "/v1/deployments", s.processDeployment("gated", 3, strategy, "v1", "gamesvr.tar.gz")); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	s.completed("gated", 1, "Completed")
	put("v2")
	for _, inst := range s.completed("gated", 2, "Completed") {
		if inst.Revision != 2 {
			t.Errorf("after a passing hook: instance %d on revision %d", inst.ID, inst.Revision)
		}
	}
	if reqs := web.requests(); len(reqs) != 1 || reqs[0] != "/age?app=gated" {
		t.Errorf("the hook's calls: %q, want one with the app's name", reqs)
	}

	web.set(`{"name":"bryan","male":"yes","age":45}`)
	put("v3")
	back := s.completed("gated", 3, "Aborted")
	for _, inst := range back {
		if inst.Revision != 2 {
			t.Errorf("after a failing hook: instance %d on revision %d, want the stable 2", inst.ID, inst.Revision)
		}
	}
	ro := s.deployment("gated").Status.Rollout
	if !strings.Contains(ro.Message, "hook age of step 2 failed") || !strings.Contains(ro.Message, "45") {
		t.Errorf("the abort does not say why: %q", ro.Message)
	}
	var runs struct {
		Hookruns []struct {
			Name   string
			Status struct {
				Phase         string
				MetricResults []struct {
					Measurements []struct{ Value, Phase string }
				}
			}
		}
	}
	_, body := s.call("GET", "/v1/hookruns?namespace=demo&owner=gated", nil)
	_ = json.Unmarshal(body, &runs)
	if len(runs.Hookruns) != 2 || runs.Hookruns[1].Status.Phase != "Failed" ||
		runs.Hookruns[1].Status.MetricResults[0].Measurements[0].Value != "45" {
		t.Errorf("hook runs: %s", body)
	}
}

// PreDeleteHook: a scale-down waits, visibly, until the endpoint
// says the instance may go (called with the instance's PodName), then
// the instance goes.
func TestPreDeleteHookHoldsAScaleDown(t *testing.T) {
	web := newAnswerServer(t, `{"drained":"no"}`)
	s := startSystem(t, allowEgress(t, web.host()))
	if code, body := s.call("POST", "/v1/hooktemplates", hookTemplate("drained", web.url+"/drained?pod={{ args.PodName }}", "{$.drained}", `result == "yes"`, "PodName")); code != 201 {
		t.Fatalf("template: %d %s", code, body)
	}
	strategy := map[string]any{"type": "RollingUpdate", "maxUnavailable": 1}
	create := func(instances int) []byte {
		var m map[string]any
		_ = json.Unmarshal(s.processDeployment("drain", instances, strategy, "v1", "gamesvr.tar.gz"), &m)
		m["spec"].(map[string]any)["preDeleteUpdateStrategy"] = map[string]any{"hook": map[string]any{"templateName": "drained"}}
		out, _ := json.Marshal(m)
		return out
	}
	if code, body := s.call("POST", "/v1/deployments", create(2)); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	two := s.completed("drain", 1, "Completed")
	if code, body := s.call("POST", "/v1/deployments/demo/drain/scale", []byte(`{"instances":1}`)); code != 202 {
		t.Fatalf("scale: %d %s", code, body)
	}
	s.eventually("instance 1 waiting for its PreDeleteHook", func() (bool, string) {
		_, body := s.call("GET", "/v1/deployments/demo/drain", nil)
		return strings.Contains(string(body), "PreDeleteHook run") && strings.Contains(string(body), `"state": "TASK_RUNNING"`) &&
			len(web.requests()) >= 2, string(body)
	})
	if v := s.deployment("drain"); len(v.Status.Instances) != 2 {
		t.Fatalf("instance 1 went without its hook: %+v", v.Status.Instances)
	}
	if reqs := web.requests(); reqs[0] != "/drained?pod="+two[1].TaskGroupID {
		t.Errorf("the hook's call %q, want instance 1's PodName", reqs[0])
	}
	web.set(`{"drained":"yes"}`)
	s.eventually("instance 1 gone after its hook passed", func() (bool, string) {
		v := s.deployment("drain")
		return len(v.Status.Instances) == 1 && v.Status.Instances[0].ID == 0, fmt.Sprintf("%+v", v.Status.Instances)
	})
}
