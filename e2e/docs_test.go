package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The reference pages' sh blocks run as a reader types them, against the
// `make run` of TestReadmeQuickStart: each command, and what it must
// print or do. A command the test does not know fails it, so a page
// cannot gain one that nothing runs.

// docBlock is one sh block of a page: its commands (a line ending in a
// backslash joined with the next, comment lines left out) and its
// comment lines, which show what a command prints.
type docBlock struct {
	heading  string // the nearest heading above it, without its #s
	cmds     []string
	comments []string
}

// shBlocks returns every sh block of a page of the repository.
func shBlocks(t *testing.T, page string) []docBlock {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", page))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []docBlock
	var cur *docBlock
	heading, pending := "", ""
	for _, line := range strings.Split(string(data), "\n") {
		switch {
		case cur == nil && strings.HasPrefix(line, "#"):
			heading = strings.TrimSpace(strings.TrimLeft(line, "#"))
		case cur == nil && line == "```sh":
			cur = &docBlock{heading: heading}
		case cur != nil && strings.HasPrefix(line, "```"):
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			line = strings.TrimSpace(line)
			if strings.HasPrefix(line, "#") {
				cur.comments = append(cur.comments, strings.TrimSpace(strings.TrimPrefix(line, "#")))
				continue
			}
			if strings.HasSuffix(line, `\`) {
				pending += strings.TrimSuffix(line, `\`)
				continue
			}
			if line = pending + line; line != "" {
				cur.cmds = append(cur.cmds, line)
			}
			pending = ""
		}
	}
	return blocks
}

// shBlock returns the commands of the first sh block under a heading of
// a page.
func shBlock(t *testing.T, page, heading string) []string {
	t.Helper()
	return blockUnder(t, page, heading).cmds
}

func blockUnder(t *testing.T, page, heading string) docBlock {
	t.Helper()
	for _, b := range shBlocks(t, page) {
		if b.heading == heading {
			return b
		}
	}
	t.Fatalf("%s has no sh block under a heading %q", page, heading)
	return docBlock{}
}

// docShell runs a page's commands in a checkout as one shell session
// would: what an export sets, the later commands see.
type docShell struct {
	s       *system
	dir     string
	exports string
}

// output runs cmd and returns what it printed, stdout and stderr.
func (d *docShell) output(cmd string, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c := exec.CommandContext(ctx, "bash", "-c", d.exports+cmd)
	c.Dir = d.dir
	out, err := c.CombinedOutput()
	return string(out), err
}

// run runs cmd, which must succeed.
func (d *docShell) run(cmd string) string {
	d.s.t.Helper()
	out, err := d.output(cmd, 2*time.Minute)
	if err != nil {
		d.s.t.Fatalf("%s: %v\n%s", cmd, err, out)
	}
	return out
}

// until runs cmd again, as a reader would, until what it prints is
// what the page promises.
func (d *docShell) until(cmd, what string, ok func(out string) bool) {
	d.s.t.Helper()
	d.s.eventuallyWithin(90*time.Second, cmd+": never "+what, func() (bool, string) {
		out, err := d.output(cmd, time.Minute)
		return err == nil && ok(out), out
	})
}

// assignment matches a command that sets a shell variable from what a
// command prints: ID=$(curl … | jq -r …).
var assignment = regexp.MustCompile(`^([A-Z_]+)=\$\((.+)\)$`)

// assign runs an assignment, again until its command prints a value, as
// a reader would, and keeps the value for the later commands.
func (d *docShell) assign(cmd string) {
	d.s.t.Helper()
	m := assignment.FindStringSubmatch(cmd)
	if m == nil {
		d.s.t.Fatalf("%s: not an assignment", cmd)
	}
	var value string
	d.until(m[2], "a value for $"+m[1], func(out string) bool {
		value = strings.TrimSpace(out)
		return value != "" && value != "null" && !strings.ContainsAny(value, "'\n")
	})
	d.exports += m[1] + "='" + value + "'\n"
}

// follow starts cmd, a command that streams until stopped: its output
// so far, and stop, which ends it.
func (d *docShell) follow(cmd string) (out *syncBuffer, stop func()) {
	d.s.t.Helper()
	out = &syncBuffer{}
	c := exec.Command("bash", "-c", d.exports+"exec "+cmd)
	c.Dir = d.dir
	c.Stdout, c.Stderr = out, out
	if err := c.Start(); err != nil {
		d.s.t.Fatal(err)
	}
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	}
	d.s.t.Cleanup(stop)
	return out, stop
}

// lines are the non-empty lines of out.
func lines(out string) []string {
	return strings.Fields(strings.ReplaceAll(out, " ", ""))
}

// gone waits until GET path answers 404.
func (s *system) gone(path string) {
	s.t.Helper()
	s.eventually(path+" gone", func() (bool, string) {
		code, body := s.call("GET", path, nil)
		return code == 404, fmt.Sprintf("%d %s", code, tail(body, 300))
	})
}

// apiError reports whether an answer of the API is one of its errors.
func apiError(out string) bool {
	var answer struct{ Error json.RawMessage }
	return json.Unmarshal([]byte(out), &answer) == nil && answer.Error != nil
}

// runAPIFirstSteps runs docs/api.md's first block (create, read, reload,
// scale and delete the quick start's game server) while its "Event
// stream" block follows the namespace: the stream shows what the block did.
func runAPIFirstSteps(t *testing.T, s *system, sh *docShell) {
	t.Helper()
	events := blockUnder(t, "docs/api.md", "Event stream").cmds
	if len(events) != 1 {
		t.Fatalf("docs/api.md's event stream block: %q, want one command", events)
	}
	stream, stopEvents := sh.follow(events[0])
	first := blockUnder(t, "docs/api.md", "REST API").cmds
	for _, cmd := range first {
		switch {
		case strings.Contains(cmd, "-XPOST") && strings.HasSuffix(cmd, "/v1/apps -d @examples/process.json"):
			var v appView
			if out := sh.run(cmd); json.Unmarshal([]byte(out), &v) != nil || v.Version != 1 {
				t.Errorf("%s: %q", cmd, out)
			}
		case strings.HasSuffix(cmd, "| jq -c '.status.instances[] | {id, state, host, ports}'"):
			sh.until(cmd, "three running instances, each with its host and port", func(out string) bool {
				l := lines(out)
				return len(l) == 3 && regexp.MustCompile(`^(\{"id":\d,"state":"TASK_RUNNING","host":"[^"]+","ports":\{"http":\d+\}\}\n?){3}$`).MatchString(strings.Join(l, "\n"))
			})
		case assignment.MatchString(cmd):
			sh.assign(cmd)
		case strings.HasSuffix(cmd, "/$ID/reload"):
			var op struct{ Operation, TaskGroupID string }
			if out := sh.run(cmd); json.Unmarshal([]byte(out), &op) != nil || op.Operation != "reload" || !taskGroupOf("gamesvr", 0).MatchString(op.TaskGroupID) {
				t.Errorf("%s: %q", cmd, out)
			}
		case strings.HasSuffix(cmd, `/scale -d '{"instances":1}'`):
			if out := sh.run(cmd); apiError(out) {
				t.Errorf("%s: %q", cmd, out)
			}
			s.eventually("gamesvr scaled to one instance", func() (bool, string) {
				v, _ := s.app("demo", "gamesvr")
				return len(v.Status.Instances) == 1 && v.Status.State == "Running", fmt.Sprintf("%+v", v.Status)
			})
		case strings.Contains(cmd, "-XDELETE") && strings.HasSuffix(cmd, "/v1/apps/demo/gamesvr"):
			if out := sh.run(cmd); apiError(out) {
				t.Errorf("%s: %q", cmd, out)
			}
			s.gone("/v1/apps/demo/gamesvr")
		default:
			t.Errorf("the test does not know docs/api.md's command %q: teach it", cmd)
		}
	}
	// The stream carried each change as it happened: the application's
	// and its instances'.
	s.eventuallyWithin(10*time.Second, events[0]+": the block's changes never came", func() (bool, string) {
		got := stream.String()
		return strings.Contains(got, "event: app\n") && strings.Contains(got, "event: instance\n") &&
			strings.Contains(got, `"name":"gamesvr"`), string(tail([]byte(got), 2000))
	})
	stopEvents()
}

