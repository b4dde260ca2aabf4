package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/api"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest/manifesttest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// process returns a valid process manifest named name in namespace ns
// without configmap or secret references, changed by each of change.

// processKnows is what a 400 naming an unknown variable of a process
// lists: the variables it may use.
const processKnows = "; a process knows ${namespace}, ${processname}, ${instanceid}, ${hostip}, ${ports.<name>}, " +
	"${work_base_dir}, ${run_base_dir}, ${scheduler_url}, ${workPath}, ${pidFile}"

func process(name, ns string, change ...func(*manifest.Process)) *manifest.Process {
	p := manifesttest.Process()
	p.Metadata.Name, p.Metadata.Namespace = name, ns
	p.Spec.Template.Spec.Processes[0].Secrets = nil
	p.Spec.Template.Spec.Processes[0].ConfigMaps = nil
	for _, f := range change {
		f(p)
	}
	return p
}

// application returns a valid application manifest without references.
func application(name, ns string) *manifest.Application {
	a := manifesttest.Application()
	a.Metadata.Name, a.Metadata.Namespace = name, ns
	a.Spec.Template.Spec.Containers[0].Secrets = nil
	a.Spec.Template.Spec.Containers[0].ConfigMaps = nil
	return a
}

// miniProcess is a process manifest naming no namespace and no policies:
// every default applies.
const miniProcess = `{
	"apiVersion": "v4",
	"kind": "process",
	"metadata": {"name": "mini"},
	"spec": {"instance": 2, "template": {"spec": {"processes": [{
		"procName": "gamesvr",
		"workPath": "${work_base_dir}/${namespace}.${processname}.${instanceid}",
		"pidFile": "${workPath}/pid",
		"startCmd": "./start.sh",
		"ports": [{"name": "http_port", "hostPort": 0, "protocol": "HTTP"}],
		"uris": [{"value": "http://repo.example.com/a.tar.gz", "outputDir": "${workPath}"}],
		"resources": {"limits": {"cpu": "1", "memory": "100"}}
	}]}}}
}`

func createApp(t *testing.T, e *env, obj any) api.AppView {
	t.Helper()
	var v api.AppView
	e.expect(t, http.StatusCreated, "POST", "/v1/apps", obj, &v)
	return v
}

func getApp(t *testing.T, e *env, ns, name string) api.AppView {
	t.Helper()
	var v api.AppView
	e.expect(t, http.StatusOK, "GET", "/v1/apps/"+ns+"/"+name, nil, &v)
	return v
}

// "POST /v1/apps (kind application or process) → 201; 409 if it
// exists".
func TestCreateApp(t *testing.T) {
	e := newEnv(t)
	for _, obj := range []manifest.Object{process("gamesvc", "ns-a"), application("web", "ns-a")} {
		v := createApp(t, e, obj)
		meta, _ := manifest.MetaOf(obj)
		if v.Name != meta.Name || v.Namespace != "ns-a" || v.Kind != obj.Kind() || v.Version != 1 || v.Revision == 0 {
			t.Errorf("created %s: got name %q ns %q kind %q version %d revision %d", obj.Kind(), v.Name, v.Namespace, v.Kind, v.Version, v.Revision)
		}
		if v.Status.State != registry.AppDeploying || v.Status.Instances == nil || len(v.Status.Instances) != 0 {
			t.Errorf("created %s: status %+v, want Deploying with no instances", obj.Kind(), v.Status)
		}
		got := errorOf(t, e.call(t, "POST", "/v1/apps", obj), http.StatusConflict, "AlreadyExists")
		if !strings.Contains(got.Message, meta.Name) {
			t.Errorf("409 message %q does not name %q", got.Message, meta.Name)
		}
	}
	// The repeat did not replace the first version.
	if v := getApp(t, e, "ns-a", "gamesvc"); v.Version != 1 {
		t.Errorf("after the repeated POST version = %d, want 1", v.Version)
	}
}

