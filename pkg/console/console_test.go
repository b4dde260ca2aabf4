package console_test

import (
	"crypto/tls"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/auth"
	"github.com/bcs-mesos/bcs-mesos/pkg/console"
)

const token = "console-admin-token-0123456789"

func serve(t *testing.T, withAuth bool, tlsServer bool) *httptest.Server {
	t.Helper()
	cfg := console.Config{Logger: slog.New(slog.DiscardHandler)}
	if withAuth {
		users, err := auth.ParseTokens(strings.NewReader(token + ",alice,admin\n"))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Authenticator = &auth.Authenticator{Tokens: users}
	}
	var srv *httptest.Server
	if tlsServer {
		srv = httptest.NewTLSServer(console.New(cfg))
	} else {
		srv = httptest.NewServer(console.New(cfg))
	}
	t.Cleanup(srv.Close)
	return srv
}

type answer struct {
	status int
	header http.Header
	body   string
}

func send(t *testing.T, srv *httptest.Server, method, path string, form url.Values, headers ...string) answer {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, srv.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	client := srv.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, string(data)}
}

func session(value string) []string { return []string{"Cookie", auth.SessionCookie + "=" + value} }

// The console's login: the token is checked, kept in an HttpOnly,
// SameSite=Strict cookie for every path (Secure over TLS), and never
// written into a page or a URL; a page without a session goes to the
// login; each refusal says why and sets no cookie.
func TestLogin(t *testing.T) {
	srv := serve(t, true, false)
	if a := send(t, srv, "GET", "/ui/apps/demo/web", nil); a.status != http.StatusSeeOther || a.header.Get("Location") != "/ui/login" {
		t.Errorf("a page without a session = %d %q, want 303 to /ui/login", a.status, a.header.Get("Location"))
	}
	if a := send(t, srv, "GET", "/ui/", nil, session("not-a-known-token-000")...); a.status != http.StatusSeeOther {
		t.Errorf("a page with an unknown session = %d, want 303 to the login", a.status)
	}
	if a := send(t, srv, "GET", "/ui/login", nil); a.status != http.StatusOK || !strings.Contains(a.body, `name="token"`) {
		t.Errorf("GET /ui/login = %d %s", a.status, a.body)
	}

	for _, tc := range []struct {
		name    string
		token   string
		headers []string
		status  int
		why     string
	}{
		{"an unknown token", "not-a-known-token-000", nil, http.StatusUnauthorized, "unknown token"},
		{"no token", "", nil, http.StatusUnauthorized, "unknown token"},
		{"a form larger than a token", token + strings.Repeat("x", 5000), nil, http.StatusUnauthorized, "unknown token"},
		{"a form of another site (Sec-Fetch-Site)", token, []string{"Sec-Fetch-Site", "cross-site"}, http.StatusForbidden, "from another site"},
		{"a form of another site (Origin)", token, []string{"Origin", "https://evil.example"}, http.StatusForbidden, "from another site"},
		{"a form of a sibling site", token, []string{"Sec-Fetch-Site", "same-site"}, http.StatusForbidden, "from another site"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := send(t, srv, "POST", "/ui/login", url.Values{"token": {tc.token}}, tc.headers...)
			if a.status != tc.status || !strings.Contains(a.body, tc.why) || a.header.Get("Set-Cookie") != "" {
				t.Errorf("login = %d (cookie %q) %s; want %d saying %q and no cookie", a.status, a.header.Get("Set-Cookie"), a.body, tc.status, tc.why)
			}
		})
	}

	a := send(t, srv, "POST", "/ui/login", url.Values{"token": {" " + token + "\n"}}, "Origin", srv.URL, "Sec-Fetch-Site", "same-origin")
	cookies := (&http.Response{Header: a.header}).Cookies()
	if a.status != http.StatusSeeOther || a.header.Get("Location") != "/ui/" || len(cookies) != 1 {
		t.Fatalf("login = %d %q %v, want 303 to /ui/ with the session cookie", a.status, a.header.Get("Location"), cookies)
	}
	c := cookies[0]
	if c.Name != auth.SessionCookie || c.Value != token || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || c.Secure {
		t.Errorf("session cookie %+v: want the token, HttpOnly, SameSite=Strict, path /, not Secure over plain HTTP", c)
	}
	shell := send(t, srv, "GET", "/ui/deployments/demo/fleet/rollout", nil, session(token)...)
	if shell.status != http.StatusOK || !strings.Contains(shell.body, "alice") || !strings.Contains(shell.body, `data-role="admin"`) ||
		!strings.Contains(shell.body, `action="/ui/logout"`) || strings.Contains(shell.body, token) {
		t.Errorf("the shell with a session = %d %s; want alice, her role, a logout and never the token", shell.status, shell.body)
	}
	if csp := shell.header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("Content-Security-Policy %q", csp)
	}

	if a := send(t, srv, "POST", "/ui/logout", nil, "Sec-Fetch-Site", "cross-site"); a.status != http.StatusForbidden || a.header.Get("Set-Cookie") != "" {
		t.Errorf("a logout posted by another site = %d, want 403 and the cookie kept", a.status)
	}
	out := send(t, srv, "POST", "/ui/logout", nil, "Sec-Fetch-Site", "same-origin")
	cleared := (&http.Response{Header: out.header}).Cookies()
	if out.status != http.StatusSeeOther || out.header.Get("Location") != "/ui/login" || len(cleared) != 1 || cleared[0].MaxAge >= 0 || cleared[0].Value != "" {
		t.Errorf("logout = %d %q %+v, want 303 to the login clearing the cookie", out.status, out.header.Get("Location"), cleared)
	}
}

