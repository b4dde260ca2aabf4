package devcluster

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// fetchURIs is a small Mesos fetcher: file:// (or plain absolute paths)
// and http(s):// URIs are copied into the sandbox; `executable` sets the
// run bit; `extract` (default true, ignored for executables) unpacks
// .tar, .tar.gz, .tgz and .zip archives into the sandbox.
func fetchURIs(ctx context.Context, uris []mesos.CommandInfo_URI, sandbox string) error {
	for _, u := range uris {
		if err := fetchURI(ctx, u, sandbox); err != nil {
			return fmt.Errorf("fetch %q: %w", u.Value, err)
		}
	}
	return nil
}

func fetchURI(ctx context.Context, u mesos.CommandInfo_URI, sandbox string) error {
	parsed, err := url.Parse(u.Value)
	if err != nil {
		return err
	}
	name := path.Base(parsed.Path)
	if u.OutputFile != nil && *u.OutputFile != "" {
		name = *u.OutputFile
	}
	if name == "" || name == "." || name == "/" {
		return fmt.Errorf("cannot tell a file name from the URI")
	}
	dst, err := insideDir(sandbox, name)
	if err != nil {
		return err
	}
	var src io.ReadCloser
	switch parsed.Scheme {
	case "", "file":
		f, err := os.Open(parsed.Path)
		if err != nil {
			return err
		}
		src = f
	case "http", "https":
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.Value, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return fmt.Errorf("HTTP %s", resp.Status)
		}
		src = resp.Body
	default:
		return fmt.Errorf("unsupported scheme %q", parsed.Scheme)
	}
	defer src.Close()
	mode := os.FileMode(0o644)
	executable := u.Executable != nil && *u.Executable
	if executable {
		mode = 0o755
	}
	if err := writeFile(dst, src, mode); err != nil {
		return err
	}
	if !executable && (u.Extract == nil || *u.Extract) {
		return extractArchive(dst, sandbox)
	}
	return nil
}

// insideDir joins name under dir and refuses paths that escape it.
func insideDir(dir, name string) (string, error) {
	p := filepath.Join(dir, name)
	rel, err := filepath.Rel(dir, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("path %q escapes the sandbox", name)
	}
	return p, nil
}

// extractArchive unpacks file into dir when its name says it is an
// archive Mesos would extract; other files are left alone.
func extractArchive(file, dir string) error {
	lower := strings.ToLower(file)
	switch {
	case strings.HasSuffix(lower, ".tar.gz") || strings.HasSuffix(lower, ".tgz"):
		f, err := os.Open(file)
		if err != nil {
			return err
		}
		defer f.Close()
		gz, err := gzip.NewReader(f)
		if err != nil {
			return err
		}
		return extractTar(gz, dir)
	case strings.HasSuffix(lower, ".tar"):
		f, err := os.Open(file)
		if err != nil {
			return err
		}
		defer f.Close()
		return extractTar(f, dir)
	case strings.HasSuffix(lower, ".zip"):
		return extractZip(file, dir)
	}
	return nil
}

func extractTar(r io.Reader, dir string) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		dst, err := insideDir(dir, h.Name)
		if err != nil {
			return err
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(dst, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := writeFile(dst, tr, os.FileMode(h.Mode)&0o777); err != nil {
				return err
			}
		}
	}
}

func extractZip(file, dir string) error {
	zr, err := zip.OpenReader(file)
	if err != nil {
		return err
	}
	defer zr.Close()
	for _, f := range zr.File {
		dst, err := insideDir(dir, f.Name)
		if err != nil {
			return err
		}
		if f.FileInfo().IsDir() {
			if err := os.MkdirAll(dst, 0o755); err != nil {
				return err
			}
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return err
		}
		err = writeFile(dst, rc, f.Mode()&0o777)
		rc.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// writeFile writes r to dst with mode (0644 when 0). An executable is
// written while no process is forked: a child forked while it is open for
// writing holds that descriptor until it execs, and an executor started
// from the file meanwhile fails with ETXTBSY ("text file busy", exit 126
// from its shell). Forking takes syscall.ForkLock for writing; holding it
// for reading keeps forks out while the file is written (a local copy:
// milliseconds).
func writeFile(dst string, r io.Reader, mode os.FileMode) error {
	if mode == 0 {
		mode = 0o644
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if mode&0o111 != 0 {
		syscall.ForkLock.RLock()
		defer syscall.ForkLock.RUnlock()
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, r); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Chmod(dst, mode) // an existing file keeps its mode on open
}