// "An invalid manifest returns 400 with all problems, each as
// `field path: message`, and changes nothing."
func TestCreateAppInvalidReportsEveryProblemAndStoresNothing(t *testing.T) {
	e := newEnv(t)
	valid := string(mustJSON(t, process("gamesvc", "ns-a")))
	tests := []struct {
		name string
		body string
		// want are the exact details; contains are substrings the message
		// or a detail must hold instead, where wording is the parser's.
		want     []string
		contains []string
	}{
		{
			name: "unknown field and bad value together",
			body: strings.Replace(strings.Replace(valid, `"instance":3`, `"instance":-1`, 1),
				`"procName":"gamesvr"`, `"procName":"gamesvr","procNmae":"x"`, 1),
			want: []string{
				`spec.template.spec.processes[0].procNmae: unknown field`,
				`spec.instance: must be ≥ 0, got -1`,
			},
		},
		{
			name:     "broken JSON names the position",
			body:     "{\n  \"kind\": \"process\",\n  \"metadata\": {\"name\": \"x\"\n}",
			contains: []string{"line 4"},
		},
		{
			name: "MAXPER without a positive integer",
			body: strings.Replace(valid, `"operate":"UNIQUE"`, `"operate":"MAXPER","type":3,"text":{"value":"0"}`, 1),
			want: []string{"constraint.intersectionItem[0].unionData[0].text.value: MAXPER needs a positive integer, got \"0\""},
		},
		{
			name: "unknown variable",
			body: strings.Replace(valid, `--address ${hostip}`, `--address ${hostipp}`, 1),
			want: []string{`spec.template.spec.processes[0].startCmd: unknown variable "${hostipp}"` + processKnows},
		},
		{
			name: "two problems in one field are both reported",
			body: strings.Replace(valid, `--address ${hostip}`, `--address ${hostipp} ${ports.nope}`, 1),
			want: []string{
				`spec.template.spec.processes[0].startCmd: unknown variable "${hostipp}"` + processKnows,
				`spec.template.spec.processes[0].startCmd: unknown variable "${ports.nope}": no port named "nope"`,
			},
		},
		{
			name: "a field that fails to decode is not validated too",
			// procName stays empty, which validation alone calls "required".
			body: strings.Replace(valid, `"procName":"gamesvr"`, `"procName":5`, 1),
			want: []string{`spec.template.spec.processes[0].procName: want a string, got a number`},
		},
		{
			name: "kind deployment is not an application",
			body: string(mustJSON(t, manifesttest.Deployment())),
			want: []string{`kind: want application or process here, got "deployment"`},
		},
		{
			name:     "namespace that is no key segment",
			body:     strings.Replace(valid, `"namespace":"ns-a"`, `"namespace":"ns a"`, 1),
			contains: []string{"metadata.namespace"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.body == valid {
				t.Fatal("the test body did not change the valid manifest")
			}
			got := errorOf(t, e.call(t, "POST", "/v1/apps", tt.body), http.StatusBadRequest, "InvalidArgument")
			if tt.want != nil && !sameSet(got.Details, tt.want) {
				t.Errorf("details:\n got %q\nwant %q", got.Details, tt.want)
			}
			all := got.Message + "\n" + strings.Join(got.Details, "\n")
			for _, c := range tt.contains {
				if !strings.Contains(all, c) {
					t.Errorf("error %q does not mention %q", all, c)
				}
			}
			if keys := e.storedKeys(t); len(keys) != 0 {
				t.Errorf("a 400 stored %q", keys)
			}
		})
	}
	var list struct{ Apps []api.AppView }
	e.expect(t, http.StatusOK, "GET", "/v1/apps", nil, &list)
	if len(list.Apps) != 0 {
		t.Errorf("GET /v1/apps after only 400s lists %d apps", len(list.Apps))
	}
}

func sameSet(got, want []string) bool {
	g, w := slices.Clone(got), slices.Clone(want)
	slices.Sort(g)
	slices.Sort(w)
	return reflect.DeepEqual(g, w)
}

// "GET /v1/apps[?namespace=]".
func TestListApps(t *testing.T) {
	e := newEnv(t)
	createApp(t, e, process("b", "ns-a"))
	createApp(t, e, process("a", "ns-b"))
	createApp(t, e, process("a", "ns-a"))
	tests := []struct {
		query string
		want  []string
	}{
		{"", []string{"ns-a/a", "ns-a/b", "ns-b/a"}},
		{"?namespace=ns-a", []string{"ns-a/a", "ns-a/b"}},
		{"?namespace=ns-b", []string{"ns-b/a"}},
		{"?namespace=ns-c", []string{}},
	}
	for _, tt := range tests {
		var list struct {
			Apps []api.AppView `json:"apps"`
		}
		r := e.expect(t, http.StatusOK, "GET", "/v1/apps"+tt.query, nil, &list)
		got := []string{}
		for _, a := range list.Apps {
			got = append(got, a.Namespace+"/"+a.Name)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("GET /v1/apps%s = %q, want %q", tt.query, got, tt.want)
		}
		if len(tt.want) == 0 && !strings.Contains(string(r.body), `"apps": []`) {
			t.Errorf("empty list encodes as %s, want []", r.body)
		}
	}
}

// putTaskGroup writes a task group record straight into the store, as the
// scheduler will: one key per instance index.
func putTaskGroup(t *testing.T, e *env, tg registry.TaskGroup) {
	t.Helper()
	key, err := store.Key(store.KindTaskGroup, tg.Namespace, tg.App, strconv.Itoa(tg.Index))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.CreateJSON(context.Background(), e.store, key, tg); err != nil {
		t.Fatalf("CreateJSON %s: %v", key, err)
	}
}

