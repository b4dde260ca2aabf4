package schedulerd

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/admission"
	"github.com/bcs-mesos/bcs-mesos/pkg/auth"
	"github.com/bcs-mesos/bcs-mesos/pkg/devcluster"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/identity"
	"github.com/bcs-mesos/bcs-mesos/pkg/mesosconn"
	"github.com/bcs-mesos/bcs-mesos/pkg/mesoswire"
	"github.com/bcs-mesos/bcs-mesos/pkg/notify"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/scheduler"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
	"github.com/bcs-mesos/bcs-mesos/pkg/tlsfiles"
	"github.com/bcs-mesos/bcs-mesos/pkg/vaultsecrets"
)

// Defaults of Options, which bcs-scheduler's flags show.
const (
	DefaultListen  = "127.0.0.1:8080"
	DefaultDataDir = "./bcs-data"
)

// Options configure a bcs-scheduler process.
type Options struct {
	Listen string // API address; default 127.0.0.1:8080
	// DebugAddr serves net/http/pprof there (loopback only); empty: not.
	DebugAddr string
	// AdvertiseURL is how other replicas, clients following a redirect
	// and agents (${scheduler_url}) reach this API; default
	// http://<Listen's address>.
	AdvertiseURL  string
	DataDir       string   // embedded etcd, secret key, dev cluster sandboxes; default ./bcs-data
	EtcdEndpoints []string // external etcd; empty runs an embedded one
	// EtcdTLS is the client side of https:// EtcdEndpoints.
	EtcdTLS EtcdTLS
	// EtcdQuotaBytes is the embedded etcd's quota
	// (--quota-backend-bytes); default store.DefaultQuotaBytes. An
	// external etcd's is its own.
	EtcdQuotaBytes int64
	SecretKeyFile  string // default <DataDir>/secret.key
	// SecretBackend keeps the values of secrets: "etcd" (the default:
	// sealed in their records) or "vault" (on Vault, configured by Vault).
	SecretBackend string
	Vault         vaultsecrets.Config
	Masters       []string // Mesos masters; ignored with Dev
	// MesosCACert (PEM) verifies https:// masters and their agents;
	// default the system's CAs.
	MesosCACert string
	// MesosPrincipal is the framework's principal (FrameworkInfo); with
	// MesosSecretFile, whose secret is read again at each subscription,
	// the scheduler authenticates as it (HTTP Basic) to the masters'
	// scheduler and operator APIs and the agents' files API.
	MesosPrincipal, MesosSecretFile string
	// MesosEncoding is the scheduler API's media type, "protobuf" (the
	// default) or "json".
	MesosEncoding string
	// User, Role and FailoverTimeout go into the FrameworkInfo; defaults
	// root, "*" and 7 days.
	User            string
	Role            string
	FailoverTimeout time.Duration
	// Dev runs an embedded dev cluster (devcluster.Config; zero values
	// are its defaults, its WorkDir defaults to <DataDir>/mesos).
	Dev       bool
	DevConfig devcluster.Config
	// ContainerExecutorURI and ProcessExecutorURI are what agents fetch.
	ContainerExecutorURI, ProcessExecutorURI string
	// Scheduler tunes the core (executors are set from the URIs above).
	Scheduler scheduler.Config
	// TickInterval of the driver; default 1s.
	TickInterval time.Duration
	// AgentSyncInterval between reads of the master's agents; default
	// scheduler.DefaultAgentSyncInterval.
	AgentSyncInterval time.Duration
	// ElectionTTL is how long a dead leader holds leadership; default 5s.
	ElectionTTL time.Duration
	Logger      *slog.Logger
	// Ready, when set, receives the API address once it serves.
	Ready func(addr string)
	// FilesDir is served under /files/ for agents to fetch packages and
	// executors from; default <DataDir>/files.
	FilesDir string
	// AdmissionPolicy is the admission policy's file (JSON or YAML, see
	// pkg/admission); empty: admission.Default(), or admission.Dev() with
	// Dev. Its egress lists are the exceptions to the egress policy.
	AdmissionPolicy string
	// NamespaceUIDs is the range of uids namespaces are given on the
	// agents, one each, recorded in etcd once (--namespace-uids): their
	// processes, and containers whose user the policy does not allow, run
	// as it. The zero Range gives none: the executors' defaults apply.
	NamespaceUIDs identity.Range
	// AgentPorts are the Mesos agents' HTTP ports, which the egress
	// policy refuses on every address; default DefaultAgentPort.
	AgentPorts []int
	// PackageDirs are the directories on agents that file:// packages may
	// come from: the process executors get them as --package-dirs, and a
	// manifest naming another is refused when submitted. None refuses
	// file:// packages.
	PackageDirs []string
	// Notify tunes the notifier (retries, log bounds); its Registry,
	// Store and Logger are set here.
	Notify notify.Config
	// TokenFile names the API's callers (auth.ParseTokens). Empty: an
	// admin token is made at the first start and kept in
	// <DataDir>/admin.token (AdminTokenFile).
	TokenFile string
	// CertRoles (auth.ParseCertRoles) give client certificates their
	// roles; a certificate's user not in it is looked up in TokenFile.
	CertRoles string
	// TLSCert and TLSKey make the API serve HTTPS; ClientCA (PEM) then
	// verifies the client certificates that name callers.
	TLSCert, TLSKey, ClientCA string
	// AuditKeep is how many audit entries the store keeps; default
	// api.DefaultAuditKeep.
	AuditKeep int64
}

