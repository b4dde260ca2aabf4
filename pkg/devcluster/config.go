package devcluster

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/jonboulle/clockwork"
)

// ExecutorMode selects how agents run executors.
type ExecutorMode string

const (
	// ExecutorSimulated runs no processes: every task goes TASK_STARTING then
	// TASK_RUNNING after Config.SimulatedStartDelay and stays there until it
	// is killed or failed through Cluster.FailTask; the framework messages
	// an executor gets are kept (Cluster.ExecutorMessages) and a test
	// answers through Cluster.SendExecutorMessage. Cheap enough for
	// thousands of agents.
	ExecutorSimulated ExecutorMode = "simulated"
	// ExecutorProcess starts each executor as a real child process that
	// talks to its agent's /api/v1/executor endpoint.
	ExecutorProcess ExecutorMode = "process"
)

// Config describes a dev cluster. The zero value is usable: Start fills the
// defaults documented on each field.
type Config struct {
	// ListenAddr is the master's address; default "127.0.0.1:5050". Use
	// "127.0.0.1:0" in tests. Only loopback addresses are accepted.
	ListenAddr string `json:"listen_addr,omitempty"`
	// WorkDir holds the agents' sandboxes and, in process mode, under
	// meta/ (private to the cluster's user) the master's registry and the
	// agents' checkpoints, from which a cluster started again on it
	// recovers (Start); default a new temporary directory that Stop
	// removes.
	WorkDir string `json:"work_dir,omitempty"`
	// Agents are registered at start; default three agents
	// (DefaultAgents). An explicit empty list (NoAgents) starts none.
	Agents []AgentSpec `json:"agents,omitempty"`
	// NoAgents starts the cluster without agents even though Agents is
	// empty.
	NoAgents bool `json:"no_agents,omitempty"`

	// ExecutorMode; default ExecutorSimulated.
	ExecutorMode ExecutorMode `json:"executor_mode,omitempty"`

	// HeartbeatInterval between HEARTBEAT events; default 15s like Mesos.
	HeartbeatInterval Duration `json:"heartbeat_interval,omitempty"`
	// AllocationInterval between offer rounds; default 1s like Mesos.
	AllocationInterval Duration `json:"allocation_interval,omitempty"`
	// DefaultRefuse is the refusal filter applied when DECLINE or ACCEPT
	// carries no filters.refuse_seconds; default 5s like Mesos.
	DefaultRefuse Duration `json:"default_refuse,omitempty"`
	// StatusUpdateRetry is the first resend interval of an unacknowledged
	// status update (doubling up to StatusUpdateRetryMax); default 10s and
	// 10m like the Mesos agent.
	StatusUpdateRetry    Duration `json:"status_update_retry,omitempty"`
	StatusUpdateRetryMax Duration `json:"status_update_retry_max,omitempty"`
	// SimulatedStartDelay between TASK_STARTING and TASK_RUNNING in
	// simulated mode; default 100ms.
	SimulatedStartDelay Duration `json:"simulated_start_delay,omitempty"`
	// SimulatedMessages answers the framework messages of simulated
	// executors as the executors they stand for would (SimulatedAnswer),
	// SimulatedAnswerDelay after each; nil: messages are only kept.
	SimulatedMessages    func(data []byte) SimulatedAnswer `json:"-"`
	SimulatedAnswerDelay Duration                          `json:"simulated_answer_delay,omitempty"`
	// ExecutorShutdownGracePeriod when ExecutorInfo has none; default 5s
	// like Mesos.
	ExecutorShutdownGracePeriod Duration `json:"executor_shutdown_grace_period,omitempty"`
	// ExecutorRegistrationTimeout is how long a started executor process
	// may take to SUBSCRIBE before the agent kills it; default 1m like Mesos.
	ExecutorRegistrationTimeout Duration `json:"executor_registration_timeout,omitempty"`
	// ExecutorReregistrationTimeout is how long a restarted agent
	// (RestartAgent, or the cluster started again on its work dir) waits
	// for its executors to subscribe again before it kills them; default
	// 2s like Mesos' --executor_reregistration_timeout. bcs executors
	// wait at most half of SubscriptionBackoffMax between attempts (Mesos'
	// own library up to all of it): a timeout no longer than that may
	// miss one that is on its way back.
	ExecutorReregistrationTimeout Duration `json:"executor_reregistration_timeout,omitempty"`
	// RecoveryTimeout and SubscriptionBackoffMax are given to executors of
	// checkpointing frameworks; defaults 15m and 2s like Mesos.
	RecoveryTimeout        Duration `json:"recovery_timeout,omitempty"`
	SubscriptionBackoffMax Duration `json:"subscription_backoff_max,omitempty"`
	// SandboxGCDelay removes an executor's sandbox that long after the
	// executor ended; default one week like the Mesos agent's --gc_delay.
	SandboxGCDelay Duration `json:"sandbox_gc_delay,omitempty"`

	// SSLCertFile and SSLKeyFile (PEM) make the master and the agents
	// serve HTTPS only, as Mesos does with LIBPROCESS_SSL_ENABLED=true and
	// LIBPROCESS_SSL_CERT_FILE and LIBPROCESS_SSL_KEY_FILE (no
	// downgrade): their executors are given LIBPROCESS_SSL_ENABLED=true,
	// and with SSLCAFile LIBPROCESS_SSL_CA_FILE and
	// LIBPROCESS_SSL_VERIFY_SERVER_CERT=true, as an agent's
	// --executor_environment_variables would.
	SSLCertFile string `json:"ssl_cert_file,omitempty"`
	SSLKeyFile  string `json:"ssl_key_file,omitempty"`
	SSLCAFile   string `json:"ssl_ca_file,omitempty"`
	// Credentials names a Mesos credentials file, JSON
	// {"credentials":[{"principal":"…","secret":"…"}]} like the master's
	// --credentials, that the Authenticate switches check HTTP Basic
	// authentication against (the "basic" authenticator).
	Credentials string `json:"credentials,omitempty"`
	// AuthenticateHTTPFrameworks makes every scheduler API call
	// authenticate (401 otherwise), and a framework's principal be the
	// authenticated one, as --authenticate_http_frameworks
	// --http_framework_authenticators=basic.
	AuthenticateHTTPFrameworks bool `json:"authenticate_http_frameworks,omitempty"`
	// AuthenticateHTTPReadwrite makes the operator API authenticate
	// (--authenticate_http_readwrite).
	AuthenticateHTTPReadwrite bool `json:"authenticate_http_readwrite,omitempty"`
	// AuthenticateHTTPReadonly makes the master's /master/state,
	// /master/tasks and /master/frameworks and the agents' files API
	// authenticate (--authenticate_http_readonly of the master and of
	// the agents, which here share Credentials).
	AuthenticateHTTPReadonly bool `json:"authenticate_http_readonly,omitempty"`

	// Logger receives the cluster's log lines; default slog.Default()
	// with component=devcluster.
	Logger *slog.Logger `json:"-"`
	// Clock drives every timer of the cluster (heartbeats, allocation,
	// refusal filters, update retries, grace periods, registration and
	// failover timeouts) and its timestamps; default the wall clock.
	Clock clockwork.Clock `json:"-"`
}