// "GET /v1/apps/{ns}/{name} → spec, current version, and status
// (state, message, instances[] with id, taskGroupID, state, agent, host,
// ports (name → host port), healthy, restarts)"; defaults: namespace
// defaultGroup, killPolicy.gracePeriod 1, restartPolicy.policy OnFailure,
// startGracePeriod 1, pullPolicy IfNotPresent.
func TestGetAppShowsSpecWithDefaultsVersionAndStatus(t *testing.T) {
	e := newEnv(t)
	created := createApp(t, e, miniProcess)
	if created.Namespace != manifest.DefaultNamespace {
		t.Fatalf("namespace = %q, want %q", created.Namespace, manifest.DefaultNamespace)
	}
	healthy := true
	putTaskGroup(t, e, registry.TaskGroup{
		ID: "0.mini.defaultGroup.1700000000", Namespace: "defaultGroup", App: "mini", Index: 0, Version: 1,
		State: "TASK_RUNNING", AgentID: "agent-1", Host: "10.0.0.1", Ports: registry.HostPorts{{Name: "http_port", Port: 31000}},
		Healthy: &healthy, Restarts: 2, Previous: &registry.PreviousLaunch{ID: "0.mini.defaultGroup.1600000000", AgentID: "agent-2"},
	})
	putTaskGroup(t, e, registry.TaskGroup{
		ID: "1.mini.defaultGroup.1700000000", Namespace: "defaultGroup", App: "mini", Index: 1, Version: 1,
		State: "TASK_STAGING", Message: "pulling",
	})
	// A task group of another application with a common name prefix.
	putTaskGroup(t, e, registry.TaskGroup{ID: "0.minimal.x", Namespace: "defaultGroup", App: "minimal", State: "TASK_RUNNING"})

	got := getApp(t, e, "defaultGroup", "mini")
	if got.Version != 1 || got.Instances != 2 || got.Status.State != registry.AppDeploying || got.Status.Message == "" {
		t.Errorf("got version %d instances %d status %q %q, want 1, 2, Deploying with a message",
			got.Version, got.Instances, got.Status.State, got.Status.Message)
	}
	wantInstances := []api.InstanceView{
		{ID: 0, TaskGroupID: "0.mini.defaultGroup.1700000000", PreviousTaskGroupID: "0.mini.defaultGroup.1600000000", State: "TASK_RUNNING",
			Revision: 1, Agent: "agent-1", Host: "10.0.0.1", Ports: map[string]uint32{"http_port": 31000}, Healthy: &healthy, Restarts: 2},
		{ID: 1, TaskGroupID: "1.mini.defaultGroup.1700000000", State: "TASK_STAGING", Revision: 1, Message: "pulling"},
	}
	if !reflect.DeepEqual(got.Status.Instances, wantInstances) {
		t.Errorf("status.instances:\n got %+v\nwant %+v", got.Status.Instances, wantInstances)
	}
	var spec struct {
		Metadata      struct{ Namespace string }
		KillPolicy    struct{ GracePeriod int }
		RestartPolicy struct{ Policy string }
		Spec          struct {
			Template struct {
				Spec struct {
					Processes []struct {
						StartGracePeriod int
						URIs             []struct{ PullPolicy string } `json:"uris"`
					}
				}
			}
		}
	}
	if err := json.Unmarshal(got.Spec, &spec); err != nil {
		t.Fatalf("spec %s: %v", got.Spec, err)
	}
	p := spec.Spec.Template.Spec.Processes[0]
	if spec.Metadata.Namespace != "defaultGroup" || spec.KillPolicy.GracePeriod != 1 || spec.RestartPolicy.Policy != "OnFailure" ||
		p.StartGracePeriod != 1 || p.URIs[0].PullPolicy != "IfNotPresent" {
		t.Errorf("spec lacks its defaults: %s", got.Spec)
	}
	errorOf(t, e.call(t, "GET", "/v1/apps/defaultGroup/nothere", nil), http.StatusNotFound, "NotFound")
}

