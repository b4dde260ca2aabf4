package browsertest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// chromium is Debian's, installed by scripts/test-deps.
const chromium = "/usr/bin/chromium"

// Browser is a headless Chromium driven over the DevTools protocol.
type Browser struct {
	tb  testing.TB
	ctx context.Context
	// shots is where each page's screenshot goes, for review.
	shots string
	mu    sync.Mutex
	// errors are the page's uncaught exceptions and console errors.
	errors []string
	// dialogs are the messages of the page's confirm() dialogs, each
	// answered with acceptDialogs.
	dialogs       []string
	acceptDialogs bool
	// unanswered are the page's requests sent and not yet answered (no
	// response headers), by request ID: a wait that times out names
	// them, telling a server that does not answer from a page that does
	// not ask.
	unanswered map[network.RequestID]unanswered
	// traffic is what the page fetched since it opened.
	traffic Traffic
}

// Traffic is what a page fetched: requests sent (an event stream's
// reconnection is one) and the bytes of their answers' bodies as they
// arrived (an event stream's as it goes).
type Traffic struct {
	Requests int
	Bytes    int64
}

// Errors returns the page's uncaught exceptions and console errors so
// far.
func (b *Browser) Errors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.errors...)
}

// Traffic returns what the page fetched since the browser opened.
func (b *Browser) Traffic() Traffic {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.traffic
}

type unanswered struct {
	url  string
	sent time.Time
}

// clearShots empties the screenshots' directory once a run: each test's
// screenshots are kept for review.
var clearShots sync.Once

// removeProfile removes Chromium's profile directory, retrying for a few
// seconds: its helper processes may still write there for a moment after
// the browser exited (t.TempDir's one attempt failed a test that passed,
// "directory not empty").
func removeProfile(t testing.TB, dir string) {
	var err error
	for range 50 {
		if err = os.RemoveAll(dir); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("Chromium's profile %s: %v", dir, err)
}

// Open starts a headless Chromium for t; it is closed, and its profile
// removed, when t ends.
func Open(t testing.TB) *Browser {
	t.Helper()
	if _, err := os.Stat(chromium); err != nil {
		t.Fatalf("%s: %v (scripts/test-deps installs Debian's chromium)", chromium, err)
	}
	shots := filepath.Join(os.TempDir(), "bcs-console-screenshots")
	clearShots.Do(func() {
		if err := os.RemoveAll(shots); err != nil {
			t.Fatal(err)
		}
	})
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots of the console's pages go to %s", shots)
	profile, err := os.MkdirTemp("", "bcs-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox,
		chromedp.WindowSize(1440, 900), chromedp.UserDataDir(profile))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc() // waits for Chromium to exit
		removeProfile(t, profile)
	})
	b := &Browser{tb: t, ctx: ctx, shots: shots, unanswered: map[network.RequestID]unanswered{}}
	chromedp.ListenTarget(ctx, func(ev any) {
		b.mu.Lock()
		defer b.mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			b.unanswered[ev.RequestID] = unanswered{url: ev.Request.URL, sent: time.Now()}
			b.traffic.Requests++
		case *network.EventDataReceived:
			b.traffic.Bytes += ev.DataLength
		case *network.EventResponseReceived:
			if ev.Type == network.ResourceTypeScript && ev.Response.Status >= 400 {
				b.errors = append(b.errors, fmt.Sprintf("script %s: %d %s", ev.Response.URL, ev.Response.Status, ev.Response.StatusText))
			}
			delete(b.unanswered, ev.RequestID)
		case *network.EventLoadingFailed:
			// A module that fails to load stops the page's scripts
			// without an exception: name it among the errors.
			if r, ok := b.unanswered[ev.RequestID]; ok && !ev.Canceled {
				b.errors = append(b.errors, fmt.Sprintf("loading %s failed after %s: %s", r.url, time.Since(r.sent).Round(time.Millisecond), ev.ErrorText))
			}
			delete(b.unanswered, ev.RequestID)
		case *runtime.EventExceptionThrown:
			b.errors = append(b.errors, ev.ExceptionDetails.Error())
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.APITypeError {
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value))
				}
				b.errors = append(b.errors, "console.error "+strings.Join(args, " "))
			}
		case *page.EventJavascriptDialogOpening:
			b.dialogs = append(b.dialogs, ev.Message)
			accept := b.acceptDialogs
			// The page waits for the answer: the action that opened the
			// dialog returns once it is given.
			go func() { _ = chromedp.Run(ctx, page.HandleJavaScriptDialog(accept)) }()
		}
	})
	// The first run starts Chromium, which lives as long as its context:
	// this one, not a step's timeout.
	if err := chromedp.Run(ctx, network.Enable()); err != nil {
		t.Fatalf("starting %s: %v", chromium, err)
	}
	return b
}

