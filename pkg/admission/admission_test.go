package admission_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/admission"
	"github.com/bcs-mesos/bcs-mesos/pkg/field"
	"github.com/bcs-mesos/bcs-mesos/pkg/identity"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest/manifesttest"
)

const ns = manifesttest.Namespace

func refusal(field, rule string) string {
	return field + ": " + rule + ` in namespace "` + ns + `" (admission policy)`
}

// Every rule of the policy, one field changed per case, under the
// default policy and one that allows it.
func TestCheck(t *testing.T) {
	const spec = "spec.template.spec"
	withProcess := func(change func(*manifest.ProcessSpec)) manifest.Object {
		p := manifesttest.Process()
		change(&p.Spec.Template.Spec.Processes[0])
		return p
	}
	withPod := func(change func(*manifest.PodSpec)) manifest.Object {
		a := manifesttest.Application()
		a.Spec.Template.Spec.Containers[0].Volumes = nil
		change(&a.Spec.Template.Spec)
		return a
	}
	deploymentOf := func(change func(*manifest.DeploymentTemplateSpec)) manifest.Object {
		d := manifesttest.Deployment()
		change(&d.Spec.Template.Spec)
		return d
	}
	tests := []struct {
		name    string
		obj     manifest.Object
		allowed admission.Rules // rules that admit obj
		want    []string        // under the default policy
	}{
		{"no user", withProcess(func(p *manifest.ProcessSpec) { p.User = "" }), admission.Rules{}, nil},
		{"root", withProcess(func(p *manifest.ProcessSpec) { p.User = "root" }), admission.Rules{Users: []string{"root"}},
			[]string{refusal(spec+".processes[0].user", "running as root is not allowed")}},
		{"root is not any user", withProcess(func(p *manifest.ProcessSpec) { p.User = "root" }), admission.Rules{Users: []string{"*"}},
			[]string{refusal(spec+".processes[0].user", "running as root is not allowed")}},
		{"any user but root", withProcess(func(p *manifest.ProcessSpec) { p.User = "game" }), admission.Rules{Users: []string{"*"}},
			[]string{refusal(spec+".processes[0].user", `running as "game" is not allowed (allowed: no "user" (the executor's default user) only)`)}},
		{"privileged", withPod(func(s *manifest.PodSpec) { s.Containers[0].Privileged = true }), admission.Rules{Privileged: true},
			[]string{refusal(spec+".containers[0].privileged", "privileged containers are not allowed")}},
		{"host network", withPod(func(s *manifest.PodSpec) { s.NetworkMode = manifest.NetworkHost }), admission.Rules{HostNetwork: true},
			[]string{refusal(spec+".networkMode", "the host's network is not allowed")}},
		{"net=host parameter", withPod(func(s *manifest.PodSpec) {
			s.NetworkMode = manifest.NetworkUser
			s.Containers[0].Parameters = []manifest.Parameter{{Key: "--network", Value: "HOST"}}
		}), admission.Rules{HostNetwork: true},
			[]string{refusal(spec+".containers[0].parameters[0].value", "the host's network is not allowed")}},
		{"host path", withPod(func(s *manifest.PodSpec) {
			s.Containers[0].Volumes = []manifest.Volume{{Name: "logs", Volume: manifest.VolumeSource{HostPath: "/data/logs/game", MountPath: "/logs"}}}
		}), admission.Rules{HostPaths: []string{"/data/logs"}},
			[]string{refusal(spec+".containers[0].volumes[0].volume.hostPath", `host path "/data/logs/game" is not allowed (allowed: none)`)}},
		{"host path climbing out", withPod(func(s *manifest.PodSpec) {
			s.Containers[0].Volumes = []manifest.Volume{{Name: "logs", Volume: manifest.VolumeSource{HostPath: "/data/logs/../../etc", MountPath: "/logs"}}}
		}), admission.Rules{HostPaths: []string{"/"}},
			[]string{refusal(spec+".containers[0].volumes[0].volume.hostPath", `host path "/data/logs/../../etc" is not allowed (allowed: none)`)}},
		{"a sandbox volume", withPod(func(s *manifest.PodSpec) {
			s.Containers[0].Volumes = []manifest.Volume{{Name: "tmp", Volume: manifest.VolumeSource{MountPath: "/tmp"}}}
		}), admission.Rules{}, nil},
		{"deployment of processes as root", deploymentOf(func(s *manifest.DeploymentTemplateSpec) {
			s.Processes = []manifest.ProcessSpec{manifesttest.ProcessSpec()}
			s.Processes[0].User = "root"
			s.PodSpec = manifest.PodSpec{}
		}), admission.Rules{Users: []string{"root"}},
			[]string{refusal(spec+".processes[0].user", "running as root is not allowed")}},
		{"privileged command", func() manifest.Object {
			c := manifesttest.Command()
			c.Spec.User, c.Spec.Privileged = "", true
			return c
		}(), admission.Rules{Privileged: true}, []string{refusal("spec.privileged", "privileged commands are not allowed")}},
		{"command as root", manifesttest.Command(), admission.Rules{Users: []string{"root"}},
			[]string{refusal("spec.user", "running as root is not allowed")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			def := &admission.Checker{Policy: admission.Default()}
			if got := messages(def.Check(tt.obj, 0)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("default policy:\n got %q\nwant %q", got, tt.want)
			}
			if tt.name == "root is not any user" || tt.name == "host path climbing out" {
				// The rules that seem to allow it do not.
				if got := (&admission.Checker{Policy: admission.Policy{Default: tt.allowed}}).Check(tt.obj, 0); len(got) == 0 {
					t.Errorf("%+v admitted it", tt.allowed)
				}
				return
			}
			allowing := &admission.Checker{Policy: admission.Policy{Namespaces: map[string]admission.Rules{ns: tt.allowed}}}
			if got := allowing.Check(tt.obj, 0); len(got) > 0 {
				t.Errorf("rules %+v: %q", tt.allowed, got.Messages())
			}
			other := &admission.Checker{Policy: admission.Default()}
			other.Policy.Namespaces = map[string]admission.Rules{"other": tt.allowed}
			if got := messages(other.Check(tt.obj, 0)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("another namespace's rules: %q", got)
			}
		})
	}
}

