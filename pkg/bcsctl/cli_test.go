package bcsctl_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/bcs-mesos/bcs-mesos/pkg/api"
	"github.com/bcs-mesos/bcs-mesos/pkg/bcsctl"
	"github.com/bcs-mesos/bcs-mesos/pkg/changefeed"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest/manifesttest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
	"github.com/bcs-mesos/bcs-mesos/pkg/store/storetest"
)

// These tests run bcsctl's commands against the real REST API (pkg/api)
// over a real etcd, with no scheduler: what the API itself does —
// create, update, validate, list, delete — and how bcsctl shows it.

var shared storetest.Shared

func TestMain(m *testing.M) { os.Exit(storetest.RunShared(m, &shared)) }

// apiServer is the REST API over a fresh prefix of the shared etcd.
type apiServer struct {
	url string
	reg *registry.Registry
	st  *store.Store
	// requests counts the requests it got.
	requests atomic.Int64
}

// newAPIServer serves the API; change adjusts its Config.
func newAPIServer(t *testing.T, change ...func(*api.Config)) *apiServer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := store.Open(ctx, store.Config{Endpoints: shared.Etcd.Endpoints(), Prefix: shared.Prefix("bcsctl"), Sealer: shared.Sealer})
	if err != nil {
		t.Fatal(err)
	}
	s := &apiServer{reg: registry.New(st, time.Now), st: st}
	cfg := api.Config{Registry: s.reg, Leadership: api.Single{}, Events: api.EventsConfig{Feed: changefeed.New(st)}}
	for _, f := range change {
		f(&cfg)
	}
	handler := api.NewServer(cfg)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		handler.ServeHTTP(w, r)
	}))
	srv.Config.RegisterOnShutdown(handler.EndStreams)
	t.Cleanup(func() {
		handler.EndStreams()
		srv.Close()
		st.Close()
	})
	s.url = srv.URL
	return s
}

// result is what one run of bcsctl printed and its exit code.
type result struct {
	out, err string
	code     int
}

