package e2e_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// The API's holes between two teams, attacked as nsa's operator (or the
// read-only viewer) through the real bcs-scheduler, executors, dockerd
// and dev cluster. Each attack is refused with an error naming the rule
// or the field, and nothing of nsb leaks; where a refusal does not come,
// the test says what the attack got.

// containerApp is an application of one busybox container running script
// in namespace ns, with edit changing its pod spec.
func containerApp(ns, name, script string, edit func(spec map[string]any)) []byte {
	spec := map[string]any{
		"networkMode": "BRIDGE", "networkType": "cnm",
		"containers": []any{map[string]any{
			"image": "bcs-test/busybox:latest", "imagePullPolicy": "IfNotPresent",
			"command": "/bin/sh", "args": []string{"-c", script},
			"resources": map[string]any{"limits": map[string]any{"cpu": "0.1", "memory": "32"}},
		}},
	}
	if edit != nil {
		edit(spec)
	}
	m := map[string]any{"apiVersion": "v4", "kind": "application",
		"metadata":      map[string]any{"name": name, "namespace": ns},
		"restartPolicy": map[string]any{"policy": "Never"}, "killPolicy": map[string]any{"gracePeriod": 1},
		"spec": map[string]any{"instance": 1, "template": map[string]any{"spec": spec}}}
	data, _ := json.Marshal(m)
	return data
}

// runningAs waits, as the caller of token, for the one instance of
// ns/name to run and returns its task group ID.
func (s *tenantSystem) runningAs(token, ns, name string) string {
	s.t.Helper()
	id := ""
	s.eventually(ns+"/"+name+" running", func() (bool, string) {
		code, body := s.callAs(token, "GET", "/v1/apps/"+ns+"/"+name, nil)
		var v appView
		_ = json.Unmarshal(body, &v)
		if code != http.StatusOK || len(v.Status.Instances) != 1 || v.Status.Instances[0].State != "TASK_RUNNING" {
			return false, fmt.Sprintf("%d %s", code, body)
		}
		id = v.Status.Instances[0].TaskGroupID
		return true, ""
	})
	return id
}

// refused checks that an answer is a 400 one of whose details holds
// want.
func refused(t *testing.T, what string, code int, body []byte, want string) {
	t.Helper()
	var answer struct {
		Error struct {
			Details []string `json:"details"`
		} `json:"error"`
	}
	_ = json.Unmarshal(body, &answer)
	for _, d := range answer.Error.Details {
		if strings.Contains(d, want) {
			t.Logf("%s: 400 %q", what, d)
			return
		}
	}
	t.Errorf("%s: %d %s, want a 400 naming %q", what, code, body, want)
}

