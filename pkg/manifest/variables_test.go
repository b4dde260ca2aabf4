package manifest_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/field"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest/manifesttest"
)

func processInstance(index int) manifest.Instance {
	return manifest.Instance{
		Namespace: "ns-a", Name: "gamesvc", Index: index, HostIP: "10.0.0.7",
		Ports:       map[string]uint32{"http_port": 8899, "metric_port": uint32(31000 + index)},
		WorkBaseDir: "/data/bcs/work", RunBaseDir: "/data/bcs/run", SchedulerURL: "http://10.0.0.1:8080",
	}
}

func snapshot(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestExpandProcess follows seed 000's example: every variable resolves
// per instance.
func TestExpandProcess(t *testing.T) {
	spec := manifesttest.ProcessSpec()
	spec.RestartCmd = "./restart.sh ${namespace} ${processname} ${instanceid} ${hostip} ${ports.metric_port} ${work_base_dir} ${run_base_dir}"
	spec.URIs[0].Value = "${scheduler_url}/files/gamesvc.tgz"
	spec.HealthChecks = append(spec.HealthChecks, manifest.HealthCheck{
		Type: manifest.CheckRemoteHTTP,
		HTTP: &manifest.HTTPCheck{Port: 80, Path: "/${processname}/check", Headers: map[string]string{"Host": "${hostip}"}},
	})
	for _, index := range []int{0, 2} {
		got, err := manifest.ExpandProcess(spec, processInstance(index))
		if err != nil {
			t.Fatalf("ExpandProcess: %v", err)
		}
		id := map[int]string{0: "0", 2: "2"}[index]
		metric := map[int]string{0: "31000", 2: "31002"}[index]
		workPath := "/data/bcs/work/ns-a.gamesvc." + id + "/gamesvc"
		pidFile := "/data/bcs/run/ns-a.gamesvc." + id + "/pid/gamesvc.pid"
		checks := []struct {
			name      string
			got, want string
		}{
			{"workPath", got.WorkPath, workPath},
			{"pidFile", got.PidFile, pidFile},
			{"startCmd", got.StartCmd, "./start.sh --address 10.0.0.7 --service-port 8899"},
			{"stopCmd ${pidFile}", got.StopCmd, "./stop.sh --pidfile " + pidFile},
			{"reloadCmd", got.ReloadCmd, "./reload.sh --pidfile " + pidFile},
			{"restartCmd", got.RestartCmd, "./restart.sh ns-a gamesvc " + id + " 10.0.0.7 " + metric + " /data/bcs/work /data/bcs/run"},
			{"env ${ports.http_port}", got.Env[0].Value, "8899"},
			{"env ${workPath}", got.Env[1].Value, workPath + "/"},
			{"uris outputDir", got.URIs[0].OutputDir, "/data/bcs/work/ns-a.gamesvc." + id},
			{"uris value ${scheduler_url}", got.URIs[0].Value, "http://10.0.0.1:8080/files/gamesvc.tgz"},
			{"health check path", got.HealthChecks[1].HTTP.Path, "/gamesvc/check"},
			{"health check header", got.HealthChecks[1].HTTP.Headers["Host"], "10.0.0.7"},
			{"names are not variables", got.ProcName, "gamesvr"},
		}
		for _, c := range checks {
			if c.got != c.want {
				t.Errorf("instance %d: %s = %q, want %q", index, c.name, c.got, c.want)
			}
		}
	}
}

// TestExpandProcessLeavesTheStoredSpecAlone: the original leaked instance
// 0's values into the stored spec through a shared map; expansion must
// return a deep copy.
func TestExpandProcessLeavesTheStoredSpecAlone(t *testing.T) {
	p := manifesttest.Process()
	spec := &p.Spec.Template.Spec.Processes[0]
	spec.HealthChecks[0] = manifest.HealthCheck{
		Type: manifest.CheckRemoteHTTP, IntervalSeconds: 10, TimeoutSeconds: 5,
		HTTP: &manifest.HTTPCheck{Port: 80, Scheme: "http", Headers: map[string]string{"Host": "${hostip}"}},
	}
	before := snapshot(t, p)
	got0, err := manifest.ExpandProcess(*spec, processInstance(0))
	if err != nil {
		t.Fatal(err)
	}
	got1, err := manifest.ExpandProcess(*spec, processInstance(1))
	if err != nil {
		t.Fatal(err)
	}
	if after := snapshot(t, p); after != before {
		t.Fatalf("stored spec changed by expansion:\nbefore %s\nafter  %s", before, after)
	}
	// Writing through every map, slice and pointer of the copies must not
	// reach the stored spec or the other instance.
	got0.HealthChecks[0].HTTP.Headers["Host"] = "changed"
	got0.HealthChecks[0].HTTP.Port = 1
	got0.Env[0].Value = "changed"
	got0.Ports[0].HostPort = 1
	got0.URIs[0].Value = "changed"
	got0.Secrets[0].Items[0].KeyOrPath = "changed"
	got0.ConfigMaps[0].Items[0].KeyOrPath = "changed"
	if after := snapshot(t, p); after != before {
		t.Errorf("stored spec shares memory with an expanded copy:\nbefore %s\nafter  %s", before, after)
	}
	if got1.HealthChecks[0].HTTP.Headers["Host"] != "10.0.0.7" || got1.Env[0].Value != "8899" {
		t.Errorf("instance 1 shares memory with instance 0: %+v", got1)
	}
	copied := p.DeepCopy()
	copied.Metadata.Labels["app"] = "changed"
	copied.Constraint.IntersectionItems[0].UnionData[0].Name = "changed"
	copied.Spec.Template.Spec.Processes[0].Env[0].Value = "changed"
	if after := snapshot(t, p); after != before {
		t.Errorf("DeepCopy shares memory with the original")
	}
}

func TestExpandProcessErrors(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(s *manifest.ProcessSpec)
		inst   func(i *manifest.Instance)
		want   []string
	}{
		{"unknown variable", func(s *manifest.ProcessSpec) { s.StartCmd = "./start.sh --address ${hospip}" }, nil,
			[]string{`startCmd: unknown variable "${hospip}"` + processKnows}},
		{"port without a number", func(s *manifest.ProcessSpec) {}, func(i *manifest.Instance) { delete(i.Ports, "http_port") }, []string{
			`startCmd: unknown variable "${ports.http_port}": no port named "http_port"`,
			`env[0].value: unknown variable "${ports.http_port}": no port named "http_port"`,
		}},
		{"cycle", func(s *manifest.ProcessSpec) { s.WorkPath, s.PidFile = "/w/${pidFile}", "${workPath}/pid" }, nil,
			[]string{"workPath: variables refer to each other in a cycle: ${workPath} → ${pidFile} → ${workPath}"}},
		// Unbounded, ${pidFile}×1000 in workPath, ${workPath}×40 in each
		// command grew the scheduler by 1.1 GB.
		{"a field expanding past its bound", func(s *manifest.ProcessSpec) {
			s.PidFile, s.WorkPath = "/run/"+strings.Repeat("p", 100)+".pid", strings.Repeat("${pidFile}", 1000)
		}, nil, []string{"workPath: expands to more than 65536 bytes (variables referring to each other multiply)"}},
		{"the spec expanding past its bound", func(s *manifest.ProcessSpec) {
			s.WorkPath = "/w/" + strings.Repeat("x", 8000)
			many := strings.Repeat("${workPath} ", 6)
			s.StartCmd, s.StopCmd, s.ReloadCmd, s.RestartCmd = many, many, many, many
			for i := range 20 {
				s.Env = append(s.Env, manifest.EnvVar{Name: fmt.Sprintf("E%d", i), Value: many})
			}
		}, nil, []string{"env[19].value: the variables of the whole spec expand to more than 1048576 bytes"}},
		{"relative base directory", func(s *manifest.ProcessSpec) {}, func(i *manifest.Instance) { i.RunBaseDir = "run" },
			[]string{`pidFile: must be an absolute path once expanded, got "run/ns-a.gamesvc.0/pid/gamesvc.pid"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := manifesttest.ProcessSpec()
			tt.mutate(&spec)
			inst := processInstance(0)
			if tt.inst != nil {
				tt.inst(&inst)
			}
			_, err := manifest.ExpandProcess(spec, inst)
			var list field.ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("ExpandProcess error %v is not a field.ErrorList", err)
			}
			if !reflect.DeepEqual(list.Messages(), tt.want) {
				t.Errorf("errors:\n got %q\nwant %q", list.Messages(), tt.want)
			}
		})
	}
}

// TestExpandProcessMutualReference: seed 000 lets pidFile use ${workPath}
// and workPath use ${pidFile}, as long as they do not loop.
func TestExpandProcessMutualReference(t *testing.T) {
	tests := []struct {
		name                  string
		workPath, pidFile     string
		wantWork, wantPidFile string
	}{
		{"pidFile under workPath", "${work_base_dir}/${instanceid}", "${workPath}/run/app.pid", "/data/bcs/work/0", "/data/bcs/work/0/run/app.pid"},
		{"workPath beside pidFile", "${pidFile}.d", "${run_base_dir}/app.pid", "/data/bcs/run/app.pid.d", "/data/bcs/run/app.pid"},
		{"twice", "${pidFile}-${pidFile}", "/p", "/p-/p", "/p"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := manifesttest.ProcessSpec()
			spec.WorkPath, spec.PidFile = tt.workPath, tt.pidFile
			got, err := manifest.ExpandProcess(spec, processInstance(0))
			if err != nil {
				t.Fatal(err)
			}
			if got.WorkPath != tt.wantWork || got.PidFile != tt.wantPidFile {
				t.Errorf("workPath, pidFile = %q, %q; want %q, %q", got.WorkPath, got.PidFile, tt.wantWork, tt.wantPidFile)
			}
			if got.Env[1].Value != tt.wantWork+"/" {
				t.Errorf("env ${workPath}/ = %q, want %q", got.Env[1].Value, tt.wantWork+"/")
			}
		})
	}
}

// What the error naming an unknown variable lists: the known variables,
// so that a typo can be fixed from the message.
const (
	processKnows = "; a process knows ${namespace}, ${processname}, ${instanceid}, ${hostip}, ${ports.<name>}, " +
		"${work_base_dir}, ${run_base_dir}, ${scheduler_url}, ${workPath}, ${pidFile}"
	containerKnows = "; a container's env knows ${bcs.namespace}, ${bcs.appname}, ${bcs.instanceid}, ${bcs.hostip}, " +
		"${bcs.ports.<name>}, ${bcs.taskgroupid}, ${bcs.taskgroupname}, " +
		"and the container executor's ${HOST}, ${BCS_NODE_ADDR}, ${BCS_POD_ID}, ${BCS_CNI_NAME}, ${PORT_<name>}"
)

func TestExpandContainer(t *testing.T) {
	c := manifesttest.Container()
	c.Env = append(c.Env,
		manifest.ContainerEnv{Name: "all", Value: "${bcs.namespace}/${bcs.appname}/${bcs.instanceid}/${bcs.hostip}/${bcs.taskgroupid}/${bcs.taskgroupname}"},
		manifest.ContainerEnv{Name: "executor", Value: "$HOST"},
		manifest.ContainerEnv{Name: "executor-braced", Value: "${BCS_NODE_ADDR}:${PORT_http-port}"},
	)
	c.Args = []string{"${bcs.namespace}"}
	before := snapshot(t, c)
	inst := manifest.Instance{
		Namespace: "ns-a", Name: "app", Index: 3, HostIP: "10.0.0.8",
		Ports: map[string]uint32{"http-port": 31005}, TaskGroupID: "3.app.ns-a.cluster.1700000000", TaskGroupName: "3.app.ns-a",
	}
	got, err := manifest.ExpandContainer(c, inst)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ns-a", "31005", "", "ns-a/app/3/10.0.0.8/3.app.ns-a.cluster.1700000000/3.app.ns-a", "$HOST", "${BCS_NODE_ADDR}:${PORT_http-port}"}
	for i, w := range want {
		if got.Env[i].Value != w {
			t.Errorf("env[%d] = %q, want %q", i, got.Env[i].Value, w)
		}
	}
	if got.Args[0] != "${bcs.namespace}" {
		t.Errorf("args expanded: %q; only env values carry variables", got.Args[0])
	}
	got.Env[0].Value, got.Args[0] = "changed", "changed"
	got.Env[2].ValueFrom.ResourceFieldRef.Resource = "changed"
	if after := snapshot(t, c); after != before {
		t.Errorf("stored container changed:\nbefore %s\nafter  %s", before, after)
	}

	delete(inst.Ports, "http-port")
	_, err = manifest.ExpandContainer(c, inst)
	if err == nil || err.Error() != `env[1].value: unknown variable "${bcs.ports.http-port}": no port named "http-port"` {
		t.Errorf("missing port: err = %v", err)
	}
}
