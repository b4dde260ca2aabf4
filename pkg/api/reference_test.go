package api_test

import (
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
)

// readReference reads pkg/manifest/testdata/name and applies the
// replacements, old-new pairs, each of which must occur (as
// pkg/manifest's readFixture does).
func readReference(t *testing.T, name string, replacements ...string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "manifest", "testdata", name))
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
	return s
}

// The placeholder fill-ups of pkg/manifest's TestReferenceFiles: the
// reference files write "A | B | C" where one value goes.
var (
	placeholderPolicy     = []string{`"Never | Always | OnFailure"`, `"OnFailure"`}
	placeholderPullPolicy = []string{`"Always|IfNotPresent"`, `"IfNotPresent"`}
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

// "every reference file and the seed's process example parse and
// validate (after filling the placeholders ...)" — here through POST: the
// valid ones are created (201), the ones with real mistakes are refused
// (400) with exactly those mistakes and store nothing, and the fixed copies
// are created.
func TestReferenceFilesThroughPOST(t *testing.T) {
	processFill := join(placeholderPolicy, placeholderPullPolicy, placeholderCheck("REMOTE_HTTP"),
		[]string{`"http|https"`, `"https"`})
	// The seed's file items lie outside the instance's directories.
	processFix := []string{"${hospip}", "${hostip}", "${ports.http-service}", "${ports.http_port}",
		"/data/container/path/", "${workPath}/", "/data/contianer/path/", "${workPath}/"}
	processErrs := []string{
		`spec.template.spec.processes[0].startCmd: unknown variable "${hospip}"` + processKnows,
		`spec.template.spec.processes[0].startCmd: unknown variable "${ports.http-service}": no port named "http-service"`,
	}
	tests := []struct {
		file string
		path string
		// namespace holds the configmap and secret the manifest references,
		// created first; "" creates none.
		namespace string
		fill      []string
		wantErrs  []string
		fix       []string
	}{
		{
			file: "application.json", path: "/v1/apps", namespace: "nfsol",
			fill: join(placeholderPolicy, placeholderPullPolicy, placeholderCheck("HTTP"), []string{`"http|https"`, `"http"`}),
			wantErrs: []string{
				`spec.template.spec.containers[0].env[2].value: unknown variable "${bcs.ports.http_port}": no port named "http_port"`,
			},
			fix: []string{"${bcs.ports.http_port}", "${bcs.ports.http-port}"},
		},
		{
			file: "deployment.json", path: "/v1/deployments",
			wantErrs: []string{
				"spec.template.spec.containers[0].healthChecks[0].timeoutSeconds: must be less than intervalSeconds (10), got 10",
				"spec.template.spec.containers[0].healthChecks[0].tcp: required for type TCP",
			},
			fix: []string{`"timeoutSeconds": 10,`, `"timeoutSeconds": 5, "tcp": {"portName": "test-port"},`},
		},
		{file: "process.json", path: "/v1/apps", namespace: "ns-a", fill: processFill, wantErrs: processErrs, fix: processFix},
		{file: "seed000-process.json", path: "/v1/apps", namespace: "ns-a", fill: processFill, wantErrs: processErrs, fix: processFix},
		{file: "configmap.json", path: "/v1/configmaps"},
		{file: "secret.json", path: "/v1/secrets"},
		{file: "service.json", path: "/v1/services", fill: []string{`"ClusterIP|NodePort|None|Integration"`, `"NodePort"`}},
		// command.json runs through POST /v1/commands in TestCommandsRunInEveryTask.
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			e := newEnv(t)
			if tt.namespace != "" {
				cm := configMap("template-configmap", tt.namespace)
				cm.Datas = map[string]manifest.ConfigMapData{
					"config-one": {Type: manifest.ConfigDataFile, Content: "b25l"},
					"config_two": {Type: manifest.ConfigDataFile, Content: "dHdv"},
				}
				e.expect(t, http.StatusCreated, "POST", "/v1/configmaps", cm, nil)
				e.expect(t, http.StatusCreated, "POST", "/v1/secrets", secret("mySecret", tt.namespace), nil)
			}
			keysBefore := e.storedKeys(t)
			body := readReference(t, tt.file, tt.fill...)
			r := e.call(t, "POST", tt.path, body)
			if tt.wantErrs == nil {
				if r.status != http.StatusCreated {
					t.Fatalf("POST %s = %d, want 201; %s", tt.path, r.status, r.body)
				}
				if strings.Contains(string(r.body), "Y29uZmlnIGNvbnRleHQ=") && tt.file == "secret.json" {
					t.Errorf("POST secret answered its content: %s", r.body)
				}
				return
			}
			got := errorOf(t, r, http.StatusBadRequest, "InvalidArgument")
			if !sameSet(got.Details, tt.wantErrs) {
				t.Errorf("details:\n got %q\nwant %q", got.Details, tt.wantErrs)
			}
			if keys := e.storedKeys(t); len(keys) != len(keysBefore) {
				t.Errorf("a 400 changed the store: %q, was %q", keys, keysBefore)
			}
			if tt.fix == nil {
				return
			}
			fixed := readReference(t, tt.file, append(append([]string(nil), tt.fill...), tt.fix...)...)
			if r := e.call(t, "POST", tt.path, fixed); r.status != http.StatusCreated {
				t.Errorf("fixed copy: POST %s = %d, want 201; %s", tt.path, r.status, r.body)
			}
		})
	}
}

