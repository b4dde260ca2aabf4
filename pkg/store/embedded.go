package store

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
)

// Defaults of StartEmbedded.
const (
	DefaultStartTimeout = 60 * time.Second
	// DefaultQuotaBytes is etcd's largest recommended quota (its own
	// default, 2 GiB, is less than a million task groups with the history
	// of their launch take: docs/operations.md has the figures).
	DefaultQuotaBytes = 8 << 30
	// DefaultCompactionRetention keeps 5 to 10 minutes of history, as
	// Kubernetes compacts its etcd every 5 minutes: long enough for a
	// watch cut off for minutes to resume, short enough that a fleet's
	// launch or rollout does not stack an hour of revisions.
	DefaultCompactionRetention = "5m"
	// embeddedSubdir is where etcd keeps its files under the data
	// directory, leaving room beside it for other files (the secret key).
	embeddedSubdir = "etcd"
)

// Embedded is a single-node etcd running inside this process. It only
// serves client endpoints: the Store talks to it over the same client
// protocol as to an external cluster.
type Embedded struct {
	etcd      *embed.Etcd
	endpoints []string
	logLevel  zap.AtomicLevel
	closeOnce sync.Once
}

// EmbeddedOption changes how StartEmbedded runs etcd.
type EmbeddedOption func(*embeddedConfig)

type embeddedConfig struct {
	clientURL    string
	peerURL      string
	startTimeout time.Duration
	logLevel     string
	compaction   string
	quota        int64
}

// WithClientURL makes etcd listen for clients on a fixed URL, e.g.
// "http://127.0.0.1:2379" so etcdctl can reach it. By default it listens
// on a free 127.0.0.1 port (Endpoints tells which).
func WithClientURL(rawURL string) EmbeddedOption {
	return func(c *embeddedConfig) { c.clientURL = rawURL }
}

// WithPeerURL fixes the raft peer URL; by default a free 127.0.0.1 port.
func WithPeerURL(rawURL string) EmbeddedOption {
	return func(c *embeddedConfig) { c.peerURL = rawURL }
}

// WithStartTimeout bounds the wait for etcd to become ready (replaying a
// large WAL takes time). Default DefaultStartTimeout.
func WithStartTimeout(d time.Duration) EmbeddedOption {
	return func(c *embeddedConfig) { c.startTimeout = d }
}

// WithLogLevel sets etcd's own log level ("debug", "info", "warn",
// "error"); default "error". etcd never logs stored values.
func WithLogLevel(level string) EmbeddedOption {
	return func(c *embeddedConfig) { c.logLevel = level }
}

// WithCompactionRetention keeps this much revision history (a duration
// such as "1h"; "0" keeps everything). Default
// DefaultCompactionRetention. Watches from a
// revision older than that fail with ErrCompacted.
func WithCompactionRetention(retention string) EmbeddedOption {
	return func(c *embeddedConfig) { c.compaction = retention }
}

// WithQuota limits etcd's database file to this many bytes
// (--quota-backend-bytes); default DefaultQuotaBytes. A write that would
// take it further fails with ErrNoSpace, and so does every write after
// it until Reclaim made room.
func WithQuota(bytes int64) EmbeddedOption {
	return func(c *embeddedConfig) { c.quota = bytes }
}

// StartEmbedded runs a single-node etcd keeping its data in
// <dataDir>/etcd, bound to 127.0.0.1, and waits until it serves. Data
// written before Close is there again when StartEmbedded is called on the
// same dataDir.
func StartEmbedded(ctx context.Context, dataDir string, opts ...EmbeddedOption) (*Embedded, error) {
	c := embeddedConfig{startTimeout: DefaultStartTimeout, logLevel: "error", compaction: DefaultCompactionRetention, quota: DefaultQuotaBytes}
	for _, opt := range opts {
		opt(&c)
	}
	if dataDir == "" {
		return nil, fmt.Errorf("embedded etcd: data directory is empty: %w", errdefs.ErrInvalidArgument)
	}
	if c.quota <= 0 {
		return nil, fmt.Errorf("embedded etcd: quota %d bytes: must be positive: %w", c.quota, errdefs.ErrInvalidArgument)
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("embedded etcd: data directory %q: %w", dataDir, err)
	}
	dir := filepath.Join(dataDir, embeddedSubdir)
	if err := checkEtcdDataDir(dir); err != nil {
		return nil, err
	}
	// Free ports are found by binding and releasing them; another process
	// can take one in between, so retry a few times with new ports.
	const attempts = 3
	for attempt := 1; ; attempt++ {
		e, err := startEmbedded(ctx, dir, c)
		if err == nil {
			return e, nil
		}
		pickedPorts := c.clientURL == "" || c.peerURL == ""
		if attempt == attempts || !pickedPorts || !errors.Is(err, syscall.EADDRINUSE) {
			return nil, err
		}
	}
}

