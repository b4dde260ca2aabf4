package console_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/bcs-mesos/bcs-mesos/internal/browsertest"
	"github.com/bcs-mesos/bcs-mesos/pkg/apiv1"
	"github.com/bcs-mesos/bcs-mesos/pkg/console"
)

// fakeAgents serves GET /v1/agents as the API pages it (by ID, ?limit=
// and ?after=), each agent's instances counted with ?summary=true, an
// event stream that opens and stays quiet, and records the queries of
// both.
type fakeAgents struct {
	agents []apiv1.AgentView
	mu     sync.Mutex
	lists  []url.Values
	events []url.Values
}

func newFakeAgents(n int) *fakeAgents {
	f := &fakeAgents{}
	for i := range n {
		host := fmt.Sprintf("agent-%05d", i)
		f.agents = append(f.agents, apiv1.AgentView{ID: "id-" + host, Hostname: host, Schedulable: true, Taints: []string{},
			Master:    &apiv1.AgentMaster{Active: true, Total: apiv1.AgentResources{CPUs: 8, MemMB: 16384}},
			Instances: []apiv1.AgentInstance{{App: "bench/app", Index: i, ID: fmt.Sprintf("bench.app.%d.1", i), Phase: "Running"}}})
	}
	return f
}

func (f *fakeAgents) handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", console.New(console.Config{Logger: slog.New(slog.DiscardHandler)}))
	mux.HandleFunc("GET /v1/agents", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		f.mu.Lock()
		f.lists = append(f.lists, q)
		f.mu.Unlock()
		start, _ := slices.BinarySearchFunc(f.agents, q.Get("after"), func(a apiv1.AgentView, after string) int {
			if a.ID <= after {
				return -1
			}
			return 1
		})
		page := f.agents[start:]
		out := map[string]any{}
		if limit, _ := strconv.Atoi(q.Get("limit")); limit > 0 && limit < len(page) {
			page = page[:limit]
			out["next"] = page[limit-1].ID
		}
		var list []apiv1.AgentView
		for _, a := range page {
			if q.Get("summary") == "true" {
				a.InstanceCount, a.Instances = len(a.Instances), nil
			}
			list = append(list, a)
		}
		out["agents"] = list
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	})
	mux.HandleFunc("GET /v1/events", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.events = append(f.events, r.URL.Query())
		f.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte("id: 1\n\n"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	return mux
}

// listsSince returns the list queries after the first n.
func (f *fakeAgents) listsSince(n int) []url.Values {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.lists[n:])
}

// The agents page at fleet size reads each agent's instances counted,
// not listed, a page at a time; it follows no instance events (nor
// agents', which offers rewrite every minute each), and reads again
// only the rows in view: every few seconds, and those scrolled into
// view.
func TestAgentsPageReadsTheRowsInView(t *testing.T) {
	const n = 3000
	api := newFakeAgents(n)
	srv := httptest.NewServer(api.handler())
	t.Cleanup(srv.Close)
	p := browsertest.Open(t)

	p.Run(chromedp.Navigate(srv.URL + "/ui/agents"))
	p.WaitFor("the agents counted", `document.querySelector("h1")?.textContent === "Agents 3000, 3000 schedulable"`, "document.body.innerText")
	rows := p.Rows("agents")
	if len(rows) == 0 || rows[0][0] != "agent-00000" || rows[0][4] != "1" {
		t.Fatalf("the first rows %q: want agent-00000 with its 1 instance counted", rows)
	}
	loaded := api.listsSince(0)
	for _, q := range loaded {
		if q.Get("summary") != "true" || q.Get("limit") == "" {
			t.Errorf("the page read the agents with %v: want pages of summaries", q)
		}
	}
	api.mu.Lock()
	for _, q := range api.events {
		if types := q.Get("type"); strings.Contains(types, "instance") || slices.Contains(strings.Split(types, ","), "agent") {
			t.Errorf("the page follows %q: want no instance or agent events", types)
		}
	}
	api.mu.Unlock()

	// Every few seconds, the rows in view: a page of a few dozen from
	// the first.
	deadline := time.Now().Add(15 * time.Second)
	for len(api.listsSince(len(loaded))) == 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	again := api.listsSince(len(loaded))
	if len(again) == 0 {
		t.Fatalf("the rows in view were not read again within 15 s")
	}
	if limit, _ := strconv.Atoi(again[0].Get("limit")); limit == 0 || limit > 100 || again[0].Get("after") != "" {
		t.Errorf("the rows in view read again with %v: want at most 100 from the first", again[0])
	}

	// Scrolled to the end, the last rows are read again, not the list.
	before := len(api.listsSince(0))
	p.Eval(`document.querySelector('[aria-label="agents"] .vt-scroll').scrollTop = 1e9`, nil)
	p.WaitFor("the last agent shown", `document.querySelector('[aria-label="agents"] [data-key="agent-02999"]')`, browsertest.RowsJS("agents"))
	deadline = time.Now().Add(3 * time.Second)
	for len(api.listsSince(before)) == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	scrolled := api.listsSince(before)
	if len(scrolled) == 0 {
		t.Fatalf("the rows scrolled into view were not read again within 3 s")
	}
	if after := scrolled[0].Get("after"); after < "id-agent-02900" {
		t.Errorf("the rows scrolled into view read with %v: want the last ones", scrolled[0])
	}
	if errs := p.Errors(); len(errs) > 0 {
		t.Errorf("the page's errors: %v", errs)
	}
}