// AdminTokenFile is where the admin token made without a token file is
// kept, under the data directory.
const AdminTokenFile = "admin.token"

// Run runs the process until ctx ends: it checks o, then starts the
// components, each after those it uses, and once ctx ends (or the API or
// the leadership fails) stops them in reverse. A component failing to
// start stops those started before it, and Run returns its error.
func Run(ctx context.Context, o Options) error {
	d, err := configure(o)
	if err != nil {
		return err
	}
	var components lifecycle
	if err := components.start(ctx,
		component{"store", d.startStore}, // closes last: the others use it
		component{"read view", d.startReadView},
		component{"Mesos", d.startMesos},
		component{"debug server", d.startDebug},
		component{"API", d.startAPI},
		component{"etcd space watch", d.startSpaceWatch},
		component{"leadership", d.startLeadership}, // resigns first, while etcd is up
	); err != nil {
		return err
	}
	defer func() {
		if err := components.stop(); err != nil {
			d.o.Logger.Warn("stopped, not cleanly", "err", err)
		}
	}()
	return d.wait(ctx)
}

// configure checks o, fills its defaults and loads what it names: the
// secret backend, the admission policy, the API's callers, the Mesos
// credential. Bad options are refused before anything starts.
func configure(o Options) (*daemon, error) {
	o, err := checkOptions(o)
	if err != nil {
		return nil, err
	}
	d := &daemon{o: o, failed: make(chan error, 2)}
	if d.secretValues, err = openSecretValues(o); err != nil {
		return nil, err
	}
	if d.encoding, err = mesoswire.ByName(o.MesosEncoding); err != nil {
		return nil, fmt.Errorf("mesos encoding: %w", err)
	}
	if err := makeDirs(&d.o); err != nil {
		return nil, err
	}
	if d.admit, err = admissionChecker(d.o); err != nil {
		return nil, err
	}
	if d.authenticator, err = authenticate(d.o); err != nil {
		return nil, err
	}
	if d.mesosConn, err = mesosConnection(d.o); err != nil {
		return nil, err
	}
	return d, nil
}

