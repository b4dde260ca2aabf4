package readview

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/bcs-mesos/bcs-mesos/pkg/changefeed"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// ErrStale is returned by Fresh when the view did not reach etcd's
// revision in time: read etcd instead.
var ErrStale = fmt.Errorf("read view behind etcd: %w", errdefs.ErrUnavailable)

// Config says what a View holds.
type Config struct {
	// Prefixes are the store prefixes held, each ending in "/".
	Prefixes []string
	// Retry is the wait after the store failed before listing again.
	Retry time.Duration
	// ProgressEvery is how often Fresh asks etcd for a progress notice
	// again while it waits.
	ProgressEvery time.Duration
	// Decode, when set, turns a key's value into the record the view
	// holds in its place (Entry.Record), so that readers do not decode
	// every record again on every read. A value it cannot decode is held
	// as bytes, for the reader to meet the error.
	Decode func(key string, value []byte, revision int64) (any, error)
	Clock  clockwork.Clock
	Log    *slog.Logger
}

// Entry is one key's value, or the record Config.Decode made of it, and
// the revision that wrote it. A Record is shared by every reader: none
// may change it.
type Entry struct {
	Value    []byte
	Record   any
	Revision int64
}

// dir is the leaves of one key directory, and their sorted names once a
// list asked for them (nil again when a leaf comes or goes): lists of a
// fleet whose keys do not change sort nothing.
type dir struct {
	leaves map[string]Entry
	order  atomic.Pointer[[]string]
	// derived is what EachDir's derive made of the leaves at a version,
	// which counts their changes: a read of a fleet derives again only
	// the directories that changed since the last.
	derived atomic.Pointer[derivation]
	version atomic.Uint64
}

// derivation is what one derive function made of a directory.
type derivation struct {
	of      string // the name its caller gave the derive function
	version uint64
	value   any
}

// View is the in-memory copy of the keys under Config.Prefixes. Its
// methods are safe for concurrent use.
type View struct {
	store     *store.Store
	cfg       Config
	revisions revisions // etcd's, for Fresh

	mu sync.RWMutex
	// dirs maps a key's directory (up to its last "/") to its leaves:
	// listing one application's task groups touches only them.
	dirs    map[string]*dir
	applied int64 // the revision the view reflects; 0 before the first list
	// contents counts the lists and changes applied: the view held the
	// same keys and values at two reads that saw the same count.
	contents uint64
	moved    chan struct{} // closed, and replaced, when applied grows
}