func messages(errs field.ErrorList) []string {
	if len(errs) == 0 {
		return nil
	}
	return errs.Messages()
}

// Users: a namespace's list names them, "*" is any but root; without a
// list only the namespace's own uid runs (no "user" in the manifest).
func TestCheckUsers(t *testing.T) {
	p := manifesttest.Process()
	for _, tt := range []struct {
		users []string
		user  string
		want  string
	}{
		{nil, "", ""},
		{nil, "game", `running as "game" is not allowed (allowed: no "user" (the executor's default user) only)`},
		{[]string{"game"}, "game", ""},
		{[]string{"game"}, "ops", `running as "ops" is not allowed (allowed: no "user" (the executor's default user), game)`},
		{[]string{"game"}, "root", "running as root is not allowed"},
		{[]string{"root"}, "root", ""},
	} {
		p.Spec.Template.Spec.Processes[0].User = tt.user
		c := &admission.Checker{Policy: admission.Policy{Namespaces: map[string]admission.Rules{ns: {Users: tt.users}}}}
		got := messages(c.Check(p, 0))
		if tt.want == "" && got != nil || tt.want != "" && !reflect.DeepEqual(got, []string{refusal("spec.template.spec.processes[0].user", tt.want)}) {
			t.Errorf("users %q, user %q: %q, want %q", tt.users, tt.user, got, tt.want)
		}
	}
}

