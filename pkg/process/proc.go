package process

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/identity"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// readPidFile reads the pid a start script wrote; surrounding whitespace
// (a trailing newline is normal) is trimmed.
func readPidFile(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("pid file %s: %w", path, err)
	}
	s := strings.TrimSpace(string(b))
	pid, err := strconv.Atoi(s)
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("pid file %s holds %q, not a pid", path, s)
	}
	return pid, nil
}

// procState is the state letter of /proc/<pid>/stat, "" when gone.
func procState(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	// pid (comm) S ...: comm may hold spaces and parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return ""
	}
	return s[i+2 : i+3]
}

// alive reports whether pid runs (a zombie is dead).
func alive(pid int) bool {
	st := procState(pid)
	return st != "" && st != "Z" && st != "X"
}

// procNameOf returns /proc/<pid>/comm and the base name of its exe.
func procNameOf(pid int) (comm, exe string) {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	comm = strings.TrimSpace(string(b))
	if target, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err == nil {
		exe = filepath.Base(strings.TrimSuffix(target, " (deleted)"))
	}
	return comm, exe
}

// checkProcess says why pid is not the process procName names, or nil.
// comm is truncated by the kernel to 15 bytes, so procName is compared
// truncated too.
func checkProcess(pid int, procName string) error {
	if !alive(pid) {
		return fmt.Errorf("process %d is not running", pid)
	}
	if procName == "" {
		return nil
	}
	comm, exe := procNameOf(pid)
	short := procName
	if len(short) > 15 {
		short = short[:15]
	}
	if comm == short || exe == procName {
		return nil
	}
	return fmt.Errorf("process %d is %q (exe %q), not procName %q", pid, comm, exe, procName)
}

// account is the user a process runs as.
type account struct {
	name     string
	uid, gid int
	home     string              // "": it has none, HOME is the work path
	cred     *syscall.Credential // nil: the executor's own user
}

// reach refuses a work path the account's processes could not start in:
// one whose way from / holds a directory they may not search (a
// checkout under root's 0700 home), which would fail as "fork/exec
// /bin/sh: permission denied", naming nothing.
func (a *account) reach(workPath string) error {
	if a.cred == nil {
		return nil
	}
	if err := identity.Reach(workPath, a.cred.Uid, a.cred.Gid, a.cred.Groups); err != nil {
		return fmt.Errorf("workPath: user %s (%w): put the instances' directories where every user may search (bcs-process-executor --work-base-dir and --run-base-dir): %w",
			a.name, err, errdefs.ErrPermissionDenied)
	}
	return nil
}

// owner is the uid and gid files of the account's processes get; -1, -1
// for the executor's own user (nothing to change).
func (a *account) owner() (uid, gid int) {
	if a.cred == nil {
		return -1, -1
	}
	return a.uid, a.gid
}

// accountOf is the user spec's process runs as. With an identity, no user
// is the namespace's own uid and a named one must be allowed by the
// namespace's rule, by name and by the uid it has on this agent; without
// one, no user is defaultUser.
func accountOf(spec *proto.TaskSpec, defaultUser string) (*account, error) {
	p, id := spec.Process, spec.Identity
	if id == nil {
		return lookupAccount(p.User, defaultUser)
	}
	if p.User == "" {
		// No passwd entry needed: the namespace's uid is a number.
		return &account{name: "bcs-" + spec.Instance.Namespace, uid: int(id.UID), gid: int(id.GID),
			cred: &syscall.Credential{Uid: id.UID, Gid: id.GID, Groups: []uint32{}}}, nil
	}
	return allowedAccount(id, p.User)
}

// allowedAccount resolves name, which the namespace of id must be allowed
// to name.
func allowedAccount(id *proto.Identity, name string) (*account, error) {
	rule, err := ruleOf(id)
	if err != nil {
		return nil, err
	}
	if err := rule.Check(name); err != nil {
		return nil, fmt.Errorf("user %q: %v (the namespace's admission policy): %w", name, err, errdefs.ErrInvalidArgument)
	}
	a, err := lookupAccount(name, name)
	if err != nil {
		return nil, err
	}
	ids := []uint32{uint32(a.gid)}
	if a.cred != nil {
		ids = append(ids, a.cred.Groups...)
	}
	for _, gid := range ids {
		if err := rule.CheckID(uint32(a.uid), gid); err != nil {
			return nil, fmt.Errorf("user %q is uid %d gid %d on this agent: %v (the namespace's admission policy): %w", name, a.uid, gid, err, errdefs.ErrInvalidArgument)
		}
	}
	return a, nil
}

// ruleOf is the rule of the namespace whose identity id is.
func ruleOf(id *proto.Identity) (identity.Rule, error) {
	rule, err := identity.NewRule(id.Users, id.UID, id.Range)
	if err != nil {
		return identity.Rule{}, fmt.Errorf("identity range: %v: %w", err, errdefs.ErrInvalidArgument)
	}
	return rule, nil
}

// lookupAccount resolves name (empty: defaultUser), a user of the agent
// or "uid[:gid]", to a credential with its supplementary groups. Running
// as the executor's own user needs no credential.
func lookupAccount(name, defaultUser string) (*account, error) {
	if name == "" {
		name = defaultUser
	}
	a, groups, err := resolveUser(name)
	if err != nil {
		return nil, fmt.Errorf("user %q: %v: %w", name, err, errdefs.ErrInvalidArgument)
	}
	if a.uid == os.Getuid() && a.gid == os.Getgid() {
		return a, nil
	}
	a.cred = &syscall.Credential{Uid: uint32(a.uid), Gid: uint32(a.gid), Groups: groups}
	return a, nil
}

// resolveUser reads "uid[:gid]" (no passwd entry needed; gid defaults to
// uid) or looks name up with its supplementary groups.
func resolveUser(name string) (*account, []uint32, error) {
	uidPart, gidPart, hasGID := strings.Cut(name, ":")
	if uid, err := strconv.ParseUint(uidPart, 10, 32); err == nil {
		gid := uid
		if hasGID {
			if gid, err = strconv.ParseUint(gidPart, 10, 32); err != nil {
				return nil, nil, fmt.Errorf("gid %q is not a number", gidPart)
			}
		}
		return &account{name: name, uid: int(uid), gid: int(gid)}, []uint32{}, nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		return nil, nil, err
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	var groups []uint32
	if ids, err := u.GroupIds(); err == nil {
		for _, g := range ids {
			if n, err := strconv.Atoi(g); err == nil {
				groups = append(groups, uint32(n))
			}
		}
	}
	return &account{name: name, uid: uid, gid: gid, home: u.HomeDir}, groups, nil
}
