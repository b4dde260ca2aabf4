package schedulerd

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/identity"
)

// A data directory under a 0700 home directory puts the dev
// instances' directories where their users reach them, the same place on
// every start; a reachable one keeps them under it; a named directory out
// of reach refuses the start, naming the directory in the way.
func TestPlaceDevInstanceDirs(t *testing.T) {
	base, err := os.MkdirTemp("/tmp", "bcs-devdirs-") // t.TempDir's parent is 0700
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(base, "root")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	uids, _ := identity.ParseRange(identity.DefaultRange)
	options := func(dataDir string) *Options {
		return &Options{DataDir: dataDir, NamespaceUIDs: uids, Logger: slog.New(slog.DiscardHandler)}
	}

	open := options(filepath.Join(base, "bcs-data"))
	if err := placeDevInstanceDirs(open); err != nil {
		t.Fatal(err)
	}
	if open.Scheduler.WorkBaseDir != filepath.Join(base, "bcs-data", "work") || open.Scheduler.RunBaseDir != filepath.Join(base, "bcs-data", "run") {
		t.Errorf("reachable data dir: %q %q, want under it", open.Scheduler.WorkBaseDir, open.Scheduler.RunBaseDir)
	}

	closed := options(filepath.Join(home, "bcs-mesos", "bcs-data"))
	if err := placeDevInstanceDirs(closed); err != nil {
		t.Fatal(err)
	}
	work := closed.Scheduler.WorkBaseDir
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(work)) })
	if !strings.HasPrefix(work, devInstanceDirsRoot+"/") || filepath.Dir(closed.Scheduler.RunBaseDir) != filepath.Dir(work) {
		t.Errorf("data dir under a 0700 home: %q %q, want under %s", work, closed.Scheduler.RunBaseDir, devInstanceDirsRoot)
	}
	if err := identity.Reach(work, uids.First, uids.First, nil); err != nil {
		t.Errorf("the chosen directory: %v", err)
	}
	again := options(filepath.Join(home, "bcs-mesos", "bcs-data"))
	if err := placeDevInstanceDirs(again); err != nil || again.Scheduler.WorkBaseDir != work {
		t.Errorf("restarted: %q, %v; want %q again", again.Scheduler.WorkBaseDir, err, work)
	}

	named := options(filepath.Join(base, "bcs-data"))
	named.Scheduler.WorkBaseDir = filepath.Join(home, "work")
	err = placeDevInstanceDirs(named)
	want := "--work-base-dir " + filepath.Join(home, "work") + ": the instances run as other users (uid 20000 cannot reach " + filepath.Join(home, "work") + ": " + home + " is mode 0700"
	if !errors.Is(err, errdefs.ErrInvalidArgument) || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("a named directory out of reach: %v, want %q…", err, want)
	}
}
