package e2e_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// What the first API pass left open between the two teams, attacked as
// nsa's operator (or the viewer) through the real scheduler, hook
// runner, executors and dev cluster: the cluster-wide views that named
// nsb's instances, nsb's hook header in answers and etcd, and health
// checks that probe the agents' own ports.

// Cluster-wide views name only what the caller may read. nsb and nsa
// each run a stateful instance on agent-1, which the admin drains (the
// drain keeps both); nsa's operator reads GET /v1/agents,
// GET /v1/agents/{name}, the event stream and bcsctl get|describe agent:
// nsa's instance is named, nsb's is counted in "others" and in what the
// agent uses, never by its application or task group ID (the viewer,
// who reads every namespace, sees it named: the target is real). nsa
// references nsb's depends object: nsb's operator sees it counted, not
// named, in GET and in the 409 of a delete. The audit log is no way
// round: nsa's operator reads only nsa's entries.
func TestTenantViewsNameOnlyTheirNamespace(t *testing.T) {
	s := startTenants(t)
	ofA := s.subscribeAs(tokenOpA, "", "")
	// Both on agent-1 (rack r1), so that one agent holds the two teams'
	// instances; stateful, so that a drain keeps them there.
	onAgent1 := func(m map[string]any) {
		m["stateful"] = true
		m["constraint"] = map[string]any{"intersectionItem": []any{map[string]any{"unionData": []any{
			map[string]any{"name": "rack", "operate": "CLUSTER", "type": 3, "text": map[string]any{"value": "r1"}}}}}}
	}
	s.createAs(tokenOpB, "/v1/apps", s.oneInstance(tenantB, "hidden", "", onAgent1))
	s.createAs(tokenOpA, "/v1/apps", s.oneInstance(tenantA, "visible", "", onAgent1))
	hidden := s.running(tenantB, "hidden", 1)[0]
	visible := s.running(tenantA, "visible", 1)[0]
	if hidden.Host != "agent-1" || visible.Host != "agent-1" {
		t.Fatalf("nsb's instance is on %s, nsa's on %s; want both on agent-1", hidden.Host, visible.Host)
	}
	if code, body := s.callAs(tokenAdmin, "POST", "/v1/agents/agent-1/drain", nil); code != http.StatusOK {
		t.Fatalf("drain agent-1: %d %s", code, body)
	}
	s.eventually("agent-1 drained, both instances kept", func() (bool, string) {
		_, body := s.callAs(tokenViewer, "GET", "/v1/agents/agent-1", nil)
		return bytes.Contains(body, []byte(`"state": "drained"`)) && bytes.Contains(body, []byte(`"nsb/hidden/0"`)), string(body)
	})
	// What names nsb's instance.
	nsbNames := []string{hidden.TaskGroupID, "nsb/hidden", "nsb_hidden"}
	leaks := func(what string, data []byte) {
		t.Helper()
		for _, name := range nsbNames {
			if bytes.Contains(data, []byte(name)) {
				t.Errorf("%s names nsb's instance (%s): %s", what, name, tail(data, 800))
			}
		}
	}
	_, viewed := s.callAs(tokenViewer, "GET", "/v1/agents/agent-1", nil)
	if !bytes.Contains(viewed, []byte(hidden.TaskGroupID)) {
		t.Fatalf("the viewer does not see nsb's instance on agent-1: %s", viewed)
	}

	type agentView struct {
		Hostname  string
		Used      struct{ CPUs float64 }
		Instances []struct{ App string }
		Others    int
		Drain     *struct {
			Remaining int
			Kept      []string
		}
	}
	for _, path := range []string{"/v1/agents", "/v1/agents/agent-1", "/v1/agents/" + hidden.Agent} {
		code, body := s.callAs(tokenOpA, "GET", path, nil)
		if code != http.StatusOK {
			t.Fatalf("GET %s as nsa's operator: %d %s", path, code, body)
		}
		leaks("GET "+path+" as nsa's operator", body)
		var one agentView
		if path == "/v1/agents" {
			var list struct{ Agents []agentView }
			_ = json.Unmarshal(body, &list)
			for _, a := range list.Agents {
				if a.Hostname == "agent-1" {
					one = a
				}
			}
		} else {
			_ = json.Unmarshal(body, &one)
		}
		if one.Others != 1 || len(one.Instances) != 1 || one.Instances[0].App != "nsa/visible" || one.Used.CPUs < 0.4 ||
			one.Drain == nil || strings.Join(one.Drain.Kept, ",") != "nsa/visible/0" {
			t.Errorf("GET %s as nsa's operator: agent-1 %+v; want nsa's instance named and nsb's counted (others 1, both cpus used), not named", path, one)
		}
	}
	for _, args := range [][]string{{"get", "agents"}, {"get", "agents", "-o", "json"}, {"describe", "agent", "agent-1"}} {
		out := s.ctlAs(tokenOpA, "nsa's operator", args...)
		leaks("bcsctl "+strings.Join(args, " ")+" as nsa's operator", out)
		if args[0] == "describe" && !bytes.Contains(out, []byte("1 more of namespaces you may not read")) {
			t.Errorf("bcsctl describe agent as nsa's operator does not count nsb's instance: %s", out)
		}
	}

	// nsa references nsb's depends object; nsb's operator asks who.
	s.createAs(tokenOpB, "/v1/depends", s.manifest("depends.json", func(m map[string]any) {
		m["metadata"].(map[string]any)["namespace"] = tenantB
	}))
	s.createAs(tokenOpA, "/v1/apps", s.oneInstance(tenantA, "user-of-b", "", func(m map[string]any) {
		m["spec"].(map[string]any)["instance"] = 0
		spec := m["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
		spec["depends"] = []any{map[string]any{"name": "logagent", "namespace": tenantB}}
	}))
	code, body := s.callAs(tokenOpB, "GET", "/v1/depends/nsb/logagent", nil)
	var dep struct {
		Status struct {
			ReferencedBy       []string `json:"referencedBy"`
			ReferencedByOthers int      `json:"referencedByOthers"`
		} `json:"status"`
	}
	if err := json.Unmarshal(body, &dep); code != http.StatusOK || err != nil || len(dep.Status.ReferencedBy) != 0 || dep.Status.ReferencedByOthers != 1 {
		t.Errorf("nsb's operator reads its depends object: %d %s; want nsa's application counted, not named", code, body)
	}
	code, body = s.callAs(tokenOpB, "DELETE", "/v1/depends/nsb/logagent", nil)
	if code != http.StatusConflict || bytes.Contains(body, []byte("nsa/user-of-b")) || !bytes.Contains(body, []byte("1 application(s) of namespaces you may not read")) {
		t.Errorf("nsb's operator deleting its referenced depends object: %d %s; want a 409 counting nsa's application, not naming it", code, body)
	}

	// The audit log: nsa's operator reads nsa's entries, none of nsb's.
	if code, body := s.callAs(tokenOpA, "GET", "/v1/audit", nil); code != http.StatusForbidden {
		t.Errorf("GET /v1/audit as nsa's operator: %d %s, want 403", code, body)
	}
	code, body = s.callAs(tokenOpA, "GET", "/v1/audit?namespace="+tenantA, nil)
	if code != http.StatusOK || !bytes.Contains(body, []byte(`"namespace": "nsa"`)) || bytes.Contains(body, []byte(`"namespace": "nsb"`)) || bytes.Contains(body, []byte("opb")) {
		t.Errorf("GET /v1/audit?namespace=nsa as nsa's operator: %d %s; want nsa's entries only", code, tail(body, 800))
	}
	if code, body := s.callAs(tokenOpA, "GET", "/v1/audit?namespace="+tenantB, nil); code != http.StatusForbidden {
		t.Errorf("GET /v1/audit?namespace=nsb as nsa's operator: %d %s, want 403", code, body)
	}

	// The stream nsa's operator followed all along: agent events came
	// (the drain), none names nsb's instance.
	marker := s.oneInstance(tenantA, "marker", "", func(m map[string]any) { m["spec"].(map[string]any)["instance"] = 0 })
	s.createAs(tokenOpA, "/v1/apps", marker)
	seen := ofA.until("nsa's marker", func(c change) bool { return c.Type == "app" && c.Name == "marker" })
	agentEvents := 0
	for _, c := range seen {
		data, _ := json.Marshal(c)
		leaks("nsa's operator's event "+c.Type+" "+c.Name, data)
		if c.Type == "agent" || c.Type == "agentsettings" {
			agentEvents++
		}
	}
	if agentEvents == 0 {
		t.Errorf("nsa's operator got no agent event in %d events: the drain should make one", len(seen))
	}
	t.Logf("nsa's operator followed %d events up to its marker, %d of them of agents", len(seen), agentEvents)
}

// nsb's hook template calls a server that wants an API key in a header
// (its admission policy allows the server). The viewer and nsa's
// operator never read the key — in GET and lists of the template and of
// the runs that copied it, bcsctl, the event stream — nor does etcd hold
// it in clear; the hook runner still sends it (the run measures). The
// template sent back as GET showed it keeps the key (a new run still
// measures); sent with the call moved to another host, it is a 400
// naming the header and that host sees no request.
func TestTenantHookHeadersStaySecret(t *testing.T) {
	const apiKey = "hook-api-key-5e1f07"
	var mu sync.Mutex
	var refusedCalls int
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") != apiKey {
			mu.Lock()
			refusedCalls++
			mu.Unlock()
			http.Error(w, "no key", http.StatusUnauthorized)
			return
		}
		fmt.Fprint(w, `{"age":12}`)
	}))
	defer target.Close()
	var collected []string
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		collected = append(collected, r.Method+" "+r.URL.Path+" "+r.Header.Get("X-Api-Key"))
		mu.Unlock()
		fmt.Fprint(w, `{"age":12}`)
	}))
	defer collector.Close()
	etcd, endpoints := startEtcd(t)
	hosts := []string{strings.TrimPrefix(target.URL, "http://"), strings.TrimPrefix(collector.URL, "http://")}
	policy := admissionPolicy(t, map[string]any{"default": map[string]any{"users": []string{"*"}},
		"namespaces": map[string]any{tenantB: map[string]any{"users": []string{"*"}, "egress": hosts}}})
	s := startTenants(t, policy, "--etcd-endpoints", endpoints)
	viewerEvents := s.subscribeAs(tokenViewer, "?namespace="+tenantB, "")
	ofA := s.subscribeAs(tokenOpA, "", "")

	template := map[string]any{"apiVersion": "v4", "kind": "hooktemplate", "metadata": map[string]any{"name": "aged", "namespace": tenantB},
		"spec": map[string]any{"metrics": []any{map[string]any{"name": "age", "successCondition": "asInt(result) < 30", "consecutiveErrorLimit": 0,
			"provider": map[string]any{"web": map[string]any{"url": target.URL + "/age", "jsonPath": "{$.age}",
				"headers": []any{map[string]any{"key": "X-Api-Key", "value": apiKey}}}}}}}}
	s.createAs(tokenOpB, "/v1/hooktemplates", template)
	run := func(name string) {
		s.createAs(tokenOpB, "/v1/hookruns", map[string]any{"kind": "hookrun", "metadata": map[string]any{"name": name, "namespace": tenantB},
			"spec": map[string]any{"templateName": "aged"}})
		var r egressRun
		s.eventually("hook run "+name+" ended", func() (bool, string) {
			code, body := s.callAs(tokenOpB, "GET", "/v1/hookruns/nsb/"+name, nil)
			r = egressRun{}
			_ = json.Unmarshal(body, &r)
			return code == 200 && (r.Status.Phase == "Successful" || r.Status.Phase == "Failed" || r.Status.Phase == "Error"), string(body)
		})
		if r.Status.Phase != "Successful" || r.Status.MetricResults[0].Measurements[0].Value != "12" {
			t.Errorf("hook run %s: %s %q, want Successful measuring 12: the runner did not authenticate", name, r.Status.Phase, r.Status.Message)
		}
	}
	run("first")

	leaks := func(what string, data []byte) {
		t.Helper()
		if bytes.Contains(data, []byte(apiKey)) {
			t.Errorf("%s shows nsb's hook header: %s", what, tail(data, 600))
		}
	}
	var shown []byte
	for _, path := range []string{"/v1/hooktemplates/nsb/aged", "/v1/hooktemplates?namespace=nsb", "/v1/hooktemplates", "/v1/hookruns/nsb/first", "/v1/hookruns?namespace=nsb"} {
		code, body := s.callAs(tokenViewer, "GET", path, nil)
		if code != http.StatusOK {
			t.Fatalf("GET %s as the viewer: %d %s", path, code, body)
		}
		leaks("GET "+path+" as the viewer", body)
		if !bytes.Contains(bytes.Join(bytes.Fields(body), nil), []byte(`{"key":"X-Api-Key","value":"***"}`)) {
			t.Errorf("GET %s as the viewer shows no redacted header: %s", path, tail(body, 600))
		}
		if path == "/v1/hooktemplates/nsb/aged" {
			shown = body
		}
		if code, body := s.callAs(tokenOpA, "GET", path, nil); code != http.StatusForbidden {
			t.Errorf("GET %s as nsa's operator: %d %s, want 403", path, code, body)
		}
	}
	for _, args := range [][]string{{"get", "hooktemplate", "aged", "-n", tenantB, "-o", "json"}, {"get", "hookrun", "first", "-n", tenantB, "-o", "yaml"},
		{"describe", "hookrun", "first", "-n", tenantB}, {"events", "-A"}} {
		out := s.ctlAs(tokenViewer, "the viewer", args...)
		leaks("bcsctl "+strings.Join(args, " ")+" as the viewer", out)
	}

	// Sent back as GET showed it: kept, and a new run still measures.
	var back struct {
		Spec map[string]any `json:"spec"`
	}
	if err := json.Unmarshal(shown, &back); err != nil {
		t.Fatal(err)
	}
	again, _ := json.Marshal(back.Spec)
	if code, body := s.callAs(tokenOpB, "PUT", "/v1/hooktemplates/nsb/aged", again); code != http.StatusOK {
		t.Fatalf("PUT of the shown template: %d %s", code, body)
	}
	run("again")
	for _, c := range viewerEvents.until("the second run's end", func(c change) bool {
		return c.Type == "hookrun" && c.Name == "again" && bytes.Contains(c.Object, []byte(`"Successful"`))
	}) {
		data, _ := json.Marshal(c)
		leaks("the viewer's event "+c.Type+" "+c.Name, data)
	}

	// Moved to another host with "***": refused, nothing sent there.
	web := back.Spec["spec"].(map[string]any)["metrics"].([]any)[0].(map[string]any)["provider"].(map[string]any)["web"].(map[string]any)
	web["url"] = collector.URL + "/age"
	moved, _ := json.Marshal(back.Spec)
	code, body := s.callAs(tokenOpB, "PUT", "/v1/hooktemplates/nsb/aged", moved)
	refused(t, `"***" with the hook call on another host`, code, body,
		`spec.metrics[0].provider.web.headers[0].value: "***" keeps the stored credential only where it was sent before: `+
			`spec.metrics[0].provider.web.url's scheme, host and port, or spec.metrics[0].provider.web.headers[0].key changed`)
	if code == http.StatusOK {
		run("moved")
	}

	stored := etcd.raw(t, "/bcs/")
	sealed := 0
	for key, value := range stored {
		leaks("etcd "+key, value)
		if bytes.Contains(value, []byte(`{"key":"X-Api-Key","value":"bcs-sealed:`)) {
			sealed++
		}
	}
	if sealed < 3 { // the template and the two runs that copied it
		t.Errorf("%d records hold the sealed header, want the template's and each run's", sealed)
	}
	for _, c := range ofA.drain() {
		if c.Namespace == tenantB {
			t.Errorf("nsa's operator got an event of nsb: %s %s", c.Type, c.Name)
		}
		data, _ := json.Marshal(c)
		leaks("nsa's operator's event", data)
	}
	if data, _ := os.ReadFile(filepath.Join(s.dir, "bcs-scheduler.log")); bytes.Contains(data, []byte(apiKey)) {
		t.Error("bcs-scheduler's log holds nsb's hook header")
	}
	mu.Lock()
	defer mu.Unlock()
	for _, request := range collected {
		t.Errorf("the attack worked: the other host got %q", request)
	}
	if refusedCalls > 0 {
		t.Errorf("the target refused %d calls without the key", refusedCalls)
	}
}

