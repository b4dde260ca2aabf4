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
	home     string
	cred     *syscall.Credential // nil: the executor's own user
}

// owner is the uid and gid files of the account's processes get; -1, -1
// for the executor's own user (nothing to change).
func (a *account) owner() (uid, gid int) {
	if a.cred == nil {
		return -1, -1
	}
	return a.uid, a.gid
}

// lookupAccount resolves name (empty: defaultUser) to a credential with
// its supplementary groups. Running as the executor's own user needs no
// credential.
func lookupAccount(name, defaultUser string) (*account, error) {
	if name == "" {
		name = defaultUser
	}
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("user %q: %v: %w", name, err, errdefs.ErrInvalidArgument)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	a := &account{name: name, uid: uid, gid: gid, home: u.HomeDir}
	if uid == os.Getuid() && gid == os.Getgid() {
		return a, nil
	}
	var groups []uint32
	if ids, err := u.GroupIds(); err == nil {
		for _, g := range ids {
			if n, err := strconv.Atoi(g); err == nil {
				groups = append(groups, uint32(n))
			}
		}
	}
	a.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: groups}
	return a, nil
}
