package confine

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
)

// InstanceDirName is the directory an instance owns under each base
// directory: <namespace>.<name>.<index>, the layout of every example
// (${namespace}.${processname}.${instanceid}).
func InstanceDirName(namespace, name string, index int) string {
	return namespace + "." + name + "." + strconv.Itoa(index)
}

// InstanceDirs are the instance's own directories under the work and run
// base directories.
func InstanceDirs(workBase, runBase, namespace, name string, index int) []string {
	dir := InstanceDirName(namespace, name, index)
	return []string{path.Join(workBase, dir), path.Join(runBase, dir)}
}

// Within reports whether the absolute path p is dir or lies under it,
// with no ".." on the way: lexically, links are the opener's business.
func Within(p, dir string) bool {
	if !path.IsAbs(p) || slices.Contains(strings.Split(p, "/"), "..") {
		return false
	}
	p, dir = path.Clean(p), path.Clean(dir)
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

// Check returns nil when p lies within one of dirs, else why not.
func Check(p string, dirs ...string) error {
	switch {
	case !path.IsAbs(p):
		return fmt.Errorf("want an absolute path, got %q", p)
	case slices.Contains(strings.Split(p, "/"), ".."):
		return fmt.Errorf("must not contain \"..\", got %q", p)
	}
	for _, dir := range dirs {
		if Within(p, dir) {
			return nil
		}
	}
	return fmt.Errorf("%q is outside %s", p, orList(dirs))
}

// Rel is p relative to dir, which p lies within ("." for dir itself).
func Rel(p, dir string) string {
	p, dir = path.Clean(p), path.Clean(dir)
	if p == dir {
		return "."
	}
	return strings.TrimPrefix(strings.TrimPrefix(p, dir), "/")
}

func orList(dirs []string) string {
	quoted := make([]string, len(dirs))
	for i, d := range dirs {
		quoted[i] = strconv.Quote(d)
	}
	switch len(quoted) {
	case 0:
		return "every allowed directory (none is configured)"
	case 1:
		return quoted[0]
	}
	return strings.Join(quoted[:len(quoted)-1], ", ") + " or " + quoted[len(quoted)-1]
}