// A health check may name any port, as the original's did (its reference
// process checks port 8080, which it does not declare), but never reaches
// the control plane. nsa's operator points checks at the agent's own API
// (its port, and Mesos's 5051), at the master and, from a container, at
// the agent: each manifest is taken, and each check fails without
// connecting, its instance naming the rule. A check of an undeclared port
// where something of the tenant's listens, and one by port name, pass.
func TestTenantChecksReachOnlyTheirTask(t *testing.T) {
	s := startTenants(t)
	var agent struct{ Endpoint string }
	s.eventually("agent-1 offered", func() (bool, string) {
		_, body := s.call("GET", "/v1/agents/agent-1", nil)
		return json.Unmarshal(body, &agent) == nil && agent.Endpoint != "", string(body)
	})
	_, agentPortText, _ := strings.Cut(agent.Endpoint, ":")
	agentPort, _ := strconv.Atoi(agentPortText)
	masterAddr := strings.TrimPrefix(strings.TrimPrefix(s.master, "http://"), "https://")
	_, masterPortText, _ := strings.Cut(masterAddr, ":")
	masterPort, _ := strconv.Atoi(masterPortText)
	// The targets are real: the agent and the master answer on this
	// machine's address, where the checks probe an instance.
	for _, url := range []string{"http://" + agent.Endpoint + "/files/debug", s.master + "/master/state"} {
		if code, _ := get(url); code != http.StatusOK {
			t.Fatalf("GET %s: %d, want the control plane answering", url, code)
		}
	}
	// A server of the tenant's on a port no manifest declares, as a game
	// server that listens on a fixed port.
	undeclared := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	undeclared.Listener = ln
	undeclared.Start()
	t.Cleanup(undeclared.Close)
	undeclaredPort := ln.Addr().(*net.TCPAddr).Port

	withChecks := func(name string, checks ...map[string]any) []byte {
		return s.oneInstance(tenantA, name, "", func(m map[string]any) {
			proc := m["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["processes"].([]any)[0].(map[string]any)
			for _, c := range checks {
				c["intervalSeconds"], c["timeoutSeconds"], c["gracePeriodSeconds"], c["delaySeconds"] = 2, 1, 1, 1
				if c["type"] == "HTTP" {
					proc["healthChecks"] = []any{c}
				} else {
					proc["healthChecks"] = append(proc["healthChecks"].([]any), c)
				}
			}
		})
	}
	remoteReached := func(i remoteInstance) bool { return i.RemoteHealthy != nil && *i.RemoteHealthy }
	ownReached := func(i remoteInstance) bool { return i.Healthy != nil && *i.Healthy }
	agentRule := func(port int) string {
		return fmt.Sprintf("egress to 127.0.0.1:%d refused: a Mesos agent's API (egress policy of namespace %s)", port, tenantA)
	}
	masterRule := fmt.Sprintf("egress to 127.0.0.1:%d refused: a Mesos master (egress policy of namespace %s)", masterPort, tenantA)
	attacks := []struct {
		name, want string
		manifest   []byte
		// reached says whether the check got its answer: the attack
		// worked.
		reached func(remoteInstance) bool
	}{
		{"REMOTE_HTTP at the agent's API", agentRule(agentPort),
			withChecks("agent-http", map[string]any{"type": "REMOTE_HTTP", "http": map[string]any{"port": agentPort, "path": "/files/debug"}}),
			remoteReached},
		{"REMOTE_HTTP at Mesos's agent port", agentRule(5051),
			withChecks("mesos-http", map[string]any{"type": "REMOTE_HTTP", "http": map[string]any{"port": 5051, "path": "/state"}}),
			remoteReached},
		{"REMOTE_TCP at the master", masterRule,
			withChecks("master-tcp", map[string]any{"type": "REMOTE_TCP", "tcp": map[string]any{"port": masterPort}}),
			remoteReached},
		{"a process's HTTP check at the master", masterRule,
			withChecks("master-http", map[string]any{"type": "HTTP", "http": map[string]any{"port": masterPort, "path": "/master/state"}}),
			ownReached},
		{"a container's REMOTE_HTTP at the agent's API", agentRule(agentPort),
			containerApp(tenantA, "container-http", "exec sleep 3600", func(spec map[string]any) {
				spec["containers"].([]any)[0].(map[string]any)["healthChecks"] = []any{map[string]any{"type": "REMOTE_HTTP",
					"intervalSeconds": 2, "timeoutSeconds": 1, "gracePeriodSeconds": 1, "delaySeconds": 1,
					"http": map[string]any{"port": agentPort, "path": "/files/debug"}}}
			}),
			remoteReached},
	}
	for _, a := range attacks {
		s.createAs(tokenOpA, "/v1/apps", a.manifest)
	}
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			var v struct{ Metadata struct{ Name string } }
			_ = json.Unmarshal(a.manifest, &v)
			// The refusal shows in the instance (remoteMessage, or the
			// task's message once its own check failed it).
			var body []byte
			deadline := time.Now().Add(60 * time.Second)
			for time.Now().Before(deadline) {
				_, body = s.call("GET", "/v1/apps/"+tenantA+"/"+v.Metadata.Name, nil)
				if inst := s.remoteInstance(tenantA, v.Metadata.Name); a.reached(inst) {
					t.Fatalf("the check reached the control plane: healthy %v, remote healthy %v", ptr(inst.Healthy), ptr(inst.RemoteHealthy))
				}
				if bytes.Contains(body, []byte(a.want)) {
					t.Logf("%s: %q", v.Metadata.Name, a.want)
					return
				}
				time.Sleep(time.Second)
			}
			t.Errorf("%s never said %q: %s", v.Metadata.Name, a.want, body)
		})
	}
	// A port no manifest declares, where the tenant listens, and the
	// task's own port by name: probed and healthy.
	s.createAs(tokenOpA, "/v1/apps", withChecks("undeclared-port", map[string]any{"type": "REMOTE_TCP", "tcp": map[string]any{"port": undeclaredPort}}))
	s.createAs(tokenOpA, "/v1/apps", withChecks("own-http", map[string]any{"type": "HTTP", "http": map[string]any{"port": undeclaredPort, "path": "/"}}))
	own := withChecks("own-port", map[string]any{"type": "REMOTE_TCP", "tcp": map[string]any{"portName": "http"}})
	s.createAs(tokenOpA, "/v1/apps", own)
	s.remoteHealthy(tenantA, "undeclared-port", 1)
	s.remoteHealthy(tenantA, "own-port", 1)
	s.eventually("own-http healthy by its HTTP check of the undeclared port", func() (bool, string) {
		inst := s.remoteInstance(tenantA, "own-http")
		return ownReached(inst), ptr(inst.Healthy)
	})
}

// remoteInstance is what the checks test reads of an instance.
type remoteInstance struct {
	Healthy       *bool  `json:"healthy"`
	RemoteHealthy *bool  `json:"remoteHealthy"`
	RemoteMessage string `json:"remoteMessage"`
}

// remoteInstance reads the one instance of ns/name as the admin.
func (s *tenantSystem) remoteInstance(ns, name string) remoteInstance {
	_, body := s.call("GET", "/v1/apps/"+ns+"/"+name, nil)
	var v struct {
		Status struct {
			Instances []remoteInstance `json:"instances"`
		} `json:"status"`
	}
	_ = json.Unmarshal(body, &v)
	if len(v.Status.Instances) == 0 {
		return remoteInstance{}
	}
	return v.Status.Instances[0]
}

func ptr(b *bool) string {
	if b == nil {
		return "unknown"
	}
	return strconv.FormatBool(*b)
}
