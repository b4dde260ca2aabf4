package e2e_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	sse "github.com/tmaxmax/go-sse"
)

// change is one event of GET /v1/events.
type change struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	Action    string          `json:"action"`
	Namespace string          `json:"namespace"`
	Name      string          `json:"name"`
	Object    json.RawMessage `json:"object"`
}

// subscription reads GET /v1/events in the background.
type subscription struct {
	t       *testing.T
	cancel  context.CancelFunc
	changes chan change // closed when the stream ends
}

// subscribe opens the event stream with query as the admin, resuming
// after lastID when it is set.
func (s *system) subscribe(query, lastID string) *subscription {
	s.t.Helper()
	return s.subscribeAs(s.token(), query, lastID)
}

// subscribeAs opens the event stream as the caller of token.
func (s *system) subscribeAs(token, query, lastID string) *subscription {
	s.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", s.api+"/v1/events"+query, nil)
	if err != nil {
		s.t.Fatal(err)
	}
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		s.t.Fatalf("GET /v1/events%s: %v %v", query, resp, err)
	}
	sub := &subscription{t: s.t, cancel: cancel, changes: make(chan change, 10000)}
	go func() {
		defer close(sub.changes)
		defer resp.Body.Close()
		for ev, err := range sse.Read(resp.Body, &sse.ReadConfig{MaxEventSize: 1 << 20}) {
			if err != nil {
				return
			}
			if ev.Type == "" {
				continue // the opening position
			}
			var c change
			if err := json.Unmarshal([]byte(ev.Data), &c); err != nil || c.ID != ev.LastEventID {
				s.t.Errorf("event %q id %q: %s (%v)", ev.Type, ev.LastEventID, ev.Data, err)
				return
			}
			sub.changes <- c
		}
	}()
	s.t.Cleanup(cancel)
	return sub
}

// until reads changes up to and including the first done accepts.
func (sub *subscription) until(what string, done func(change) bool) []change {
	sub.t.Helper()
	var got []change
	deadline := time.After(60 * time.Second)
	for {
		select {
		case c, ok := <-sub.changes:
			if !ok {
				sub.t.Fatalf("event stream ended waiting for %s", what)
			}
			got = append(got, c)
			if done(c) {
				return got
			}
		case <-deadline:
			sub.t.Fatalf("no %s within 60s; read %d changes", what, len(got))
		}
	}
}

// instanceState is the state an instance event shows.
func instanceState(c change) string {
	var v instanceView
	_ = json.Unmarshal(c.Object, &v)
	return v.State
}

// An SSE client resumes without gaps, with the real scheduler, dev cluster
// and executors: a client sees the instances of a new application reach
// TASK_RUNNING through the stream, disconnects, and resumes with
// Last-Event-ID after a scale-down: its two connections read exactly what
// a client connected all along read.
func TestEventStreamFollowsAFleet(t *testing.T) {
	s := startSystem(t)
	const query = "?type=app,instance&namespace=demo"
	allAlong := s.subscribe(query, "")
	client := s.subscribe(query, "")
	if code, body := s.call("POST", "/v1/apps", s.manifest("process.json", nil)); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}

	running := map[string]bool{}
	first := client.until("3 instances TASK_RUNNING", func(c change) bool {
		if c.Type == "instance" && c.Action == "put" {
			running[c.Name] = instanceState(c) == "TASK_RUNNING"
		}
		return len(running) == 3 && running["gamesvr/0"] && running["gamesvr/1"] && running["gamesvr/2"]
	})
	if first[0].Type != "app" || first[0].Action != "put" || first[0].Name != "gamesvr" {
		t.Errorf("first event %+v, want the application's creation", first[0])
	}
	client.cancel()

	if code, body := s.call("POST", "/v1/apps/demo/gamesvr/scale", []byte(`{"instances":1}`)); code != 202 {
		t.Fatalf("scale: %d %s", code, body)
	}
	deleted := map[string]bool{}
	rest := s.subscribe(query, first[len(first)-1].ID).until("instances 1 and 2 deleted", func(c change) bool {
		if c.Type == "instance" && c.Action == "delete" {
			deleted[c.Name] = true
		}
		return deleted["gamesvr/1"] && deleted["gamesvr/2"]
	})
	last := rest[len(rest)-1].ID
	want := allAlong.until("event "+last, func(c change) bool { return c.ID == last })
	got := append(first, rest...)
	if len(got) != len(want) {
		t.Fatalf("resumed client read %d changes, the client connected all along %d", len(got), len(want))
	}
	for i := range got {
		if g, w := got[i], want[i]; g.ID != w.ID || g.Type != w.Type || g.Action != w.Action || g.Name != w.Name || string(g.Object) != string(w.Object) {
			t.Fatalf("change %d: resumed client read %s %s %s %s, want %s %s %s %s", i, g.ID, g.Type, g.Action, g.Name, w.ID, w.Type, w.Action, w.Name)
		}
	}
	t.Logf("%d changes, %d before the disconnect", len(got), len(first))
}
