package identity_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/identity"
)

// A directory under a 0700 parent is unreachable for other users, and
// the error names the parent; its owner and root reach it, as does a
// member of a group the parent lets search.
func TestReach(t *testing.T) {
	base, err := os.MkdirTemp("/tmp", "bcs-reach-") // t.TempDir's parent is 0700
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	private := filepath.Join(base, "home")
	dir := filepath.Join(private, "checkout", "work")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(private, 0o700); err != nil {
		t.Fatal(err)
	}
	owner := uint32(os.Getuid())
	err = identity.Reach(dir, 20001, 20001, nil)
	var unreachable *identity.UnreachableError
	if !errors.As(err, &unreachable) || unreachable.Blocking != private || unreachable.Mode != 0o700 || unreachable.Owner != owner {
		t.Fatalf("uid 20001: %v, want %s named as the blocking 0700 directory", err, private)
	}
	if want := "uid 20001 cannot reach " + dir + ": " + private + " is mode 0700, uid 0's"; owner == 0 && err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	if err := identity.Reach(dir, 0, 0, nil); err != nil {
		t.Errorf("root: %v", err)
	}
	if err := os.Chmod(private, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(private, 20002, 20003); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		uid, gid uint32
		groups   []uint32
		reaches  bool
	}{
		{20002, 1, nil, true},             // the owner
		{20001, 20003, nil, true},         // its group
		{20001, 1, []uint32{20003}, true}, // a supplementary group
		{20001, 20001, nil, false},        // anyone else
	} {
		if err := identity.Reach(dir, c.uid, c.gid, c.groups); (err == nil) != c.reaches {
			t.Errorf("uid %d gid %d groups %v: %v, want reaching %v", c.uid, c.gid, c.groups, err, c.reaches)
		}
	}
	if err := identity.Reach(filepath.Join(base, "missing", "work"), 20001, 20001, nil); err != nil {
		t.Errorf("a directory not made yet: %v", err)
	}
}