// Items 3 and 5: nsa's operator names nsb's container in a net=container:
// parameter (its name is predictable: bcs-<task group ID>-container-0),
// and runs a privileged exec, an exec as root and a
// privileged command in its own container. Each is a 400 naming the
// field; nsa's containers never share nsb's network namespace, where nsb
// serves a page on its loopback only.
func TestTenantDockerParametersAndExec(t *testing.T) {
	s := startTenants(t)
	const page = "nsb-loopback-only-page-4d1f"
	victim := containerApp(tenantB, "victim", "mkdir -p /tmp/www && echo "+page+" >/tmp/www/index.html && exec httpd -f -p 127.0.0.1:8080 -h /tmp/www", nil)
	if code, body := s.callAs(tokenOpB, "POST", "/v1/apps", victim); code != http.StatusCreated {
		t.Fatalf("nsb's victim: %d %s", code, body)
	}
	victimID := s.runningAs(tokenOpB, tenantB, "victim")
	// A pod of one container has no network container: the container
	// holds the pod's network namespace, under a name anyone can tell.
	network := strings.TrimPrefix(docker(t, "inspect", "-f", "{{.Name}}", taskContainer(t, victimID+"_0")), "/")
	if !regexp.MustCompile(`^bcs-[0-9a-f]{8}-` + regexp.QuoteMeta(victimID) + `-container-0$`).MatchString(network) {
		t.Fatalf("nsb's container is %q, want the predictable bcs-<framework digest>-%s-container-0", network, victimID)
	}

	joiner := containerApp(tenantA, "joiner", "exec sleep 3600", func(spec map[string]any) {
		spec["networkMode"] = "USER"
		spec["containers"].([]any)[0].(map[string]any)["parameters"] = []any{map[string]any{"key": "net", "value": "container:" + network}}
	})
	code, body := s.callAs(tokenOpA, "POST", "/v1/apps", joiner)
	refused(t, "net=container: of nsb's pod", code, body,
		`spec.template.spec.containers[0].parameters[0].value: "container:`+network+`" joins the network namespace of container`)
	if code == http.StatusCreated {
		joinerID := s.runningAs(tokenOpA, tenantA, "joiner")
		r := s.message(joinerID, "exec", 200, `{"command":["wget","-qO-","http://127.0.0.1:8080/"]}`)
		t.Errorf("the attack worked: nsa's container is in network namespace %s (nsb's: %s) and read nsb's loopback page: %q",
			netns(t, taskContainer(t, joinerID+"_0")), netns(t, network), r.Output)
	}

	// nsa's own container: exec privileged or as root, a privileged command.
	if code, body := s.callAs(tokenOpA, "POST", "/v1/apps", containerApp(tenantA, "own", "exec sleep 3600", nil)); code != http.StatusCreated {
		t.Fatalf("nsa's own app: %d %s", code, body)
	}
	ownID := s.runningAs(tokenOpA, tenantA, "own")
	for _, tc := range []struct{ name, path, body, want string }{
		{"privileged exec", "/v1/taskgroups/" + ownID + "/exec", `{"command":["grep","CapEff","/proc/self/status"],"privileged":true}`,
			`privileged: privileged commands are not allowed in namespace "nsa" (admission policy)`},
		{"exec as root", "/v1/taskgroups/" + ownID + "/exec", `{"command":["id","-u"],"user":"root"}`,
			`user: running as root is not allowed in namespace "nsa" (admission policy)`},
		{"privileged command", "/v1/commands", `{"apiVersion":"v4","kind":"command","spec":{"commandTargetRef":{"kind":"Application","name":"own","namespace":"nsa"},` +
			`"command":["grep","CapEff","/proc/self/status"],"privileged":true}}`,
			`spec.privileged: privileged commands are not allowed in namespace "nsa" (admission policy)`},
	} {
		code, body := s.callAs(tokenOpA, "POST", tc.path, []byte(tc.body))
		refused(t, tc.name, code, body, tc.want)
		if code == http.StatusOK {
			t.Errorf("the attack worked: %s ran: %s", tc.name, body)
		}
	}
	// Unprivileged, as its own user, it runs.
	if r := s.messageAs(tokenOpA, ownID, `{"command":["grep","CapEff","/proc/self/status"]}`); !r.OK || strings.Contains(r.Output, "000001ffffffffff") {
		t.Errorf("an ordinary exec: %+v", r)
	}
}

// messageAs sends an exec as the caller of token and wants a 200.
func (s *tenantSystem) messageAs(token, taskGroupID, body string) messageReply {
	s.t.Helper()
	code, data := s.callAs(token, "POST", "/v1/taskgroups/"+taskGroupID+"/exec", []byte(body))
	var r messageReply
	if code != http.StatusOK || json.Unmarshal(data, &r) != nil {
		s.t.Fatalf("exec %s: %d %s", body, code, data)
	}
	return r
}