// checkOptions refuses the paths and numbers of o that cannot work and
// fills its defaults.
func checkOptions(o Options) (Options, error) {
	o.Listen = cmp.Or(o.Listen, DefaultListen)
	o.DataDir = cmp.Or(o.DataDir, DefaultDataDir)
	// Paths reach agents and executors, which run elsewhere: absolute.
	dataDir, err := filepath.Abs(o.DataDir)
	if err != nil {
		return o, fmt.Errorf("--data-dir %q: %w", o.DataDir, err)
	}
	o.DataDir = dataDir
	if o.DevConfig.WorkDir != "" {
		if o.DevConfig.WorkDir, err = filepath.Abs(o.DevConfig.WorkDir); err != nil {
			return o, fmt.Errorf("dev cluster work dir: %w", err)
		}
	}
	for flagName, dir := range map[string]string{"--work-base-dir": o.Scheduler.WorkBaseDir, "--run-base-dir": o.Scheduler.RunBaseDir} {
		if dir != "" && !filepath.IsAbs(dir) {
			return o, fmt.Errorf("%s %q: must be an absolute path (it is a directory on the agents): %w", flagName, dir, errdefs.ErrInvalidArgument)
		}
	}
	if o.AgentPorts, err = checkAgentPorts(o.AgentPorts); err != nil {
		return o, err
	}
	if o.EtcdQuotaBytes < 0 || o.EtcdQuotaBytes > 0 && len(o.EtcdEndpoints) > 0 {
		return o, fmt.Errorf("--etcd-quota-backend-bytes %d: the embedded etcd's quota must be positive (an external etcd's is its own --quota-backend-bytes): %w",
			o.EtcdQuotaBytes, errdefs.ErrInvalidArgument)
	}
	if o.AgentSyncInterval < 0 {
		return o, fmt.Errorf("--agent-sync-interval %s: must be positive: %w", o.AgentSyncInterval, errdefs.ErrInvalidArgument)
	}
	if o.Scheduler.MaxLaunching < 0 {
		return o, fmt.Errorf("--max-launching %d: must be positive: %w", o.Scheduler.MaxLaunching, errdefs.ErrInvalidArgument)
	}
	if o.Scheduler.DependsGCDelay < 0 {
		return o, fmt.Errorf("--depends-gc-delay %s: must be positive: %w", o.Scheduler.DependsGCDelay, errdefs.ErrInvalidArgument)
	}
	o.ElectionTTL = cmp.Or(o.ElectionTTL, 5*time.Second)
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	o.FilesDir = cmp.Or(o.FilesDir, filepath.Join(o.DataDir, "files"))
	o.MesosEncoding = cmp.Or(o.MesosEncoding, mesoswire.NameProtobuf)
	return o, nil
}

// makeDirs makes the data and files directories of o and, for a dev
// cluster of real executors, places its instances' directories.
func makeDirs(o *Options) error {
	// Searchable: with --dev, processes running as other users live under
	// it. etcd keeps its own directory private; the key file is 0600.
	if err := os.MkdirAll(o.DataDir, 0o755); err != nil {
		return err
	}
	if err := os.MkdirAll(o.FilesDir, 0o755); err != nil {
		return err
	}
	if o.Dev && o.DevConfig.ExecutorMode == devcluster.ExecutorProcess {
		return placeDevInstanceDirs(o)
	}
	return nil
}

// authenticate returns who may call the API: the token file's callers,
// else the admin token of the data directory, made at the first start;
// and with a client CA, the users of client certificates.
func authenticate(o Options) (*auth.Authenticator, error) {
	if err := needEach([]flagNeed{
		{"--tls-cert", o.TLSCert, "--tls-key", o.TLSKey}, {"--tls-key", o.TLSKey, "--tls-cert", o.TLSCert},
		{"--client-ca", o.ClientCA, "--tls-cert", o.TLSCert}, {"--cert-roles", o.CertRoles, "--client-ca", o.ClientCA},
	}); err != nil {
		return nil, err
	}
	a := &auth.Authenticator{}
	var err error
	// A file edited into a mistake keeps its last good version.
	reloadFailed := func(flag string) func(error) {
		return func(err error) {
			o.Logger.Error(flag+": the changed file is not taken; the last good one stays in force", "err", err)
		}
	}
	if o.TokenFile != "" {
		if a.Tokens, err = auth.LoadTokens(o.TokenFile, reloadFailed("--token-file")); err != nil {
			return nil, fmt.Errorf("--token-file: %w", err)
		}
	} else {
		path := filepath.Join(o.DataDir, AdminTokenFile)
		var created bool
		if a.Tokens, created, err = auth.EnsureAdminToken(path, rand.Reader); err != nil {
			return nil, fmt.Errorf("admin token: %w", err)
		}
		o.Logger.Info("no --token-file: the API takes the admin token in "+path+" (bcsctl reads it from there; curl -H \"Authorization: Bearer $(cat "+path+")\")",
			"file", path, "created", created)
		if len(o.EtcdEndpoints) > 0 {
			o.Logger.Warn("replicas sharing an etcd need the same --token-file: " + path + " is this replica's alone")
		}
	}
	if o.CertRoles != "" {
		if a.CertRoles, err = auth.LoadCertRoles(o.CertRoles, reloadFailed("--cert-roles")); err != nil {
			return nil, fmt.Errorf("--cert-roles: %w", err)
		}
	}
	return a, nil
}

