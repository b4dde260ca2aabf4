package manifest_test

import (
	"reflect"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest/manifesttest"
)

const C = "spec.template.spec.containers[0]"

func container(a *manifest.Application) *manifest.Container {
	return &a.Spec.Template.Spec.Containers[0]
}

func TestValidateApplication(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(a *manifest.Application)
		want   []string
	}{
		{"metadata checked", func(a *manifest.Application) { a.Metadata.Name = "App" }, []string{"metadata.name: " + nameRule + `"App"`}},
		{"policies checked", func(a *manifest.Application) { a.KillPolicy.GracePeriod = -1 }, []string{"killPolicy.gracePeriod: must be ≥ 0, got -1"}},
		{"instance negative", func(a *manifest.Application) { a.Spec.Instance = -2 }, []string{"spec.instance: must be ≥ 0, got -2"}},
		// Bounds, past which a value is a mistake or an attack.
		{"instances past the bound", func(a *manifest.Application) { a.Spec.Instance = 100_001 },
			[]string{"spec.instance: must be at most 100000, got 100001"}},
		{"containers past the bound", func(a *manifest.Application) {
			for range 64 {
				a.Spec.Template.Spec.Containers = append(a.Spec.Template.Spec.Containers, a.Spec.Template.Spec.Containers[0])
			}
			for i := range a.Spec.Template.Spec.Containers {
				a.Spec.Template.Spec.Containers[i].Ports = nil
				a.Spec.Template.Spec.Containers[i].Env = nil
				a.Spec.Template.Spec.Containers[i].HealthChecks = nil
			}
		}, []string{"spec.template.spec.containers: at most 64 in one pod, got 65"}},
		{"durations past their bounds", func(a *manifest.Application) {
			a.KillPolicy.GracePeriod, a.RestartPolicy.Interval, a.RestartPolicy.Backoff = 3601, 86401, 1<<40
			a.Spec.Template.Spec.Containers[0].HealthChecks[0].IntervalSeconds = 86401
		}, []string{
			"restartPolicy.interval: must be at most 86400, got 86401",
			"restartPolicy.backoff: must be at most 86400, got 1099511627776",
			"killPolicy.gracePeriod: must be at most 3600, got 3601",
			"spec.template.spec.containers[0].healthChecks[0].intervalSeconds: must be at most 86400, got 86401",
		}},
		{"no containers", func(a *manifest.Application) { a.Spec.Template.Spec.Containers = nil }, []string{"spec.template.spec.containers: required"}},
		// seed 001: network types HOST, NONE, BRIDGE, USER, upper case
		{"networkMode required", func(a *manifest.Application) { a.Spec.Template.Spec.NetworkMode = "" }, []string{"spec.template.spec.networkMode: required"}},
		{"networkMode lower case", func(a *manifest.Application) { a.Spec.Template.Spec.NetworkMode = "bridge" },
			[]string{`spec.template.spec.networkMode: want one of HOST, BRIDGE, NONE, USER, got "bridge"`}},
		// seed 001: USER takes --net from the docker parameters, which it needs
		{"networkMode USER without net", func(a *manifest.Application) { a.Spec.Template.Spec.NetworkMode = manifest.NetworkUser },
			[]string{C + ".parameters: network mode USER needs a net docker parameter"}},
		{"networkMode USER with net and ip", func(a *manifest.Application) {
			a.Spec.Template.Spec.NetworkMode = manifest.NetworkUser
			container(a).Parameters = append(container(a).Parameters, manifest.Parameter{Key: "net", Value: "overlay-a"}, manifest.Parameter{Key: "ip", Value: "10.1.0.3"})
		}, nil},
		{"networkMode USER: the second container joins the first's net", func(a *manifest.Application) {
			a.Spec.Template.Spec.NetworkMode = manifest.NetworkUser
			container(a).Parameters = append(container(a).Parameters, manifest.Parameter{Key: "net", Value: "overlay-a"})
			second := manifesttest.Container()
			second.Ports, second.HealthChecks, second.Env = nil, nil, second.Env[:1]
			a.Spec.Template.Spec.Containers = append(a.Spec.Template.Spec.Containers, second)
		}, nil},
		{"networkMode USER without net, two containers: reported once", func(a *manifest.Application) {
			a.Spec.Template.Spec.NetworkMode = manifest.NetworkUser
			second := manifesttest.Container()
			second.Ports, second.HealthChecks, second.Env = nil, nil, second.Env[:1]
			a.Spec.Template.Spec.Containers = append(a.Spec.Template.Spec.Containers, second)
		}, []string{C + ".parameters: network mode USER needs a net docker parameter"}},
		{"ip outside USER mode: ignored, as the original did", func(a *manifest.Application) {
			container(a).Parameters = append(container(a).Parameters, manifest.Parameter{Key: "ip", Value: "10.1.0.3"})
		}, nil},
		{"CNI mode: no net needed", func(a *manifest.Application) {
			a.Spec.Template.Spec.NetworkType, a.Spec.Template.Spec.NetworkMode = "cni", "USER"
		}, nil},
		{"seed 001: with networkType cni, networkMode names the CNI network", func(a *manifest.Application) {
			a.Spec.Template.Spec.NetworkType, a.Spec.Template.Spec.NetworkMode = "cni", "bcs-overlay"
		}, nil},
		{"CNI network name", func(a *manifest.Application) {
			a.Spec.Template.Spec.NetworkType, a.Spec.Template.Spec.NetworkMode = "cni", "bad name"
		}, []string{`spec.template.spec.networkMode: a CNI network name of letters, digits, '.', '_' and '-', got "bad name"`}},
		{"CNI network required", func(a *manifest.Application) {
			a.Spec.Template.Spec.NetworkType, a.Spec.Template.Spec.NetworkMode = "cni", ""
		}, []string{"spec.template.spec.networkMode: required"}},
		{"networkType cni", func(a *manifest.Application) { a.Spec.Template.Spec.NetworkType = "cni" }, nil},
		{"networkType optional", func(a *manifest.Application) { a.Spec.Template.Spec.NetworkType = "" }, nil},
		{"networkType unknown", func(a *manifest.Application) { a.Spec.Template.Spec.NetworkType = "flannel" },
			[]string{`spec.template.spec.networkType: want one of cnm, cni, got "flannel"`}},
		{"egressLimit negative", func(a *manifest.Application) { a.Spec.Template.Spec.NetLimit = &manifest.NetLimit{EgressLimit: -1} },
			[]string{"spec.template.spec.netLimit.egressLimit: must be ≥ 0, got -1"}},
		{"container type DOCKER", func(a *manifest.Application) { container(a).Type = "DOCKER" }, nil},
		{"container type unknown", func(a *manifest.Application) { container(a).Type = "RKT" }, []string{C + `.type: want one of DOCKER, MESOS, got "RKT"`}},
		{"image required", func(a *manifest.Application) { container(a).Image = "" }, []string{C + ".image: required"}},
		// seed 000: "imagePullPolicy: Always or IfNotPresent"
		{"imagePullPolicy Always", func(a *manifest.Application) { container(a).ImagePullPolicy = manifest.PullAlways }, nil},
		{"imagePullPolicy unknown", func(a *manifest.Application) { container(a).ImagePullPolicy = "Never" },
			[]string{C + `.imagePullPolicy: want one of Always, IfNotPresent, got "Never"`}},
		{"parameter key required", func(a *manifest.Application) { container(a).Parameters[0].Key = "" }, []string{C + ".parameters[0].key: required"}},
		// the container executor's parser (pkg/dockerparam) reads them here
		{"every supported parameter", func(a *manifest.Application) {
			container(a).Parameters = []manifest.Parameter{
				{Key: "oom-kill-disable", Value: "true"}, {Key: "ulimit", Value: "core=-1"}, {Key: "rm", Value: "false"},
				{Key: "shm-size", Value: "128mb"}, {Key: "memory-swap", Value: "2g"}, {Key: "memory-swappiness", Value: "0"},
				{Key: "cpu-shares", Value: "512"}, {Key: "device-read-bps", Value: "/dev/vda:10mb"}, {Key: "device-write-bps", Value: "/dev/vda:5mb"},
				{Key: "device-read-iops", Value: "/dev/vda:100"}, {Key: "--device-write-iops", Value: "/dev/vda:50"},
			}
		}, nil},
		{"parameter not supported", func(a *manifest.Application) {
			container(a).Parameters = append(container(a).Parameters, manifest.Parameter{Key: "cap-add", Value: "ALL"})
		}, []string{C + `.parameters[1].key: docker parameter "cap-add" is not supported (oom-kill-disable, ulimit, rm, shm-size, ip, net, memory-swap, memory-swappiness, cpu-shares, device-read-bps, device-write-bps, device-read-iops, device-write-iops, user)`}},
		{"parameter values", func(a *manifest.Application) {
			container(a).Parameters = []manifest.Parameter{
				{Key: "ulimit", Value: "nofile"}, {Key: "memory-swap", Value: "0"}, {Key: "device-read-bps", Value: "vda:1mb"},
				{Key: "memory-swappiness", Value: "101"}, {Key: "cpu-shares", Value: "1"}, {Key: "device-write-iops", Value: "/dev/vda:1mb"},
			}
		}, []string{
			C + `.parameters[0].value: want name=soft[:hard], got "nofile"`,
			C + `.parameters[1].value: size "0": want more than 0 bytes, or -1 for unlimited swap`,
			C + `.parameters[2].value: want <device path under /dev/>:<rate>, rate a size with an optional unit kb, mb or gb; got "vda:1mb"`,
			C + `.parameters[3].value: want a whole number from 0 to 100, got "101"`,
			C + `.parameters[4].value: want a whole number from 2 to 262144, got "1"`,
			C + `.parameters[5].value: rate "1mb": want a whole number above 0`,
		}},
		// seed 001 CPU binding: the original's "cpuset", whole cores
		{"cpuset with whole limits.cpu", func(a *manifest.Application) {
			container(a).Cpuset, container(a).Resources.Requests.CPU = true, ""
		}, nil},
		{"cpuset with requests equal to limits", func(a *manifest.Application) {
			container(a).Cpuset, container(a).Resources.Requests.CPU = true, "2.000"
		}, nil},
		{"cpuset with fractional limits.cpu", func(a *manifest.Application) {
			container(a).Cpuset, container(a).Resources.Limits.CPU, container(a).Resources.Requests.CPU = true, "1.5", ""
		}, []string{C + `.resources.limits.cpu: cpuset pins whole cores: want a whole number of cores, at least 1, got "1.5"`}},
		// The original's manifests pin with requests.cpu only.
		{"cpuset with whole requests.cpu only", func(a *manifest.Application) {
			container(a).Cpuset, container(a).Resources.Requests.CPU, container(a).Resources.Limits.CPU = true, "2", ""
		}, nil},
		{"cpuset with fractional requests.cpu", func(a *manifest.Application) {
			container(a).Cpuset, container(a).Resources.Limits.CPU = true, ""
		}, []string{C + `.resources.requests.cpu: cpuset pins whole cores: want a whole number of cores, at least 1, got "0.5"`}},
		{"cpuset without any cpu", func(a *manifest.Application) {
			container(a).Cpuset, container(a).Resources.Requests.CPU, container(a).Resources.Limits.CPU = true, "", ""
		}, []string{C + `.resources.limits.cpu: cpuset pins whole cores: want a whole number of cores, at least 1, got ""`}},
		{"cpuset with unlimited cpu", func(a *manifest.Application) {
			container(a).Cpuset, container(a).Resources.Requests.CPU, container(a).Resources.Limits.CPU = true, "", "-1"
		}, []string{C + `.resources.limits.cpu: cpuset pins whole cores: want a whole number of cores, at least 1, got "-1"`}},
		{"cpuset with limits above whole requests", func(a *manifest.Application) {
			container(a).Cpuset, container(a).Resources.Requests.CPU = true, "1"
		}, []string{C + `.resources.requests.cpu: cpuset pins requests.cpu cores: limits.cpu (2) must be unset or equal, got "1"`}},
		{"cpuset with a bad quantity: reported once", func(a *manifest.Application) {
			container(a).Cpuset, container(a).Resources.Limits.CPU = true, "two"
		}, []string{C + `.resources.limits.cpu: want a decimal number such as "2" or "0.5", or "-1" for unlimited, got "two"`}},
		{"env name required", func(a *manifest.Application) { container(a).Env[0].Name = "" }, []string{C + ".env[0].name: required"}},
		{"env value and valueFrom", func(a *manifest.Application) { container(a).Env[2].Value = "1" }, []string{C + ".env[2].valueFrom: cannot be combined with value"}},
		{"valueFrom without a field", func(a *manifest.Application) { container(a).Env[2].ValueFrom.ResourceFieldRef = nil },
			[]string{C + ".env[2].valueFrom.resourceFieldRef: required"}},
		{"valueFrom unknown resource", func(a *manifest.Application) { container(a).Env[2].ValueFrom.ResourceFieldRef.Resource = "limits.gpu" },
			[]string{C + `.env[2].valueFrom.resourceFieldRef.resource: want one of requests.cpu, requests.memory, limits.cpu, limits.memory, got "limits.gpu"`}},
		// seed 001: random ports — HOST: containerPort 0; BRIDGE: hostPort 0
		{"BRIDGE random hostPort", func(a *manifest.Application) { container(a).Ports[0].HostPort = 0 }, nil},
		{"BRIDGE fixed hostPort", func(a *manifest.Application) { container(a).Ports[0].HostPort = 8080 }, nil},
		{"BRIDGE containerPort 0", func(a *manifest.Application) { container(a).Ports[0].ContainerPort = 0 },
			[]string{C + ".ports[0].containerPort: required: only HOST mode picks a random containerPort"}},
		{"HOST containerPort 0", func(a *manifest.Application) {
			a.Spec.Template.Spec.NetworkMode = manifest.NetworkHost
			container(a).Ports[0].ContainerPort = 0
		}, nil},
		{"containerPort too large", func(a *manifest.Application) { container(a).Ports[0].ContainerPort = 65536 },
			[]string{C + ".ports[0].containerPort: must be between 0 and 65535, got 65536"}},
		{"hostPort negative", func(a *manifest.Application) { container(a).Ports[0].HostPort = -1 },
			[]string{C + ".ports[0].hostPort: must be between 0 (random) and 65535, got -1"}},
		{"port name required", func(a *manifest.Application) { container(a).Ports[0].Name = "" }, []string{
			C + ".ports[0].name: required",
			C + `.healthChecks[0].http.portName: no port named "http-port"`,
			C + `.env[1].value: unknown variable "${bcs.ports.http-port}": no port named "http-port"`,
		}},
		{"port name duplicate across containers", func(a *manifest.Application) {
			second := manifesttest.Container()
			second.Ports[0].ContainerPort = 9090
			a.Spec.Template.Spec.Containers = append(a.Spec.Template.Spec.Containers, second)
		}, []string{`spec.template.spec.containers[1].ports[0].name: duplicate port name "http-port" (also spec.template.spec.containers[0].ports[0])`}},
		{"protocol unknown", func(a *manifest.Application) { container(a).Ports[0].Protocol = "quic" },
			[]string{C + `.ports[0].protocol: want http, tcp or udp, got "quic"`}},
		{"health check portName refers to the container's ports", func(a *manifest.Application) { container(a).HealthChecks[0].HTTP.PortName = "test-http" },
			[]string{C + `.healthChecks[0].http.portName: no port named "test-http"`}},
		{"health check rules apply", func(a *manifest.Application) { container(a).HealthChecks[0].TimeoutSeconds = 30 },
			[]string{C + ".healthChecks[0].timeoutSeconds: must be less than intervalSeconds (10), got 30"}},
		{"resources checked", func(a *manifest.Application) { container(a).Resources.Requests.Memory = "lots" },
			[]string{C + `.resources.requests.memory: want a decimal number such as "2" or "0.5", or "-1" for unlimited, got "lots"`}},
		// seed 001: "memory: at least 4M"
		{"memory limit below Docker's minimum", func(a *manifest.Application) { container(a).Resources.Limits.Memory = "3.999" },
			[]string{C + `.resources.limits.memory: must be at least 4 (MB), Docker's minimum, got 3.999`}},
		{"memory limit at Docker's minimum", func(a *manifest.Application) { container(a).Resources.Limits.Memory = "4" }, nil},
		{"memory limit unlimited", func(a *manifest.Application) { container(a).Resources.Limits.Memory = "-1" }, nil},
		{"memory limit not given", func(a *manifest.Application) { container(a).Resources.Limits.Memory = "" }, nil},
		{"volume name required", func(a *manifest.Application) { container(a).Volumes[0].Name = "" }, []string{C + ".volumes[0].name: required"}},
		{"volume hostPath relative", func(a *manifest.Application) { container(a).Volumes[0].Volume.HostPath = "data" },
			[]string{C + `.volumes[0].volume.hostPath: want an absolute path, got "data"`}},
		{"volume mountPath required", func(a *manifest.Application) { container(a).Volumes[0].Volume.MountPath = "" },
			[]string{C + ".volumes[0].volume.mountPath: required"}},
		{"secret reference resolves", func(a *manifest.Application) { container(a).Secrets[0].Items[0].DataKey = "nope" },
			[]string{C + `.secrets[0].items[0].dataKey: secret "my-secret" has no item "nope"`}},
		{"configmap reference resolves", func(a *manifest.Application) { container(a).ConfigMaps[0].Name = "nope" },
			[]string{C + `.configmaps[0].name: configmap "nope" not found in namespace "ns-a"`}},
		// container variables: ${bcs.*} in env values
		{"every container variable", func(a *manifest.Application) {
			container(a).Env[0].Value = "${bcs.namespace} ${bcs.appname} ${bcs.instanceid} ${bcs.hostip} ${bcs.ports.http-port} ${bcs.taskgroupid} ${bcs.taskgroupname}"
		}, nil},
		{"process variable in a container", func(a *manifest.Application) { container(a).Env[0].Value = "${namespace}" },
			[]string{C + `.env[0].value: unknown variable "${namespace}"` + containerKnows}},
		{"undeclared port", func(a *manifest.Application) { container(a).Env[1].Value = "${bcs.ports.http_port}" },
			[]string{C + `.env[1].value: unknown variable "${bcs.ports.http_port}": no port named "http_port"`}},
		{"variables in args are the container's business", func(a *manifest.Application) { container(a).Args = []string{"${HOME}"} }, nil},
		{"executor variables left alone (seed 001 $HOST)", func(a *manifest.Application) { container(a).Env[0].Value = "$HOST" }, nil},
		// The executor's variables the docs list, braced, whole
		// or within a value, are the executor's to replace at launch.
		{"every executor variable", func(a *manifest.Application) {
			container(a).Env[0].Value = "${HOST} ${BCS_NODE_ADDR} ${BCS_POD_ID} ${BCS_CNI_NAME} http://${HOST}:${PORT_http-port}/"
		}, nil},
		{"executor port variable of an undeclared port", func(a *manifest.Application) { container(a).Env[0].Value = "${PORT_http_port}" },
			[]string{C + `.env[0].value: unknown variable "${PORT_http_port}": the container has no port named "http_port"`}},
		{"misspelt executor variable lists the known ones", func(a *manifest.Application) { container(a).Env[0].Value = "${BCS_NODE_IP}" },
			[]string{C + `.env[0].value: unknown variable "${BCS_NODE_IP}"; a container's env knows ${bcs.namespace}, ${bcs.appname}, ` +
				`${bcs.instanceid}, ${bcs.hostip}, ${bcs.ports.<name>}, ${bcs.taskgroupid}, ${bcs.taskgroupname}, ` +
				`and the container executor's ${HOST}, ${BCS_NODE_ADDR}, ${BCS_POD_ID}, ${BCS_CNI_NAME}, ${PORT_<name>}`}},
		// A check that connects to the pod of a NONE network fails only at
		// launch: refused, naming the check and why.
		{"NONE network with an HTTP check", func(a *manifest.Application) { a.Spec.Template.Spec.NetworkMode = manifest.NetworkNone },
			[]string{C + ".healthChecks[0]: type HTTP connects to the pod, and networkMode NONE gives it no address to connect to: " +
				"use a COMMAND check, or a network mode with an address"}},
		{"NONE network with a REMOTE_TCP check", func(a *manifest.Application) {
			a.Spec.Template.Spec.NetworkMode = manifest.NetworkNone
			container(a).HealthChecks = []manifest.HealthCheck{{Type: manifest.CheckRemoteTCP, IntervalSeconds: 5, TimeoutSeconds: 1, TCP: &manifest.TCPCheck{PortName: "http-port"}}}
		}, []string{C + ".healthChecks[0]: type REMOTE_TCP connects to the pod, and networkMode NONE gives it no address to connect to: " +
			"use a COMMAND check, or a network mode with an address"}},
		{"NONE network with a COMMAND check", func(a *manifest.Application) {
			a.Spec.Template.Spec.NetworkMode = manifest.NetworkNone
			container(a).HealthChecks = []manifest.HealthCheck{{Type: manifest.CheckCommand, IntervalSeconds: 5, TimeoutSeconds: 1, Command: &manifest.CommandCheck{Value: "true"}}}
		}, nil},
		{"template name checked", func(a *manifest.Application) { a.Spec.Template.Metadata.Name = "Bad" },
			[]string{"spec.template.metadata.name: " + nameRule + `"Bad"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := manifesttest.Application()
			tt.mutate(a)
			if got := messages(a.Validate(manifesttest.NewResolver())); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Validate:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestValidateConfigMapAndSecret(t *testing.T) {
	tests := []struct {
		name string
		obj  func() manifest.Object
		want []string
	}{
		{"configmap metadata", func() manifest.Object { c := manifesttest.ConfigMap(); c.Metadata.Name = ""; return c }, []string{"metadata.name: required"}},
		{"configmap without items", func() manifest.Object { c := manifesttest.ConfigMap(); c.Datas = nil; return c }, []string{"datas: must hold at least one item"}},
		{"configmap item name", func() manifest.Object {
			c := manifesttest.ConfigMap()
			c.Datas["a b"] = manifest.ConfigMapData{Type: "file"}
			return c
		}, []string{`datas["a b"]: item name wants letters, digits, '.', '_' and '-'`}},
		{"configmap type required", func() manifest.Object {
			c := manifesttest.ConfigMap()
			c.Datas["bcs.conf"] = manifest.ConfigMapData{}
			return c
		}, []string{`datas["bcs.conf"].type: required`}},
		{"configmap type unknown", func() manifest.Object {
			c := manifesttest.ConfigMap()
			c.Datas["bcs.conf"] = manifest.ConfigMapData{Type: "s3", Content: "s3://a"}
			return c
		}, []string{`datas["bcs.conf"].type: want one of file, http, https, ftp, got "s3"`}},
		{"configmap remote content must match its type", func() manifest.Object {
			c := manifesttest.ConfigMap()
			c.Datas["myftp"] = manifest.ConfigMapData{Type: "ftp", Content: "http://a/b"}
			return c
		}, []string{`datas["myftp"].content: want a ftp:// address for type ftp, got "http://a/b"`}},
		{"configmap remote content parses with a host", func() manifest.Object {
			c := manifesttest.ConfigMap()
			c.Datas["web"] = manifest.ConfigMapData{Type: "http", Content: "http:///a.txt"}
			return c
		}, []string{`datas["web"].content: want a http:// address for type http, got "http:///a.txt"`}},
		{"configmap remote credentials stay out of the address", func() manifest.Object {
			c := manifesttest.ConfigMap()
			c.Datas["web"] = manifest.ConfigMapData{Type: "https", Content: "https://u:pw@a/b"}
			return c
		}, []string{`datas["web"].content: credentials go in RemoteUser and remotePasswd, not in the address`}},
		{"configmap https", func() manifest.Object {
			c := manifesttest.ConfigMap()
			c.Datas["web"] = manifest.ConfigMapData{Type: "https", Content: "https://a/b"}
			return c
		}, nil},
		// The original's manifests name their secret "mySecret".
		{"secret named in mixed case", func() manifest.Object { s := manifesttest.Secret(); s.Metadata.Name = "mySecret"; return s }, nil},
		{"configmap named with '.' and '_'", func() manifest.Object { c := manifesttest.ConfigMap(); c.Metadata.Name = "Game_Conf.v2"; return c }, nil},
		{"secret name starting with '.'", func() manifest.Object { s := manifesttest.Secret(); s.Metadata.Name = ".."; return s },
			[]string{`metadata.name: want letters, digits, '.', '_' and '-', starting with a letter or digit, got ".."`}},
		{"configmap name with '/'", func() manifest.Object { c := manifesttest.ConfigMap(); c.Metadata.Name = "a/b"; return c },
			[]string{`metadata.name: want letters, digits, '.', '_' and '-', starting with a letter or digit, got "a/b"`}},
		{"secret metadata", func() manifest.Object { s := manifesttest.Secret(); s.Metadata.Namespace = "1ns"; return s },
			[]string{"metadata.namespace: " + nameRule + `"1ns"`}},
		{"secret without items", func() manifest.Object {
			s := manifesttest.Secret()
			s.Datas = map[string]manifest.SecretData{}
			return s
		},
			[]string{"datas: must hold at least one item"}},
		{"secret content required", func() manifest.Object { s := manifesttest.Secret(); s.Datas["abc"] = manifest.SecretData{}; return s },
			[]string{`datas["abc"].content: required`}},
		{"secret item name", func() manifest.Object {
			s := manifesttest.Secret()
			s.Datas["a/b"] = manifest.SecretData{Content: "x"}
			return s
		},
			[]string{`datas["a/b"]: item name wants letters, digits, '.', '_' and '-'`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := messages(tt.obj().Validate(nil)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Validate:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestValidateServiceAndCommand(t *testing.T) {
	svc := func(f func(s *manifest.Service)) func() manifest.Object {
		return func() manifest.Object { s := manifesttest.Service(); f(s); return s }
	}
	cmd := func(f func(c *manifest.Command)) func() manifest.Object {
		return func() manifest.Object { c := manifesttest.Command(); f(c); return c }
	}
	tests := []struct {
		name string
		obj  func() manifest.Object
		want []string
	}{
		{"service metadata", svc(func(s *manifest.Service) { s.Metadata.Name = "Svc" }), []string{"metadata.name: " + nameRule + `"Svc"`}},
		{"service selector required", svc(func(s *manifest.Service) { s.Spec.Selector = nil }), []string{"spec.selector: required"}},
		{"service type required", svc(func(s *manifest.Service) { s.Spec.Type = "" }), []string{"spec.type: required"}},
		{"service type unknown", svc(func(s *manifest.Service) { s.Spec.Type = "LoadBalancer" }),
			[]string{`spec.type: want one of ClusterIP, NodePort, None, Integration, got "LoadBalancer"`}},
		{"service clusterIP", svc(func(s *manifest.Service) { s.Spec.ClusterIP = []string{"127.0.0.1", "10.0.0"} }),
			[]string{`spec.clusterIP[1]: want an IP address, got "10.0.0"`}},
		{"service port name required", svc(func(s *manifest.Service) { s.Spec.Ports[0].Name = "" }), []string{"spec.ports[0].name: required"}},
		{"service port name duplicate", svc(func(s *manifest.Service) { s.Spec.Ports = append(s.Spec.Ports, s.Spec.Ports[0]) }),
			[]string{`spec.ports[1].name: duplicate port name "http" (also ports[0])`}},
		{"service protocol", svc(func(s *manifest.Service) { s.Spec.Ports[0].Protocol = "sctp" }),
			[]string{`spec.ports[0].protocol: want http, https, tcp or udp, got "sctp"`}},
		{"service protocol required", svc(func(s *manifest.Service) { s.Spec.Ports[0].Protocol = "" }), []string{"spec.ports[0].protocol: required"}},
		{"servicePort", svc(func(s *manifest.Service) { s.Spec.Ports[0].ServicePort = 0 }), []string{"spec.ports[0].servicePort: must be between 1 and 65535, got 0"}},
		{"targetPort", svc(func(s *manifest.Service) { s.Spec.Ports[0].TargetPort = 65536 }), []string{"spec.ports[0].targetPort: must be between 1 and 65535, got 65536"}},
		{"nodePort", svc(func(s *manifest.Service) { s.Spec.Ports[0].NodePort = -1 }), []string{"spec.ports[0].nodePort: must be between 0 (none) and 65535, got -1"}},
		{"command target kind Application", cmd(func(c *manifest.Command) { c.Spec.CommandTargetRef.Kind = "application" }), nil},
		{"command target kind required", cmd(func(c *manifest.Command) { c.Spec.CommandTargetRef.Kind = "" }), []string{"spec.commandTargetRef.kind: required"}},
		{"command target kind unknown", cmd(func(c *manifest.Command) { c.Spec.CommandTargetRef.Kind = "Process" }),
			[]string{`spec.commandTargetRef.kind: want Deployment or Application, got "Process"`}},
		{"command target name", cmd(func(c *manifest.Command) { c.Spec.CommandTargetRef.Name = "" }), []string{"spec.commandTargetRef.name: required"}},
		{"command target namespace", cmd(func(c *manifest.Command) { c.Spec.CommandTargetRef.Namespace = "A" }),
			[]string{"spec.commandTargetRef.namespace: " + nameRule + `"A"`}},
		{"command required", cmd(func(c *manifest.Command) { c.Spec.Command = nil }), []string{"spec.command: required"}},
		{"command task group", cmd(func(c *manifest.Command) { c.Spec.TaskGroups = []string{""} }), []string{"spec.taskgroups[0]: required"}},
		{"command workingDir", cmd(func(c *manifest.Command) { c.Spec.WorkingDir = "tmp" }), []string{`spec.workingDir: want an absolute path, got "tmp"`}},
		{"command reserveTime", cmd(func(c *manifest.Command) { c.Spec.ReserveTime = -1 }), []string{"spec.reserveTime: must be ≥ 0, got -1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := messages(tt.obj().Validate(nil)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Validate:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestQuantity(t *testing.T) {
	tests := []struct {
		in      manifest.Quantity
		want    manifest.Amount
		wantErr string
	}{
		{"", manifest.Amount{}, ""},
		{"2", manifest.Amount{Milli: 2000, Set: true}, ""},
		{"0.5", manifest.Amount{Milli: 500, Set: true}, ""},
		{"0.125", manifest.Amount{Milli: 125, Set: true}, ""},
		{"500", manifest.Amount{Milli: 500000, Set: true}, ""},
		{"007", manifest.Amount{Milli: 7000, Set: true}, ""},
		{"-1", manifest.Amount{Unlimited: true, Set: true}, ""},
		{"-2", manifest.Amount{}, `must be ≥ 0, or -1 for unlimited, got "-2"`},
		{"-0.5", manifest.Amount{}, `must be ≥ 0, or -1 for unlimited, got "-0.5"`},
		{"0.0001", manifest.Amount{}, `at most 3 decimal places, got "0.0001"`},
		{".5", manifest.Amount{}, `want a decimal number such as "2" or "0.5", or "-1" for unlimited, got ".5"`},
		{"5.", manifest.Amount{}, `want a decimal number such as "2" or "0.5", or "-1" for unlimited, got "5."`},
		{"1e3", manifest.Amount{}, `want a decimal number such as "2" or "0.5", or "-1" for unlimited, got "1e3"`},
		{" 2", manifest.Amount{}, `want a decimal number such as "2" or "0.5", or "-1" for unlimited, got " 2"`},
		{"1234567890123", manifest.Amount{}, `too large, got "1234567890123"`},
	}
	for _, tt := range tests {
		got, err := tt.in.Parse()
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if got != tt.want || gotErr != tt.wantErr {
			t.Errorf("Quantity(%q).Parse() = %+v, %q; want %+v, %q", tt.in, got, gotErr, tt.want, tt.wantErr)
		}
	}
	if v := (manifest.Amount{Milli: 500, Set: true}).Value(); v != 0.5 {
		t.Errorf("Value = %v, want 0.5", v)
	}
	if v := (manifest.Amount{Unlimited: true, Set: true}).Value(); v != -1 {
		t.Errorf("unlimited Value = %v, want -1", v)
	}
}
