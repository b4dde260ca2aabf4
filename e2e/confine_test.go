package e2e_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Confinement through the system: hostile manifests posted to the real
// bcs-scheduler are refused with a 400 naming the field (paths outside
// the instance's directories, file:// packages outside --package-dirs)
// and the rule (the default admission policy: no root, no privileged
// container, no host network); nothing of them is stored. A package that
// passes the check at POST — a file:// URI inside --package-dirs that is
// a link to the scheduler's own sealing key — is refused by the real
// bcs-process-executor when it opens it: the instance fails saying the
// path escapes, and the key is copied nowhere.
func TestHostileManifestsRefused(t *testing.T) {
	pkgs := filepath.Join(t.TempDir(), "packages")
	if err := os.MkdirAll(pkgs, 0o755); err != nil {
		t.Fatal(err)
	}
	s := startSystem(t, "--package-dirs", pkgs)
	key := filepath.Join(s.dir, "data", "secret.key")
	keyBytes, err := os.ReadFile(key)
	if err != nil {
		t.Fatalf("the scheduler's key: %v", err)
	}
	if code, body := s.call("POST", "/v1/configmaps", []byte(`{"apiVersion":"v4","kind":"configmap",
		"metadata":{"name":"conf","namespace":"demo"},"datas":{"game":{"type":"file","content":"bGV2ZWw9Nw=="}}}`)); code != 201 {
		t.Fatalf("create configmap: %d %s", code, body)
	}
	process := func(name string, edit func(p map[string]any)) []byte {
		return s.manifest("process.json", func(m map[string]any) {
			m["metadata"].(map[string]any)["name"] = name
			m["spec"].(map[string]any)["instance"] = 1
			edit(m["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["processes"].([]any)[0].(map[string]any))
		})
	}
	application := func(edit func(spec map[string]any)) []byte {
		return s.manifest("application.json", func(m map[string]any) {
			edit(m["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any))
		})
	}
	const (
		p0   = "spec.template.spec.processes[0]"
		dirs = "must lie inside the instance's own directories"
	)
	for _, tt := range []struct {
		name string
		body []byte
		want string
	}{
		{"pidFile on a root file", process("pid", func(p map[string]any) { p["pidFile"] = "/etc/shadow" }),
			p0 + `.pidFile: ` + dirs},
		{"workPath the base", process("work", func(p map[string]any) { p["workPath"] = "${work_base_dir}" }),
			p0 + `.workPath: ` + dirs},
		{"configmap file climbing out", process("conf", func(p map[string]any) {
			p["configmaps"] = []any{map[string]any{"name": "conf", "items": []any{
				map[string]any{"type": "file", "dataKey": "game", "keyOrPath": "${workPath}/../../../../etc/cron.d/game"}}}}
		}), p0 + `.configmaps[0].items[0].keyOrPath: ` + dirs},
		{"outputDir anywhere", process("out", func(p map[string]any) {
			p["uris"].([]any)[0].(map[string]any)["outputDir"] = "/usr/local/bin"
		}), p0 + `.uris[0].outputDir: ` + dirs},
		{"file package outside --package-dirs", process("pkg", func(p map[string]any) {
			p["uris"].([]any)[0].(map[string]any)["value"] = "file://" + key
		}), p0 + `.uris[0].value: file:// packages come from the scheduler's --package-dirs only`},
		{"root", process("root", func(p map[string]any) { p["user"] = "root" }),
			p0 + `.user: running as root is not allowed in namespace "demo" (admission policy)`},
		{"privileged container", application(func(spec map[string]any) {
			spec["containers"].([]any)[0].(map[string]any)["privileged"] = true
		}), `spec.template.spec.containers[0].privileged: privileged containers are not allowed in namespace "demo" (admission policy)`},
		{"host network", application(func(spec map[string]any) { spec["networkMode"] = "HOST" }),
			`spec.template.spec.networkMode: the host's network is not allowed in namespace "demo" (admission policy)`},
	} {
		code, body := s.call("POST", "/v1/apps", tt.body)
		var answer struct {
			Error struct {
				Details []string `json:"details"`
			} `json:"error"`
		}
		_ = json.Unmarshal(body, &answer)
		found := false
		for _, d := range answer.Error.Details {
			found = found || strings.HasPrefix(d, tt.want)
		}
		if code != 400 || !found {
			t.Errorf("%s: %d %s, want 400 with %q", tt.name, code, body, tt.want)
		} else {
			t.Logf("%s: 400 %q", tt.name, answer.Error.Details)
		}
	}
	var list struct{ Apps []json.RawMessage }
	if code, body := s.call("GET", "/v1/apps?namespace=demo", nil); code != 200 || json.Unmarshal(body, &list) != nil || len(list.Apps) != 0 {
		t.Errorf("refused manifests were stored: %d %s", code, body)
	}

	// Inside --package-dirs, lexically; a link to the key, really.
	if err := os.Symlink(key, filepath.Join(pkgs, "game.tgz")); err != nil {
		t.Fatal(err)
	}
	leak := process("leak", func(p map[string]any) {
		p["uris"] = []any{map[string]any{"value": "file://" + pkgs + "/game.tgz", "pullPolicy": "Always", "outputDir": "${workPath}"}}
	})
	if code, body := s.call("POST", "/v1/apps", leak); code != 201 {
		t.Fatalf("create leak: %d %s", code, body)
	}
	s.eventually("the executor refuses the package", func() (bool, string) {
		v, _ := s.app("demo", "leak")
		for _, i := range v.Status.Instances {
			if strings.Contains(i.Message, "game.tgz") && strings.Contains(i.Message, "escapes") {
				t.Logf("instance %d: %q", i.ID, i.Message)
				return true, ""
			}
		}
		return false, fmt.Sprintf("%+v", v.Status.Instances)
	})
	_ = filepath.WalkDir(filepath.Join(s.dir, "work"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if data, _ := os.ReadFile(p); bytes.Equal(data, keyBytes) || d.Name() == "game.tgz" {
				t.Errorf("%s holds the scheduler's key", p)
			}
		}
		return nil
	})
}