// New returns an empty view of st; Run fills it.
func New(st *store.Store, cfg Config) (*View, error) {
	for _, p := range cfg.Prefixes {
		if !strings.HasSuffix(p, "/") {
			return nil, fmt.Errorf("read view: prefix %q must end in \"/\": %w", p, errdefs.ErrInvalidArgument)
		}
	}
	if cfg.Clock == nil {
		cfg.Clock = clockwork.NewRealClock()
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.ProgressEvery <= 0 {
		cfg.ProgressEvery = 50 * time.Millisecond
	}
	if cfg.Retry <= 0 {
		cfg.Retry = time.Second
	}
	return &View{store: st, cfg: cfg, revisions: revisions{read: st.Revision}, dirs: map[string]*dir{}, moved: make(chan struct{})}, nil
}

// Run lists the prefixes and follows the feed until ctx ends, listing
// again after a Reset or a store failure.
func (v *View) Run(ctx context.Context) error {
	for {
		err := v.follow(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		v.cfg.Log.Warn("read view: listing again", "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-v.cfg.Clock.After(v.cfg.Retry):
		}
	}
}

// follow lists the prefixes at one revision and applies the feed after
// it, until the feed resets or fails.
func (v *View) follow(ctx context.Context) error {
	rev, dirs, err := v.list(ctx)
	if err != nil {
		return err
	}
	v.mu.Lock()
	v.dirs = dirs
	v.contents++
	v.advance(rev)
	v.mu.Unlock()
	sub, err := changefeed.New(v.store).Follow(ctx, new(changefeed.EndOf(rev)), changefeed.Options{Keep: v.holds, Progress: true})
	if err != nil {
		return err
	}
	defer sub.Close()
	for {
		c, err := sub.Next()
		if err != nil {
			return err
		}
		switch {
		case c.Reset:
			return errors.New(c.Reason)
		case c.Progress:
			v.mu.Lock()
			v.advance(c.ID.Revision)
			v.mu.Unlock()
		default:
			v.apply(c)
		}
	}
}

// list reads every prefix at the revision of the first.
func (v *View) list(ctx context.Context) (int64, map[string]*dir, error) {
	dirs := map[string]*dir{}
	rev, err := v.store.Revision(ctx)
	if err != nil {
		return 0, nil, err
	}
	for _, p := range v.cfg.Prefixes {
		_, err := v.store.EachAt(ctx, p, rev, func(e store.Entry) error {
			put(dirs, e.Key, v.entry(e.Key, e.Value, e.Revision))
			return nil
		})
		if err != nil {
			return 0, nil, err
		}
	}
	return rev, dirs, nil
}

func (v *View) holds(key string) bool {
	for _, p := range v.cfg.Prefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

// apply folds one change in; the view reflects its revision once the
// change of the next revision arrives, or at once for a whole revision.
func (v *View) apply(c changefeed.Change) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.contents++
	if c.Action == changefeed.Delete {
		remove(v.dirs, c.Key)
	} else {
		put(v.dirs, c.Key, v.entry(c.Key, c.Value, c.ID.Revision))
	}
	// A transaction's changes arrive one by one: its revision is whole
	// only at the next progress notice or change of a later revision.
	v.advance(c.ID.Revision - 1)
}

// advance records that the view reflects rev; v.mu is held.
func (v *View) advance(rev int64) {
	if rev <= v.applied {
		return
	}
	v.applied = rev
	close(v.moved)
	v.moved = make(chan struct{})
}

// entry is what the view holds of value.
func (v *View) entry(key string, value []byte, rev int64) Entry {
	if v.cfg.Decode == nil {
		return Entry{Value: value, Revision: rev}
	}
	rec, err := v.cfg.Decode(key, value, rev)
	if err != nil {
		v.cfg.Log.Warn("read view: record held undecoded", "key", key, "err", err)
		return Entry{Value: value, Revision: rev}
	}
	return Entry{Record: rec, Revision: rev}
}

// put holds e at key. The names it keeps are copies: a key's leaf is a
// slice of the whole key, which a map holding it would keep alive once
// per entry (a fleet's task groups' keys are 30 to 40 bytes, their leaves
// the few digits of an index).
func put(dirs map[string]*dir, key string, e Entry) {
	name, leaf := split(key)
	d := dirs[name]
	if d == nil {
		d = &dir{leaves: map[string]Entry{}}
		dirs[strings.Clone(name)] = d
	}
	if _, ok := d.leaves[leaf]; !ok {
		d.order.Store(nil)
	}
	// A map assignment to a string key it holds stores the key given
	// again, so an update clones as well.
	d.leaves[strings.Clone(leaf)] = e
	d.version.Add(1)
}

func remove(dirs map[string]*dir, key string) {
	name, leaf := split(key)
	d := dirs[name]
	if d == nil {
		return
	}
	if _, ok := d.leaves[leaf]; !ok {
		return
	}
	delete(d.leaves, leaf)
	d.order.Store(nil)
	d.version.Add(1)
	if len(d.leaves) == 0 {
		delete(dirs, name)
	}
}

// sorted is d's leaf names in order; the view's read lock is held, so
// the leaves cannot change while they are sorted.
func (d *dir) sorted() []string {
	if order := d.order.Load(); order != nil {
		return *order
	}
	order := make([]string, 0, len(d.leaves))
	for leaf := range d.leaves {
		order = append(order, leaf)
	}
	slices.Sort(order)
	d.order.Store(&order)
	return order
}

func split(key string) (dir, leaf string) {
	i := strings.LastIndexByte(key, '/')
	return key[:i+1], key[i+1:]
}

// Get returns key's entry, or errdefs.ErrNotFound.
func (v *View) Get(key string) (Entry, error) {
	name, leaf := split(key)
	v.mu.RLock()
	var e Entry
	d, ok := v.dirs[name]
	if ok {
		e, ok = d.leaves[leaf]
	}
	v.mu.RUnlock()
	if !ok {
		return Entry{}, fmt.Errorf("key %q: %w", key, errdefs.ErrNotFound)
	}
	return e, nil
}

// Keyed is an entry with its key.
type Keyed struct {
	Key string
	Entry
}

// List returns the entries under prefix (ending in "/"), sorted by key.
func (v *View) List(prefix string) []Keyed { return v.collect(prefix, true) }

// Entries is List without the keys, which a list of a fleet would
// otherwise make one string each of.
func (v *View) Entries(prefix string) []Entry {
	keyed := v.collect(prefix, false)
	out := make([]Entry, len(keyed))
	for i, e := range keyed {
		out[i] = e.Entry
	}
	return out
}

// collect lists the entries under prefix in key order, with their keys
// when keys is set or when nested directories need them to be sorted.
func (v *View) collect(prefix string, keys bool) []Keyed {
	v.mu.RLock()
	defer v.mu.RUnlock()
	names, n := v.under(prefix)
	sortByKey := nested(names)
	keys = keys || sortByKey
	out := make([]Keyed, 0, n)
	for _, name := range names {
		d := v.dirs[name]
		for _, leaf := range d.sorted() {
			e := Keyed{Entry: d.leaves[leaf]}
			if keys {
				e.Key = name + leaf
			}
			out = append(out, e)
		}
	}
	if sortByKey {
		slices.SortFunc(out, func(a, b Keyed) int { return strings.Compare(a.Key, b.Key) })
	}
	return out
}

// Derived is what a derive function made of one key directory's
// entries.
type Derived struct {
	Dir   string // the directory's key, ending in "/"
	Value any
}

// EachDir returns, in the order of their names, what derive made of the
// entries (in key order) of each key directory under prefix (ending in
// "/"), none nested in another. A directory's value is made at the first
// EachDir of name after the directory changed and kept until it changes
// again: a read of a fleet derives only what changed since the last.
// name names derive: every caller of one name passes the same function.
// Values are shared by every caller: none may change them.
func (v *View) EachDir(prefix, name string, derive func([]Entry) any) []Derived {
	out, stale := v.derived(prefix, name)
	// Derived without the lock: the feed's changes wait for no read.
	for _, st := range stale {
		made := &derivation{of: name, version: st.version, value: derive(st.entries)}
		if st.dir.version.Load() == st.version {
			st.dir.derived.Store(made)
		}
		out[st.at].Value = made.value
	}
	return out
}

// staleDir is a directory whose value EachDir makes again: its entries
// at version, and where its value goes.
type staleDir struct {
	dir     *dir
	version uint64
	entries []Entry
	at      int
}

// derived is EachDir's values of name under prefix that are kept, and
// the directories whose values are not.
func (v *View) derived(prefix, name string) ([]Derived, []staleDir) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	names, _ := v.under(prefix)
	out := make([]Derived, len(names))
	var stale []staleDir
	for i, dirName := range names {
		d := v.dirs[dirName]
		out[i].Dir = dirName
		version := d.version.Load()
		if got := d.derived.Load(); got != nil && got.of == name && got.version == version {
			out[i].Value = got.value
			continue
		}
		entries := make([]Entry, 0, len(d.leaves))
		for _, leaf := range d.sorted() {
			entries = append(entries, d.leaves[leaf])
		}
		stale = append(stale, staleDir{dir: d, version: version, entries: entries, at: i})
	}
	return out, stale
}

// under is the directories under prefix, sorted, and how many leaves
// they hold; v.mu is held.
func (v *View) under(prefix string) (names []string, leaves int) {
	for name, d := range v.dirs {
		if strings.HasPrefix(name, prefix) {
			names = append(names, name)
			leaves += len(d.leaves)
		}
	}
	slices.Sort(names)
	return names, leaves
}

// nested reports whether one of the sorted directories holds another:
// then they do not list their keys in order ("a/" sorts before "a/b/",
// but "a/b/c" before "a/x").
func nested(names []string) bool {
	for i := 1; i < len(names); i++ {
		if strings.HasPrefix(names[i], names[i-1]) {
			return true
		}
	}
	return false
}

// Applied is the store revision the view reflects (0: not listed yet).
func (v *View) Applied() int64 {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.applied
}

// Contents counts the lists and changes the view applied: two reads of
// it between which Contents did not move read the same keys and values,
// so what a reader made of them holds as long as Contents stays.
func (v *View) Contents() uint64 {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.contents
}

// Fresh waits until the view reflects every write etcd had applied when
// Fresh was called, at most wait: a read after it sees the caller's own
// acknowledged writes. ErrStale when it did not in time. Concurrent
// calls share etcd's revision reads (revisions).
func (v *View) Fresh(ctx context.Context, wait time.Duration) error {
	want, err := v.revisions.current(ctx)
	if err != nil {
		return err
	}
	if v.Applied() >= want {
		return nil
	}
	// Writes outside the view's prefixes move etcd's revision too; only a
	// progress notice tells the view it has seen all there was to see. A
	// notice asked for while the watch was being (re)made is lost: ask
	// again until the view is there.
	deadline := v.cfg.Clock.After(wait)
	ask := v.cfg.Clock.NewTicker(v.cfg.ProgressEvery)
	defer ask.Stop()
	for {
		if err := v.store.RequestProgress(ctx); err != nil {
			return err
		}
		if v.waitApplied(ctx, want, ask.Chan()) {
			return nil
		}
		select {
		case <-deadline:
			return fmt.Errorf("at revision %d, etcd at %d after %s: %w", v.Applied(), want, wait, ErrStale)
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
	}
}

// waitApplied waits until the view reflects want (true), or until again
// fires or ctx ends (false).
func (v *View) waitApplied(ctx context.Context, want int64, again <-chan time.Time) bool {
	for {
		v.mu.RLock()
		applied, moved := v.applied, v.moved
		v.mu.RUnlock()
		if applied >= want {
			return true
		}
		select {
		case <-moved:
		case <-again:
			return false
		case <-ctx.Done():
			return false
		}
	}
}
