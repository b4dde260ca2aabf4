package api_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/bcs-mesos/bcs-mesos/pkg/api"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest/manifesttest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// A package's download password is never shown — GET,
// list, versions answer "***" — and a manifest read back from the API
// and sent again keeps the stored password; "***" where none is stored is
// a 400 naming the field.
func TestPasswordsAreRedactedAndKept(t *testing.T) {
	e := newEnv(t)
	const password = "s3cret-download-pw"
	p := process("pkg", "ns-a", func(p *manifest.Process) {
		p.Spec.Template.Spec.Processes[0].URIs[0].User, p.Spec.Template.Spec.Processes[0].URIs[0].Pwd = "repo", password
	})
	created := createApp(t, e, p)
	shown := []string{string(created.Spec)}
	for _, path := range []string{"/v1/apps/ns-a/pkg", "/v1/apps", "/v1/apps/ns-a/pkg/versions"} {
		shown = append(shown, string(e.expect(t, http.StatusOK, "GET", path, nil, nil).body))
	}
	for i, body := range shown {
		if strings.Contains(body, password) || !strings.Contains(body, `"pwd":`) && !strings.Contains(body, `"pwd": `) {
			t.Errorf("answer %d shows the password or no redacted pwd field: %s", i, truncate([]byte(body)))
		}
	}

	// Sent back as GET shows it, with a change elsewhere: the password stays.
	var back map[string]any
	if err := json.Unmarshal(getApp(t, e, "ns-a", "pkg").Spec, &back); err != nil {
		t.Fatal(err)
	}
	back["spec"].(map[string]any)["instance"] = 2
	e.expect(t, http.StatusOK, "PUT", "/v1/apps/ns-a/pkg", back, nil)
	stored := storedSpec(t, e, "ns-a", "pkg")
	if !strings.Contains(stored, password) || !strings.Contains(stored, `"instance":2`) {
		t.Errorf("after a PUT of the shown manifest the stored one is %s; want the password kept and the change made", stored)
	}

	// "***" with nothing stored: a 400 naming the field, nothing created.
	other := process("pkg2", "ns-a", func(p *manifest.Process) { p.Spec.Template.Spec.Processes[0].URIs[0].Pwd = manifest.Redacted })
	got := errorOf(t, e.call(t, "POST", "/v1/apps", other), http.StatusBadRequest, "InvalidArgument")
	if len(got.Details) != 1 || !strings.Contains(got.Details[0], "uris[0].pwd") {
		t.Errorf("details %q, want one naming …uris[0].pwd", got.Details)
	}
	e.expect(t, http.StatusNotFound, "GET", "/v1/apps/ns-a/pkg2", nil, nil)
	if keys := e.keysHolding(t, password); len(keys) > 0 {
		t.Errorf("etcd holds the password in clear at %q", keys)
	}
}

// A remote configmap item's password likewise.
func TestConfigMapRemotePasswordIsRedactedAndKept(t *testing.T) {
	e := newEnv(t)
	const password = "remote-pw-123"
	cm := `{"apiVersion":"v4","kind":"configmap","metadata":{"name":"remote","namespace":"ns-a"},
		"datas":{"conf":{"type":"http","content":"http://repo.example.com/conf","RemoteUser":"u","remotePasswd":"` + password + `"}}}`
	created := e.expect(t, http.StatusCreated, "POST", "/v1/configmaps", cm, nil)
	got := e.expect(t, http.StatusOK, "GET", "/v1/configmaps/ns-a/remote", nil, nil)
	for _, body := range [][]byte{created.body, got.body} {
		if strings.Contains(string(body), password) || !strings.Contains(string(body), manifest.Redacted) {
			t.Errorf("shown: %s; want the password redacted", body)
		}
	}
	var v struct {
		Spec json.RawMessage `json:"spec"`
	}
	if err := json.Unmarshal(got.body, &v); err != nil {
		t.Fatal(err)
	}
	e.expect(t, http.StatusOK, "PUT", "/v1/configmaps/ns-a/remote", []byte(v.Spec), nil)
	o, err := e.reg.GetObject(t.Context(), manifest.KindConfigMap, "ns-a", "remote")
	if err != nil || !strings.Contains(string(o.Spec), password) {
		t.Errorf("stored after a PUT of the shown configmap: %s, %v; want the password kept", o.Spec, err)
	}
	if keys := e.keysHolding(t, password); len(keys) > 0 {
		t.Errorf("etcd holds the password in clear at %q", keys)
	}
}