func startEmbedded(ctx context.Context, dir string, c embeddedConfig) (*Embedded, error) {
	level, err := zap.ParseAtomicLevel(c.logLevel)
	if err != nil {
		return nil, fmt.Errorf("embedded etcd log level %q: %w", c.logLevel, errdefs.ErrInvalidArgument)
	}
	cfg, err := etcdConfig(dir, c)
	if err != nil {
		return nil, err
	}
	logger, err := etcdLogger(level)
	if err != nil {
		return nil, fmt.Errorf("embedded etcd logger: %w", err)
	}
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(logger)
	timer := time.NewTimer(c.startTimeout)
	defer timer.Stop()
	etcd, err := startEtcd(ctx, cfg, timer.C)
	if err != nil {
		return nil, fmt.Errorf("embedded etcd in %q: %w", dir, err)
	}
	select {
	case <-etcd.Server.ReadyNotify():
	case err := <-etcd.Err():
		etcd.Close()
		return nil, fmt.Errorf("embedded etcd in %q: %w", dir, err)
	// An etcd that never got ready can take long to close: the caller, a
	// process told to stop, does not wait for it.
	case <-timer.C:
		go etcd.Close()
		return nil, fmt.Errorf("embedded etcd in %q not ready after %s: %w", dir, c.startTimeout, errdefs.ErrUnavailable)
	case <-ctx.Done():
		go etcd.Close()
		return nil, fmt.Errorf("embedded etcd in %q: stopped before it was ready: %w", dir, ctx.Err())
	}
	e := &Embedded{etcd: etcd, logLevel: level}
	for _, l := range etcd.Clients {
		e.endpoints = append(e.endpoints, "http://"+l.Addr().String())
	}
	return e, nil
}

// startEtcd runs embed.StartEtcd, which blocks while it opens and replays
// the data directory, until it returns, ctx ends or timeout fires: a
// stop signal must end the process even if etcd never gets through its
// files. An etcd abandoned that way is closed once it has started.
func startEtcd(ctx context.Context, cfg *embed.Config, timeout <-chan time.Time) (*embed.Etcd, error) {
	type result struct {
		etcd *embed.Etcd
		err  error
	}
	started := make(chan result, 1)
	go func() {
		etcd, err := embed.StartEtcd(cfg)
		started <- result{etcd, err}
	}()
	abandon := func() {
		go func() {
			if r := <-started; r.err == nil {
				r.etcd.Close()
			}
		}()
	}
	select {
	case r := <-started:
		return r.etcd, r.err
	case <-timeout:
		abandon()
		return nil, fmt.Errorf("still opening its files after the start timeout: %w", errdefs.ErrUnavailable)
	case <-ctx.Done():
		abandon()
		return nil, fmt.Errorf("stopped while opening its files: %w", ctx.Err())
	}
}

func etcdConfig(dir string, c embeddedConfig) (*embed.Config, error) {
	clientURL, err := urlOrFreePort(c.clientURL)
	if err != nil {
		return nil, fmt.Errorf("embedded etcd client URL: %w", err)
	}
	peerURL, err := urlOrFreePort(c.peerURL)
	if err != nil {
		return nil, fmt.Errorf("embedded etcd peer URL: %w", err)
	}
	cfg := embed.NewConfig()
	cfg.Name = "bcs-scheduler"
	cfg.Dir = dir
	cfg.ListenClientUrls = []url.URL{*clientURL}
	cfg.AdvertiseClientUrls = []url.URL{*clientURL}
	cfg.ListenPeerUrls = []url.URL{*peerURL}
	cfg.AdvertisePeerUrls = []url.URL{*peerURL}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.InitialClusterToken = "bcs-scheduler"
	cfg.EnableGRPCGateway = false
	cfg.Logger = "zap"
	cfg.LogLevel = c.logLevel
	cfg.AutoCompactionMode = embed.CompactorModePeriodic
	cfg.AutoCompactionRetention = c.compaction
	cfg.QuotaBackendBytes = c.quota
	// etcd keeps this many applied raft entries in memory for a follower
	// that fell behind; a single member has none. Each is a transaction
	// of up to 1.5 MiB: etcd's 5,000 held 1.3 GiB at a million task
	// groups' launch, 100 hold a fiftieth of that.
	cfg.SnapshotCatchUpEntries = 100
	return cfg, nil
}

// etcdLogger logs JSON to stderr at a level Close can raise.
func etcdLogger(level zap.AtomicLevel) (*zap.Logger, error) {
	zc := zap.NewProductionConfig()
	zc.Level = level
	zc.Sampling = nil
	zc.OutputPaths = []string{"stderr"}
	zc.ErrorOutputPaths = []string{"stderr"}
	return zc.Build()
}

// urlOrFreePort parses rawURL, or returns http://127.0.0.1:<free port>.
func urlOrFreePort(rawURL string) (*url.URL, error) {
	if rawURL != "" {
		u, err := url.Parse(rawURL)
		if err != nil {
			return nil, fmt.Errorf("%q: %w: %v", rawURL, errdefs.ErrInvalidArgument, err)
		}
		return u, nil
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("finding a free port: %w", err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		return nil, fmt.Errorf("finding a free port: %w", err)
	}
	return &url.URL{Scheme: "http", Host: addr}, nil
}

// Endpoints are the client URLs to put in Config.Endpoints.
func (e *Embedded) Endpoints() []string {
	return append([]string(nil), e.endpoints...)
}

// Close stops etcd, flushing its data, and waits until the server has
// stopped. Closing again does nothing.
func (e *Embedded) Close() {
	e.closeOnce.Do(func() {
		// Stopping makes etcd's listeners report "use of closed network
		// connection" at error level; during an intended stop that is noise.
		e.logLevel.SetLevel(zap.FatalLevel)
		e.etcd.Close()
		<-e.etcd.Server.StopNotify()
	})
}
