package manifest_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/constraint"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/field"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest/manifesttest"
)

// readFixture reads testdata/name and applies the replacements, old-new
// pairs, each of which must occur.
func readFixture(t testing.TB, name string, replacements ...string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	for i := 0; i+1 < len(replacements); i += 2 {
		if !strings.Contains(s, replacements[i]) {
			t.Fatalf("%s: %q not found", name, replacements[i])
		}
		s = strings.ReplaceAll(s, replacements[i], replacements[i+1])
	}
	return []byte(s)
}

func mustParse(t testing.TB, data []byte) manifest.Object {
	t.Helper()
	obj, err := manifest.Parse(data)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return obj
}

func messages(list field.ErrorList) []string {
	if len(list) == 0 {
		return nil
	}
	return list.Messages()
}

func parseErrors(t *testing.T, data []byte) []string {
	t.Helper()
	_, err := manifest.Parse(data)
	var list field.ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("Parse error %v is not a field.ErrorList", err)
	}
	if !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Errorf("Parse error class = %v, want ErrInvalidArgument", errdefs.Class(err))
	}
	return list.Messages()
}

// Placeholders the reference files write in place of one value.
var (
	placeholderPolicy     = []string{`"Never | Always | OnFailure"`, `"OnFailure"`}
	placeholderPullPolicy = []string{`"Always|IfNotPresent"`, `"IfNotPresent"`}
	placeholderScheme     = []string{`"http|https"`, `"https"`}
)

func placeholderCheck(typ string) []string {
	return []string{`"HTTP|TCP|COMMAND|REMOTE_HTTP|REMOTE_TCP"`, `"` + typ + `"`}
}

func join(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// TestReferenceFiles: every reference manifest of the original parses once
// its placeholders are filled, and validates or fails with exactly the
// errors the file really has; a copy with those fixed validates.
func TestReferenceFiles(t *testing.T) {
	processFill := join(placeholderPolicy, placeholderPullPolicy, placeholderCheck("REMOTE_HTTP"), placeholderScheme)
	// The seed's file items lie outside the instance's directories, which
	// the executor refuses.
	processFix := []string{"${hospip}", "${hostip}", "${ports.http-service}", "${ports.http_port}",
		"/data/container/path/", "${workPath}/", "/data/contianer/path/", "${workPath}/"}
	processErrs := []string{
		// seed 000 itself writes the typo ${hospip} and names the
		// undeclared port http-service.
		`spec.template.spec.processes[0].startCmd: unknown variable "${hospip}"` + processKnows,
		`spec.template.spec.processes[0].startCmd: unknown variable "${ports.http-service}": no port named "http-service"`,
	}
	tests := []struct {
		file     string
		fill     []string
		wantErrs []string
		fix      []string
	}{
		{
			file: "application.json",
			fill: join(placeholderPolicy, placeholderPullPolicy, placeholderCheck("HTTP"), []string{`"http|https"`, `"http"`}),
			wantErrs: []string{
				// the ports are "test-tcp" and "http-port"
				`spec.template.spec.containers[0].env[2].value: unknown variable "${bcs.ports.http_port}": no port named "http_port"`,
			},
			fix: []string{"${bcs.ports.http_port}", "${bcs.ports.http-port}"},
		},
		{
			file: "deployment.json",
			wantErrs: []string{
				// seed 000: timeoutSeconds must be less than intervalSeconds
				"spec.template.spec.containers[0].healthChecks[0].timeoutSeconds: must be less than intervalSeconds (10), got 10",
				// "protocol": "tcp" reads as type TCP, which needs a port
				"spec.template.spec.containers[0].healthChecks[0].tcp: required for type TCP",
			},
			fix: []string{`"timeoutSeconds": 10,`, `"timeoutSeconds": 5, "tcp": {"portName": "test-port"},`},
		},
		{file: "process.json", fill: processFill, wantErrs: processErrs, fix: processFix},
		{file: "seed000-process.json", fill: processFill, wantErrs: processErrs, fix: processFix},
		{file: "configmap.json"},
		{file: "secret.json"},
		{file: "service.json", fill: []string{`"ClusterIP|NodePort|None|Integration"`, `"NodePort"`}},
		{file: "command.json", fill: []string{`"Deployment | Application"`, `"Deployment"`}},
	}
	resolver := &manifesttest.Resolver{
		ConfigMaps: []*manifest.ConfigMap{{
			Metadata: manifest.ObjectMeta{Name: "template-configmap", Namespace: "ns-a"},
			Datas:    map[string]manifest.ConfigMapData{"config-one": {}, "config_two": {}},
		}},
		Secrets: []*manifest.Secret{{
			Metadata: manifest.ObjectMeta{Name: "mySecret", Namespace: "ns-a"},
			Datas:    map[string]manifest.SecretData{"abc": {}},
		}},
	}
	// The application's references live in its namespace "nfsol".
	resolver.ConfigMaps = append(resolver.ConfigMaps, &manifest.ConfigMap{
		Metadata: manifest.ObjectMeta{Name: "template-configmap", Namespace: "nfsol"},
		Datas:    map[string]manifest.ConfigMapData{"config-one": {}, "config_two": {}},
	})
	resolver.Secrets = append(resolver.Secrets, &manifest.Secret{
		Metadata: manifest.ObjectMeta{Name: "mySecret", Namespace: "nfsol"},
		Datas:    map[string]manifest.SecretData{"abc": {}},
	})
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			obj := mustParse(t, readFixture(t, tt.file, tt.fill...))
			if got := messages(obj.Validate(resolver)); !reflect.DeepEqual(got, tt.wantErrs) {
				t.Errorf("Validate:\n got %q\nwant %q", got, tt.wantErrs)
			}
			if tt.fix == nil {
				return
			}
			fixed := mustParse(t, readFixture(t, tt.file, append(append([]string(nil), tt.fill...), tt.fix...)...))
			if errs := fixed.Validate(resolver); len(errs) > 0 {
				t.Errorf("fixed copy: Validate = %q, want no errors", errs.Messages())
			}
		})
	}
}

