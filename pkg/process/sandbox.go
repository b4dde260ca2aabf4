package process

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/bcs-mesos/bcs-mesos/pkg/confine"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// sandbox is what one task may touch on the host: the directories its
// instance owns, <base>/<namespace>.<app>.<index> under the runtime's work
// and run roots. Every path of the spec is checked to lie inside them and
// opened through the root's os.Root, so that a link, planted by the
// task's own processes or by anyone, cannot lead out. Directories it
// creates belong to the task's user; what exists already keeps its owner.
// Those it creates above the instance's directories are the executor's,
// mode 0711 (searchable, not listable), and the instance's directories
// themselves 0700: only their user enters them.
type sandbox struct {
	roots    []sandboxRoot
	uid, gid int // -1: the executor's own user
	// private: the task runs as its namespace's identity, and its
	// instance's directories are made its user's alone (claim), whoever
	// had them before.
	private bool
}

// sandboxRoot is one runtime root and the instance's directory under it.
type sandboxRoot struct {
	root     *os.Root
	base     string // the runtime's root, absolute
	instance string // the instance's directory, absolute, inside base
}

// sandbox returns spec's sandbox for a task running as acct, or why the
// spec's base directories are not the runtime's.
func (r *Runtime) sandbox(spec *proto.TaskSpec, acct *account) (*sandbox, error) {
	p := spec.Process
	uid, gid := acct.owner()
	sb := &sandbox{uid: uid, gid: gid, private: spec.Identity != nil}
	for _, b := range []struct {
		flag, specBase string
		root           *os.Root
		base           string
	}{
		{"workBaseDir", p.WorkBaseDir, r.workRoot, r.cfg.WorkBaseDir},
		{"runBaseDir", p.RunBaseDir, r.runRoot, r.cfg.RunBaseDir},
	} {
		base := b.specBase
		if base == "" {
			base = b.base
		}
		if err := confine.Check(base, b.base); err != nil {
			return nil, fmt.Errorf("%s: %v: %w", b.flag, err, errdefs.ErrInvalidArgument)
		}
		dir := path.Join(base, confine.InstanceDirName(spec.Instance.Namespace, spec.Instance.App, spec.Instance.Index))
		sb.roots = append(sb.roots, sandboxRoot{root: b.root, base: b.base, instance: dir})
	}
	return sb, nil
}

// check returns nil when p, the spec's field named what, lies inside the
// instance's directories.
func (sb *sandbox) check(what, p string) error {
	dirs := make([]string, len(sb.roots))
	for i, r := range sb.roots {
		dirs[i] = r.instance
	}
	if err := confine.Check(p, dirs...); err != nil {
		return fmt.Errorf("%s: %v (the instance's own directories): %w", what, err, errdefs.ErrInvalidArgument)
	}
	return nil
}

// locate returns the root p lies in and p relative to that root.
func (sb *sandbox) locate(p string) (*os.Root, string, *sandboxRoot) {
	for i := range sb.roots {
		r := &sb.roots[i]
		if confine.Within(p, r.instance) {
			return r.root, confine.Rel(p, r.base), r
		}
	}
	return nil, "", nil
}

// mkdir creates the directory p (checked) and the missing ones above it
// inside the root. Those it creates from the instance's directory down
// belong to the task's user; the rest belong to the executor. Existing
// ones are left as they are.
func (sb *sandbox) mkdir(p string) error {
	root, rel, r := sb.locate(p)
	if root == nil {
		return fmt.Errorf("%q is outside the instance's directories: %w", p, errdefs.ErrInvalidArgument)
	}
	own := len(strings.Split(confine.Rel(r.instance, r.base), "/"))
	if rel == "." {
		return nil
	}
	parts := strings.Split(rel, "/")
	for i := range parts {
		name := strings.Join(parts[:i+1], "/")
		err := root.Mkdir(name, sb.dirMode(i+1, own))
		switch {
		case err == nil:
			if i+1 >= own && sb.uid >= 0 {
				if err := root.Lchown(name, sb.uid, sb.gid); err != nil {
					return err
				}
			}
		case errors.Is(err, fs.ErrExist):
			info, err := root.Stat(name)
			if err != nil {
				return fmt.Errorf("%s: %w", path.Join(r.base, name), err)
			}
			if !info.IsDir() {
				return fmt.Errorf("%s is not a directory: %w", path.Join(r.base, name), errdefs.ErrInvalidArgument)
			}
		default:
			return fmt.Errorf("%s: %w", path.Join(r.base, name), err)
		}
	}
	return nil
}

// Modes of the directories a sandbox creates.
const (
	aboveInstanceMode os.FileMode = 0o711 // the executor's: searchable, not listable
	instanceDirMode   os.FileMode = 0o700 // the instance's user's alone
	insideMode        os.FileMode = 0o755
)

