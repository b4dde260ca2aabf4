package manifest_test

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/field"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
)

// Issue 15: "no secret values, passwords, or uris[].pwd" in what is shown
// of a workload; issue 17: redacted as "***". The reference manifests
// carry each kind of password.
func TestRedactCredentialsHidesEveryPassword(t *testing.T) {
	for file, password := range map[string]string{
		"application.json": `"imagePullPasswd":"passwd"`, "deployment.json": `"imagePullPasswd":"xxxxx"`,
		"process.json": `"pwd":"xxxxxx"`, "configmap.json": `"remotePasswd":"nIGNvbnRleHQ="`,
	} {
		obj := parseFile(t, file)
		before, _ := json.Marshal(obj)
		shown, err := json.Marshal(manifest.RedactCredentials(obj))
		if err != nil {
			t.Fatal(err)
		}
		name, _, _ := strings.Cut(password, ":")
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
	if !errors.As(err, &errs) || len(errs) != 1 || !strings.Contains(errs[0].Error(), "uris[0].pwd") {
		t.Errorf("a redacted password with none stored: %v, want one error naming …uris[0].pwd", err)
	}
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
