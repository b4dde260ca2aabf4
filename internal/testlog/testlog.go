package testlog

import (
	"bytes"
	"log/slog"
	"sync"
	"testing"
)

// New returns a logger writing text records to t.Log until t ends.
func New(t testing.TB) *slog.Logger {
	w := &writer{t: t}
	t.Cleanup(w.stop)
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// Recorded is New whose records the test can also read: text returns
// them all, as the text handler wrote them.
func Recorded(t testing.TB) (logger *slog.Logger, text func() string) {
	w := &writer{t: t, kept: &bytes.Buffer{}}
	t.Cleanup(w.stop)
	text = func() string {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.kept.String()
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug})), text
}

type writer struct {
	mu   sync.Mutex
	t    testing.TB
	done bool
	kept *bytes.Buffer // nil: not kept
}

func (w *writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.kept != nil {
		w.kept.Write(p)
	}
	if !w.done { // t.Log after the test ended panics
		w.t.Helper()
		w.t.Log(string(bytes.TrimRight(p, "\n")))
	}
	return len(p), nil
}

func (w *writer) stop() {
	w.mu.Lock()
	w.done = true
	w.mu.Unlock()
}
