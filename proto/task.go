package proto

import (
	"encoding/json"
	"fmt"
)

// Version is the format version this package reads and writes.
const Version = "bcs/v1"

// The roots the process executor gives process pods, ${work_base_dir} and
// ${run_base_dir}, unless both sides are configured otherwise.
const (
	DefaultWorkBaseDir = "/data/bcs/work"
	DefaultRunBaseDir  = "/data/bcs/run"
)

// TaskSpec is the TaskInfo.data of one task of a task group: everything an
// executor needs to run it, with manifest variables already expanded by
// the scheduler. Exactly one of Container and Process is set.
type TaskSpec struct {
	Version string `json:"version"`
	// Instance identifies the instance the task belongs to.
	Instance Instance `json:"instance"`
	// Name is the container's or process's name within the task group.
	Name      string         `json:"name"`
	Container *ContainerSpec `json:"container,omitempty"`
	Process   *ProcessSpec   `json:"process,omitempty"`
	Sweep     *SweepSpec     `json:"sweep,omitempty"`
	// Ports are the task's ports with the host ports the scheduler
	// allocated.
	Ports []Port   `json:"ports,omitempty"`
	Env   []EnvVar `json:"env,omitempty"`
	// Files are configmap and secret items to write before start.
	Files []File `json:"files,omitempty"`
	// Remote are configmap items the executor fetches at launch and then
	// injects as if they were in Env or Files.
	Remote []RemoteItem `json:"remote,omitempty"`
	// HealthChecks are the checks the executor runs (HTTP, TCP, COMMAND);
	// REMOTE_* checks stay with the scheduler.
	HealthChecks []HealthCheck `json:"healthChecks,omitempty"`
	// KillGracePeriodSeconds is the wait between the polite stop and
	// SIGKILL; TaskInfo.kill_policy carries the same value.
	KillGracePeriodSeconds float64   `json:"killGracePeriodSeconds"`
	Resources              Resources `json:"resources"`
	// Identity is the namespace's own user on the agents; nil when the
	// scheduler gives namespaces none (the executors' defaults apply).
	Identity *Identity `json:"identity,omitempty"`
	// Egress is the egress policy of the instance's namespace, which the
	// executor holds every fetch on the task's behalf to (remote items,
	// packages); nil: none (a scheduler from before it).
	Egress *Egress `json:"egress,omitempty"`
	// UsageIntervalSeconds is how often the executor reports the usage of
	// the task's group (UsageReport); 0 or absent: no reports, until a
	// MessageUsageInterval asks for them. Every task of a group carries
	// the same value.
	UsageIntervalSeconds float64 `json:"usageIntervalSeconds,omitempty"`
}

// Identity is who the tasks of a namespace are on an agent: a process
// that names no user, and a container whose user the namespace's policy
// does not allow, run as UID:GID; the files they own are theirs.
type Identity struct {
	UID uint32 `json:"uid"`
	GID uint32 `json:"gid"`
	// Users are the users the namespace's admission policy allows a
	// manifest or a container image to name: names, numeric ids, "*"
	// (any but root) and "root".
	Users []string `json:"users,omitempty"`
	// Range is the scheduler's --namespace-uids, "FIRST-LAST": a uid in
	// it other than UID is another namespace's, refused whatever Users
	// say.
	Range string `json:"range"`
}

// Egress says where an executor may not connect when it fetches on a
// task's behalf: Refused, unless an Allowed entry or a Route lets it.
type Egress struct {
	Refused []EgressRule `json:"refused,omitempty"`
	// Allowed are the namespace's exceptions: "10.1.0.0/16", "10.1.2.3",
	// "127.0.0.1:9090", "prometheus.monitoring:9090". A network or address
	// lifts a network's refusal; an endpoint's needs its address and port.
	Allowed []string `json:"allowed,omitempty"`
	// Routes are URL prefixes fetched even from a refused endpoint: the
	// scheduler's public packages, "http://10.0.0.2:8080/files/".
	Routes []string `json:"routes,omitempty"`
}

