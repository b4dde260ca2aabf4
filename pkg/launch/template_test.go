package launch_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/launch"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest/manifesttest"
	"github.com/bcs-mesos/bcs-mesos/pkg/offer"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// resolver holds the fixture configmap with every item inline.
func resolver() *manifesttest.Resolver {
	r := manifesttest.NewResolver()
	r.ConfigMaps[0].Datas["config_two"] = manifest.ConfigMapData{Type: manifest.ConfigDataFile, Content: "dHdv"}
	return r
}

func TestProcessTemplate(t *testing.T) {
	p := manifesttest.Process()
	stored, _ := json.Marshal(p)
	tmpl, err := launch.Compile(p, launch.Revision{Version: 4})
	if err != nil {
		t.Fatal(err)
	}
	// Seed 000: hostPort 8899 is fixed, 0 is allocated by the scheduler.
	if want := []offer.PortRequest{{Name: "http_port", HostPort: 8899}, {Name: "metric_port"}}; !reflect.DeepEqual(tmpl.Req.Ports, want) {
		t.Errorf("port requests = %+v, want %+v", tmpl.Req.Ports, want)
	}
	// limits.cpu "2", memory "500" and no requests: the limits place it.
	if tmpl.Req.Resources.CPUs != 2 || tmpl.Req.Resources.Mem != 500 || tmpl.Req.App != "ns-a/gamesvc" {
		t.Errorf("requirements = %+v", tmpl.Req)
	}
	if tmpl.Req.Constraint == nil || !reflect.DeepEqual(tmpl.Req.Labels, []string{"app:gamesvc"}) {
		t.Errorf("constraint %v labels %v", tmpl.Req.Constraint, tmpl.Req.Labels)
	}
	specFor := func(index int, metric uint32) *proto.TaskSpec {
		specs, err := tmpl.Specs(launch.Instance{
			Index: index, TaskGroupID: "tg", HostIP: "10.0.0.7",
			Ports:       []offer.AssignedPort{{Name: "http_port", Port: 8899}, {Name: "metric_port", Port: metric}},
			WorkBaseDir: "/data/work", RunBaseDir: "/data/run",
		}, resolver())
		if err != nil {
			t.Fatal(err)
		}
		return specs[0]
	}
	s0, s2 := specFor(0, 31001), specFor(2, 31555)
	if got := s2.Process.WorkPath; got != "/data/work/ns-a.gamesvc.2/gamesvc" {
		t.Errorf("workPath = %q", got)
	}
	if got := s2.Process.StartCmd; got != "./start.sh --address 10.0.0.7 --service-port 8899" {
		t.Errorf("startCmd = %q", got)
	}
	if got := s0.Process.StopCmd; got != "./stop.sh --pidfile /data/run/ns-a.gamesvc.0/pid/gamesvc.pid" {
		t.Errorf("stopCmd = %q", got)
	}
	if want := []proto.Port{{Name: "http_port", ContainerPort: 8899, HostPort: 8899, Protocol: "http"},
		{Name: "metric_port", ContainerPort: 31555, HostPort: 31555, Protocol: "tcp"}}; !reflect.DeepEqual(s2.Ports, want) {
		t.Errorf("ports = %+v", s2.Ports)
	}
	if len(s2.HealthChecks) != 1 || s2.HealthChecks[0].PortName != "metric_port" || s2.KillGracePeriodSeconds != 1 {
		t.Errorf("checks %+v grace %v", s2.HealthChecks, s2.KillGracePeriodSeconds)
	}
	// Expanding instance 2 after 0 must not have touched the manifest.
	if after, _ := json.Marshal(p); string(after) != string(stored) {
		t.Error("Specs changed the stored manifest")
	}
	if _, err := (&proto.TaskSpec{}).Encode(); err != nil {
		t.Fatal(err)
	}
}

