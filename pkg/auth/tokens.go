package auth

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/reloadfile"
)

// minTokenLength keeps tokens out of a guesser's reach: 16 characters of
// the token alphabet are more than 90 bits.
const minTokenLength = 16

// Users are the callers of a token file (or a --cert-roles file): tokens
// by their SHA-256 digest, and identities by user name for client
// certificates.
type Users struct {
	byDigest map[[sha256.Size]byte]Identity
	byName   map[string]Identity
}

// ParseTokens reads a token file: one caller per line,
//
//	token,user,role[,namespace;namespace…]
//
// with role read-only, operator or admin and the namespaces an
// operator's (required for operators, refused for the others). Blank
// lines and lines starting with # are ignored. A user may have several
// tokens (to rotate them), all with the same role and namespaces. Errors
// name the line and never show a token.
func ParseTokens(r io.Reader) (*Users, error) { return parseUsers(r, true) }

// ParseCertRoles reads a --cert-roles file: the lines of a token file
// without the token, user,role[,namespace;namespace…], the user being a
// client certificate's common name.
func ParseCertRoles(r io.Reader) (*Users, error) { return parseUsers(r, false) }

// UserSource gives the current callers: a fixed set (*Users) or a file
// read again when it changes (LoadTokens, LoadCertRoles).
type UserSource interface {
	Users() *Users
}

// Users is the fixed set itself.
func (u *Users) Users() *Users { return u }

// LoadTokens reads the token file at path, and again whenever it changes:
// a rotated token takes effect with no restart. A later version that
// does not parse keeps the last good one; onError hears why.
func LoadTokens(path string, onError func(error)) (UserSource, error) {
	return load(path, ParseTokens, onError)
}

// LoadCertRoles reads the --cert-roles file at path, and again whenever
// it changes, as LoadTokens.
func LoadCertRoles(path string, onError func(error)) (UserSource, error) {
	return load(path, ParseCertRoles, onError)
}

// usersFile is a users file as reloadfile keeps it.
type usersFile struct{ *reloadfile.File[*Users] }

func (f usersFile) Users() *Users { return f.Get() }

func load(path string, parse func(io.Reader) (*Users, error), onError func(error)) (UserSource, error) {
	f, err := reloadfile.Load(path, func(data []byte) (*Users, error) {
		users, err := parse(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return users, nil
	}, onError)
	if err != nil {
		return nil, err
	}
	return usersFile{f}, nil
}

func parseUsers(r io.Reader, withToken bool) (*Users, error) {
	users := &Users{byDigest: map[[sha256.Size]byte]Identity{}, byName: map[string]Identity{}}
	scanner := bufio.NewScanner(r)
	var errs []error
	for n := 1; scanner.Scan(); n++ {
		line := strings.TrimSpace(scanner.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if err := users.add(line, withToken); err != nil {
			errs = append(errs, fmt.Errorf("line %d: %w", n, err))
		}
	}
	if err := scanner.Err(); err != nil {
		return nil, err
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("%w: %w", err, errdefs.ErrInvalidArgument)
	}
	if len(users.byName) == 0 {
		return nil, fmt.Errorf("no users (want lines of %s): %w", lineFormat(withToken), errdefs.ErrInvalidArgument)
	}
	return users, nil
}

func lineFormat(withToken bool) string {
	if withToken {
		return "token,user,role[,namespace;namespace…]"
	}
	return "user,role[,namespace;namespace…]"
}

// add parses one line and adds its caller.
func (u *Users) add(line string, withToken bool) error {
	fields := strings.Split(line, ",")
	for i := range fields {
		fields[i] = strings.TrimSpace(fields[i])
	}
	token := ""
	if withToken {
		token, fields = fields[0], fields[1:]
	}
	if len(fields) < 2 || len(fields) > 3 {
		return fmt.Errorf("want %s", lineFormat(withToken))
	}
	id, err := identityOf(fields)
	if err != nil {
		return err
	}
	if known, ok := u.byName[id.User]; ok && !sameRights(known, id) {
		return fmt.Errorf("user %q: another line gives it role %s %v, this one %s %v", id.User, known.Role, known.Namespaces, id.Role, id.Namespaces)
	}
	if !withToken {
		if _, ok := u.byName[id.User]; ok {
			return fmt.Errorf("user %q is named twice", id.User)
		}
		u.byName[id.User] = id
		return nil
	}
	if err := checkToken(token); err != nil {
		return err
	}
	digest := sha256.Sum256([]byte(token))
	if _, ok := u.byDigest[digest]; ok {
		return errors.New("the token of an earlier line again")
	}
	u.byDigest[digest] = id
	u.byName[id.User] = id
	return nil
}

func identityOf(fields []string) (Identity, error) {
	id := Identity{User: fields[0]}
	if id.User == "" {
		return id, errors.New("user is empty")
	}
	role, err := parseRole(fields[1])
	if err != nil {
		return id, err
	}
	id.Role = role
	if len(fields) == 3 && fields[2] != "" {
		for ns := range strings.SplitSeq(fields[2], ";") {
			ns = strings.TrimSpace(ns)
			if err := manifest.CheckNamespace(ns); err != nil {
				return id, fmt.Errorf("namespace %q: not a namespace (%v)", ns, err)
			}
			id.Namespaces = append(id.Namespaces, ns)
		}
		slices.Sort(id.Namespaces)
		id.Namespaces = slices.Compact(id.Namespaces)
	}
	switch {
	case role == RoleOperator && len(id.Namespaces) == 0:
		return id, fmt.Errorf("user %q: an operator needs its namespaces (a fourth field, ns1;ns2)", id.User)
	case role != RoleOperator && len(id.Namespaces) > 0:
		return id, fmt.Errorf("user %q: only an operator has namespaces (%s has every one)", id.User, role)
	}
	return id, nil
}

func sameRights(a, b Identity) bool {
	return a.Role == b.Role && slices.Equal(a.Namespaces, b.Namespaces)
}

// checkToken refuses a token too short to be secret or with characters a
// bearer token cannot carry (RFC 6750's b64token).
func checkToken(token string) error {
	if len(token) < minTokenLength {
		return fmt.Errorf("token shorter than %d characters", minTokenLength)
	}
	for _, r := range token {
		if !isTokenRune(r) {
			return errors.New("token holds a character other than A-Z a-z 0-9 - . _ ~ + / =")
		}
	}
	return nil
}

func isTokenRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-._~+/=", r)
}

// ByToken returns the caller a bearer token names.
func (u *Users) ByToken(token string) (Identity, bool) {
	if u == nil {
		return Identity{}, false
	}
	id, ok := u.byDigest[sha256.Sum256([]byte(token))]
	return id, ok
}

// ByName returns a user's identity.
func (u *Users) ByName(user string) (Identity, bool) {
	if u == nil {
		return Identity{}, false
	}
	id, ok := u.byName[user]
	return id, ok
}
