package process

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sync"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/remotefile"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// Pull policies of seed 000 uris.
const (
	PullAlways       = "Always"
	PullIfNotPresent = "IfNotPresent"
)

// Fetcher downloads a task's packages (http, https with basic auth,
// file://) and unpacks them into their output directories. IfNotPresent
// packages live in a content cache keyed by the URL (without
// credentials) and revalidated with the server's validator (ETag or
// Last-Modified) when it has one.
type Fetcher struct {
	CacheDir string
	Client   *http.Client
	Logger   *slog.Logger // nil logs nothing

	mu    sync.Mutex
	locks map[string]*sync.Mutex
}

// FetchStats says what a fetch did, for logs and tests.
type FetchStats struct {
	Downloaded bool // the body came over the network
	CacheHit   bool // the cached copy was used
}

type cacheMeta struct {
	URL          string `json:"url"`
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"lastModified,omitempty"`
}

func (f *Fetcher) lock(key string) func() {
	f.mu.Lock()
	if f.locks == nil {
		f.locks = map[string]*sync.Mutex{}
	}
	m := f.locks[key]
	if m == nil {
		m = &sync.Mutex{}
		f.locks[key] = m
	}
	f.mu.Unlock()
	m.Lock()
	return m.Unlock
}

// Fetch puts uri's content into uri.OutputDir: archives (.tar.gz, .tgz,
// .zip) are extracted, other files copied under their base name. Errors
// name the URL without credentials and, for HTTP, the status.
// What is written belongs to uid:gid (uid < 0: the executor).
func (f *Fetcher) Fetch(ctx context.Context, uri proto.URI, uid, gid int) (FetchStats, error) {
	var stats FetchStats
	u, err := parseURI(uri)
	if err != nil {
		return stats, err
	}
	user, pwd := uri.User, uri.Password
	if u.User != nil && user == "" {
		user = u.User.Username()
		pwd, _ = u.User.Password()
	}
	u.User = nil
	var local string
	if u.Scheme == "http" || u.Scheme == "https" {
		local, stats, err = f.download(ctx, u, user, pwd, uri.PullPolicy)
		if err != nil {
			return stats, err
		}
		if uri.PullPolicy != PullIfNotPresent {
			defer os.Remove(local)
		}
	} else {
		local = u.Path
		if _, err := os.Stat(local); err != nil {
			return stats, fmt.Errorf("fetch %s: %w", u, err)
		}
	}
	name := path.Base(u.Path)
	if kind := archiveKind(name); kind != "" {
		if err := extract(local, kind, uri.OutputDir, uid, gid); err != nil {
			return stats, fmt.Errorf("extract %s: %w", u, err)
		}
		return stats, nil
	}
	if err := os.MkdirAll(uri.OutputDir, 0o755); err != nil {
		return stats, err
	}
	dst := filepath.Join(uri.OutputDir, name)
	if err := copyFile(local, dst, 0o755); err != nil {
		return stats, err
	}
	if uid >= 0 {
		return stats, os.Lchown(dst, uid, gid)
	}
	return stats, nil
}

// parseURI checks what Fetch can tell before fetching anything: the URL
// parses, has a scheme Fetch speaks (http, https, file) and an output
// directory. The URL it returns keeps its userinfo.
func parseURI(uri proto.URI) (*url.URL, error) {
	u, err := url.Parse(uri.Value)
	if err != nil {
		return nil, fmt.Errorf("uri %s: %w", remotefile.SafeURL(uri.Value), errdefs.ErrInvalidArgument)
	}
	if uri.OutputDir == "" {
		return nil, fmt.Errorf("uri %s: no outputDir: %w", remotefile.SafeURL(uri.Value), errdefs.ErrInvalidArgument)
	}
	switch u.Scheme {
	case "http", "https", "file", "":
		return u, nil
	}
	return nil, fmt.Errorf("fetch %s: scheme %q not supported: %w", remotefile.SafeURL(uri.Value), u.Scheme, errdefs.ErrInvalidArgument)
}

// download returns a local file with the body of u. With IfNotPresent
// the file is the cache entry; with Always a temporary file.
func (f *Fetcher) download(ctx context.Context, u *url.URL, user, pwd, policy string) (string, FetchStats, error) {
	var stats FetchStats
	sum := sha256.Sum256([]byte(u.String()))
	key := hex.EncodeToString(sum[:])
	dir := filepath.Join(f.CacheDir, key)
	if err := mkdirPrivate(dir); err != nil {
		return "", stats, err
	}
	unlock := f.lock(key)
	defer unlock()
	content, metaPath := filepath.Join(dir, "content"), filepath.Join(dir, "meta.json")
	var meta cacheMeta
	cached := false
	if policy == PullIfNotPresent {
		if b, err := os.ReadFile(metaPath); err == nil && json.Unmarshal(b, &meta) == nil && meta.URL == u.String() {
			if _, err := os.Stat(content); err == nil {
				cached = true
			}
		}
		if cached && meta.ETag == "" && meta.LastModified == "" {
			// Nothing to revalidate with: present is present.
			stats.CacheHit = true
			return content, stats, nil
		}
	}
	header := http.Header{}
	var accept []int
	if cached {
		accept = []int{http.StatusNotModified}
		if meta.ETag != "" {
			header.Set("If-None-Match", meta.ETag)
		}
		if meta.LastModified != "" {
			header.Set("If-Modified-Since", meta.LastModified)
		}
	}
	resp, err := remotefile.Get(ctx, f.Client, u, user, pwd, header, accept...)
	var status *remotefile.StatusError
	if err != nil && cached && !errors.As(err, &status) {
		if f.Logger != nil {
			f.Logger.Warn("revalidating failed; using the cached copy", "url", u, "err", err)
		}
		stats.CacheHit = true
		return content, stats, nil
	}
	if err != nil {
		return "", stats, fmt.Errorf("download: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotModified {
		stats.CacheHit = true
		return content, stats, nil
	}
	tmp, err := os.CreateTemp(dir, "download-")
	if err != nil {
		return "", stats, err
	}
	_, err = io.Copy(tmp, resp.Body)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp.Name())
		return "", stats, fmt.Errorf("download %s: %v: %w", u, err, errdefs.ErrUnavailable)
	}
	stats.Downloaded = true
	if policy != PullIfNotPresent {
		return tmp.Name(), stats, nil
	}
	if err := os.Rename(tmp.Name(), content); err != nil {
		return "", stats, err
	}
	meta = cacheMeta{URL: u.String(), ETag: resp.Header.Get("ETag"), LastModified: resp.Header.Get("Last-Modified")}
	b, _ := json.Marshal(meta)
	if err := os.WriteFile(metaPath, b, 0o600); err != nil {
		return "", stats, err
	}
	return content, stats, nil
}

func copyFile(src, dst string, perm os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp := dst + ".fetching"
	out, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, perm)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, dst)
}
