package e2e_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// agentView is what the agent tests read of GET /v1/agents/{agent}.
type agentView struct {
	ID          string `json:"id"`
	Hostname    string `json:"hostname"`
	Schedulable bool   `json:"schedulable"`
	Drain       *struct {
		State     string `json:"state"`
		Remaining int    `json:"remaining"`
		Blocked   []struct {
			Instance string `json:"instance"`
			Why      string `json:"why"`
		} `json:"blocked"`
		Kept []string `json:"kept"`
	} `json:"drain"`
	Instances []struct {
		App string `json:"app"`
	} `json:"instances"`
	Master *struct {
		Active bool   `json:"active"`
		Drain  string `json:"drain"`
		Total  struct {
			CPUs float64 `json:"cpus"`
		} `json:"total"`
	} `json:"master"`
	Maintenance *struct {
		Answer string `json:"answer"`
	} `json:"maintenance"`
}

func (s *system) agent(name string) agentView {
	s.t.Helper()
	_, body := s.call("GET", "/v1/agents/"+name, nil)
	var v agentView
	_ = json.Unmarshal(body, &v)
	return v
}

func (s *system) mustCall(method, path, body string, want int) {
	s.t.Helper()
	var data []byte
	if body != "" {
		data = []byte(body)
	}
	if code, got := s.call(method, path, data); code != want {
		s.t.Fatalf("%s %s = %d, want %d: %s", method, path, code, want, got)
	}
}