func TestApplicationTemplate(t *testing.T) {
	app := manifesttest.Application()
	tmpl, err := launch.Compile(app, launch.Revision{Version: 1})
	if err != nil {
		t.Fatal(err)
	}
	// BRIDGE: hostPort 0 is allocated; requests 0.5 cpu / 512 MB place it.
	if want := []offer.PortRequest{{Name: "http-port"}}; !reflect.DeepEqual(tmpl.Req.Ports, want) {
		t.Errorf("port requests = %+v", tmpl.Req.Ports)
	}
	if tmpl.Req.Resources.CPUs != 0.5 || tmpl.Req.Resources.Mem != 512 {
		t.Errorf("resources = %+v", tmpl.Req.Resources)
	}
	id := &proto.Identity{UID: 20000, GID: 20000, Range: "20000-29999"}
	egress := &proto.Egress{Refused: []proto.EgressRule{{Name: "loopback", Networks: []string{"127.0.0.0/8"}}}, Allowed: []string{"10.1.0.0/16"}}
	specs, err := tmpl.Specs(launch.Instance{Index: 1, TaskGroupID: "tg-1", HostIP: "10.0.0.7",
		Ports: []offer.AssignedPort{{Name: "http-port", Port: 31234}}, Identity: id, Egress: egress}, resolver())
	if err != nil {
		t.Fatal(err)
	}
	s := specs[0]
	// Every task carries its namespace's identity; a secret's file is
	// read-only, whatever its item says.
	if s.Identity != id || len(s.Files) != 1 || !s.Files[0].ReadOnly {
		t.Errorf("identity %+v, files %+v", s.Identity, s.Files)
	}
	if s.Container == nil || s.Container.NetworkMode != "BRIDGE" || s.Ports[0].HostPort != 31234 || s.Ports[0].ContainerPort != 8080 {
		t.Fatalf("spec = %+v ports %+v", s.Container, s.Ports)
	}
	// The namespace's egress policy goes to the executor with every task.
	for _, spec := range specs {
		if spec.Egress != egress {
			t.Errorf("task %s carries egress %+v, want the instance's", spec.Name, spec.Egress)
		}
	}
	env := map[string]string{}
	for _, e := range s.Env {
		env[e.Name] = e.Value
	}
	var files []string
	for _, f := range s.Files {
		files = append(files, f.Path+"="+string(f.Content))
	}
	// ${bcs.ports.http-port} expands to the allocated host port, valueFrom
	// reads the limits, configmap items become env, secret items files.
	wantEnv := map[string]string{"http-port": "31234", "namespace": "ns-a", "limits.cpu": "2", "CONFIG_ONE": "config context"}
	for k, v := range wantEnv {
		if env[k] != v {
			t.Errorf("env %s = %q, want %q (all: %v)", k, env[k], v, env)
		}
	}
	if !reflect.DeepEqual(files, []string{"/data/secret.conf=secret"}) {
		t.Errorf("files = %v", files)
	}
}

// A container's cpuset (the original's flag) asks the executor to pin its
// cores; the scheduler reserves them (limits.cpu, requests unset).
func TestCpusetPinsTheContainer(t *testing.T) {
	for _, pin := range []bool{true, false} {
		app := manifesttest.Application()
		c := &app.Spec.Template.Spec.Containers[0]
		c.Cpuset, c.Resources.Requests.CPU = pin, ""
		tmpl, err := launch.Compile(app, launch.Revision{Version: 1})
		if err != nil {
			t.Fatal(err)
		}
		specs, err := tmpl.Specs(launch.Instance{Index: 0, TaskGroupID: "tg-0", HostIP: "10.0.0.7",
			Ports: []offer.AssignedPort{{Name: "http-port", Port: 31234}}}, resolver())
		if err != nil {
			t.Fatal(err)
		}
		if r := specs[0].Resources; r.PinCPUs != pin || r.CPUs != 2 || r.CPULimit != 2 || tmpl.Req.Resources.CPUs != 2 {
			t.Errorf("cpuset %v: resources %+v, reserved %g cpus; want pinCPUs %v, 2 cpus", pin, r, tmpl.Req.Resources.CPUs, pin)
		}
	}
}

