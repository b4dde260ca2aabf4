package store

import (
	"cmp"
	"context"
	"crypto/tls"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
)

// Defaults applied by Open to zero Config fields.
const (
	DefaultPrefix         = "/bcs/"
	DefaultDialTimeout    = 5 * time.Second
	DefaultRequestTimeout = 5 * time.Second
	// DefaultListPageSize is large because etcd walks the rest of the
	// range for every page (to count it): 100,000 task groups took 1.5 s
	// longer to list in pages of 500 than of 5,000 (a few megabytes).
	DefaultListPageSize = 5000
)

// Config says which etcd to use and how.
type Config struct {
	// Endpoints are etcd client URLs, e.g. Embedded.Endpoints() or
	// "http://10.0.0.1:2379" for an external cluster.
	Endpoints []string
	// TLS is the client side of https:// endpoints: the CAs that verify
	// etcd and the client certificate it may require. Nil with an
	// https:// endpoint verifies it by the system's CAs.
	TLS *tls.Config
	// Prefix is prepended to every key; it must end in "/". Default
	// DefaultPrefix. Two stores with different prefixes never see each
	// other's keys.
	Prefix string
	// DialTimeout bounds Open's first round trip to etcd. Default
	// DefaultDialTimeout.
	DialTimeout time.Duration
	// RequestTimeout bounds every request (each page of a List); a request
	// that runs out of it fails with errdefs.ErrUnavailable. Default
	// DefaultRequestTimeout.
	RequestTimeout time.Duration
	// ListPageSize is how many keys List fetches per request. Default
	// DefaultListPageSize.
	ListPageSize int64
	// Sealer encrypts the values of keys under secrets/ and the passwords
	// in other values (SealedMembers). Without one, any read or write of
	// such a key or value fails: they are never stored in clear.
	Sealer *Sealer
	// KeyFile, instead of Sealer, names the sealing key file: Open seals
	// with its key once it matches the fingerprint stored in etcd
	// (SealingFingerprintKey). On a store without one, Open records the
	// key's, creating the key file first if it is missing and the store
	// holds no sealed value. Any other case fails wrapping ErrSealingKey:
	// another key, a missing key file, an unfinished rotation.
	KeyFile string
	// Logger receives the etcd client's own diagnostics (never values).
	// Default: discard.
	Logger *zap.Logger
}

// Store is a versioned key-value store on etcd v3. Keys are relative to
// Config.Prefix and must pass validateKey (segments as in ValidateSegment).
// It is safe for concurrent use.
type Store struct {
	client         *clientv3.Client
	prefix         string
	requestTimeout time.Duration
	pageSize       int64
	sealer         *Sealer
	fence          *Fence // see WithFence; nil writes unconditionally
}

// Entry is one stored key with its value and etcd's bookkeeping.
type Entry struct {
	Key   string // relative to the store prefix
	Value []byte // unsealed for secrets
	// Revision is the key's mod revision: the store revision of its last
	// write. Pass it as expectRev to Update, Delete or an Op.
	Revision       int64
	CreateRevision int64 // store revision at which the key was created
	Version        int64 // number of writes since creation, starting at 1
}