// "PUT /v1/apps/{ns}/{name} → new version"; writes use etcd
// revisions for optimistic concurrency.
func TestUpdateApp(t *testing.T) {
	e := newEnv(t)
	first := createApp(t, e, process("gamesvc", "ns-a"))

	var second api.AppView
	e.expect(t, http.StatusOK, "PUT", "/v1/apps/ns-a/gamesvc", process("gamesvc", "ns-a", func(p *manifest.Process) { p.Spec.Instance = 5 }), &second)
	if second.Version != 2 || second.Instances != 5 || second.Revision <= first.Revision || !second.CreatedAt.Equal(first.CreatedAt) {
		t.Errorf("after PUT: version %d instances %d revision %d (was %d) createdAt %v (was %v)",
			second.Version, second.Instances, second.Revision, first.Revision, second.CreatedAt, first.CreatedAt)
	}
	if got := getApp(t, e, "ns-a", "gamesvc"); got.Version != 2 || got.Revision != second.Revision {
		t.Errorf("GET after PUT: version %d revision %d, want 2 and %d", got.Version, got.Revision, second.Revision)
	}

	t.Run("name mismatch", func(t *testing.T) {
		got := errorOf(t, e.call(t, "PUT", "/v1/apps/ns-a/gamesvc", process("other", "ns-a")), http.StatusBadRequest, "InvalidArgument")
		if !slices.Contains(got.Details, `metadata.name: must match the path: want "gamesvc", got "other"`) {
			t.Errorf("details %q do not name metadata.name", got.Details)
		}
		got = errorOf(t, e.call(t, "PUT", "/v1/apps/ns-b/gamesvc", process("gamesvc", "ns-a")), http.StatusBadRequest, "InvalidArgument")
		if !slices.Contains(got.Details, `metadata.namespace: must match the path: want "ns-b", got "ns-a"`) {
			t.Errorf("details %q do not name metadata.namespace", got.Details)
		}
	})
	t.Run("stale If-Match", func(t *testing.T) {
		r := e.call(t, "PUT", "/v1/apps/ns-a/gamesvc", process("gamesvc", "ns-a"), "If-Match", fmt.Sprint(first.Revision))
		errorOf(t, r, http.StatusConflict, "Conflict")
		r = e.call(t, "PUT", "/v1/apps/ns-a/gamesvc", process("gamesvc", "ns-a"), "If-Match", `"`+fmt.Sprint(second.Revision)+`"`)
		if r.status != http.StatusOK {
			t.Errorf("PUT with the current revision = %d, want 200; %s", r.status, r.body)
		}
		errorOf(t, e.call(t, "PUT", "/v1/apps/ns-a/gamesvc", process("gamesvc", "ns-a"), "If-Match", "abc"), http.StatusBadRequest, "InvalidArgument")
	})
	t.Run("kind change", func(t *testing.T) {
		got := errorOf(t, e.call(t, "PUT", "/v1/apps/ns-a/gamesvc", application("gamesvc", "ns-a")), http.StatusBadRequest, "InvalidArgument")
		if !strings.Contains(got.Message, "process") || !strings.Contains(got.Message, "application") {
			t.Errorf("message %q does not name both kinds", got.Message)
		}
	})
	t.Run("missing app", func(t *testing.T) {
		errorOf(t, e.call(t, "PUT", "/v1/apps/ns-a/nothere", process("nothere", "ns-a")), http.StatusNotFound, "NotFound")
	})
	t.Run("invalid manifest", func(t *testing.T) {
		errorOf(t, e.call(t, "PUT", "/v1/apps/ns-a/gamesvc", process("gamesvc", "ns-a", func(p *manifest.Process) { p.Spec.Instance = -2 })),
			http.StatusBadRequest, "InvalidArgument")
	})
	// Only the two good PUTs made versions.
	if got := getApp(t, e, "ns-a", "gamesvc"); got.Version != 3 {
		t.Errorf("version after the failed PUTs = %d, want 3", got.Version)
	}
}

// A NONE network gives a pod no address, so a check that
// connects to it (HTTP, TCP, REMOTE_*) could only fail at launch: POST
// and PUT refuse it, naming the check and why, and change nothing.
func TestChecksOfAPodWithoutAddressRefused(t *testing.T) {
	e := newEnv(t)
	none := func(checks ...manifest.HealthCheck) *manifest.Application {
		a := application("web", "ns-a")
		a.Spec.Template.Spec.NetworkMode = manifest.NetworkNone
		if checks != nil {
			a.Spec.Template.Spec.Containers[0].HealthChecks = checks
		}
		return a
	}
	why := "connects to the pod, and networkMode NONE gives it no address to connect to: use a COMMAND check, or a network mode with an address"
	got := errorOf(t, e.call(t, "POST", "/v1/apps", none()), http.StatusBadRequest, "InvalidArgument")
	if want := []string{"spec.template.spec.containers[0].healthChecks[0]: type HTTP " + why}; !slices.Equal(got.Details, want) {
		t.Errorf("POST details %q, want %q", got.Details, want)
	}
	if keys := e.storedKeys(t); len(keys) != 0 {
		t.Errorf("a 400 stored %q", keys)
	}
	command := manifest.HealthCheck{Type: manifest.CheckCommand, IntervalSeconds: 5, TimeoutSeconds: 1, Command: &manifest.CommandCheck{Value: "true"}}
	first := createApp(t, e, none(command))
	remote := manifest.HealthCheck{Type: manifest.CheckRemoteTCP, IntervalSeconds: 5, TimeoutSeconds: 1, TCP: &manifest.TCPCheck{PortName: "http-port"}}
	got = errorOf(t, e.call(t, "PUT", "/v1/apps/ns-a/web", none(command, remote)), http.StatusBadRequest, "InvalidArgument")
	if want := []string{"spec.template.spec.containers[0].healthChecks[1]: type REMOTE_TCP " + why}; !slices.Equal(got.Details, want) {
		t.Errorf("PUT details %q, want %q", got.Details, want)
	}
	if v := getApp(t, e, "ns-a", "web"); v.Version != first.Version || v.Revision != first.Revision {
		t.Errorf("after the refused PUT: version %d revision %d, want %d %d", v.Version, v.Revision, first.Version, first.Revision)
	}
}

