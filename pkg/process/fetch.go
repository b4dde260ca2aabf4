package process

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"github.com/bcs-mesos/bcs-mesos/pkg/confine"
	"github.com/bcs-mesos/bcs-mesos/pkg/egress"
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
// packages live in a content cache keyed by the URL, the namespace and
// the credential (cacheKey: a namespace never gets another's copy, nor a
// copy fetched with another credential), and revalidated with the
// server's validator (ETag or Last-Modified), sending the credential,
// when it has one: a revoked credential stops working.
type Fetcher struct {
	CacheDir string
	Client   *http.Client
	Logger   *slog.Logger // nil logs nothing
	// PackageDirs are the directories file:// packages may come from;
	// none refuses every file:// URI. A package is opened through its
	// directory's os.Root: a link cannot lead out.
	PackageDirs []string

	mu    sync.Mutex
	locks map[string]*sync.Mutex
	// secret keys the hashes that name cache entries (cacheKey); read
	// from, or made in, CacheDir the first time.
	secret []byte
}

// FetchStats says what a fetch did, for logs and tests.
type FetchStats struct {
	Downloaded bool // the body came over the network
	CacheHit   bool // the cached copy was used
}

type cacheMeta struct {
	Namespace    string `json:"namespace"`
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

// Fetch puts uri's content, fetched for namespace, into out, the output
// directory opened as a root: archives (.tar.gz, .tgz, .zip) are
// extracted, other files copied under their base name. An http(s) URI is
// fetched under policy (nil: none), a cached copy used only when policy
// lets the URI through. Errors name the URL without credentials and, for
// HTTP, the status or the egress rule. What is written belongs to
// uid:gid (uid < 0: the executor).
func (f *Fetcher) Fetch(ctx context.Context, namespace string, uri proto.URI, out *os.Root, uid, gid int, policy *egress.Policy) (FetchStats, error) {
	var stats FetchStats
	u, err := f.check(uri)
	if err != nil {
		return stats, err
	}
	user, pwd := uri.User, uri.Password
	if u.User != nil && user == "" {
		user = u.User.Username()
		pwd, _ = u.User.Password()
	}
	u.User = nil
	var src *os.File
	if u.Scheme == "http" || u.Scheme == "https" {
		var local string
		local, stats, err = f.download(ctx, namespace, u, user, pwd, uri.PullPolicy, policy)
		if err != nil {
			return stats, err
		}
		if uri.PullPolicy != PullIfNotPresent {
			defer os.Remove(local)
		}
		src, err = os.Open(local)
	} else {
		src, err = f.openPackage(u.Path)
	}
	if err != nil {
		return stats, fmt.Errorf("fetch %s: %w", u, err)
	}
	defer src.Close()
	name := path.Base(u.Path)
	if kind := archiveKind(name); kind != "" {
		if err := extract(src, kind, out, uid, gid); err != nil {
			return stats, fmt.Errorf("extract %s: %w", u, err)
		}
		return stats, nil
	}
	if err := replaceFile(out, name, src, 0o755, uid, gid); err != nil {
		return stats, fmt.Errorf("fetch %s: %w", u, err)
	}
	return stats, nil
}

// check says what Fetch can tell before fetching anything: the URL
// parses, has a scheme Fetch speaks (http, https, file) and an output
// directory, and a file:// package lies in a package directory. The URL
// it returns keeps its userinfo.
func (f *Fetcher) check(uri proto.URI) (*url.URL, error) {
	u, err := url.Parse(uri.Value)
	if err != nil {
		return nil, fmt.Errorf("uri %s: %w", remotefile.SafeURL(uri.Value), errdefs.ErrInvalidArgument)
	}
	if uri.OutputDir == "" {
		return nil, fmt.Errorf("uri %s: no outputDir: %w", remotefile.SafeURL(uri.Value), errdefs.ErrInvalidArgument)
	}
	switch u.Scheme {
	case "http", "https":
		return u, nil
	case "file", "":
		if err := confine.Check(u.Path, f.PackageDirs...); err != nil {
			return nil, fmt.Errorf("uri %s: file packages come from the executor's --package-dirs only: %v: %w", remotefile.SafeURL(uri.Value), err, errdefs.ErrInvalidArgument)
		}
		return u, nil
	}
	return nil, fmt.Errorf("fetch %s: scheme %q not supported: %w", remotefile.SafeURL(uri.Value), u.Scheme, errdefs.ErrInvalidArgument)
}

// openPackage opens the file package p, which check found inside a
// package directory, through that directory's root; only a regular file
// is a package.
func (f *Fetcher) openPackage(p string) (*os.File, error) {
	for _, dir := range f.PackageDirs {
		if !confine.Within(p, dir) {
			continue
		}
		root, err := os.OpenRoot(dir)
		if err != nil {
			return nil, err
		}
		defer root.Close()
		file, err := root.Open(confine.Rel(p, dir))
		if err != nil {
			return nil, err
		}
		if info, err := file.Stat(); err != nil || !info.Mode().IsRegular() {
			file.Close()
			return nil, fmt.Errorf("%s is not a regular file: %w", p, errdefs.ErrInvalidArgument)
		}
		return file, nil
	}
	return nil, fmt.Errorf("%s is in no package directory: %w", p, errdefs.ErrInvalidArgument)
}

// download returns a local file with the body of u, fetched for
// namespace with user:pwd, which egress must let through first (a cached
// copy included). With IfNotPresent the file is the cache entry; with
// Always a temporary file.
func (f *Fetcher) download(ctx context.Context, namespace string, u *url.URL, user, pwd, policy string, egressPolicy *egress.Policy) (string, FetchStats, error) {
	var stats FetchStats
	client := f.Client
	if egressPolicy != nil {
		if err := egressPolicy.Check(ctx, u); err != nil {
			return "", stats, fmt.Errorf("download %s: %w", remotefile.SafeURL(u.String()), err)
		}
		client = egressPolicy.Client(egress.ClientOptions{FollowRedirects: true})
	}
	key, err := f.cacheKey(namespace, u, user, pwd)
	if err != nil {
		return "", stats, err
	}
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
		if b, err := os.ReadFile(metaPath); err == nil && json.Unmarshal(b, &meta) == nil && meta.URL == u.String() && meta.Namespace == namespace {
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
	resp, err := remotefile.Get(ctx, client, u, user, pwd, header, accept...)
	var status *remotefile.StatusError
	if err != nil && cached && !errors.As(err, &status) && !errors.Is(err, errdefs.ErrPermissionDenied) {
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
	meta = cacheMeta{Namespace: namespace, URL: u.String(), ETag: resp.Header.Get("ETag"), LastModified: resp.Header.Get("Last-Modified")}
	b, _ := json.Marshal(meta)
	if err := os.WriteFile(metaPath, b, 0o600); err != nil {
		return "", stats, err
	}
	return content, stats, nil
}

// cacheKey names the cache entry of u fetched for namespace with
// user:pwd. The credential enters only through an HMAC under the cache's
// own random secret: neither it nor a plain hash of it, which a guess
// could be checked against, is on disk.
func (f *Fetcher) cacheKey(namespace string, u *url.URL, user, pwd string) (string, error) {
	secret, err := f.cacheSecret()
	if err != nil {
		return "", err
	}
	mac := hmac.New(sha256.New, secret)
	for _, part := range []string{namespace, u.String(), user, pwd} {
		// Each part with its length: no two tuples hash alike.
		fmt.Fprintf(mac, "%d:%s", len(part), part)
	}
	return hex.EncodeToString(mac.Sum(nil)), nil
}

// cacheSecretFile holds the secret of cacheKey, in CacheDir; every
// executor of the agent shares it, and so the cache.
const cacheSecretFile = "key"

// cacheSecret reads the secret of cacheKey, making it the first time.
func (f *Fetcher) cacheSecret() ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.secret != nil {
		return f.secret, nil
	}
	if err := mkdirPrivate(f.CacheDir); err != nil {
		return nil, err
	}
	path := filepath.Join(f.CacheDir, cacheSecretFile)
	secret, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		secret, err = makeCacheSecret(path)
	}
	if err == nil && len(secret) != 32 {
		err = fmt.Errorf("%s holds %d bytes, not 32", path, len(secret))
	}
	if err != nil {
		return nil, fmt.Errorf("package cache key: %w", err)
	}
	f.secret = secret
	return secret, nil
}

// makeCacheSecret writes 32 random bytes at path, whole or not at all (a
// complete file linked into place), and returns what path holds: those,
// or another executor's made first.
func makeCacheSecret(path string) ([]byte, error) {
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(secret)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Link(tmp.Name(), path)
	}
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	return os.ReadFile(path)
}

// ParseDirs reads a comma-separated list of absolute directories, as
// --package-dirs takes them; empty is none.
func ParseDirs(list string) ([]string, error) {
	var dirs []string
	for _, d := range strings.Split(list, ",") {
		d = strings.TrimSpace(d)
		switch {
		case d == "":
			continue
		case !filepath.IsAbs(d):
			return nil, fmt.Errorf("%q: want an absolute path: %w", d, errdefs.ErrInvalidArgument)
		}
		dirs = append(dirs, filepath.Clean(d))
	}
	return dirs, nil
}
