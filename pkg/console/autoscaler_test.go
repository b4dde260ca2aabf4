package console_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/bcs-mesos/bcs-mesos/internal/browsertest"
	"github.com/bcs-mesos/bcs-mesos/pkg/console"
)

// views are the API's answers a leader running the autoscaler controller
// gave (pkg/bcsctl/testdata/capture-autoscalers.sh), which bcsctl's
// golden tests render too.
const views = "../bcsctl/testdata/views/"

// fakeAPI serves the captured views at their routes, an event stream
// that opens and stays quiet, and records the writes it is sent.
type fakeAPI struct {
	t      *testing.T
	mu     sync.Mutex
	writes []string
}

func (f *fakeAPI) view(name string) []byte {
	f.t.Helper()
	data, err := os.ReadFile(views + name)
	if err != nil {
		f.t.Fatal(err)
	}
	return data
}

func (f *fakeAPI) handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", console.New(console.Config{Logger: slog.New(slog.DiscardHandler)}))
	answer := func(data []byte) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(data)
		}
	}
	var fleet struct {
		Status struct {
			Instances json.RawMessage `json:"instances"`
		} `json:"status"`
	}
	deployment := f.view("deployment-fleet-autoscaled.json")
	if err := json.Unmarshal(deployment, &fleet); err != nil {
		f.t.Fatal(err)
	}
	mux.Handle("GET /v1/autoscalers", answer(f.view("autoscalers.json")))
	mux.Handle("GET /v1/autoscalers/demo/fleet", answer(f.view("autoscaler-fleet.json")))
	mux.Handle("GET /v1/deployments/demo/fleet", answer(deployment))
	mux.Handle("GET /v1/deployments/demo/fleet/instances", answer(fmt.Appendf(nil, `{"instances": %s}`, fleet.Status.Instances)))
	mux.HandleFunc("POST /v1/autoscalers/demo/fleet/{op}", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.writes = append(f.writes, r.Method+" "+r.URL.Path+" "+r.Header.Get("X-BCS-Console"))
		f.mu.Unlock()
		answer(f.view("autoscaler-fleet.json"))(w, r)
	})
	mux.HandleFunc("GET /v1/events", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte("id: 1\n\n"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	return mux
}

func (f *fakeAPI) written() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.writes...)
}

// text is the text of the element selector names, "" if none.
func text(b *browsertest.Browser, selector string) string {
	var text string
	b.Eval(fmt.Sprintf(`document.querySelector(%q)?.innerText ?? ""`, selector), &text)
	return text
}

// The console shows autoscalers as the leader decided for them: the
// list with each one's bounds, metrics and what keeps it from scaling;
// one autoscaler's bounds in force and open window, metrics, conditions
// with reasons, the last scale and the decisions newest first with the
// instance a scale-down removed; Pause sent as bcsctl sends it. The
// deployment it sizes links it and marks its allocated instances; an
// allocated instance's page says by whom and why.
func TestAutoscalerPages(t *testing.T) {
	api := &fakeAPI{t: t}
	srv := httptest.NewServer(api.handler())
	t.Cleanup(srv.Close)
	p := browsertest.Open(t)

	p.Run(chromedp.Navigate(srv.URL + "/ui/autoscalers?namespace=demo"))
	p.WaitFor("the autoscalers", `document.querySelectorAll('[aria-label="autoscalers"] .autoscaler-link').length === 3`, "document.body.innerText")
	list := text(p, `[aria-label="autoscalers"]`)
	for _, want := range []string{"deployment/fleet", "2–8", "buffer: 2/2 free", "no decision yet", "FailedGetPrometheusMetric", "players: ?/40 (avg)"} {
		if !strings.Contains(list, want) {
			t.Errorf("the list lacks %q:\n%s", want, list)
		}
	}

	p.Run(chromedp.Navigate(srv.URL + "/ui/autoscalers/demo/fleet"))
	p.WaitFor("the autoscaler", `document.querySelector("#decisions tbody")`, "document.body.innerText")
	for selector, wants := range map[string][]string{
		"#bounds":     {"2–10", "2–8", "all-day until", "4"},
		"#metrics":    {"buffer", "2 free"},
		"#conditions": {"ReadyForNewScale", "ValidMetricFound", "DesiredWithinRange"},
		"#schedule":   {"evening-peak", "Asia/Shanghai", "all-day", "open"},
		"#last-scale": {"3 → 4", "buffer below target"},
		"#decisions":  {"buffer above target; limited to 3 (ScaleDownLimit)", "3 (highest ID)"},
	} {
		got := text(p, selector)
		for _, want := range wants {
			if !strings.Contains(got, want) {
				t.Errorf("%s lacks %q:\n%s", selector, want, got)
			}
		}
	}
	var rows int
	p.Run(chromedp.Evaluate(`document.querySelectorAll("#decisions tbody tr").length`, &rows))
	var first string
	p.Run(chromedp.Evaluate(`document.querySelector("#decisions tbody tr td:nth-child(2)").innerText + "→" + document.querySelector("#decisions tbody tr td:nth-child(4)").innerText`, &first))
	if rows != 10 || first != "4→4" {
		t.Errorf("decisions: %d rows, the first %q; want the 10 kept, newest (4→4) first", rows, first)
	}
	p.Run(chromedp.Click("#autoscaler-pause"))
	p.WaitFor("the pause sent", `document.querySelector("#notice").textContent.includes("pause: done")`, "document.body.innerText")
	if got := api.written(); len(got) != 1 || got[0] != "POST /v1/autoscalers/demo/fleet/pause 1" {
		t.Errorf("writes %q; want one pause with the console's header", got)
	}

	p.Run(chromedp.Navigate(srv.URL + "/ui/deployments/demo/fleet"))
	p.WaitFor("the deployment's instances and its autoscaler",
		`document.querySelector("#autoscaler-link") && document.querySelectorAll('[aria-label="instances"] .allocated').length === 2`, "document.body.innerText")
	if got := text(p, "#autoscaled"); !strings.Contains(got, "Sized by autoscaler fleet (bounds 2–8, 4 desired)") {
		t.Errorf("the deployment's autoscaler: %q", got)
	}
	var href string
	p.Run(chromedp.Evaluate(`document.querySelector("#autoscaler-link").getAttribute("href")`, &href))
	if href != "/ui/autoscalers/demo/fleet" {
		t.Errorf("the autoscaler link goes to %q", href)
	}

	p.Run(chromedp.Navigate(srv.URL + "/ui/deployments/demo/fleet/instances/0"))
	p.WaitFor("the allocated instance", `document.querySelector('[data-fact="allocated"]')`, "document.body.innerText")
	if got := text(p, `[data-fact="allocated"]`); !strings.Contains(got, "by admin") || !strings.Contains(got, "match 7") {
		t.Errorf("the instance's allocation: %q; want who and the note", got)
	}
	if got := text(p, "h1"); !strings.Contains(got, "allocated") {
		t.Errorf("the instance's title %q lacks its allocated badge", got)
	}
	if errs := p.Errors(); len(errs) > 0 {
		t.Errorf("the pages' errors: %v", errs)
	}
}
