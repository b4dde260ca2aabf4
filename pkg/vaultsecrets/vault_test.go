package vaultsecrets_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest/manifesttest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/vaultsecrets"
	"github.com/bcs-mesos/bcs-mesos/pkg/vaulttest"
)

func startVault(t *testing.T) (*vaulttest.Server, string) {
	t.Helper()
	srv, err := vaulttest.Start("s.first-token", "secret")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	tokenFile := filepath.Join(t.TempDir(), "vault-token")
	if err := os.WriteFile(tokenFile, []byte("s.first-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return srv, tokenFile
}

func newStore(t *testing.T, cfg vaultsecrets.Config) *vaultsecrets.Store {
	t.Helper()
	s, err := vaultsecrets.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func secret(items map[string]string) *manifest.Secret {
	s := manifesttest.Secret()
	s.Metadata.Namespace, s.Metadata.Name = "game", "db"
	s.Datas = map[string]manifest.SecretData{}
	for k, v := range items {
		s.Datas[k] = manifest.SecretData{Content: v}
	}
	return s
}

// Write, read, update (a new version; the old one still reads as it was)
// and delete (every version) through the KV v2 API.
func TestPutGetUpdateDelete(t *testing.T) {
	ctx := context.Background()
	srv, tokenFile := startVault(t)
	s := newStore(t, vaultsecrets.Config{Addr: srv.URL, TokenFile: tokenFile})

	ref, err := s.Put(ctx, secret(map[string]string{"password": "aHVudGVyMg==", "user": "YWRtaW4="}))
	if err != nil {
		t.Fatal(err)
	}
	want := registry.ValuesRef{Backend: "vault", Mount: "secret", Path: "bcs/game/db", Version: 1}
	if *ref != want {
		t.Fatalf("ref %+v, want %+v", *ref, want)
	}
	if data, ok := srv.Data("secret", "bcs/game/db", 1); !ok || data["password"] != "aHVudGVyMg==" || len(data) != 2 {
		t.Fatalf("vault holds %v", data)
	}
	values, err := s.Get(ctx, *ref)
	if err != nil || values["password"] != "aHVudGVyMg==" || values["user"] != "YWRtaW4=" {
		t.Fatalf("get: %v %v", values, err)
	}

	ref2, err := s.Put(ctx, secret(map[string]string{"password": "bmV3"}))
	if err != nil {
		t.Fatal(err)
	}
	if ref2.Version != 2 {
		t.Fatalf("update wrote version %d, want 2", ref2.Version)
	}
	if values, err := s.Get(ctx, *ref2); err != nil || values["password"] != "bmV3" || len(values) != 1 {
		t.Fatalf("version 2: %v %v", values, err)
	}
	if values, err := s.Get(ctx, *ref); err != nil || values["password"] != "aHVudGVyMg==" {
		t.Fatalf("version 1 after the update: %v %v", values, err)
	}
	if _, err := s.Get(ctx, registry.ValuesRef{Backend: "vault", Mount: "secret", Path: "bcs/game/db", Version: 9}); !errors.Is(err, errdefs.ErrNotFound) {
		t.Fatalf("a version never written: %v, want not found", err)
	}

	if err := s.Delete(ctx, *ref2); err != nil {
		t.Fatal(err)
	}
	if paths := srv.Paths("secret"); len(paths) != 0 {
		t.Fatalf("vault still holds %v", paths)
	}
	if _, err := s.Get(ctx, *ref); !errors.Is(err, errdefs.ErrNotFound) {
		t.Fatalf("get after delete: %v, want not found", err)
	}
	if err := s.Delete(ctx, *ref2); err != nil {
		t.Fatalf("deleting again: %v", err)
	}
}

// --vault-mount and --vault-prefix place the values.
func TestMountAndPrefix(t *testing.T) {
	srv, err := vaulttest.Start("tok", "kv")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	tokenFile := filepath.Join(t.TempDir(), "token")
	_ = os.WriteFile(tokenFile, []byte("tok"), 0o600)
	s := newStore(t, vaultsecrets.Config{Addr: srv.URL, TokenFile: tokenFile, Mount: "/kv/", Prefix: "clusters/c1/"})
	ref, err := s.Put(context.Background(), secret(map[string]string{"a": "YQ=="}))
	if err != nil {
		t.Fatal(err)
	}
	if ref.Mount != "kv" || ref.Path != "clusters/c1/game/db" {
		t.Fatalf("ref %+v", ref)
	}
	if _, ok := srv.Data("kv", "clusters/c1/game/db", 1); !ok {
		t.Fatalf("nothing at kv/clusters/c1/game/db: %v", srv.Paths("kv"))
	}
}

// A soft-deleted version (vault kv delete) is not found, not empty.
func TestSoftDeletedVersionIsNotFound(t *testing.T) {
	ctx := context.Background()
	srv, tokenFile := startVault(t)
	s := newStore(t, vaultsecrets.Config{Addr: srv.URL, TokenFile: tokenFile})
	ref, err := s.Put(ctx, secret(map[string]string{"a": "YQ=="}))
	if err != nil {
		t.Fatal(err)
	}
	if err := deleteLatest(srv.URL, "s.first-token", "/v1/secret/data/bcs/game/db"); err != nil {
		t.Fatal(err)
	}
	if values, err := s.Get(ctx, *ref); !errors.Is(err, errdefs.ErrNotFound) {
		t.Fatalf("soft-deleted version: %v %v, want not found", values, err)
	}
}

// A token Vault refuses and a Vault that is down are Unavailable (retry),
// never NotFound; the error names neither token nor values.
func TestRefusedTokenAndDownServerAreUnavailable(t *testing.T) {
	ctx := context.Background()
	srv, tokenFile := startVault(t)
	s := newStore(t, vaultsecrets.Config{Addr: srv.URL, TokenFile: tokenFile, Timeout: 2 * time.Second})
	ref, err := s.Put(ctx, secret(map[string]string{"password": "aHVudGVyMg=="}))
	if err != nil {
		t.Fatal(err)
	}

	srv.SetToken("s.rotated")
	_, err = s.Get(ctx, *ref)
	if !errors.Is(err, errdefs.ErrUnavailable) || errors.Is(err, errdefs.ErrNotFound) || !strings.Contains(err.Error(), "permission denied") {
		t.Fatalf("refused token: %v, want unavailable saying permission denied", err)
	}
	if _, err := s.Put(ctx, secret(map[string]string{"password": "eA=="})); !errors.Is(err, errdefs.ErrUnavailable) {
		t.Fatalf("write with a refused token: %v", err)
	}
	// The token file changes: the next request uses the new token.
	if err := os.WriteFile(tokenFile, []byte("s.rotated\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	future := time.Now().Add(time.Minute)
	_ = os.Chtimes(tokenFile, future, future)
	if values, err := s.Get(ctx, *ref); err != nil || values["password"] != "aHVudGVyMg==" {
		t.Fatalf("after the token file changed: %v %v", values, err)
	}

	srv.Close()
	for name, call := range map[string]func() error{
		"get":    func() error { _, err := s.Get(ctx, *ref); return err },
		"put":    func() error { _, err := s.Put(ctx, secret(map[string]string{"a": "YQ=="})); return err },
		"delete": func() error { return s.Delete(ctx, *ref) },
	} {
		err := call()
		if !errors.Is(err, errdefs.ErrUnavailable) || errors.Is(err, errdefs.ErrNotFound) || !strings.Contains(err.Error(), "unreachable") {
			t.Errorf("%s with vault down: %v, want unavailable (unreachable)", name, err)
		}
		for _, leak := range []string{"aHVudGVyMg==", "s.rotated", "s.first-token"} {
			if err != nil && strings.Contains(err.Error(), leak) {
				t.Errorf("%s: error shows %q: %v", name, leak, err)
			}
		}
	}
}

// Bad or missing flags fail New, naming the flag.
func TestConfigErrorsNameTheFlag(t *testing.T) {
	_, tokenFile := startVault(t)
	empty := filepath.Join(t.TempDir(), "empty")
	_ = os.WriteFile(empty, nil, 0o600)
	for _, tc := range []struct {
		name string
		cfg  vaultsecrets.Config
		want string
	}{
		{"no address", vaultsecrets.Config{TokenFile: tokenFile}, "--vault-addr is required"},
		{"bad address", vaultsecrets.Config{Addr: "vault:8200", TokenFile: tokenFile}, "--vault-addr \"vault:8200\""},
		{"no token file", vaultsecrets.Config{Addr: "http://127.0.0.1:8200"}, "--vault-token-file is required"},
		{"missing token file", vaultsecrets.Config{Addr: "http://127.0.0.1:8200", TokenFile: "/nonexistent/token"}, "--vault-token-file: "},
		{"empty token file", vaultsecrets.Config{Addr: "http://127.0.0.1:8200", TokenFile: empty}, "--vault-token-file \"" + empty + "\" is empty"},
		{"bad prefix", vaultsecrets.Config{Addr: "http://127.0.0.1:8200", TokenFile: tokenFile, Prefix: "a//b"}, "--vault-prefix \"a//b\""},
		{"missing CA", vaultsecrets.Config{Addr: "https://127.0.0.1:8200", TokenFile: tokenFile, CACert: "/nonexistent/ca.pem"}, "--vault-cacert"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := vaultsecrets.New(tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// deleteLatest soft-deletes the current version of a KV v2 secret, as
// `vault kv delete` does.
func deleteLatest(addr, token, path string) error {
	req, _ := http.NewRequest(http.MethodDelete, addr+path, nil)
	req.Header.Set("X-Vault-Token", token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("DELETE %s: %s", path, resp.Status)
	}
	return nil
}