// With --namespace-uids, a namespace names its own uid, never
// another's (not even under "*" or listed), and root is root by uid too;
// the owners of a process's configmap and secret files and a container's
// "user" parameter are held to the same rule.
func TestCheckNamespaceUIDs(t *testing.T) {
	uids := identity.Range{First: 20000, Last: 29999}
	const own = 20001
	const spec = "spec.template.spec"
	process := func(change func(*manifest.ProcessSpec)) manifest.Object {
		p := manifesttest.Process()
		p.Spec.Template.Spec.Processes[0].User = ""
		change(&p.Spec.Template.Spec.Processes[0])
		return p
	}
	container := func(user string) manifest.Object {
		a := manifesttest.Application()
		a.Spec.Template.Spec.Containers[0].Volumes = nil
		a.Spec.Template.Spec.Containers[0].Parameters = []manifest.Parameter{{Key: "user", Value: user}}
		return a
	}
	for _, tt := range []struct {
		name  string
		users []string
		obj   manifest.Object
		want  string // "" admitted
	}{
		{"own uid", nil, process(func(p *manifest.ProcessSpec) { p.User = "20001" }), ""},
		{"another namespace's uid", []string{"*"}, process(func(p *manifest.ProcessSpec) { p.User = "20002" }),
			refusal(spec+".processes[0].user", "id 20002 belongs to another namespace (--namespace-uids 20000-29999 gives each namespace its own)")},
		{"root by uid", []string{"*"}, process(func(p *manifest.ProcessSpec) { p.User = "0" }),
			refusal(spec+".processes[0].user", "running as root is not allowed")},
		{"root by uid and gid", []string{"*"}, process(func(p *manifest.ProcessSpec) { p.User = "0:0" }),
			refusal(spec+".processes[0].user", "running as root is not allowed")},
		{"a name the policy does not list", nil, process(func(p *manifest.ProcessSpec) { p.User = "nobody" }),
			refusal(spec+".processes[0].user", `running as "nobody" is not allowed (allowed: no "user" (the namespace's own uid) only)`)},
		{"a configmap file of another namespace's uid", []string{"*"}, process(func(p *manifest.ProcessSpec) {
			p.ConfigMaps = []manifest.ConfigMapRef{{Name: "conf", Items: []manifest.ConfigMapItem{{Type: "file", DataKey: "k", KeyOrPath: "f", User: "20002"}}}}
		}), refusal(spec+".processes[0].configmaps[0].items[0].user", "id 20002 belongs to another namespace (--namespace-uids 20000-29999 gives each namespace its own)")},
		{"a secret file of root", []string{"*"}, process(func(p *manifest.ProcessSpec) {
			p.Secrets = []manifest.SecretRef{{SecretName: "s", Items: []manifest.SecretItem{{Type: "file", DataKey: "k", KeyOrPath: "f", User: "root"}}}}
		}), refusal(spec+".processes[0].secrets[0].items[0].user", "running as root is not allowed")},
		{"a container as root", []string{"*"}, container("0"),
			refusal(spec+".containers[0].parameters[0].value", "running as root is not allowed")},
		{"a container as another namespace's uid", []string{"*"}, container("20002:20002"),
			refusal(spec+".containers[0].parameters[0].value", "id 20002 belongs to another namespace (--namespace-uids 20000-29999 gives each namespace its own)")},
		{"a container as a listed user", []string{"www-data"}, container("www-data"), ""},
	} {
		c := &admission.Checker{Policy: admission.Policy{Default: admission.Rules{Users: tt.users}}, NamespaceUIDs: uids}
		got := messages(c.Check(tt.obj, own))
		if tt.want == "" && got != nil || tt.want != "" && !reflect.DeepEqual(got, []string{tt.want}) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// A command run in a task (a task group's exec, a command manifest) is
// held to the rules of the namespace the task is in: the users its
// processes may run as, privileged only where its containers may be.
func TestExec(t *testing.T) {
	policy := admission.Default()
	policy.Namespaces = map[string]admission.Rules{"ops": {Users: []string{"root"}, Privileged: true}}
	c := &admission.Checker{Policy: policy}
	for _, tt := range []struct {
		namespace, user string
		privileged      bool
		want            []string
	}{
		{"game", "", false, nil},
		{"game", "nobody", false, []string{`user: running as "nobody" is not allowed (allowed: no "user" (the executor's default user) only) in namespace "game" (admission policy)`}},
		{"game", "", true, []string{`privileged: privileged commands are not allowed in namespace "game" (admission policy)`}},
		{"game", "root", false, []string{`user: running as root is not allowed in namespace "game" (admission policy)`}},
		{"game", "root", true, []string{`user: running as root is not allowed in namespace "game" (admission policy)`,
			`privileged: privileged commands are not allowed in namespace "game" (admission policy)`}},
		{"ops", "root", true, nil},
	} {
		if got := messages(c.Exec("", tt.namespace, tt.user, tt.privileged, 0)); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s as %q privileged %v: %q, want %q", tt.namespace, tt.user, tt.privileged, got, tt.want)
		}
	}
	// With --namespace-uids, an exec as another namespace's uid is refused
	// even under "*"; the namespace's own is its tasks' user.
	c = &admission.Checker{Policy: admission.Policy{Default: admission.Rules{Users: []string{"*"}}}, NamespaceUIDs: identity.Range{First: 20000, Last: 29999}}
	if got := messages(c.Exec("", "game", "20002", false, 20001)); !reflect.DeepEqual(got, []string{`user: id 20002 belongs to another namespace (--namespace-uids 20000-29999 gives each namespace its own) in namespace "game" (admission policy)`}) {
		t.Errorf("exec as another namespace's uid: %q", got)
	}
	if got := c.Exec("", "game", "20001", false, 20001); got != nil {
		t.Errorf("exec as the namespace's own uid: %q", got.Messages())
	}
	var none *admission.Checker
	if got := none.Exec("", "game", "root", true, 0); got != nil {
		t.Errorf("a nil Checker: %q", got.Messages())
	}
}

// file:// packages come from the scheduler's package directories only.
func TestCheckPackageDirs(t *testing.T) {
	p := manifesttest.Process()
	p.Spec.Template.Spec.Processes[0].User = ""
	p.Spec.Template.Spec.Processes[0].URIs[0].Value = "file:///srv/packages/../../data/bcs/secret.key"
	for _, dirs := range [][]string{nil, {"/srv/packages"}} {
		got := (&admission.Checker{PackageDirs: dirs}).Check(p, 0).Messages()
		if len(got) != 1 || !strings.HasPrefix(got[0], "spec.template.spec.processes[0].uris[0].value: file:// packages come from the scheduler's --package-dirs only") {
			t.Errorf("dirs %q: %q", dirs, got)
		}
	}
	p.Spec.Template.Spec.Processes[0].URIs[0].Value = "file:///srv/packages/game.tgz"
	if got := (&admission.Checker{PackageDirs: []string{"/srv/packages"}}).Check(p, 0); len(got) > 0 {
		t.Errorf("a package dir: %q", got.Messages())
	}
}

// The policy file is JSON or YAML; unknown fields, relative host paths
// and egress entries that are no network, address or host:port are
// refused, naming them.
func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	yamlPolicy := write("policy.yaml", `
default:
  users: ["*"]
namespaces:
  ops:
    users: [root]
    privileged: true
    hostNetwork: true
    hostPaths: [/var/log]
    egress: ["10.1.0.0/16", "127.0.0.1:9090", "prometheus.monitoring:9090"]
`)
	p, err := admission.LoadFile(yamlPolicy)
	if err != nil {
		t.Fatal(err)
	}
	want := admission.Policy{Default: admission.Rules{Users: []string{"*"}},
		Namespaces: map[string]admission.Rules{"ops": {Users: []string{"root"}, Privileged: true, HostNetwork: true, HostPaths: []string{"/var/log"},
			Egress: []string{"10.1.0.0/16", "127.0.0.1:9090", "prometheus.monitoring:9090"}}}}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("yaml: %+v", p)
	}
	if p, err := admission.LoadFile(write("policy.json", `{"default": {"hostNetwork": true}}`)); err != nil || !reflect.DeepEqual(p, admission.Dev()) {
		t.Errorf("json: %+v %v", p, err)
	}
	for body, wantErr := range map[string]string{
		`{"default": {"priviledged": true}}`:                    "default.priviledged",
		`{"namespaces": {"a": {"hostPaths": ["var"]}}}`:         `namespaces["a"].hostPaths[0]: want an absolute path`,
		`{"default": {"egress": ["10.0.0.0/8", "prometheus"]}}`: `default.egress[1]: "prometheus": a name needs its port`,
		`{"namespaces": {"a": {"egress": ["10.0.0.1:99999"]}}}`: `namespaces["a"].egress[0]: "10.0.0.1:99999": port "99999": want 1 to 65535`,
	} {
		if _, err := admission.LoadFile(write("bad.json", body)); err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("%s: %v, want %q", body, err, wantErr)
		}
	}
}
