package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"sync"
)

// Object is a JSON-decoded Entry.
type Object[T any] struct {
	Key      string
	Value    T
	Revision int64 // mod revision, for UpdateJSON and the Op constructors
}

// GetJSON reads key and decodes its JSON value into a T; it returns the
// revision to pass to UpdateJSON.
func GetJSON[T any](ctx context.Context, s *Store, key string) (T, int64, error) {
	var v T
	e, err := s.Get(ctx, key)
	if err != nil {
		return v, 0, err
	}
	if err := decodeJSON(e, &v); err != nil {
		return v, 0, err
	}
	return v, e.Revision, nil
}

// EachJSON hands fn every value under prefix decoded into a T, a page at
// a time (see Store.Each). A page's values are decoded on every CPU at
// once: a new leader reads 100,000 task groups before it can schedule.
func EachJSON[T any](ctx context.Context, s *Store, prefix string, fn func(Object[T]) error) error {
	_, err := EachJSONAt(ctx, s, prefix, fn)
	return err
}

// EachJSONAt is EachJSON that returns the revision the values were read
// at: Watch(ctx, prefix, rev+1) then misses nothing and repeats nothing.
func EachJSONAt[T any](ctx context.Context, s *Store, prefix string, fn func(Object[T]) error) (int64, error) {
	return s.eachPage(ctx, prefix, pageQuery{}, func(page []Entry) error {
		objects, err := decodePage[T](page)
		if err != nil {
			return err
		}
		for _, obj := range objects {
			if err := fn(obj); err != nil {
				return err
			}
		}
		return nil
	})
}

// decodePage decodes the values of page into Ts, in order, on up to
// GOMAXPROCS goroutines; of several undecodable values it reports the
// first in key order.
func decodePage[T any](page []Entry) ([]Object[T], error) {
	objects := make([]Object[T], len(page))
	errs := make([]error, len(page))
	workers := min(runtime.GOMAXPROCS(0), (len(page)+minDecodesPerWorker-1)/minDecodesPerWorker)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(page); i += workers {
				objects[i] = Object[T]{Key: page[i].Key, Revision: page[i].Revision}
				errs[i] = decodeJSON(page[i], &objects[i].Value)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return objects, nil
}

// minDecodesPerWorker keeps small pages (a few applications) on one
// goroutine, where starting others costs more than it saves.
const minDecodesPerWorker = 16

// ListJSON lists prefix (see Store.List) and decodes every value into a T.
func ListJSON[T any](ctx context.Context, s *Store, prefix string) ([]Object[T], error) {
	objects := []Object[T]{}
	err := EachJSON(ctx, s, prefix, func(obj Object[T]) error {
		objects = append(objects, obj)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return objects, nil
}

// CreateJSON stores v encoded as JSON at key, which must not exist.
func CreateJSON[T any](ctx context.Context, s *Store, key string, v T) (int64, error) {
	data, err := encodeJSON(key, v)
	if err != nil {
		return 0, err
	}
	return s.Create(ctx, key, data)
}

// UpdateJSON replaces the value at key with v encoded as JSON, if the key
// is still at expectRev.
func UpdateJSON[T any](ctx context.Context, s *Store, key string, v T, expectRev int64) (int64, error) {
	data, err := encodeJSON(key, v)
	if err != nil {
		return 0, err
	}
	return s.Update(ctx, key, data, expectRev)
}

func encodeJSON(key string, v any) ([]byte, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode %q as JSON: %w", key, err)
	}
	return data, nil
}

// decodeJSON reports corrupt JSON without quoting the value: the entry may
// be a secret.
func decodeJSON(e Entry, v any) error {
	err := json.Unmarshal(e.Value, v)
	var syntaxErr *json.SyntaxError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &syntaxErr):
		return fmt.Errorf("decode %q into %T: invalid JSON at byte %d", e.Key, v, syntaxErr.Offset)
	default:
		return fmt.Errorf("decode %q into %T: %w", e.Key, v, err)
	}
}
