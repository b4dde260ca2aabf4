package api_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/admission"
	"github.com/bcs-mesos/bcs-mesos/pkg/api"
	"github.com/bcs-mesos/bcs-mesos/pkg/identity"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// The admission policy refuses, at POST and PUT (and the plan's
// dry run), what a namespace may not do, with a 400 naming the field and
// the rule; nothing is stored. Paths outside the instance's directories
// are refused the same way, whatever the policy.
func TestAdmissionRefusesAtSubmit(t *testing.T) {
	policy := admission.Default()
	policy.Default.Users = []string{"user"} // the fixture's processes run as "user"
	policy.Namespaces = map[string]admission.Rules{"ops": {Users: []string{"root"}, Privileged: true, HostPaths: []string{"/data/logs"}}}
	e := newEnv(t, func(c *api.Config) {
		c.Admission = &admission.Checker{Policy: policy, PackageDirs: []string{"/srv/packages"}}
	})
	asRoot := func(p *manifest.Process) { p.Spec.Template.Spec.Processes[0].User = "root" }
	privileged := func(ns string) *manifest.Application {
		a := application("web", ns)
		a.Spec.Template.Spec.Containers[0].Privileged = true
		a.Spec.Template.Spec.NetworkMode = manifest.NetworkHost
		return a
	}
	const p0 = "spec.template.spec.processes[0]"
	for _, tt := range []struct {
		name, path string
		body       any
		want       []string
	}{
		{"root", "/v1/apps", process("game", "demo", asRoot),
			[]string{p0 + `.user: running as root is not allowed in namespace "demo" (admission policy)`}},
		{"privileged and host network", "/v1/apps", privileged("demo"), []string{
			`spec.template.spec.networkMode: the host's network is not allowed in namespace "demo" (admission policy)`,
			`spec.template.spec.containers[0].privileged: privileged containers are not allowed in namespace "demo" (admission policy)`,
			`spec.template.spec.containers[0].volumes[0].volume.hostPath: host path "/data/logs" is not allowed (allowed: none) in namespace "demo" (admission policy)`,
		}},
		{"host network where only privileged is allowed", "/v1/apps", privileged("ops"),
			[]string{`spec.template.spec.networkMode: the host's network is not allowed in namespace "ops" (admission policy)`}},
		{"pidFile on a root file", "/v1/apps", process("game", "demo", func(p *manifest.Process) {
			p.Spec.Template.Spec.Processes[0].PidFile = "/etc/shadow"
		}), []string{p0 + `.pidFile: must lie inside the instance's own directories, ${work_base_dir}/${namespace}.${processname}.${instanceid} or ${run_base_dir}/${namespace}.${processname}.${instanceid}, got "/etc/shadow"`}},
		{"file package outside the package dirs", "/v1/apps", process("game", "demo", func(p *manifest.Process) {
			p.Spec.Template.Spec.Processes[0].URIs[0].Value = "file:///data/bcs/secret.key"
		}), []string{p0 + `.uris[0].value: file:// packages come from the scheduler's --package-dirs only: "/data/bcs/secret.key" is outside "/srv/packages"`}},
		{"plan of a root process", "/v1/plan", process("game", "demo", asRoot),
			[]string{p0 + `.user: running as root is not allowed in namespace "demo" (admission policy)`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := errorOf(t, e.call(t, "POST", tt.path, tt.body), http.StatusBadRequest, "InvalidArgument")
			if !sameSet(got.Details, tt.want) {
				t.Errorf("details:\n got %q\nwant %q", got.Details, tt.want)
			}
		})
	}
	if r := e.call(t, "GET", "/v1/apps/demo/game", nil); r.status != http.StatusNotFound {
		t.Errorf("a refused app was stored: %d %s", r.status, r.body)
	}

	// What the namespace's rules allow is created; an update to what they
	// do not is refused and changes nothing.
	createApp(t, e, process("game", "ops", asRoot))
	createApp(t, e, process("game", "demo"))
	got := errorOf(t, e.call(t, "PUT", "/v1/apps/demo/game", process("game", "demo", asRoot)), http.StatusBadRequest, "InvalidArgument")
	if want := []string{p0 + `.user: running as root is not allowed in namespace "demo" (admission policy)`}; !sameSet(got.Details, want) {
		t.Errorf("PUT details: %q", got.Details)
	}
	if v := getApp(t, e, "demo", "game"); v.Version != 1 {
		t.Errorf("the refused PUT changed the app: version %d", v.Version)
	}
	createApp(t, e, process("pkg", "demo", func(p *manifest.Process) {
		p.Spec.Template.Spec.Processes[0].URIs[0].Value = "file:///srv/packages/game.tgz"
	}))
}

