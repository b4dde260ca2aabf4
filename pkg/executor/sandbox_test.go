package executor_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/executor"
)

// A sandbox made 0755, as Mesos makes it, is 0700 after: what the
// executor keeps there is no other user's to read.
func TestPrivateSandbox(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "runs", "latest")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := executor.PrivateSandbox(dir); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(dir); err != nil || info.Mode().Perm() != 0o700 {
		t.Errorf("sandbox %v %v, want mode 0700", info.Mode(), err)
	}
	if err := executor.PrivateSandbox(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing sandbox is no error")
	}
}