func TestMissingConfigMapFailsTheInstance(t *testing.T) {
	tmpl, err := launch.Compile(manifesttest.Process(), launch.Revision{Version: 1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = tmpl.Specs(launch.Instance{Ports: make([]offer.AssignedPort, 2)}, &manifesttest.Resolver{})
	if err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("err = %v, want a missing configmap or secret", err)
	}
}

// REMOTE_HTTP and REMOTE_TCP checks run in the scheduler against
// the instance's host and port: a process's portName resolves to its host
// port on the agent.
func TestRemoteProbes(t *testing.T) {
	p := manifesttest.Process()
	proc := &p.Spec.Template.Spec.Processes[0]
	proc.HealthChecks = []manifest.HealthCheck{
		{Type: manifest.CheckRemoteHTTP, IntervalSeconds: 10, TimeoutSeconds: 2, ConsecutiveFailures: 3,
			HTTP: &manifest.HTTPCheck{PortName: "metric_port", Scheme: "http", Path: "/check", Headers: map[string]string{"Host": "game"}}},
		{Type: manifest.CheckRemoteTCP, IntervalSeconds: 5, TimeoutSeconds: 1, TCP: &manifest.TCPCheck{Port: 8899}},
		{Type: manifest.CheckTCP, TCP: &manifest.TCPCheck{PortName: "http_port"}},
	}
	tmpl, err := launch.Compile(p, launch.Revision{Version: 1})
	if err != nil {
		t.Fatal(err)
	}
	got := tmpl.RemoteProbes(launch.InstanceAddress{HostIP: "10.0.0.7", PodIP: "172.17.0.9",
		HostPorts: map[string]uint32{"http_port": 8899, "metric_port": 31007}})
	want := []launch.RemoteProbe{
		{Host: "10.0.0.7", Check: proto.HealthCheck{Type: "HTTP", IntervalSeconds: 10, TimeoutSeconds: 2, ConsecutiveFailures: 3, Port: 31007, PortName: "metric_port",
			Scheme: "http", Path: "/check", Headers: map[string]string{"Host": "game"}}},
		{Host: "10.0.0.7", Check: proto.HealthCheck{Type: "TCP", IntervalSeconds: 5, TimeoutSeconds: 1, Port: 8899}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("remote probes:\n got %+v\nwant %+v", got, want)
	}
}

// A remote check probes the address a client of the instance
// uses in its network mode — the pod's IP and container port in CNI and
// USER networks (not the agent, where another process may answer), the
// published host port on the agent in BRIDGE, the agent in HOST — and a
// NONE pod has no address to probe.
func TestRemoteProbesByNetwork(t *testing.T) {
	addr := launch.InstanceAddress{HostIP: "10.0.0.7", PodIP: "10.254.177.5", HostPorts: map[string]uint32{"http-port": 31005}}
	for _, tc := range []struct {
		name        string
		mode        manifest.NetworkMode
		networkType string
		check       manifest.TCPCheck
		want        string
	}{
		{"cni by name: the pod's container port", "cni-net", "cni", manifest.TCPCheck{PortName: "http-port"}, "10.254.177.5:8080"},
		{"cni by number: the pod's", "cni-net", "cni", manifest.TCPCheck{Port: 8081}, "10.254.177.5:8081"},
		{"user by name: the pod's container port", manifest.NetworkUser, "cnm", manifest.TCPCheck{PortName: "http-port"}, "10.254.177.5:8080"},
		{"bridge by name: the published host port", manifest.NetworkBridge, "cnm", manifest.TCPCheck{PortName: "http-port"}, "10.0.0.7:31005"},
		{"bridge by number: on the agent", manifest.NetworkBridge, "cnm", manifest.TCPCheck{Port: 31005}, "10.0.0.7:31005"},
		{"host by name: the agent's port", manifest.NetworkHost, "cnm", manifest.TCPCheck{PortName: "http-port"}, "10.0.0.7:31005"},
		{"none: no address", manifest.NetworkNone, "cnm", manifest.TCPCheck{Port: 8080}, ":8080"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := manifesttest.Application()
			a.Spec.Template.Spec.NetworkMode, a.Spec.Template.Spec.NetworkType = tc.mode, tc.networkType
			c := &a.Spec.Template.Spec.Containers[0]
			check := tc.check
			c.HealthChecks = []manifest.HealthCheck{{Type: manifest.CheckRemoteTCP, IntervalSeconds: 5, TimeoutSeconds: 1, TCP: &check}}
			tmpl, err := launch.Compile(a, launch.Revision{Version: 1})
			if err != nil {
				t.Fatal(err)
			}
			probes := tmpl.RemoteProbes(addr)
			if len(probes) != 1 || probes[0].Address() != tc.want {
				t.Errorf("probes %+v, want one of %s", probes, tc.want)
			}
		})
	}
}

// Instances are compared by their template, so that a version
// that only changes replicas, the restart policy or the strategy updates
// nothing, and a restart (a new generation) or a changed image does.
func TestTemplateHash(t *testing.T) {
	hash := func(obj manifest.Object, gen int) string {
		t.Helper()
		tmpl, err := launch.Compile(obj, launch.Revision{Version: 1, RestartGeneration: gen})
		if err != nil {
			t.Fatal(err)
		}
		return tmpl.Hash
	}
	base := hash(manifesttest.Deployment(), 0)
	same := []func(d *manifest.Deployment){
		func(d *manifest.Deployment) { d.Spec.Instance = 9 },
		func(d *manifest.Deployment) { d.RestartPolicy.MaxTimes = 7 },
		func(d *manifest.Deployment) { d.Spec.Strategy = nil },
		func(d *manifest.Deployment) { d.Metadata.Labels = map[string]string{"team": "b"} },
		// A dependency runs beside the instances, not in them.
		func(d *manifest.Deployment) {
			d.Spec.Template.Spec.Depends = []manifest.DependsRef{{Name: "logagent", Policy: manifest.DependsPerNode}}
		},
	}
	for i, change := range same {
		d := manifesttest.Deployment()
		change(d)
		if h := hash(d, 0); h != base {
			t.Errorf("change %d updates the instances: %s != %s", i, h, base)
		}
	}
	different := []func(d *manifest.Deployment){
		func(d *manifest.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "game:v2" },
		func(d *manifest.Deployment) { d.KillPolicy.GracePeriod = 30 },
		func(d *manifest.Deployment) { d.Constraint = manifesttest.Unique() },
	}
	for i, change := range different {
		d := manifesttest.Deployment()
		change(d)
		if hash(d, 0) == base {
			t.Errorf("change %d does not update the instances", i)
		}
	}
	if hash(manifesttest.Deployment(), 1) == base {
		t.Error("a restart generation does not update the instances")
	}
	// A deployment runs the application its template makes.
	w, _ := manifest.Workload(manifesttest.Deployment())
	if hash(w, 0) != base {
		t.Error("a deployment and its application differ")
	}
	// The references are the template's, with their namespace.
	d := manifesttest.Deployment()
	d.Spec.Template.Spec.Depends = []manifest.DependsRef{{Name: "logagent", Policy: manifest.DependsPerNamespace}}
	tmpl, err := launch.Compile(d, launch.Revision{Version: 1})
	if err != nil {
		t.Fatal(err)
	}
	if want := []manifest.DependsRef{{Name: "logagent", Namespace: manifesttest.Namespace, Policy: manifest.DependsPerNamespace}}; !reflect.DeepEqual(tmpl.Depends, want) {
		t.Errorf("Depends = %+v, want %+v", tmpl.Depends, want)
	}
}

// TestRemoteConfigMapItems: a configmap item of type http, https or ftp
// reaches the executor as a remote item (URL, credentials, and where it
// goes) for it to fetch at launch, in place of content (seed 001: the
// executor fetches remote items into its sandbox).
func TestRemoteConfigMapItems(t *testing.T) {
	p := manifesttest.Process()
	p.Spec.Template.Spec.Processes[0].ConfigMaps[0].Items = []manifest.ConfigMapItem{
		{Type: manifest.ItemFile, DataKey: "config_two", KeyOrPath: "conf/two.conf", ReadOnly: true, User: "game"},
		{Type: manifest.ItemEnv, DataKey: "myftp", KeyOrPath: "MY_FTP"},
		{Type: manifest.ItemEnv, DataKey: "config-one", KeyOrPath: "CONFIG_ONE"},
	}
	r := manifesttest.NewResolver()
	r.ConfigMaps[0].Datas["myftp"] = manifest.ConfigMapData{Type: manifest.ConfigDataFTP, Content: "ftp://files.example.com/a.txt",
		RemoteUser: "u", RemotePasswd: "pw"}
	tmpl, err := launch.Compile(p, launch.Revision{Version: 1})
	if err != nil {
		t.Fatal(err)
	}
	specs, err := tmpl.Specs(launch.Instance{Ports: make([]offer.AssignedPort, 2)}, r)
	if err != nil {
		t.Fatal(err)
	}
	want := []proto.RemoteItem{
		{Source: `configmap ns-a/template-configmap item "config_two"`, Type: "http", URL: "http://repo.example.com/a.txt",
			File: &proto.File{Path: "conf/two.conf", ReadOnly: true, User: "game"}},
		{Source: `configmap ns-a/template-configmap item "myftp"`, Type: "ftp", URL: "ftp://files.example.com/a.txt",
			User: "u", Password: "pw", Env: "MY_FTP"},
	}
	if got := specs[0].Remote; !reflect.DeepEqual(got, want) {
		t.Errorf("remote items:\n got %+v\nwant %+v", got, want)
	}
	if len(specs[0].Files) != 0 || !slices.Contains(specs[0].Env, proto.EnvVar{Name: "CONFIG_ONE", Value: "config context"}) {
		t.Errorf("files %+v env %+v: want only the inline item, in env", specs[0].Files, specs[0].Env)
	}
}