// EgressRule is one refusal: Name says what it protects, in messages
// ("loopback", "the Mesos master").
type EgressRule struct {
	Name string `json:"name"`
	// Networks are refused on every port: "127.0.0.0/8".
	Networks []string `json:"networks,omitempty"`
	// Endpoints are "host:port" (an IP or a name) or "*:port" (the port
	// on every address).
	Endpoints []string `json:"endpoints,omitempty"`
}

// Instance names the application instance a task group runs.
type Instance struct {
	Namespace   string `json:"namespace"`
	App         string `json:"app"`
	Index       int    `json:"index"`
	TaskGroupID string `json:"taskGroupID"`
	// Version is the application version the instance runs.
	Version uint64 `json:"version"`
}

// Port is one named port of a task.
type Port struct {
	Name          string `json:"name"`
	ContainerPort int    `json:"containerPort,omitempty"`
	HostPort      int    `json:"hostPort,omitempty"`
	Protocol      string `json:"protocol,omitempty"` // tcp, udp, http
}

// EnvVar is one environment variable.
type EnvVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// EnvList is vars as a process environment: "NAME=value".
func EnvList(vars []EnvVar) []string {
	out := make([]string, 0, len(vars))
	for _, v := range vars {
		out = append(out, v.Name+"="+v.Value)
	}
	return out
}

// File is a configmap or secret item written into the task's filesystem.
type File struct {
	Path     string `json:"path"`
	Content  []byte `json:"content"` // base64 in JSON
	ReadOnly bool   `json:"readOnly,omitempty"`
	User     string `json:"user,omitempty"` // owner; default root
}

// RemoteItem is a configmap item of type http, https or ftp: the
// executor fetches URL (with User and Password; anonymous FTP without)
// and injects the content as the environment variable Env or, when Env
// is empty, as File, whose Content is empty here.
type RemoteItem struct {
	// Source names the item in messages: configmap ns/name item "key".
	Source   string `json:"source"`
	Type     string `json:"type"` // http, https, ftp: URL's scheme
	URL      string `json:"url"`
	User     string `json:"user,omitempty"`
	Password string `json:"password,omitempty"`
	Env      string `json:"env,omitempty"`
	File     *File  `json:"file,omitempty"`
}

// Resources are what the task may use. Zero or negative limits mean no
// limit ("-1" in manifests).
type Resources struct {
	CPUs       float64 `json:"cpus"`       // requested cores (cpu-shares = cpus × 1024)
	MemMB      float64 `json:"memMB"`      // requested memory
	CPULimit   float64 `json:"cpuLimit"`   // cores, CFS quota; ≤ 0 none
	MemLimitMB float64 `json:"memLimitMB"` // ≤ 0 none
	PinCPUs    bool    `json:"pinCPUs"`    // whole CPUs pinned with cpuset (seed 001 NUMA rules)
	MemSwapMB  float64 `json:"memSwapMB"`  // container only; ≤ 0 none
}

// ContainerSpec is a Docker container of a pod.
type ContainerSpec struct {
	Image        string            `json:"image"`
	PullPolicy   string            `json:"pullPolicy"` // Always, IfNotPresent
	PullUser     string            `json:"pullUser,omitempty"`
	PullPassword string            `json:"pullPassword,omitempty"`
	Command      string            `json:"command,omitempty"` // seed 001 "Value": overrides the entrypoint
	Args         []string          `json:"args,omitempty"`    // seed 001 "Arguments"
	Parameters   []Parameter       `json:"parameters,omitempty"`
	Privileged   bool              `json:"privileged,omitempty"`
	Hostname     string            `json:"hostname,omitempty"`
	Labels       map[string]string `json:"labels,omitempty"`
	Volumes      []Volume          `json:"volumes,omitempty"`
	// NetworkMode is HOST, BRIDGE, NONE or USER (CNM), or the CNI network
	// name when NetworkType is "cni".
	NetworkMode string `json:"networkMode"`
	NetworkType string `json:"networkType,omitempty"` // cnm (default) or cni
}

// Parameter is a docker run option from the manifest.
type Parameter struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Volume mounts a host path; an empty HostPath is a pod-private directory
// in the sandbox.
type Volume struct {
	HostPath  string `json:"hostPath,omitempty"`
	MountPath string `json:"mountPath"`
	ReadOnly  bool   `json:"readOnly,omitempty"`
}