// TestReferenceFilesDecodeEveryField spot-checks that the fields of the
// reference files land in the typed structs, spelling variants included.
func TestReferenceFilesDecodeEveryField(t *testing.T) {
	app := mustParse(t, readFixture(t, "application.json")).(*manifest.Application)
	c := app.Spec.Template.Spec.Containers[0]
	checks := []struct {
		name      string
		got, want any
	}{
		{"metadata.annotations", len(app.Metadata.Annotations), 2},
		{"constraint TOLERATION", app.Constraint.IntersectionItems[0].UnionData[0].Operate, constraint.Toleration},
		{"container hostname", c.Hostname, "container-hostname"},
		{"parameters", c.Parameters[1], manifest.Parameter{Key: "ulimit", Value: "nproc=8092"}},
		{"env valueFrom", c.Env[3].ValueFrom.ResourceFieldRef.Resource, "requests.cpu"},
		{"imagePullPasswd", c.ImagePullPasswd, "passwd"},
		{"requests.memory", c.Resources.Requests.Memory, manifest.Quantity("8")},
		{"volume", c.Volumes[0], manifest.Volume{Name: "test-vol", Volume: manifest.VolumeSource{HostPath: "/data/host/path", MountPath: "/container/path"}}},
		{"secret subPath", c.Secrets[0].Items[1].SubPath, "relativedir/"},
		{"configmap KeyOrPath", c.ConfigMaps[0].Items[1].KeyOrPath, "/data/contianer/path/filename.txt"},
		{"configmap dataKeyAlias", c.ConfigMaps[0].Items[1].DataKeyAlias, "config-two"},
		{"netLimit", app.Spec.Template.Spec.NetLimit.EgressLimit, 100},
		{"networkType", app.Spec.Template.Spec.NetworkType, "cnm"},
		{"health check command", c.HealthChecks[0].Command.Value, "ls /"},
	}
	dep := mustParse(t, readFixture(t, "deployment.json")).(*manifest.Deployment)
	checks = append(checks, []struct {
		name      string
		got, want any
	}{
		{"IntersectionItem/UnionData", dep.Constraint.IntersectionItems[0].UnionData[0].Operate, constraint.Cluster},
		{"networktype", dep.Spec.Template.Spec.NetworkType, "cnm"},
		{"maxUnavilable", *dep.Spec.Strategy.RollingUpdate.MaxUnavailable, *manifest.Count(1)},
		{"rollingOrder", dep.Spec.Strategy.RollingUpdate.RollingOrder, "CreateFirst"},
		{"selector", dep.Spec.Selector["podname"], "app-test-001"},
		{"template name", dep.Spec.Template.Metadata.Name, "deployment-test-001"},
		{"legacy protocol", dep.Spec.Template.Spec.Containers[0].HealthChecks[0].Type, manifest.CheckTCP},
		{"legacy path", dep.Spec.Template.Spec.Containers[0].HealthChecks[0].Path, "/http/path/only"},
		{"delaySeconds", dep.Spec.Template.Spec.Containers[0].HealthChecks[0].DelaySeconds, 10},
	}...)
	proc := mustParse(t, readFixture(t, "process.json")).(*manifest.Process)
	p := proc.Spec.Template.Spec.Processes[0]
	checks = append(checks, []struct {
		name      string
		got, want any
	}{
		{"nested unionData", len(proc.Constraint.IntersectionItems[3].UnionData[1].Nested), 1},
		{"uris", p.URIs[0].Pwd, "xxxxxx"},
		{"headers", p.HealthChecks[0].HTTP.Headers["key2"], "value2"},
		{"startGracePeriod", p.StartGracePeriod, 10},
		{"reloadCmd", p.ReloadCmd, "./reload.sh --pidfile ${pidFile}"},
		{"process env", p.Env[7], manifest.EnvVar{Name: "instanceid", Value: "${instanceid}"}},
	}...)
	cm := mustParse(t, readFixture(t, "configmap.json")).(*manifest.ConfigMap)
	sec := mustParse(t, readFixture(t, "secret.json")).(*manifest.Secret)
	svc := mustParse(t, readFixture(t, "service.json")).(*manifest.Service)
	cmd := mustParse(t, readFixture(t, "command.json")).(*manifest.Command)
	checks = append(checks, []struct {
		name      string
		got, want any
	}{
		{"RemoteUser", cm.Datas["myftp"], manifest.ConfigMapData{Type: "ftp", Content: "ftp://path/to/a.txt", RemoteUser: "myuyser", RemotePasswd: "nIGNvbnRleHQ="}},
		{"secret datas", sec.Datas["first-secret"].Path, "/path/to/store/in/vault"},
		{"service port", svc.Spec.Ports[1], manifest.ServicePort{Name: "tcp-28800", DomainName: "tcp.a.business.qq.com", Path: "/local/path", Protocol: "tcp", ServicePort: 28800, TargetPort: 8080, NodePort: 31001}},
		{"command", cmd.Spec.Command[2], "ps -ef |grep game"},
		{"command kind", cmd.Kind(), manifest.KindCommand},
	}...)
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %#v, want %#v", c.name, c.got, c.want)
		}
	}
}