// bcsctl runs bcsctl against the server (through BCS_SERVER) with stdin.
func (s *apiServer) bcsctl(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	env := bcsctl.Env{
		In: strings.NewReader(stdin), Out: &out, Err: &errOut,
		Getenv: func(k string) string {
			if k == "BCS_SERVER" {
				return s.url
			}
			return ""
		},
		Poll: 20 * time.Millisecond,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	code := bcsctl.Main(ctx, args, env)
	return result{out.String(), errOut.String(), code}
}

// must runs bcsctl and fails the test unless it exits 0.
func (s *apiServer) must(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	r := s.bcsctl(t, stdin, args...)
	if r.code != 0 {
		t.Fatalf("bcsctl %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.out, r.err)
	}
	return r.out
}

// get reads a path of the API.
func (s *apiServer) get(t *testing.T, path string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(s.url + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data
}

func example(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "examples", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// The process example as YAML, with another instance count.
const gamesvrYAML = `apiVersion: v4
kind: process
metadata: {name: gamesvr, namespace: demo, labels: {app: gamesvr}}
restartPolicy: {policy: Always, interval: 3, backoff: 2}
killPolicy: {gracePeriod: 5}
constraint:
  intersectionItem:
  - unionData: [{name: hostname, operate: UNIQUE}]
spec:
  instance: 2
  template:
    spec:
      processes:
      - procName: gamesvr
        workPath: ${work_base_dir}/${namespace}.${processname}.${instanceid}
        pidFile: ${run_base_dir}/${namespace}.${processname}.${instanceid}/gamesvr.pid
        ports: [{name: http, hostPort: 0, protocol: HTTP}]
        uris:
        - {value: "${scheduler_url}/files/gamesvr.tar.gz", pullPolicy: IfNotPresent, outputDir: "${work_base_dir}/${namespace}.${processname}.${instanceid}"}
        startCmd: ./start.sh ${ports.http} ${pidFile}
        startGracePeriod: 2
        stopCmd: ./stop.sh ${pidFile}
        reloadCmd: ./reload.sh ${pidFile}
        env: [{name: instanceid, value: "${instanceid}"}]
        healthChecks:
        - {type: HTTP, intervalSeconds: 5, timeoutSeconds: 2, consecutiveFailures: 3, gracePeriodSeconds: 10, http: {portName: http, path: /check}}
        resources: {limits: {cpu: "0.2", memory: "64"}}
`

// apply creates what does not exist, updates what changed
// (JSON, YAML, stdin) and leaves alone what did not — no new revision.
func TestApplyCreatesConfiguresAndLeavesUnchanged(t *testing.T) {
	s := newAPIServer(t)
	file := filepath.Join("..", "..", "examples", "process.json")
	if out := s.must(t, "", "apply", "-f", file); out != "process demo/gamesvr created\n" {
		t.Errorf("first apply: %q", out)
	}
	if out := s.must(t, "", "apply", "-f", file); out != "process demo/gamesvr unchanged\n" {
		t.Errorf("second apply: %q", out)
	}
	if out := s.must(t, gamesvrYAML, "apply", "-f", "-"); out != "process demo/gamesvr configured\n" {
		t.Errorf("apply of the YAML from stdin: %q", out)
	}
	if out := s.must(t, gamesvrYAML, "apply", "-f", "-"); out != "process demo/gamesvr unchanged\n" {
		t.Errorf("apply of the same YAML: %q", out)
	}
	_, body := s.get(t, "/v1/apps/demo/gamesvr")
	var app struct {
		Version   int `json:"version"`
		Instances int `json:"instances"`
	}
	if err := json.Unmarshal(body, &app); err != nil || app.Version != 2 || app.Instances != 2 {
		t.Errorf("after apply, apply, YAML, YAML: want revision 2 with 2 instances, got %s", body)
	}

	// A directory: every .json, .yaml and .yml file, YAML with several
	// documents; a secret is always sent (the API never shows its values).
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", "kind: configmap\napiVersion: v4\nmetadata: {name: settings, namespace: demo}\n"+
		"datas: {game.conf: {type: file, content: Y29uZmln}}\n---\n"+
		"kind: secret\napiVersion: v4\nmetadata: {name: keys, namespace: demo}\ndatas: {key: {content: c2VjcmV0}}\n")
	writeFile(t, dir, "deployment.json", example(t, "deployment.json"))
	writeFile(t, dir, "README.md", "not a manifest")
	want := "configmap demo/settings created\nsecret demo/keys created\ndeployment demo/fleet created\n"
	if out := s.must(t, "", "apply", "-f", dir); out != want {
		t.Errorf("apply of a directory:\n%s\nwant:\n%s", out, want)
	}
	want = "configmap demo/settings unchanged\nsecret demo/keys configured\ndeployment demo/fleet unchanged\n"
	if out := s.must(t, "", "apply", "-f", dir); out != want {
		t.Errorf("apply of the directory again:\n%s\nwant:\n%s", out, want)
	}
}

// The API's errors are printed as its message, naming the
// fields; the exit code is 1 and nothing is created. -n fills in a
// manifest's missing namespace and refuses a different one.
func TestApplyShowsTheAPIsErrors(t *testing.T) {
	s := newAPIServer(t)
	bad := strings.Replace(example(t, "process.json"), `"instance": 3`, `"instance": -1, "replicas": 2`, 1)
	r := s.bcsctl(t, bad, "apply", "-f", "-")
	if r.code != 1 || !strings.Contains(r.err, "error: stdin: invalid manifest:\n  spec.replicas: unknown field") ||
		!strings.Contains(r.err, "spec.instance: must be ≥ 0") {
		t.Errorf("apply of a bad manifest: exit %d\n%s", r.code, r.err)
	}
	if code, _ := s.get(t, "/v1/apps/demo/gamesvr"); code != 404 {
		t.Errorf("a refused manifest created the application: %d", code)
	}

	noNamespace := strings.Replace(example(t, "process.json"), `"namespace": "demo", `, "", 1)
	if out := s.must(t, noNamespace, "apply", "-f", "-", "-n", "games"); out != "process games/gamesvr created\n" {
		t.Errorf("apply -n of a manifest without a namespace: %q", out)
	}
	r = s.bcsctl(t, example(t, "process.json"), "apply", "-f", "-", "-n", "games")
	if r.code != 2 || !strings.Contains(r.err, `its namespace "demo" is not --namespace "games"`) {
		t.Errorf("apply -n games of a manifest in demo: exit %d %s", r.code, r.err)
	}
}

// get prints aligned tables; -o json and -o yaml print what
// the API answered; -A lists every namespace.
func TestGetTablesAndRawOutput(t *testing.T) {
	s := newAPIServer(t)
	s.must(t, example(t, "process.json"), "apply", "-f", "-")
	s.must(t, example(t, "deployment.json"), "apply", "-f", "-")
	s.must(t, strings.ReplaceAll(example(t, "process.json"), `"demo"`, `"other"`), "apply", "-f", "-")

	out := s.must(t, "", "get", "apps", "-n", "demo")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "NAME      KIND      STATE       READY   UP-TO-DATE   REVISION   ROLLOUT   AGE") ||
		!strings.HasPrefix(lines[1], "gamesvr   process   Deploying   0/3     <none>       1          <none>    ") {
		t.Errorf("get apps:\n%s", out)
	}
	out = s.must(t, "", "get", "apps", "-A")
	if !strings.Contains(out, "NAMESPACE") || !strings.Contains(out, "other ") || !strings.Contains(out, "demo ") || strings.Contains(out, "fleet") {
		t.Errorf("get apps -A: want both namespaces' applications and no deployment:\n%s", out)
	}
	if out := s.must(t, "", "get", "deploy/fleet", "-n", "demo"); !strings.Contains(out, "fleet   deployment") {
		t.Errorf("get deploy/fleet:\n%s", out)
	}

	_, want := s.get(t, "/v1/apps/demo/gamesvr")
	for _, format := range []string{"json", "yaml"} {
		out := s.must(t, "", "get", "app", "demo/gamesvr", "-o", format)
		data := []byte(out)
		if format == "yaml" {
			var err error
			if data, err = yaml.YAMLToJSON(data); err != nil {
				t.Fatal(err)
			}
		}
		var got, server any
		_ = json.Unmarshal(want, &server)
		if err := json.Unmarshal(data, &got); err != nil || !reflect.DeepEqual(got, server) {
			t.Errorf("get -o %s is not what the API answered:\n%s", format, out)
		}
	}

	// Shell completion (cobra's) completes kinds, then the names the API has.
	if out := s.must(t, "", "__complete", "get", "apps", "-n", "demo", ""); out != "gamesvr\n:4\n" {
		t.Errorf("completion of application names: %q", out)
	}
	if out := s.must(t, "", "completion", "bash"); !strings.Contains(out, "# bash completion V2 for bcsctl") {
		t.Errorf("completion bash: %.80q", out)
	}

	r := s.bcsctl(t, "", "get", "instances", "-n", "nowhere")
	if r.code != 0 || r.out != "" || r.err != "No resources found in nowhere namespace.\n" {
		t.Errorf("get of an empty list: %+v", r)
	}
	r = s.bcsctl(t, "", "get", "app", "missing", "-n", "demo")
	if r.code != 1 || !strings.Contains(r.err, "error: application demo/missing") {
		t.Errorf("get of a missing application: %+v", r)
	}
}

// A mistake in the command line is exit code 2 with a pointer
// to the help, and nothing is sent to the API.
func TestUsageErrorsSendNothing(t *testing.T) {
	s := newAPIServer(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"get"}, "error: accepts between 1 and 2 arg(s), received 0\nSee 'bcsctl get --help' for usage.\n"},
		{[]string{"get", "statefulsets"}, `unknown kind "statefulsets" (want one of apps, deployments, daemonsets, instances`},
		{[]string{"get", "apps", "--colour"}, "error: unknown flag: --colour\nSee 'bcsctl get --help' for usage.\n"},
		{[]string{"get", "apps", "-o", "xml"}, `--output "xml": want one of wide, json, yaml`},
		{[]string{"get", "apps", "x", "-A"}, "a name and --all-namespaces do not go together"},
		{[]string{"frobnicate"}, `unknown command "frobnicate" for "bcsctl"`},
		{[]string{"apply"}, "give the manifests with -f FILE, DIR or -"},
		{[]string{"describe", "apps"}, "describe apps: which one? give a NAME"},
		{[]string{"scale", "app", "gamesvr"}, "--replicas: give the number of instances"},
		{[]string{"scale", "configmap", "x", "--replicas", "1"}, "configmaps: want an application (apps), a deployment (deployments) or a daemonset (daemonsets)"},
		{[]string{"rollout", "status", "agents", "a"}, "agents: want an application (apps), a deployment (deployments) or a daemonset (daemonsets)"},
		{[]string{"exec", "demo/gamesvr/0", "ls"}, "want INSTANCE -- COMMAND [ARG...]"},
		{[]string{"logs", "gamesvr"}, `instance "gamesvr": want NAMESPACE/APP/INDEX, APP/INDEX or a task group ID`},
		{[]string{"logs", "demo/gamesvr/x"}, `instance "demo/gamesvr/x": want`},
		{[]string{"delete", "hookruns", "x"}, "hookruns cannot be deleted with bcsctl delete"},
		{[]string{"--server", "ftp://x", "get", "apps"}, `--server "ftp://x": want http://host:port`},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			before := s.requests.Load()
			r := s.bcsctl(t, "", c.args...)
			if r.code != 2 || !strings.Contains(r.err, c.want) || !strings.Contains(r.err, "--help' for usage.") {
				t.Errorf("exit %d, stderr %q; want exit 2 and %q", r.code, r.err, c.want)
			}
			if n := s.requests.Load() - before; n != 0 {
				t.Errorf("%d requests sent", n)
			}
		})
	}
}