// runAPIWithGamesvr runs docs/api.md's blocks that read the quick
// start's running game servers: exec (its output as the page shows it),
// the plan of their manifest, and the game server's task log.
func runAPIWithGamesvr(t *testing.T, s *system, sh *docShell) {
	t.Helper()
	exec := blockUnder(t, "docs/api.md", "REST API")
	for _, b := range shBlocks(t, "docs/api.md") {
		if b.heading == "REST API" && strings.Contains(strings.Join(b.cmds, ""), "/exec") {
			exec = b
		}
	}
	if len(exec.cmds) != 2 || !assignment.MatchString(exec.cmds[0]) || len(exec.comments) != 1 {
		t.Fatalf("docs/api.md's exec block: %q %q, want the ID's assignment, a command and its output", exec.cmds, exec.comments)
	}
	sh.assign(exec.cmds[0])
	out := sh.run(exec.cmds[1])
	// The page's output, with this instance's task group ID for its own.
	var got, want struct {
		TaskGroupID, Task string
		Rest              map[string]any
	}
	shown := exec.comments[0]
	if err := json.Unmarshal([]byte(out), &got); err == nil {
		page := regexp.MustCompile(`demo_gamesvr_0_1\.[0-9a-z]+`).FindString(shown)
		shown = strings.ReplaceAll(shown, page, got.TaskGroupID)
	}
	if json.Unmarshal([]byte(out), &got.Rest) != nil || json.Unmarshal([]byte(shown), &want.Rest) != nil ||
		!taskGroupOf("gamesvr", 0).MatchString(got.TaskGroupID) || fmt.Sprint(got.Rest) != fmt.Sprint(want.Rest) {
		t.Errorf("%s:\n%s\nthe page shows:\n%s", exec.cmds[1], out, exec.comments[0])
	}

	for _, cmd := range blockUnder(t, "docs/api.md", "Why an instance waits, and plans").cmds {
		var p struct {
			Kind, Namespace, Name, Action string
			Instances                     []struct{ Action string }
		}
		out := sh.run(cmd)
		// The manifest the quick start applied: nothing would change.
		kept := 0
		if json.Unmarshal([]byte(out), &p) == nil {
			for _, i := range p.Instances {
				if i.Action == "keep" {
					kept++
				}
			}
		}
		if p.Kind != "process" || p.Name != "gamesvr" || p.Action != "unchanged" || kept != 3 || len(p.Instances) != 3 {
			t.Errorf("%s: want demo/gamesvr unchanged, its 3 instances kept:\n%s", cmd, out)
		}
	}
	runTaskLogsBlock(t, s, sh, "gamesvr")
}

