package manifest

// Service is kind "service": a stable address for the task groups whose
// labels match Spec.Selector.
type Service struct {
	APIVersion string      `json:"apiVersion"`
	KindName   string      `json:"kind"`
	Metadata   ObjectMeta  `json:"metadata"`
	Spec       ServiceSpec `json:"spec"`
}

// Kind implements Object.
func (*Service) Kind() Kind { return KindService }

// Default sets the default namespace.
func (s *Service) Default() { s.Metadata.Default() }

func (s *Service) normalize() { s.Metadata.normalize() }

// Service types.
const (
	ServiceClusterIP   = "ClusterIP"
	ServiceNodePort    = "NodePort"
	ServiceNone        = "None"
	ServiceIntegration = "Integration"
)

// ServiceSpec is a service's "spec".
type ServiceSpec struct {
	Selector  map[string]string `json:"selector"`
	Type      string            `json:"type"`
	ClusterIP []string          `json:"clusterIP,omitempty"`
	Ports     []ServicePort     `json:"ports"`
}

// ServicePort maps ServicePort to the task groups' TargetPort.
type ServicePort struct {
	Name        string `json:"name"`
	DomainName  string `json:"domainName,omitempty"`
	Path        string `json:"path,omitempty"`
	Protocol    string `json:"protocol"`
	ServicePort int    `json:"servicePort"`
	TargetPort  int    `json:"targetPort"`
	NodePort    int    `json:"nodePort,omitempty"`
}

// Command is kind "command": a command run once in the task groups of a
// deployment or application.
type Command struct {
	APIVersion string      `json:"apiVersion"`
	KindName   string      `json:"kind"`
	Spec       CommandSpec `json:"spec"`
}

// Kind implements Object.
func (*Command) Kind() Kind { return KindCommand }

func (c *Command) normalize() {
	if c.Spec.CommandTargetRef.Namespace == "" {
		c.Spec.CommandTargetRef.Namespace = DefaultNamespace
	}
}

// CommandSpec is a command's "spec".
type CommandSpec struct {
	CommandTargetRef CommandTarget `json:"commandTargetRef"`
	// TaskGroups narrows the command to these task groups; empty: all.
	TaskGroups []string `json:"taskgroups,omitempty"`
	Command    []string `json:"command"`
	Env        []string `json:"env,omitempty"`
	User       string   `json:"user,omitempty"`
	WorkingDir string   `json:"workingDir,omitempty"`
	Privileged bool     `json:"privileged"`
	// ReserveTime is how long the command's result is kept (the reference
	// does not say in which unit).
	ReserveTime int `json:"reserveTime"`
}

// CommandTarget names the deployment or application a command runs in.
type CommandTarget struct {
	// Kind is "Deployment" or "Application" (any case).
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
}
