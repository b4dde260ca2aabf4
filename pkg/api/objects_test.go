package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/api"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest/manifesttest"
)

// secretContent is the base64 content of every secret these tests store;
// no response may contain it.
const secretContent = "c2VjcmV0LXZhbHVlLW5ldmVyLXJldHVybmVk"

func secret(name, ns string) *manifest.Secret {
	s := manifesttest.Secret()
	s.Metadata.Name, s.Metadata.Namespace = name, ns
	s.Datas = map[string]manifest.SecretData{"abc": {Path: "/path/in/vault", Content: secretContent}}
	return s
}

func configMap(name, ns string) *manifest.ConfigMap {
	c := manifesttest.ConfigMap()
	c.Metadata.Name, c.Metadata.Namespace = name, ns
	return c
}

func deployment(name, ns string) *manifest.Deployment {
	d := manifesttest.Deployment()
	d.Metadata.Name, d.Metadata.Namespace = name, ns
	d.Spec.Template.Metadata.Namespace = ns
	d.Spec.Template.Spec.Containers[0].Secrets = nil
	d.Spec.Template.Spec.Containers[0].ConfigMaps = nil
	return d
}

// compact removes the indentation the API adds.
func compact(t *testing.T, data json.RawMessage) json.RawMessage {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, data); err != nil {
		t.Fatalf("compact %s: %v", data, err)
	}
	return b.Bytes()
}

// "Same CRUD for /v1/deployments, /v1/configmaps, /v1/secrets";
// deployments are workloads, tested as such in deployments_test.go.
func TestObjectCRUD(t *testing.T) {
	tests := []struct {
		path   string
		kind   manifest.Kind
		create func(name, ns string) manifest.Object
		change func(manifest.Object)
		// changed reports whether a read-back spec shows change.
		changed func(spec json.RawMessage) bool
	}{
		{
			path: "configmaps", kind: manifest.KindConfigMap,
			create: func(n, ns string) manifest.Object { return configMap(n, ns) },
			change: func(o manifest.Object) {
				o.(*manifest.ConfigMap).Datas["added"] = manifest.ConfigMapData{Type: manifest.ConfigDataFile, Content: "YWRkZWQ="}
			},
			changed: func(s json.RawMessage) bool { return strings.Contains(string(s), `"added"`) },
		},
		{
			path: "secrets", kind: manifest.KindSecret,
			create: func(n, ns string) manifest.Object { return secret(n, ns) },
			change: func(o manifest.Object) {
				o.(*manifest.Secret).Datas["added"] = manifest.SecretData{Path: "/vault/added", Content: secretContent}
			},
			changed: func(s json.RawMessage) bool { return strings.Contains(string(s), `"/vault/added"`) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			e := newEnv(t)
			base := "/v1/" + tt.path
			var created api.ObjectView
			e.expect(t, http.StatusCreated, "POST", base, tt.create("one", "ns-a"), &created)
			if created.Kind != tt.kind || created.Namespace != "ns-a" || created.Name != "one" || created.Revision == 0 {
				t.Errorf("POST answer: %+v", created)
			}
			errorOf(t, e.call(t, "POST", base, tt.create("one", "ns-a")), http.StatusConflict, "AlreadyExists")
			e.expect(t, http.StatusCreated, "POST", base, tt.create("two", "ns-b"), nil)

			var got api.ObjectView
			e.expect(t, http.StatusOK, "GET", base+"/ns-a/one", nil, &got)
			if got.Revision != created.Revision || string(compact(t, got.Spec)) != string(compact(t, created.Spec)) {
				t.Errorf("GET: revision %d spec %s, want the created %d %s", got.Revision, got.Spec, created.Revision, created.Spec)
			}
			for query, want := range map[string][]string{"": {"ns-a/one", "ns-b/two"}, "?namespace=ns-b": {"ns-b/two"}, "?namespace=ns-c": {}} {
				var list map[string][]api.ObjectView
				e.expect(t, http.StatusOK, "GET", base+query, nil, &list)
				names := []string{}
				for _, o := range list[tt.path] {
					names = append(names, o.Namespace+"/"+o.Name)
				}
				if !slices.Equal(names, want) {
					t.Errorf("GET %s%s = %q, want %q", base, query, names, want)
				}
			}

			updated := tt.create("one", "ns-a")
			tt.change(updated)
			errorOf(t, e.call(t, "PUT", base+"/ns-a/one", updated, "If-Match", fmt.Sprint(created.Revision-1)), http.StatusConflict, "Conflict")
			errorOf(t, e.call(t, "PUT", base+"/ns-a/other", updated), http.StatusBadRequest, "InvalidArgument")
			errorOf(t, e.call(t, "PUT", base+"/ns-a/nothere", tt.create("nothere", "ns-a")), http.StatusNotFound, "NotFound")
			var put api.ObjectView
			r := e.call(t, "PUT", base+"/ns-a/one", updated, "If-Match", fmt.Sprint(created.Revision))
			if r.status != http.StatusOK || json.Unmarshal(r.body, &put) != nil {
				t.Fatalf("PUT = %d %s, want 200", r.status, r.body)
			}
			e.expect(t, http.StatusOK, "GET", base+"/ns-a/one", nil, &got)
			if !tt.changed(compact(t, got.Spec)) || got.Revision != put.Revision || got.Revision <= created.Revision || !got.CreatedAt.Equal(created.CreatedAt) {
				t.Errorf("GET after PUT: revision %d (PUT %d, created %d), createdAt %v (created %v), spec %s; want the change at a new revision, same createdAt",
					got.Revision, put.Revision, created.Revision, got.CreatedAt, created.CreatedAt, got.Spec)
			}

			e.expect(t, http.StatusNoContent, "DELETE", base+"/ns-a/one", nil, nil)
			errorOf(t, e.call(t, "GET", base+"/ns-a/one", nil), http.StatusNotFound, "NotFound")
			errorOf(t, e.call(t, "DELETE", base+"/ns-a/one", nil), http.StatusNotFound, "NotFound")
		})
	}
}