// A container's image pull password likewise, and none of the three is
// in clear anywhere in etcd (the application, its versions).
func TestImagePullPasswordIsSealedAtRest(t *testing.T) {
	e := newEnv(t)
	const password = "pull-pw-456"
	app := application("pull", "ns-a")
	app.Spec.Template.Spec.Containers[0].ImagePullUser, app.Spec.Template.Spec.Containers[0].ImagePullPasswd = "puller", password
	created := createApp(t, e, app)
	if strings.Contains(string(created.Spec), password) {
		t.Errorf("shown: %s", created.Spec)
	}
	if stored := storedSpec(t, e, "ns-a", "pull"); !strings.Contains(stored, `"imagePullPasswd":"`+password+`"`) {
		t.Errorf("read back from the store: %s; want the password", stored)
	}
	if keys := e.keysHolding(t, password); len(keys) > 0 {
		t.Errorf("etcd holds the password in clear at %q", keys)
	}
}

// keysHolding lists the keys of the env's prefix whose value, as etcd
// holds it, contains s.
func (e *env) keysHolding(t *testing.T, s string) []string {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: e.endpoints, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	resp, err := c.Get(t.Context(), e.prefix, clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, kv := range resp.Kvs {
		if strings.Contains(string(kv.Value), s) {
			keys = append(keys, string(kv.Key))
		}
	}
	return keys
}

func storedSpec(t *testing.T, e *env, ns, name string) string {
	t.Helper()
	app, err := e.reg.GetApp(t.Context(), ns, name)
	if err != nil {
		t.Fatal(err)
	}
	return string(app.Spec)
}

// An HTTP check's headers are credentials (an Authorization header): GET,
// lists, versions, events and dry runs show "***" for each value; etcd
// holds them sealed; a PUT of the shown manifest keeps them, unless the
// check now goes to another port: then a 400 names the header.
func TestCheckHeadersAreRedactedSealedAndKept(t *testing.T) {
	e := newEnv(t, func(c *api.Config) { c.Planner = &recordingPlanner{} })
	const token = "Bearer check-token-7f3a"
	events := e.subscribe(t, "?type=app")
	p := process("checked", "ns-a", func(p *manifest.Process) {
		p.Spec.Template.Spec.Processes[0].HealthChecks = append(p.Spec.Template.Spec.Processes[0].HealthChecks, manifest.HealthCheck{
			Type: manifest.CheckRemoteHTTP, DelaySeconds: 15, IntervalSeconds: 10, TimeoutSeconds: 5, ConsecutiveFailures: 3, GracePeriodSeconds: 10,
			HTTP: &manifest.HTTPCheck{PortName: "http_port", Scheme: "http", Path: "/ready", Headers: map[string]string{"Authorization": token, "X-Team": "a"}}})
	})
	created := createApp(t, e, p)
	shown := []string{string(created.Spec)}
	for _, path := range []string{"/v1/apps/ns-a/checked", "/v1/apps", "/v1/apps/ns-a/checked/versions"} {
		shown = append(shown, string(e.expect(t, http.StatusOK, "GET", path, nil, nil).body))
	}
	var back map[string]any
	if err := json.Unmarshal(getApp(t, e, "ns-a", "checked").Spec, &back); err != nil {
		t.Fatal(err)
	}
	back["spec"].(map[string]any)["instance"] = 3
	shown = append(shown, string(e.expect(t, http.StatusOK, "PUT", "/v1/apps/ns-a/checked?dryRun=true", back, nil).body))
	e.expect(t, http.StatusOK, "PUT", "/v1/apps/ns-a/checked", back, nil)
	for _, c := range events.until(func(c streamed) bool { return c.Action == "put" && strings.Contains(string(c.Object), `"instances":3`) }) {
		shown = append(shown, string(c.Object))
	}
	for i, body := range shown {
		if strings.Contains(body, "check-token-7f3a") {
			t.Errorf("answer %d shows the header: %s", i, truncate([]byte(body)))
		}
	}
	if !strings.Contains(shown[1], `"Authorization": "***"`) {
		t.Errorf("GET shows no redacted header: %s", truncate([]byte(shown[1])))
	}
	if stored := storedSpec(t, e, "ns-a", "checked"); !strings.Contains(stored, `"Authorization":"`+token+`"`) || !strings.Contains(stored, `"instance":3`) {
		t.Errorf("after a PUT of the shown manifest the stored one is %s; want the header kept and the change made", stored)
	}
	if keys := e.keysHolding(t, "check-token-7f3a"); len(keys) > 0 {
		t.Errorf("etcd holds the header in clear at %q", keys)
	}

	// The same "***" sent to another port of the instance: refused.
	checks := back["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["processes"].([]any)[0].(map[string]any)["healthChecks"].([]any)
	checks[1].(map[string]any)["http"].(map[string]any)["portName"] = "metric_port"
	got := errorOf(t, e.call(t, "PUT", "/v1/apps/ns-a/checked", back), http.StatusBadRequest, "InvalidArgument")
	want := `spec.template.spec.processes[0].healthChecks[1].http.headers["Authorization"]: "***" keeps the stored credential only where it was sent before: ` +
		`spec.template.spec.processes[0].healthChecks[1].http's scheme and port changed (http port metric_port, was http port http_port): send the credential again`
	if !slices.Contains(got.Details, want) {
		t.Errorf("details %q, want %q", got.Details, want)
	}
	if v := getApp(t, e, "ns-a", "checked"); v.Version != 2 {
		t.Errorf("the refused PUT changed the app: version %d", v.Version)
	}
}

// A stored password follows no changed address: "***" with a package URL
// on another host is a 400 naming the password, and nothing is stored;
// sent again, the password goes there.
func TestKeptPasswordFollowsNoChangedURL(t *testing.T) {
	e := newEnv(t)
	const password = "pkg-pw-8c1d"
	createApp(t, e, process("pkg", "ns-a", func(p *manifest.Process) {
		p.Spec.Template.Spec.Processes[0].URIs[0].User, p.Spec.Template.Spec.Processes[0].URIs[0].Pwd = "repo", password
	}))
	var back map[string]any
	if err := json.Unmarshal(getApp(t, e, "ns-a", "pkg").Spec, &back); err != nil {
		t.Fatal(err)
	}
	uri := back["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["processes"].([]any)[0].(map[string]any)["uris"].([]any)[0].(map[string]any)
	uri["value"] = "http://collector.example:9000/gamesvc-v1.tar.gz"
	for _, path := range []string{"/v1/apps/ns-a/pkg", "/v1/apps/ns-a/pkg?dryRun=true"} {
		got := errorOf(t, e.call(t, "PUT", path, back), http.StatusBadRequest, "InvalidArgument")
		want := `spec.template.spec.processes[0].uris[0].pwd: "***" keeps the stored credential only where it was sent before: ` +
			`spec.template.spec.processes[0].uris[0].value's scheme, host and port changed (http://collector.example:9000, was http://repo.example.com): send the credential again`
		if !slices.Contains(got.Details, want) {
			t.Errorf("PUT %s: details %q, want %q", path, got.Details, want)
		}
	}
	if stored := storedSpec(t, e, "ns-a", "pkg"); strings.Contains(stored, "collector.example") {
		t.Errorf("the refused PUT was stored: %s", stored)
	}
	uri["pwd"] = "another-pw"
	e.expect(t, http.StatusOK, "PUT", "/v1/apps/ns-a/pkg", back, nil)
	if stored := storedSpec(t, e, "ns-a", "pkg"); strings.Contains(stored, password) || !strings.Contains(stored, "another-pw") {
		t.Errorf("stored after sending the password again: %s", stored)
	}
}

// A hook web metric's headers are credentials (an API key): the template
// and the runs that copied its metrics show "***" in GET, lists, the
// answer of a terminate and events; etcd holds them sealed; a PUT of the
// shown template keeps them, unless the call now goes to another host:
// then a 400 names the header.
func TestHookHeadersAreRedactedSealedAndKept(t *testing.T) {
	e := newEnv(t)
	const key = "hook-api-key-2b9e"
	tmpl := manifesttest.HookTemplate()
	tmpl.Spec.Metrics[0].Provider.Web.Headers = []manifest.HookHeader{{Key: "X-Api-Key", Value: key}, {Key: "Accept", Value: "application/json"}}
	events := e.subscribe(t, "?type=hookrun")
	shown := []string{string(e.expect(t, http.StatusCreated, "POST", "/v1/hooktemplates", tmpl, nil).body)}
	run := map[string]any{"kind": "hookrun", "metadata": map[string]any{"name": "by-hand", "namespace": "ns-a"},
		"spec": map[string]any{"templateName": "test", "args": []map[string]string{{"name": "PodName", "value": "pod-1"}}}}
	e.expect(t, http.StatusCreated, "POST", "/v1/hookruns", run, nil)
	// The runner copies the template's metrics into the run as it starts.
	stored, err := e.reg.GetObject(t.Context(), manifest.KindHookTemplate, "ns-a", "test")
	if err != nil {
		t.Fatal(err)
	}
	m, err := stored.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.reg.ModifyHookRun(t.Context(), "ns-a", "by-hand", func(r *registry.HookRun) (bool, error) {
		r.Spec.Metrics = m.(*manifest.HookTemplate).Spec.Metrics
		return true, nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/v1/hooktemplates/ns-a/test", "/v1/hooktemplates", "/v1/hookruns/ns-a/by-hand", "/v1/hookruns?namespace=ns-a"} {
		shown = append(shown, string(e.expect(t, http.StatusOK, "GET", path, nil, nil).body))
	}
	shown = append(shown, string(e.expect(t, http.StatusAccepted, "POST", "/v1/hookruns/ns-a/by-hand/terminate", nil, nil).body))
	seen := events.until(func(c streamed) bool { return strings.Contains(string(c.Object), `"terminate":true`) })
	for _, c := range seen {
		if strings.Contains(string(c.Object), key) {
			t.Errorf("an event shows the header: %s", c.Object)
		}
	}
	shown = append(shown, string(seen[len(seen)-1].Object))
	for i, body := range shown {
		if strings.Contains(body, key) || strings.Contains(body, "application/json") || !strings.Contains(strings.Join(strings.Fields(body), ""), `"key":"X-Api-Key","value":"***"`) {
			t.Errorf("answer %d shows a header or no redacted one: %s", i, truncate([]byte(body)))
		}
	}
	if keys := e.keysHolding(t, key); len(keys) > 0 {
		t.Errorf("etcd holds the header in clear at %q", keys)
	}

	var back struct {
		Spec map[string]any `json:"spec"`
	}
	if err := json.Unmarshal(e.expect(t, http.StatusOK, "GET", "/v1/hooktemplates/ns-a/test", nil, nil).body, &back); err != nil {
		t.Fatal(err)
	}
	e.expect(t, http.StatusOK, "PUT", "/v1/hooktemplates/ns-a/test", back.Spec, nil)
	if kept, err := e.reg.GetObject(t.Context(), manifest.KindHookTemplate, "ns-a", "test"); err != nil || !strings.Contains(string(kept.Spec), key) {
		t.Errorf("after a PUT of the shown template the stored one is %s, %v; want the header kept", kept.Spec, err)
	}
	web := back.Spec["spec"].(map[string]any)["metrics"].([]any)[0].(map[string]any)["provider"].(map[string]any)["web"].(map[string]any)
	web["url"] = "http://collector.example:9091/age"
	got := errorOf(t, e.call(t, "PUT", "/v1/hooktemplates/ns-a/test", back.Spec), http.StatusBadRequest, "InvalidArgument")
	want := `spec.metrics[0].provider.web.headers[0].value: "***" keeps the stored credential only where it was sent before: ` +
		`spec.metrics[0].provider.web.url's scheme, host and port, or spec.metrics[0].provider.web.headers[0].key changed ` +
		`(http://collector.example:9091 as x-api-key, was http://1.1.1.1:9091 as x-api-key): send the credential again`
	if !slices.Contains(got.Details, want) {
		t.Errorf("details %q, want %q", got.Details, want)
	}
}
