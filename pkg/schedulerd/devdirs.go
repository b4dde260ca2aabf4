package schedulerd

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/identity"
)

// devInstanceDirsRoot is where the dev cluster's instance directories go
// when the data directory is out of the instances' reach.
const devInstanceDirsRoot = "/var/tmp/bcs-mesos-dev"

// nobodyUID is the process executor's default user when namespaces get
// no uid of their own.
const nobodyUID = 65534

// placeDevInstanceDirs gives the dev cluster's process instances work and
// run base directories their users can reach, as they run on this
// machine: by default <data-dir>/work and <data-dir>/run, unless a
// directory on the way is closed to other users (a checkout in root's
// 0700 home) — then under /var/tmp/bcs-mesos-dev/<hash of the data
// dir>, stable across restarts, and the log says so. Directories the
// operator named must be reachable, else the start is refused naming the
// directory in the way.
func placeDevInstanceDirs(o *Options) error {
	uid := uint32(nobodyUID)
	if !o.NamespaceUIDs.Off() {
		uid = o.NamespaceUIDs.First
	}
	reach := func(dir string) error { return identity.Reach(dir, uid, uid, nil) }
	if o.Scheduler.WorkBaseDir == "" && o.Scheduler.RunBaseDir == "" {
		o.Scheduler.WorkBaseDir, o.Scheduler.RunBaseDir = filepath.Join(o.DataDir, "work"), filepath.Join(o.DataDir, "run")
		if err := reach(o.DataDir); err != nil {
			sum := sha256.Sum256([]byte(o.DataDir))
			base := filepath.Join(devInstanceDirsRoot, hex.EncodeToString(sum[:4]))
			if err := os.MkdirAll(base, 0o755); err != nil {
				return fmt.Errorf("instance directories: %w", err)
			}
			o.Scheduler.WorkBaseDir, o.Scheduler.RunBaseDir = filepath.Join(base, "work"), filepath.Join(base, "run")
			o.Logger.Info("the instances' directories are outside the data directory, which their users cannot reach",
				"reason", err.Error(), "work_base_dir", o.Scheduler.WorkBaseDir, "run_base_dir", o.Scheduler.RunBaseDir)
		}
	}
	for flagName, dir := range map[string]string{"--work-base-dir": o.Scheduler.WorkBaseDir, "--run-base-dir": o.Scheduler.RunBaseDir} {
		if dir == "" {
			continue
		}
		if err := reach(dir); err != nil {
			return fmt.Errorf("%s %s: the instances run as other users (%w), who could not start there; pick a directory every user may search, or leave both flags out: %w",
				flagName, dir, err, errdefs.ErrInvalidArgument)
		}
	}
	return nil
}
