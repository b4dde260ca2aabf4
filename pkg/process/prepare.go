package process

import (
	"cmp"
	"fmt"
	"os"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/healthcheck"
	"github.com/bcs-mesos/bcs-mesos/pkg/remotefile"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// prepare fetches the remote configmap items, resolves the user,
// creates the work path and pid file directories, writes the configmap
// and secret files, fetches every URI and creates the cgroup, or sets its
// limits when the task has one from an earlier start (an in-place
// update). Everything it writes lies in the instance's sandbox.
func (t *task) prepare() error {
	acct, sb, err := t.rt.checkSpec(t.spec)
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
	env := append([]string{
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"HOME=" + cmp.Or(acct.home, p.WorkPath), "USER=" + acct.name, "LOGNAME=" + acct.name,
	}, proto.EnvList(t.spec.Env)...)
	t.mu.Lock()
	t.acct, t.env = acct, env
	cg := t.cg
	t.mu.Unlock()
	if err := sb.claim(); err != nil {
		return err
	}
	if err := sb.mkdir(p.WorkPath); err != nil {
		return err
	}
	if err := acct.reach(p.WorkPath); err != nil {
		return err
	}
	if p.PidFile != "" {
		if err := sb.clearPidFile(p.PidFile); err != nil {
			return err
		}
	}
	if err := t.install(t.spec, sb); err != nil {
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
// anything is touched, and resolves its user and sandbox: workPath and
// startCmd are required, every path must lie inside the instance's
// directories, file:// packages inside Config.PackageDirs, URIs and
// health checks must be usable, and limits need cgroups.
func (r *Runtime) checkSpec(spec *proto.TaskSpec) (*account, *sandbox, error) {
	p := spec.Process
	if p.WorkPath == "" || p.StartCmd == "" {
		return nil, nil, fmt.Errorf("process %q needs workPath and startCmd: %w", p.ProcName, errdefs.ErrInvalidArgument)
	}
	acct, err := accountOf(spec, r.cfg.DefaultUser)
	if err != nil {
		return nil, nil, err
	}
	sb, err := r.sandbox(spec, acct)
	if err != nil {
		return nil, nil, err
	}
	if err := sb.check("workPath", p.WorkPath); err != nil {
		return nil, nil, err
	}
	if p.PidFile != "" {
		if err := sb.check("pidFile", p.PidFile); err != nil {
			return nil, nil, err
		}
	}
	checkFile := func(what string, f proto.File) error {
		path := taskFilePath(f, p.WorkPath)
		if err := sb.check(what, path); err != nil {
			return err
		}
		if f.User == "" {
			return nil
		}
		if _, err := fileOwner(spec, f.User); err != nil {
			return fmt.Errorf("file %s: %w", path, err)
		}
		return nil
	}
	for _, f := range spec.Files {
		if err := checkFile("file", f); err != nil {
			return nil, nil, err
		}
	}
	for _, rf := range spec.Remote {
		if rf.File != nil {
			if err := checkFile(rf.Source, *rf.File); err != nil {
				return nil, nil, err
			}
		}
	}
	for i, uri := range p.URIs {
		if err := sb.check(fmt.Sprintf("uris[%d].outputDir", i), uri.OutputDir); err != nil {
			return nil, nil, err
		}
		if _, err := r.fetcher.check(uri); err != nil {
			return nil, nil, err
		}
	}
	// The probes are only built here, never run.
	run := healthcheck.Shell(p.WorkPath, nil, acct.cred)
	for i, hc := range spec.HealthChecks {
		if _, err := r.prober(spec, hc, run); err != nil {
			return nil, nil, fmt.Errorf("health check %d: %w", i, err)
		}
	}
	limited := spec.Resources.CPULimit > 0 || spec.Resources.MemLimitMB > 0
	if limited && r.cfg.Cgroups == nil {
		return nil, nil, fmt.Errorf("resource limits (cpu %v, memory %v MB) need cgroups, which this executor has not: %w",
			spec.Resources.CPULimit, spec.Resources.MemLimitMB, errdefs.ErrUnavailable)
	}
	return acct, sb, nil
}

// Modes of configmap and secret files: readable by their owner only, so
// that no other task's user reads them.
const (
	taskFileMode         os.FileMode = 0o600
	taskFileModeReadOnly os.FileMode = 0o400
)

// fileOwner resolves the user a configmap or secret item names as its
// file's owner, held to the namespace's rule like a process's user.
func fileOwner(spec *proto.TaskSpec, user string) (*account, error) {
	if spec.Identity != nil {
		return allowedAccount(spec.Identity, user)
	}
	return lookupAccount(user, user)
}

// install writes spec's configmap and secret files and fetches its URIs
// into their output directories, over what is there, inside sb.
func (t *task) install(spec *proto.TaskSpec, sb *sandbox) error {
	for _, f := range spec.Files {
		uid, gid := sb.uid, sb.gid
		if f.User != "" {
			o, err := fileOwner(spec, f.User)
			if err != nil {
				return fmt.Errorf("file %s: %w", taskFilePath(f, spec.Process.WorkPath), err)
			}
			uid, gid = o.owner()
		}
		mode := taskFileMode
		if f.ReadOnly {
			mode = taskFileModeReadOnly
		}
		path := taskFilePath(f, spec.Process.WorkPath)
		if err := sb.writeFile(path, f.Content, mode, uid, gid); err != nil {
			return fmt.Errorf("file %s: %w", path, err)
		}
	}
	policy, err := remotefile.Policy(spec)
	if err != nil {
		return err
	}
	for _, uri := range spec.Process.URIs {
		out, err := sb.openDir(uri.OutputDir)
		if err != nil {
			return fmt.Errorf("uri %s: outputDir: %w", remotefile.SafeURL(uri.Value), err)
		}
		stats, err := t.rt.fetcher.Fetch(t.ctx, spec.Instance.Namespace, uri, out, sb.uid, sb.gid, policy)
		out.Close()
		if err != nil {
			return err
		}
		t.log().Info("fetched", "url", remotefile.SafeURL(uri.Value), "downloaded", stats.Downloaded, "cache_hit", stats.CacheHit)
	}
	return nil
}