// "DELETE /v1/apps/{ns}/{name} → 202"; "Async operations return
// 202 and the result is read back with GET".
func TestDeleteApp(t *testing.T) {
	e := newEnv(t)
	createApp(t, e, process("idle", "ns-a"))
	createApp(t, e, process("busy", "ns-a"))
	putTaskGroup(t, e, registry.TaskGroup{ID: "0.busy.ns-a.1", Namespace: "ns-a", App: "busy", State: "TASK_RUNNING"})

	e.expect(t, http.StatusAccepted, "DELETE", "/v1/apps/ns-a/idle", nil, nil)
	errorOf(t, e.call(t, "GET", "/v1/apps/ns-a/idle", nil), http.StatusNotFound, "NotFound")
	errorOf(t, e.call(t, "GET", "/v1/apps/ns-a/idle/versions", nil), http.StatusNotFound, "NotFound")

	var v api.AppView
	e.expect(t, http.StatusAccepted, "DELETE", "/v1/apps/ns-a/busy", nil, &v)
	if v.Status.State != registry.AppDeleting || len(v.Status.Instances) != 1 {
		t.Errorf("DELETE answer: state %q instances %d, want Deleting and 1", v.Status.State, len(v.Status.Instances))
	}
	if got := getApp(t, e, "ns-a", "busy"); got.Status.State != registry.AppDeleting {
		t.Errorf("GET after DELETE: state %q, want Deleting", got.Status.State)
	}
	// A deleting application takes no new version and no scaling.
	errorOf(t, e.call(t, "PUT", "/v1/apps/ns-a/busy", process("busy", "ns-a")), http.StatusConflict, "Conflict")
	errorOf(t, e.call(t, "POST", "/v1/apps/ns-a/busy/scale", `{"instances":1}`), http.StatusConflict, "Conflict")
	errorOf(t, e.call(t, "DELETE", "/v1/apps/ns-a/nothere", nil), http.StatusNotFound, "NotFound")
}

// "POST /v1/apps/{ns}/{name}/scale {"instances":N} → 202".
func TestScaleApp(t *testing.T) {
	e := newEnv(t)
	createApp(t, e, process("gamesvc", "ns-a"))
	// want is the desired count after each case: unchanged by a 400.
	tests := []struct {
		name   string
		body   string
		status int
		detail string
		want   int
	}{
		{"scale up", `{"instances": 7}`, http.StatusAccepted, "", 7},
		{"scale to zero", `{"instances": 0}`, http.StatusAccepted, "", 0},
		{"negative", `{"instances": -1}`, http.StatusBadRequest, "instances: must be ≥ 0, got -1", 0},
		{"past the bound", `{"instances": 100001}`, http.StatusBadRequest, "instances: must be at most 100000, got 100001", 0},
		{"missing field", `{}`, http.StatusBadRequest, "instances: required", 0},
		{"unknown field", `{"instances": 2, "replicas": 3}`, http.StatusBadRequest, "replicas: unknown field", 0},
		{"wrong type", `{"instances": "2"}`, http.StatusBadRequest, "instances: want a number", 0},
		{"broken JSON", `{"instances": `, http.StatusBadRequest, "invalid JSON", 0},
		{"scale again", `{"instances": 4}`, http.StatusAccepted, "", 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.call(t, "POST", "/v1/apps/ns-a/gamesvc/scale", tt.body)
			if tt.status == http.StatusAccepted {
				var v api.AppView
				if r.status != tt.status || json.Unmarshal(r.body, &v) != nil {
					t.Fatalf("status %d body %s, want 202 with the application", r.status, r.body)
				}
				if v.Instances != tt.want {
					t.Errorf("answer instances = %d, want %d", v.Instances, tt.want)
				}
			} else {
				got := errorOf(t, r, tt.status, "InvalidArgument")
				if !strings.Contains(strings.Join(got.Details, "\n"), tt.detail) {
					t.Errorf("details %q do not hold %q", got.Details, tt.detail)
				}
			}
			if got := getApp(t, e, "ns-a", "gamesvc"); got.Instances != tt.want || got.Version != 1 {
				t.Errorf("GET: instances %d version %d, want %d and 1 (scaling is no new version)", got.Instances, got.Version, tt.want)
			}
		})
	}
	errorOf(t, e.call(t, "POST", "/v1/apps/ns-a/nothere/scale", `{"instances":1}`), http.StatusNotFound, "NotFound")
}

