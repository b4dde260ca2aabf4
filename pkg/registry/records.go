package registry

import (
	"context"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// record is a stored type that remembers the revision it was read at.
type record[T any] interface {
	*T
	setRevision(int64)
}

func (a *App) setRevision(rev int64)       { a.Revision = rev }
func (o *Object) setRevision(rev int64)    { o.Revision = rev }
func (t *TaskGroup) setRevision(rev int64) { t.Revision = rev }
func (a *Agent) setRevision(rev int64)     { a.Revision = rev }
func (s *Sweep) setRevision(rev int64)     { s.Revision = rev }

// ownRecord is a record only the scheduler writes, unconditionally,
// stamped with the time of the write.
type ownRecord interface {
	setRevision(int64)
	setUpdatedAt(time.Time)
}

func (t *TaskGroup) setUpdatedAt(at time.Time) { t.UpdatedAt = at }
func (s *Sweep) setUpdatedAt(at time.Time)     { s.UpdatedAt = at }
func (r *Rollout) setUpdatedAt(at time.Time)   { r.UpdatedAt = at }
func (a *Agent) setUpdatedAt(at time.Time)     { a.UpdatedAt = at }

// list reads every record under prefix, sorted by key.
func list[T any, P record[T]](ctx context.Context, s *store.Store, prefix string) ([]P, error) {
	out := []P{}
	err := each[T](ctx, s, prefix, func(p P) error {
		out = append(out, p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// each hands fn every record under prefix, in key order, a page at a time.
func each[T any, P record[T]](ctx context.Context, s *store.Store, prefix string, fn func(P) error) error {
	return store.EachJSON(ctx, s, prefix, func(obj store.Object[T]) error {
		p := P(&obj.Value)
		p.setRevision(obj.Revision)
		return fn(p)
	})
}

// get reads the record at key.
func get[T any, P record[T]](ctx context.Context, s *store.Store, key string) (P, error) {
	v, rev, err := store.GetJSON[T](ctx, s, key)
	if err != nil {
		return nil, err
	}
	p := P(&v)
	p.setRevision(rev)
	return p, nil
}