// Over TLS the session cookie is Secure: never sent over plain HTTP.
func TestLoginOverTLSSetsASecureCookie(t *testing.T) {
	srv := serve(t, true, true)
	srv.Client().Transport.(*http.Transport).TLSClientConfig.MinVersion = tls.VersionTLS12
	a := send(t, srv, "POST", "/ui/login", url.Values{"token": {token}})
	cookies := (&http.Response{Header: a.header}).Cookies()
	if len(cookies) != 1 || !cookies[0].Secure {
		t.Errorf("cookies over TLS: %+v, want a Secure session cookie", cookies)
	}
}

// Where the API runs without authentication the console does too: no
// login, no logout.
func TestNoAuthentication(t *testing.T) {
	srv := serve(t, false, false)
	if a := send(t, srv, "GET", "/ui/", nil); a.status != http.StatusOK || strings.Contains(a.body, "/ui/logout") {
		t.Errorf("the shell without authentication = %d %s, want it with no logout", a.status, a.body)
	}
	if a := send(t, srv, "GET", "/ui/login", nil); a.status != http.StatusSeeOther || a.header.Get("Location") != "/ui/" {
		t.Errorf("the login without authentication = %d %q, want 303 to /ui/", a.status, a.header.Get("Location"))
	}
}

// The scripts and styles are the binary's own, served to anybody (they
// hold no data), revalidated by their content hash.
func TestAssets(t *testing.T) {
	srv := serve(t, true, false)
	for path, kind := range map[string]string{"/ui/assets/main.js": "text/javascript", "/ui/assets/pages/rollout.js": "text/javascript", "/ui/assets/style.css": "text/css"} {
		a := send(t, srv, "GET", path, nil)
		if a.status != http.StatusOK || !strings.HasPrefix(a.header.Get("Content-Type"), kind) || a.header.Get("ETag") == "" {
			t.Errorf("GET %s = %d %q etag %q", path, a.status, a.header.Get("Content-Type"), a.header.Get("ETag"))
			continue
		}
		if again := send(t, srv, "GET", path, nil, "If-None-Match", a.header.Get("ETag")); again.status != http.StatusNotModified {
			t.Errorf("GET %s again with its ETag = %d, want 304", path, again.status)
		}
	}
	for _, path := range []string{"/ui/assets/missing.js", "/ui/assets/../templates/shell.html", "/ui/assets/"} {
		if a := send(t, srv, "GET", path, nil); a.status == http.StatusOK || strings.Contains(a.body, "{{") {
			t.Errorf("GET %s = %d %s, want no file", path, a.status, a.body)
		}
	}
}
