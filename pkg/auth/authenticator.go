package auth

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
)

// Authenticator names the caller of a request: its bearer token, else its
// verified TLS client certificate.
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
		if id, ok := usersOf(a.Tokens).ByToken(token); ok {
			return id, nil
		}
		return Identity{}, unauthenticated(errors.New("unknown bearer token"))
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
