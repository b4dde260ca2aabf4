package process

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
)

// archiveKind names the archive formats the fetcher extracts; "" is a
// plain file.
func archiveKind(name string) string {
	lower := strings.ToLower(name)
	switch {
	case strings.HasSuffix(lower, ".tar.gz"), strings.HasSuffix(lower, ".tgz"):
		return "tar.gz"
	case strings.HasSuffix(lower, ".zip"):
		return "zip"
	}
	return ""
}

// entry is one member of an archive, format independent.
type entry struct {
	name     string
	mode     fs.FileMode // type bits and permissions
	linkname string      // symlink target or hard link source
	hardlink bool
	open     func() (io.Reader, error)
}

// maxLinkHops bounds the links followed resolving one path, as the
// kernel's ELOOP does.
const maxLinkHops = 40

// entryChecker refuses members that would land outside the output
// directory: absolute names, ".." escapes, and links pointing out. Names
// and targets are resolved through the links earlier members made, as
// extraction will follow them: "a → ." then "a/b → .." puts b in the
// output directory itself, pointing above it.
type entryChecker struct {
	// links are the symlinks made so far: where each lands (resolved,
	// relative to the output directory) → its target.
	links map[string]string
}

func newEntryChecker() *entryChecker { return &entryChecker{links: map[string]string{}} }

func (c *entryChecker) check(e entry) error {
	name := strings.TrimPrefix(e.name, "./")
	if name == "" || name == "." {
		return nil
	}
	if path.IsAbs(e.name) || !filepath.IsLocal(filepath.FromSlash(name)) {
		return fmt.Errorf("archive member %q escapes the output directory: %w", e.name, errdefs.ErrInvalidArgument)
	}
	// Extraction writes at the cleaned name, through the links there.
	clean := path.Clean(name)
	dir, ok := c.resolve(path.Dir(clean))
	if !ok {
		return fmt.Errorf("archive member %q escapes the output directory through a link of the archive: %w", e.name, errdefs.ErrInvalidArgument)
	}
	where := path.Join(dir, path.Base(clean))
	switch {
	case e.hardlink:
		if _, ok := c.resolve(path.Clean(e.linkname)); path.IsAbs(e.linkname) || !ok {
			return fmt.Errorf("archive hard link %q → %q points outside the output directory: %w", e.name, e.linkname, errdefs.ErrInvalidArgument)
		}
		delete(c.links, where)
	case e.mode&fs.ModeSymlink != 0:
		hops := 0
		if _, ok := c.follow(dir, e.linkname, &hops); !ok {
			return fmt.Errorf("archive symlink %q → %q points outside the output directory: %w", e.name, e.linkname, errdefs.ErrInvalidArgument)
		}
		c.links[where] = e.linkname
	case e.mode.IsRegular():
		delete(c.links, where) // the file replaces the link; a directory would not
	}
	return nil
}

// resolve follows the archive's links along p, a path relative to the
// output directory, and returns where it leads, as the kernel would:
// ".." after a link climbs from where the link led. False when that is
// outside the output directory or more than maxLinkHops links away.
func (c *entryChecker) resolve(p string) (string, bool) {
	hops := 0
	return c.follow(".", p, &hops)
}

// follow resolves p from the directory dir (resolved already), counting
// the links it follows in hops.
func (c *entryChecker) follow(dir, p string, hops *int) (string, bool) {
	if path.IsAbs(p) {
		return "", false
	}
	cur := dir
	for _, part := range strings.Split(p, "/") {
		switch part {
		case "", ".":
			continue
		case "..":
			if cur == "." {
				return "", false
			}
			cur = path.Dir(cur)
			continue
		}
		next := path.Join(cur, part)
		if target, ok := c.links[next]; ok {
			if *hops++; *hops > maxLinkHops {
				return "", false
			}
			if next, ok = c.follow(cur, target, hops); !ok {
				return "", false
			}
		}
		cur = next
	}
	return cur, true
}

