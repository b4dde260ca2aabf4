package auth

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
)

// SessionCookie is the cookie the web console keeps its caller's bearer
// token in. It is HttpOnly: the console's scripts never see the token.
const SessionCookie = "bcs_session"

// ConsoleHeader is the header the web console's scripts send with every
// request. A write authenticated by SessionCookie needs it: a page of
// another site can make a browser send the cookie with a request (a form,
// an image) but not with a custom header, which takes a CORS preflight
// the API never grants.
const ConsoleHeader = "X-BCS-Console"

// Authenticator names the caller of a request: its bearer token, else the
// web console's session cookie, else its verified TLS client certificate.
type Authenticator struct {
	// Tokens are the bearer tokens; nil: none is accepted.
	Tokens UserSource
	// CertRoles give a certificate's common name its role; a name they
	// do not hold is looked up in Tokens by user. Nil: Tokens only.
	CertRoles UserSource
}

// Authenticate returns the caller of r, or an error wrapping
// errdefs.ErrUnauthenticated saying why there is none.
func (a *Authenticator) Authenticate(r *http.Request) (Identity, error) {
	if header := r.Header.Get("Authorization"); header != "" {
		scheme, token, _ := strings.Cut(header, " ")
		token = strings.TrimSpace(token)
		if !strings.EqualFold(scheme, "Bearer") || token == "" {
			return Identity{}, unauthenticated(errors.New(`the Authorization header is not "Bearer <token>"`))
		}
		return a.AuthenticateToken(token)
	}
	if cookie, err := r.Cookie(SessionCookie); err == nil && cookie.Value != "" {
		if r.Method != http.MethodGet && r.Method != http.MethodHead && r.Header.Get(ConsoleHeader) == "" {
			return Identity{}, unauthenticated(fmt.Errorf("the console's session cookie authenticates a %s only with the header %s, which the console sends and another site's page cannot", r.Method, ConsoleHeader))
		}
		id, err := a.AuthenticateToken(cookie.Value)
		if err != nil {
			return Identity{}, unauthenticated(errors.New("the console's session names an unknown token: log in again"))
		}
		return id, nil
	}
	if r.TLS != nil && len(r.TLS.VerifiedChains) > 0 {
		user := r.TLS.VerifiedChains[0][0].Subject.CommonName
		if id, ok := usersOf(a.CertRoles).ByName(user); ok {
			return id, nil
		}
		if id, ok := usersOf(a.Tokens).ByName(user); ok {
			return id, nil
		}
		return Identity{}, unauthenticated(fmt.Errorf("client certificate of %q: no such user in --cert-roles or --token-file", user))
	}
	return Identity{}, unauthenticated(errors.New("no credentials: send Authorization: Bearer <token>"))
}

// AuthenticateToken returns the caller a bearer token names: the console
// checks the token its login form was given with it.
func (a *Authenticator) AuthenticateToken(token string) (Identity, error) {
	if id, ok := usersOf(a.Tokens).ByToken(token); ok {
		return id, nil
	}
	return Identity{}, unauthenticated(errors.New("unknown bearer token"))
}

// usersOf is the current set of a source; none when it is nil.
func usersOf(src UserSource) *Users {
	if src == nil {
		return nil
	}
	return src.Users()
}

func unauthenticated(err error) error {
	return fmt.Errorf("%w: %w", err, errdefs.ErrUnauthenticated)
}
