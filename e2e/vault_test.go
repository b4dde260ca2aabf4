package e2e_test

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/vaulttest"
)

// With --secret-backend vault, a process application that takes
// a secret gets its values from Vault, injected by bcs-process-executor
// into the real process as an environment variable and a file. A
// scheduler that restarts while Vault is down cannot read the secret: an
// instance that needs it waits, Pending, saying Vault is unreachable —
// not "not found", not failed — and launches once Vault is back.
func TestSecretFromVaultReachesTheProcess(t *testing.T) {
	vault, err := vaulttest.Start("s.e2e-token", "secret")
	if err != nil {
		t.Fatal(err)
	}
	defer vault.Close()
	tokenFile := filepath.Join(t.TempDir(), "vault-token")
	if err := os.WriteFile(tokenFile, []byte("s.e2e-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startSystem(t, "--secret-backend", "vault", "--vault-addr", vault.URL, "--vault-token-file", tokenFile)

	const password = "correct-horse-battery-staple"
	secret := fmt.Sprintf(`{"apiVersion":"v4","kind":"secret","metadata":{"name":"db","namespace":"demo"},
		"datas":{"password":{"path":"/path/to/store/in/vault","content":%q}}}`, base64.StdEncoding.EncodeToString([]byte(password)))
	if code, body := s.call("POST", "/v1/secrets", []byte(secret)); code != 201 {
		t.Fatalf("create secret: %d %s", code, body)
	}
	if data, ok := vault.Data("secret", "bcs/demo/db", 1); !ok || data["password"] == nil {
		t.Fatalf("vault holds %v at secret/bcs/demo/db", vault.Paths("secret"))
	}
	app := s.manifest("process.json", func(m map[string]any) {
		spec := m["spec"].(map[string]any)
		spec["instance"] = 1
		proc := spec["template"].(map[string]any)["spec"].(map[string]any)["processes"].([]any)[0].(map[string]any)
		proc["secrets"] = []any{map[string]any{"secretName": "db", "items": []any{
			map[string]any{"type": "env", "dataKey": "password", "keyOrPath": "DB_PASSWORD"},
			map[string]any{"type": "file", "dataKey": "password", "keyOrPath": "${run_base_dir}/${namespace}.${processname}.${instanceid}/db-password"},
		}}}
	})
	if code, body := s.call("POST", "/v1/apps", app); code != 201 {
		t.Fatalf("create app: %d %s", code, body)
	}
	inst := s.running("demo", "gamesvr", 1)[0]
	pid := pidOf(t, s.runPath(inst.Host, "demo.gamesvr.0", "gamesvr.pid"))
	secretFile := s.runPath(inst.Host, "demo.gamesvr.0", "db-password")
	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains("\x00"+string(environ)+"\x00", "\x00DB_PASSWORD="+password+"\x00") {
		t.Errorf("process %d has no DB_PASSWORD=%s in its environment", pid, password)
	}
	if data, err := os.ReadFile(secretFile); err != nil || string(data) != password {
		t.Errorf("%s: %q %v, want the secret", secretFile, data, err)
	}

	// The scheduler restarts while Vault is down; the new instance waits.
	vault.Close()
	s.killScheduler()
	s.startScheduler()
	if code, body := s.call("POST", "/v1/apps/demo/gamesvr/scale", []byte(`{"instances":2}`)); code != 202 {
		t.Fatalf("scale: %d %s", code, body)
	}
	s.eventually("instance 1 waiting for the secret, Vault unreachable", func() (bool, string) {
		v, _ := s.app("demo", "gamesvr")
		for _, i := range v.Status.Instances {
			if i.ID == 1 {
				return strings.Contains(i.Message, "waiting for secret demo/db: its values cannot be read, retrying") &&
					strings.Contains(i.Message, "unreachable") && i.State != "Failed", fmt.Sprintf("%+v", i)
			}
		}
		return false, fmt.Sprintf("%+v", v.Status)
	})
	if err := vault.Restart(); err != nil {
		t.Fatal(err)
	}
	s.running("demo", "gamesvr", 2)

	// Neither the values nor the token reach the scheduler's log.
	log, err := os.ReadFile(filepath.Join(s.dir, "bcs-scheduler.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log), "secret values cannot be read") {
		t.Errorf("the log does not show the failed reads")
	}
	for _, leak := range []string{password, base64.StdEncoding.EncodeToString([]byte(password)), "s.e2e-token"} {
		if strings.Contains(string(log), leak) {
			t.Errorf("bcs-scheduler.log shows %q", leak)
		}
	}
}
