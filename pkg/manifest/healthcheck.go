package manifest

import "strings"

// HealthCheckType is a health check's "type" (seed 000).
type HealthCheckType string

// HTTP, TCP and COMMAND run on the agent, at most one of them per task;
// REMOTE_HTTP and REMOTE_TCP run from the scheduler side and may be
// combined with them.
const (
	CheckHTTP       HealthCheckType = "HTTP"
	CheckTCP        HealthCheckType = "TCP"
	CheckCommand    HealthCheckType = "COMMAND"
	CheckRemoteHTTP HealthCheckType = "REMOTE_HTTP"
	CheckRemoteTCP  HealthCheckType = "REMOTE_TCP"
)

// MaxHealthChecks is seed 000's "at most three checks".
const MaxHealthChecks = 3

// Health check defaults: Mesos's HealthCheck defaults (seed 001), except
// TimeoutSeconds: Mesos's 20 would break seed 000's rule
// timeoutSeconds < intervalSeconds against the interval default of 10.
const (
	DefaultCheckDelaySeconds        = 15
	DefaultCheckIntervalSeconds     = 10
	DefaultCheckTimeoutSeconds      = 5
	DefaultCheckConsecutiveFailures = 3
	DefaultCheckGracePeriodSeconds  = 10
)

// HealthCheck is one entry of "healthChecks".
type HealthCheck struct {
	Type HealthCheckType `json:"type"`
	// DelaySeconds waits after start before the first check.
	DelaySeconds int `json:"delaySeconds"`
	// IntervalSeconds separates two checks.
	IntervalSeconds int `json:"intervalSeconds"`
	// TimeoutSeconds fails a check that takes longer; it must be less
	// than IntervalSeconds.
	TimeoutSeconds int `json:"timeoutSeconds"`
	// ConsecutiveFailures kills the task after that many failures in a
	// row; 0 never kills.
	ConsecutiveFailures int `json:"consecutiveFailures"`
	// GracePeriodSeconds ignores failures for that long after start, or
	// until the task is first healthy.
	GracePeriodSeconds int           `json:"gracePeriodSeconds"`
	Command            *CommandCheck `json:"command,omitempty"`
	HTTP               *HTTPCheck    `json:"http,omitempty"`
	TCP                *TCPCheck     `json:"tcp,omitempty"`

	// Protocol and Path are the older marathon-style spelling the
	// deployment reference uses ("protocol": "tcp", "path": "/..."). When
	// Type is empty, Parse takes the type from Protocol (upper-cased); Path
	// becomes http.path of an HTTP check without one.
	Protocol string `json:"protocol,omitempty"`
	Path     string `json:"path,omitempty"`
}

// Default sets the health check defaults.
func (h *HealthCheck) Default() {
	h.DelaySeconds = DefaultCheckDelaySeconds
	h.IntervalSeconds = DefaultCheckIntervalSeconds
	h.TimeoutSeconds = DefaultCheckTimeoutSeconds
	h.ConsecutiveFailures = DefaultCheckConsecutiveFailures
	h.GracePeriodSeconds = DefaultCheckGracePeriodSeconds
}

func (h *HealthCheck) normalize() {
	if h.Type == "" && h.Protocol != "" {
		h.Type = HealthCheckType(strings.ToUpper(h.Protocol))
	}
	if h.Path != "" && h.HTTP != nil && h.HTTP.Path == "" {
		h.HTTP.Path = h.Path
	}
}

// CommandCheck runs a command; exit status 0 is healthy.
type CommandCheck struct {
	Value string `json:"value"`
}

// HTTPCheck sends GET scheme://host:port/path; 200-399 is healthy.
type HTTPCheck struct {
	// Port is checked when > 0; otherwise PortName names a port of the
	// task (BRIDGE: its hostPort when > 0, else its containerPort).
	Port     int    `json:"port"`
	PortName string `json:"portName,omitempty"`
	// Scheme is "http" (default) or "https" (not verified).
	Scheme string `json:"scheme"`
	Path   string `json:"path,omitempty"`
	// Headers are sent by REMOTE_HTTP checks only.
	Headers map[string]string `json:"headers,omitempty"`
}

// Default sets scheme http.
func (h *HTTPCheck) Default() { h.Scheme = "http" }

// TCPCheck connects to a port; a connection is healthy.
type TCPCheck struct {
	Port     int    `json:"port"`
	PortName string `json:"portName,omitempty"`
}