// "GET /v1/apps/{ns}/{name}/versions"; the history keeps
// registry.VersionsKept versions.
func TestAppVersions(t *testing.T) {
	e := newEnv(t)
	createApp(t, e, process("gamesvc", "ns-a"))
	type versions struct {
		Versions []registry.AppVersion `json:"versions"`
	}
	var got versions
	e.expect(t, http.StatusOK, "GET", "/v1/apps/ns-a/gamesvc/versions", nil, &got)
	if len(got.Versions) != 1 || got.Versions[0].Version != 1 {
		t.Fatalf("versions after create: %+v", got.Versions)
	}
	total := registry.VersionsKept + 3
	for i := 2; i <= total; i++ {
		e.expect(t, http.StatusOK, "PUT", "/v1/apps/ns-a/gamesvc", process("gamesvc", "ns-a", func(p *manifest.Process) { p.Spec.Instance = i }), nil)
		if i == 3 {
			e.expect(t, http.StatusOK, "GET", "/v1/apps/ns-a/gamesvc/versions", nil, &got)
			if len(got.Versions) != 3 {
				t.Errorf("versions after 2 PUTs: %d, want 3", len(got.Versions))
			}
		}
	}
	got = versions{}
	e.expect(t, http.StatusOK, "GET", "/v1/apps/ns-a/gamesvc/versions", nil, &got)
	if len(got.Versions) != registry.VersionsKept {
		t.Fatalf("versions after %d writes: %d, want %d", total, len(got.Versions), registry.VersionsKept)
	}
	for i, v := range got.Versions {
		wantVersion := uint64(total - registry.VersionsKept + 1 + i)
		var spec manifest.Process
		if err := json.Unmarshal(v.Spec, &spec); err != nil {
			t.Fatal(err)
		}
		if v.Version != wantVersion || spec.Spec.Instance != int(wantVersion) {
			t.Errorf("versions[%d] = version %d with instance %d, want %d", i, v.Version, spec.Spec.Instance, wantVersion)
		}
	}
	errorOf(t, e.call(t, "GET", "/v1/apps/ns-a/nothere/versions", nil), http.StatusNotFound, "NotFound")
}

// Writes use etcd revisions for optimistic concurrency: two PUTs
// with the same If-Match revision, at the same time: exactly one wins.
func TestConcurrentPutsWithSameRevision(t *testing.T) {
	e := newEnv(t)
	created := createApp(t, e, process("gamesvc", "ns-a"))
	statuses := make([]int, 2)
	var wg sync.WaitGroup
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := e.call(t, "PUT", "/v1/apps/ns-a/gamesvc", process("gamesvc", "ns-a", func(p *manifest.Process) { p.Spec.Instance = 10 + i }),
				"If-Match", fmt.Sprint(created.Revision))
			statuses[i] = r.status
		}()
	}
	wg.Wait()
	slices.Sort(statuses)
	if !reflect.DeepEqual(statuses, []int{http.StatusOK, http.StatusConflict}) {
		t.Errorf("statuses = %v, want one 200 and one 409", statuses)
	}
	if got := getApp(t, e, "ns-a", "gamesvc"); got.Version != 2 {
		t.Errorf("version = %d, want 2", got.Version)
	}
}

// Instance detail shows the executor's status data per task:
// a container's ID, IP, pid and exit code; a process's pid.
func TestInstanceShowsTasks(t *testing.T) {
	e := newEnv(t)
	createApp(t, e, miniProcess)
	started := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	exited, healthy := 137, true
	container := &registry.ContainerStatus{ID: "c0ffee", Name: "bcs-ns-a_web_0_1-web", Pid: 4242, Status: "running",
		IPAddress: "172.17.0.5", NetworkMode: "bridge", Hostname: "web-0", StartedAt: started}
	sidecar := &registry.ContainerStatus{ID: "beef", Name: "bcs-ns-a_web_0_1-sidecar", Status: "exited", ExitCode: &exited,
		StartedAt: started, FinishedAt: started.Add(time.Minute)}
	process := &registry.ProcessStatus{Pid: 777, ProcName: "gamesvr", StartedAt: started, WorkPath: "/data/bcs/work/mini.0",
		Ports: map[string]int{"http_port": 31000}}
	putTaskGroup(t, e, registry.TaskGroup{
		ID: "defaultGroup_mini_0_1", Namespace: "defaultGroup", App: "mini", Index: 0, Version: 1, State: "TASK_RUNNING",
		Tasks: []registry.TaskRecord{
			{ID: "defaultGroup_mini_0_1_0", Name: "web", State: "TASK_RUNNING", Healthy: &healthy, Container: container},
			{ID: "defaultGroup_mini_0_1_1", Name: "sidecar", State: "TASK_FAILED", Message: "exited 137", Container: sidecar},
			{ID: "defaultGroup_mini_0_1_2", Name: "gamesvr", State: "TASK_RUNNING", Process: process, CPUs: 1, Revision: 1},
		},
	})
	putTaskGroup(t, e, registry.TaskGroup{ID: "defaultGroup_mini_1_0", Namespace: "defaultGroup", App: "mini", Index: 1, State: "TASK_STAGING"})

	got := getApp(t, e, "defaultGroup", "mini").Status.Instances
	want := []api.TaskView{
		{Name: "web", ID: "defaultGroup_mini_0_1_0", State: "TASK_RUNNING", Healthy: &healthy, Container: container},
		{Name: "sidecar", ID: "defaultGroup_mini_0_1_1", State: "TASK_FAILED", Message: "exited 137", Container: sidecar},
		{Name: "gamesvr", ID: "defaultGroup_mini_0_1_2", State: "TASK_RUNNING", Process: process},
	}
	if len(got) != 2 || !reflect.DeepEqual(got[0].Tasks, want) || got[1].Tasks != nil {
		t.Errorf("tasks:\n got %+v\nwant %+v and none for the instance not launched", got, want)
	}
}

