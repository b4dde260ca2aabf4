package manifesttest

import (
	"github.com/bcs-mesos/bcs-mesos/pkg/constraint"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
)

// Namespace is the namespace of every fixture.
const Namespace = "ns-a"

// Process returns a valid process manifest: one pod template with one
// process using ports, a package, a health check, variables, and a
// configmap and a secret that Resolver() holds. Every call returns a fresh
// value.
func Process() *manifest.Process {
	return &manifest.Process{
		WorkloadHeader: manifest.WorkloadHeader{
			APIVersion:    "v4",
			KindName:      "process",
			Metadata:      manifest.ObjectMeta{Name: "gamesvc", Namespace: Namespace, Labels: map[string]string{"app": "gamesvc"}},
			RestartPolicy: manifest.RestartPolicy{Policy: manifest.RestartOnFailure},
			KillPolicy:    manifest.KillPolicy{GracePeriod: 1},
			Constraint:    Unique(),
		},
		Spec: manifest.ProcessSetSpec{
			Instance: 3,
			Template: manifest.ProcessTemplate{Spec: manifest.ProcessPodSpec{
				Processes: []manifest.ProcessSpec{ProcessSpec()},
			}},
		},
	}
}

// ProcessSpec returns the one process of Process().
func ProcessSpec() manifest.ProcessSpec {
	return manifest.ProcessSpec{
		ProcName: "gamesvr",
		User:     "user",
		WorkPath: "${work_base_dir}/${namespace}.${processname}.${instanceid}/gamesvc",
		PidFile:  "${run_base_dir}/${namespace}.${processname}.${instanceid}/pid/gamesvc.pid",
		Ports: []manifest.ProcessPort{
			{Name: "http_port", HostPort: 8899, Protocol: "HTTP"},
			{Name: "metric_port", HostPort: 0, Protocol: "TCP"},
		},
		URIs: []manifest.URI{{
			Value:      "http://repo.example.com/gamesvc-v1.tar.gz",
			PullPolicy: manifest.PullIfNotPresent,
			OutputDir:  "${work_base_dir}/${namespace}.${processname}.${instanceid}",
		}},
		StartCmd:         "./start.sh --address ${hostip} --service-port ${ports.http_port}",
		StartGracePeriod: 1,
		StopCmd:          "./stop.sh --pidfile ${pidFile}",
		ReloadCmd:        "./reload.sh --pidfile ${pidFile}",
		HealthChecks: []manifest.HealthCheck{{
			Type:                manifest.CheckTCP,
			DelaySeconds:        manifest.DefaultCheckDelaySeconds,
			IntervalSeconds:     manifest.DefaultCheckIntervalSeconds,
			TimeoutSeconds:      manifest.DefaultCheckTimeoutSeconds,
			ConsecutiveFailures: manifest.DefaultCheckConsecutiveFailures,
			GracePeriodSeconds:  manifest.DefaultCheckGracePeriodSeconds,
			TCP:                 &manifest.TCPCheck{PortName: "metric_port"},
		}},
		Resources: manifest.Resources{Limits: manifest.ResourceList{CPU: "2", Memory: "500"}},
		Env: []manifest.EnvVar{
			{Name: "http_port", Value: "${ports.http_port}"},
			{Name: "work_dir", Value: "${workPath}/"},
		},
		Secrets: []manifest.SecretRef{{
			SecretName: "my-secret",
			Items:      []manifest.SecretItem{{Type: manifest.ItemEnv, DataKey: "abc", KeyOrPath: "SECRET_ENV"}},
		}},
		ConfigMaps: []manifest.ConfigMapRef{{
			Name:  "template-configmap",
			Items: []manifest.ConfigMapItem{{Type: manifest.ItemFile, DataKey: "config-one", KeyOrPath: "${work_base_dir}/${namespace}.${processname}.${instanceid}/conf/one.conf"}},
		}},
	}
}