// Open connects to etcd and checks, within cfg.DialTimeout, that it
// answers; an unreachable etcd fails with errdefs.ErrUnavailable, one
// whose TLS refuses this client (or that this client cannot verify) with
// errdefs.ErrUnauthenticated, saying why.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	cfg = withDefaults(cfg)
	if len(cfg.Endpoints) == 0 {
		return nil, fmt.Errorf("store: no etcd endpoints: %w", errdefs.ErrInvalidArgument)
	}
	if !strings.HasSuffix(cfg.Prefix, "/") {
		return nil, fmt.Errorf("store: prefix %q must end in \"/\": %w", cfg.Prefix, errdefs.ErrInvalidArgument)
	}
	if cfg.Sealer != nil && cfg.KeyFile != "" {
		return nil, fmt.Errorf("store: both a Sealer and a KeyFile: %w", errdefs.ErrInvalidArgument)
	}
	client, err := clientv3.New(clientv3.Config{
		Endpoints:            cfg.Endpoints,
		DialTimeout:          cfg.DialTimeout,
		DialKeepAliveTime:    10 * time.Second,
		DialKeepAliveTimeout: cfg.DialTimeout,
		TLS:                  cfg.TLS,
		Logger:               cfg.Logger,
	})
	if err != nil {
		return nil, classify(ctx, fmt.Sprintf("connect to %q", cfg.Endpoints), err)
	}
	s := &Store{
		client:         client,
		prefix:         cfg.Prefix,
		requestTimeout: cfg.RequestTimeout,
		pageSize:       cfg.ListPageSize,
		sealer:         cfg.Sealer,
	}
	probeCtx, cancel := context.WithTimeout(ctx, cfg.DialTimeout)
	defer cancel()
	if _, err := client.Get(probeCtx, s.prefix, clientv3.WithCountOnly()); err != nil {
		client.Close()
		if refusal := tlsRefusal(ctx, cfg.Endpoints, cfg.TLS, cfg.DialTimeout); refusal != nil {
			return nil, refusal
		}
		return nil, classify(ctx, fmt.Sprintf("connect to %q", cfg.Endpoints), err)
	}
	if cfg.KeyFile != "" {
		if s.sealer, err = s.sealerFromKeyFile(ctx, cfg.KeyFile); err != nil {
			client.Close()
			return nil, err
		}
	}
	return s, nil
}

func withDefaults(cfg Config) Config {
	if cfg.Prefix == "" {
		cfg.Prefix = DefaultPrefix
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = DefaultDialTimeout
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = DefaultRequestTimeout
	}
	if cfg.ListPageSize <= 0 {
		cfg.ListPageSize = DefaultListPageSize
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	return cfg
}

// Close releases the connection to etcd; watches end.
func (s *Store) Close() error {
	return s.client.Close()
}

func (s *Store) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.requestTimeout)
}

// Ping checks that etcd answers a read within the request timeout; an
// unreachable etcd fails with errdefs.ErrUnavailable.
func (s *Store) Ping(ctx context.Context) error {
	_, err := s.Revision(ctx)
	return err
}

// MemberURLs returns the client and peer URLs of every member of the
// etcd cluster, as it lists them: what must stay out of reach of
// tenants' fetches (pkg/egress).
func (s *Store) MemberURLs(ctx context.Context) ([]string, error) {
	rctx, cancel := s.withTimeout(ctx)
	defer cancel()
	resp, err := s.client.MemberList(rctx)
	if err != nil {
		return nil, classify(ctx, "list the members", err)
	}
	var urls []string
	for _, m := range resp.Members {
		urls = append(urls, m.ClientURLs...)
		urls = append(urls, m.PeerURLs...)
	}
	return urls, nil
}

// Revision returns the store's current revision: that of the latest write
// to etcd, under any prefix. Watch(ctx, prefix, rev+1) sees every change
// made after Revision answered.
func (s *Store) Revision(ctx context.Context) (int64, error) {
	rctx, cancel := s.withTimeout(ctx)
	defer cancel()
	resp, err := s.client.Get(rctx, s.prefix+FrameworkIDKey, clientv3.WithCountOnly())
	if err != nil {
		return 0, classify(ctx, "read the revision", err)
	}
	return resp.Header.Revision, nil
}

// Get returns the entry at key, or errdefs.ErrNotFound.
func (s *Store) Get(ctx context.Context, key string) (Entry, error) {
	return s.get(ctx, key, 0)
}

// GetAt returns the entry key had at store revision rev: errdefs.ErrNotFound
// when it did not exist then, ErrCompacted when etcd no longer keeps rev.
func (s *Store) GetAt(ctx context.Context, key string, rev int64) (Entry, error) {
	if rev <= 0 {
		return Entry{}, fmt.Errorf("get %q: revision must be > 0, got %d: %w", key, rev, errdefs.ErrInvalidArgument)
	}
	return s.get(ctx, key, rev)
}