func (b *Browser) Run(actions ...chromedp.Action) {
	b.tb.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Run(ctx, actions...); err != nil {
		b.tb.Fatalf("browser: %v", err)
	}
}

// Eval returns what the page's expression evaluates to.
func (b *Browser) Eval(expr string, out any) {
	b.tb.Helper()
	b.Run(chromedp.Evaluate(expr, out))
}

// WaitFor polls the page until the JavaScript condition holds; on a
// timeout it fails with what state (an expression) shows then.
func (b *Browser) WaitFor(what, condition, state string) {
	b.tb.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		var ok bool
		b.Eval("!!("+condition+")", &ok)
		if ok {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	var shown any
	b.Eval(state, &shown)
	b.Shot("failed")
	b.mu.Lock()
	defer b.mu.Unlock()
	var pending []string
	for _, r := range b.unanswered {
		pending = append(pending, fmt.Sprintf("%s (%s)", r.url, time.Since(r.sent).Round(time.Millisecond)))
	}
	b.tb.Fatalf("timed out waiting for %s; the page shows %v (errors: %v; requests unanswered: %v)", what, shown, b.errors, pending)
}

// ClickTo clicks the element selector names until the JavaScript
// condition holds: a row of a live list may be drawn again between
// finding and clicking it, and a click on the replaced row does nothing
// (or fails: the node found is gone). It clicks again only while the
// element is still there (the page did not change); on a timeout it
// fails as WaitFor does.
func (b *Browser) ClickTo(selector, what, condition, state string) {
	b.tb.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	_ = chromedp.Run(ctx, chromedp.Click(selector)) // a click that failed is made again below
	cancel()
	deadline := time.Now().Add(90 * time.Second)
	for retry := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		var ok bool
		b.Eval("!!("+condition+")", &ok)
		if ok {
			return
		}
		if time.Now().After(retry) {
			b.Eval(fmt.Sprintf(`document.querySelector(%q)?.click(), true`, selector), nil)
			retry = time.Now().Add(3 * time.Second)
		}
	}
	b.WaitFor(what, condition, state)
}

// AnswerDialogs makes the page's next confirm() dialogs answered OK
// (accept) or Cancel, and returns how many dialogs were seen so far.
func (b *Browser) AnswerDialogs(accept bool) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.acceptDialogs = accept
	return len(b.dialogs)
}

// DialogsSince returns the messages of the dialogs after the first n.
func (b *Browser) DialogsSince(n int) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.dialogs[n:]...)
}

// Login logs in to the console at api with token, as a person does on
// its login form, and waits for the workloads page.
func (b *Browser) Login(api, token string) {
	b.tb.Helper()
	b.Run(chromedp.Navigate(api+"/ui/login"), chromedp.WaitVisible("#token"), chromedp.SendKeys("#token", token), chromedp.Submit("#token"))
	b.WaitFor("the console after the login", `location.pathname === "/ui/" && document.querySelector('[aria-label="workloads"]')`, "document.body.innerText")
}

// Shot saves a screenshot of the viewport as name.png.
func (b *Browser) Shot(name string) {
	b.tb.Helper()
	var png []byte
	b.Run(chromedp.CaptureScreenshot(&png))
	path := filepath.Join(b.shots, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.tb.Fatal(err)
	}
	b.tb.Logf("screenshot %s", path)
}

// Rows reads the cells of the rows a virtualised table shows.
func (b *Browser) Rows(table string) [][]string {
	b.tb.Helper()
	var rows [][]string
	b.Eval(fmt.Sprintf(`[...document.querySelectorAll('[aria-label=%q] .vt-rows [role=row]')].map(r => [...r.querySelectorAll('[role=cell]')].map(c => c.textContent))`, table), &rows)
	return rows
}

// RowsJS is the expression of a table's rows' cells, for waitFor.
func RowsJS(table string) string {
	return fmt.Sprintf(`[...document.querySelectorAll('[aria-label=%q] .vt-rows [role=row]')].map(r => [...r.querySelectorAll('[role=cell]')].map(c => c.textContent))`, table)
}
