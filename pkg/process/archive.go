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

// checkEntry refuses members that would land outside the output
// directory: absolute names, ".." escapes, and links pointing out.
func checkEntry(e entry) error {
	name := strings.TrimPrefix(e.name, "./")
	if name == "" || name == "." {
		return nil
	}
	if path.IsAbs(e.name) || !filepath.IsLocal(filepath.FromSlash(name)) {
		return fmt.Errorf("archive member %q escapes the output directory: %w", e.name, errdefs.ErrInvalidArgument)
	}
	switch {
	case e.hardlink:
		if path.IsAbs(e.linkname) || !filepath.IsLocal(filepath.FromSlash(e.linkname)) {
			return fmt.Errorf("archive hard link %q → %q points outside the output directory: %w", e.name, e.linkname, errdefs.ErrInvalidArgument)
		}
	case e.mode&fs.ModeSymlink != 0:
		target := path.Join(path.Dir(name), e.linkname)
		if path.IsAbs(e.linkname) || !filepath.IsLocal(filepath.FromSlash(target)) {
			return fmt.Errorf("archive symlink %q → %q points outside the output directory: %w", e.name, e.linkname, errdefs.ErrInvalidArgument)
		}
	}
	return nil
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
	if err := walk(src, checkEntry); err != nil {
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
