package api_test

import (
	"bytes"
	"context"
	"net/http"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest/manifesttest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
	"github.com/bcs-mesos/bcs-mesos/pkg/store/storetest"
)

// "restart the server on the same data directory and read
// everything back"; secrets stay sealed with the key file generated on
// first start in the data directory.
func TestRestartReadsEverythingBack(t *testing.T) {
	dataDir := t.TempDir()
	start := func() (*store.Embedded, *env) {
		t.Helper()
		etcd, err := store.StartEmbedded(context.Background(), dataDir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(etcd.Close)
		sealer, err := storetest.SealerIn(dataDir) // as bcs-scheduler: <data-dir>/secret.key
		if err != nil {
			t.Fatal(err)
		}
		return etcd, newEnvOn(t, etcd.Endpoints(), store.DefaultPrefix, sealer)
	}

	etcd, e := start()
	e.expect(t, http.StatusCreated, "POST", "/v1/configmaps", manifesttest.ConfigMap(), nil)
	e.expect(t, http.StatusCreated, "POST", "/v1/secrets", secret("my-secret", manifesttest.Namespace), nil)
	e.expect(t, http.StatusCreated, "POST", "/v1/deployments", manifesttest.Deployment(), nil)
	e.expect(t, http.StatusCreated, "POST", "/v1/apps", manifesttest.Process(), nil)
	e.expect(t, http.StatusCreated, "POST", "/v1/apps", manifesttest.Application(), nil)
	e.expect(t, http.StatusCreated, "POST", "/v1/apps", miniProcess, nil)
	updated := manifesttest.Process()
	updated.Spec.Instance = 4
	e.expect(t, http.StatusOK, "PUT", "/v1/apps/ns-a/gamesvc", updated, nil)
	e.expect(t, http.StatusAccepted, "POST", "/v1/apps/ns-a/gamesvc/scale", `{"instances":6}`, nil)
	putTaskGroup(t, e, registry.TaskGroup{ID: "0.gamesvc.ns-a.1", Namespace: "ns-a", App: "gamesvc", Version: 2, State: "TASK_RUNNING", Host: "10.0.0.1"})

	reads := []string{
		"/v1/apps", "/v1/apps/ns-a/gamesvc", "/v1/apps/ns-a/gamesvc/versions", "/v1/apps/ns-a/ri-test-rc-001",
		"/v1/apps/defaultGroup/mini", "/v1/apps?namespace=ns-a",
		"/v1/configmaps", "/v1/configmaps/ns-a/template-configmap",
		"/v1/secrets", "/v1/secrets/ns-a/my-secret",
		"/v1/deployments", "/v1/deployments/ns-a/deployment-test-001",
	}
	before := map[string][]byte{}
	for _, path := range reads {
		before[path] = e.expect(t, http.StatusOK, "GET", path, nil, nil).body
	}
	e.close()
	etcd.Close()

	_, e = start()
	for _, path := range reads {
		after := e.expect(t, http.StatusOK, "GET", path, nil, nil).body
		if !bytes.Equal(after, before[path]) {
			t.Errorf("GET %s after restart:\n%s\nbefore:\n%s", path, after, before[path])
		}
	}
	// The secret's content was sealed with the key file and opens with it
	// again after the restart.
	o, err := e.reg.GetObject(context.Background(), manifest.KindSecret, "ns-a", "my-secret")
	if err != nil {
		t.Fatalf("reading the secret after restart: %v", err)
	}
	m, err := o.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if got := m.(*manifest.Secret).Datas["abc"].Content; got != secretContent {
		t.Errorf("secret content after restart = %q, want %q", got, secretContent)
	}
	// The restarted server keeps working on the old records.
	e.expect(t, http.StatusOK, "PUT", "/v1/apps/ns-a/gamesvc", updated, nil)
	if got := getApp(t, e, "ns-a", "gamesvc"); got.Version != 3 {
		t.Errorf("version after a PUT past the restart = %d, want 3", got.Version)
	}
}