// A container's docker parameters, its cpuset flag and network
// mode USER are read at POST and PUT by the container executor's own
// parser (pkg/dockerparam): what the executor would refuse is a 400
// naming the field, never a TASK_FAILED later, and changes nothing.
func TestContainerParametersValidatedAtPostAndPut(t *testing.T) {
	e := newEnv(t)
	const C = "spec.template.spec.containers[0]"
	withParams := func(mode manifest.NetworkMode, params ...manifest.Parameter) *manifest.Application {
		a := application("gamesvr", "ns-a")
		a.Spec.Template.Spec.NetworkMode = mode
		a.Spec.Template.Spec.Containers[0].Parameters = params
		return a
	}
	bad := []struct {
		name string
		app  *manifest.Application
		want []string
	}{
		{"unsupported key", withParams(manifest.NetworkBridge, manifest.Parameter{Key: "ulimit", Value: "nofile=10"}, manifest.Parameter{Key: "privileged", Value: "true"}),
			[]string{C + `.parameters[1].key: docker parameter "privileged" is not supported (oom-kill-disable, ulimit, rm, shm-size, ip, net, memory-swap, memory-swappiness, cpu-shares, device-read-bps, device-write-bps, device-read-iops, device-write-iops, user)`}},
		{"bad values", withParams(manifest.NetworkBridge,
			manifest.Parameter{Key: "cpu-shares", Value: "512"}, manifest.Parameter{Key: "memory-swap", Value: "1q"},
			manifest.Parameter{Key: "device-read-bps", Value: "/dev/vda:10mb"}, manifest.Parameter{Key: "device-write-iops", Value: "/dev/vda"}),
			[]string{
				C + `.parameters[1].value: size "1q": want a number with an optional unit kb, mb or gb, or -1 for unlimited swap`,
				C + `.parameters[3].value: want <device path under /dev/>:<rate>, rate a whole number of operations per second; got "/dev/vda"`,
			}},
		{"USER without net", withParams(manifest.NetworkUser, manifest.Parameter{Key: "ip", Value: "10.1.0.3"}),
			[]string{C + ".parameters: network mode USER needs a net docker parameter"}},
		{"cpuset of a fraction of a core", func() *manifest.Application {
			a := application("gamesvr", "ns-a")
			c := &a.Spec.Template.Spec.Containers[0]
			c.Cpuset, c.Resources.Limits.CPU, c.Resources.Requests.CPU = true, "1.5", ""
			return a
		}(), []string{C + `.resources.limits.cpu: cpuset pins whole cores: want a whole number of cores, at least 1, got "1.5"`}},
	}
	for _, tt := range bad {
		t.Run("POST "+tt.name, func(t *testing.T) {
			got := errorOf(t, e.call(t, "POST", "/v1/apps", tt.app), http.StatusBadRequest, "InvalidArgument")
			if !sameSet(got.Details, tt.want) {
				t.Errorf("details:\n got %q\nwant %q", got.Details, tt.want)
			}
			if keys := e.storedKeys(t); len(keys) != 0 {
				t.Errorf("a 400 stored %q", keys)
			}
		})
	}

	good := withParams(manifest.NetworkUser,
		manifest.Parameter{Key: "net", Value: "overlay-a"}, manifest.Parameter{Key: "ip", Value: "10.1.0.3"},
		manifest.Parameter{Key: "cpu-shares", Value: "512"}, manifest.Parameter{Key: "memory-swap", Value: "2g"},
		manifest.Parameter{Key: "memory-swappiness", Value: "0"}, manifest.Parameter{Key: "device-read-bps", Value: "/dev/vda:10mb"},
		manifest.Parameter{Key: "device-write-bps", Value: "/dev/vda:5mb"}, manifest.Parameter{Key: "device-read-iops", Value: "/dev/vda:100"},
		manifest.Parameter{Key: "device-write-iops", Value: "/dev/vda:50"})
	c := &good.Spec.Template.Spec.Containers[0]
	c.Cpuset, c.Resources.Requests.CPU = true, ""
	created := createApp(t, e, good)
	for _, tt := range bad {
		t.Run("PUT "+tt.name, func(t *testing.T) {
			got := errorOf(t, e.call(t, "PUT", "/v1/apps/ns-a/gamesvr", tt.app), http.StatusBadRequest, "InvalidArgument")
			if !sameSet(got.Details, tt.want) {
				t.Errorf("details:\n got %q\nwant %q", got.Details, tt.want)
			}
		})
	}
	if got := getApp(t, e, "ns-a", "gamesvr"); got.Version != created.Version || got.Revision != created.Revision {
		t.Errorf("after the refused PUTs: version %d revision %d, want %d %d", got.Version, got.Revision, created.Version, created.Revision)
	}
}

