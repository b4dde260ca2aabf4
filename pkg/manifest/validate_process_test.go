package manifest_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/constraint"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest/manifesttest"
)

// resolver holds the fixtures' configmap and secret in the fixture
// namespace and in the default one.
func resolver() *manifesttest.Resolver {
	r := manifesttest.NewResolver()
	cm, sec := manifesttest.ConfigMap(), manifesttest.Secret()
	cm.Metadata.Namespace, sec.Metadata.Namespace = manifest.DefaultNamespace, manifest.DefaultNamespace
	r.ConfigMaps = append(r.ConfigMaps, cm)
	r.Secrets = append(r.Secrets, sec)
	return r
}

func TestFixturesValidate(t *testing.T) {
	for _, obj := range []manifest.Object{
		manifesttest.Process(), manifesttest.Application(), manifesttest.Deployment(),
		manifesttest.ConfigMap(), manifesttest.Secret(), manifesttest.Service(), manifesttest.Command(), manifesttest.Depends(),
	} {
		if errs := obj.Validate(manifesttest.NewResolver()); len(errs) > 0 {
			t.Errorf("%s fixture: %q", obj.Kind(), errs.Messages())
		}
	}
}

// proc returns the first process of p.
func proc(p *manifest.Process) *manifest.ProcessSpec { return &p.Spec.Template.Spec.Processes[0] }

const P = "spec.template.spec.processes[0]"

type processCase struct {
	name   string
	mutate func(p *manifest.Process)
	want   []string
}

