package api_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/internal/testpki"
	"github.com/bcs-mesos/bcs-mesos/pkg/api"
	"github.com/bcs-mesos/bcs-mesos/pkg/auth"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
	"github.com/bcs-mesos/bcs-mesos/pkg/tlsfiles"
)

// The callers of the tests: one per role.
const (
	adminToken    = "admin-token-4f8a1c2e9b"
	readerToken   = "reader-token-7d3b5a0f1e"
	operatorToken = "operator-token-2c6e8d4a7f"
)

const tokenFile = adminToken + ",alice,admin\n" +
	readerToken + ",grafana,read-only\n" +
	operatorToken + ",ci,operator,demo;staging\n"

// syncBuffer is a log destination the server writes while the test reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// newAuthEnv serves the API with the token file above and the audit log
// keeping keep entries; its log goes to the returned buffer.
func newAuthEnv(t *testing.T, keep int64, change ...func(*api.Config)) (*env, *syncBuffer) {
	t.Helper()
	users, err := auth.ParseTokens(strings.NewReader(tokenFile))
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	withAuth := func(c *api.Config) {
		c.Auth = &api.AuthConfig{Authenticator: &auth.Authenticator{Tokens: users}, AuditKeep: keep}
		c.Logger = slog.New(slog.NewJSONHandler(logs, nil))
	}
	return newEnv(t, append([]func(*api.Config){withAuth}, change...)...), logs
}

func bearer(token string) []string { return []string{"Authorization", "Bearer " + token} }

// Without a known token only /healthz, /metrics and
// /openapi.json answer; the 401 says why and asks for a bearer token.
func TestAuthenticationRequired(t *testing.T) {
	e, _ := newAuthEnv(t, 0)
	for _, path := range []string{"/healthz", "/metrics", "/openapi.json"} {
		if r := e.call(t, "GET", path, nil); r.status != http.StatusOK {
			t.Errorf("GET %s without a token = %d, want 200", path, r.status)
		}
	}
	for _, tc := range []struct {
		name, method, path string
		headers            []string
		why                string
	}{
		{"no token", "GET", "/v1/apps", nil, "no credentials: send Authorization: Bearer <token>"},
		{"no token, a write", "POST", "/v1/configmaps", nil, "no credentials"},
		{"no token, the stream", "GET", "/v1/events", nil, "no credentials"},
		{"unknown token", "GET", "/v1/agents", bearer("not-a-known-token-0000"), "unknown bearer token"},
		{"a token of another scheme", "GET", "/v1/apps", []string{"Authorization", "Basic " + adminToken}, `not "Bearer <token>"`},
		{"an empty bearer", "GET", "/v1/apps", []string{"Authorization", "Bearer "}, `not "Bearer <token>"`},
		{"a bad query still 401", "GET", "/v1/apps?bogus=1", nil, "no credentials"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body any
			if tc.method == "POST" {
				body = configMap("cm", "demo")
			}
			r := e.call(t, tc.method, tc.path, body, tc.headers...)
			got := errorOf(t, r, http.StatusUnauthorized, "Unauthenticated")
			if !strings.Contains(got.Message, tc.why) {
				t.Errorf("message %q, want it to say %q", got.Message, tc.why)
			}
			if h := r.header.Get("WWW-Authenticate"); !strings.HasPrefix(h, "Bearer") {
				t.Errorf("WWW-Authenticate = %q, want Bearer", h)
			}
		})
	}
	if keys := e.storedKeys(t); len(keys) != 0 {
		t.Errorf("refused requests stored %q", keys)
	}
}