// Application returns a valid application: one BRIDGE container with a
// port, an HTTP health check on it, env variables, a volume, and a
// configmap and a secret that Resolver() holds.
func Application() *manifest.Application {
	return &manifest.Application{
		WorkloadHeader: manifest.WorkloadHeader{
			APIVersion:    "v4",
			KindName:      "application",
			Metadata:      manifest.ObjectMeta{Name: "ri-test-rc-001", Namespace: Namespace},
			RestartPolicy: manifest.RestartPolicy{Policy: manifest.RestartOnFailure},
			KillPolicy:    manifest.KillPolicy{GracePeriod: 1},
			Constraint:    Unique(),
		},
		Spec: manifest.ApplicationSpec{
			Instance: 1,
			Template: manifest.PodTemplate{
				Metadata: manifest.TemplateMeta{Labels: map[string]string{"app": "game"}},
				Spec:     PodSpec(),
			},
		},
	}
}

// PodSpec returns the pod template spec of Application() and Deployment().
func PodSpec() manifest.PodSpec {
	return manifest.PodSpec{
		NetworkMode: manifest.NetworkBridge,
		NetworkType: "cnm",
		Containers:  []manifest.Container{Container()},
	}
}

// Container returns the one container of PodSpec().
func Container() manifest.Container {
	return manifest.Container{
		Type:            "MESOS",
		Command:         "bash",
		Args:            []string{"-c", "sleep 1000"},
		Parameters:      []manifest.Parameter{{Key: "ulimit", Value: "nofile=65535"}},
		Image:           "docker.hub.com/game/server:1",
		ImagePullPolicy: manifest.PullIfNotPresent,
		Env: []manifest.ContainerEnv{
			{Name: "namespace", Value: "${bcs.namespace}"},
			{Name: "http-port", Value: "${bcs.ports.http-port}"},
			{Name: "limits.cpu", ValueFrom: &manifest.EnvSource{ResourceFieldRef: &manifest.ResourceFieldRef{Resource: "limits.cpu"}}},
		},
		Ports: []manifest.ContainerPort{{ContainerPort: 8080, HostPort: 0, Name: "http-port", Protocol: "http"}},
		HealthChecks: []manifest.HealthCheck{{
			Type:                manifest.CheckHTTP,
			DelaySeconds:        manifest.DefaultCheckDelaySeconds,
			IntervalSeconds:     manifest.DefaultCheckIntervalSeconds,
			TimeoutSeconds:      manifest.DefaultCheckTimeoutSeconds,
			ConsecutiveFailures: manifest.DefaultCheckConsecutiveFailures,
			GracePeriodSeconds:  manifest.DefaultCheckGracePeriodSeconds,
			HTTP:                &manifest.HTTPCheck{PortName: "http-port", Scheme: "http", Path: "/check"},
		}},
		Resources: manifest.Resources{
			Limits:   manifest.ResourceList{CPU: "2", Memory: "1024"},
			Requests: manifest.ResourceList{CPU: "0.5", Memory: "512"},
		},
		Volumes: []manifest.Volume{{Name: "logs", Volume: manifest.VolumeSource{HostPath: "/data/logs", MountPath: "/logs"}}},
		Secrets: []manifest.SecretRef{{
			SecretName: "my-secret",
			Items:      []manifest.SecretItem{{Type: manifest.ItemFile, DataKey: "abc", KeyOrPath: "/data/secret.conf"}},
		}},
		ConfigMaps: []manifest.ConfigMapRef{{
			Name:  "template-configmap",
			Items: []manifest.ConfigMapItem{{Type: manifest.ItemEnv, DataKey: "config-one", KeyOrPath: "CONFIG_ONE"}},
		}},
	}
}

// Deployment returns a valid deployment of the PodSpec() template.
func Deployment() *manifest.Deployment {
	return &manifest.Deployment{
		WorkloadHeader: manifest.WorkloadHeader{
			APIVersion:    "v4",
			KindName:      "deployment",
			Metadata:      manifest.ObjectMeta{Name: "deployment-test-001", Namespace: Namespace},
			RestartPolicy: manifest.RestartPolicy{Policy: manifest.RestartAlways, Interval: 5, Backoff: 10},
			KillPolicy:    manifest.KillPolicy{GracePeriod: 10},
		},
		Spec: manifest.DeploymentSpec{
			Instance: 2,
			Selector: map[string]string{"podname": "app-test-001"},
			Strategy: &manifest.Strategy{
				Type: manifest.UpdateRolling,
				RollingUpdate: &manifest.RollingUpdate{
					MaxUnavailable: manifest.Count(1), MaxSurge: manifest.Count(1), UpgradeDuration: 60, RollingOrder: manifest.RollingCreateFirst,
				},
			},
			Template: manifest.DeploymentTemplate{
				Metadata: manifest.TemplateMeta{Name: "deployment-test-001", Namespace: Namespace},
				Spec:     manifest.DeploymentTemplateSpec{PodSpec: PodSpec()},
			},
		},
	}
}