// SweepSpec asks an executor to reap what dead executors of the framework
// left on its agent — containers with their network attachments,
// processes, cgroups — and to finish. The scheduler launches it after an
// executor died without cleaning up (REASON_EXECUTOR_TERMINATED).
type SweepSpec struct {
	// Reason says which deaths made the sweep necessary, for the log.
	Reason string `json:"reason,omitempty"`
}

// ProcessSpec is a bare process (seed 000 process fields).
type ProcessSpec struct {
	ProcName         string  `json:"procName"`
	User             string  `json:"user,omitempty"`
	WorkPath         string  `json:"workPath"`
	PidFile          string  `json:"pidFile"`
	URIs             []URI   `json:"uris,omitempty"`
	StartCmd         string  `json:"startCmd"`
	StartGracePeriod float64 `json:"startGracePeriodSeconds"`
	StopCmd          string  `json:"stopCmd,omitempty"`
	ReloadCmd        string  `json:"reloadCmd,omitempty"`
	RestartCmd       string  `json:"restartCmd,omitempty"`
	// WorkBaseDir and RunBaseDir are what ${work_base_dir} and
	// ${run_base_dir} expanded to, inside the executor's own roots (empty:
	// the roots). The instance owns <base>/<namespace>.<app>.<index> under
	// each, and every path above lies in one of those two.
	WorkBaseDir string `json:"workBaseDir,omitempty"`
	RunBaseDir  string `json:"runBaseDir,omitempty"`
}

// URI is a package to fetch before start.
type URI struct {
	Value      string `json:"value"`
	User       string `json:"user,omitempty"`
	Password   string `json:"password,omitempty"`
	PullPolicy string `json:"pullPolicy"` // Always, IfNotPresent
	OutputDir  string `json:"outputDir"`
}

// HealthCheck is a check the executor runs. Port 0 means PortName names a
// port of the task: in BRIDGE mode its hostPort when > 0, else its
// containerPort; in other modes its containerPort (seed 000).
type HealthCheck struct {
	Type                string            `json:"type"` // HTTP, TCP, COMMAND
	DelaySeconds        float64           `json:"delaySeconds"`
	IntervalSeconds     float64           `json:"intervalSeconds"`
	TimeoutSeconds      float64           `json:"timeoutSeconds"`
	GracePeriodSeconds  float64           `json:"gracePeriodSeconds"`
	ConsecutiveFailures int               `json:"consecutiveFailures"` // 0: never kill
	Port                int               `json:"port,omitempty"`
	PortName            string            `json:"portName,omitempty"`
	Scheme              string            `json:"scheme,omitempty"`
	Path                string            `json:"path,omitempty"`
	Headers             map[string]string `json:"headers,omitempty"`
	Command             string            `json:"command,omitempty"`
}

// Encode returns the TaskInfo.data of spec, stamped with Version.
func (spec *TaskSpec) Encode() ([]byte, error) {
	spec.Version = Version
	return json.Marshal(spec)
}

// DecodeTaskSpec reads TaskInfo.data; a spec of another version,
// without exactly one of container, process and sweep, or with a usage
// interval UsageInterval refuses, is an error. Fields this build does not
// know are ignored (a newer scheduler's additions).
func DecodeTaskSpec(data []byte) (*TaskSpec, error) {
	var spec TaskSpec
	if err := decode(data, &spec, &spec.Version); err != nil {
		return nil, err
	}
	set := 0
	for _, present := range []bool{spec.Container != nil, spec.Process != nil, spec.Sweep != nil} {
		if present {
			set++
		}
	}
	if set != 1 {
		return nil, fmt.Errorf("task spec %q: exactly one of container, process and sweep must be set", spec.Name)
	}
	if _, err := UsageInterval("usageIntervalSeconds", spec.UsageIntervalSeconds); err != nil {
		return nil, fmt.Errorf("task spec %q: %w", spec.Name, err)
	}
	return &spec, nil
}

func decode(data []byte, v any, version *string) error {
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("bcs proto: %w", err)
	}
	if *version != Version {
		return fmt.Errorf("bcs proto: version %q, this build reads %q", *version, Version)
	}
	return nil
}