// runTaskLogsBlock runs the commands of docs/api.md's task logs block
// that read app's instance 0, which runs.
func runTaskLogsBlock(t *testing.T, s *system, sh *docShell, app string) {
	t.Helper()
	ran := 0
	id := strings.ToUpper(app) // the variable the block keeps its ID in
	for _, cmd := range blockUnder(t, "docs/api.md", "Task logs").cmds {
		if !strings.HasPrefix(cmd, id+"=") && !strings.Contains(cmd, "$"+id+"/") {
			continue
		}
		ran++
		switch {
		case assignment.MatchString(cmd):
			sh.assign(cmd)
		case strings.HasSuffix(cmd, "logs?task=gamesvr&follow=true\""):
			out, stop := sh.follow(cmd)
			s.eventually(cmd+": the game server's output", func() (bool, string) {
				return strings.Contains(out.String(), "instance 0 serving on 127.0.0.1:"), out.String()
			})
			stop()
		case strings.HasSuffix(cmd, "logs?task=container-1&stream=stderr&tail=4096\""):
			// What the sidecar wrote to stderr (wget's lines), if
			// anything yet; curl's progress meter goes to stderr too.
			if out := sh.run(cmd); strings.Contains(out, `"error"`) || len(out) > 4096+1024 {
				t.Errorf("%s: %q", cmd, tail([]byte(out), 500))
			}
		default:
			t.Errorf("the test does not know docs/api.md's command %q: teach it", cmd)
		}
	}
	if ran != 2 {
		t.Errorf("docs/api.md's task logs block: %d commands for demo/%s's instance 0, want its ID and its log", ran, app)
	}
}