// AgentSpec describes one simulated agent.
type AgentSpec struct {
	// ID is the agent ID; default "<cluster id>-S<n>".
	ID string `json:"id,omitempty"`
	// Hostname reported in offers and AgentInfo; default "agent-<n>".
	Hostname string `json:"hostname,omitempty"`
	// Resources; zero fields take the defaults of DefaultResources.
	Resources ResourceSpec `json:"resources"`
	// Attributes in the order they are reported.
	Attributes []AttributeSpec `json:"attributes,omitempty"`
}

// ResourceSpec is an agent's total unreserved resources.
type ResourceSpec struct {
	CPUs   float64     `json:"cpus,omitempty"`
	MemMB  float64     `json:"mem,omitempty"`
	DiskMB float64     `json:"disk,omitempty"`
	Ports  []PortRange `json:"ports,omitempty"`
}

// PortRange is an inclusive range, like Mesos' "[31000-32000]".
type PortRange struct {
	Begin uint64 `json:"begin"`
	End   uint64 `json:"end"`
}

// AttributeSpec is one agent attribute: exactly one of Text, Scalar or Set.
type AttributeSpec struct {
	Name   string   `json:"name"`
	Text   *string  `json:"text,omitempty"`
	Scalar *float64 `json:"scalar,omitempty"`
	Set    []string `json:"set,omitempty"`
}

// TextAttribute, ScalarAttribute and SetAttribute build AttributeSpecs.
func TextAttribute(name, value string) AttributeSpec { return AttributeSpec{Name: name, Text: &value} }

// ScalarAttribute builds a SCALAR attribute.
func ScalarAttribute(name string, value float64) AttributeSpec {
	return AttributeSpec{Name: name, Scalar: &value}
}

// SetAttribute builds a SET attribute.
func SetAttribute(name string, items ...string) AttributeSpec {
	return AttributeSpec{Name: name, Set: items}
}

// DefaultResources is what an agent has when its spec leaves a field zero.
var DefaultResources = ResourceSpec{CPUs: 4, MemMB: 8192, DiskMB: 20480, Ports: []PortRange{{31000, 32000}}}

// DefaultAgents returns the three agents a default cluster starts with.
func DefaultAgents() []AgentSpec {
	specs := make([]AgentSpec, 3)
	for i := range specs {
		specs[i] = AgentSpec{
			Hostname: fmt.Sprintf("agent-%d", i+1),
			Attributes: []AttributeSpec{
				TextAttribute("rack", fmt.Sprintf("r%d", i+1)),
				TextAttribute("idc", "dev"),
			},
		}
	}
	return specs
}