// get reads key at rev, or at the current revision when rev is 0.
func (s *Store) get(ctx context.Context, key string, rev int64) (Entry, error) {
	if err := validateKey(key); err != nil {
		return Entry{}, err
	}
	at, opts := "", []clientv3.OpOption(nil)
	if rev > 0 {
		at, opts = fmt.Sprintf(" at revision %d", rev), append(opts, clientv3.WithRev(rev))
	}
	rctx, cancel := s.withTimeout(ctx)
	defer cancel()
	resp, err := s.client.Get(rctx, s.prefix+key, opts...)
	if err != nil {
		return Entry{}, classify(ctx, fmt.Sprintf("get %q%s", key, at), err)
	}
	if len(resp.Kvs) == 0 {
		return Entry{}, fmt.Errorf("key %q%s: %w", key, at, errdefs.ErrNotFound)
	}
	return s.entry(resp.Kvs[0])
}

// GetMany reads keys, in one round trip for each maxTxnOps of them (each
// such group read at one revision): their entries in keys' order, a zero
// Entry (Revision 0) for a key that does not exist.
func (s *Store) GetMany(ctx context.Context, keys []string) ([]Entry, error) {
	entries := make([]Entry, 0, len(keys))
	for chunk := range slices.Chunk(keys, maxTxnOps) {
		reads := make([]clientv3.Op, len(chunk))
		for i, key := range chunk {
			if err := validateKey(key); err != nil {
				return nil, err
			}
			reads[i] = clientv3.OpGet(s.prefix + key)
		}
		rctx, cancel := s.withTimeout(ctx)
		resp, err := s.client.Txn(rctx).Then(reads...).Commit()
		cancel()
		if err != nil {
			return nil, classify(ctx, fmt.Sprintf("get %d keys from %q", len(chunk), chunk[0]), err)
		}
		for _, r := range resp.Responses {
			kvs := r.GetResponseRange().GetKvs()
			if len(kvs) == 0 {
				entries = append(entries, Entry{})
				continue
			}
			e, err := s.entry(kvs[0])
			if err != nil {
				return nil, err
			}
			entries = append(entries, e)
		}
	}
	return entries, nil
}

// List returns every entry whose key starts with prefix, sorted by key.
// prefix is "" (the whole store) or ends in "/". See ListWithRevision.
func (s *Store) List(ctx context.Context, prefix string) ([]Entry, error) {
	entries, _, err := s.ListWithRevision(ctx, prefix)
	return entries, err
}

