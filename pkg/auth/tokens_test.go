package auth_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/bcs-mesos/bcs-mesos/pkg/auth"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
)

const (
	adminToken    = "admin-token-0123456789"
	operatorToken = "operator-token-0123456789"
	readerToken   = "reader-token-0123456789"
)

const tokenFile = `# token,user,role[,namespaces]
admin-token-0123456789,alice,admin

operator-token-0123456789, ci ,operator,demo;staging
second-operator-token-0123,ci,operator,staging;demo
reader-token-0123456789,grafana,read-only,
`

func TestParseTokens(t *testing.T) {
	users, err := auth.ParseTokens(strings.NewReader(tokenFile))
	if err != nil {
		t.Fatal(err)
	}
	for token, want := range map[string]auth.Identity{
		adminToken:                   {User: "alice", Role: auth.RoleAdmin},
		operatorToken:                {User: "ci", Role: auth.RoleOperator, Namespaces: []string{"demo", "staging"}},
		"second-operator-token-0123": {User: "ci", Role: auth.RoleOperator, Namespaces: []string{"demo", "staging"}},
		readerToken:                  {User: "grafana", Role: auth.RoleReadOnly},
	} {
		if got, ok := users.ByToken(token); !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("ByToken(%s) = %+v, %v; want %+v", token, got, ok, want)
		}
	}
	for _, token := range []string{"", "alice", "admin-token-012345678", "ADMIN-TOKEN-0123456789"} {
		if got, ok := users.ByToken(token); ok {
			t.Errorf("ByToken(%q) = %+v, want none", token, got)
		}
	}
	if got, ok := users.ByName("ci"); !ok || got.Role != auth.RoleOperator {
		t.Errorf("ByName(ci) = %+v, %v", got, ok)
	}
}

// Every mistake is named by its line, all at once, and no token is shown.
func TestParseTokensRefuses(t *testing.T) {
	for _, tc := range []struct{ name, file, want string }{
		{"no users", "# nothing\n\n", "no users"},
		{"two fields", "token-0123456789abcdef,alice\n", "line 1: want token,user,role[,namespace;namespace…]"},
		{"five fields", "token-0123456789abcdef,alice,admin,,x\n", "line 1: want token,user,role"},
		{"empty user", "token-0123456789abcdef,,admin\n", "line 1: user is empty"},
		{"unknown role", "token-0123456789abcdef,alice,root\n", `line 1: role "root": want read-only, operator or admin`},
		{"operator without namespaces", "token-0123456789abcdef,ci,operator\n", `line 1: user "ci": an operator needs its namespaces`},
		{"admin with namespaces", "token-0123456789abcdef,alice,admin,demo\n", `line 1: user "alice": only an operator has namespaces`},
		{"bad namespace", "token-0123456789abcdef,ci,operator,demo;a/b\n", `line 1: namespace "a/b": not a namespace`},
		{"short token", "short-secret,alice,admin\n", "line 1: token shorter than 16 characters"},
		{"token with a space", "token 0123456789abcdef,alice,admin\n", "line 1: token holds a character other than"},
		{"same token twice", "token-0123456789abcdef,alice,admin\ntoken-0123456789abcdef,bob,admin\n", "line 2: the token of an earlier line again"},
		{"user with two roles", "token-0123456789abcdef,alice,admin\ntoken-0123456789abcdeg,alice,read-only\n", `line 2: user "alice": another line gives it role admin`},
		{"every line", "short-secret,alice,admin\n# ok\ntoken-0123456789abcdef,bob,god\n", "line 1: token shorter than 16 characters\nline 3: role \"god\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := auth.ParseTokens(strings.NewReader(tc.file))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, errdefs.ErrInvalidArgument) {
				t.Fatalf("err = %v, want one containing %q (invalid argument)", err, tc.want)
			}
			for _, secret := range []string{"token-0123456789abcdef", "short-secret", "token 0123456789abcdef"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("the error shows the token %q: %v", secret, err)
				}
			}
		})
	}
}

func TestParseCertRoles(t *testing.T) {
	users, err := auth.ParseCertRoles(strings.NewReader("alice,admin\nci-bot,operator,demo\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := users.ByName("ci-bot"); !reflect.DeepEqual(got, auth.Identity{User: "ci-bot", Role: auth.RoleOperator, Namespaces: []string{"demo"}}) {
		t.Errorf("ByName(ci-bot) = %+v", got)
	}
	if _, err := auth.ParseCertRoles(strings.NewReader("alice,admin\nalice,admin\n")); err == nil || !strings.Contains(err.Error(), `line 2: user "alice" is named twice`) {
		t.Errorf("a user twice: %v", err)
	}
}

// The first start makes the token (0600), the next ones read it back.
func TestEnsureAdminToken(t *testing.T) {
	path := filepath.Join(t.TempDir(), "admin.token")
	random := strings.NewReader(strings.Repeat("k", 32))
	users, created, err := auth.EnsureAdminToken(path, random)
	if err != nil || !created {
		t.Fatalf("EnsureAdminToken = %v, created %v", err, created)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600", fi.Mode().Perm())
	}
	data, _ := os.ReadFile(path)
	token := strings.TrimSpace(string(data))
	if want := strings.Repeat("6b", 32); token != want {
		t.Errorf("token = %q, want the random bytes in hex %q", token, want)
	}
	if id, ok := users.ByToken(token); !ok || id.User != auth.AdminUser || id.Role != auth.RoleAdmin {
		t.Errorf("ByToken = %+v, %v", id, ok)
	}
	again, created, err := auth.EnsureAdminToken(path, iotest.ErrReader(errors.New("no randomness needed")))
	if err != nil || created {
		t.Fatalf("second EnsureAdminToken = %v, created %v", err, created)
	}
	if _, ok := again.ByToken(token); !ok {
		t.Error("the second start does not take the first one's token")
	}
	if err := os.WriteFile(path, []byte("short\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := auth.EnsureAdminToken(path, random); err == nil || !strings.Contains(err.Error(), "delete it to make a new one") || strings.Contains(err.Error(), "short") {
		t.Errorf("a broken token file: %v", err)
	}
}