// flagNeed is a flag that is of no use without another.
type flagNeed struct{ flag, value, needs, other string }

// needEach refuses a flag given without the one it needs.
func needEach(needs []flagNeed) error {
	for _, need := range needs {
		if need.value != "" && need.other == "" {
			return fmt.Errorf("%s needs %s: %w", need.flag, need.needs, errdefs.ErrInvalidArgument)
		}
	}
	return nil
}

// mesosConnection is how o reaches Mesos: the CA of --mesos-cacert and
// the framework's credential, whose secret file must be readable now.
func mesosConnection(o Options) (mesosconn.Config, error) {
	if err := needEach([]flagNeed{{"--mesos-secret-file", o.MesosSecretFile, "--mesos-principal", o.MesosPrincipal}}); err != nil {
		return mesosconn.Config{}, err
	}
	conn := mesosconn.Config{Principal: o.MesosPrincipal, SecretFile: o.MesosSecretFile}
	if o.MesosCACert != "" {
		var err error
		if conn.TLS, err = tlsfiles.Client(o.MesosCACert, "", ""); err != nil {
			return conn, fmt.Errorf("--mesos-cacert: %w", err)
		}
	}
	if conn.Authenticates() {
		if _, err := conn.Secret(); err != nil {
			return conn, err
		}
		o.Logger.Info("the framework authenticates to Mesos", "principal", conn.Principal, "secret_file", conn.SecretFile)
	}
	return conn, nil
}

// mesosScheme is the scheme of masters, which their agents share: a
// Mesos cluster enables TLS (LIBPROCESS_SSL_ENABLED) everywhere or
// nowhere.
func mesosScheme(o Options, masters []string) (string, error) {
	scheme := ""
	for _, m := range masters {
		s, _, _ := strings.Cut(m, "://")
		if s != "http" && s != "https" {
			return "", fmt.Errorf("--master %s: want http://host:port or https://host:port: %w", m, errdefs.ErrInvalidArgument)
		}
		if scheme != "" && s != scheme {
			return "", fmt.Errorf("--master %s: all masters are http:// or all https://, as their cluster serves: %w", strings.Join(masters, ","), errdefs.ErrInvalidArgument)
		}
		scheme = s
	}
	if o.MesosCACert != "" && scheme != "https" {
		return "", fmt.Errorf("--mesos-cacert needs https:// masters: %w", errdefs.ErrInvalidArgument)
	}
	if scheme == "http" && o.MesosSecretFile != "" {
		o.Logger.Warn("the framework's secret goes to the masters in clear: they are http://, not https://", "masters", strings.Join(masters, ","))
	}
	return cmp.Or(scheme, "http"), nil
}

// Names of Options.SecretBackend.
const (
	SecretBackendEtcd  = "etcd"
	SecretBackendVault = vaultsecrets.Backend
)

