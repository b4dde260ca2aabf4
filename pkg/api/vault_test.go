package api_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/vaultsecrets"
	"github.com/bcs-mesos/bcs-mesos/pkg/vaulttest"
)

// With --secret-backend vault, a secret written through the
// REST API has its values on Vault (KV v2, <prefix>/<namespace>/<name>)
// and none in etcd, sealed or not; an update is a new Vault version the
// record points to; a delete removes every version. With Vault down a
// write or delete is 503 and changes nothing.
func TestSecretsOnVault(t *testing.T) {
	ctx := context.Background()
	vault, err := vaulttest.Start("s.api-test", "secret")
	if err != nil {
		t.Fatal(err)
	}
	defer vault.Close()
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("s.api-test"), 0o600); err != nil {
		t.Fatal(err)
	}
	values, err := vaultsecrets.New(vaultsecrets.Config{Addr: vault.URL, TokenFile: tokenFile, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	e.reg.WithSecretValues(values)

	plain := "vault-only-" + strings.ReplaceAll(t.Name(), "/", "-")
	content := base64.StdEncoding.EncodeToString([]byte(plain))
	s := secret("db", "ns-v")
	s.Datas = map[string]manifest.SecretData{"password": {Path: "/path/to/store/in/vault", Content: content},
		"user": {Content: base64.StdEncoding.EncodeToString([]byte("admin"))}}
	created := e.expect(t, http.StatusCreated, "POST", "/v1/secrets", s, nil)
	if strings.Contains(string(created.body), content) {
		t.Errorf("the response shows the value: %s", created.body)
	}

	data, ok := vault.Data("secret", "bcs/ns-v/db", 1)
	if !ok || data["password"] != content || len(data) != 2 {
		t.Fatalf("vault holds %v at secret/bcs/ns-v/db version 1", data)
	}
	assertNotInEtcd(t, e, plain, content)
	rec, err := e.reg.GetObject(ctx, manifest.KindSecret, "ns-v", "db")
	if err != nil {
		t.Fatal(err)
	}
	if rec.Values == nil || rec.Values.Path != "bcs/ns-v/db" || rec.Values.Version != 1 {
		t.Fatalf("record points to %+v", rec.Values)
	}
	stored, _ := rec.Manifest()
	if d := stored.(*manifest.Secret).Datas["password"]; d.Content != "" || d.Path != "/path/to/store/in/vault" {
		t.Errorf("etcd keeps datas[password] = %+v, want its path and no content", d)
	}
	// What the driver feeds the core: the values, read from Vault.
	resolved, err := e.reg.ResolveSecret(ctx, rec)
	if err != nil || resolved.Datas["password"].Content != content {
		t.Fatalf("resolved: %+v %v", resolved, err)
	}

	// An update writes version 2; the record points to it.
	s.Datas["password"] = manifest.SecretData{Content: base64.StdEncoding.EncodeToString([]byte(plain + "-2"))}
	e.expect(t, http.StatusOK, "PUT", "/v1/secrets/ns-v/db", s, nil)
	if rec, err = e.reg.GetObject(ctx, manifest.KindSecret, "ns-v", "db"); err != nil || rec.Values.Version != 2 {
		t.Fatalf("after the update the record points to %+v (%v)", rec.Values, err)
	}
	if data, _ := vault.Data("secret", "bcs/ns-v/db", 2); data["password"] != s.Datas["password"].Content {
		t.Errorf("vault version 2 holds %v", data)
	}
	assertNotInEtcd(t, e, plain, content)

	e.expect(t, http.StatusNoContent, "DELETE", "/v1/secrets/ns-v/db", nil, nil)
	if paths := vault.Paths("secret"); len(paths) != 0 {
		t.Errorf("vault still holds %v after the delete", paths)
	}

	// Vault down: 503, nothing stored, nothing deleted.
	e.expect(t, http.StatusCreated, "POST", "/v1/secrets", secret("kept", "ns-v"), nil)
	vault.Close()
	got := errorOf(t, e.call(t, "POST", "/v1/secrets", s), http.StatusServiceUnavailable, "Unavailable")
	if !strings.Contains(got.Message, "unreachable") {
		t.Errorf("message %q does not say vault is unreachable", got.Message)
	}
	if _, err := e.reg.GetObject(ctx, manifest.KindSecret, "ns-v", "db"); err == nil {
		t.Error("a secret whose values vault did not take was stored")
	}
	errorOf(t, e.call(t, "DELETE", "/v1/secrets/ns-v/kept", nil), http.StatusServiceUnavailable, "Unavailable")
	if _, err := e.reg.GetObject(ctx, manifest.KindSecret, "ns-v", "kept"); err != nil {
		t.Errorf("a delete vault refused removed the record: %v", err)
	}
}

// assertNotInEtcd scans every key of the etcd the test uses, raw (as
// stored, sealed) and through the store (unsealed), for the value.
func assertNotInEtcd(t *testing.T, e *env, forms ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	client, err := clientv3.New(clientv3.Config{Endpoints: shared.Etcd.Endpoints(), DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	raw, err := client.Get(ctx, "", clientv3.WithFromKey())
	if err != nil {
		t.Fatal(err)
	}
	entries, err := e.store.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) == 0 || len(raw.Kvs) == 0 {
		t.Fatal("etcd holds nothing: the scan would prove nothing")
	}
	for _, f := range forms {
		for _, kv := range raw.Kvs {
			if strings.Contains(string(kv.Value), f) {
				t.Errorf("etcd key %s holds %q", kv.Key, f)
			}
		}
		for _, en := range entries {
			if strings.Contains(string(en.Value), f) {
				t.Errorf("record %s holds %q (unsealed)", en.Key, f)
			}
		}
	}
}
