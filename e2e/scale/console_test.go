package scale_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/bcs-mesos/bcs-mesos/internal/browsertest"
)

var (
	consoleIdle   = flag.Duration("console-idle", time.Minute, "how long the console benchmarks watch the pages once the fleet runs")
	consoleSample = flag.Duration("console-sample", 15*time.Second, "how often the console benchmarks scroll the agents page while the fleet launches")
)

// The console at fleet size: headless Chromium shows the agents page and
// a workload's page while the shape's fleet launches and then runs.
func BenchmarkConsole10kOn100Agents(b *testing.B) {
	benchmarkConsole(b, shape{agents: 100, apps: 10, instances: 1000, placement: plain})
}

func BenchmarkConsole100kOn5kAgents(b *testing.B) {
	benchmarkConsole(b, shape{agents: 5000, apps: 100, instances: 1000, placement: plain})
}

// consolePage is a page the benchmark watches, in a browser of its own.
type consolePage struct {
	name  string
	url   string
	table string // the aria-label of its table
	// complete is a JavaScript condition that holds once the page read
	// what it reads before its rows can be scrolled to their end.
	complete string
	browser  *browsertest.Browser
	// from is what it had fetched at since, when what it fetches next is
	// measured from.
	from  browsertest.Traffic
	since time.Time
}

// mark starts a measure of what the page fetches, once what it fetched
// so far arrived (the DevTools protocol reports it a little after the
// page has it), or after two seconds of a page that goes on fetching.
func (p *consolePage) mark() {
	last := p.browser.Traffic()
	for quiet, deadline := time.Now().Add(300*time.Millisecond), time.Now().Add(2*time.Second); time.Now().Before(quiet) && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if now := p.browser.Traffic(); now != last {
			last, quiet = now, time.Now().Add(300*time.Millisecond)
		}
	}
	p.from, p.since = last, time.Now()
}

// benchmarkConsole opens the agents page, submits the shape's fleet,
// opens the first application's page once it exists, and waits for the
// fleet to run, scrolling the agents page to its end every
// -console-sample; then it watches both pages for -console-idle and opens
// each again. It reports for each page (agents-, workload-):
//
//	first-rows-ms       from the page's navigation until its table showed rows, the fleet running
//	scroll-end-ms       from a scroll to the table's end until its last row showed, the fleet running
//	launch-scroll-max-ms  the slowest such scroll of the agents page while the fleet launched
//	launch-KB/min       what the page fetched per minute while the fleet launched (bodies, its event stream's included)
//	launch-req/min      its requests per minute then
//	idle-KB/min, idle-req/min  the same while the fleet ran and nothing changed
//
// and s-to-running, as the Running benchmarks do. Screenshots of the
// pages go where browsertest says.
func benchmarkConsole(b *testing.B, sh shape) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		sys := startSystem(b, sh)
		agents := &consolePage{name: "agents", url: sys.api + "/ui/agents", table: "agents", browser: browsertest.Open(b),
			complete: fmt.Sprintf(`document.querySelector("h1")?.textContent.startsWith("Agents %d,")`, sh.agents)}
		workload := &consolePage{name: "workload", url: sys.api + "/ui/apps/bench/" + appName(0), table: "instances", browser: browsertest.Open(b),
			complete: "true"} // it reads the rows scrolled to
		pages := []*consolePage{agents, workload}
		for _, p := range pages {
			p.browser.Login(sys.api, sys.token)
		}
		sys.waitForAgents(b)
		agents.open(b)
		agents.browser.WaitFor("the agents page's rows read", agents.complete, "document.body.innerText")
		launchStart := time.Now()
		agents.mark()
		done := make(chan result, 1)
		b.StartTimer()
		go func() {
			// b.Fatal ends only this goroutine: done closed, the
			// benchmark sees b.Failed.
			defer close(done)
			done <- sys.run(b, *capFlag, appManifest)
		}()
		sys.waitForApp(b, appName(0))
		workload.mark()
		workload.open(b)
		var launchScrollMax float64
		res, launching := result{}, true
		for launching {
			select {
			case r, ok := <-done:
				res, launching = r, false
				if !ok {
					b.FailNow()
				}
			case <-time.After(*consoleSample):
				launchScrollMax = max(launchScrollMax, agents.scrollEnd(b))
			}
		}
		b.StopTimer()
		for _, p := range pages {
			p.reportTraffic(b, "launch")
			p.mark()
		}
		fmt.Fprintf(os.Stderr, "fleet running after %v; watching the pages for %v\n", time.Since(launchStart).Round(time.Second), *consoleIdle)
		time.Sleep(*consoleIdle)
		for _, p := range pages {
			p.reportTraffic(b, "idle")
			b.ReportMetric(p.open(b), p.name+"-first-rows-ms")
			p.browser.WaitFor("the "+p.name+" page's rows read", p.complete, "document.body.innerText")
			b.ReportMetric(p.scrollEnd(b), p.name+"-scroll-end-ms")
			p.browser.Shot(fmt.Sprintf("scale-%s-%d", p.name, sh.apps*sh.instances))
			if errs := p.browser.Errors(); len(errs) > 0 {
				b.Errorf("the %s page's scripts failed: %q", p.name, errs)
			}
		}
		b.ReportMetric(launchScrollMax, "agents-launch-scroll-max-ms")
		b.ReportMetric(res.elapsed.Seconds(), "s-to-running")
		sys.stop()
	}
}

