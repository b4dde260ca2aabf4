package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
)

// Issues 17 and 18: a package's download password is never shown — GET,
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
