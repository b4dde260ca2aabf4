package api

import (
	"bytes"
	"net/http/httptest"
	"testing"
	"time"
)

// The answers kept are those of the newest contents only, and of at
// most maxViewAnswerBytes: a fleet's encoded lists are tens of MB each.
func TestViewAnswersKeepTheNewestContentsBounded(t *testing.T) {
	var c viewAnswers
	now := time.Date(2026, 11, 28, 17, 0, 0, 0, time.UTC)
	half := bytes.Repeat([]byte("x"), maxViewAnswerBytes/2)
	c.put(2, "a", viewAnswer{body: half})
	c.put(1, "old", viewAnswer{body: []byte("{}")})
	if _, ok := c.get(1, "old", now); ok {
		t.Error("an answer of contents older than those kept was kept")
	}
	c.put(2, "b", viewAnswer{body: half})
	c.put(2, "c", viewAnswer{body: half})
	kept := 0
	for _, key := range []string{"a", "b", "c"} {
		if _, ok := c.get(2, key, now); ok {
			kept++
		}
	}
	if _, ok := c.get(2, "c", now); !ok || kept != 2 || c.bytes != 2*len(half) {
		t.Errorf("after three answers of half the bound: %d kept (the last: %v), %d bytes; want the last and one other, %d bytes", kept, ok, c.bytes, 2*len(half))
	}
	c.put(3, "d", viewAnswer{body: []byte("{}"), until: now.Add(time.Minute)})
	if _, ok := c.get(2, "c", now); ok || c.bytes != 2 {
		t.Errorf("answers of contents 2 kept after one of 3 (%d bytes kept)", c.bytes)
	}
	if _, ok := c.get(3, "d", now.Add(time.Minute)); ok {
		t.Error("an answer kept past its until")
	}
}

// An answer whose view changed while it was written is written whole
// but not kept.
func TestRecordedAnswerStopsWhenTheViewChanges(t *testing.T) {
	unchanged := true
	w := httptest.NewRecorder()
	rec := &recordedAnswer{ResponseWriter: w, current: func() bool { return unchanged }}
	rec.WriteHeader(200)
	_, _ = rec.Write([]byte(`{"a": `))
	unchanged = false
	_, _ = rec.Write([]byte(`1}`))
	unchanged = true
	_, _ = rec.Write([]byte("\n"))
	if !rec.stopped || rec.body != nil || w.Body.String() != "{\"a\": 1}\n" {
		t.Errorf("stopped %v, kept %q, written %q; want stopped, nothing kept, all written", rec.stopped, rec.body, w.Body.String())
	}
}
