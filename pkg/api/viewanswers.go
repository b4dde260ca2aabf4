package api

import (
	"net/http"
	"strings"
	"sync"
	"time"
)

// viewAnswers keeps the answers of reads the read view served, encoded,
// for as long as the view's contents do not change: consoles and
// dashboards polling GET /v1/agents of a fleet share one encoding of
// tens of MB, instead of making it again for every read. An answer is
// kept by what its caller may see (callerScope) and its URL, never
// served to a caller that may see more or less.
type viewAnswers struct {
	mu       sync.Mutex
	contents uint64 // the view's (registry.Viewed.Contents) the answers were made at
	byKey    map[string]viewAnswer
	bytes    int
}

// viewAnswer is an encoded answer; the clock alone changes it at until
// (a maintenance window ends), zero for never.
type viewAnswer struct {
	body  []byte
	until time.Time
}

// maxViewAnswerBytes bounds what viewAnswers keeps: a few answers of a
// fleet of 100,000 instances.
const maxViewAnswerBytes = 64 << 20

// get is the answer kept for key at contents, unless the clock changed it
// by now.
func (c *viewAnswers) get(contents uint64, key string, now time.Time) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a, ok := c.byKey[key]
	if !ok || c.contents != contents || !a.until.IsZero() && !now.Before(a.until) {
		return nil, false
	}
	return a.body, true
}

// put keeps a, made of the view at contents, for key: the answers of
// older contents go; an answer of contents older than those kept is not
// kept.
func (c *viewAnswers) put(contents uint64, key string, a viewAnswer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if contents < c.contents || len(a.body) > maxViewAnswerBytes {
		return
	}
	if contents > c.contents || c.byKey == nil {
		c.contents, c.byKey, c.bytes = contents, map[string]viewAnswer{}, 0
	}
	if old, ok := c.byKey[key]; ok {
		c.bytes -= len(old.body)
		delete(c.byKey, key)
	}
	for k, old := range c.byKey {
		if c.bytes+len(a.body) <= maxViewAnswerBytes {
			break
		}
		c.bytes -= len(old.body)
		delete(c.byKey, k)
	}
	c.byKey[key] = a
	c.bytes += len(a.body)
}

// callerScope is what the caller of r may read, as a key: mayRead's
// answers depend on the caller's role and namespaces alone (not its
// name), so callers of one scope read the same answers.
func callerScope(r *http.Request) string {
	id, ok := identityOf(r)
	if !ok {
		return "all"
	}
	return string(id.Role) + ":" + strings.Join(id.Namespaces, ",")
}

// answerFromView answers r with the answer kept for it when rd is the
// read view, or with serve's, kept when the view did not change while
// serve read it. serve writes a JSON answer to w and says when the
// clock alone changes it (zero: never).
func (s *Server) answerFromView(w http.ResponseWriter, r *http.Request, rd reader, serve func(w http.ResponseWriter) (until time.Time, err error)) error {
	if s.cfg.View == nil || rd != reader(s.cfg.View) {
		_, err := serve(w)
		return err
	}
	key := callerScope(r) + " " + r.URL.RequestURI()
	contents := s.cfg.View.Contents()
	if body, ok := s.viewAnswers.get(contents, key, s.cfg.Clock.Now()); ok {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body)
		return nil
	}
	rec := &recordedAnswer{ResponseWriter: w, current: func() bool { return s.cfg.View.Contents() == contents }}
	until, err := serve(rec)
	if err == nil && rec.status == http.StatusOK && !rec.stopped && rec.current() {
		s.viewAnswers.put(contents, key, viewAnswer{body: rec.body, until: until})
	}
	return err
}

// recordedAnswer writes an answer through and keeps a copy of it while
// the view is as the answer read it: a fleet's view changing many times
// a second, copying tens of MB to drop them would only feed the
// collector.
type recordedAnswer struct {
	http.ResponseWriter
	status  int
	body    []byte
	current func() bool
	stopped bool
}

func (a *recordedAnswer) WriteHeader(status int) {
	a.status = status
	a.ResponseWriter.WriteHeader(status)
}

func (a *recordedAnswer) Write(p []byte) (int, error) {
	if a.stopped = a.stopped || !a.current(); a.stopped {
		a.body = nil
	} else {
		a.body = append(a.body, p...)
	}
	return a.ResponseWriter.Write(p)
}
