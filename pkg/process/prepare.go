package process

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// prepare resolves the user, creates the work path and pid file
// directories, writes the configmap and secret files, fetches every URI
// and creates the cgroup.
func (t *task) prepare() error {
	p := t.proc
	if p.WorkPath == "" || p.StartCmd == "" {
		return fmt.Errorf("process %q needs workPath and startCmd: %w", p.ProcName, errdefs.ErrInvalidArgument)
	}
	acct, err := lookupAccount(p.User, t.rt.cfg.DefaultUser)
	if err != nil {
		return err
	}
	uid, gid := -1, -1
	if acct.cred != nil {
		uid, gid = acct.uid, acct.gid
	}
	env := []string{
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"HOME=" + acct.home, "USER=" + acct.name, "LOGNAME=" + acct.name,
	}
	for _, e := range t.spec.Env {
		env = append(env, e.Name+"="+e.Value)
	}
	t.mu.Lock()
	t.acct, t.env = acct, env
	t.mu.Unlock()
	if err := mkdirOwned(p.WorkPath, uid, gid); err != nil {
		return err
	}
	if p.PidFile != "" {
		if err := mkdirOwned(filepath.Dir(p.PidFile), uid, gid); err != nil {
			return err
		}
		if err := os.Remove(p.PidFile); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	for _, f := range t.spec.Files {
		if err := writeTaskFile(f, p.WorkPath, acct); err != nil {
			return err
		}
	}
	for _, uri := range p.URIs {
		stats, err := t.rt.fetcher.Fetch(t.ctx, uri, uid, gid)
		if err != nil {
			return err
		}
		t.log().Info("fetched", "url", safeURL(uri.Value), "downloaded", stats.Downloaded, "cache_hit", stats.CacheHit)
	}
	for i, hc := range t.spec.HealthChecks {
		if _, err := t.prober(hc); err != nil {
			return fmt.Errorf("health check %d: %w", i, err)
		}
	}
	limited := t.spec.Resources.CPULimit > 0 || t.spec.Resources.MemLimitMB > 0
	if limited && t.rt.cfg.Cgroups == nil {
		return fmt.Errorf("resource limits (cpu %v, memory %v MB) need cgroups, which this executor has not: %w",
			t.spec.Resources.CPULimit, t.spec.Resources.MemLimitMB, errdefs.ErrUnavailable)
	}
	if t.rt.cfg.Cgroups != nil {
		cg, err := t.rt.cfg.Cgroups.Create(cgroupName(t.id), t.spec.Resources.CPULimit, t.spec.Resources.MemLimitMB)
		if err != nil {
			return err
		}
		t.mu.Lock()
		t.cg = cg
		t.mu.Unlock()
	}
	return t.ctx.Err()
}

func mkdirOwned(dir string, uid, gid int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if uid >= 0 {
		return os.Chown(dir, uid, gid)
	}
	return nil
}

// writeTaskFile writes a configmap or secret item: relative paths are
// under the work path; the owner is the item's user (default root) and
// the group the task's, mode 0640 (0440 read-only) so secrets stay
// private to both.
func writeTaskFile(f proto.File, workPath string, acct *account) error {
	path := f.Path
	if !filepath.IsAbs(path) {
		path = filepath.Join(workPath, path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	mode := os.FileMode(0o640)
	if f.ReadOnly {
		mode = 0o440
	}
	_ = os.Remove(path)
	if err := os.WriteFile(path, f.Content, mode); err != nil {
		return fmt.Errorf("file %s: %w", path, err)
	}
	owner := f.User
	if owner == "" {
		owner = "root"
	}
	o, err := lookupAccount(owner, owner)
	if err != nil {
		return err
	}
	if err := os.Chown(path, o.uid, acct.gid); err != nil {
		return err
	}
	return os.Chmod(path, mode)
}
