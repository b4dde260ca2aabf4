package process

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/healthcheck"
	"github.com/bcs-mesos/bcs-mesos/pkg/remotefile"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// prepare fetches the remote configmap items, resolves the user,
// creates the work path and pid file directories, writes the configmap
// and secret files, fetches every URI and creates the cgroup, or sets its
// limits when the task has one from an earlier start (an in-place
// update).
func (t *task) prepare() error {
	acct, err := t.rt.checkSpec(t.spec)
	if err != nil {
		return err
	}
	resolved, err := t.rt.cfg.Remote.Resolve(t.ctx, t.spec)
	if err != nil {
		return err
	}
	t.mu.Lock()
	t.setSpec(resolved)
	t.mu.Unlock()
	p := t.proc
	uid, gid := acct.owner()
	env := append([]string{
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"HOME=" + acct.home, "USER=" + acct.name, "LOGNAME=" + acct.name,
	}, proto.EnvList(t.spec.Env)...)
	t.mu.Lock()
	t.acct, t.env = acct, env
	cg := t.cg
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
	if err := t.install(t.spec, acct); err != nil {
		return err
	}
	limits := t.spec.Resources
	switch {
	case cg != nil:
		if err := cg.SetLimits(limits); err != nil {
			return err
		}
	case t.rt.cfg.Cgroups != nil:
		cg, err := t.rt.cfg.Cgroups.Create(cgroupName(t.id), limits)
		if err != nil {
			return err
		}
		t.mu.Lock()
		t.cg = cg
		t.mu.Unlock()
	}
	return t.ctx.Err()
}

// checkSpec refuses a process spec that cannot be prepared, before
// anything is touched, and resolves its user: workPath and startCmd are
// required, URIs and health checks must be usable, and limits need
// cgroups.
func (r *Runtime) checkSpec(spec *proto.TaskSpec) (*account, error) {
	p := spec.Process
	if p.WorkPath == "" || p.StartCmd == "" {
		return nil, fmt.Errorf("process %q needs workPath and startCmd: %w", p.ProcName, errdefs.ErrInvalidArgument)
	}
	acct, err := lookupAccount(p.User, r.cfg.DefaultUser)
	if err != nil {
		return nil, err
	}
	for _, uri := range p.URIs {
		if _, err := parseURI(uri); err != nil {
			return nil, err
		}
	}
	// The probes are only built here, never run.
	run := healthcheck.Shell(p.WorkPath, nil, acct.cred)
	for i, hc := range spec.HealthChecks {
		if _, err := r.prober(spec, hc, run); err != nil {
			return nil, fmt.Errorf("health check %d: %w", i, err)
		}
	}
	limited := spec.Resources.CPULimit > 0 || spec.Resources.MemLimitMB > 0
	if limited && r.cfg.Cgroups == nil {
		return nil, fmt.Errorf("resource limits (cpu %v, memory %v MB) need cgroups, which this executor has not: %w",
			spec.Resources.CPULimit, spec.Resources.MemLimitMB, errdefs.ErrUnavailable)
	}
	return acct, nil
}

// install writes spec's configmap and secret files and fetches its URIs
// into their output directories, over what is there.
func (t *task) install(spec *proto.TaskSpec, acct *account) error {
	for _, f := range spec.Files {
		if err := writeTaskFile(f, spec.Process.WorkPath, acct); err != nil {
			return err
		}
	}
	uid, gid := acct.owner()
	for _, uri := range spec.Process.URIs {
		stats, err := t.rt.fetcher.Fetch(t.ctx, uri, uid, gid)
		if err != nil {
			return err
		}
		t.log().Info("fetched", "url", remotefile.SafeURL(uri.Value), "downloaded", stats.Downloaded, "cache_hit", stats.CacheHit)
	}
	return nil
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