// Item 6: nsa's operator follows /v1/events while an instance of nsb
// fails: it sees none of nsb's events (the notification included), as GET
// of that notification is a 403 to it; nsb's operator sees it, in nsb.
func TestTenantEventsStayInTheirNamespace(t *testing.T) {
	s := startTenants(t)
	ofA, ofB := s.subscribeAs(tokenOpA, "", ""), s.subscribeAs(tokenOpB, "", "")
	crasher := s.manifest("process.json", func(m map[string]any) {
		m["metadata"] = map[string]any{"name": "crasher", "namespace": tenantB}
		m["spec"].(map[string]any)["instance"] = 1
		m["restartPolicy"] = map[string]any{"policy": "Never"}
		delete(m, "constraint")
		proc := m["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["processes"].([]any)[0].(map[string]any)
		proc["startCmd"] = "echo nsb-crasher-secret-exit; exit 3"
		delete(proc, "healthChecks")
	})
	if code, body := s.callAs(tokenOpB, "POST", "/v1/apps", crasher); code != http.StatusCreated {
		t.Fatalf("nsb's crasher: %d %s", code, body)
	}
	var notification change
	ofB.until("nsb's notification", func(c change) bool {
		notification = c
		return c.Type == "notification" && c.Action == "put"
	})
	if notification.Namespace != tenantB || !strings.Contains(string(notification.Object), "nsb_crasher_0_") {
		t.Errorf("nsb's operator sees the notification %s in namespace %q: %s; want it in nsb", notification.Name, notification.Namespace, notification.Object)
	}
	if code, body := s.callAs(tokenOpA, "GET", "/v1/notifications/"+notification.Name, nil); code != http.StatusForbidden {
		t.Errorf("GET of nsb's notification as nsa's operator: %d %s, want 403", code, body)
	}

	marker := s.manifest("process.json", func(m map[string]any) {
		m["metadata"] = map[string]any{"name": "marker", "namespace": tenantA}
		m["spec"].(map[string]any)["instance"] = 0
	})
	if code, body := s.callAs(tokenOpA, "POST", "/v1/apps", marker); code != http.StatusCreated {
		t.Fatalf("nsa's marker: %d %s", code, body)
	}
	seen := ofA.until("nsa's marker", func(c change) bool { return c.Type == "app" && c.Name == "marker" })
	leaked := 0
	for _, c := range seen {
		if c.Namespace == tenantB || strings.Contains(c.Name, tenantB) || strings.Contains(string(c.Object), `"nsb`) {
			leaked++
			t.Errorf("nsa's operator got an event of nsb: %s %s %s/%s %s", c.Type, c.Action, c.Namespace, c.Name, c.Object)
		}
	}
	t.Logf("nsa's operator read %d events up to its marker, %d of them nsb's; nsb's operator got nsb's notification %s", len(seen), leaked, notification.Name)
}

// Items 7 and 8. nsb's REMOTE_HTTP check sends an Authorization header
// (basic auth that the instance's httpd requires): the viewer never sees
// its value — not in GET, lists, versions, the event stream or bcsctl —
// nor does a dry run show it, and etcd holds it sealed; the scheduler
// still probes with it (the instance is remote-healthy, and so is one
// launched after a PUT of the manifest as GET showed it). A PUT that keeps
// a stored password ("***") for a package on another host, or a remote
// configmap item elsewhere, is a 400 naming the password, and the other
// host sees no request.
func TestTenantCredentialsNeverShownNorFollowed(t *testing.T) {
	etcd, endpoints := startEtcd(t)
	s := startTenants(t, "--etcd-endpoints", endpoints)
	const password = "probe-pw-9e27c1"
	header := "Basic " + base64.StdEncoding.EncodeToString([]byte("probe:"+password))
	// The instance's httpd wants the password; its manifest holds only
	// its MD5 crypt.
	crypt := docker(t, "run", "--rm", "bcs-test/busybox:latest", "httpd", "-m", password)
	checked := containerApp(tenantB, "checked",
		"mkdir -p /tmp/www && echo ok >/tmp/www/ready && echo '/:probe:"+crypt+"' >/tmp/httpd.conf && exec httpd -f -p 8080 -h /tmp/www -c /tmp/httpd.conf",
		func(spec map[string]any) {
			c := spec["containers"].([]any)[0].(map[string]any)
			c["ports"] = []any{map[string]any{"name": "http", "containerPort": 8080, "hostPort": 0, "protocol": "HTTP"}}
			c["healthChecks"] = []any{map[string]any{"type": "REMOTE_HTTP", "delaySeconds": 1, "intervalSeconds": 2, "timeoutSeconds": 1,
				"consecutiveFailures": 0, "gracePeriodSeconds": 1,
				"http": map[string]any{"portName": "http", "path": "/ready", "headers": map[string]string{"Authorization": header}}}}
		})
	viewerEvents := s.subscribeAs(tokenViewer, "?namespace="+tenantB, "")
	if code, body := s.callAs(tokenOpB, "POST", "/v1/apps", checked); code != http.StatusCreated {
		t.Fatalf("nsb's checked app: %d %s", code, body)
	}
	s.remoteHealthy(tenantB, "checked", 1)

	secretParts := []string{password, base64.StdEncoding.EncodeToString([]byte("probe:" + password))}
	leaks := func(what string, data []byte) {
		t.Helper()
		for _, part := range secretParts {
			if strings.Contains(string(data), part) {
				t.Errorf("%s shows nsb's header (%q): %s", what, part, tail(data, 600))
			}
		}
	}
	var shownSpec json.RawMessage
	for _, path := range []string{"/v1/apps/nsb/checked", "/v1/apps", "/v1/apps?namespace=nsb", "/v1/apps/nsb/checked/versions", "/v1/apps/nsb/checked/instances"} {
		code, body := s.callAs(tokenViewer, "GET", path, nil)
		if code != http.StatusOK {
			t.Fatalf("GET %s as the viewer: %d %s", path, code, body)
		}
		leaks("GET "+path+" as the viewer", body)
		if path == "/v1/apps/nsb/checked" {
			var v struct{ Spec json.RawMessage }
			_ = json.Unmarshal(body, &v)
			shownSpec = v.Spec
			if !strings.Contains(string(body), `"Authorization": "***"`) {
				t.Errorf("GET shows no redacted header: %s", body)
			}
		}
	}
	for _, c := range viewerEvents.until("the app's event", func(c change) bool { return c.Type == "app" && c.Name == "checked" }) {
		leaks("the viewer's event "+c.Type+" "+c.Name, c.Object)
	}
	for _, args := range [][]string{{"get", "app", "checked", "-n", tenantB, "-o", "json"}, {"describe", "app", "checked", "-n", tenantB},
		{"rollout", "history", "app", "checked", "-n", tenantB}, {"events", "-A"}} {
		out := s.ctlAs(tokenViewer, "the viewer", args...)
		leaks("bcsctl "+strings.Join(args, " ")+" as the viewer", out)
	}

	// Sent back as GET showed it, with one more instance: a dry run and the
	// PUT keep the header, and the new instance is probed with it.
	var back map[string]any
	if err := json.Unmarshal(shownSpec, &back); err != nil {
		t.Fatal(err)
	}
	back["spec"].(map[string]any)["instance"] = 2
	again, _ := json.Marshal(back)
	code, body := s.callAs(tokenOpB, "PUT", "/v1/apps/nsb/checked?dryRun=true", again)
	if code != http.StatusOK {
		t.Fatalf("dry run: %d %s", code, body)
	}
	leaks("the dry run", body)
	if code, body := s.callAs(tokenOpB, "PUT", "/v1/apps/nsb/checked", again); code != http.StatusOK {
		t.Fatalf("PUT of the shown manifest: %d %s", code, body)
	}
	s.remoteHealthy(tenantB, "checked", 2)

	stored := etcd.raw(t, "/bcs/")
	sealed := 0
	for key, value := range stored {
		leaks("etcd "+key, value)
		if strings.Contains(string(value), `"Authorization":"bcs-sealed:`) {
			sealed++
		}
	}
	if sealed == 0 {
		t.Errorf("no record holds the sealed header; keys %d", len(stored))
	}

	// Item 8: a kept password follows no changed address.
	var collected []string
	var mu sync.Mutex
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		collected = append(collected, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		http.NotFound(w, r)
	}))
	defer collector.Close()
	const pkgPassword = "pkg-pw-51a0e3"
	fetcher := s.manifest("process.json", func(m map[string]any) {
		m["metadata"] = map[string]any{"name": "fetcher", "namespace": tenantB}
		m["spec"].(map[string]any)["instance"] = 1
		uri := m["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["processes"].([]any)[0].(map[string]any)["uris"].([]any)[0].(map[string]any)
		uri["user"], uri["pwd"] = "nsb", pkgPassword
	})
	if code, body := s.callAs(tokenOpB, "POST", "/v1/apps", fetcher); code != http.StatusCreated {
		t.Fatalf("nsb's fetcher: %d %s", code, body)
	}
	s.runningAs(tokenOpB, tenantB, "fetcher")
	code, body = s.callAs(tokenOpB, "GET", "/v1/apps/nsb/fetcher", nil)
	var fetched struct{ Spec map[string]any }
	if code != http.StatusOK || json.Unmarshal(body, &fetched) != nil {
		t.Fatalf("GET fetcher: %d %s", code, body)
	}
	uri := fetched.Spec["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["processes"].([]any)[0].(map[string]any)["uris"].([]any)[0].(map[string]any)
	if uri["pwd"] != "***" {
		t.Fatalf("the shown package password is %v, want ***", uri["pwd"])
	}
	uri["value"] = collector.URL + "/gamesvr.tar.gz"
	moved, _ := json.Marshal(fetched.Spec)
	movedCode, body := s.callAs(tokenOpB, "PUT", "/v1/apps/nsb/fetcher", moved)
	refused(t, "*** with a package on another host", movedCode, body,
		`spec.template.spec.processes[0].uris[0].pwd: "***" keeps the stored credential only where it was sent before`)

	remote := func(content, pwd string) []byte {
		return []byte(fmt.Sprintf(`{"apiVersion":"v4","kind":"configmap","metadata":{"name":"remote","namespace":"nsb"},`+
			`"datas":{"conf":{"type":"http","content":%q,"RemoteUser":"nsb","remotePasswd":%q}}}`, content, pwd))
	}
	if code, body := s.callAs(tokenOpB, "POST", "/v1/configmaps", remote(s.api+"/files/gamesvr.tar.gz", "remote-pw-77b2")); code != http.StatusCreated {
		t.Fatalf("nsb's remote configmap: %d %s", code, body)
	}
	code, body = s.callAs(tokenOpB, "PUT", "/v1/configmaps/nsb/remote", remote(collector.URL+"/conf", "***"))
	refused(t, "*** with a remote item elsewhere", code, body,
		`datas["conf"].remotePasswd: "***" keeps the stored credential only where it was sent before`)

	if movedCode == http.StatusOK {
		s.eventually("the moved package fetched", func() (bool, string) {
			mu.Lock()
			defer mu.Unlock()
			return len(collected) > 0, ""
		})
	}
	mu.Lock()
	defer mu.Unlock()
	for _, request := range collected {
		t.Errorf("the attack worked: the other host got %q", request)
	}
}

// remoteHealthy waits for n instances of ns/name, each healthy by the
// scheduler's REMOTE checks.
func (s *tenantSystem) remoteHealthy(ns, name string, n int) {
	s.t.Helper()
	s.eventually(fmt.Sprintf("%d remote-healthy instances of %s/%s", n, ns, name), func() (bool, string) {
		_, body := s.call("GET", "/v1/apps/"+ns+"/"+name, nil)
		var v struct {
			Status struct {
				Instances []struct {
					RemoteHealthy *bool  `json:"remoteHealthy"`
					RemoteMessage string `json:"remoteMessage"`
				} `json:"instances"`
			} `json:"status"`
		}
		_ = json.Unmarshal(body, &v)
		healthy := 0
		for _, i := range v.Status.Instances {
			if i.RemoteHealthy != nil && *i.RemoteHealthy {
				healthy++
			}
		}
		return healthy == n, string(tail(body, 800))
	})
}

// raw reads every value under prefix as etcd holds it.
func (p *etcdProbe) raw(t *testing.T, prefix string) map[string][]byte {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: p.endpoints, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := c.Get(ctx, prefix, clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	values := map[string][]byte{}
	for _, kv := range resp.Kvs {
		values[string(kv.Key)] = kv.Value
	}
	return values
}

// Item 9. The read-only viewer posts a process to /v1/commands: a 400
// naming kind, audited (it was a panic: an empty reply, no audit entry).
// Then it holds 300 connections trickling request bodies a byte a
// second: each is answered 408 and closed within the API's 30 s, and
// every other caller is answered at once meanwhile.
func TestTenantAPIInput(t *testing.T) {
	s := startTenants(t)
	process := s.manifest("process.json", nil)
	code, body, err := s.attemptAs(http.DefaultClient, tokenViewer, "POST", "/v1/commands", process)
	if err != nil {
		t.Fatalf("the attack worked: POST /v1/commands with a process got no answer: %v", err)
	}
	refused(t, "a process to /v1/commands", code, body, `kind: want command here, got "process"`)
	code, body = s.call("GET", "/v1/audit?user=viewer", nil)
	var audit struct {
		Entries []struct {
			Route  string `json:"route"`
			Status int    `json:"status"`
			Code   string `json:"code"`
		} `json:"entries"`
	}
	if code != http.StatusOK || json.Unmarshal(body, &audit) != nil || len(audit.Entries) == 0 ||
		audit.Entries[0].Route != "POST /v1/commands" || audit.Entries[0].Status != 400 || audit.Entries[0].Code != "InvalidArgument" {
		t.Errorf("the viewer's audit log: %d %s, want its refused command", code, body)
	}

	const trickling = 300
	const limit = 30 * time.Second
	addr := strings.TrimPrefix(s.api, "http://")
	type outcome struct {
		status string
		after  time.Duration
		err    error
	}
	outcomes := make(chan outcome, trickling)
	var wg sync.WaitGroup
	start := time.Now()
	for range trickling {
		wg.Go(func() {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				outcomes <- outcome{err: err}
				return
			}
			defer conn.Close()
			fmt.Fprintf(conn, "POST /v1/apps HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{", addr, tokenViewer)
			go func() {
				for {
					time.Sleep(time.Second)
					if _, err := conn.Write([]byte(" ")); err != nil {
						return
					}
				}
			}()
			_ = conn.SetReadDeadline(time.Now().Add(2 * limit))
			reader := bufio.NewReader(conn)
			status, err := reader.ReadString('\n')
			_, _ = io.Copy(io.Discard, reader)
			outcomes <- outcome{strings.TrimSpace(status), time.Since(start), err}
		})
	}
	time.Sleep(3 * time.Second)
	for _, path := range []string{"/healthz", "/v1/apps?namespace=nsb"} {
		asked := time.Now()
		code, _, err := s.attemptAs(&http.Client{Timeout: 5 * time.Second}, tokenViewer, "GET", path, nil)
		if err != nil || code != http.StatusOK || time.Since(asked) > 2*time.Second {
			t.Errorf("GET %s while %d connections trickle: %d %v after %s", path, trickling, code, err, time.Since(asked))
		}
	}
	wg.Wait()
	close(outcomes)
	cut, latest := 0, time.Duration(0)
	for o := range outcomes {
		if o.status == "HTTP/1.1 408 Request Timeout" && o.after < limit+5*time.Second {
			cut++
		}
		latest = max(latest, o.after)
		if o.status != "HTTP/1.1 408 Request Timeout" {
			t.Errorf("a trickling connection: %q after %s (%v), want a 408 within %s", o.status, o.after.Round(time.Second), o.err, limit)
			break
		}
	}
	t.Logf("%d of %d trickling connections answered 408 and closed, the last after %s", cut, trickling, latest.Round(100*time.Millisecond))
	if cut != trickling {
		t.Errorf("%d of %d trickling connections cut within %s", cut, trickling, limit+5*time.Second)
	}
}