// Daemonset returns a valid daemonset of the PodSpec() template, updated
// one agent at a time.
func Daemonset() *manifest.Daemonset {
	return &manifest.Daemonset{
		WorkloadHeader: manifest.WorkloadHeader{
			APIVersion:    "v4",
			KindName:      "daemonset",
			Metadata:      manifest.ObjectMeta{Name: "daemonset-test-001", Namespace: Namespace},
			RestartPolicy: manifest.RestartPolicy{Policy: manifest.RestartAlways, Interval: 5, Backoff: 10},
			KillPolicy:    manifest.KillPolicy{GracePeriod: 10},
		},
		Spec: manifest.DaemonsetSpec{
			UpdateStrategy: &manifest.UpdateStrategy{Type: manifest.UpdateRolling, MaxUnavailable: manifest.Count(1)},
			Template: manifest.DeploymentTemplate{
				Metadata: manifest.TemplateMeta{Name: "daemonset-test-001", Namespace: Namespace},
				Spec:     manifest.DeploymentTemplateSpec{PodSpec: PodSpec()},
			},
		},
	}
}

// ConfigMap returns the configmap "template-configmap" the fixtures use.
func ConfigMap() *manifest.ConfigMap {
	return &manifest.ConfigMap{
		APIVersion: "v4",
		KindName:   "configmap",
		Metadata:   manifest.ObjectMeta{Name: "template-configmap", Namespace: Namespace},
		Datas: map[string]manifest.ConfigMapData{
			"config-one": {Type: manifest.ConfigDataFile, Content: "Y29uZmlnIGNvbnRleHQ="},
			"config_two": {Type: manifest.ConfigDataHTTP, Content: "http://repo.example.com/a.txt"},
		},
	}
}

// Secret returns the secret "my-secret" the fixtures use.
func Secret() *manifest.Secret {
	return &manifest.Secret{
		APIVersion: "v4",
		KindName:   "secret",
		Metadata:   manifest.ObjectMeta{Name: "my-secret", Namespace: Namespace},
		Datas: map[string]manifest.SecretData{
			"abc": {Path: "/path/in/vault", Content: "c2VjcmV0"},
		},
	}
}

// Service returns a valid service.
func Service() *manifest.Service {
	return &manifest.Service{
		APIVersion: "v4",
		KindName:   "service",
		Metadata:   manifest.ObjectMeta{Name: "template-service", Namespace: Namespace},
		Spec: manifest.ServiceSpec{
			Selector:  map[string]string{"app": "game"},
			Type:      manifest.ServiceClusterIP,
			ClusterIP: []string{"127.0.0.1"},
			Ports:     []manifest.ServicePort{{Name: "http", Protocol: "http", ServicePort: 80, TargetPort: 8080}},
		},
	}
}

// Command returns a valid command.
func Command() *manifest.Command {
	return &manifest.Command{
		APIVersion: "v4",
		KindName:   "Command",
		Spec: manifest.CommandSpec{
			CommandTargetRef: manifest.CommandTarget{Kind: "Deployment", Name: "deployment-test-001", Namespace: Namespace},
			Command:          []string{"/bin/bash", "-c", "ps -ef"},
			User:             "root",
			ReserveTime:      60,
		},
	}
}

// Unique returns the constraint "hostname UNIQUE".
func Unique() *constraint.Constraint {
	return &constraint.Constraint{IntersectionItems: []constraint.IntersectionItem{{
		UnionData: []constraint.UnionData{{Name: "hostname", Operate: constraint.Unique}},
	}}}
}