// runWorkloadsPage runs docs/workloads.md's blocks, each cleaned up
// after: a dependency pod beside each game server, then a daemonset on
// every agent.
func runWorkloadsPage(t *testing.T, s *system, sh *docShell) {
	t.Helper()
	for _, cmd := range blockUnder(t, "docs/workloads.md", "Dependency pods").cmds {
		switch {
		case strings.HasSuffix(cmd, "/v1/depends -d @examples/depends.json"):
			if out := sh.run(cmd); apiError(out) || !strings.Contains(out, `"logagent"`) {
				t.Errorf("%s: %q", cmd, out)
			}
		case strings.HasPrefix(cmd, "jq '.spec.template.spec.depends = "):
			var v appView
			if out := sh.run(cmd); json.Unmarshal([]byte(out), &v) != nil || v.Version != 1 {
				t.Errorf("%s: %q", cmd, out)
			}
		case strings.HasSuffix(cmd, "| jq -c '.status.pods[] | {node, users, state, taskState}'"):
			// Each game server uses the pod on its agent.
			sh.until(cmd, "a running pod on each game server's agent, 3 users in all", func(out string) bool {
				users := 0
				for _, l := range lines(out) {
					var p struct {
						Node, State, TaskState string
						Users                  int
					}
					if json.Unmarshal([]byte(l), &p) != nil || p.State != "Running" || p.TaskState != "TASK_RUNNING" || !strings.HasPrefix(p.Node, "agent-") {
						return false
					}
					users += p.Users
				}
				return users == 3
			})
		default:
			t.Errorf("the test does not know docs/workloads.md's command %q: teach it", cmd)
		}
	}
	s.call("DELETE", "/v1/apps/demo/gamesvr", nil)
	s.gone("/v1/apps/demo/gamesvr")
	s.call("DELETE", "/v1/depends/demo/logagent?force=true", nil)
	s.gone("/v1/depends/demo/logagent")

	for _, cmd := range blockUnder(t, "docs/workloads.md", "Daemonsets").cmds {
		switch {
		case strings.HasSuffix(cmd, "/v1/daemonsets -d @examples/daemonset.json"):
			var v appView
			if out := sh.run(cmd); json.Unmarshal([]byte(out), &v) != nil || v.Version != 1 {
				t.Errorf("%s: %q", cmd, out)
			}
		case strings.HasSuffix(cmd, "| jq -c '{instances, state: .status.state, on: [.status.instances[] | .host]}'"):
			sh.until(cmd, "one running instance on each of the 3 agents", func(out string) bool {
				var d struct {
					Instances int
					State     string
					On        []string
				}
				return json.Unmarshal([]byte(out), &d) == nil && d.Instances == 3 && d.State == "Running" &&
					len(d.On) == 3 && d.On[0] != d.On[1] && d.On[1] != d.On[2] && d.On[0] != d.On[2]
			})
		default:
			t.Errorf("the test does not know docs/workloads.md's command %q: teach it", cmd)
		}
	}
	s.call("DELETE", "/v1/daemonsets/demo/logagent", nil)
	s.gone("/v1/daemonsets/demo/logagent")
}