// The original's services are stored and served like configmaps
// (for the load balancers users run; the scheduler reads none).
func TestServicesAreStoredAndServed(t *testing.T) {
	e := newEnv(t)
	body := readReference(t, "service.json", `"ClusterIP|NodePort|None|Integration"`, `"NodePort"`)
	e.expect(t, http.StatusCreated, "POST", "/v1/services", body, nil)
	got := e.expect(t, http.StatusOK, "GET", "/v1/services/defaultGroup/template-service", nil, nil)
	if !strings.Contains(string(got.body), `"nodePort": 31001`) {
		t.Errorf("GET: %s", got.body)
	}
	list := e.expect(t, http.StatusOK, "GET", "/v1/services?namespace=defaultGroup", nil, nil)
	if !strings.Contains(string(list.body), "template-service") {
		t.Errorf("list: %s", list.body)
	}
	bad := errorOf(t, e.call(t, "PUT", "/v1/services/defaultGroup/template-service",
		strings.Replace(body, `"NodePort"`, `"Balanced"`, 1)), http.StatusBadRequest, "InvalidArgument")
	if len(bad.Details) != 1 || !strings.HasPrefix(bad.Details[0], "spec.type: ") {
		t.Errorf("PUT of a bad type: %q", bad.Details)
	}
	e.expect(t, http.StatusNoContent, "DELETE", "/v1/services/defaultGroup/template-service", nil, nil)
	e.expect(t, http.StatusNotFound, "GET", "/v1/services/defaultGroup/template-service", nil, nil)
}

// A 21 KB manifest whose variables refer to each other grew the
// scheduler by 1.1 GB; now its expansion is bounded and POST answers 400
// naming the field, storing nothing.
func TestVariablesMultiplyingAreRefused(t *testing.T) {
	e := newEnv(t)
	p := process("bomb", "ns-a", func(p *manifest.Process) {
		proc := &p.Spec.Template.Spec.Processes[0]
		proc.PidFile = "/run/" + strings.Repeat("p", 100) + ".pid"
		proc.WorkPath = "/w/" + strings.Repeat("${pidFile}", 1000)
		proc.StartCmd = strings.Repeat("${workPath} ", 40)
	})
	keys := e.storedKeys(t)
	got := errorOf(t, e.call(t, "POST", "/v1/apps", p), http.StatusBadRequest, "InvalidArgument")
	if !slices.Contains(got.Details, "spec.template.spec.processes[0].workPath: expands to more than 65536 bytes (variables referring to each other multiply)") {
		t.Errorf("details %q", got.Details)
	}
	if after := e.storedKeys(t); len(after) != len(keys) {
		t.Errorf("a 400 stored %q", after)
	}
}