// The roles over real HTTP: each route's namespace comes from its
// path, its query, the ID it names or the manifest it sends.
func TestAuthorizationByRole(t *testing.T) {
	e, _ := newAuthEnv(t, 0)
	e.call(t, "POST", "/v1/configmaps", configMap("cm", "prod"), bearer(adminToken)...)
	prodApp := process("api", "prod")
	demoApp := process("web", "demo")
	for _, tc := range []struct {
		name         string
		token        string
		method, path string
		body         any
		want         int
		denied       string // what the 403 names
	}{
		{"admin creates anywhere", adminToken, "POST", "/v1/apps", prodApp, http.StatusCreated, ""},
		{"admin sets the engine", adminToken, "PUT", "/v1/engine", map[string]string{"mode": "running"}, http.StatusOK, ""},
		{"admin changes the engine's configuration", adminToken, "PATCH", "/v1/engine/config", map[string]int{"maxLaunching": 100}, http.StatusOK, ""},
		{"reader lists every namespace", readerToken, "GET", "/v1/apps", nil, http.StatusOK, ""},
		{"reader reads an object", readerToken, "GET", "/v1/configmaps/prod/cm", nil, http.StatusOK, ""},
		{"reader reads the agents", readerToken, "GET", "/v1/agents", nil, http.StatusOK, ""},
		{"reader plans (a read)", readerToken, "POST", "/v1/plan", demoApp, http.StatusServiceUnavailable, ""},
		{"reader creates", readerToken, "POST", "/v1/configmaps", configMap("cm", "demo"), http.StatusForbidden, `user "grafana" (role read-only) writes nothing`},
		{"reader deletes", readerToken, "DELETE", "/v1/configmaps/prod/cm", nil, http.StatusForbidden, "(role read-only) writes nothing"},
		{"reader scales", readerToken, "POST", "/v1/apps/prod/api/scale", map[string]int{"instances": 1}, http.StatusForbidden, "writes nothing"},
		{"operator creates in its namespace", operatorToken, "POST", "/v1/apps", demoApp, http.StatusCreated, ""},
		{"operator scales in its namespace", operatorToken, "POST", "/v1/apps/demo/web/scale", map[string]int{"instances": 1}, http.StatusAccepted, ""},
		{"operator lists its namespace", operatorToken, "GET", "/v1/apps?namespace=demo", nil, http.StatusOK, ""},
		{"operator reads the agents", operatorToken, "GET", "/v1/agents", nil, http.StatusOK, ""},
		{"operator creates in another namespace", operatorToken, "POST", "/v1/apps", process("x", "prod"), http.StatusForbidden,
			`user "ci" (role operator) may not write namespace "prod": its namespaces are demo, staging`},
		{"operator creates in the default namespace", operatorToken, "POST", "/v1/configmaps", configMap("cm", ""), http.StatusForbidden,
			`may not write namespace "defaultGroup"`},
		{"operator updates another namespace", operatorToken, "PUT", "/v1/configmaps/prod/cm", configMap("cm", "prod"), http.StatusForbidden, `may not write namespace "prod"`},
		{"operator deletes in another namespace", operatorToken, "DELETE", "/v1/apps/prod/api", nil, http.StatusForbidden, `may not write namespace "prod"`},
		{"operator reads another namespace", operatorToken, "GET", "/v1/configmaps/prod/cm", nil, http.StatusForbidden, `may not read namespace "prod"`},
		{"operator lists every namespace", operatorToken, "GET", "/v1/apps", nil, http.StatusForbidden, "reads only its namespaces (demo, staging): name one (?namespace=)"},
		{"operator restarts an instance of another namespace", operatorToken, "POST", "/v1/taskgroups/prod_api_0_1/restart", nil, http.StatusForbidden, `may not write namespace "prod"`},
		{"operator runs a command in another namespace", operatorToken, "POST", "/v1/commands",
			map[string]any{"apiVersion": "v4", "kind": "command", "spec": map[string]any{"commandTargetRef": map[string]string{"kind": "application", "name": "api", "namespace": "prod"}, "command": []string{"true"}}},
			http.StatusForbidden, `may not write namespace "prod"`},
		{"operator uses the seed's depends route elsewhere", operatorToken, "DELETE", "/api/depends?name=x", nil, http.StatusForbidden, `may not write namespace "defaultGroup"`},
		{"operator cordons an agent", operatorToken, "POST", "/v1/agents/agent-1/cordon", nil, http.StatusForbidden,
			"may not change cluster-wide settings (agents, engine, notify callbacks): admin only"},
		{"operator sets the engine", operatorToken, "PUT", "/v1/engine", map[string]string{"mode": "stopped"}, http.StatusForbidden, "admin only"},
		{"operator reads the engine's configuration", operatorToken, "GET", "/v1/engine/config", nil, http.StatusOK, ""},
		{"operator changes the engine's configuration", operatorToken, "PATCH", "/v1/engine/config", map[string]int{"maxLaunching": 1}, http.StatusForbidden, "admin only"},
		{"operator changes it by the seed's route", operatorToken, "PATCH", "/api/engine/config", map[string]int{"maxLaunching": 1}, http.StatusForbidden, "admin only"},
		{"operator registers a callback", operatorToken, "POST", "/v1/notifies", map[string]string{"callback": "http://10.0.0.9/x"}, http.StatusForbidden, "admin only"},
		{"operator follows another namespace's events", operatorToken, "GET", "/v1/events?namespace=prod", nil, http.StatusForbidden, `may not read namespace "prod"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.call(t, tc.method, tc.path, tc.body, bearer(tc.token)...)
			if tc.want != http.StatusForbidden {
				if r.status != tc.want {
					t.Fatalf("%s %s = %d, want %d; body %s", tc.method, tc.path, r.status, tc.want, r.body)
				}
				return
			}
			got := errorOf(t, r, http.StatusForbidden, "Forbidden")
			if !strings.Contains(got.Message, tc.denied) || !strings.HasPrefix(got.Message, tc.method+" ") {
				t.Errorf("message %q, want the request and %q", got.Message, tc.denied)
			}
		})
	}
	var apps struct{ Apps []api.AppView }
	e.expectAs(t, adminToken, http.StatusOK, "GET", "/v1/apps", nil, &apps)
	if len(apps.Apps) != 2 {
		t.Errorf("apps = %+v, want the two allowed creates only", apps.Apps)
	}
}

// expect as a caller: the env's expect with a bearer token.
func (e *env) expectAs(t *testing.T, token string, want int, method, path string, body, out any) {
	t.Helper()
	r := e.call(t, method, path, body, bearer(token)...)
	if r.status != want {
		t.Fatalf("%s %s = %d, want %d; body %s", method, path, r.status, want, r.body)
	}
	if out != nil {
		if err := json.Unmarshal(r.body, out); err != nil {
			t.Fatalf("decoding %s: %v", r.body, err)
		}
	}
}

type auditPage struct {
	Entries []registry.AuditEntry `json:"entries"`
	Next    string                `json:"next"`
}

// The audit log: every write of a known caller — done, refused or
// failed — is one log line and one entry of GET /v1/audit, with who, the
// role, the route, the namespace and name, the status and the error code;
// never a secret value, a token or a body.
func TestAuditRecordsEveryWrite(t *testing.T) {
	e, logs := newAuthEnv(t, 0)
	start := time.Now().Add(-time.Second)
	e.expectAs(t, adminToken, http.StatusCreated, "POST", "/v1/secrets", secret("db", "demo"), nil)
	e.expectAs(t, operatorToken, http.StatusCreated, "POST", "/v1/configmaps", configMap("cm", "demo"), nil)
	e.expectAs(t, operatorToken, http.StatusForbidden, "DELETE", "/v1/secrets/prod/db", nil, nil)
	e.expectAs(t, readerToken, http.StatusForbidden, "POST", "/v1/secrets", secret("db", "staging"), nil)
	e.expectAs(t, adminToken, http.StatusNotFound, "DELETE", "/v1/configmaps/demo/missing", nil, nil)
	e.expectAs(t, adminToken, http.StatusOK, "GET", "/v1/secrets/demo/db", nil, nil) // a read: not audited
	// A dry run changes nothing, the audit log included.
	e.expectAs(t, adminToken, http.StatusServiceUnavailable, "POST", "/v1/apps?dryRun=true", application("dry", "demo"), nil)
	e.call(t, "DELETE", "/v1/secrets/demo/db", nil) // nobody: the log line only

	var page auditPage
	e.expectAs(t, readerToken, http.StatusOK, "GET", "/v1/audit", nil, &page)
	type row struct {
		user, role, route, ns, name string
		status                      int
		code                        string
	}
	var got []row
	for _, en := range page.Entries {
		got = append(got, row{en.User, en.Role, en.Route, en.Namespace, en.Name, en.Status, en.Code})
		if en.Time.Before(start) || en.Method == "" || !strings.HasPrefix(en.Path, "/v1/") || en.ID == "" {
			t.Errorf("entry %+v: want its time, method, path and id", en)
		}
	}
	want := []row{ // newest first
		{"alice", "admin", "DELETE /v1/configmaps/{ns}/{name}", "demo", "missing", 404, "NotFound"},
		{"grafana", "read-only", "POST /v1/secrets", "staging", "db", 403, "Forbidden"},
		{"ci", "operator", "DELETE /v1/secrets/{ns}/{name}", "prod", "db", 403, "Forbidden"},
		{"ci", "operator", "POST /v1/configmaps", "demo", "cm", 201, ""},
		{"alice", "admin", "POST /v1/secrets", "demo", "db", 201, ""},
	}
	if len(got) != len(want) {
		t.Fatalf("audit = %+v\nwant %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("entry %d = %+v, want %+v", i, got[i], want[i])
		}
	}

	// The log has the same lines, and the refused write without a caller.
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	audited := 0
	for _, line := range lines {
		var l map[string]any
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if l["msg"] == "audit" {
			audited++
		}
	}
	if audited != len(want) || !strings.Contains(logs.String(), `"msg":"unauthenticated write refused"`) {
		t.Errorf("log: %d audit lines, want %d, and the unauthenticated write:\n%s", audited, len(want), logs)
	}

	// Filters: user, namespace, since; an operator reads its namespaces.
	for _, tc := range []struct {
		token, query string
		want         int
	}{
		{readerToken, "?user=ci", 2},
		{readerToken, "?namespace=demo", 3},
		{adminToken, "?since=" + time.Now().Add(time.Hour).UTC().Format(time.RFC3339), 0},
		{adminToken, "?limit=2", 2},
		{operatorToken, "?namespace=demo", 3},
	} {
		var p auditPage
		e.expectAs(t, tc.token, http.StatusOK, "GET", "/v1/audit"+tc.query, nil, &p)
		if len(p.Entries) != tc.want {
			t.Errorf("GET /v1/audit%s: %d entries, want %d", tc.query, len(p.Entries), tc.want)
		}
	}
	e.expectAs(t, operatorToken, http.StatusForbidden, "GET", "/v1/audit", nil, nil)
	e.expectAs(t, operatorToken, http.StatusForbidden, "GET", "/v1/audit?namespace=prod", nil, nil)
	errorOf(t, e.call(t, "GET", "/v1/audit?since=yesterday", nil, bearer(adminToken)...), http.StatusBadRequest, "InvalidArgument")

	// No secret value, token or body anywhere.
	r := e.call(t, "GET", "/v1/audit", nil, bearer(adminToken)...)
	for _, leak := range []string{secretContent, adminToken, operatorToken, readerToken, `"data"`, `"datas"`} {
		if strings.Contains(string(r.body), leak) || strings.Contains(logs.String(), leak) {
			t.Errorf("%q is in the audit log or the log lines", leak)
		}
	}
}

// The audit log keeps its newest AuditKeep entries.
func TestAuditKeepsTheNewest(t *testing.T) {
	e, _ := newAuthEnv(t, 3)
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		e.expectAs(t, adminToken, http.StatusCreated, "POST", "/v1/configmaps", configMap(name, "demo"), nil)
	}
	var page auditPage
	e.expectAs(t, adminToken, http.StatusOK, "GET", "/v1/audit", nil, &page)
	var names []string
	for _, en := range page.Entries {
		names = append(names, en.Name)
	}
	if strings.Join(names, ",") != "e,d,c" {
		t.Errorf("audit keeps %v, want e,d,c", names)
	}
}

// registryOnOwnEtcd is a registry on an embedded etcd of its own, its
// store's requests timing out after 2 s, and what stops that etcd.
func registryOnOwnEtcd(t *testing.T) (*registry.Registry, func()) {
	t.Helper()
	etcd, err := store.StartEmbedded(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { etcd.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := store.Open(ctx, store.Config{Endpoints: etcd.Endpoints(), Sealer: shared.Sealer, RequestTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return registry.New(st, time.Now), func() { etcd.Close() }
}

// A write refused because etcd cannot be reached is answered
// when its store request times out (2 s here), not once its audit entry,
// which waits for the same etcd as long, was tried too.
func TestWriteAnsweredBeforeItsAuditWhenEtcdIsDown(t *testing.T) {
	reg, stopEtcd := registryOnOwnEtcd(t)
	e, logs := newAuthEnv(t, 10, func(c *api.Config) { c.Registry = reg })
	stopEtcd()
	start := time.Now()
	errorOf(t, e.call(t, "POST", "/v1/configmaps", configMap("cm", "demo"), bearer(adminToken)...), http.StatusServiceUnavailable, "Unavailable")
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("answered after %s, want the store's 2 s timeout, not twice that", took.Round(time.Millisecond))
	}
	// The entry is still tried, behind the answer's back.
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(logs.String(), "audit entry not stored") {
		if time.Now().After(deadline) {
			t.Fatalf("the audit entry was not tried: %s", logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// An operator's event stream leaves out the namespaces it may not read.
func TestEventStreamShowsWhatTheCallerMayRead(t *testing.T) {
	e, _ := newAuthEnv(t, 0)
	stream := e.subscribe(t, "?type=app", bearer(operatorToken)...)
	for _, ns := range []string{"prod", "demo", "other", "staging"} {
		e.expectAs(t, adminToken, http.StatusCreated, "POST", "/v1/apps", process("web", ns), nil)
	}
	got := describeAll(stream.until(func(c streamed) bool { return c.Namespace == "staging" }))
	if want := "app put demo/web,app put staging/web"; strings.Join(got, ",") != want {
		t.Errorf("operator's stream: %q, want %s", got, want)
	}
}

// A notification is in the namespace of its instance: an operator's
// stream shows those of its namespaces only, as GET answers them (a 403
// for another's); a reader's shows every one. A delete, whose record is
// gone, is placed by the record it removed. ?namespace= selects them.
func TestEventStreamShowsNotificationsOfTheCallersNamespaces(t *testing.T) {
	e, _ := newAuthEnv(t, 0)
	operator := e.subscribe(t, "?type=notification", bearer(operatorToken)...)
	reader := e.subscribe(t, "?type=notification", bearer(readerToken)...)
	prodOnly := e.subscribe(t, "?type=notification&namespace=prod", bearer(readerToken)...)
	ctx := context.Background()
	notify := func(id, ns string, index int) {
		tg := taskGroup(ns, "web", index, "TASK_FAILED")
		notice := registry.Notice{ID: id, Type: registry.NoticeExit, Namespace: ns, App: "web", TaskGroupID: tg.ID,
			State: "TASK_FAILED", Message: "the game of " + ns + " exited"}
		if err := e.reg.PutTaskGroup(ctx, &tg, notice); err != nil {
			t.Fatal(err)
		}
	}
	notify("n1", "prod", 0)
	notify("n2", "demo", 0)
	notify("n3", "staging", 0)
	prod, err := e.reg.GetNotification(ctx, "n1")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.reg.DeleteNotification(ctx, prod.ID, prod.Revision); err != nil {
		t.Fatal(err)
	}
	notify("n4", "demo", 1)

	seen := func(stream *eventStream, last string) string {
		var got []string
		for _, c := range stream.until(func(c streamed) bool { return c.Name == last }) {
			got = append(got, c.String())
		}
		return strings.Join(got, ",")
	}
	for _, tc := range []struct {
		name   string
		stream *eventStream
		last   string
		want   string
	}{
		{"operator of demo and staging", operator, "n4", "notification put demo/n2,notification put staging/n3,notification put demo/n4"},
		{"reader", reader, "n4", "notification put prod/n1,notification put demo/n2,notification put staging/n3," +
			"notification delete prod/n1,notification put demo/n4"},
		{"reader of prod", prodOnly, "n1", "notification put prod/n1"},
	} {
		if got := seen(tc.stream, tc.last); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
	if got := seen(prodOnly, "n1"); got != "notification delete prod/n1" {
		t.Errorf("reader of prod, then: %s, want the delete", got)
	}
	if r := e.call(t, "GET", "/v1/notifications/n3", nil, bearer(operatorToken)...); r.status != http.StatusOK {
		t.Errorf("GET of a notification of staging as its operator: %d %s", r.status, r.body)
	}
	notify("n5", "prod", 1)
	errorOf(t, e.call(t, "GET", "/v1/notifications/n5", nil, bearer(operatorToken)...), http.StatusForbidden, "Forbidden")
}

// Over TLS, a client certificate the --client-ca signed names
// its user (its common name), whose role comes from --cert-roles or the
// token file; a certificate of another CA is refused in the handshake.
func TestClientCertificates(t *testing.T) {
	ca := testpki.NewCA(t, "bcs test CA")
	server := ca.Issue(t, "bcs-scheduler")
	tlsConfig, err := tlsfiles.Server(server.CertFile, server.KeyFile, ca.CertFile)
	if err != nil {
		t.Fatal(err)
	}
	tokens, _ := auth.ParseTokens(strings.NewReader(tokenFile))
	certRoles, err := auth.ParseCertRoles(strings.NewReader("deploy-bot,operator,demo\n"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg api.Config
	newEnv(t, func(c *api.Config) {
		c.Auth = &api.AuthConfig{Authenticator: &auth.Authenticator{Tokens: tokens, CertRoles: certRoles}}
		cfg = *c
	})
	srv := httptest.NewUnstartedServer(api.NewServer(cfg))
	srv.TLS = tlsConfig
	srv.StartTLS()
	t.Cleanup(srv.Close)

	client := func(cert *tls.Certificate) *http.Client {
		c := &tls.Config{RootCAs: ca.Pool(), ServerName: "127.0.0.1"}
		if cert != nil {
			// Sent whoever signed it: the server is the one to refuse.
			c.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil }
		}
		return &http.Client{Transport: &http.Transport{TLSClientConfig: c}, Timeout: 10 * time.Second}
	}
	certOf := func(signer *testpki.CA, cn string) *tls.Certificate {
		kp := signer.Issue(t, cn)
		c, err := tls.LoadX509KeyPair(kp.CertFile, kp.KeyFile)
		if err != nil {
			t.Fatal(err)
		}
		return &c
	}
	status := func(c *http.Client, method, path string, token string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := c.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	otherCA := testpki.NewCA(t, "someone else's CA")
	for _, tc := range []struct {
		name         string
		cert         *tls.Certificate
		token        string
		method, path string
		want         int
		says         string
	}{
		{"cert-roles operator reads its namespace", certOf(ca, "deploy-bot"), "", "GET", "/v1/apps?namespace=demo", 200, ""},
		{"cert-roles operator elsewhere", certOf(ca, "deploy-bot"), "", "DELETE", "/v1/apps/prod/x", 403, `user \"deploy-bot\" (role operator) may not write namespace \"prod\"`},
		{"token file user by certificate", certOf(ca, "grafana"), "", "GET", "/v1/agents", 200, ""},
		{"token file user by certificate writes", certOf(ca, "grafana"), "", "PUT", "/v1/engine", 403, "(role read-only) writes nothing"},
		{"unknown user", certOf(ca, "mallory"), "", "GET", "/v1/apps", 401, `client certificate of \"mallory\": no such user`},
		{"no certificate, no token", nil, "", "GET", "/v1/apps", 401, "no credentials"},
		{"no certificate, a token", nil, adminToken, "GET", "/v1/apps", 200, ""},
		{"a token wins over the certificate", certOf(ca, "deploy-bot"), adminToken, "GET", "/v1/apps", 200, ""},
		{"health needs nothing", nil, "", "GET", "/healthz", 200, ""},
		{"another CA's certificate", certOf(otherCA, "alice"), "", "GET", "/healthz", 0, "certificate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, body := status(client(tc.cert), tc.method, tc.path, tc.token)
			if got != tc.want || !strings.Contains(body, tc.says) {
				t.Errorf("%s %s = %d %s, want %d saying %q", tc.method, tc.path, got, body, tc.want, tc.says)
			}
		})
	}
}