// runNotificationsBlock runs docs/updates.md's notifications block:
// a callback registered, listed, its deliveries read, and removed.
func runNotificationsBlock(t *testing.T, s *system, sh *docShell) {
	t.Helper()
	const callback = "http://10.0.0.9:9000/bcs"
	for _, cmd := range blockUnder(t, "docs/updates.md", "Notifications").cmds {
		switch {
		case strings.Contains(cmd, "-XPOST") && strings.Contains(cmd, "/v1/notifies -d "):
			if out := sh.run(cmd); apiError(out) {
				t.Errorf("%s: %q", cmd, out)
			}
		case strings.Contains(cmd, "$BCS_SERVER/v1/notifies ") && !strings.Contains(cmd, "-X"):
			if out := sh.run(cmd); apiError(out) || !strings.Contains(out, callback) {
				t.Errorf("%s: want the callback listed: %q", cmd, out)
			}
		case strings.Contains(cmd, "/v1/notifications?"):
			var page struct{ Items []json.RawMessage }
			if out := sh.run(cmd); json.Unmarshal([]byte(out), &page) != nil {
				t.Errorf("%s: %q", cmd, out)
			}
		case strings.Contains(cmd, "-XDELETE") && strings.Contains(cmd, "/v1/notifies"):
			if out := sh.run(cmd); apiError(out) {
				t.Errorf("%s: %q", cmd, out)
			}
			if code, body := s.call("GET", "/v1/notifies", nil); code != 200 || strings.Contains(string(body), callback) {
				t.Errorf("after the DELETE, GET /v1/notifies: %d %s", code, body)
			}
		default:
			t.Errorf("the test does not know docs/updates.md's command %q: teach it", cmd)
		}
	}
}

// runOperationsPage runs docs/operations.md's blocks in the checkout,
// make run stopped, with their /etc/bcs/ a directory of the test's: the
// secured etcd and Mesos, and Vault, command lines are bcs-scheduler's
// flags (it stops at the first file they name, which does not exist); the
// key rotation rotates the data directory's key.
func runOperationsPage(t *testing.T, sh *docShell) {
	t.Helper()
	etc := filepath.Join(t.TempDir(), "etc-bcs")
	if err := os.Mkdir(etc, 0o700); err != nil {
		t.Fatal(err)
	}
	local := func(cmd string) string { return strings.ReplaceAll(cmd, "/etc/bcs/", etc+"/") }
	flagsOnly := func(heading string) {
		for _, cmd := range blockUnder(t, "docs/operations.md", heading).cmds {
			out, err := sh.output(local(cmd), 30*time.Second)
			if err == nil || strings.Contains(out, "flag provided but not defined") || !regexp.MustCompile(`--[a-z-]+: (open|stat) `+regexp.QuoteMeta(etc)+`/`).MatchString(out) {
				t.Errorf("%s: %v, want its flags taken and the first missing file named:\n%s", cmd, err, out)
			}
		}
	}
	flagsOnly("Secured etcd and Mesos")
	flagsOnly("Secrets on Vault")

	oldKey, err := os.ReadFile(filepath.Join(sh.dir, "bcs-data", "secret.key"))
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range blockUnder(t, "docs/operations.md", "Sealing key").cmds {
		switch {
		case strings.HasPrefix(cmd, "bin/bcs-scheduler rotate-key "):
			if out := sh.run(local(cmd)); !strings.Contains(out, "give it to every replica as its --secret-key-file") {
				t.Errorf("%s:\n%s", cmd, out)
			}
		case strings.HasPrefix(cmd, "install -m 600 "):
			sh.run(local(cmd))
		default:
			t.Errorf("the test does not know docs/operations.md's command %q: teach it", cmd)
		}
	}
	newKey, _ := os.ReadFile(filepath.Join(etc, "secret.key.new"))
	installed, _ := os.ReadFile(filepath.Join(sh.dir, "bcs-data", "secret.key"))
	if len(newKey) == 0 || !bytes.Equal(installed, newKey) || bytes.Equal(installed, oldKey) {
		t.Errorf("after the rotation the data directory's key is not the new one (new %d bytes, installed %d, old %d)", len(newKey), len(installed), len(oldKey))
	}
}

// taskGroupOf matches the task group IDs of an instance of demo/app.
func taskGroupOf(app string, index int) *regexp.Regexp {
	return regexp.MustCompile(fmt.Sprintf(`^demo_%s_%d_\d+\.[0-9a-z]+$`, app, index))
}
