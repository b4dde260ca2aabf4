package manifest_test

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/field"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
)

// No secret values, passwords or uris[].pwd in what is shown of a
// workload (anyone who may read it would learn them): each is redacted
// as "***". The reference manifests carry each kind of password.
func TestRedactCredentialsHidesEveryPassword(t *testing.T) {
	for file, password := range map[string]string{
		"application.json": `"imagePullPasswd":"passwd"`, "deployment.json": `"imagePullPasswd":"xxxxx"`,
		"process.json": `"pwd":"xxxxxx"`, "configmap.json": `"remotePasswd":"nIGNvbnRleHQ="`,
		"seed000-process.json": `"key1":"value1"`, "hooktemplate.json": `"value":"k3y-of-team"`,
	} {
		obj := parseFile(t, file)
		before, _ := json.Marshal(obj)
		shown, err := json.Marshal(manifest.RedactCredentials(obj))
		if err != nil {
			t.Fatal(err)
		}
		name := password[:strings.LastIndexByte(password, ':')]
		if !strings.Contains(string(before), password) || strings.Contains(string(shown), password) || !strings.Contains(string(shown), name+`:"***"`) {
			t.Errorf("%s: want %s in the manifest and %s:\"***\" in what is shown; shown %s", file, password, name, shown)
		}
		if after, _ := json.Marshal(obj); string(after) != string(before) {
			t.Errorf("%s: RedactCredentials changed the manifest it copied", file)
		}
		if len(shown) < len(before)-20 {
			t.Errorf("%s: what is shown (%d bytes) lost more than the passwords of %d bytes", file, len(shown), len(before))
		}
	}
}

// A manifest read from the API and sent back keeps its stored passwords;
// a new password replaces one; "***" with nothing stored is refused.
func TestKeepCredentials(t *testing.T) {
	stored := parseFile(t, "process.json")
	shown := manifest.RedactCredentials(stored)
	kept, err := manifest.KeepCredentials(shown, stored)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := mustJSON(t, kept), mustJSON(t, stored); a != b {
		t.Errorf("sent back as shown, the manifest is\n%s\nwant the stored\n%s", a, b)
	}
	changed := strings.Replace(mustJSON(t, shown), `"pwd":"***"`, `"pwd":"new-password"`, 1)
	obj, _ := manifest.Parse([]byte(changed))
	if kept, err := manifest.KeepCredentials(obj, stored); err != nil || !strings.Contains(mustJSON(t, kept), `"pwd":"new-password"`) {
		t.Errorf("a new password: %v, %s", err, mustJSON(t, kept))
	}
	_, err = manifest.KeepCredentials(shown, nil)
	var errs field.ErrorList
	const p0 = "spec.template.spec.processes[0]"
	if want := []string{p0 + ".uris[0].pwd", p0 + `.healthChecks[0].http.headers["key1"]`, p0 + `.healthChecks[0].http.headers["key2"]`}; !errors.As(err, &errs) || !sameStrings(paths(errs), want) {
		t.Errorf("redacted credentials with none stored: %v, want errors naming %q", err, want)
	}

	hooks := parseFile(t, "hooktemplate.json")
	shownHooks := manifest.RedactCredentials(hooks)
	for _, header := range []string{"t0k", "k3y-of-team", `"value":"on"`} {
		if strings.Contains(mustJSON(t, shownHooks), header) {
			t.Errorf("a hook template shows its header %s: %s", header, mustJSON(t, shownHooks))
		}
	}
	if kept, err := manifest.KeepCredentials(shownHooks, hooks); err != nil || mustJSON(t, kept) != mustJSON(t, hooks) {
		t.Errorf("a hook template sent back as shown: %v\n%s\nwant the stored\n%s", err, mustJSON(t, kept), mustJSON(t, hooks))
	}
}

// A hook run shows the metrics it copied from its template as the
// template is shown.
func TestRedactHookMetrics(t *testing.T) {
	hooks := parseFile(t, "hooktemplate.json").(*manifest.HookTemplate)
	before := mustJSON(t, hooks.Spec.Metrics)
	shown := mustJSON(t, manifest.RedactHookMetrics(hooks.Spec.Metrics))
	if strings.Contains(shown, "t0k") || strings.Contains(shown, "k3y") ||
		!strings.Contains(shown, `{"key":"Authorization","value":"***"}`) || !strings.Contains(shown, `"url":"https://metrics.example.com:8443/api/errors"`) {
		t.Errorf("the metrics shown: %s", shown)
	}
	if mustJSON(t, hooks.Spec.Metrics) != before {
		t.Error("RedactHookMetrics changed the metrics it copied")
	}
}