// The web console's session cookie over real HTTP: reads and the event
// stream take it alone; a write takes it only with the console's header
// (a cross-site form can send the cookie, not the header), else it is a
// 401 that stores nothing and leaves only a log line; a write with both is
// audited as the cookie's caller; a cookie of an unknown token is a 401.
func TestConsoleSessionCookie(t *testing.T) {
	e, logs := newAuthEnv(t, 0)
	session := func(token string) []string { return []string{"Cookie", auth.SessionCookie + "=" + token} }
	console := []string{auth.ConsoleHeader, "1"}

	if r := e.call(t, "GET", "/v1/apps", nil, session(readerToken)...); r.status != http.StatusOK {
		t.Fatalf("GET /v1/apps with the session cookie = %d %s", r.status, r.body)
	}
	stream := e.subscribe(t, "?type=app", session(readerToken)...)

	for _, tc := range []struct {
		name    string
		method  string
		path    string
		headers []string
		why     string
	}{
		{"a create without the console's header", "POST", "/v1/configmaps", session(adminToken), "only with the header " + auth.ConsoleHeader},
		{"a delete without the console's header", "DELETE", "/v1/configmaps/demo/cm", session(adminToken), "authenticates a DELETE only with the header"},
		{"an unknown token", "POST", "/v1/configmaps", append(session("not-a-known-token-0000"), console...), "unknown token: log in again"},
		{"an unknown token, a read", "GET", "/v1/apps", session("not-a-known-token-0000"), "unknown token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body any
			if tc.method == "POST" {
				body = configMap("cm", "demo")
			}
			got := errorOf(t, e.call(t, tc.method, tc.path, body, tc.headers...), http.StatusUnauthorized, "Unauthenticated")
			if !strings.Contains(got.Message, tc.why) {
				t.Errorf("message %q, want it to say %q", got.Message, tc.why)
			}
		})
	}
	if keys := e.storedKeys(t); len(keys) != 0 {
		t.Fatalf("refused writes stored %q", keys)
	}
	if !strings.Contains(logs.String(), `"msg":"unauthenticated write refused"`) {
		t.Errorf("no log line of the refused writes:\n%s", logs)
	}

	e.expectAs(t, adminToken, http.StatusCreated, "POST", "/v1/apps", process("web", "demo"), nil)
	if r := e.call(t, "POST", "/v1/configmaps", configMap("cm", "demo"), append(session(adminToken), console...)...); r.status != http.StatusCreated {
		t.Fatalf("POST with the cookie and the console's header = %d %s", r.status, r.body)
	}
	var page auditPage
	e.expectAs(t, adminToken, http.StatusOK, "GET", "/v1/audit", nil, &page)
	if len(page.Entries) != 2 || page.Entries[0].User != "alice" || page.Entries[0].Route != "POST /v1/configmaps" {
		t.Errorf("audit = %+v, want the console's write under alice first", page.Entries)
	}
	if got := describeAll(stream.until(func(c streamed) bool { return c.Name == "web" })); strings.Join(got, ",") != "app put demo/web" {
		t.Errorf("the stream followed with the cookie: %q", got)
	}
	if strings.Contains(logs.String(), adminToken) {
		t.Errorf("a token is in the log")
	}
}

