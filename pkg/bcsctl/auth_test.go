package bcsctl_test

import (
	"bytes"
	"context"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/api"
	"github.com/bcs-mesos/bcs-mesos/pkg/auth"
	"github.com/bcs-mesos/bcs-mesos/pkg/bcsctl"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

const (
	adminToken  = "admin-token-1b2c3d4e5f"
	readerToken = "reader-token-6a7b8c9d0e"
)

// bcsctl sends --token, else $BCS_TOKEN, else the token make
// run wrote in bcs-data/admin.token, looked for in the working directory
// and each one above it (bcsctl run from a subdirectory of the checkout
// finds it at the top); a 401 says which token was sent or where bcsctl
// looked, a 403 what the role lacks.
func TestBcsctlSendsItsToken(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := store.Open(ctx, store.Config{Endpoints: shared.Etcd.Endpoints(), Prefix: shared.Prefix("bcsctl-auth"), Sealer: shared.Sealer})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	users, err := auth.ParseTokens(strings.NewReader(adminToken + ",alice,admin\n" + readerToken + ",grafana,read-only\n"))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.NewServer(api.Config{Registry: registry.New(st, time.Now), Leadership: api.Single{},
		Auth: &api.AuthConfig{Authenticator: &auth.Authenticator{Tokens: users}}}))
	t.Cleanup(srv.Close)

	run := func(envToken, fileToken, stdin string, args ...string) result {
		t.Helper()
		var out, errOut bytes.Buffer
		env := bcsctl.Env{
			Out: &out, Err: &errOut, In: strings.NewReader(stdin),
			Getenv: func(k string) string {
				return map[string]string{"BCS_SERVER": srv.URL, "BCS_TOKEN": envToken}[k]
			},
			Getwd: func() (string, error) { return "/checkout/pkg/bcsctl", nil },
			ReadFile: func(path string) ([]byte, error) {
				if path != "/checkout/"+bcsctl.DefaultTokenFile || fileToken == "" {
					return nil, fs.ErrNotExist
				}
				return []byte(fileToken + "\n"), nil
			},
		}
		code := bcsctl.Main(context.Background(), args, env)
		return result{out.String(), errOut.String(), code}
	}
	configmap := "apiVersion: v4\nkind: configmap\nmetadata: {name: cm, namespace: demo}\ndatas: {a: {type: file, content: x}}\n"
	for _, tc := range []struct {
		name                string
		envToken, fileToken string
		args                []string
		code                int
		says                string
	}{
		{"no token anywhere", "", "", []string{"get", "apps", "-A"}, 1,
			"no credentials: send Authorization: Bearer <token>: unauthenticated\n" +
				"bcsctl sent no token: --token and $BCS_TOKEN are not set, and none of these files exists:\n" +
				"  /checkout/pkg/bcsctl/bcs-data/admin.token\n  /checkout/pkg/bcs-data/admin.token\n" +
				"  /checkout/bcs-data/admin.token\n  /bcs-data/admin.token\n" +
				"give one with --token TOKEN, or export BCS_TOKEN=$(cat DATA/admin.token)"},
		{"the token file make run wrote, above the working directory", "", adminToken, []string{"apply", "-f", "-"}, 0, "configmap demo/cm created"},
		{"$BCS_TOKEN before the file", readerToken, adminToken, []string{"delete", "configmap", "cm", "-n", "demo"}, 1,
			`user "grafana" (role read-only) writes nothing`},
		{"--token before $BCS_TOKEN", readerToken, "", []string{"--token", adminToken, "delete", "configmap", "cm", "-n", "demo"}, 0, "deleted"},
		{"a wrong --token", "", adminToken, []string{"--token", "wrong-token-0123456789", "get", "apps", "-A"}, 1,
			"unknown bearer token: unauthenticated\nbcsctl sent the token of --token"},
		{"a token file refused", "", "stale-token-0123456789", []string{"get", "apps", "-A"}, 1,
			"bcsctl sent the token in /checkout/bcs-data/admin.token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(tc.envToken, tc.fileToken, configmap, tc.args...)
			if r.code != tc.code || !strings.Contains(r.out+r.err, tc.says) {
				t.Errorf("exit %d, want %d saying %q\nstdout: %s\nstderr: %s", r.code, tc.code, tc.says, r.out, r.err)
			}
			for _, token := range []string{adminToken, readerToken} {
				if strings.Contains(r.out+r.err, token) {
					t.Errorf("bcsctl printed the token %s", token)
				}
			}
		})
	}
	resp, err := http.Get(srv.URL + "/v1/configmaps")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the API without a token: %d, want 401", resp.StatusCode)
	}
}
