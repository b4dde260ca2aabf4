package identity

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// UnreachableError says which directory on the way to Dir its user may
// not search.
type UnreachableError struct {
	Dir, Blocking string
	UID           uint32
	Mode          os.FileMode
	Owner         uint32
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("uid %d cannot reach %s: %s is mode %04o, uid %d's", e.UID, e.Dir, e.Blocking, e.Mode.Perm(), e.Owner)
}

// Reach says whether the user uid (with primary group gid and groups)
// may search every directory from / down to dir, as the kernel will ask
// when a process of it starts there: the first one it may not is
// returned as an *UnreachableError. A checkout under root's 0700 home
// directory is the usual case; the process would fail with
// "fork/exec /bin/sh: permission denied", naming nothing. Root reaches
// everything; a directory that does not exist yet ends the walk.
func Reach(dir string, uid, gid uint32, groups []uint32) error {
	if uid == 0 {
		return nil
	}
	path := "/"
	for _, part := range append([]string{""}, strings.Split(strings.Trim(filepath.Clean(dir), "/"), "/")...) {
		path = filepath.Join(path, part)
		info, err := os.Stat(path)
		if os.IsNotExist(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("uid %d reaching %s: %w", uid, dir, err)
		}
		st, ok := info.Sys().(*syscall.Stat_t)
		if !ok {
			return nil
		}
		mode := info.Mode().Perm()
		var search os.FileMode
		switch {
		case st.Uid == uid:
			search = mode & 0o100
		case st.Gid == gid || slices.Contains(groups, st.Gid):
			search = mode & 0o010
		default:
			search = mode & 0o001
		}
		if search == 0 {
			return &UnreachableError{Dir: dir, Blocking: path, UID: uid, Mode: mode, Owner: st.Uid}
		}
	}
	return nil
}