// Duration is a time.Duration that reads and writes JSON as a Go duration
// string ("1.5s") or a number of seconds.
type Duration time.Duration

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// MarshalJSON writes d as a Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON accepts "250ms" style strings or seconds as a number.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("duration %q: %w", s, errdefs.ErrInvalidArgument)
		}
		*d = Duration(v)
		return nil
	}
	var secs float64
	if err := json.Unmarshal(b, &secs); err != nil {
		return fmt.Errorf("duration %s: %w", b, errdefs.ErrInvalidArgument)
	}
	*d = Duration(secs * float64(time.Second))
	return nil
}

// LoadConfig reads a Config from a JSON file.
func LoadConfig(path string) (Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("read dev cluster config %q: %w", path, err)
	}
	var cfg Config
	if err := json.Unmarshal(b, &cfg); err != nil {
		return Config{}, fmt.Errorf("parse dev cluster config %q: %v: %w", path, err, errdefs.ErrInvalidArgument)
	}
	return cfg, nil
}

func (cfg Config) withDefaults() Config {
	if cfg.ListenAddr == "" {
		cfg.ListenAddr = "127.0.0.1:5050"
	}
	if len(cfg.Agents) == 0 && !cfg.NoAgents {
		cfg.Agents = DefaultAgents()
	}
	if cfg.ExecutorMode == "" {
		cfg.ExecutorMode = ExecutorSimulated
	}
	def := func(d *Duration, v time.Duration) {
		if *d <= 0 {
			*d = Duration(v)
		}
	}
	def(&cfg.HeartbeatInterval, 15*time.Second)
	def(&cfg.AllocationInterval, time.Second)
	def(&cfg.DefaultRefuse, 5*time.Second)
	def(&cfg.StatusUpdateRetry, 10*time.Second)
	def(&cfg.StatusUpdateRetryMax, 10*time.Minute)
	def(&cfg.SimulatedStartDelay, 100*time.Millisecond)
	def(&cfg.SimulatedAnswerDelay, 100*time.Millisecond)
	def(&cfg.ExecutorShutdownGracePeriod, 5*time.Second)
	def(&cfg.ExecutorRegistrationTimeout, time.Minute)
	def(&cfg.ExecutorReregistrationTimeout, 2*time.Second)
	def(&cfg.RecoveryTimeout, 15*time.Minute)
	def(&cfg.SandboxGCDelay, 7*24*time.Hour)
	def(&cfg.SubscriptionBackoffMax, 2*time.Second)
	if cfg.Logger == nil {
		cfg.Logger = slog.Default().With("component", "devcluster")
	}
	if cfg.Clock == nil {
		cfg.Clock = clockwork.NewRealClock()
	}
	return cfg
}

func (cfg Config) validate() error {
	switch cfg.ExecutorMode {
	case ExecutorSimulated, ExecutorProcess:
	default:
		return fmt.Errorf("executor mode %q: %w", cfg.ExecutorMode, errdefs.ErrInvalidArgument)
	}
	if err := loopbackOnly(cfg.ListenAddr); err != nil {
		return err
	}
	if (cfg.SSLCertFile == "") != (cfg.SSLKeyFile == "") {
		return fmt.Errorf("ssl_cert_file and ssl_key_file go together: %w", errdefs.ErrInvalidArgument)
	}
	if cfg.SSLCAFile != "" && cfg.SSLCertFile == "" {
		return fmt.Errorf("ssl_ca_file needs ssl_cert_file and ssl_key_file: %w", errdefs.ErrInvalidArgument)
	}
	seen := map[string]bool{}
	for _, a := range cfg.Agents {
		if err := a.validate(); err != nil {
			return err
		}
		if a.ID != "" {
			if seen[a.ID] {
				return fmt.Errorf("agent %q listed twice: %w", a.ID, errdefs.ErrInvalidArgument)
			}
			seen[a.ID] = true
		}
	}
	return nil
}

func (a AgentSpec) validate() error {
	for _, at := range a.Attributes {
		n := 0
		if at.Text != nil {
			n++
		}
		if at.Scalar != nil {
			n++
		}
		if at.Set != nil {
			n++
		}
		if at.Name == "" || n != 1 {
			return fmt.Errorf("agent %q attribute %q must have a name and exactly one of text, scalar, set: %w", a.Hostname, at.Name, errdefs.ErrInvalidArgument)
		}
	}
	for _, r := range a.Resources.Ports {
		if r.End < r.Begin {
			return fmt.Errorf("agent %q port range [%d-%d]: %w", a.Hostname, r.Begin, r.End, errdefs.ErrInvalidArgument)
		}
	}
	return nil
}