// The console pages through an application's instances by ID
// (?limit=, ?after= the next of the page before; IDs compare as numbers,
// not as the store's keys do: 10 after 9; without a limit, all), and lists applications with
// their instances counted, not listed (?summary=true).
func TestInstancePagesAndCounts(t *testing.T) {
	e := newEnv(t)
	createApp(t, e, miniProcess)
	healthy, unhealthy := true, false
	for i := range 12 {
		g := registry.TaskGroup{ID: fmt.Sprintf("defaultGroup_mini_%d_1", i), Namespace: "defaultGroup", App: "mini", Index: i, State: "TASK_RUNNING",
			Ready: true, Healthy: &healthy}
		switch {
		case i == 3:
			g.Healthy, g.Ready = &unhealthy, false
		case i >= 10:
			g.State, g.Ready, g.Healthy = "", false, nil
			g.Pending = &registry.Pending{Agents: 3, Reasons: []registry.PendingReason{{Reason: "cpus", Count: 3}}}
		}
		putTaskGroup(t, e, g)
	}
	var ids []int
	next := ""
	for pages := 0; ; pages++ {
		var page struct {
			Instances []api.InstanceView `json:"instances"`
			Next      string             `json:"next"`
		}
		query := "?limit=5"
		if next != "" {
			query += "&after=" + next
		}
		e.expect(t, http.StatusOK, "GET", "/v1/apps/defaultGroup/mini/instances"+query, nil, &page)
		if len(page.Instances) > 5 || pages > 3 {
			t.Fatalf("page %d: %d instances, next %q", pages, len(page.Instances), page.Next)
		}
		for _, in := range page.Instances {
			ids = append(ids, in.ID)
		}
		if next = page.Next; next == "" {
			break
		}
	}
	if want := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}; !reflect.DeepEqual(ids, want) {
		t.Errorf("instances paged: %v, want %v", ids, want)
	}
	var page struct {
		Instances []api.InstanceView `json:"instances"`
		Next      *string            `json:"next"`
	}
	e.expect(t, http.StatusOK, "GET", "/v1/apps/defaultGroup/mini/instances?after=10", nil, &page)
	if len(page.Instances) != 1 || page.Instances[0].ID != 11 || page.Next != nil || page.Instances[0].Pending == nil {
		t.Errorf("after=10: %+v, want instance 11 with its pending verdict and no next", page)
	}
	var whole struct {
		Instances []api.InstanceView `json:"instances"`
		Next      *string            `json:"next"`
	}
	e.expect(t, http.StatusOK, "GET", "/v1/apps/defaultGroup/mini/instances", nil, &whole)
	if len(whole.Instances) != 12 || whole.Next != nil {
		t.Errorf("without a limit: %d instances, next %v; want all 12, like the lists", len(whole.Instances), whole.Next)
	}
	for _, bad := range []string{"?after=-1", "?after=x", "?limit=0", "?limit=1001", "?before=3"} {
		errorOf(t, e.call(t, "GET", "/v1/apps/defaultGroup/mini/instances"+bad, nil), http.StatusBadRequest, "InvalidArgument")
	}
	errorOf(t, e.call(t, "GET", "/v1/deployments/defaultGroup/mini/instances", nil), http.StatusNotFound, "NotFound")

	var list struct {
		Apps []api.AppView `json:"apps"`
	}
	r := e.expect(t, http.StatusOK, "GET", "/v1/apps?summary=true", nil, &list)
	want := api.InstanceCounts{Running: 10, Ready: 9, Unhealthy: 1, Pending: 2}
	if len(list.Apps) != 1 || list.Apps[0].Status.Counts == nil || *list.Apps[0].Status.Counts != want || strings.Contains(string(r.body), `"taskGroupID"`) {
		t.Errorf("GET /v1/apps?summary=true = %s, want the counts %+v and no instance", truncate(r.body), want)
	}
	full := getApp(t, e, "defaultGroup", "mini")
	if len(full.Status.Instances) != 12 || *full.Status.Counts != want {
		t.Errorf("GET without summary: %d instances, counts %+v", len(full.Status.Instances), full.Status.Counts)
	}
	var one api.AppView
	e.expect(t, http.StatusOK, "GET", "/v1/apps/defaultGroup/mini?summary=true", nil, &one)
	if one.Status.Instances != nil || *one.Status.Counts != want {
		t.Errorf("GET ?summary=true: %+v", one.Status)
	}
	errorOf(t, e.call(t, "GET", "/v1/apps?summary=yes", nil), http.StatusBadRequest, "InvalidArgument")
}