// A drain with 3 instances on an agent moves all with no moment below
// replicas−1; a NoSchedule taint keeps a new app off until tolerated;
// drift goes to a named agent; and maintenance mode holds launches —
// through the real scheduler, dev cluster and process executor.
func TestDrainTaintDriftAndMaintenance(t *testing.T) {
	s := startSystem(t)
	// An agent is known once it offered or the master's agent list was
	// read: a cordon before that is a 404.
	s.eventually("agent-2 and agent-3 known", func() (bool, string) {
		code2, body := s.call("GET", "/v1/agents/agent-2", nil)
		code3, _ := s.call("GET", "/v1/agents/agent-3", nil)
		return code2 == http.StatusOK && code3 == http.StatusOK, string(body)
	})
	// Every instance on agent-1: the others cordoned while it is created.
	s.mustCall("POST", "/v1/agents/agent-2/cordon", "", 200)
	s.mustCall("POST", "/v1/agents/agent-3/cordon", "", 200)
	app := s.manifest("process.json", func(m map[string]any) {
		delete(m, "constraint") // UNIQUE hostname would keep 3 off one agent
	})
	s.mustCall("POST", "/v1/apps", string(app), 201)
	for _, inst := range s.running("demo", "gamesvr", 3) {
		if inst.Host != "agent-1" {
			t.Fatalf("instance on %s, want every one on agent-1 (the others cordoned)", inst.Host)
		}
	}
	s.mustCall("POST", "/v1/agents/agent-2/uncordon", "", 200)
	s.mustCall("POST", "/v1/agents/agent-3/uncordon", "", 200)
	// api, hostname UNIQUE on the three agents: its instance on agent-1
	// fits nowhere else, and must not hold up gamesvr's moves.
	api := s.manifest("process.json", func(m map[string]any) { m["metadata"].(map[string]any)["name"] = "api" })
	s.mustCall("POST", "/v1/apps", string(api), 201)
	blocker := ""
	for _, inst := range s.running("demo", "api", 3) {
		if inst.Host == "agent-1" {
			blocker = fmt.Sprintf("demo/api/%d", inst.ID)
		}
	}

	// Drain agent-1, sampling the running instances all along.
	var mu sync.Mutex
	lowest, samples, moves := 3, 0, 0
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			v, code := s.app("demo", "gamesvr")
			if code != 200 {
				continue
			}
			running, moving := 0, 0
			for _, i := range v.Status.Instances {
				if i.State == "TASK_RUNNING" {
					running++
				}
				if i.Move != nil && i.Move.Reason == "drain" && i.Move.Successor != nil && i.Move.Successor.Host != "" {
					moving++
				}
			}
			mu.Lock()
			lowest, samples, moves = min(lowest, running), samples+1, moves+moving
			mu.Unlock()
		}
	}()
	s.mustCall("POST", "/v1/agents/agent-1/drain", `{"reason":"kernel upgrade"}`, 200)
	s.eventuallyWithin(90*time.Second, "gamesvr moved off agent-1, api's move blocked", func() (bool, string) {
		a := s.agent("agent-1")
		v, _ := s.app("demo", "gamesvr")
		left := 0
		for _, i := range v.Status.Instances {
			if i.Host == "agent-1" || i.State != "TASK_RUNNING" {
				left++
			}
		}
		return left == 0 && a.Drain != nil && a.Drain.Remaining == 1 && len(a.Drain.Blocked) == 1 && a.Drain.Blocked[0].Instance == blocker &&
			a.Drain.Blocked[0].Why == "0/3 agents fit: hostname UNIQUE 2, cordoned 1", fmt.Sprintf("gamesvr %d not moved; agent-1 %+v", left, a.Drain)
	})
	if out := s.ctl("", "describe", "agent", "agent-1"); !regexp.MustCompile(`Blocked:\s+` + blocker + `: 0/3 agents fit: hostname UNIQUE 2, cordoned 1`).MatchString(out) {
		t.Errorf("bcsctl describe agent agent-1 does not say which move is blocked and why:\n%s", out)
	}
	r := s.bcsctl("", "drain", "agent-1", "--timeout", "2s")
	if want := "agent agent-1 draining: 1 instance to move; " + blocker + " fits on no agent: 0/3 agents fit: hostname UNIQUE 2, cordoned 1"; r.code == 0 || !strings.Contains(r.out+r.err, want) {
		t.Errorf("bcsctl drain agent-1 exit %d, want it to time out saying %q:\n%s%s", r.code, want, r.out, r.err)
	}
	s.mustCall("DELETE", "/v1/apps/demo/api", "", 202)
	s.eventuallyWithin(90*time.Second, "agent-1 drained", func() (bool, string) {
		a := s.agent("agent-1")
		return a.Drain != nil && a.Drain.State == "drained" && len(a.Instances) == 0 && !a.Schedulable, fmt.Sprintf("%+v", a)
	})
	close(stop)
	<-done
	for _, inst := range s.running("demo", "gamesvr", 3) {
		if inst.Host == "agent-1" {
			t.Errorf("instance %d still on the drained agent-1", inst.ID)
		}
	}
	mu.Lock()
	if moves == 0 {
		t.Errorf("no sample showed an instance's drain move with its placed successor")
	}
	if lowest < 2 || samples < 10 {
		t.Errorf("during the drain the fewest running instances seen was %d in %d samples, want ≥ 2 (replicas−1)", lowest, samples)
	}
	t.Logf("drain: fewest running %d of 3 over %d samples", lowest, samples)
	mu.Unlock()

	// agent-1 drained; tainted agent-2 and agent-3 keep a new application
	// off until it tolerates the taint.
	s.mustCall("PUT", "/v1/agents/agent-2/taints", `{"taints":["gpu=true:NoSchedule"]}`, 200)
	s.mustCall("PUT", "/v1/agents/agent-3/taints", `{"taints":["gpu=true"]}`, 200)
	plain := s.manifest("process.json", func(m map[string]any) {
		m["metadata"].(map[string]any)["name"] = "plain"
		m["spec"].(map[string]any)["instance"] = 1
	})
	s.mustCall("POST", "/v1/apps", string(plain), 201)
	s.eventually("plain pending on the taints", func() (bool, string) {
		v, _ := s.app("demo", "plain")
		return v.Status.State == "Abnormal" && len(v.Status.Instances) == 1 && v.Status.Instances[0].State == "", fmt.Sprintf("%+v", v.Status)
	})
	tolerant := s.manifest("process.json", func(m map[string]any) {
		m["metadata"].(map[string]any)["name"] = "tolerant"
		m["spec"].(map[string]any)["instance"] = 1
		m["constraint"] = map[string]any{"intersectionItem": []any{map[string]any{"unionData": []any{
			map[string]any{"name": "gpu", "operate": "TOLERATION", "type": 3, "text": map[string]any{"value": "true"}}}}}}
	})
	s.mustCall("POST", "/v1/apps", string(tolerant), 201)
	s.running("demo", "tolerant", 1)
	if v, _ := s.app("demo", "plain"); v.Status.State != "Abnormal" {
		t.Errorf("plain is %s, want still held off by the taints", v.Status.State)
	}
	s.mustCall("DELETE", "/v1/apps/demo/plain", "", 202)

	// Soft placement: with agent-1 drained, agent-2's PreferNoSchedule
	// taint sends both instances of "steered" to agent-3, and untainted, a
	// preferred rack r2 sends both of "preferring" to agent-2 — where the
	// spread alone puts one on each.
	s.mustCall("PUT", "/v1/agents/agent-2/taints", `{"taints":["spot=true:PreferNoSchedule"]}`, 200)
	s.mustCall("PUT", "/v1/agents/agent-3/taints", `{"taints":[]}`, 200)
	soft := func(name string, constraint any) []byte {
		return s.manifest("process.json", func(m map[string]any) {
			m["metadata"].(map[string]any)["name"] = name
			m["spec"].(map[string]any)["instance"] = 2
			delete(m, "constraint") // process.json's UNIQUE hostname
			if constraint != nil {
				m["constraint"] = constraint
			}
		})
	}
	s.mustCall("POST", "/v1/apps", string(soft("steered", nil)), 201)
	for _, inst := range s.running("demo", "steered", 2) {
		if inst.Host != "agent-3" {
			t.Errorf("steered instance %d on %s, want agent-3: agent-2's PreferNoSchedule taint is not tolerated", inst.ID, inst.Host)
		}
	}
	s.mustCall("PUT", "/v1/agents/agent-2/taints", `{"taints":[]}`, 200)
	s.mustCall("POST", "/v1/apps", string(soft("preferring", map[string]any{"intersectionItem": []any{map[string]any{"weight": 50,
		"unionData": []any{map[string]any{"name": "rack", "operate": "CLUSTER", "type": 3, "text": map[string]any{"value": "r2"}}}}}})), 201)
	for _, inst := range s.running("demo", "preferring", 2) {
		if inst.Host != "agent-2" {
			t.Errorf("preferring instance %d on %s, want agent-2 (rack r2, preferred)", inst.ID, inst.Host)
		}
	}
	s.mustCall("DELETE", "/v1/apps/demo/steered", "", 202)
	s.mustCall("DELETE", "/v1/apps/demo/preferring", "", 202)

	// Drift instance 0 to agent-1 by name once it is back in service.
	s.mustCall("POST", "/v1/agents/agent-1/undrain", "", 200)
	s.mustCall("PUT", "/v1/agents/agent-2/taints", `{"taints":[]}`, 200)
	s.mustCall("PUT", "/v1/agents/agent-3/taints", `{"taints":[]}`, 200)
	from := ""
	for _, inst := range s.running("demo", "gamesvr", 3) {
		if inst.ID == 0 {
			from = inst.Host
		}
	}
	s.mustCall("POST", "/v1/agents/"+from+"/drift", `{"to":"agent-1","namespace":"demo","app":"gamesvr","instance":0}`, 202)
	s.eventually("instance 0 drifted to agent-1", func() (bool, string) {
		v, _ := s.app("demo", "gamesvr")
		for _, i := range v.Status.Instances {
			if i.ID == 0 {
				return i.Host == "agent-1" && i.State == "TASK_RUNNING", fmt.Sprintf("%+v", i)
			}
		}
		return false, "no instance 0"
	})

	// NoExecute: tainted, agent-1 lists gamesvr's instance 0
	// as evicted (its move due, or under way) and moves it off; untainted,
	// it takes instances again.
	code, body := s.call("PUT", "/v1/agents/agent-1/taints", []byte(`{"taints":["kernel=old:NoExecute"]}`))
	var tainted struct {
		Evictions []struct{ Instance string } `json:"evictions"`
	}
	if err := json.Unmarshal(body, &tainted); code != http.StatusOK || err != nil ||
		!slices.ContainsFunc(tainted.Evictions, func(e struct{ Instance string }) bool { return e.Instance == "demo/gamesvr/0" }) {
		t.Errorf("PUT agent-1's taints kernel=old:NoExecute = %d %s, want the agent listing demo/gamesvr/0 among its evictions", code, body)
	}
	s.eventually("instance 0 evicted from agent-1", func() (bool, string) {
		v, _ := s.app("demo", "gamesvr")
		for _, i := range v.Status.Instances {
			if i.ID == 0 {
				return i.Host != "agent-1" && i.State == "TASK_RUNNING" && i.Move == nil, fmt.Sprintf("%+v", i)
			}
		}
		return false, "no instance 0"
	})
	s.mustCall("PUT", "/v1/agents/agent-1/taints", `{"taints":[]}`, 200)

	// Maintenance: a scale-up is stored, nothing launches until it ends;
	// the instance it adds is listed, waiting, and it and its application
	// say why (not only "3/4", which left an operator guessing).
	s.mustCall("PUT", "/v1/engine", `{"mode":"maintenance","reason":"etcd upgrade"}`, 200)
	s.mustCall("POST", "/v1/apps/demo/gamesvr/scale", `{"instances":4}`, 202)
	wait := regexp.MustCompile(`the engine is in maintenance since 20\d\d-\d\d-\d\dT[\d:]+Z, set by admin: etcd upgrade$`)
	s.eventually("instance 3 listed, waiting, saying why", func() (bool, string) {
		v, _ := s.app("demo", "gamesvr")
		for _, i := range v.Status.Instances {
			if i.ID == 3 {
				return i.Phase == "Pending" && i.State == "" && wait.MatchString(i.Message) && wait.MatchString(v.Status.Message),
					fmt.Sprintf("%+v; %s %q", i, v.Status.State, v.Status.Message)
			}
		}
		return false, fmt.Sprintf("%+v", v.Status.Instances)
	})
	time.Sleep(2 * time.Second)
	v, _ := s.app("demo", "gamesvr")
	for _, i := range v.Status.Instances {
		if i.ID == 3 && i.State != "" {
			t.Fatalf("in maintenance the scale-up launched: %+v", v.Status.Instances)
		}
	}
	s.mustCall("PUT", "/v1/engine", `{"mode":"running"}`, 200)
	s.running("demo", "gamesvr", 4)
}
