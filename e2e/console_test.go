package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/bcs-mesos/bcs-mesos/internal/browsertest"
)

// The web console against the real bcs-scheduler and dev cluster, in
// headless Chromium: the login takes the token into an HttpOnly cookie and
// no page shows it; a deployment's instances turn running in the grid; an
// in-place canary update passes its hook step (the run's measurement
// shown) and pauses at its pause step, highlighted, and the console's
// promote button ends it; an application that fits nowhere shows its
// pending reasons as the API counts them; agents; the events page opens on
// the recent history and follows live; every change arrives live, without
// a reload; logout ends the session.
func TestWebConsole(t *testing.T) {
	web := newAnswerServer(t, `{"age":20}`) // the canary's hook
	s := startSystem(t, allowEgress(t, web.host()))
	b := browsertest.Open(t)

	b.Run(chromedp.Navigate(s.api + "/ui/"))
	b.WaitFor("the login form", `location.pathname === "/ui/login" && document.querySelector("#token")`, "location.href")
	b.Shot("login")
	b.Run(chromedp.WaitVisible("#token"), chromedp.SendKeys("#token", "not-the-admin-token-0000"), chromedp.Submit("#token"))
	b.WaitFor("the refused login", `document.querySelector("#login-error")?.textContent === "unknown token"`, "document.body.innerText")
	// chromedp knows the new page's nodes once it saw one of them.
	b.Run(chromedp.WaitVisible("#login-error"), chromedp.SendKeys("#token", s.token()), chromedp.Submit("#token"))
	b.WaitFor("the workloads page, following the event stream", `location.pathname === "/ui/" && document.querySelector('[aria-label="workloads"]') && document.querySelector("#stream").dataset.state === "live"`,
		"document.body.innerText")
	var cookies []*network.Cookie
	b.Run(chromedp.ActionFunc(func(ctx context.Context) (err error) {
		cookies, err = network.GetCookies().Do(ctx)
		return err
	}))
	if len(cookies) != 1 || cookies[0].Name != "bcs_session" || !cookies[0].HTTPOnly || cookies[0].SameSite != network.CookieSameSiteStrict || cookies[0].Path != "/" {
		t.Errorf("cookies after the login: %+v, want one HttpOnly, SameSite=Strict session cookie", cookies)
	}
	var scriptSees string
	b.Eval(`document.cookie + " " + location.href + " " + document.documentElement.outerHTML`, &scriptSees)
	if strings.Contains(scriptSees, s.token()) {
		t.Errorf("the page, its URL or its scripts' cookies show the token")
	}
	// A reload would lose this: every change below must come live.
	b.Eval(`window.stillTheSamePage = true`, nil)

	// A deployment appears in the fleet and its instances turn running.
	if code, body := s.call("POST", "/v1/deployments", s.processDeployment("fleet", 3, map[string]any{"type": "RollingUpdate"}, "v1", "gamesvr.tar.gz")); code != 201 {
		t.Fatalf("POST deployment: %d %s", code, body)
	}
	b.WaitFor("the deployment in the workloads", `document.querySelector('[data-key="demo/fleet"] a.workload-link')`, browsertest.RowsJS("workloads"))
	b.ClickTo(`[data-key="demo/fleet"] a.workload-link`, "the instance grid", `document.querySelector('[aria-label="instances"]')`, "document.body.innerText")
	var seen []string
	deadline := time.Now().Add(90 * time.Second)
	for {
		rows := b.Rows("instances")
		states := []string{}
		for _, r := range rows {
			states = append(states, r[1])
		}
		if len(seen) == 0 || seen[len(seen)-1] != strings.Join(states, ",") {
			seen = append(seen, strings.Join(states, ","))
		}
		if strings.Join(states, ",") == "running,running,running" && allReady(rows) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the grid never showed three running, ready instances: %q", seen)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("the grid's states over time: %q", seen)
	for _, r := range b.Rows("instances") {
		port, _ := strconv.Atoi(strings.TrimPrefix(r[3], "http "))
		if !strings.HasPrefix(r[2], "agent-") || port < agentPortsFirst || port > agentPortsLast || r[4] != "1" || !strings.Contains(r[8], "gamesvr: pid ") {
			t.Errorf("instance row %q: want its agent, host port, revision 1 and the executor's pid", r)
		}
	}
	b.Shot("instances")
	b.Run(chromedp.Click(`a[href="/ui/"]`))
	b.WaitFor("fleet 3/3 in the workloads", `document.querySelector('[data-key="demo/fleet"]')?.textContent.includes("3/3")`, browsertest.RowsJS("workloads"))
	b.Shot("workloads")

	// An in-place canary: instance 2 first, then a pause until promote.
	b.ClickTo(`[data-key="demo/fleet"] a.workload-link`, "the deployment page", `document.querySelector("#rollout-tab")`, "document.body.innerText")
	b.Run(chromedp.Click("#rollout-tab"))
	b.WaitFor("the rollout page", `document.querySelector("#rollout-status")?.dataset.phase === "Completed"`, "document.body.innerText")
	if code, body := s.call("POST", "/v1/hooktemplates", hookTemplate("age", web.url+"/age", "{$.age}", "asInt(result) < 30")); code != 201 {
		t.Fatalf("template: %d %s", code, body)
	}
	canary := map[string]any{"type": "InplaceUpdate", "canary": map[string]any{"steps": []any{map[string]any{"partition": 2},
		map[string]any{"hook": map[string]any{"templateName": "age"}}, map[string]any{"pause": map[string]any{}}}}}
	if code, body := s.call("PUT", "/v1/deployments/demo/fleet", s.processDeployment("fleet", 3, canary, "v2", "gamesvr.tar.gz")); code != 200 {
		t.Fatalf("PUT canary: %d %s", code, body)
	}
	b.WaitFor("the rollout paused at its pause step, highlighted, promote enabled",
		`document.querySelector("#rollout-status")?.dataset.phase === "Paused" && document.querySelector(".step-current")?.dataset.step === "2" && !document.querySelector("#rollout-promote").disabled`,
		`document.querySelector("#rollout-status")?.innerText + " steps: " + document.querySelector("#steps")?.innerHTML`)
	var facts map[string]string
	b.Eval(`Object.fromEntries([...document.querySelectorAll("#rollout-status [data-fact]")].map(f => [f.dataset.fact, f.querySelector("dd").textContent]))`, &facts)
	if facts["strategy"] != "InplaceUpdate" || facts["partition"] != "2" || facts["updated"] != "1" || facts["revision"] != "1 → 2" {
		t.Errorf("rollout facts at the pause: %v, want InplaceUpdate, partition 2, 1 updated, 1 → 2", facts)
	}
	if v := s.deployment("fleet"); v.Status.Rollout == nil || v.Status.Rollout.Phase != "Paused" || v.Status.Rollout.Wait == nil || v.Status.Rollout.Wait.Kind != "pause" {
		t.Fatalf("the API's rollout at the pause: %+v", v.Status.Rollout)
	}
	b.WaitFor("the hook step's run with its measurement", `[...document.querySelectorAll("#hookruns .measurement")].some(m => m.textContent.includes("Successful") && m.querySelector("code").textContent === "20")`,
		`document.querySelector("#hookruns").innerText`)
	var doneSteps int
	b.Eval(`document.querySelectorAll("#steps .step-done").length`, &doneSteps)
	if doneSteps != 2 {
		t.Errorf("%d steps shown done at the pause, want the partition and the hook", doneSteps)
	}
	var series int
	b.Eval(`document.querySelectorAll('#counts path[data-series]').length`, &series)
	if series != 3 {
		t.Errorf("the counts chart draws %d series, want updated, updatedReady and ready", series)
	}
	b.Shot("rollout-paused")
	b.Eval(`document.querySelector("#hookruns").scrollIntoView()`, nil)
	b.Shot("rollout-hookruns")
	b.Eval(`window.scrollTo(0, 0)`, nil)
	b.Run(chromedp.Click("#rollout-promote"))
	b.WaitFor("the rollout completed after the console's promote", `document.querySelector("#rollout-status")?.dataset.phase === "Completed"`,
		`document.querySelector("#rollout-status")?.innerText + " " + document.querySelector("#notice").innerText`)
	for _, inst := range s.completed("fleet", 2, "Completed") {
		if inst.Revision != 2 {
			t.Errorf("instance %d at revision %d after the promote, want 2", inst.ID, inst.Revision)
		}
	}
	b.Shot("rollout-completed")
	var audit struct {
		Entries []struct{ User, Route, Path string }
	}
	_, body := s.call("GET", "/v1/audit?namespace=demo&limit=1", nil)
	if err := json.Unmarshal(body, &audit); err != nil || len(audit.Entries) != 1 || audit.Entries[0].Path != "/v1/deployments/demo/fleet/promote" || audit.Entries[0].User != "admin" {
		t.Errorf("the last write in the audit log: %s, want the console's promote as admin", body)
	}

	// An application that fits no agent: rack r9 does not exist.
	greedy := s.manifest("process.json", func(m map[string]any) {
		m["metadata"].(map[string]any)["name"] = "greedy"
		m["spec"].(map[string]any)["instance"] = 2
		m["constraint"] = map[string]any{"intersectionItem": []any{
			map[string]any{"unionData": []any{map[string]any{"name": "rack", "operate": "CLUSTER", "type": 4,
				"set": map[string]any{"item": []string{"r9"}}}}},
		}}
	})
	if code, body := s.call("POST", "/v1/apps", greedy); code != 201 {
		t.Fatalf("POST greedy: %d %s", code, body)
	}
	b.Run(chromedp.Click(`a[href="/ui/"]`))
	b.WaitFor("greedy in the workloads, pending", `document.querySelector('[data-key="demo/greedy"]')?.textContent.includes("0/2")`, browsertest.RowsJS("workloads"))
	b.ClickTo(`[data-key="demo/greedy"] a.workload-link`, "greedy's page", `location.pathname.startsWith("/ui/apps/demo/greedy")`, "location.href")
	var want []string
	s.eventually("greedy's pending verdict", func() (bool, string) {
		_, body := s.call("GET", "/v1/apps/demo/greedy/instances?limit=1", nil)
		var page struct {
			Instances []struct {
				Pending *struct {
					Reasons []struct {
						Reason string
						Count  int
					}
				}
			}
		}
		_ = json.Unmarshal(body, &page)
		want = nil
		if len(page.Instances) == 1 && page.Instances[0].Pending != nil {
			for _, r := range page.Instances[0].Pending.Reasons {
				want = append(want, fmt.Sprintf("%s=%d", r.Reason, r.Count))
			}
		}
		return len(want) > 0, string(body)
	})
	bars := `[...document.querySelectorAll("#pending .bar")].map(g => g.dataset.label + "=" + g.dataset.value).sort().join(",")`
	wantBars := strings.Join(sorted(want), ",")
	b.WaitFor("the pending reasons as bars, as the API counts them ("+wantBars+")", bars+` === `+fmt.Sprintf("%q", wantBars), bars)
	b.Shot("pending")

	// 2000 instances: the grid renders the rows in view and reads the
	// next page of instances when the scrolled-to rows need it.
	if code, body := s.call("POST", "/v1/apps/demo/greedy/scale", []byte(`{"instances": 2000}`)); code != 202 {
		t.Fatalf("scale greedy: %d %s", code, body)
	}
	b.WaitFor("the last of 2000 instances after scrolling to the end",
		`(() => { const s = document.querySelector('[aria-label="instances"] .vt-scroll'); s.scrollTop = s.scrollHeight; `+
			`return document.querySelector('[aria-label="instances"] [data-key="1999"]'); })()`,
		`document.querySelector('[aria-label="instances"]').getAttribute("aria-rowcount") + " rows, last shown " + [...document.querySelectorAll('[aria-label="instances"] [data-key]')].pop()?.dataset.key`)
	var rendered int
	b.Eval(`document.querySelectorAll('[aria-label="instances"] .vt-rows [role=row]').length`, &rendered)
	if rendered > 100 {
		t.Errorf("the grid of 2000 instances renders %d rows, want only those in view", rendered)
	}
	t.Logf("the grid of 2000 instances renders %d rows", rendered)
	b.Shot("instances-2000")
	if code, body := s.call("POST", "/v1/apps/demo/greedy/scale", []byte(`{"instances": 2}`)); code != 202 {
		t.Fatalf("scale greedy: %d %s", code, body)
	}
	b.WaitFor("greedy back to 2 instances", `document.querySelector('[aria-label="instances"]').getAttribute("aria-rowcount") === "2"`,
		`document.querySelector('[aria-label="instances"]').getAttribute("aria-rowcount")`)
	b.Run(chromedp.Evaluate(`document.querySelector('[aria-label="instances"] .vt-scroll').scrollTop = 0`, nil))
	b.ClickTo(`[aria-label="instances"] [data-key="0"] a`, "instance 0's page with its pending chart",
		`location.pathname === "/ui/apps/demo/greedy/instances/0" && document.querySelector("#pending .bar")`, "document.body.innerText")
	b.Shot("instance-pending")

	// Agents: resources as bars, instances counted.
	b.Run(chromedp.Click(`nav a[href="/ui/agents"]`))
	b.WaitFor("three agents with their bars", `document.querySelectorAll('[aria-label="agents"] .vt-rows [role=row] .meter').length === 6`, browsertest.RowsJS("agents"))
	total := 0
	for _, r := range b.Rows("agents") {
		if !strings.HasPrefix(r[0], "agent-") || r[1] != "schedulable" || !strings.Contains(r[2], "cpus") || !strings.Contains(r[3], "MB") {
			t.Errorf("agent row %q: want its name, schedulable, cpu and memory bars", r)
		}
		var n int
		fmt.Sscan(r[4], &n)
		total += n
	}
	if total != 3 {
		t.Errorf("the agents hold %d instances, want fleet's 3", total)
	}
	b.Shot("agents")
	b.ClickTo(`[aria-label="agents"] [data-key="agent-1"] a`, "agent-1's page",
		`location.pathname === "/ui/agents/agent-1" && document.querySelector('[aria-label="instances on the agent"]')`, "document.body.innerText")
	b.Shot("agent")

	// The events page opens on the recent history, newest first: fleet's
	// instance 2, which a scale-down deleted before the page opened; then
	// it follows live: greedy scaled down deletes its instance 1.
	if code, body := s.call("POST", "/v1/deployments/demo/fleet/scale", []byte(`{"instances": 2}`)); code != 202 {
		t.Fatalf("scale: %d %s", code, body)
	}
	s.eventually("fleet down to 2 instances", func() (bool, string) {
		v := s.deployment("fleet")
		return len(v.Status.Instances) == 2, fmt.Sprintf("%+v", v.Status.Instances)
	})
	b.Run(chromedp.Click(`nav a[href="/ui/events"]`))
	b.WaitFor("instance fleet/2's deletion on the events page, from the history", `document.querySelector("#stream").dataset.state === "live" && `+
		browsertest.RowsJS("events")+`.some(r => r[0] === "earlier" && r[4] === "fleet/2" && r[2] === "delete")`, browsertest.RowsJS("events"))
	history := b.Rows("events")
	for i, r := range history {
		if r[0] != "earlier" {
			t.Errorf("event row %q before any change since the page opened: want it of the history (earlier)", r)
		}
		if i > 0 && !eventBefore(r[6], history[i-1][6]) {
			t.Errorf("event %s shown below %s: want the newest first", history[i-1][6], r[6])
		}
	}
	b.Shot("events-history")
	if code, body := s.call("POST", "/v1/apps/demo/greedy/scale", []byte(`{"instances": 1}`)); code != 202 {
		t.Fatalf("scale greedy: %d %s", code, body)
	}
	b.WaitFor("instance greedy/1's deletion on the events page, live", browsertest.RowsJS("events")+`.some(r => r[4] === "greedy/1" && r[2] === "delete" && /^\d\d:\d\d:\d\d$/.test(r[0]))`, browsertest.RowsJS("events"))
	if top := b.Rows("events")[0]; top[0] == "earlier" || !eventBefore(history[0][6], top[6]) {
		t.Errorf("the top event after greedy's scale-down is %q: want a live one, newer than the history's %s", top, history[0][6])
	}
	b.Shot("events")

	var samePage bool
	b.Eval(`window.stillTheSamePage === true`, &samePage)
	if !samePage {
		t.Errorf("the console reloaded the page: its changes should come live")
	}
	if errs := b.Errors(); len(errs) > 0 {
		t.Errorf("the page's scripts failed: %q", errs)
	}

	// Logout ends the session: the cookie is gone, the API refuses.
	b.Run(chromedp.Click("#logout"))
	b.WaitFor("the login form after the logout", `location.pathname === "/ui/login"`, "location.href")
	var status int
	b.Run(chromedp.Evaluate(`fetch("/v1/apps").then(r => r.status)`, &status, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
	if status != 401 {
		t.Errorf("GET /v1/apps after the logout = %d, want 401", status)
	}
	b.Run(chromedp.Navigate(s.api + "/ui/agents"))
	b.WaitFor("the login form for a page after the logout", `location.pathname === "/ui/login"`, "location.href")
}

// An instance's page as a person works with it, in headless
// Chromium against the real scheduler, process executor and gamesvr: the
// last lines of its task's stdout; a command run in it, its output and
// exit code; reload (gamesvr logs it); restart and reschedule, each
// confirmed first (cancelled: nothing is sent), the instance relaunched
// (a new pid, its log line again; a new task group on another agent,
// whose log the page then shows). A read-only caller sees the instance
// and its logs and no button, and the API refuses it the same routes.
func TestWebConsoleInstance(t *testing.T) {
	s := startTenants(t)
	desk := s.manifest("process.json", func(m map[string]any) {
		m["metadata"].(map[string]any)["name"] = "desk"
		m["spec"].(map[string]any)["instance"] = 1
		m["killPolicy"] = map[string]any{"gracePeriod": 1}
		proc := m["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["processes"].([]any)[0].(map[string]any)
		// Frequent checks: a rescheduled instance's successor is ready soon.
		check := proc["healthChecks"].([]any)[0].(map[string]any)
		check["delaySeconds"], check["intervalSeconds"], check["timeoutSeconds"], check["gracePeriodSeconds"] = 1, 2, 1, 2
	})
	if code, body := s.call("POST", "/v1/apps", desk); code != 201 {
		t.Fatalf("POST desk: %d %s", code, body)
	}
	first := s.running("demo", "desk", 1)[0]
	b := browsertest.Open(t)
	b.Login(s.api, tokenAdmin)
	b.Run(chromedp.Navigate(s.api + "/ui/apps/demo/desk/instances/0"))
	const (
		stdout = `document.querySelector('#logs [data-task="gamesvr"] pre[data-stream="stdout"]')?.textContent`
		pidJS  = `document.querySelector('#tasks [data-fact="pid"] dd')?.textContent`
		logsJS = `document.querySelector("#logs")?.innerText`
	)
	fact := func(name string) string {
		return fmt.Sprintf(`document.querySelector('.instance-head [data-fact=%q] dd')?.textContent`, name)
	}
	serving := func(port uint32) string { return fmt.Sprintf("instance 0 serving on 127.0.0.1:%d", port) }
	b.WaitFor("gamesvr's first line in the instance's stdout", stdout+`?.includes(`+fmt.Sprintf("%q", serving(first.Ports["http"]))+`)`, logsJS)

	// A command and its output; a failing one's exit code.
	b.Run(chromedp.SendKeys("#exec-command", `echo "exec in $instanceid"; ls`), chromedp.Click("#exec-run"))
	b.WaitFor("the command's output and exit 0", `document.querySelector("#exec-output")?.textContent.includes("exec in 0\n") && `+
		`document.querySelector("#exec-output").textContent.includes("start.sh") && document.querySelector("#exec-result .badge")?.textContent === "exit 0"`,
		`document.querySelector("#exec").innerText`)
	b.Eval(`document.querySelector("#exec").scrollIntoView(), true`, nil)
	b.Shot("instance-exec")
	b.Run(chromedp.SetValue("#exec-command", "echo no >&2; exit 3"), chromedp.Click("#exec-run"))
	b.WaitFor("the failing command's output and exit 3", `document.querySelector("#exec-output")?.textContent === "no\n" && `+
		`document.querySelector("#exec-result .badge")?.textContent === "exit 3"`, `document.querySelector("#exec").innerText`)
	b.Eval(`document.querySelector("#exec").scrollIntoView(), true`, nil)
	b.Shot("instance-exec-failed")
	b.Eval(`window.scrollTo(0, 0), true`, nil)

	// Reload: gamesvr says so in its stdout, which the page shows when
	// asked. It asks no confirmation.
	seen := b.AnswerDialogs(false)
	b.Run(chromedp.Click("#instance-reload"))
	b.ClickTo("#logs-refresh", "gamesvr's reload in its stdout", stdout+`?.includes("reloaded (1)")`, logsJS)
	if d := b.DialogsSince(seen); len(d) != 0 {
		t.Errorf("reload asked %q: want no confirmation", d)
	}

	// Restart, cancelled: nothing sent (the last write is the reload).
	var pid string
	b.Eval(pidJS, &pid)
	b.Run(chromedp.Click("#instance-restart"))
	if d := b.DialogsSince(seen); len(d) != 1 || d[0] != fmt.Sprintf("Restart demo/desk/0 on %s? Its tasks (gamesvr) are stopped and started again there.", first.Host) {
		t.Errorf("the restart's confirmation: %q", d)
	}
	var audit struct {
		Entries []struct{ User, Path string }
	}
	_, body := s.call("GET", "/v1/audit?namespace=demo&limit=1", nil)
	if err := json.Unmarshal(body, &audit); err != nil || len(audit.Entries) != 1 || audit.Entries[0].Path != "/v1/taskgroups/"+first.TaskGroupID+"/reload" {
		t.Errorf("the last write after a cancelled restart: %s, want the reload", body)
	}
	// Confirmed: the process relaunched where it was, a new pid, its line
	// again in its stdout.
	seen = b.AnswerDialogs(true)
	b.Run(chromedp.Click("#instance-restart"))
	b.WaitFor("a new pid after the restart", pidJS+` && `+pidJS+` !== `+fmt.Sprintf("%q", pid)+` && document.querySelector("h1 .badge").textContent === "running"`,
		`document.querySelector(".instance").innerText`)
	b.ClickTo("#logs-refresh", "gamesvr's second start in its stdout",
		stdout+`?.split(`+fmt.Sprintf("%q", serving(first.Ports["http"]))+`).length === 3`, logsJS)
	if got := s.running("demo", "desk", 1)[0]; got.TaskGroupID != first.TaskGroupID || got.Host != first.Host {
		t.Errorf("after the restart the API shows %s on %s: want %s where it was, %s", got.TaskGroupID, got.Host, first.TaskGroupID, first.Host)
	}
	b.Shot("instance-restarted")

	// Reschedule, confirmed: a new task group on another agent, whose
	// line the logs show.
	b.Run(chromedp.Click("#instance-reschedule"))
	if d := b.DialogsSince(seen); len(d) != 2 || !strings.HasPrefix(d[1], fmt.Sprintf("Reschedule demo/desk/0 off %s?", first.Host)) {
		t.Errorf("the confirmations of the restart and the reschedule: %q", d)
	}
	b.WaitFor("the instance running on another agent", fmt.Sprintf(`%s && %s !== %q && %s !== %q && document.querySelector("h1 .badge").textContent === "running"`,
		fact("agent"), fact("agent"), first.Host, fact("task group"), first.TaskGroupID), `document.querySelector(".instance").innerText`)
	moved := s.running("demo", "desk", 1)[0]
	var shown map[string]string
	b.Eval(`Object.fromEntries([...document.querySelectorAll(".instance-head [data-fact]")].map(f => [f.dataset.fact, f.querySelector("dd").textContent]))`, &shown)
	if shown["task group"] != moved.TaskGroupID || shown["agent"] != moved.Host || moved.Host == first.Host {
		t.Errorf("the page shows %v after the reschedule, the API %s on %s (it was on %s)", shown, moved.TaskGroupID, moved.Host, first.Host)
	}
	b.ClickTo("#logs-refresh", "the successor's line in its stdout", stdout+`?.includes(`+fmt.Sprintf("%q", serving(moved.Ports["http"]))+`)`, logsJS)
	b.Shot("instance")
	if errs := b.Errors(); len(errs) > 0 {
		t.Errorf("the page's scripts failed: %q", errs)
	}

	// The viewer: the instance and its logs, no button; the API refuses
	// the page's routes to it all the same.
	b.Run(chromedp.Click("#logout"))
	b.WaitFor("the login form after the logout", `location.pathname === "/ui/login"`, "location.href")
	b.Login(s.api, tokenViewer)
	b.Run(chromedp.Navigate(s.api + "/ui/apps/demo/desk/instances/0"))
	b.WaitFor("the instance's logs as the viewer", stdout+`?.includes(`+fmt.Sprintf("%q", serving(moved.Ports["http"]))+`)`, "document.body.innerText")
	var buttons []string
	b.Eval(`[...document.querySelectorAll("#page button, #page form")].map(e => e.id || e.className)`, &buttons)
	if len(buttons) != 1 || buttons[0] != "logs-refresh" {
		t.Errorf("the viewer's instance page has %q: want only the logs' Refresh", buttons)
	}
	b.Shot("instance-read-only")
	for _, op := range []struct{ path, body string }{
		{"restart", ""}, {"reload", ""}, {"reschedule", ""}, {"exec", `{"command":["/bin/sh","-c","id"]}`},
	} {
		var answer struct {
			Status int
			Body   string
		}
		script := fmt.Sprintf(`fetch("/v1/taskgroups/%s/%s", {method: "POST", headers: {"X-BCS-Console": "1", "Content-Type": "application/json"}, body: %q || undefined})`+
			`.then(async r => ({status: r.status, body: await r.text()}))`, moved.TaskGroupID, op.path, op.body)
		b.Run(chromedp.Evaluate(script, &answer, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
		if answer.Status != 403 || !strings.Contains(answer.Body, `user \"viewer\" (role read-only) writes nothing`) {
			t.Errorf("the viewer's %s from the console: %d %s, want 403 naming its role", op.path, answer.Status, answer.Body)
		}
	}
	if got := s.running("demo", "desk", 1)[0]; got.TaskGroupID != moved.TaskGroupID || got.Restarts != moved.Restarts {
		t.Errorf("after the viewer's refused calls the instance is %+v, was %+v", got, moved)
	}
	if errs := b.Errors(); len(errs) > 0 {
		t.Errorf("the page's scripts failed: %q", errs)
	}
}

// eventBefore reports whether event ID a ("1234.2") comes before b.
func eventBefore(a, b string) bool {
	var ra, ia, rb, ib int
	fmt.Sscanf(a, "%d.%d", &ra, &ia)
	fmt.Sscanf(b, "%d.%d", &rb, &ib)
	return ra < rb || ra == rb && ia < ib
}

func allReady(rows [][]string) bool {
	for _, r := range rows {
		if r[5] != "ready" {
			return false
		}
	}
	return len(rows) > 0
}

func sorted(list []string) []string {
	out := append([]string(nil), list...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// The console's autoscaler pages against the real scheduler: the list
// links an autoscaler to its page; the page shows the leader's decisions
// live — an instance allocated through the API, the page shows the scale
// it caused without a reload — and its Pause button pauses it; the
// workload's grid marks the allocated instance.
func TestWebConsoleAutoscaler(t *testing.T) {
	s := startSystem(t)
	const path = "/v1/deployments/demo/fleet"
	if code, body := s.call("POST", "/v1/deployments", s.processDeployment("fleet", 2, map[string]any{"type": "RollingUpdate"}, "v1", "gamesvr.tar.gz")); code != 201 {
		t.Fatalf("POST deployment: %d %s", code, body)
	}
	s.settled(path, 2)
	s.createAutoscaler("fleet", map[string]any{
		"target":      map[string]any{"kind": "deployment", "name": "fleet"},
		"minReplicas": 2, "maxReplicas": 4, "intervalSeconds": int(autoscaleInterval.Seconds()),
		"metrics": []any{map[string]any{"type": "buffer", "buffer": map[string]any{"bufferSize": 2}}},
	})
	s.eventually("the autoscaler's first decision in the API", func() (bool, string) {
		st := s.autoscalerStatus("fleet")
		return st != nil && st.DesiredReplicas == 2, fmt.Sprintf("%+v", st)
	})
	b := browsertest.Open(t)
	b.Login(s.api, s.token())
	b.Run(chromedp.Navigate(s.api + "/ui/autoscalers"))
	b.WaitFor("the autoscaler listed", `document.querySelector('[data-key="demo/fleet"] a.autoscaler-link')`, browsertest.RowsJS("autoscalers"))
	const desired = `document.querySelector('#bounds [data-fact="desired"] dd')?.textContent`
	b.ClickTo(`[data-key="demo/fleet"] a.autoscaler-link`, "the autoscaler's first decision: 2 wanted", desired+` === "2"`, "document.body.innerText")
	b.Eval(`window.stillTheSamePage = true`, nil)

	s.allocation(path, 0, "allocate")
	b.WaitFor("the scale to 3 shown live", desired+` === "3" && document.querySelector("#last-scale")?.textContent.includes("2 → 3") && `+
		`document.querySelector("#metrics")?.textContent.includes("2 free")`, "document.body.innerText")
	var same bool
	b.Eval(`window.stillTheSamePage === true`, &same)
	if !same {
		t.Errorf("the page reloaded to show the scale")
	}
	b.Shot("autoscaler")

	b.Run(chromedp.Click("#autoscaler-pause"))
	b.WaitFor("paused: Resume offered, the badge shown", `document.querySelector("#autoscaler-resume") && document.querySelector("h1")?.textContent.includes("paused")`,
		"document.body.innerText")
	var spec struct {
		Spec struct {
			Spec struct{ Paused bool }
		}
	}
	if code, body := s.call("GET", "/v1/autoscalers/demo/fleet", nil); code != 200 || json.Unmarshal(body, &spec) != nil || !spec.Spec.Spec.Paused {
		t.Errorf("the autoscaler after the console's Pause: %d %s", code, body)
	}

	b.Run(chromedp.Navigate(s.api + "/ui/deployments/demo/fleet"))
	b.WaitFor("instance 0 alone marked allocated in the grid", `document.querySelectorAll('[aria-label="instances"] .allocated').length === 1 && `+
		`document.querySelector('[aria-label="instances"] [role=row] .allocated')?.closest("[role=row]")?.querySelector("[role=cell]")?.textContent === "0"`, browsertest.RowsJS("instances"))
	b.Shot("autoscaled-workload")
}