// ListWithRevision is List that also returns the store revision the list
// is a consistent snapshot of: Watch(ctx, prefix, rev+1) then misses
// nothing and repeats nothing. Large lists are fetched in pages of
// Config.ListPageSize keys, all read at that one revision.
func (s *Store) ListWithRevision(ctx context.Context, prefix string) ([]Entry, int64, error) {
	var entries []Entry
	rev, err := s.Each(ctx, prefix, func(e Entry) error {
		entries = append(entries, e)
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	return entries, rev, nil
}

// Each is List that hands the entries to fn one by one, a page at a
// time, and returns the revision they were read at: a reader that folds
// a large prefix (every task group of a fleet) never holds all of it.
// An error fn returns stops it and is returned.
func (s *Store) Each(ctx context.Context, prefix string, fn func(Entry) error) (int64, error) {
	return s.EachAt(ctx, prefix, 0, fn)
}

// EachAt is Each at store revision rev (0: the current one): readers of
// several prefixes see them at one revision.
func (s *Store) EachAt(ctx context.Context, prefix string, rev int64, fn func(Entry) error) (int64, error) {
	return s.eachPage(ctx, prefix, pageQuery{rev: rev}, func(page []Entry) error {
		for _, e := range page {
			if err := fn(e); err != nil {
				return err
			}
		}
		return nil
	})
}

// EachKey is Each without the values: it hands fn every key under prefix
// with its mod revision, and returns the revision they were read at. A
// reader holding most of the values already learns which it lacks at a
// small part of the cost of reading them all.
func (s *Store) EachKey(ctx context.Context, prefix string, fn func(key string, rev int64) error) (int64, error) {
	return s.eachPage(ctx, prefix, pageQuery{keysOnly: true}, func(page []Entry) error {
		for _, e := range page {
			if err := fn(e.Key, e.Revision); err != nil {
				return err
			}
		}
		return nil
	})
}

// pageQuery is what eachPage reads: at revision rev (0: the current
// one), the keys only or with their values.
type pageQuery struct {
	rev      int64
	keysOnly bool
}

// eachPage is EachAt a page of Config.ListPageSize entries at a time. The
// next page is fetched while fn works on one: etcd serving a page and fn
// decoding the last overlap.
func (s *Store) eachPage(ctx context.Context, prefix string, q pageQuery, fn func([]Entry) error) (int64, error) {
	if err := validateListPrefix(prefix); err != nil {
		return 0, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the fetching when fn fails
	pages := make(chan fetchedPage, 1)
	go s.fetchPages(ctx, prefix, q, pages)
	var rev int64
	for p := range pages {
		if p.err != nil {
			return 0, p.err
		}
		rev = p.rev
		if err := fn(p.entries); err != nil {
			return 0, err
		}
	}
	return rev, nil
}

// keysPerValue is how many more keys a page of keys only holds than a
// page of values: a key is a small part of a record's bytes, and each
// page costs etcd a walk of the rest of the range (DefaultListPageSize).
const keysPerValue = 20

// fetchedPage is a page of entries read at rev, or the error that ended
// the reading.
type fetchedPage struct {
	entries []Entry
	rev     int64
	err     error
}

// fetchPages sends the pages under prefix, all read at q's revision or
// else the first's, then closes pages; it stops at the first error, which
// it sends, or when ctx ends. With keysOnly the entries have no values.
func (s *Store) fetchPages(ctx context.Context, prefix string, q pageQuery, pages chan<- fetchedPage) {
	defer close(pages)
	rev, keysOnly := q.rev, q.keysOnly
	full := s.prefix + prefix
	end := clientv3.GetPrefixRangeEnd(full)
	for from := full; ; {
		limit := s.pageSize
		if keysOnly {
			limit *= keysPerValue
		}
		opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(limit)}
		if rev != 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		if keysOnly {
			opts = append(opts, clientv3.WithKeysOnly())
		}
		p := fetchedPage{}
		resp, err := s.getPage(ctx, from, opts)
		if err != nil {
			p.err = classify(ctx, fmt.Sprintf("list %q", prefix), err)
		} else {
			rev = cmp.Or(rev, resp.Header.Revision)
			p.rev, p.entries, p.err = rev, make([]Entry, len(resp.Kvs)), nil
			for i, kv := range resp.Kvs {
				if keysOnly {
					p.entries[i] = Entry{Key: s.relative(kv.Key), Revision: kv.ModRevision, CreateRevision: kv.CreateRevision, Version: kv.Version}
				} else if p.entries[i], p.err = s.entry(kv); p.err != nil {
					break
				}
			}
		}
		select {
		case pages <- p:
		case <-ctx.Done():
			return
		}
		if p.err != nil || !resp.More || len(resp.Kvs) == 0 {
			return
		}
		// The smallest key after the last one returned.
		from = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}

func (s *Store) getPage(ctx context.Context, from string, opts []clientv3.OpOption) (*clientv3.GetResponse, error) {
	rctx, cancel := s.withTimeout(ctx)
	defer cancel()
	return s.client.Get(rctx, from, opts...)
}

// Create writes key only if it does not exist (errdefs.ErrAlreadyExists
// otherwise) and returns the new revision.
func (s *Store) Create(ctx context.Context, key string, value []byte) (int64, error) {
	return s.Apply(ctx, CreateOp(key, value))
}

// Update overwrites key only if its revision is still expectRev: a missing
// key is errdefs.ErrNotFound, a changed one errdefs.ErrConflict. It returns
// the new revision.
func (s *Store) Update(ctx context.Context, key string, value []byte, expectRev int64) (int64, error) {
	return s.Apply(ctx, UpdateOp(key, value, expectRev))
}

// Put writes key whatever its state and returns the new revision. Use it
// only for keys with a single writer (e.g. FrameworkIDKey); everything
// else goes through Create and Update.
func (s *Store) Put(ctx context.Context, key string, value []byte) (int64, error) {
	return s.Apply(ctx, PutOp(key, value))
}

// Delete removes key if its revision is still expectRev
// (errdefs.ErrConflict otherwise). expectRev 0 deletes whatever version is
// stored: deletion is an intent about the object, not about its content,
// so it cannot lose another writer's data the way a blind overwrite can.
// Either way a missing key is errdefs.ErrNotFound.
func (s *Store) Delete(ctx context.Context, key string, expectRev int64) error {
	_, err := s.Apply(ctx, DeleteOp(key, expectRev))
	return err
}

// Trim deletes the first keys under prefix (in key order) beyond the keep
// last ones and returns how many it deleted: a log whose keys sort by time
// keeps its newest entries. Keys written meanwhile sort after the ones it
// deletes.
func (s *Store) Trim(ctx context.Context, prefix string, keep int64) (int64, error) {
	if err := validateListPrefix(prefix); err != nil || prefix == "" {
		return 0, cmp.Or(err, fmt.Errorf("trim: the prefix must name a kind: %w", errdefs.ErrInvalidArgument))
	}
	full := s.prefix + prefix
	end := clientv3.GetPrefixRangeEnd(full)
	rctx, cancel := s.withTimeout(ctx)
	defer cancel()
	count, err := s.client.Get(rctx, full, clientv3.WithRange(end), clientv3.WithCountOnly())
	if err != nil {
		return 0, classify(ctx, fmt.Sprintf("count %q", prefix), err)
	}
	excess := count.Count - keep
	if excess <= 0 {
		return 0, nil
	}
	oldest, err := s.client.Get(rctx, full, clientv3.WithRange(end), clientv3.WithKeysOnly(), clientv3.WithLimit(excess),
		clientv3.WithRev(count.Header.Revision))
	if err != nil {
		return 0, classify(ctx, fmt.Sprintf("list %q", prefix), err)
	}
	if len(oldest.Kvs) == 0 {
		return 0, nil
	}
	last := string(oldest.Kvs[len(oldest.Kvs)-1].Key)
	deleted, err := s.client.Delete(rctx, full, clientv3.WithRange(last+"\x00"))
	if err != nil {
		return 0, classify(ctx, fmt.Sprintf("trim %q", prefix), err)
	}
	return deleted.Deleted, nil
}

// entry converts a stored key-value, unsealing secrets and passwords.
func (s *Store) entry(kv *mvccpb.KeyValue) (Entry, error) {
	key := s.relative(kv.Key)
	e := Entry{
		Key:            key,
		Value:          kv.Value,
		Revision:       kv.ModRevision,
		CreateRevision: kv.CreateRevision,
		Version:        kv.Version,
	}
	if isSecretKey(key) {
		if s.sealer == nil {
			return Entry{}, fmt.Errorf("key %q is a secret and the store has no Sealer: %w", key, errdefs.ErrInvalidArgument)
		}
		plain, err := s.sealer.Open(kv.Value, []byte(key))
		if err != nil {
			return Entry{}, fmt.Errorf("key %q: %w", key, err)
		}
		e.Value = plain
		return e, nil
	}
	opened, err := s.openMembers(key, kv.Value)
	if err != nil {
		return Entry{}, err
	}
	e.Value = opened
	return e, nil
}

func (s *Store) relative(fullKey []byte) string {
	return strings.TrimPrefix(string(fullKey), s.prefix)
}

// encode returns the bytes to store for value at key, sealing secrets
// (and the passwords of other values, SealedMembers) with the key as
// associated data.
func (s *Store) encode(key string, value []byte) ([]byte, error) {
	if !isSecretKey(key) {
		return s.sealMembers(key, value)
	}
	if s.sealer == nil {
		return nil, fmt.Errorf("key %q is a secret and the store has no Sealer: %w", key, errdefs.ErrInvalidArgument)
	}
	return s.sealer.Seal(value, []byte(key))
}
