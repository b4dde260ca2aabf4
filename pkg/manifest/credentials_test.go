package manifest_test

import (
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
)

// Issue 15: "no secret values, passwords, or uris[].pwd" in what is shown
// of a workload. The reference manifests carry each kind of password.
func TestWithoutCredentialsEmptiesEveryPassword(t *testing.T) {
	for file, password := range map[string]string{
		"application.json": `"imagePullPasswd"`, "deployment.json": `"imagePullPasswd"`,
		"process.json": `"pwd"`, "configmap.json": `"remotePasswd"`,
	} {
		data, err := os.ReadFile("testdata/" + file)
		if err != nil {
			t.Fatal(err)
		}
		obj, err := manifest.Parse(data)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		before, _ := json.Marshal(obj)
		shown, err := json.Marshal(manifest.WithoutCredentials(obj))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(before), password) || strings.Contains(string(shown), password) {
			t.Errorf("%s: %s in the manifest %v, in what is shown %v; want only in the manifest", file, password,
				strings.Contains(string(before), password), strings.Contains(string(shown), password))
		}
		if after, _ := json.Marshal(obj); string(after) != string(before) {
			t.Errorf("%s: WithoutCredentials changed the manifest it copied", file)
		}
		if len(shown) < len(before)/2 {
			t.Errorf("%s: what is shown (%d bytes) lost more than the passwords of %d bytes", file, len(shown), len(before))
		}
	}
}

// A password field added to a manifest type must join credentialFields,
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
					t.Errorf("%s.%s looks like a password but WithoutCredentials keeps it", path, name)
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
