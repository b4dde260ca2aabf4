package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// TaskGroupMirror holds every stored task group in memory, read once and
// then kept up to date by the store's watch, for a replica that does not
// lead yet: when it takes over, Take hands it the records after reading
// only which keys exist at which revision, and the values of those the
// mirror lacks. A new leader over 100,000 task groups otherwise reads and
// decodes all of them before it schedules anything.
type TaskGroupMirror struct {
	reg    *Registry
	prefix string
	log    *slog.Logger
	// loaded is closed once the first read ended, well or not.
	loaded chan struct{}
	stop   context.CancelFunc
	done   chan struct{}
	// retry is how long the mirror waits to read again after its watch
	// failed.
	retry time.Duration

	mu     sync.Mutex
	groups map[string]*TaskGroup // by key; nil until read
}

// MirrorTaskGroups starts a TaskGroupMirror; it follows the store until
// Take or ctx's end, and logs its failures to log.
func (r *Registry) MirrorTaskGroups(ctx context.Context, log *slog.Logger) (*TaskGroupMirror, error) {
	prefix, err := store.Prefix(store.KindTaskGroup)
	if err != nil {
		return nil, err
	}
	ctx, stop := context.WithCancel(ctx)
	m := &TaskGroupMirror{reg: r, prefix: prefix, log: log, loaded: make(chan struct{}), stop: stop, done: make(chan struct{}), retry: 5 * time.Second}
	go m.run(ctx)
	return m, nil
}

// run reads every task group, then applies the watch's changes; a watch
// that fails (its revision compacted, etcd unreachable) is followed by a
// new read.
func (m *TaskGroupMirror) run(ctx context.Context) {
	defer close(m.done)
	first := true
	for ctx.Err() == nil {
		groups, rev, err := m.read(ctx)
		m.mu.Lock()
		m.groups = groups // nil after an error: Take reads the store
		m.mu.Unlock()
		if first {
			close(m.loaded)
			first = false
		}
		if err == nil {
			err = m.follow(ctx, rev)
		}
		if ctx.Err() != nil {
			return
		}
		m.log.Warn("task group mirror: reading the task groups again", "in", m.retry, "err", err)
		select {
		case <-time.After(m.retry):
		case <-ctx.Done():
		}
	}
}

func (m *TaskGroupMirror) read(ctx context.Context) (map[string]*TaskGroup, int64, error) {
	groups := map[string]*TaskGroup{}
	rev, err := store.EachJSONAt(ctx, m.reg.store, m.prefix, func(obj store.Object[TaskGroup]) error {
		g := obj.Value
		g.Revision = obj.Revision
		groups[obj.Key] = &g
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	return groups, rev, nil
}

// follow applies the changes after rev until the watch fails or ctx
// ends.
func (m *TaskGroupMirror) follow(ctx context.Context, rev int64) error {
	events, err := m.reg.store.Watch(ctx, m.prefix, rev+1)
	if err != nil {
		return err
	}
	for ev := range events {
		if ev.Err != nil {
			return ev.Err
		}
		var g *TaskGroup
		if ev.Type == store.EventPut {
			g = &TaskGroup{}
			if err := json.Unmarshal(ev.Entry.Value, g); err != nil {
				return fmt.Errorf("task group %q: %w", ev.Entry.Key, err)
			}
			g.Revision = ev.Entry.Revision
		}
		m.mu.Lock()
		if g == nil {
			delete(m.groups, ev.Entry.Key)
		} else {
			m.groups[ev.Entry.Key] = g
		}
		m.mu.Unlock()
	}
	return ctx.Err()
}

// Take stops the mirror and returns every stored task group, in key
// order, as AllTaskGroups does: it lists the keys with their revisions
// and reads the values of those the mirror lacks or holds older. Where
// that is most of them, or the store changed them meanwhile, it reads
// them all. The records are the caller's: once taken, the mirror reads
// the store as AllTaskGroups.
func (m *TaskGroupMirror) Take(ctx context.Context) ([]*TaskGroup, error) {
	select {
	case <-m.loaded: // a read under way is nearer its end than a new one
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	m.stop()
	<-m.done
	defer func() { m.groups = nil }() // taken: later calls read the store
	if m.groups == nil {
		return m.reg.AllTaskGroups(ctx)
	}
	out, missing, err := m.matchKeys(ctx)
	if err != nil {
		return nil, err
	}
	if len(missing) > len(out)/4 {
		return m.reg.AllTaskGroups(ctx) // cheaper in pages than by key
	}
	if ok, err := m.readMissing(ctx, out, missing); err != nil || !ok {
		if err != nil {
			return nil, err
		}
		return m.reg.AllTaskGroups(ctx)
	}
	return out, nil
}

// missingGroup is a key whose record the mirror lacks, at its position
// in Take's answer and at the revision the key listing found.
type missingGroup struct {
	key      string
	at       int
	revision int64
}

// matchKeys lists the stored keys: the mirror's records where their
// revisions match, nil and a missingGroup where not.
func (m *TaskGroupMirror) matchKeys(ctx context.Context) ([]*TaskGroup, []missingGroup, error) {
	out := make([]*TaskGroup, 0, len(m.groups))
	var missing []missingGroup
	_, err := m.reg.store.EachKey(ctx, m.prefix, func(key string, rev int64) error {
		g := m.groups[key]
		if g == nil || g.Revision != rev {
			missing, g = append(missing, missingGroup{key: key, at: len(out), revision: rev}), nil
		}
		out = append(out, g)
		return nil
	})
	return out, missing, err
}

// readMissing reads the missing records into out; false when one changed
// since the key listing, and out is not one revision's.
func (m *TaskGroupMirror) readMissing(ctx context.Context, out []*TaskGroup, missing []missingGroup) (bool, error) {
	keys := make([]string, len(missing))
	for i, g := range missing {
		keys[i] = g.key
	}
	entries, err := m.reg.store.GetMany(ctx, keys)
	if err != nil {
		return false, err
	}
	for i, e := range entries {
		if e.Revision != missing[i].revision {
			return false, nil
		}
		g := &TaskGroup{}
		if err := json.Unmarshal(e.Value, g); err != nil {
			return false, fmt.Errorf("task group %q: %w", e.Key, err)
		}
		g.Revision = e.Revision
		out[missing[i].at] = g
	}
	return true, nil
}
