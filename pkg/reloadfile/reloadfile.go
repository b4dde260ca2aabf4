package reloadfile

import (
	"os"
	"sync"
	"time"
)

// File is the content of the file at a path as Parse makes it.
type File[T any] struct {
	path  string
	parse func([]byte) (T, error)
	// onError hears why a changed file was not taken.
	onError func(error)

	mu    sync.Mutex
	seen  version // of the last read, taken or not
	value T
}

// version tells one content of a file from another without reading it.
type version struct {
	modTime time.Time
	size    int64
}

// Load reads and parses the file at path; its error is the first read's.
// Afterwards a changed file that cannot be read or parsed keeps the last
// content and its error goes to onError (nil: dropped).
func Load[T any](path string, parse func([]byte) (T, error), onError func(error)) (*File[T], error) {
	f := &File[T]{path: path, parse: parse, onError: onError}
	v, value, err := f.read()
	if err != nil {
		return nil, err
	}
	f.seen, f.value = v, value
	return f, nil
}

// Get returns the content, reading the file again first if it changed.
func (f *File[T]) Get() T {
	f.mu.Lock()
	defer f.mu.Unlock()
	info, err := os.Stat(f.path)
	if err == nil && (version{info.ModTime(), info.Size()}) == f.seen {
		return f.value
	}
	v, value, err := f.read()
	if v == f.seen {
		return f.value // still missing: said already
	}
	f.seen = v
	if err != nil {
		if f.onError != nil {
			f.onError(err)
		}
		return f.value
	}
	f.value = value
	return value
}

func (f *File[T]) read() (version, T, error) {
	var zero T
	info, err := os.Stat(f.path)
	if err != nil {
		return version{}, zero, err
	}
	v := version{info.ModTime(), info.Size()}
	data, err := os.ReadFile(f.path)
	if err != nil {
		return v, zero, err
	}
	value, err := f.parse(data)
	return v, value, err
}