func TestParseDispatchesOnKind(t *testing.T) {
	tests := []struct {
		kind string
		want manifest.Kind
	}{
		{"application", manifest.KindApplication},
		{"Application", manifest.KindApplication},
		{"deployment", manifest.KindDeployment},
		{"process", manifest.KindProcess},
		{"PROCESS", manifest.KindProcess},
		{"configmap", manifest.KindConfigMap},
		{"secret", manifest.KindSecret},
		{"service", manifest.KindService},
		{"Command", manifest.KindCommand},
	}
	for _, tt := range tests {
		obj := mustParse(t, []byte(`{"kind": "`+tt.kind+`"}`))
		if obj.Kind() != tt.want {
			t.Errorf("kind %q parsed as %s, want %s", tt.kind, obj.Kind(), tt.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		data string
		want []string
	}{
		{"no kind", `{"apiVersion": "v4"}`, []string{"kind: required"}},
		{"kind not a string", `{"kind": 1}`, []string{"kind: want a string"}},
		{"unknown kind", `{"kind": "pod"}`, []string{`kind: unknown kind "pod" (want one of application, autoscaler, command, configmap, daemonset, depends, deployment, hooktemplate, process, secret, service)`}},
		{"not an object", `[1]`, []string{"want an object, got an array"}},
		{"broken JSON", "{\"kind\": \"process\",\n}", []string{"invalid JSON at line 2, column 1 (offset 20): invalid character '}' looking for beginning of object key string"}},
		{"typo in a container", `{"kind": "application", "spec": {"template": {"spec": {"containers": [{"imagePulPolicy": "Always"}]}}}}`,
			[]string{"spec.template.spec.containers[0].imagePulPolicy: unknown field"}},
		{"wrong type", `{"kind": "process", "spec": {"instance": "3"}}`, []string{"spec.instance: want a number, got a string"}},
		{"fraction for an integer", `{"kind": "process", "spec": {"instance": 1.5}}`, []string{"spec.instance: want an integer, got 1.5"}},
		{"every problem at once", `{"kind": "process", "metdata": {}, "spec": {"instance": true, "template": {"spec": {"processes": [{"pidfile": "/a"}]}}}}`, []string{
			"metdata: unknown field",
			"spec.instance: want a number, got a boolean",
			"spec.template.spec.processes[0].pidfile: unknown field",
		}},
		{"quantity is a string", `{"kind": "process", "spec": {"template": {"spec": {"processes": [{"resources": {"limits": {"cpu": 2}}}]}}}}`,
			[]string{"spec.template.spec.processes[0].resources.limits.cpu: want a string, got a number"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := parseErrors(t, []byte(tt.data)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Parse errors:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestSpellingVariants: exactly the variants the reference files contain
// are accepted; any other spelling is an unknown field.
func TestSpellingVariants(t *testing.T) {
	const cm = `{"kind": "application", "spec": {"template": {"spec": {"containers": [{"configmaps": [{"items": [{%s: "/a"}]}]}]}}}}`
	const net = `{"kind": "deployment", "spec": {"template": {"spec": {%s: "cni"}}}}`
	const roll = `{"kind": "deployment", "spec": {"strategy": {"rollingupdate": {%s: 2}}}}`
	const cons = `{"kind": "process", "constraint": {%s: [{%s: [{"name": "hostname", "operate": "UNIQUE"}]}]}}`
	const secret = `{"kind": "process", "spec": {"template": {"spec": {"processes": [{"secrets": [{"items": [{%s: "/a"}]}]}]}}}}`
	const remote = `{"kind": "configmap", "datas": {"a": {%s: "u"}}}`
	tests := []struct {
		name    string
		data    string
		wantErr string
	}{
		{"configmap keyOrPath", sprintf(cm, `"keyOrPath"`), ""},
		{"configmap KeyOrPath", sprintf(cm, `"KeyOrPath"`), ""},
		{"configmap keyorpath", sprintf(cm, `"keyorpath"`), `spec.template.spec.containers[0].configmaps[0].items[0].keyorpath: unknown field`},
		{"secret keyOrPath", sprintf(secret, `"keyOrPath"`), ""},
		{"secret KeyOrPath does not appear in the references", sprintf(secret, `"KeyOrPath"`), `spec.template.spec.processes[0].secrets[0].items[0].KeyOrPath: unknown field`},
		{"networkType", sprintf(net, `"networkType"`), ""},
		{"networktype", sprintf(net, `"networktype"`), ""},
		{"NetworkType", sprintf(net, `"NetworkType"`), `spec.template.spec.NetworkType: unknown field`},
		{"maxUnavilable", sprintf(roll, `"maxUnavilable"`), ""},
		{"maxUnavailable, the right spelling (issue 13)", sprintf(roll, `"maxUnavailable"`), ""},
		{"maxunavailable", sprintf(roll, `"maxunavailable"`), `spec.strategy.rollingupdate.maxunavailable: unknown field`},
		{"intersectionItem unionData", sprintf(cons, `"intersectionItem"`, `"unionData"`), ""},
		{"IntersectionItem UnionData", sprintf(cons, `"IntersectionItem"`, `"UnionData"`), ""},
		{"intersectionitem", sprintf(cons, `"intersectionitem"`, `"unionData"`), `constraint.intersectionitem: unknown field`},
		{"RemoteUser", sprintf(remote, `"RemoteUser"`), ""},
		{"remoteUser does not appear in the references", sprintf(remote, `"remoteUser"`), `datas["a"].remoteUser: unknown field`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := manifest.Parse([]byte(tt.data))
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.wantErr {
				t.Errorf("Parse error = %q, want %q", got, tt.wantErr)
			}
		})
	}
}

func sprintf(format string, args ...string) string {
	for _, a := range args {
		format = strings.Replace(format, "%s", a, 1)
	}
	return format
}

// TestDefaults: seed 000's defaults apply to absent fields; explicit zeros
// are kept.
func TestDefaults(t *testing.T) {
	proc := mustParse(t, []byte(`{"kind": "process", "metadata": {"name": "a"}, "spec": {"template": {"spec": {"processes": [{
		"uris": [{"value": "file:///a"}],
		"healthChecks": [{"type": "HTTP", "http": {"port": 80}}, {"type": "REMOTE_TCP", "consecutiveFailures": 0, "tcp": {"port": 1}}]
	}]}}}}`)).(*manifest.Process)
	p := proc.Spec.Template.Spec.Processes[0]
	app := mustParse(t, []byte(`{"kind": "application", "metadata": {"namespace": ""}, "killPolicy": {}, "restartPolicy": {"interval": 3},
		"spec": {"template": {"spec": {"containers": [{}]}}}}`)).(*manifest.Application)
	zeros := mustParse(t, []byte(`{"kind": "process", "killPolicy": {"gracePeriod": 0}, "spec": {"template": {"spec": {"processes": [{"startGracePeriod": 0}]}}}}`)).(*manifest.Process)
	tests := []struct {
		name      string
		got, want any
	}{
		{"namespace defaultGroup", proc.Metadata.Namespace, "defaultGroup"},
		{"empty namespace is defaultGroup", app.Metadata.Namespace, "defaultGroup"},
		{"killPolicy.gracePeriod 1", proc.KillPolicy.GracePeriod, 1},
		{"killPolicy.gracePeriod 1 in a given killPolicy", app.KillPolicy.GracePeriod, 1},
		{"explicit gracePeriod 0 kept", zeros.KillPolicy.GracePeriod, 0},
		{"restartPolicy OnFailure 0 0 0", proc.RestartPolicy, manifest.RestartPolicy{Policy: manifest.RestartOnFailure}},
		{"restartPolicy policy defaults beside interval", app.RestartPolicy, manifest.RestartPolicy{Policy: manifest.RestartOnFailure, Interval: 3}},
		{"startGracePeriod 1", p.StartGracePeriod, 1},
		{"explicit startGracePeriod 0 kept", zeros.Spec.Template.Spec.Processes[0].StartGracePeriod, 0},
		{"pullPolicy IfNotPresent", p.URIs[0].PullPolicy, manifest.PullIfNotPresent},
		{"imagePullPolicy IfNotPresent", app.Spec.Template.Spec.Containers[0].ImagePullPolicy, manifest.PullIfNotPresent},
		{"health check defaults (Mesos, seed 001)", p.HealthChecks[0], manifest.HealthCheck{
			Type: manifest.CheckHTTP, DelaySeconds: 15, IntervalSeconds: 10, TimeoutSeconds: 5, ConsecutiveFailures: 3, GracePeriodSeconds: 10,
			HTTP: &manifest.HTTPCheck{Port: 80, Scheme: "http"},
		}},
		{"consecutiveFailures 0 kept: never kill", p.HealthChecks[1].ConsecutiveFailures, 0},
	}
	for _, tt := range tests {
		if !reflect.DeepEqual(tt.got, tt.want) {
			t.Errorf("%s: got %#v, want %#v", tt.name, tt.got, tt.want)
		}
	}
}

// A toleration's effect and a preferred item's weight (the soft forms of
// the constraint) parse next to the original's fields, and are checked.
func TestSoftConstraintFieldsParse(t *testing.T) {
	data := readFixture(t, "application.json",
		`"operate": "TOLERATION",`, `"operate": "TOLERATION", "effect": "PreferNoSchedule",`,
		`{
				"unionData": [{
					"name": "label",`, `{
				"weight": 40,
				"unionData": [{
					"name": "label",`)
	app := mustParse(t, data).(*manifest.Application)
	items := app.Constraint.IntersectionItems
	if got := items[0].UnionData[0].Effect; got != constraint.PreferNoSchedule {
		t.Errorf("toleration effect = %q, want PreferNoSchedule", got)
	}
	if items[1].Weight != 40 {
		t.Errorf("item 1 weight = %d, want 40", items[1].Weight)
	}
	if errs := app.Validate(manifesttest.NewResolver()); strings.Contains(strings.Join(errs.Messages(), " "), "constraint") {
		t.Errorf("Validate = %q, want the constraint valid", errs.Messages())
	}
	bad := mustParse(t, readFixture(t, "application.json", `"operate": "TOLERATION",`, `"operate": "TOLERATION", "effect": "Sometimes",`))
	if errs := strings.Join(bad.Validate(manifesttest.NewResolver()).Messages(), "\n"); !strings.Contains(errs, `constraint.intersectionItem[0].unionData[0].effect: unknown effect "Sometimes"`) {
		t.Errorf("Validate of an unknown effect: %s, want the field named", errs)
	}
}
