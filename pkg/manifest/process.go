package manifest

// Process is kind "process": Spec.Instance pods of bare processes, run in
// the agent's network namespace (seed 000).
type Process struct {
	WorkloadHeader
	// Stateful instances keep state on their agent: drains and drifts
	// leave them where they are unless forced (seed 002).
	Stateful bool           `json:"stateful,omitempty"`
	Spec     ProcessSetSpec `json:"spec"`
}

// Kind implements Object.
func (*Process) Kind() Kind { return KindProcess }

func (p *Process) normalize() {
	p.Metadata.normalize()
	for i := range p.Spec.Template.Spec.Processes {
		p.Spec.Template.Spec.Processes[i].normalize()
	}
}

func (p *ProcessSpec) normalize() {
	for i := range p.HealthChecks {
		p.HealthChecks[i].normalize()
	}
}

// ProcessSetSpec is a process manifest's "spec".
type ProcessSetSpec struct {
	// Instance is the number of pods.
	Instance int             `json:"instance"`
	Template ProcessTemplate `json:"template"`
}

// ProcessTemplate describes every pod of a process manifest.
type ProcessTemplate struct {
	Spec ProcessPodSpec `json:"spec"`
}

// ProcessPodSpec lists the processes of one pod.
type ProcessPodSpec struct {
	Processes []ProcessSpec `json:"processes"`
	// Depends names the depends objects whose pods run next to every
	// instance (seed 002).
	Depends []DependsRef `json:"depends,omitempty"`
}

// ProcessSpec defines one process. Every string may use the process
// variables (see ExpandProcess).
type ProcessSpec struct {
	// ProcName is the executable's name; with the pid it tells whether the
	// process is alive.
	ProcName string `json:"procName"`
	User     string `json:"user,omitempty"`
	// WorkPath is the directory the commands run in.
	WorkPath string `json:"workPath"`
	// PidFile holds the process's pid; it must be absolute once expanded.
	PidFile string        `json:"pidFile"`
	Ports   []ProcessPort `json:"ports,omitempty"`
	URIs    []URI         `json:"uris,omitempty"`
	// StartCmd starts the process; StartGracePeriod is how long to wait
	// for it to come up, in seconds (default 1).
	StartCmd         string         `json:"startCmd"`
	StartGracePeriod int            `json:"startGracePeriod"`
	StopCmd          string         `json:"stopCmd,omitempty"`
	ReloadCmd        string         `json:"reloadCmd,omitempty"`
	RestartCmd       string         `json:"restartCmd,omitempty"`
	HealthChecks     []HealthCheck  `json:"healthChecks,omitempty"`
	Resources        Resources      `json:"resources"`
	Env              []EnvVar       `json:"env,omitempty"`
	Secrets          []SecretRef    `json:"secrets,omitempty"`
	ConfigMaps       []ConfigMapRef `json:"configmaps,omitempty"`
}

// Default sets startGracePeriod 1 (seed 000).
func (p *ProcessSpec) Default() { p.StartGracePeriod = 1 }

// ProcessPort is a port of a process, on the agent's network. A hostPort of
// 0 is allocated by the scheduler from 31000-32000.
type ProcessPort struct {
	Name     string `json:"name"`
	HostPort int    `json:"hostPort"`
	Protocol string `json:"protocol"`
}

// URI is a package fetched before the process starts.
type URI struct {
	// Value is an http://, https:// or file:// address.
	Value      string     `json:"value"`
	User       string     `json:"user,omitempty"`
	Pwd        string     `json:"pwd,omitempty"`
	PullPolicy PullPolicy `json:"pullPolicy"`
	// OutputDir is where the package is unpacked.
	OutputDir string `json:"outputDir,omitempty"`
}

// Default sets pullPolicy IfNotPresent (seed 000).
func (u *URI) Default() { u.PullPolicy = PullIfNotPresent }

// EnvVar is one environment variable of a process.
type EnvVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}