// waitForAgents waits until the API shows every agent of the shape.
func (sys *system) waitForAgents(b *testing.B) {
	b.Helper()
	var list struct{ Agents []struct{} }
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(time.Second) {
		code, body := sys.call("GET", "/v1/agents?summary=true", nil)
		if code == http.StatusOK && json.Unmarshal(body, &list) == nil && len(list.Agents) == sys.shape.agents {
			return
		}
	}
	b.Fatalf("the API did not show the %d agents within a minute (%d)", sys.shape.agents, len(list.Agents))
}

// waitForApp waits until the API shows the application.
func (sys *system) waitForApp(b *testing.B, name string) {
	b.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if code, _ := sys.call("GET", "/v1/apps/bench/"+name+"?summary=true", nil); code == http.StatusOK {
			return
		}
	}
	b.Fatalf("%s was not created within a minute", name)
}

// open navigates to the page and returns the milliseconds from the
// navigation's start until its table showed a row (or -1 after a
// minute).
func (p *consolePage) open(b *testing.B) float64 {
	b.Helper()
	p.browser.Run(chromedp.Navigate(p.url))
	ms := p.await(b, fmt.Sprintf(`new Promise((resolve) => {
		const check = () => {
			if (document.querySelector('[aria-label=%q] .vt-rows [role=row][data-key]')) resolve(performance.now());
			else if (performance.now() > 60000) resolve(-1);
			else setTimeout(check, 10);
		};
		check();
	})`, p.table))
	fmt.Fprintf(os.Stderr, "%s page: first rows after %.0f ms\n", p.name, ms)
	return ms
}

// scrollEnd scrolls the page's table to its end and returns the
// milliseconds until its last row showed, read (or -1 after 20 s).
func (p *consolePage) scrollEnd(b *testing.B) float64 {
	b.Helper()
	ms := p.await(b, fmt.Sprintf(`new Promise((resolve) => {
		const table = document.querySelector('[aria-label=%q]');
		const scroller = table.querySelector('.vt-scroll');
		const start = performance.now();
		scroller.scrollTop = scroller.scrollHeight;
		const check = () => {
			const last = table.getAttribute('aria-rowcount');
			if (table.querySelector('.vt-rows [role=row][aria-rowindex="' + last + '"][data-key]')) {
				const ms = performance.now() - start;
				scroller.scrollTop = 0;
				resolve(ms);
			} else if (performance.now() - start > 20000) resolve(-1);
			else requestAnimationFrame(check);
		};
		requestAnimationFrame(check);
	})`, p.table))
	fmt.Fprintf(os.Stderr, "%s page: scrolled to its end in %.0f ms\n", p.name, ms)
	return ms
}

// await evaluates a promise of a number in the page.
func (p *consolePage) await(b *testing.B, promise string) float64 {
	b.Helper()
	var ms float64
	p.browser.Run(chromedp.Evaluate(promise, &ms, func(e *runtime.EvaluateParams) *runtime.EvaluateParams { return e.WithAwaitPromise(true) }))
	return ms
}

// reportTraffic reports what the page fetched since its mark, per
// minute, as phase's.
func (p *consolePage) reportTraffic(b *testing.B, phase string) {
	now, d := p.browser.Traffic(), time.Since(p.since)
	minutes := d.Minutes()
	kb := float64(now.Bytes-p.from.Bytes) / 1024 / minutes
	requests := float64(now.Requests-p.from.Requests) / minutes
	fmt.Fprintf(os.Stderr, "%s page while the fleet %s: %.0f KB/min, %.1f requests/min over %v\n", p.name, map[string]string{"launch": "launched", "idle": "ran"}[phase],
		kb, requests, d.Round(time.Second))
	b.ReportMetric(kb, p.name+"-"+phase+"-KB/min")
	b.ReportMetric(requests, p.name+"-"+phase+"-req/min")
}