// A credential kept as "***" goes only where it went: the same scheme,
// host and port of a package or remote item, the same registry of an
// image, the same scheme and port of a check. Anywhere else it is sent
// again or not at all (a 400 naming the field); a change of path or tag
// keeps it.
func TestKeptCredentialsGoNowhereElse(t *testing.T) {
	const p0 = "spec.template.spec.processes[0]"
	process := parseFile(t, "process.json")
	app := parseFile(t, "application.json")
	configMap := parseFile(t, "configmap.json")
	hooks := parseFile(t, "hooktemplate.json")
	for _, tc := range []struct {
		name   string
		stored manifest.Object
		change func(string) string // of the JSON shown
		err    string
	}{
		{"package on another host", process, replacer(`"http://xx.xxx.xxxx.com/xxxx/gamesvc-v1.tar.gz"`, `"http://evil.example:8080/xxxx/gamesvc-v1.tar.gz"`),
			p0 + `.uris[0].pwd: "***" keeps the stored credential only where it was sent before: ` + p0 + `.uris[0].value's scheme, host and port changed (http://evil.example:8080, was http://xx.xxx.xxxx.com): send the credential again`},
		{"package over another scheme", process, replacer(`"http://xx.xxx.xxxx.com/xxxx/gamesvc-v1.tar.gz"`, `"https://xx.xxx.xxxx.com/xxxx/gamesvc-v1.tar.gz"`), p0 + ".uris[0].pwd: "},
		{"package in another path", process, replacer(`"http://xx.xxx.xxxx.com/xxxx/gamesvc-v1.tar.gz"`, `"http://xx.xxx.xxxx.com/xxxx/gamesvc-v2.tar.gz"`), ""},
		{"check on another port", process, replacer(`"port":8080`, `"port":9090`), p0 + `.healthChecks[0].http.headers["key1"]: `},
		{"check on another path", process, replacer(`"path":"/check"`, `"path":"/health"`), ""},
		{"image of another registry", app, replacer(`"image":"docker.hub.com/nfsol/log:92763"`, `"image":"evil.example/nfsol/log:92763"`),
			`spec.template.spec.containers[0].imagePullPasswd: "***" keeps the stored credential only where it was sent before: spec.template.spec.containers[0].image's registry changed (evil.example, was docker.hub.com): send the credential again`},
		{"image of another tag", app, replacer(`"image":"docker.hub.com/nfsol/log:92763"`, `"image":"docker.hub.com/nfsol/log:92764"`), ""},
		{"remote item elsewhere", configMap, replacer(`"content":"ftp://path/to/a.txt"`, `"content":"ftp://evil.example/to/a.txt"`), `datas["myftp"].remotePasswd: `},
		{"hook call to another host", hooks, replacer(`https://metrics.example.com:8443/api/errors`, `https://evil.example:8443/api/errors`),
			`spec.metrics[1].provider.web.headers[0].value: "***" keeps the stored credential only where it was sent before: ` +
				`spec.metrics[1].provider.web.url's scheme, host and port, or spec.metrics[1].provider.web.headers[0].key changed ` +
				`(https://evil.example:8443 as x-api-key, was https://metrics.example.com:8443 as x-api-key): send the credential again`},
		{"hook call to another argument's host", hooks, replacer(`http://{{ args.PodIP }}:`, `http://{{ args.Evil }}:`),
			`spec.metrics[0].provider.web.headers[0].value: "***" keeps the stored credential only where it was sent before: ` +
				`spec.metrics[0].provider.web.url's scheme, host and port, or spec.metrics[0].provider.web.headers[0].key changed ` +
				`(http://{{ args.Evil }}:{{ args.Port.http }} as authorization, was http://{{ args.PodIP }}:{{ args.Port.http }} as authorization)`},
		{"hook header under another name", hooks, replacer(`"key":"Authorization"`, `"key":"X-Echo"`), `spec.metrics[0].provider.web.headers[0].value: `},
		{"hook headers swapped", hooks, replacer(`{"key":"Authorization","value":"***"},{"key":"X-Trace","value":"***"}`, `{"key":"X-Trace","value":"***"},{"key":"Authorization","value":"***"}`),
			`spec.metrics[0].provider.web.headers[0].value: `},
		{"hook call on another path", hooks, replacer(`/api/errors`, `/api/v2/errors`), ""},
		{"hook header name in another case", hooks, replacer(`"key":"X-Api-Key"`, `"key":"x-api-key"`), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			shown := mustJSON(t, manifest.RedactCredentials(tc.stored))
			changed := tc.change(shown)
			if changed == shown {
				t.Fatalf("the change found nothing to change in %s", shown)
			}
			obj, err := manifest.Parse([]byte(changed))
			if obj == nil {
				t.Fatal(err)
			}
			kept, err := manifest.KeepCredentials(obj, tc.stored)
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.err == "" && strings.Contains(mustJSON(t, kept), manifest.Redacted):
				t.Errorf("kept nothing: %s", mustJSON(t, kept))
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("KeepCredentials = %v, want an error with %q", err, tc.err)
			}
		})
	}
}

func replacer(old, new string) func(string) string {
	return func(s string) string { return strings.Replace(s, old, new, 1) }
}

func paths(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, string(e.Path))
	}
	return out
}

func sameStrings(a, b []string) bool {
	return strings.Join(slices.Sorted(slices.Values(a)), "\n") == strings.Join(slices.Sorted(slices.Values(b)), "\n")
}

func parseFile(t *testing.T, file string) manifest.Object {
	t.Helper()
	data, err := os.ReadFile("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := manifest.Parse(data)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return obj
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// A password field added to a manifest type must join CredentialFields,
// or it would be shown.
func TestEveryPasswordFieldIsACredential(t *testing.T) {
	looksSecret := regexp.MustCompile(`(?i)passw|pwd|token`)
	known := map[string]bool{"imagePullPasswd": true, "pwd": true, "remotePasswd": true}
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type, path string)
	walk = func(typ reflect.Type, path string) {
		switch typ.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Map:
			walk(typ.Elem(), path)
		case reflect.Struct:
			if seen[typ] {
				return
			}
			seen[typ] = true
			for i := range typ.NumField() {
				f := typ.Field(i)
				name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
				if f.Type.Kind() == reflect.String && looksSecret.MatchString(name) && !known[name] {
					t.Errorf("%s.%s looks like a password but RedactCredentials shows it", path, name)
				}
				walk(f.Type, path+"."+name)
			}
		}
	}
	for _, obj := range []manifest.Object{&manifest.Application{}, &manifest.Process{}, &manifest.Deployment{},
		&manifest.ConfigMap{}, &manifest.Service{}, &manifest.Command{}, &manifest.HookTemplate{}} {
		walk(reflect.TypeOf(obj), string(obj.Kind()))
	}
}