// Resolver holds configmaps, secrets and hook templates by namespace and
// name.
type Resolver struct {
	ConfigMaps    []*manifest.ConfigMap
	Secrets       []*manifest.Secret
	HookTemplates []*manifest.HookTemplate
	DependsList   []*manifest.Depends
}

var (
	_ manifest.Resolver       = (*Resolver)(nil)
	_ manifest.HookTemplates  = (*Resolver)(nil)
	_ manifest.DependsObjects = (*Resolver)(nil)
)

// NewResolver returns a Resolver holding ConfigMap(), Secret(),
// HookTemplate() and Depends().
func NewResolver() *Resolver {
	return &Resolver{ConfigMaps: []*manifest.ConfigMap{ConfigMap()}, Secrets: []*manifest.Secret{Secret()},
		HookTemplates: []*manifest.HookTemplate{HookTemplate()}, DependsList: []*manifest.Depends{Depends()}}
}

// Depends returns the depends object "logagent": one process, a log
// shipper with a fixed port, kept running (restartPolicy Always).
func Depends() *manifest.Depends {
	d := &manifest.Depends{
		APIVersion: "v4", KindName: "depends",
		Metadata:      manifest.ObjectMeta{Name: "logagent", Namespace: Namespace},
		RestartPolicy: manifest.RestartPolicy{Policy: manifest.RestartAlways},
		KillPolicy:    manifest.KillPolicy{GracePeriod: 1},
	}
	p := ProcessSpec()
	p.ProcName, p.StartCmd = "logagent", "./logagent --port ${ports.log_port}"
	p.Ports = []manifest.ProcessPort{{Name: "log_port", HostPort: 0, Protocol: "TCP"}}
	p.ConfigMaps, p.Secrets, p.HealthChecks, p.Env = nil, nil, nil, nil
	p.Resources.Limits = manifest.ResourceList{CPU: "0.5", Memory: "64"}
	d.Spec.Template.Spec.Processes = []manifest.ProcessSpec{p}
	return d
}

// Depends implements manifest.DependsObjects.
func (r *Resolver) Depends(namespace, name string) (*manifest.Depends, bool) {
	for _, d := range r.DependsList {
		if d.Metadata.Namespace == namespace && d.Metadata.Name == name {
			return d, true
		}
	}
	return nil, false
}

// HookTemplate returns seed 003's example template "test": one web
// metric, asInt(result) < 30 on {$.age}; argument PodName comes from the
// run (the scheduler gives it to PreDeleteHook runs).
func HookTemplate() *manifest.HookTemplate {
	return &manifest.HookTemplate{
		APIVersion: "v4", KindName: "hooktemplate",
		Metadata: manifest.ObjectMeta{Name: "test", Namespace: Namespace},
		Spec: manifest.HookTemplateSpec{
			Args: []manifest.HookArg{{Name: "service-name", Value: "test-gamedeployment-svc"}, {Name: "PodName"}},
			Metrics: []manifest.HookMetric{{
				Name: "webtest", Count: 2, Interval: "60s", SuccessCondition: "asInt(result) < 30",
				Provider: manifest.HookProvider{Web: &manifest.WebProvider{URL: "http://1.1.1.1:9091", JSONPath: "{$.age}"}},
			}},
		},
	}
}

// HookTemplate implements manifest.HookTemplates.
func (r *Resolver) HookTemplate(namespace, name string) (*manifest.HookTemplate, bool) {
	for _, t := range r.HookTemplates {
		if t.Metadata.Namespace == namespace && t.Metadata.Name == name {
			return t, true
		}
	}
	return nil, false
}

// ConfigMap implements manifest.Resolver.
func (r *Resolver) ConfigMap(namespace, name string) (*manifest.ConfigMap, bool) {
	for _, c := range r.ConfigMaps {
		if c.Metadata.Namespace == namespace && c.Metadata.Name == name {
			return c, true
		}
	}
	return nil, false
}

// Secret implements manifest.Resolver.
func (r *Resolver) Secret(namespace, name string) (*manifest.Secret, bool) {
	for _, s := range r.Secrets {
		if s.Metadata.Namespace == namespace && s.Metadata.Name == name {
			return s, true
		}
	}
	return nil, false
}