// "POST /v1/apps (kind application or process)" and "Same CRUD
// for /v1/deployments, /v1/configmaps, /v1/secrets": each route takes its
// own kinds only, naming kind in the 400.
func TestObjectRoutesRejectOtherKinds(t *testing.T) {
	e := newEnv(t)
	for path, obj := range map[string]manifest.Object{
		"/v1/secrets":     configMap("c", "ns-a"),
		"/v1/configmaps":  secret("s", "ns-a"),
		"/v1/deployments": process("p", "ns-a"),
		"/v1/apps":        manifesttest.Service(),
	} {
		got := errorOf(t, e.call(t, "POST", path, obj), http.StatusBadRequest, "InvalidArgument")
		if len(got.Details) != 1 || !strings.HasPrefix(got.Details[0], "kind: ") {
			t.Errorf("POST %s with a %s: details %q, want one naming kind", path, obj.Kind(), got.Details)
		}
	}
	if keys := e.storedKeys(t); len(keys) != 0 {
		t.Errorf("rejected posts stored %q", keys)
	}
}

// "Secret values are encrypted at rest ... and never logged or
// returned by GET"; "secret reads omit values".
func TestSecretContentIsNeverReturned(t *testing.T) {
	e := newEnv(t)
	misspelt := strings.Replace(string(mustJSON(t, secret("x", "ns-a"))), `"path"`, `"paht"`, 1)
	responses := []response{
		e.expect(t, http.StatusCreated, "POST", "/v1/secrets", secret("db", "ns-a"), nil),
		e.expect(t, http.StatusOK, "GET", "/v1/secrets/ns-a/db", nil, nil),
		e.expect(t, http.StatusOK, "GET", "/v1/secrets", nil, nil),
		e.expect(t, http.StatusOK, "GET", "/v1/secrets?namespace=ns-a", nil, nil),
		e.expect(t, http.StatusOK, "PUT", "/v1/secrets/ns-a/db", secret("db", "ns-a"), nil),
		e.expect(t, http.StatusConflict, "POST", "/v1/secrets", secret("db", "ns-a"), nil),
		e.expect(t, http.StatusBadRequest, "PUT", "/v1/secrets/ns-a/other", secret("db", "ns-a"), nil),
		e.expect(t, http.StatusBadRequest, "POST", "/v1/secrets", misspelt, nil),
	}
	for _, r := range responses {
		if strings.Contains(string(r.body), secretContent) {
			t.Errorf("a response contains the secret content: %d %s", r.status, r.body)
		}
	}
	for _, list := range responses[2:4] {
		if !strings.Contains(string(list.body), `"/path/in/vault"`) {
			t.Errorf("the list does not show the secret: %s", list.body)
		}
	}
	// The path (where the value lives) is shown; the content is blank.
	var got api.ObjectView
	if err := json.Unmarshal(responses[1].body, &got); err != nil {
		t.Fatal(err)
	}
	var spec manifest.Secret
	if err := json.Unmarshal(got.Spec, &spec); err != nil {
		t.Fatal(err)
	}
	if d := spec.Datas["abc"]; d.Path != "/path/in/vault" || d.Content != "" {
		t.Errorf("GET secret datas[abc] = %+v, want the path without content", d)
	}
	// The value is kept, sealed: the registry reads it back, the raw
	// etcd value does not hold it.
	o, err := e.reg.GetObject(context.Background(), manifest.KindSecret, "ns-a", "db")
	if err != nil {
		t.Fatal(err)
	}
	m, err := o.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if c := m.(*manifest.Secret).Datas["abc"].Content; c != secretContent {
		t.Errorf("stored content = %q, want %q", c, secretContent)
	}
}