// openSecretValues returns where secret values are kept.
func openSecretValues(o Options) (registry.SecretValues, error) {
	switch o.SecretBackend {
	case "", SecretBackendEtcd:
		for flag, v := range map[string]string{"--vault-addr": o.Vault.Addr, "--vault-token-file": o.Vault.TokenFile, "--vault-cacert": o.Vault.CACert} {
			if v != "" {
				return nil, fmt.Errorf("%s is set but --secret-backend is %s: add --secret-backend vault: %w", flag, SecretBackendEtcd, errdefs.ErrInvalidArgument)
			}
		}
		return registry.InRecord{}, nil
	case SecretBackendVault:
		return vaultsecrets.New(o.Vault)
	}
	return nil, fmt.Errorf("--secret-backend %q: want %s or %s: %w", o.SecretBackend, SecretBackendEtcd, SecretBackendVault, errdefs.ErrInvalidArgument)
}

func openStore(ctx context.Context, o Options) (*store.Store, *store.Embedded, func(), error) {
	return openStoreWith(ctx, o, store.Config{KeyFile: secretKeyFile(o)})
}

// EtcdTLS names the PEM files of the client side of https:// etcd
// endpoints, as etcdctl's --cacert, --cert and --key.
type EtcdTLS struct {
	// CACert verifies etcd (--etcd-cacert); default the system's CAs.
	CACert string
	// Cert and Key are the client certificate etcd may require
	// (--client-cert-auth): --etcd-cert and --etcd-key.
	Cert, Key string
}

// config checks the files and loads them for endpoints; nil without any.
func (e EtcdTLS) config(endpoints []string) (*tls.Config, error) {
	if err := needEach([]flagNeed{
		{"--etcd-cert", e.Cert, "--etcd-key", e.Key}, {"--etcd-key", e.Key, "--etcd-cert", e.Cert},
	}); err != nil {
		return nil, err
	}
	if e == (EtcdTLS{}) {
		return nil, nil
	}
	// The embedded etcd speaks plain HTTP on loopback, and etcd's
	// client ignores TLS settings for http:// endpoints.
	if len(endpoints) == 0 {
		return nil, fmt.Errorf("--etcd-cacert, --etcd-cert and --etcd-key need --etcd-endpoints: the embedded etcd serves no TLS: %w", errdefs.ErrInvalidArgument)
	}
	for _, ep := range endpoints {
		if !strings.HasPrefix(ep, "https://") {
			return nil, fmt.Errorf("--etcd-endpoints %s: --etcd-cacert, --etcd-cert and --etcd-key need https:// endpoints: %w", ep, errdefs.ErrInvalidArgument)
		}
	}
	cfg, err := tlsfiles.Client(e.CACert, e.Cert, e.Key)
	if err != nil {
		return nil, fmt.Errorf("--etcd-cacert/--etcd-cert/--etcd-key: %w", err)
	}
	return cfg, nil
}

// openStoreWith opens the store of o (starting the embedded etcd when o
// names no endpoints, returned too) with cfg's sealing settings; the func
// closes both.
func openStoreWith(ctx context.Context, o Options, cfg store.Config) (*store.Store, *store.Embedded, func(), error) {
	var err error
	if cfg.TLS, err = o.EtcdTLS.config(o.EtcdEndpoints); err != nil {
		return nil, nil, nil, err
	}
	endpoints := o.EtcdEndpoints
	closeEtcd := func() {}
	var embedded *store.Embedded
	if len(endpoints) == 0 {
		var opts []store.EmbeddedOption
		if o.EtcdQuotaBytes > 0 {
			opts = append(opts, store.WithQuota(o.EtcdQuotaBytes))
		}
		if embedded, err = store.StartEmbedded(ctx, o.DataDir, opts...); err != nil {
			return nil, nil, nil, err // it names the embedded etcd
		}
		closeEtcd, endpoints = embedded.Close, embedded.Endpoints()
	}
	cfg.Endpoints = endpoints
	st, err := store.Open(ctx, cfg)
	if errors.Is(err, errdefs.ErrUnauthenticated) {
		err = fmt.Errorf("%w (--etcd-cacert names the CA that signed etcd's certificate; --etcd-cert and --etcd-key the client certificate etcd wants)", err)
	}
	if err != nil {
		closeEtcd()
		return nil, nil, nil, err
	}
	return st, embedded, func() { st.Close(); closeEtcd() }, nil
}

