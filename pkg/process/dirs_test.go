package process

import (
	"os"
	"path/filepath"
	"testing"
)

// The package cache is private, but the directories created above it stay
// searchable: processes run as other users under shared roots like /data.
func TestCacheDirKeepsParentsSearchable(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "data", "bcs", "cache")
	if err := mkdirPrivate(dir); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]os.FileMode{filepath.Join(root, "data"): 0o755, filepath.Join(root, "data", "bcs"): 0o755, dir: 0o700} {
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := info.Mode().Perm(); got != want {
			t.Errorf("%s: mode %o, want %o", path, got, want)
		}
	}
	if err := mkdirPrivate(dir); err != nil {
		t.Errorf("second call: %v", err)
	}
}