// "configmap/secret references resolve": an application naming a
// missing configmap or secret is refused with the field that names it,
// and accepted once both exist in its namespace.
func TestReferencesResolve(t *testing.T) {
	e := newEnv(t)
	app := manifesttest.Process() // references template-configmap and my-secret in ns-a
	got := errorOf(t, e.call(t, "POST", "/v1/apps", app), http.StatusBadRequest, "InvalidArgument")
	want := []string{
		`spec.template.spec.processes[0].secrets[0].secretName: secret "my-secret" not found in namespace "ns-a"`,
		`spec.template.spec.processes[0].configmaps[0].name: configmap "template-configmap" not found in namespace "ns-a"`,
	}
	if !sameSet(got.Details, want) {
		t.Errorf("details:\n got %q\nwant %q", got.Details, want)
	}

	// In another namespace they do not count.
	e.expect(t, http.StatusCreated, "POST", "/v1/configmaps", configMap("template-configmap", "ns-b"), nil)
	e.expect(t, http.StatusCreated, "POST", "/v1/secrets", secret("my-secret", "ns-b"), nil)
	errorOf(t, e.call(t, "POST", "/v1/apps", app), http.StatusBadRequest, "InvalidArgument")

	e.expect(t, http.StatusCreated, "POST", "/v1/configmaps", configMap("template-configmap", "ns-a"), nil)
	got = errorOf(t, e.call(t, "POST", "/v1/apps", app), http.StatusBadRequest, "InvalidArgument")
	if !slices.Equal(got.Details, want[:1]) {
		t.Errorf("with the configmap, details %q, want %q", got.Details, want[:1])
	}

	// A secret lacking the referenced key is refused by key.
	noKey := secret("my-secret", "ns-a")
	noKey.Datas = map[string]manifest.SecretData{"other": {Content: secretContent}}
	e.expect(t, http.StatusCreated, "POST", "/v1/secrets", noKey, nil)
	got = errorOf(t, e.call(t, "POST", "/v1/apps", app), http.StatusBadRequest, "InvalidArgument")
	if len(got.Details) != 1 || !strings.Contains(got.Details[0], "dataKey") || !strings.Contains(got.Details[0], `"abc"`) {
		t.Errorf("with a secret lacking abc, details %q, want one naming dataKey abc", got.Details)
	}

	e.expect(t, http.StatusOK, "PUT", "/v1/secrets/ns-a/my-secret", secret("my-secret", "ns-a"), nil)
	createApp(t, e, app)
}

// A configmap or secret that an application takes is not
// deleted (409 naming the application) unless forced; once no
// application takes it, it is.
func TestDeleteReferencedConfigMapAndSecret(t *testing.T) {
	e := newEnv(t)
	e.expect(t, http.StatusCreated, "POST", "/v1/configmaps", configMap("template-configmap", "ns-a"), nil)
	e.expect(t, http.StatusCreated, "POST", "/v1/secrets", secret("my-secret", "ns-a"), nil)
	e.expect(t, http.StatusCreated, "POST", "/v1/configmaps", configMap("unused", "ns-a"), nil)
	app := manifesttest.Process()
	app.Metadata.Name, app.Metadata.Namespace = "user", "ns-a"
	createApp(t, e, app)

	for _, path := range []string{"/v1/configmaps/ns-a/template-configmap", "/v1/secrets/ns-a/my-secret"} {
		got := errorOf(t, e.call(t, "DELETE", path, nil), http.StatusConflict, "Conflict")
		if !strings.Contains(got.Message, "ns-a/user") || !strings.Contains(got.Message, "?force=true") {
			t.Errorf("DELETE %s: %q, want the application named and force offered", path, got.Message)
		}
		e.expect(t, http.StatusOK, "GET", path, nil, nil)
	}
	e.expect(t, http.StatusNoContent, "DELETE", "/v1/configmaps/ns-a/unused", nil, nil)
	e.expect(t, http.StatusNoContent, "DELETE", "/v1/configmaps/ns-a/template-configmap?force=true", nil, nil)
	e.expect(t, http.StatusNotFound, "GET", "/v1/configmaps/ns-a/template-configmap", nil, nil)
	errorOf(t, e.call(t, "DELETE", "/v1/secrets/ns-a/my-secret?force=maybe", nil), http.StatusBadRequest, "InvalidArgument")

	// Deleting, the application no longer holds it.
	e.expect(t, http.StatusAccepted, "DELETE", "/v1/apps/ns-a/user", nil, nil)
	e.expect(t, http.StatusNoContent, "DELETE", "/v1/secrets/ns-a/my-secret", nil, nil)
}