// secretKeyFile is the sealing key file of o: --secret-key-file, by
// default <data dir>/secret.key.
func secretKeyFile(o Options) string {
	if o.SecretKeyFile != "" {
		return o.SecretKeyFile
	}
	return filepath.Join(o.DataDir, "secret.key")
}

// RotateKeyOptions configure RotateKey.
type RotateKeyOptions struct {
	// DataDir, EtcdEndpoints, EtcdTLS and SecretKeyFile (the current
	// key) as for Run.
	DataDir       string
	EtcdEndpoints []string
	EtcdTLS       EtcdTLS
	SecretKeyFile string
	// NewKeyFile is the key to seal with from now on; created if missing.
	NewKeyFile string
}

// RotateKey re-seals every sealed value of the store under the key of
// NewKeyFile and records its fingerprint (store.RotateSealingKey). Every
// replica must be stopped; after it, each must get the new key file as its
// --secret-key-file. Running it again after an interruption finishes the
// rotation.
func RotateKey(ctx context.Context, o RotateKeyOptions) (store.Rotation, error) {
	if o.NewKeyFile == "" {
		return store.Rotation{}, fmt.Errorf("--new-key-file is required: %w", errdefs.ErrInvalidArgument)
	}
	if o.DataDir == "" {
		o.DataDir = DefaultDataDir
	}
	opts := Options{DataDir: o.DataDir, EtcdEndpoints: o.EtcdEndpoints, EtcdTLS: o.EtcdTLS, SecretKeyFile: o.SecretKeyFile}
	oldKey, err := store.LoadKey(secretKeyFile(opts))
	if err != nil {
		return store.Rotation{}, fmt.Errorf("--secret-key-file (the current key): %w", err)
	}
	newKey, err := store.LoadOrCreateKey(o.NewKeyFile)
	if err != nil {
		return store.Rotation{}, fmt.Errorf("--new-key-file: %w", err)
	}
	from, err := store.NewSealer(oldKey)
	if err != nil {
		return store.Rotation{}, err
	}
	to, err := store.NewSealer(newKey)
	if err != nil {
		return store.Rotation{}, err
	}
	st, _, closeStore, err := openStoreWith(ctx, opts, store.Config{})
	if err != nil {
		return store.Rotation{}, err
	}
	defer closeStore()
	return st.RotateSealingKey(ctx, from, to)
}

// devExecutorReregistrationTimeout is the dev cluster's
// --executor_reregistration_timeout: the example of deploy/mesos/README.md,
// margin for a test machine whose agents and executors share two cores
// (our executors are back within about 1s of the agent answering).
const devExecutorReregistrationTimeout = devcluster.Duration(10 * time.Second)

// sharedHostAgents are the default dev agents for real executors: they
// all run on this machine, so each offers its own slice of 31000-32000
// and two instances never get the same host port.
func sharedHostAgents() []devcluster.AgentSpec {
	agents := devcluster.DefaultAgents()
	width := uint64(32000-31000+1) / uint64(len(agents))
	for i := range agents {
		begin := 31000 + uint64(i)*width
		agents[i].Resources.Ports = []devcluster.PortRange{{Begin: begin, End: begin + width - 1}}
	}
	return agents
}

// admissionChecker is the API's admission: the policy of
// o.AdmissionPolicy, or the built-in one, and the package directories.
func admissionChecker(o Options) (*admission.Checker, error) {
	policy := admission.Default()
	if o.Dev {
		policy = admission.Dev()
	}
	if o.AdmissionPolicy != "" {
		var err error
		if policy, err = admission.LoadFile(o.AdmissionPolicy); err != nil {
			return nil, fmt.Errorf("--admission-policy: %w", err)
		}
	}
	for _, dir := range o.PackageDirs {
		if !filepath.IsAbs(dir) {
			return nil, fmt.Errorf("--package-dirs %q: must be an absolute path (a directory on the agents): %w", dir, errdefs.ErrInvalidArgument)
		}
	}
	return &admission.Checker{Policy: policy, PackageDirs: o.PackageDirs, NamespaceUIDs: o.NamespaceUIDs}, nil
}
