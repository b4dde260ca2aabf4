package auth

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
)

// Role is what a caller may do.
type Role string

// The roles, weakest first.
const (
	// RoleReadOnly reads everything (secret values are never answered
	// to anybody) and writes nothing.
	RoleReadOnly Role = "read-only"
	// RoleOperator reads and writes in its namespaces and reads the
	// cluster-wide state (agents, the engine, notify callbacks), which it
	// does not change.
	RoleOperator Role = "operator"
	// RoleAdmin does everything.
	RoleAdmin Role = "admin"
)

var roles = []Role{RoleReadOnly, RoleOperator, RoleAdmin}

// parseRole names the role s spells.
func parseRole(s string) (Role, error) {
	if r := Role(s); slices.Contains(roles, r) {
		return r, nil
	}
	return "", fmt.Errorf("role %q: want read-only, operator or admin", s)
}

// Identity is an authenticated caller.
type Identity struct {
	User string
	Role Role
	// Namespaces are an operator's, sorted; empty for the other roles.
	Namespaces []string
}

// Access is what one request does.
type Access struct {
	// Write: the request changes something (or would: a dry run).
	Write bool
	// Cluster: the request is about the cluster — agents, the engine,
	// notify callbacks, the leader — not about a namespace.
	Cluster bool
	// Namespace the request is in; "" when not Cluster means every
	// namespace (a list without ?namespace=).
	Namespace string
}

// Authorize returns nil when id may do a, else an error wrapping
// errdefs.ErrPermissionDenied naming the user, its role and what it
// lacks.
func (id Identity) Authorize(a Access) error {
	switch {
	case id.Role == RoleAdmin:
		return nil
	case id.Role == RoleReadOnly && !a.Write:
		return nil
	case id.Role == RoleReadOnly:
		return id.denied("writes nothing (a write needs operator or admin)")
	case a.Cluster && !a.Write:
		return nil
	case a.Cluster:
		return id.denied("may not change cluster-wide settings (agents, engine, notify callbacks): admin only")
	case a.Namespace == "":
		return id.denied("reads only its namespaces (%s): name one (?namespace=)", strings.Join(id.Namespaces, ", "))
	case !id.InNamespace(a.Namespace):
		verb := "read"
		if a.Write {
			verb = "write"
		}
		return id.denied("may not %s namespace %q: its namespaces are %s", verb, a.Namespace, strings.Join(id.Namespaces, ", "))
	}
	return nil
}

// InNamespace reports whether namespace is one of an operator's.
func (id Identity) InNamespace(namespace string) bool {
	_, found := slices.BinarySearch(id.Namespaces, namespace)
	return found
}

func (id Identity) denied(format string, args ...any) error {
	return fmt.Errorf("user %q (role %s) %s: %w", id.User, id.Role, fmt.Sprintf(format, args...), errdefs.ErrPermissionDenied)
}