// --server wins over BCS_SERVER; an API that does not answer
// is named with where the address came from.
func TestServerFlagAndUnreachableAPI(t *testing.T) {
	s := newAPIServer(t)
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	r := s.bcsctl(t, "", "get", "apps", "--server", dead.URL)
	if r.code != 1 || !strings.Contains(r.err, "cannot reach the bcs-scheduler API at "+dead.URL+" (--server, BCS_SERVER)") {
		t.Errorf("get against a closed port: %+v", r)
	}
	if out := s.must(t, "", "version"); !strings.Contains(out, "Client: bcsctl ") || !strings.Contains(out, "Server: "+s.url) {
		t.Errorf("version: %q", out)
	}
}

// describe summarises the spec and shows the instances and the
// events the stream has of the application; delete and scale say what
// they did and the API shows it.
func TestDescribeScaleDelete(t *testing.T) {
	s := newAPIServer(t)
	s.must(t, example(t, "deployment.json"), "apply", "-f", "-")
	s.must(t, "kind: configmap\napiVersion: v4\nmetadata: {name: settings, namespace: demo}\ndatas: {a: {type: file, content: eA==}}\n", "apply", "-f", "-")

	out := s.must(t, "", "describe", "deployment", "fleet", "-n", "demo")
	for _, want := range []string{"Name:            fleet\n", "Kind:            deployment\n", "Strategy:        RollingUpdate (maxUnavailable 1)\n",
		"  gamesvr:\n    Start:      ./start.sh ${ports.http} ${pidFile}\n", "Instances:\n  <none>\n",
		"Events:\n  EVENT   TYPE         OBJECT   MESSAGE\n", "deployment   fleet    revision 1, 4 instances: Deploying: waiting for the scheduler\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("describe deployment lacks %q:\n%s", want, out)
		}
	}
	if out := s.must(t, "", "describe", "configmap", "demo/settings"); !strings.Contains(out, "Name:       settings\n") || !strings.Contains(out, "content: eA==") {
		t.Errorf("describe configmap:\n%s", out)
	}

	if out := s.must(t, "", "scale", "deployment", "fleet", "--replicas", "2", "-n", "demo"); out != "deployment demo/fleet scaled to 2\n" {
		t.Errorf("scale: %q", out)
	}
	if _, body := s.get(t, "/v1/deployments/demo/fleet"); !strings.Contains(string(body), `"instances": 2`) {
		t.Errorf("after scale: %s", body)
	}
	// undo rolls out the previous revision's spec as a new revision.
	s.must(t, strings.Replace(example(t, "deployment.json"), `"value": "v1"`, `"value": "v2"`, 1), "apply", "-f", "-")
	if out := s.must(t, "", "rollout", "undo", "deployment/fleet", "-n", "demo"); out != "deployment demo/fleet rolled back to the spec of revision 1 (as revision 3)\n" {
		t.Errorf("rollout undo: %q", out)
	}
	history := regexp.MustCompile(`^REVISION   CAUSE           AGE\n1          update          \S+\n2          update          \S+\n3          rollback to 1   \S+\n$`)
	if out := s.must(t, "", "rollout", "history", "deployment", "fleet", "-n", "demo"); !history.MatchString(out) {
		t.Errorf("rollout history:\n%s", out)
	}
	if out := s.must(t, "", "rollout", "history", "deployment", "fleet", "-n", "demo", "--revision", "2"); !strings.Contains(out, "value: v2\n") {
		t.Errorf("rollout history --revision 2:\n%s", out)
	}
	if out := s.must(t, "", "rollout", "pause", "deployment", "fleet", "-n", "demo"); out != "deployment demo/fleet paused\n" {
		t.Errorf("rollout pause: %q", out)
	}

	// An instance that was never launched has no task group to reach.
	r := s.bcsctl(t, "", "exec", "fleet/0", "-n", "demo", "--", "true")
	if r.code != 1 || r.err != "error: demo/fleet has no instance 0\n" {
		t.Errorf("exec of an instance not launched: %+v", r)
	}

	if out := s.must(t, "", "delete", "configmap", "settings", "-n", "demo"); out != "configmap demo/settings deleted\n" {
		t.Errorf("delete configmap: %q", out)
	}
	if code, _ := s.get(t, "/v1/configmaps/demo/settings"); code != 404 {
		t.Errorf("the configmap is still there: %d", code)
	}
	// Never launched: the API removes it at once.
	if out := s.must(t, "", "delete", "-f", "../../examples/deployment.json"); out != "deployment demo/fleet deleted\n" {
		t.Errorf("delete -f: %q", out)
	}
	if code, _ := s.get(t, "/v1/deployments/demo/fleet"); code != 404 {
		t.Errorf("the deployment is still there: %d", code)
	}
}

