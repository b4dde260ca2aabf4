package auth_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/auth"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
)

// The three roles: read-only reads everything, operator reads and
// writes its namespaces and reads the cluster, admin does everything.
func TestAuthorize(t *testing.T) {
	admin := auth.Identity{User: "alice", Role: auth.RoleAdmin}
	reader := auth.Identity{User: "grafana", Role: auth.RoleReadOnly}
	operator := auth.Identity{User: "ci", Role: auth.RoleOperator, Namespaces: []string{"demo", "staging"}}
	readDemo := auth.Access{Namespace: "demo"}
	writeDemo := auth.Access{Write: true, Namespace: "demo"}
	readProd := auth.Access{Namespace: "prod"}
	writeProd := auth.Access{Write: true, Namespace: "prod"}
	readAll := auth.Access{}
	readCluster := auth.Access{Cluster: true}
	writeCluster := auth.Access{Write: true, Cluster: true}
	for _, tc := range []struct {
		name   string
		id     auth.Identity
		access auth.Access
		denied string // "": allowed
	}{
		{"admin reads a namespace", admin, readDemo, ""},
		{"admin writes a namespace", admin, writeProd, ""},
		{"admin reads every namespace", admin, readAll, ""},
		{"admin writes the cluster", admin, writeCluster, ""},
		{"reader reads a namespace", reader, readProd, ""},
		{"reader reads every namespace", reader, readAll, ""},
		{"reader reads the cluster", reader, readCluster, ""},
		{"reader writes a namespace", reader, writeDemo, `user "grafana" (role read-only) writes nothing (a write needs operator or admin)`},
		{"reader writes the cluster", reader, writeCluster, "(role read-only) writes nothing"},
		{"operator reads its namespace", operator, readDemo, ""},
		{"operator writes its namespace", operator, writeDemo, ""},
		{"operator writes its other namespace", operator, auth.Access{Write: true, Namespace: "staging"}, ""},
		{"operator reads the cluster", operator, readCluster, ""},
		{"operator reads another namespace", operator, readProd, `user "ci" (role operator) may not read namespace "prod": its namespaces are demo, staging`},
		{"operator writes another namespace", operator, writeProd, `may not write namespace "prod": its namespaces are demo, staging`},
		{"operator reads every namespace", operator, readAll, "reads only its namespaces (demo, staging): name one (?namespace=)"},
		{"operator writes the cluster", operator, writeCluster, "may not change cluster-wide settings (agents, engine, notify callbacks): admin only"},
		{"no role", auth.Identity{User: "x"}, readDemo, `may not read namespace "demo"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.id.Authorize(tc.access)
			switch {
			case tc.denied == "" && err != nil:
				t.Fatalf("Authorize = %v, want allowed", err)
			case tc.denied != "" && (err == nil || !strings.Contains(err.Error(), tc.denied) || !errors.Is(err, errdefs.ErrPermissionDenied)):
				t.Fatalf("Authorize = %v, want permission denied: %q", err, tc.denied)
			}
		})
	}
}
