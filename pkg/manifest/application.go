package manifest

// Application is kind "application": Spec.Instance task groups of
// containers.
type Application struct {
	WorkloadHeader
	// Stateful instances keep state on their agent: drains and drifts
	// leave them where they are unless forced (seed 002).
	Stateful bool            `json:"stateful,omitempty"`
	Spec     ApplicationSpec `json:"spec"`
}

// Kind implements Object.
func (*Application) Kind() Kind { return KindApplication }

func (a *Application) normalize() {
	a.Metadata.normalize()
	a.Spec.Template.Spec.normalize()
}

// ApplicationSpec is an application's "spec".
type ApplicationSpec struct {
	// Instance is the number of task groups (pods).
	Instance int         `json:"instance"`
	Template PodTemplate `json:"template"`
}

// PodTemplate describes every task group of an application.
type PodTemplate struct {
	Metadata TemplateMeta `json:"metadata"`
	Spec     PodSpec      `json:"spec"`
}

// NetworkMode is the Docker network of a task group (seed 001, upper case).
type NetworkMode string

// Seed 001: HOST, NONE, BRIDGE, USER.
const (
	NetworkHost   NetworkMode = "HOST"
	NetworkBridge NetworkMode = "BRIDGE"
	NetworkNone   NetworkMode = "NONE"
	NetworkUser   NetworkMode = "USER"
)

// PodSpec is the "spec" of a pod template.
type PodSpec struct {
	Containers  []Container `json:"containers"`
	NetworkMode NetworkMode `json:"networkMode"`
	// NetworkType is "cnm" (Docker networks) or "cni" (seed 001).
	NetworkType string    `json:"networkType,omitempty" alias:"networktype"`
	NetLimit    *NetLimit `json:"netLimit,omitempty"`
	// Depends names the depends objects whose pods run next to every
	// instance (seed 002).
	Depends []DependsRef `json:"depends,omitempty"`
}

func (s *PodSpec) normalize() {
	for i := range s.Containers {
		for j := range s.Containers[i].HealthChecks {
			s.Containers[i].HealthChecks[j].normalize()
		}
	}
}

// NetLimit limits a task group's network traffic.
type NetLimit struct {
	EgressLimit int `json:"egressLimit"`
}

// Container is one container of a task group.
type Container struct {
	Hostname string `json:"hostname,omitempty"`
	// Type is the containerizer: "DOCKER" or "MESOS".
	Type    string   `json:"type,omitempty"`
	Command string   `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
	// Parameters are extra docker run options ("ulimit": "nofile=65535"),
	// those pkg/dockerparam reads.
	Parameters      []Parameter     `json:"parameters,omitempty"`
	Env             []ContainerEnv  `json:"env,omitempty"`
	Image           string          `json:"image"`
	ImagePullUser   string          `json:"imagePullUser,omitempty"`
	ImagePullPasswd string          `json:"imagePullPasswd,omitempty"`
	ImagePullPolicy PullPolicy      `json:"imagePullPolicy"`
	Privileged      bool            `json:"privileged"`
	Ports           []ContainerPort `json:"ports,omitempty"`
	HealthChecks    []HealthCheck   `json:"healthChecks,omitempty"`
	Resources       Resources       `json:"resources"`
	// Cpuset pins the container to limits.cpu cores of its own, a whole
	// number, on one NUMA node of the agent (seed 001; the original's
	// "cpuset", docker's cpuset-cpus and cpuset-mems).
	Cpuset     bool           `json:"cpuset,omitempty"`
	Volumes    []Volume       `json:"volumes,omitempty"`
	Secrets    []SecretRef    `json:"secrets,omitempty"`
	ConfigMaps []ConfigMapRef `json:"configmaps,omitempty"`
}

// Default sets imagePullPolicy IfNotPresent (seed 000).
func (c *Container) Default() { c.ImagePullPolicy = PullIfNotPresent }

// Parameter is one docker run option.
type Parameter struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// ContainerEnv is one environment variable of a container: a value, which
// may use ${bcs.*} variables, or a resource field.
type ContainerEnv struct {
	Name      string     `json:"name"`
	Value     string     `json:"value,omitempty"`
	ValueFrom *EnvSource `json:"valueFrom,omitempty"`
}

// EnvSource is an environment variable's "valueFrom".
type EnvSource struct {
	ResourceFieldRef *ResourceFieldRef `json:"resourceFieldRef"`
}

// ResourceFieldRef names a resource of the container: "requests.cpu",
// "requests.memory", "limits.cpu" or "limits.memory".
type ResourceFieldRef struct {
	Resource string `json:"resource"`
}

// ContainerPort is one port of a container. Seed 001: in HOST mode a
// containerPort of 0 is allocated by the scheduler; in BRIDGE mode a
// hostPort of 0 is.
type ContainerPort struct {
	ContainerPort int    `json:"containerPort"`
	HostPort      int    `json:"hostPort"`
	Name          string `json:"name"`
	Protocol      string `json:"protocol"`
}

// Volume mounts a host path into a container.
type Volume struct {
	Name   string       `json:"name"`
	Volume VolumeSource `json:"volume"`
}

// VolumeSource is a volume's host and container paths.
type VolumeSource struct {
	HostPath  string `json:"hostPath"`
	MountPath string `json:"mountPath"`
	ReadOnly  bool   `json:"readOnly"`
}

// Resources are a container's or process's "resources". Quantities: cpu in
// cores, memory in MB; "-1" is unlimited (seed 000).
type Resources struct {
	Limits   ResourceList `json:"limits"`
	Requests ResourceList `json:"requests"`
}

// Resources a task asks for when its manifest gives neither requests nor a
// bounded limit: enough to start a small process.
const (
	DefaultCPUs  = 0.1
	DefaultMemMB = 64
)

// Take is what a task takes from a Mesos offer, and the fields that say
// it ("" for a default).
type Take struct {
	CPUs, MemMB        float64
	CPUField, MemField string // e.g. "requests.cpu", "limits.memory"
}

// Taken is what a task with these resources takes from a Mesos offer:
// its requests place it; without one, a bounded limit is also the
// request; without either, the defaults.
func (r Resources) Taken() (Take, error) {
	var t Take
	var err error
	if t.CPUs, t.CPUField, err = taken("cpu", r.Requests.CPU, r.Limits.CPU, DefaultCPUs); err != nil {
		return Take{}, err
	}
	if t.MemMB, t.MemField, err = taken("memory", r.Requests.Memory, r.Limits.Memory, DefaultMemMB); err != nil {
		return Take{}, err
	}
	return t, nil
}

func taken(name string, request, limit Quantity, def float64) (float64, string, error) {
	for _, q := range []struct {
		field string
		q     Quantity
	}{{"requests." + name, request}, {"limits." + name, limit}} {
		a, err := q.q.Parse()
		if err != nil {
			return 0, "", err
		}
		if a.Set && !a.Unlimited && a.Milli > 0 {
			return a.Value(), q.field, nil
		}
	}
	return def, "", nil
}

// ResourceList is "limits" or "requests".
type ResourceList struct {
	CPU    Quantity `json:"cpu,omitempty"`
	Memory Quantity `json:"memory,omitempty"`
}
