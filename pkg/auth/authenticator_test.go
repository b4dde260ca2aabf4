package auth_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/auth"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
)

// The web console's session cookie carries a token of the token file: a
// read with it is its caller's; a write only with the console's header
// too (a page of another site can make the browser send the cookie, not
// the header); a bearer token, when sent, wins over the cookie.
func TestAuthenticateSessionCookie(t *testing.T) {
	users, err := auth.ParseTokens(strings.NewReader(tokenFile))
	if err != nil {
		t.Fatal(err)
	}
	a := &auth.Authenticator{Tokens: users}
	request := func(method string, headers ...string) *http.Request {
		r := httptest.NewRequest(method, "/v1/apps", nil)
		for i := 0; i+1 < len(headers); i += 2 {
			r.Header.Set(headers[i], headers[i+1])
		}
		return r
	}
	session := func(token string) []string { return []string{"Cookie", auth.SessionCookie + "=" + token} }
	console := []string{auth.ConsoleHeader, "1"}
	for _, tc := range []struct {
		name    string
		request *http.Request
		user    string // "": refused
		why     string
	}{
		{"a read with the cookie", request("GET", session(adminToken)...), "alice", ""},
		{"a HEAD with the cookie", request("HEAD", session(readerToken)...), "grafana", ""},
		{"a write with the cookie and the header", request("POST", append(session(adminToken), console...)...), "alice", ""},
		{"a write with the cookie alone", request("POST", session(adminToken)...), "", "only with the header X-BCS-Console"},
		{"a delete with the cookie alone", request("DELETE", session(adminToken)...), "", "authenticates a DELETE only with the header"},
		{"an unknown token in the cookie", request("GET", session("not-a-known-token-0000")...), "", "unknown token: log in again"},
		{"an unknown token in the cookie of a write", request("PUT", append(session("not-a-known-token-0000"), console...)...), "", "unknown token"},
		{"the header without a cookie", request("POST", console...), "", "no credentials"},
		{"a bearer token wins", request("POST", append(session(adminToken), "Authorization", "Bearer "+readerToken)...), "grafana", ""},
		{"a bad bearer is not saved by the cookie", request("GET", append(session(adminToken), "Authorization", "Bearer nope-nope-nope-nope")...), "", "unknown bearer token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, err := a.Authenticate(tc.request)
			if tc.user != "" {
				if err != nil || id.User != tc.user {
					t.Fatalf("Authenticate = %+v, %v; want %s", id, err, tc.user)
				}
				return
			}
			if !errors.Is(err, errdefs.ErrUnauthenticated) || !strings.Contains(err.Error(), tc.why) {
				t.Fatalf("Authenticate = %+v, %v; want unauthenticated saying %q", id, err, tc.why)
			}
			if strings.Contains(err.Error(), adminToken) {
				t.Errorf("the error shows the token: %v", err)
			}
		})
	}
}