// dirMode is the mode of a directory the sandbox creates at depth under a
// root whose instance directory is at depth own; all are insideMode
// unless the sandbox is private.
func (sb *sandbox) dirMode(depth, own int) os.FileMode {
	switch {
	case !sb.private:
		return insideMode
	case depth < own:
		return aboveInstanceMode
	case depth == own:
		return instanceDirMode
	}
	return insideMode
}

// claim makes the instance's directories the task's user's alone when the
// sandbox is private: created 0700 for it, or, existing, given mode 0700
// and, when they belong to someone else (a build of the executor that ran
// every namespace as one user), given with all they hold to the task's
// user. The directories above them become 0711.
func (sb *sandbox) claim() error {
	if !sb.private || sb.uid < 0 {
		return nil
	}
	for _, r := range sb.roots {
		if err := sb.mkdir(r.instance); err != nil {
			return err
		}
		rel := confine.Rel(r.instance, r.base)
		parts := strings.Split(rel, "/")
		for i := range parts[:len(parts)-1] {
			if err := r.root.Chmod(strings.Join(parts[:i+1], "/"), aboveInstanceMode); err != nil {
				return err
			}
		}
		info, err := r.root.Lstat(rel)
		if err != nil {
			return err
		}
		if !info.IsDir() {
			return fmt.Errorf("%s is not a directory: %w", r.instance, errdefs.ErrInvalidArgument)
		}
		if !ownedBy(info, sb.uid) {
			if err := reown(r.root, rel, sb.uid, sb.gid); err != nil {
				return fmt.Errorf("give %s to uid %d: %w", r.instance, sb.uid, err)
			}
		}
		if err := r.root.Chmod(rel, instanceDirMode); err != nil {
			return err
		}
	}
	return nil
}

// reown gives dir inside root, and everything in it, to uid:gid, links
// themselves (never what they point to).
func reown(root *os.Root, dir string, uid, gid int) error {
	return fs.WalkDir(root.FS(), dir, func(name string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return root.Lchown(name, uid, gid)
	})
}

// openDir creates the directory p like mkdir and opens it as a root.
func (sb *sandbox) openDir(p string) (*os.Root, error) {
	if err := sb.mkdir(p); err != nil {
		return nil, err
	}
	root, rel, _ := sb.locate(p)
	return root.OpenRoot(rel)
}

// clearPidFile removes a pid file an earlier start left, so that a stale
// pid is never taken for the new process's. Only a regular file of the
// task's user goes: anything else at that path was not written by the
// task, and is left alone (the start then fails on it).
func (sb *sandbox) clearPidFile(p string) error {
	if err := sb.mkdir(path.Dir(p)); err != nil {
		return err
	}
	root, rel, _ := sb.locate(p)
	info, err := root.Lstat(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() || !ownedBy(info, sb.uid) {
		return fmt.Errorf("pidFile %s exists and is not a file of the task's user: left alone: %w", p, errdefs.ErrInvalidArgument)
	}
	return root.Remove(rel)
}

// ownedBy reports whether info's file belongs to uid (-1: the executor's
// own user).
func ownedBy(info fs.FileInfo, uid int) bool {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return false
	}
	if uid < 0 {
		uid = os.Getuid()
	}
	return int(st.Uid) == uid
}

// writeFile writes content at p (checked), owned by uid:gid (uid < 0: the
// executor) with mode, replacing what is there: a new file renamed over
// the old entry, so a link at p is replaced, never followed.
func (sb *sandbox) writeFile(p string, content []byte, mode os.FileMode, uid, gid int) error {
	if err := sb.mkdir(path.Dir(p)); err != nil {
		return err
	}
	root, rel, _ := sb.locate(p)
	return replaceFile(root, rel, bytes.NewReader(content), mode, uid, gid)
}

// replaceFile writes r into name inside root through a temporary file
// renamed over name, owned by uid:gid unless uid < 0, with mode.
func replaceFile(root *os.Root, name string, r io.Reader, mode os.FileMode, uid, gid int) error {
	var suffix [6]byte
	_, _ = rand.Read(suffix[:])
	tmp := path.Join(path.Dir(name), "."+path.Base(name)+".bcs-"+hex.EncodeToString(suffix[:]))
	f, err := root.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, r)
	if err == nil && uid >= 0 {
		err = f.Chown(uid, gid)
	}
	if err == nil {
		err = f.Chmod(mode)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmp, name)
	}
	if err != nil {
		_ = root.Remove(tmp)
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

// taskFilePath is where a configmap or secret item goes: relative paths
// are under the work path.
func taskFilePath(f proto.File, workPath string) string {
	if filepath.IsAbs(f.Path) {
		return f.Path
	}
	return filepath.Join(workPath, f.Path)
}