// Every route that takes a manifest reads it as its own kind before it
// authorizes the caller: a body of another kind is a 400 naming kind, for
// any caller (a read-only one too), and is audited; none panics (a
// non-command body to /v1/commands did: an empty reply, no audit entry).
func TestWrongKindBodiesAreRefusedAndAudited(t *testing.T) {
	e, _ := newAuthEnv(t, 0)
	secret := mustJSON(t, secret("db", "demo"))
	for _, tc := range []struct {
		method, path string
		body         []byte
		want         string
	}{
		{"POST", "/v1/commands", mustJSON(t, process("web", "demo")), `kind: want command here, got "process"`},
		{"POST", "/v1/commands", secret, `kind: want command here, got "secret"`},
		{"POST", "/v1/apps", secret, `kind: want application or process here, got "secret"`},
		{"POST", "/v1/deployments", secret, `kind: want deployment here, got "secret"`},
		{"POST", "/v1/daemonsets", secret, `kind: want daemonset here, got "secret"`},
		{"POST", "/v1/configmaps", secret, `kind: want configmap here, got "secret"`},
		{"POST", "/v1/secrets", mustJSON(t, process("web", "demo")), `kind: want secret here, got "process"`},
		{"POST", "/v1/hooktemplates", secret, `kind: want hooktemplate here, got "secret"`},
		{"POST", "/v1/services", secret, `kind: want service here, got "secret"`},
		{"POST", "/v1/depends", secret, `kind: want depends here, got "secret"`},
		{"POST", "/api/depends", secret, `kind: want depends here, got "secret"`},
		{"PUT", "/api/depends", secret, `kind: want depends here, got "secret"`},
		{"POST", "/v1/plan", secret, `kind: want application or process or deployment or daemonset or autoscaler here, got "secret"`},
	} {
		for _, token := range []string{readerToken, operatorToken} {
			r := e.call(t, tc.method, tc.path, tc.body, bearer(token)...)
			if got := errorOf(t, r, http.StatusBadRequest, "InvalidArgument"); !slices.Contains(got.Details, tc.want) {
				t.Errorf("%s %s as %s: details %q, want %q", tc.method, tc.path, token, got.Details, tc.want)
			}
		}
	}
	var page auditPage
	e.expectAs(t, adminToken, http.StatusOK, "GET", "/v1/audit?limit=1000", nil, &page)
	audited := map[string]int{}
	for _, entry := range page.Entries {
		if entry.Status == http.StatusBadRequest && entry.Code == "InvalidArgument" {
			audited[entry.Method+" "+entry.Path]++
		}
	}
	for _, route := range []string{"POST /v1/commands", "POST /v1/apps", "PUT /api/depends"} {
		if audited[route] < 2 {
			t.Errorf("%s refused: %d audit entries, want one per caller (%v)", route, audited[route], audited)
		}
	}
	if audited["POST /v1/plan"] != 0 {
		t.Errorf("a plan changes nothing and is not audited: %d entries", audited["POST /v1/plan"])
	}
}