func runProcessCases(t *testing.T, tests []processCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := manifesttest.Process()
			tt.mutate(p)
			if got := messages(p.Validate(resolver())); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Validate:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

const nameRule = "want lowercase letters, digits and '-', starting with a letter and ending with a letter or digit, got "

func TestValidateMetadata(t *testing.T) {
	runProcessCases(t, []processCase{
		// seed 000: "name: lowercase letters and digits, not all digits, not starting with a digit"
		{"name required", func(p *manifest.Process) { p.Metadata.Name = "" }, []string{"metadata.name: required"}},
		{"name starting with a digit", func(p *manifest.Process) { p.Metadata.Name = "1game" }, []string{"metadata.name: " + nameRule + `"1game"`}},
		{"name all digits", func(p *manifest.Process) { p.Metadata.Name = "123" }, []string{"metadata.name: " + nameRule + `"123"`}},
		{"name with upper case", func(p *manifest.Process) { p.Metadata.Name = "gameSvc" }, []string{"metadata.name: " + nameRule + `"gameSvc"`}},
		{"name with '_'", func(p *manifest.Process) { p.Metadata.Name = "game_svc" }, []string{"metadata.name: " + nameRule + `"game_svc"`}},
		{"name ending with '-'", func(p *manifest.Process) { p.Metadata.Name = "game-" }, []string{"metadata.name: " + nameRule + `"game-"`}},
		{"name starting with '-'", func(p *manifest.Process) { p.Metadata.Name = "-game" }, []string{"metadata.name: " + nameRule + `"-game"`}},
		{"name with '-' inside, as the references write", func(p *manifest.Process) { p.Metadata.Name = "ri-test-rc-001" }, nil},
		{"name of 63 characters", func(p *manifest.Process) { p.Metadata.Name = strings.Repeat("a", 63) }, nil},
		{"name of 64 characters", func(p *manifest.Process) { p.Metadata.Name = strings.Repeat("a", 64) }, []string{"metadata.name: at most 63 characters, got 64"}},
		// seed 000: "namespace: same rule, default defaultGroup"
		{"namespace defaultGroup", func(p *manifest.Process) { p.Metadata.Namespace = manifest.DefaultNamespace }, nil},
		{"namespace with upper case", func(p *manifest.Process) { p.Metadata.Namespace = "Ns-a" }, []string{"metadata.namespace: " + nameRule + `"Ns-a"`}},
		{"namespace starting with a digit", func(p *manifest.Process) { p.Metadata.Namespace = "9ns" }, []string{"metadata.namespace: " + nameRule + `"9ns"`}},
		{"empty label key", func(p *manifest.Process) { p.Metadata.Labels[""] = "x" }, []string{"metadata.labels: empty label key"}},
	})
}

func TestValidatePolicies(t *testing.T) {
	runProcessCases(t, []processCase{
		// seed 000: "instance: number of pods"
		{"instance 0", func(p *manifest.Process) { p.Spec.Instance = 0 }, nil},
		{"instance negative", func(p *manifest.Process) { p.Spec.Instance = -1 }, []string{"spec.instance: must be ≥ 0, got -1"}},
		// seed 000: "policy: Never, Always, OnFailure"
		{"policy Never", func(p *manifest.Process) { p.RestartPolicy.Policy = manifest.RestartNever }, nil},
		{"policy Always", func(p *manifest.Process) { p.RestartPolicy.Policy = manifest.RestartAlways }, nil},
		{"policy unknown", func(p *manifest.Process) { p.RestartPolicy.Policy = "Sometimes" },
			[]string{`restartPolicy.policy: want one of Never, Always, OnFailure, got "Sometimes"`}},
		{"policy lower case", func(p *manifest.Process) { p.RestartPolicy.Policy = "never" },
			[]string{`restartPolicy.policy: want one of Never, Always, OnFailure, got "never"`}},
		{"policy empty", func(p *manifest.Process) { p.RestartPolicy.Policy = "" }, []string{"restartPolicy.policy: required"}},
		{"interval negative", func(p *manifest.Process) { p.RestartPolicy.Interval = -5 }, []string{"restartPolicy.interval: must be ≥ 0, got -5"}},
		{"backoff negative", func(p *manifest.Process) { p.RestartPolicy.Backoff = -1 }, []string{"restartPolicy.backoff: must be ≥ 0, got -1"}},
		{"maxtimes negative", func(p *manifest.Process) { p.RestartPolicy.MaxTimes = -1 }, []string{"restartPolicy.maxtimes: must be ≥ 0, got -1"}},
		{"interval backoff maxtimes given", func(p *manifest.Process) {
			p.RestartPolicy = manifest.RestartPolicy{Policy: "OnFailure", Interval: 5, Backoff: 10, MaxTimes: 10}
		}, nil},
		// seed 000: "gracePeriod: seconds before a forced kill"
		{"gracePeriod 0", func(p *manifest.Process) { p.KillPolicy.GracePeriod = 0 }, nil},
		{"gracePeriod negative", func(p *manifest.Process) { p.KillPolicy.GracePeriod = -1 }, []string{"killPolicy.gracePeriod: must be ≥ 0, got -1"}},
		// seed 000 "constraint", checked by pkg/constraint
		{"no constraint", func(p *manifest.Process) { p.Constraint = nil }, nil},
		{"bad constraint", func(p *manifest.Process) { p.Constraint.IntersectionItems[0].UnionData[0].Operate = "MAXPER" },
			[]string{"constraint.intersectionItem[0].unionData[0].type: MAXPER needs type 3 (text), got 0"}},
		{"empty constraint item", func(p *manifest.Process) {
			p.Constraint.IntersectionItems = append(p.Constraint.IntersectionItems, constraint.IntersectionItem{})
		},
			[]string{"constraint.intersectionItem[1].unionData: must hold at least one condition"}},
	})
}

func TestValidateProcessFields(t *testing.T) {
	runProcessCases(t, []processCase{
		{"no processes", func(p *manifest.Process) { p.Spec.Template.Spec.Processes = nil }, []string{"spec.template.spec.processes: required"}},
		// seed 000: procName, workPath, pidFile, startCmd
		{"procName required", func(p *manifest.Process) { proc(p).ProcName = "" }, []string{P + ".procName: required"}},
		{"workPath required", func(p *manifest.Process) { proc(p).WorkPath = "" }, []string{P + ".workPath: required"}},
		{"pidFile required", func(p *manifest.Process) { proc(p).PidFile = "" }, []string{P + ".pidFile: required"}},
		{"startCmd required", func(p *manifest.Process) { proc(p).StartCmd = "" }, []string{P + ".startCmd: required"}},
		{"startCmd blank", func(p *manifest.Process) { proc(p).StartCmd = "  " }, []string{P + ".startCmd: required"}},
		{"stop, reload and restart commands optional", func(p *manifest.Process) { proc(p).StopCmd, proc(p).ReloadCmd, proc(p).RestartCmd = "", "", "" }, nil},
		{"pidFile relative", func(p *manifest.Process) { proc(p).PidFile = "pid/gamesvc.pid" },
			[]string{P + `.pidFile: must be an absolute path once expanded, got "pid/gamesvc.pid"`}},
		{"pidFile relative once expanded", func(p *manifest.Process) { proc(p).PidFile = "${processname}.pid" },
			[]string{P + `.pidFile: must be an absolute path once expanded, got "gamesvc.pid"`}},
		{"pidFile absolute through ${workPath}", func(p *manifest.Process) { proc(p).PidFile = "${workPath}/gamesvc.pid" }, nil},
		{"workPath through ${pidFile}", func(p *manifest.Process) { proc(p).WorkPath = "${pidFile}.d" }, nil},
		// seed 000: "startGracePeriod, seconds"
		{"startGracePeriod negative", func(p *manifest.Process) { proc(p).StartGracePeriod = -1 }, []string{P + ".startGracePeriod: must be ≥ 0, got -1"}},
		// seed 000 "uris"
		{"uri value required", func(p *manifest.Process) { proc(p).URIs[0].Value = "" }, []string{P + ".uris[0].value: required"}},
		{"uri https", func(p *manifest.Process) { proc(p).URIs[0].Value = "https://repo/a.tgz" }, nil},
		{"uri file", func(p *manifest.Process) { proc(p).URIs[0].Value = "file:///data/a.tgz" }, nil},
		{"uri ftp", func(p *manifest.Process) { proc(p).URIs[0].Value = "ftp://repo/a.tgz" },
			[]string{P + `.uris[0].value: want an http://, https:// or file:// address, got "ftp://repo/a.tgz"`}},
		{"uri from the scheduler", func(p *manifest.Process) { proc(p).URIs[0].Value = "${scheduler_url}/files/a.tgz" }, nil},
		{"uri scheme checked once expanded", func(p *manifest.Process) { proc(p).URIs[0].Value = "${work_base_dir}/a.tgz" },
			[]string{P + `.uris[0].value: want an http://, https:// or file:// address, got "/work_base_dir/a.tgz"`}},
		{"uri with an unknown variable reported once", func(p *manifest.Process) { proc(p).URIs[0].Value = "${scheduler}/a.tgz" },
			[]string{P + `.uris[0].value: unknown variable "${scheduler}"` + processKnows}},
		{"uri bare path", func(p *manifest.Process) { proc(p).URIs[0].Value = "/prod/a.tgz" },
			[]string{P + `.uris[0].value: want an http://, https:// or file:// address, got "/prod/a.tgz"`}},
		{"uri pullPolicy Always", func(p *manifest.Process) { proc(p).URIs[0].PullPolicy = manifest.PullAlways }, nil},
		{"uri pullPolicy unknown", func(p *manifest.Process) { proc(p).URIs[0].PullPolicy = "Never" },
			[]string{P + `.uris[0].pullPolicy: want one of Always, IfNotPresent, got "Never"`}},
		{"uri outputDir relative", func(p *manifest.Process) { proc(p).URIs[0].OutputDir = "pkg" },
			[]string{P + `.uris[0].outputDir: must be an absolute path once expanded, got "pkg"`}},
		{"uri outputDir optional", func(p *manifest.Process) { proc(p).URIs[0].OutputDir = "" }, nil},
		{"env name required", func(p *manifest.Process) { proc(p).Env[0].Name = "" }, []string{P + ".env[0].name: required"}},
		// seed 000 "resources": cpu may be fractional, -1 is unlimited
		{"cpu fraction", func(p *manifest.Process) { proc(p).Resources.Limits.CPU = "0.5" }, nil},
		{"cpu unlimited", func(p *manifest.Process) { proc(p).Resources.Limits.CPU = "-1" }, nil},
		{"memory unlimited", func(p *manifest.Process) { proc(p).Resources.Limits.Memory = "-1" }, nil},
		{"cpu negative", func(p *manifest.Process) { proc(p).Resources.Limits.CPU = "-2" },
			[]string{P + `.resources.limits.cpu: must be ≥ 0, or -1 for unlimited, got "-2"`}},
		{"memory not a number", func(p *manifest.Process) { proc(p).Resources.Limits.Memory = "500Mi" },
			[]string{P + `.resources.limits.memory: want a decimal number such as "2" or "0.5", or "-1" for unlimited, got "500Mi"`}},
		{"requests checked too", func(p *manifest.Process) { proc(p).Resources.Requests.CPU = "0.1234" },
			[]string{P + `.resources.requests.cpu: at most 3 decimal places, got "0.1234"`}},
	})
}

func TestValidateProcessPorts(t *testing.T) {
	second := func(p *manifest.Process, port manifest.ProcessPort) {
		extra := manifesttest.ProcessSpec()
		extra.Ports = []manifest.ProcessPort{port}
		extra.Env, extra.StartCmd = nil, "./start.sh"
		extra.HealthChecks = nil
		p.Spec.Template.Spec.Processes = append(p.Spec.Template.Spec.Processes, extra)
	}
	runProcessCases(t, []processCase{
		// seed 000 "ports: name: unique, required"
		{"name required", func(p *manifest.Process) { proc(p).Ports[1].Name = "" }, []string{
			P + ".ports[1].name: required",
			P + `.healthChecks[0].tcp.portName: no port named "metric_port"`,
		}},
		{"name duplicate", func(p *manifest.Process) { proc(p).Ports[1].Name = "http_port" }, []string{
			P + `.ports[1].name: duplicate port name "http_port" (also spec.template.spec.processes[0].ports[0])`,
			P + `.healthChecks[0].tcp.portName: no port named "metric_port"`,
		}},
		{"name duplicate across the pod's processes", func(p *manifest.Process) { second(p, manifest.ProcessPort{Name: "http_port", Protocol: "tcp"}) },
			[]string{`spec.template.spec.processes[1].ports[0].name: duplicate port name "http_port" (also spec.template.spec.processes[0].ports[0])`}},
		{"name with a space", func(p *manifest.Process) { proc(p).Ports[0].Name = "http port" }, []string{
			P + `.ports[0].name: want letters, digits, '_' and '-', got "http port"`,
			P + `.startCmd: unknown variable "${ports.http_port}": no port named "http_port"`,
			P + `.env[0].value: unknown variable "${ports.http_port}": no port named "http_port"`,
		}},
		// seed 000 "protocol: http, tcp"
		{"protocol lower case", func(p *manifest.Process) { proc(p).Ports[0].Protocol = "tcp" }, nil},
		{"protocol udp", func(p *manifest.Process) { proc(p).Ports[0].Protocol = "UDP" }, nil},
		{"protocol unknown", func(p *manifest.Process) { proc(p).Ports[0].Protocol = "SCTP" }, []string{P + `.ports[0].protocol: want http, tcp or udp, got "SCTP"`}},
		{"protocol required", func(p *manifest.Process) { proc(p).Ports[0].Protocol = "" }, []string{P + ".ports[0].protocol: required"}},
		// seed 000: "port 0: the scheduler picks one in 31000-32000"
		{"two random ports", func(p *manifest.Process) { proc(p).Ports[0].HostPort = 0 }, nil},
		{"hostPort too large", func(p *manifest.Process) { proc(p).Ports[0].HostPort = 65536 },
			[]string{P + ".ports[0].hostPort: must be between 0 (random) and 65535, got 65536"}},
		{"hostPort negative", func(p *manifest.Process) { proc(p).Ports[0].HostPort = -1 },
			[]string{P + ".ports[0].hostPort: must be between 0 (random) and 65535, got -1"}},
		{"hostPort duplicate", func(p *manifest.Process) {
			second(p, manifest.ProcessPort{Name: "admin", HostPort: 8899, Protocol: "tcp"})
		},
			[]string{`spec.template.spec.processes[1].ports[0].hostPort: duplicate hostPort 8899 (also spec.template.spec.processes[0].ports[0])`}},
	})
}

// check returns the first health check of p's first process.
func check(p *manifest.Process) *manifest.HealthCheck { return &proc(p).HealthChecks[0] }

func addCheck(p *manifest.Process, h manifest.HealthCheck) {
	h.IntervalSeconds, h.TimeoutSeconds = 10, 5
	proc(p).HealthChecks = append(proc(p).HealthChecks, h)
}

func TestValidateHealthChecks(t *testing.T) {
	const H = P + ".healthChecks"
	remoteHTTP := manifest.HealthCheck{Type: manifest.CheckRemoteHTTP, HTTP: &manifest.HTTPCheck{Port: 80, Scheme: "http"}}
	remoteTCP := manifest.HealthCheck{Type: manifest.CheckRemoteTCP, TCP: &manifest.TCPCheck{PortName: "http_port"}}
	runProcessCases(t, []processCase{
		// seed 000: "type: HTTP, TCP, COMMAND, REMOTE_TCP, REMOTE_HTTP"
		{"type required", func(p *manifest.Process) { check(p).Type = "" }, []string{H + "[0].type: required"}},
		{"type unknown", func(p *manifest.Process) { check(p).Type = "UDP" },
			[]string{H + `[0].type: want one of HTTP, TCP, COMMAND, REMOTE_HTTP, REMOTE_TCP, got "UDP"`}},
		// seed 000: "at most one of HTTP, TCP and COMMAND; REMOTE_HTTP and REMOTE_TCP may be combined; at most three"
		{"local check with both remote checks", func(p *manifest.Process) { addCheck(p, remoteHTTP); addCheck(p, remoteTCP) }, nil},
		{"two local checks", func(p *manifest.Process) {
			addCheck(p, manifest.HealthCheck{Type: manifest.CheckCommand, Command: &manifest.CommandCheck{Value: "./check.sh"}})
		}, []string{H + "[1].type: at most one of HTTP, TCP and COMMAND, and healthChecks[0] is TCP"}},
		{"the same remote type twice", func(p *manifest.Process) { addCheck(p, remoteTCP); addCheck(p, remoteTCP) },
			[]string{H + "[2].type: duplicate type REMOTE_TCP (also healthChecks[1])"}},
		{"four checks", func(p *manifest.Process) { addCheck(p, remoteHTTP); addCheck(p, remoteTCP); addCheck(p, remoteHTTP) }, []string{
			H + ": at most 3 health checks, got 4",
			H + "[3].type: duplicate type REMOTE_HTTP (also healthChecks[1])",
		}},
		// seed 000: "timeoutSeconds must be less than intervalSeconds"
		{"timeout equal to interval", func(p *manifest.Process) { check(p).TimeoutSeconds = 10 },
			[]string{H + "[0].timeoutSeconds: must be less than intervalSeconds (10), got 10"}},
		{"timeout above interval", func(p *manifest.Process) { check(p).TimeoutSeconds = 20 },
			[]string{H + "[0].timeoutSeconds: must be less than intervalSeconds (10), got 20"}},
		{"interval 0", func(p *manifest.Process) { check(p).IntervalSeconds = 0 }, []string{H + "[0].intervalSeconds: must be ≥ 1, got 0"}},
		{"timeout 0", func(p *manifest.Process) { check(p).TimeoutSeconds = 0 }, []string{H + "[0].timeoutSeconds: must be ≥ 1, got 0"}},
		{"delaySeconds negative", func(p *manifest.Process) { check(p).DelaySeconds = -1 }, []string{H + "[0].delaySeconds: must be ≥ 0, got -1"}},
		{"gracePeriodSeconds negative", func(p *manifest.Process) { check(p).GracePeriodSeconds = -1 }, []string{H + "[0].gracePeriodSeconds: must be ≥ 0, got -1"}},
		// seed 000: "consecutiveFailures 0: never killed"
		{"consecutiveFailures 0", func(p *manifest.Process) { check(p).ConsecutiveFailures = 0 }, nil},
		{"consecutiveFailures negative", func(p *manifest.Process) { check(p).ConsecutiveFailures = -1 }, []string{H + "[0].consecutiveFailures: must be ≥ 0, got -1"}},
		// seed 000: "tcp: valid for TCP and REMOTE_TCP"
		{"TCP without tcp", func(p *manifest.Process) { check(p).TCP = nil }, []string{H + "[0].tcp: required for type TCP"}},
		// seed 000: "port > 0 is used; otherwise portName names a port of ports"
		{"port and portName both unset", func(p *manifest.Process) { check(p).TCP.PortName = "" }, []string{H + "[0].tcp.portName: required when port is not > 0"}},
		{"portName undeclared", func(p *manifest.Process) { check(p).TCP.PortName = "test-tcp" }, []string{H + `[0].tcp.portName: no port named "test-tcp"`}},
		{"port > 0 ignores portName", func(p *manifest.Process) { check(p).TCP = &manifest.TCPCheck{Port: 8090, PortName: "test-tcp"} }, nil},
		{"port too large", func(p *manifest.Process) { check(p).TCP.Port = 70000 }, []string{H + "[0].tcp.port: must be at most 65535, got 70000"}},
		{"negative port uses portName", func(p *manifest.Process) { check(p).TCP.Port = -1 }, nil},
		// seed 000: "http: valid for HTTP and REMOTE_HTTP; scheme http or https"
		{"HTTP without http", func(p *manifest.Process) {
			*check(p) = manifest.HealthCheck{Type: manifest.CheckHTTP, IntervalSeconds: 10, TimeoutSeconds: 5}
		},
			[]string{H + "[0].http: required for type HTTP"}},
		{"HTTP https", func(p *manifest.Process) {
			check(p).Type, check(p).HTTP = manifest.CheckHTTP, &manifest.HTTPCheck{PortName: "http_port", Scheme: "https", Path: "/check"}
		}, nil},
		{"HTTP scheme unknown", func(p *manifest.Process) {
			check(p).Type, check(p).HTTP = manifest.CheckHTTP, &manifest.HTTPCheck{PortName: "http_port", Scheme: "ftp"}
		}, []string{H + `[0].http.scheme: want http or https, got "ftp"`}},
		{"HTTP port via portName undeclared", func(p *manifest.Process) {
			check(p).Type, check(p).HTTP = manifest.CheckHTTP, &manifest.HTTPCheck{PortName: "test-http", Scheme: "http"}
		}, []string{H + `[0].http.portName: no port named "test-http"`}},
		// seed 000 says "headers: only REMOTE_HTTP for now", and the
		// original's process.json gives a check headers whatever its type:
		// the executor's HTTP probe sends them.
		{"headers on HTTP", func(p *manifest.Process) {
			check(p).Type, check(p).HTTP = manifest.CheckHTTP, &manifest.HTTPCheck{Port: 80, Scheme: "http", Headers: map[string]string{"Host": "a"}}
		}, nil},
		{"headers on REMOTE_HTTP", func(p *manifest.Process) {
			check(p).Type, check(p).HTTP = manifest.CheckRemoteHTTP, &manifest.HTTPCheck{Port: 80, Scheme: "http", Headers: map[string]string{"Host": "a"}}
		}, nil},
		{"REMOTE_TCP without tcp", func(p *manifest.Process) { check(p).Type, check(p).TCP = manifest.CheckRemoteTCP, nil },
			[]string{H + "[0].tcp: required for type REMOTE_TCP"}},
		// seed 000: "command: valid for COMMAND"
		{"COMMAND", func(p *manifest.Process) {
			check(p).Type, check(p).Command = manifest.CheckCommand, &manifest.CommandCheck{Value: "./check.sh"}
		}, nil},
		{"COMMAND without command", func(p *manifest.Process) { check(p).Type = manifest.CheckCommand },
			[]string{H + "[0].command: required for type COMMAND"}},
		{"COMMAND with an empty command", func(p *manifest.Process) {
			check(p).Type, check(p).Command = manifest.CheckCommand, &manifest.CommandCheck{}
		},
			[]string{H + "[0].command.value: required"}},
	})
}

func TestValidateReferences(t *testing.T) {
	const S, C = P + ".secrets[0]", P + ".configmaps[0]"
	runProcessCases(t, []processCase{
		{"secretName required", func(p *manifest.Process) { proc(p).Secrets[0].SecretName = "" }, []string{S + ".secretName: required"}},
		{"secret items required", func(p *manifest.Process) { proc(p).Secrets[0].Items = nil }, []string{S + ".items: must hold at least one item"}},
		// seed 000: "items[x].type: env or file"
		{"item type required", func(p *manifest.Process) { proc(p).Secrets[0].Items[0].Type = "" }, []string{S + ".items[0].type: required"}},
		{"item type unknown", func(p *manifest.Process) { proc(p).Secrets[0].Items[0].Type = "volume" },
			[]string{S + `.items[0].type: want one of env, file, got "volume"`}},
		{"item dataKey required", func(p *manifest.Process) { proc(p).Secrets[0].Items[0].DataKey = "" }, []string{S + ".items[0].dataKey: required"}},
		// seed 000: "env: keyOrPath is the environment variable"
		{"env item without a name", func(p *manifest.Process) { proc(p).Secrets[0].Items[0].KeyOrPath = "" },
			[]string{S + ".items[0].keyOrPath: required: the environment variable to set"}},
		{"env item with a bad name", func(p *manifest.Process) { proc(p).Secrets[0].Items[0].KeyOrPath = "1 BAD" },
			[]string{S + `.items[0].keyOrPath: want an environment variable name, got "1 BAD"`}},
		// seed 000: "file: keyOrPath is the file's path in the container"
		{"file item relative", func(p *manifest.Process) { proc(p).ConfigMaps[0].Items[0].KeyOrPath = "conf/one.conf" },
			[]string{C + `.items[0].keyOrPath: must lie inside the instance's own directories, ` + instanceDirs + `, got "conf/one.conf"`}},
		{"file item without a path", func(p *manifest.Process) { proc(p).ConfigMaps[0].Items[0].KeyOrPath = "" },
			[]string{C + ".items[0].keyOrPath: required: the file to write"}},
		{"configmap name required", func(p *manifest.Process) { proc(p).ConfigMaps[0].Name = "" }, []string{C + ".name: required"}},
		// references resolve
		{"secret not found", func(p *manifest.Process) { proc(p).Secrets[0].SecretName = "other" },
			[]string{S + `.secretName: secret "other" not found in namespace "ns-a"`}},
		{"secret item not found", func(p *manifest.Process) { proc(p).Secrets[0].Items[0].DataKey = "xyz" },
			[]string{S + `.items[0].dataKey: secret "my-secret" has no item "xyz"`}},
		{"configmap not found", func(p *manifest.Process) { proc(p).ConfigMaps[0].Name = "other" },
			[]string{C + `.name: configmap "other" not found in namespace "ns-a"`}},
		{"configmap item not found", func(p *manifest.Process) { proc(p).ConfigMaps[0].Items[0].DataKey = "config-three" },
			[]string{C + `.items[0].dataKey: configmap "template-configmap" has no item "config-three"`}},
		{"references resolve in the manifest's namespace", func(p *manifest.Process) { p.Metadata.Namespace = "ns-b" }, []string{
			S + `.secretName: secret "my-secret" not found in namespace "ns-b"`,
			C + `.name: configmap "template-configmap" not found in namespace "ns-b"`,
		}},
	})
	t.Run("nil resolver skips lookups", func(t *testing.T) {
		p := manifesttest.Process()
		proc(p).Secrets[0].SecretName = "other"
		if errs := p.Validate(nil); len(errs) > 0 {
			t.Errorf("Validate(nil) = %q", errs.Messages())
		}
	})
}

func TestValidateProcessVariables(t *testing.T) {
	runProcessCases(t, []processCase{
		// seed 000's own typo
		{"unknown variable", func(p *manifest.Process) { proc(p).StopCmd = "./stop.sh ${hospip}" },
			[]string{P + `.stopCmd: unknown variable "${hospip}"` + processKnows}},
		{"undeclared port", func(p *manifest.Process) { proc(p).Env[0].Value = "${ports.http-service}" },
			[]string{P + `.env[0].value: unknown variable "${ports.http-service}": no port named "http-service"`}},
		{"container variable in a process", func(p *manifest.Process) { proc(p).ReloadCmd = "${bcs.namespace}" },
			[]string{P + `.reloadCmd: unknown variable "${bcs.namespace}"` + processKnows}},
		{"every variable", func(p *manifest.Process) {
			proc(p).RestartCmd = "${namespace} ${processname} ${instanceid} ${hostip} ${ports.metric_port} ${work_base_dir} ${run_base_dir} ${workPath} ${pidFile}"
		}, nil},
		{"plain $ left alone", func(p *manifest.Process) { proc(p).StartCmd = "./start.sh $HOME $(pwd) $" }, nil},
		{"unterminated reference", func(p *manifest.Process) { proc(p).StartCmd = "./start.sh ${namespace" },
			[]string{P + `.startCmd: unterminated variable reference "${namespace"`}},
		{"variable in a health check command", func(p *manifest.Process) {
			check(p).Type, check(p).Command = manifest.CheckCommand, &manifest.CommandCheck{Value: "./check.sh ${portz.a}"}
		}, []string{P + `.healthChecks[0].command.value: unknown variable "${portz.a}"` + processKnows}},
		{"variable in a header value", func(p *manifest.Process) {
			check(p).Type, check(p).HTTP = manifest.CheckRemoteHTTP, &manifest.HTTPCheck{Port: 80, Scheme: "http", Headers: map[string]string{"Host": "${hostname}"}}
		}, []string{P + `.healthChecks[0].http.headers["Host"]: unknown variable "${hostname}"` + processKnows}},
		{"variable in a uri", func(p *manifest.Process) { proc(p).URIs[0].Value = "http://repo/${processname}-${nope}.tgz" },
			[]string{P + `.uris[0].value: unknown variable "${nope}"` + processKnows}},
		{"unknown variable inside workPath reported once", func(p *manifest.Process) { proc(p).WorkPath = "/data/${nope}" },
			[]string{P + `.workPath: unknown variable "${nope}"` + processKnows}},
		// seed 000: ${workPath} and ${pidFile} refer to the fields
		{"workPath and pidFile in a cycle", func(p *manifest.Process) {
			proc(p).WorkPath, proc(p).PidFile = "${pidFile}.d", "${workPath}/gamesvc.pid"
		}, []string{P + ".workPath: variables refer to each other in a cycle: ${workPath} → ${pidFile} → ${workPath}"}},
		{"pidFile referring to itself", func(p *manifest.Process) { proc(p).PidFile = "${pidFile}.pid" },
			[]string{P + ".pidFile: variables refer to each other in a cycle: ${pidFile} → ${pidFile}"}},
	})
}

// instanceDirs is how the confinement message names an instance's own
// directories.
const instanceDirs = "${work_base_dir}/${namespace}.${processname}.${instanceid} or ${run_base_dir}/${namespace}.${processname}.${instanceid}"

// Every path a process manifest makes the executor create or write on the
// agent lies inside the instance's own directories once expanded:
// otherwise a pidFile on a root-owned file deleted it, a workPath chowned
// a root-owned directory, a keyOrPath with /../ wrote outside.
func TestValidateProcessConfinement(t *testing.T) {
	const (
		work = "${work_base_dir}/${namespace}.${processname}.${instanceid}"
		run  = "${run_base_dir}/${namespace}.${processname}.${instanceid}"
	)
	outside := func(field, raw string) []string {
		return []string{P + "." + field + ": must lie inside the instance's own directories, " + instanceDirs + ", got " + `"` + raw + `"`}
	}
	fileItem := func(p *manifest.Process, keyOrPath string) {
		proc(p).Secrets[0].Items[0] = manifest.SecretItem{Type: manifest.ItemFile, DataKey: "abc", KeyOrPath: keyOrPath}
	}
	runProcessCases(t, []processCase{
		{"the work dir itself", func(p *manifest.Process) { proc(p).WorkPath = work }, nil},
		{"pid file in the run dir", func(p *manifest.Process) { proc(p).PidFile = run + "/a/b.pid" }, nil},
		{"pid file in the work dir", func(p *manifest.Process) { proc(p).PidFile = "${workPath}/gamesvr.pid" }, nil},
		{"secret in the work path", func(p *manifest.Process) { fileItem(p, "${workPath}/conf/key.pem") }, nil},
		{"pid file on a root file", func(p *manifest.Process) { proc(p).PidFile = "/etc/shadow" }, outside("pidFile", "/etc/shadow")},
		{"work path the base itself", func(p *manifest.Process) { proc(p).WorkPath = "${work_base_dir}" }, outside("workPath", "${work_base_dir}")},
		{"work path of another app", func(p *manifest.Process) { proc(p).WorkPath = "${work_base_dir}/${namespace}.other.${instanceid}" },
			outside("workPath", "${work_base_dir}/${namespace}.other.${instanceid}")},
		{"work path sharing the prefix", func(p *manifest.Process) { proc(p).WorkPath = work + "0" }, outside("workPath", work+"0")},
		{"work path climbing out", func(p *manifest.Process) { proc(p).WorkPath = work + "/../../etc" }, outside("workPath", work+"/../../etc")},
		{"dot-dot that stays inside", func(p *manifest.Process) { proc(p).WorkPath = work + "/a/../b" }, outside("workPath", work+"/a/../b")},
		{"relative work path", func(p *manifest.Process) { proc(p).WorkPath = "gamesvc" }, outside("workPath", "gamesvc")},
		{"output dir anywhere", func(p *manifest.Process) { proc(p).URIs[0].OutputDir = "/usr/local/bin" },
			outside("uris[0].outputDir", "/usr/local/bin")},
		{"secret climbing out", func(p *manifest.Process) { fileItem(p, work+"/../../../root/.ssh/authorized_keys") },
			outside("secrets[0].items[0].keyOrPath", work+"/../../../root/.ssh/authorized_keys")},
		{"configmap file outside", func(p *manifest.Process) { proc(p).ConfigMaps[0].Items[0].KeyOrPath = "/etc/cron.d/x" },
			outside("configmaps[0].items[0].keyOrPath", "/etc/cron.d/x")},
		{"env items are no paths", func(p *manifest.Process) { proc(p).Secrets[0].Items[0].KeyOrPath = "ETC_SHADOW" }, nil},
	})
}