// The original's services are applied, listed and deleted like
// configmaps.
func TestServices(t *testing.T) {
	s := newAPIServer(t)
	data, err := os.ReadFile("../manifest/testdata/service.json")
	if err != nil {
		t.Fatal(err)
	}
	service := strings.Replace(string(data), `"ClusterIP|NodePort|None|Integration"`, `"NodePort"`, 1)
	if out := s.must(t, service, "apply", "-f", "-"); out != "service defaultGroup/template-service created\n" {
		t.Errorf("apply: %q", out)
	}
	out := s.must(t, "", "get", "svc", "-n", "defaultGroup")
	if !regexp.MustCompile(`^NAME +DATA +AGE\ntemplate-service +NodePort, 2 ports +\S+\n$`).MatchString(out) {
		t.Errorf("get svc:\n%s", out)
	}
	if out := s.must(t, "", "delete", "service", "template-service", "-n", "defaultGroup"); out != "service defaultGroup/template-service deleted\n" {
		t.Errorf("delete: %q", out)
	}
}

// Lists are paged. bcsctl reads a list longer than one page
// (500) whole, page by page, and -o json shows it as one list.
func TestGetReadsEveryPage(t *testing.T) {
	s := newAPIServer(t)
	var want []string
	for i := range 501 {
		name := fmt.Sprintf("cm-%03d", i)
		cm := manifesttest.ConfigMap()
		cm.Metadata.Name, cm.Metadata.Namespace = name, "demo"
		if _, err := s.reg.PutObject(t.Context(), cm, -1); err != nil {
			t.Fatal(err)
		}
		want = append(want, name)
	}
	before := s.requests.Load()
	out := s.must(t, "", "get", "configmaps", "-n", "demo", "-o", "json")
	if n := s.requests.Load() - before; n != 2 {
		t.Errorf("get of 501 configmaps took %d requests, want 2 pages", n)
	}
	var list struct {
		ConfigMaps []struct {
			Name string `json:"name"`
		} `json:"configmaps"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, cm := range list.ConfigMaps {
		got = append(got, cm.Name)
	}
	if !slices.Equal(got, want) {
		t.Errorf("get configmaps -o json: %d names %q…, want the 501 in order", len(got), got[:min(3, len(got))])
	}
}

// A command that changes something says so in one line, kubectl's way;
// -o json|yaml prints what the API answered instead. create is apply
// that only creates: an object that exists is refused with what to do,
// not with the store's words.
func TestWritesPrintOneLineOrTheAnswer(t *testing.T) {
	s := newAPIServer(t)
	configmap := "kind: configmap\napiVersion: v4\nmetadata: {name: settings, namespace: demo}\ndatas: {a: {type: file, content: eA==}}\n"
	if out := s.must(t, configmap, "create", "-f", "-"); out != "configmap demo/settings created\n" {
		t.Errorf("create: %q", out)
	}
	r := s.bcsctl(t, configmap, "create", "-f", "-")
	if r.code != 1 || r.out != "" || r.err != "error: stdin: configmap demo/settings exists already: change it with PUT (bcsctl apply), or delete it first\n" {
		t.Errorf("create of an existing configmap: %+v", r)
	}
	_, stored := s.get(t, "/v1/configmaps/demo/settings")
	if out := s.must(t, configmap, "apply", "-f", "-", "-o", "json"); !sameJSON(t, []byte(out), stored) {
		t.Errorf("apply -o json of an unchanged configmap: %s, want what GET answers: %s", out, stored)
	}
	out := s.must(t, example(t, "process.json"), "apply", "-f", "-", "-o", "yaml")
	_, created := s.get(t, "/v1/apps/demo/gamesvr")
	if data, err := yaml.YAMLToJSON([]byte(out)); err != nil || !sameJSON(t, data, created) {
		t.Errorf("apply -o yaml of a new process: %s (%v), want what GET answers: %s", out, err, created)
	}
	if out := s.must(t, "", "scale", "app", "gamesvr", "--replicas", "1", "-n", "demo"); out != "process demo/gamesvr scaled to 1\n" {
		t.Errorf("scale: %q", out)
	}
	out = s.must(t, "", "rollout", "pause", "app", "gamesvr", "-n", "demo", "-o", "json")
	if _, paused := s.get(t, "/v1/apps/demo/gamesvr"); !sameJSON(t, []byte(out), paused) || !strings.Contains(out, `"instances": 1`) {
		t.Errorf("rollout pause -o json: %s, want what GET answers: %s", out, paused)
	}
	if out := s.must(t, "", "delete", "configmap", "settings", "-n", "demo", "-o", "json"); out != "" {
		t.Errorf("delete -o json of a configmap, whose DELETE answers nothing: %q", out)
	}
}

// sameJSON reports whether two JSON documents hold the same values.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// kubectl's habits: get all lists a table of every kind the namespace
// has, each object named KIND/NAME; pods are instances; get apps says
// where the deployments are; a kubectl kind bcs-scheduler serves another
// way says what to type.
func TestGetAllAndKubectlHabits(t *testing.T) {
	s := newAPIServer(t)
	s.must(t, example(t, "process.json"), "apply", "-f", "-")
	s.must(t, example(t, "deployment.json"), "apply", "-f", "-")
	s.must(t, "kind: configmap\napiVersion: v4\nmetadata: {name: settings, namespace: demo}\ndatas: {a: {type: file, content: eA==}}\n", "apply", "-f", "-")

	all := regexp.MustCompile(`^NAME +KIND +STATE .*\napp/gamesvr +process +Deploying .*\n\n` +
		`NAME +KIND +STATE .*\ndeployment/fleet +deployment +Deploying .*\n\n` +
		`NAME +DATA +AGE\nconfigmap/settings +1 item +\S+\n$`)
	if out := s.must(t, "", "get", "all", "-n", "demo"); !all.MatchString(out) {
		t.Errorf("get all:\n%s", out)
	}
	if out := s.must(t, "", "get", "all", "-A"); !strings.Contains(out, "NAMESPACE   NAME               KIND") || !strings.Contains(out, "demo        deployment/fleet   deployment") {
		t.Errorf("get all -A:\n%s", out)
	}
	var lists map[string][]map[string]any
	if out := s.must(t, "", "get", "all", "-n", "demo", "-o", "json"); json.Unmarshal([]byte(out), &lists) != nil ||
		len(lists["apps"]) != 1 || len(lists["deployments"]) != 1 || len(lists["configmaps"]) != 1 || len(lists["secrets"]) != 0 {
		t.Errorf("get all -o json:\n%s", out)
	}
	r := s.bcsctl(t, "", "get", "all", "-n", "nowhere")
	if r.code != 0 || r.out != "" || r.err != "No resources found in nowhere namespace.\n" {
		t.Errorf("get all of an empty namespace: %+v", r)
	}

	r = s.bcsctl(t, "", "get", "apps", "-n", "demo")
	if r.code != 0 || !strings.HasPrefix(r.out, "NAME ") || strings.Contains(r.out, "fleet") ||
		r.err != "There are deployments too, listed apart: bcsctl get deployments -n demo (bcsctl get all -n demo lists every kind).\n" {
		t.Errorf("get apps where there is a deployment: %+v", r)
	}
	r = s.bcsctl(t, "", "get", "apps", "-A")
	if r.code != 0 || !strings.Contains(r.err, "bcsctl get deployments -A") {
		t.Errorf("get apps -A where there is a deployment: %+v", r)
	}

	// No scheduler made instances here (e2e's bcsctl test lists them).
	if pods, instances := s.bcsctl(t, "", "get", "pods", "-n", "demo"), s.bcsctl(t, "", "get", "instances", "-n", "demo"); pods != instances || pods.code != 0 {
		t.Errorf("get pods: %+v, want what get instances says: %+v", pods, instances)
	}
	for kind, says := range map[string]string{
		"events":     "bcsctl events (-w follows them)",
		"ns":         "bcsctl get all -A lists what each holds",
		"replicaset": "bcsctl rollout history deployment NAME",
	} {
		r := s.bcsctl(t, "", "get", kind)
		if r.code != 2 || !strings.Contains(r.err, says) {
			t.Errorf("get %s: %+v, want a hint saying %q", kind, r, says)
		}
	}
}

// lockedWriter is an output bcsctl writes while the test reads it.
type lockedWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *lockedWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// events -w follows from now, as kubectl's watch of a new resource
// version does: what happened before it started is not shown again.
// --since shows the events of the last while first (by the time each
// change was written), --all every one the store keeps. Each names its
// place in the store's history as EVENT, not as a revision.
func TestEventsFollowFromNowOrShowHistory(t *testing.T) {
	s := newAPIServer(t)
	s.must(t, example(t, "process.json"), "apply", "-f", "-")
	time.Sleep(500 * time.Millisecond)
	between := time.Now()
	time.Sleep(500 * time.Millisecond)
	s.must(t, example(t, "deployment.json"), "apply", "-f", "-")

	ctx, cancel := context.WithCancel(context.Background())
	var watched, watchErr lockedWriter
	done := make(chan int)
	go func() {
		done <- bcsctl.Main(ctx, []string{"events", "-w", "-n", "demo", "--type", "app,deployment"}, bcsctl.Env{
			Out: &watched, Err: &watchErr, Getenv: func(k string) string { return map[string]string{"BCS_SERVER": s.url}[k] },
		})
	}()
	header := "AGE      EVENT        TYPE          OBJECT                         MESSAGE\n"
	for deadline := time.Now().Add(10 * time.Second); watched.String() != header; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("events -w printed no header: %q %q", watched.String(), watchErr.String())
		}
	}
	s.must(t, "", "scale", "app", "gamesvr", "--replicas", "1", "-n", "demo")
	scaled := regexp.MustCompile(`(?m)^\S+ +\d+\.\d+ +app +gamesvr +revision 1, 1 instances: Deploying: waiting for the scheduler$`)
	for deadline := time.Now().Add(10 * time.Second); !scaled.MatchString(watched.String()); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("events -w did not print the scale: %q %q", watched.String(), watchErr.String())
		}
	}
	cancel()
	if code := <-done; code != 0 || strings.Count(watched.String(), "\n") != 2 {
		t.Errorf("events -w: exit %d, want 0 and the scale alone after the header:\n%s%s", code, watched.String(), watchErr.String())
	}

	created := regexp.MustCompile(`(?m)^\S+ +\d+\.\d+ +app +gamesvr +revision 1, 3 instances: Deploying: waiting for the scheduler$`)
	fleet := regexp.MustCompile(`(?m)^\S+ +\d+\.\d+ +deployment +fleet +revision 1, 4 instances`)
	since := time.Since(between).String()
	out := s.must(t, "", "events", "-n", "demo", "--since", since)
	if created.MatchString(out) || !fleet.MatchString(out) || !scaled.MatchString(out) {
		t.Errorf("events --since %s: want the deployment and the scale, not the process created before:\n%s", since, out)
	}
	out = s.must(t, "", "events", "-n", "demo", "--all")
	if !created.MatchString(out) || !fleet.MatchString(out) || !scaled.MatchString(out) {
		t.Errorf("events --all: want every event:\n%s", out)
	}
	r := s.bcsctl(t, "", "events", "--all", "--since", "1m")
	if r.code != 2 {
		t.Errorf("events --all --since: %+v, want a usage error", r)
	}
}

// instance allocate and release name the instance as the other instance
// commands do, send the note, and show the API's refusals.
func TestInstanceAllocateRelease(t *testing.T) {
	s := newAPIServer(t)
	s.must(t, example(t, "deployment.json"), "apply", "-f", "-")
	key, err := registry.TaskGroupKey("demo", "fleet", 2)
	if err != nil {
		t.Fatal(err)
	}
	g := registry.TaskGroup{ID: registry.TaskGroupID("demo", "fleet", "", 2, 1), Namespace: "demo", App: "fleet", Index: 2, Phase: "Running"}
	if _, err := store.CreateJSON(context.Background(), s.st, key, g); err != nil {
		t.Fatal(err)
	}
	if out := s.must(t, "", "instance", "allocate", "fleet/2", "-n", "demo", "--note", "match 7"); out != "instance demo/fleet/2 allocated\n" {
		t.Errorf("allocate: %q", out)
	}
	allocs, err := s.reg.Allocations(context.Background(), "demo", "fleet")
	if err != nil || len(allocs) != 1 || allocs[0].Instance != 2 || allocs[0].Note != "match 7" {
		t.Fatalf("allocations after allocate: %+v, %v; want instance 2 with its note", allocs, err)
	}
	if r := s.bcsctl(t, "", "instance", "allocate", "demo/fleet/1"); r.code == 0 || !strings.Contains(r.err, "not Running") {
		t.Errorf("allocating an instance not running: code %d, %q; want the API's conflict", r.code, r.err)
	}
	if out := s.must(t, "", "instance", "release", "demo/fleet/2"); out != "instance demo/fleet/2 released\n" {
		t.Errorf("release: %q", out)
	}
	if r := s.bcsctl(t, "", "instance", "release", "demo/fleet/2"); r.code == 0 || !strings.Contains(r.err, "not allocated") {
		t.Errorf("releasing again: code %d, %q; want not allocated", r.code, r.err)
	}
}
