package e2e_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The callers of a system shared by two teams: each team's operator may
// write its own namespace only; the viewer reads every namespace.
const (
	tenantA      = "nsa"
	tenantB      = "nsb"
	tokenAdmin   = "e2e-admin-token-of-the-platform"
	tokenOpA     = "e2e-operator-token-of-team-a"
	tokenOpB     = "e2e-operator-token-of-team-b"
	tokenViewer  = "e2e-read-only-token-of-a-viewer"
	tokenFileFmt = "%s,admin,admin\n%s,opa,operator,%s\n%s,opb,operator,%s\n%s,viewer,read-only\n"
)

// tenantSystem is a system whose API callers come from a token file: the
// admin, opa (operator of nsa), opb (operator of nsb) and a read-only
// viewer. It is what a platform shared by game teams looks like: the
// tenant-isolation tests attack one team's instances from the other's
// manifests, hooks and calls.
type tenantSystem struct {
	*system
}

// startTenants starts a system with the four callers; schedulerArgs are
// more bcs-scheduler flags.
func startTenants(t *testing.T, schedulerArgs ...string) *tenantSystem {
	t.Helper()
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens")
	content := fmt.Sprintf(tokenFileFmt, tokenAdmin, tokenOpA, tenantA, tokenOpB, tenantB, tokenViewer)
	if err := os.WriteFile(tokens, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	admin := filepath.Join(dir, "admin.token")
	if err := os.WriteFile(admin, []byte(tokenAdmin+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startSystem(t, append([]string{"--token-file", tokens}, schedulerArgs...)...)
	s.tokenFile = admin // s.call and bcsctl go as the admin
	return &tenantSystem{system: s}
}

// callAs sends a JSON request as the caller of token and returns the
// status and body.
func (s *tenantSystem) callAs(token, method, path string, body []byte) (int, []byte) {
	s.t.Helper()
	code, data, err := s.attemptAs(http.DefaultClient, token, method, path, body)
	if err != nil {
		s.t.Fatal(err)
	}
	return code, data
}

// The API's own role checks: a team's operator writes its own namespace
// and not the other's; the viewer writes nothing.
func TestTenantRolesHold(t *testing.T) {
	s := startTenants(t)
	secret := func(ns string) []byte {
		return []byte(fmt.Sprintf(`{"apiVersion":"v4","kind":"secret","metadata":{"name":"s","namespace":%q},"datas":{"k":{"content":"djE="}}}`, ns))
	}
	if code, body := s.callAs(tokenOpA, "POST", "/v1/secrets", secret(tenantA)); code != http.StatusCreated {
		t.Fatalf("opa creating a secret of nsa: %d %s", code, body)
	}
	for _, c := range []struct{ token, ns string }{{tokenOpA, tenantB}, {tokenOpB, tenantA}, {tokenViewer, tenantA}} {
		if code, body := s.callAs(c.token, "POST", "/v1/secrets", secret(c.ns)); code != http.StatusForbidden {
			t.Errorf("%s creating a secret of %s: %d %s, want 403", c.token, c.ns, code, body)
		}
	}
	if code, body := s.callAs(tokenOpB, "GET", "/v1/secrets/"+tenantA+"/s", nil); code != http.StatusForbidden {
		t.Errorf("opb reading nsa's secret: %d %s, want 403", code, body)
	}
}

// ctlAs runs bcsctl with args as the caller of token (who, in messages)
// and returns what it printed; an error exit fails the test.
func (s *tenantSystem) ctlAs(token, who string, args ...string) []byte {
	s.t.Helper()
	r := s.bcsctlAs(token, "", args...)
	if r.code != 0 {
		s.t.Errorf("bcsctl %s as %s: exit %d %s%s", strings.Join(args, " "), who, r.code, r.out, r.err)
	}
	return []byte(r.out + r.err)
}