// With --namespace-uids, a manifest may name its namespace's
// own uid (recorded in the store) but not another namespace's, whatever
// the policy lists; root is refused by uid as by name.
func TestAdmissionNamespaceUIDs(t *testing.T) {
	uids := identity.Range{First: 20000, Last: 29999}
	policy := admission.Policy{Default: admission.Rules{Users: []string{"*"}}}
	e := newEnv(t, func(c *api.Config) {
		c.Admission = &admission.Checker{Policy: policy, NamespaceUIDs: uids}
	})
	own := map[string]uint32{}
	for _, ns := range []string{"nsa", "nsb"} {
		uid, err := e.reg.EnsureNamespaceUID(context.Background(), ns, uids)
		if err != nil {
			t.Fatal(err)
		}
		own[ns] = uid
	}
	as := func(user string) func(p *manifest.Process) {
		return func(p *manifest.Process) { p.Spec.Template.Spec.Processes[0].User = user }
	}
	const p0 = "spec.template.spec.processes[0]"
	for _, tt := range []struct{ user, want string }{
		{fmt.Sprint(own["nsb"]), fmt.Sprintf(`%s.user: id %d belongs to another namespace (--namespace-uids 20000-29999 gives each namespace its own) in namespace "nsa" (admission policy)`, p0, own["nsb"])},
		{"0", p0 + `.user: running as root is not allowed in namespace "nsa" (admission policy)`},
	} {
		got := errorOf(t, e.call(t, "POST", "/v1/apps", process("game", "nsa", as(tt.user))), http.StatusBadRequest, "InvalidArgument")
		if !sameSet(got.Details, []string{tt.want}) {
			t.Errorf("user %q: %q, want %q", tt.user, got.Details, tt.want)
		}
	}
	createApp(t, e, process("game", "nsa", as(fmt.Sprint(own["nsa"]))))
}

// A command run in a task goes through the admission policy of the
// task's namespace on every route that runs one: a task group's exec
// privileged or as root is a 400 naming the field and the rule, as a
// command manifest's is, and reaches no executor; where the namespace's
// rules allow it, it is sent.
func TestAdmissionRefusesExec(t *testing.T) {
	policy := admission.Default()
	policy.Namespaces = map[string]admission.Rules{"ops": {Users: []string{"root"}, Privileged: true}}
	op := &fakeOperator{answer: proto.MessageResult{OK: true}}
	e := newEnv(t, func(c *api.Config) {
		c.Operator = op
		c.Admission = &admission.Checker{Policy: policy}
	})
	for _, tt := range []struct{ body, want string }{
		{`{"command":["id"],"privileged":true}`, `privileged: privileged commands are not allowed in namespace "ns-a" (admission policy)`},
		{`{"command":["id"],"user":"root"}`, `user: running as root is not allowed in namespace "ns-a" (admission policy)`},
	} {
		got := errorOf(t, e.call(t, "POST", "/v1/taskgroups/"+messagedGroup+"/exec", tt.body), http.StatusBadRequest, "InvalidArgument")
		if !slices.Contains(got.Details, tt.want) {
			t.Errorf("exec %s: details %q, want %q", tt.body, got.Details, tt.want)
		}
	}
	command := `{"apiVersion":"v4","kind":"command","spec":{"commandTargetRef":{"kind":"Application","name":"web","namespace":"ns-a"},` +
		`"command":["id"],"privileged":true}}`
	got := errorOf(t, e.call(t, "POST", "/v1/commands", command), http.StatusBadRequest, "InvalidArgument")
	if want := `spec.privileged: privileged commands are not allowed in namespace "ns-a" (admission policy)`; !slices.Contains(got.Details, want) {
		t.Errorf("command: details %q, want %q", got.Details, want)
	}
	if len(op.messages) != 0 {
		t.Fatalf("refused commands reached the executor: %+v", op.messages)
	}
	e.expect(t, http.StatusOK, "POST", "/v1/taskgroups/ops_web_0_1/exec", `{"command":["id"],"user":"root","privileged":true}`, nil)
	if len(op.messages) != 1 || !op.messages[0].msg.Privileged || op.messages[0].msg.User != "root" {
		t.Errorf("an exec the rules of ops allow: sent %+v", op.messages)
	}
}