// extract unpacks the archive src into root, the output directory.
// Every member is checked before anything is written, and writes go
// through the root so that even a symlink planted earlier cannot lead
// outside. Everything written is owned by uid:gid unless uid < 0.
func extract(src *os.File, kind string, root *os.Root, uid, gid int) error {
	walk := walkTarGz
	if kind == "zip" {
		walk = walkZip
	}
	if err := walk(src, newEntryChecker().check); err != nil {
		return err
	}
	own := func(name string) error {
		if uid < 0 {
			return nil
		}
		return root.Lchown(name, uid, gid)
	}
	return walk(src, func(e entry) error {
		name := strings.TrimSuffix(strings.TrimPrefix(path.Clean(e.name), "./"), "/")
		if name == "." || name == "" {
			return nil
		}
		if parent := path.Dir(name); parent != "." {
			if err := root.MkdirAll(parent, 0o755); err != nil {
				return fmt.Errorf("extract %q: %w", e.name, err)
			}
			if err := own(parent); err != nil {
				return err
			}
		}
		if err := writeEntry(root, name, e); err != nil {
			return err
		}
		return own(name)
	})
}

func writeEntry(root *os.Root, name string, e entry) error {
	perm := e.mode.Perm()
	switch {
	case e.mode.IsDir():
		if err := root.MkdirAll(name, perm|0o700); err != nil {
			return fmt.Errorf("extract %q: %w", e.name, err)
		}
		return nil
	case e.hardlink:
		_ = root.Remove(name)
		return root.Link(strings.TrimPrefix(path.Clean(e.linkname), "./"), name)
	case e.mode&fs.ModeSymlink != 0:
		_ = root.Remove(name)
		return root.Symlink(e.linkname, name)
	case e.mode.IsRegular():
		r, err := e.open()
		if err != nil {
			return err
		}
		_ = root.Remove(name)
		f, err := root.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, perm)
		if err != nil {
			return fmt.Errorf("extract %q: %w", e.name, err)
		}
		_, err = io.Copy(f, r)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("extract %q: %w", e.name, err)
		}
		return root.Chmod(name, perm)
	}
	return nil // devices, fifos: skipped
}

// walkTarGz calls fn for every member of the archive f, from its start.
func walkTarGz(f *os.File, fn func(entry) error) error {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	gz, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("%s: %w: %w", filepath.Base(f.Name()), err, errdefs.ErrInvalidArgument)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w: %w", filepath.Base(f.Name()), err, errdefs.ErrInvalidArgument)
		}
		e := entry{name: h.Name, mode: h.FileInfo().Mode(), linkname: h.Linkname, open: func() (io.Reader, error) { return tr, nil }}
		switch h.Typeflag {
		case tar.TypeLink:
			e.hardlink = true
		case tar.TypeXGlobalHeader:
			continue
		}
		if err := fn(e); err != nil {
			return err
		}
	}
}

// walkZip calls fn for every member of the archive f.
func walkZip(f *os.File, fn func(entry) error) error {
	info, err := f.Stat()
	if err != nil {
		return err
	}
	zr, err := zip.NewReader(f, info.Size())
	if err != nil {
		return fmt.Errorf("%s: %w: %w", filepath.Base(f.Name()), err, errdefs.ErrInvalidArgument)
	}
	for _, zf := range zr.File {
		e := entry{name: zf.Name, mode: zf.Mode()}
		var rc io.ReadCloser
		e.open = func() (io.Reader, error) {
			var err error
			rc, err = zf.Open()
			return rc, err
		}
		if e.mode&fs.ModeSymlink != 0 {
			r, err := zf.Open()
			if err != nil {
				return err
			}
			target, err := io.ReadAll(io.LimitReader(r, 4096))
			r.Close()
			if err != nil {
				return err
			}
			e.linkname = string(target)
		}
		err := fn(e)
		if rc != nil {
			rc.Close()
		}
		if err != nil {
			return err
		}
	}
	return nil
}
