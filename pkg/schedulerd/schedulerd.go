package schedulerd

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mesos/mesos-go/api/v1/lib/encoding"

	"github.com/bcs-mesos/bcs-mesos/pkg/admission"
	"github.com/bcs-mesos/bcs-mesos/pkg/api"
	"github.com/bcs-mesos/bcs-mesos/pkg/auth"
	"github.com/bcs-mesos/bcs-mesos/pkg/changefeed"
	"github.com/bcs-mesos/bcs-mesos/pkg/console"
	"github.com/bcs-mesos/bcs-mesos/pkg/devcluster"
	"github.com/bcs-mesos/bcs-mesos/pkg/egress"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/hookrun"
	"github.com/bcs-mesos/bcs-mesos/pkg/identity"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/mesosconn"
	"github.com/bcs-mesos/bcs-mesos/pkg/mesosfiles"
	"github.com/bcs-mesos/bcs-mesos/pkg/mesoswire"
	"github.com/bcs-mesos/bcs-mesos/pkg/notify"
	"github.com/bcs-mesos/bcs-mesos/pkg/plan"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/scheduler"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
	"github.com/bcs-mesos/bcs-mesos/pkg/tlsfiles"
	"github.com/bcs-mesos/bcs-mesos/pkg/vaultsecrets"
	"github.com/bcs-mesos/bcs-mesos/proto"
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
	EtcdTLS       EtcdTLS
	SecretKeyFile string // default <DataDir>/secret.key
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

// Run runs the process until ctx ends.
func Run(ctx context.Context, o Options) error {
	if o.Listen == "" {
		o.Listen = DefaultListen
	}
	if o.DataDir == "" {
		o.DataDir = DefaultDataDir
	}
	// Paths reach agents and executors, which run elsewhere: absolute.
	dataDir, err := filepath.Abs(o.DataDir)
	if err != nil {
		return fmt.Errorf("--data-dir %q: %w", o.DataDir, err)
	}
	o.DataDir = dataDir
	if o.DevConfig.WorkDir != "" {
		if o.DevConfig.WorkDir, err = filepath.Abs(o.DevConfig.WorkDir); err != nil {
			return fmt.Errorf("dev cluster work dir: %w", err)
		}
	}
	for flagName, dir := range map[string]string{"--work-base-dir": o.Scheduler.WorkBaseDir, "--run-base-dir": o.Scheduler.RunBaseDir} {
		if dir != "" && !filepath.IsAbs(dir) {
			return fmt.Errorf("%s %q: must be an absolute path (it is a directory on the agents): %w", flagName, dir, errdefs.ErrInvalidArgument)
		}
	}
	agentPorts, err := checkAgentPorts(o.AgentPorts)
	if err != nil {
		return err
	}
	if o.AgentSyncInterval < 0 {
		return fmt.Errorf("--agent-sync-interval %s: must be positive: %w", o.AgentSyncInterval, errdefs.ErrInvalidArgument)
	}
	if o.Scheduler.MaxLaunching < 0 {
		return fmt.Errorf("--max-launching %d: must be positive: %w", o.Scheduler.MaxLaunching, errdefs.ErrInvalidArgument)
	}
	if o.Scheduler.DependsGCDelay < 0 {
		return fmt.Errorf("--depends-gc-delay %s: must be positive: %w", o.Scheduler.DependsGCDelay, errdefs.ErrInvalidArgument)
	}
	secretValues, err := openSecretValues(o)
	if err != nil {
		return err
	}
	if o.ElectionTTL == 0 {
		o.ElectionTTL = 5 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.FilesDir == "" {
		o.FilesDir = filepath.Join(o.DataDir, "files")
	}
	if o.MesosEncoding == "" {
		o.MesosEncoding = mesoswire.NameProtobuf
	}
	encoding, err := mesoswire.ByName(o.MesosEncoding)
	if err != nil {
		return fmt.Errorf("mesos encoding: %w", err)
	}
	// Searchable: with --dev, processes running as other users live under
	// it. etcd keeps its own directory private; the key file is 0600.
	if err := os.MkdirAll(o.DataDir, 0o755); err != nil {
		return err
	}
	if err := os.MkdirAll(o.FilesDir, 0o755); err != nil {
		return err
	}
	if o.Dev && o.DevConfig.ExecutorMode == devcluster.ExecutorProcess {
		if err := placeDevInstanceDirs(&o); err != nil {
			return err
		}
	}
	admit, err := admissionChecker(o)
	if err != nil {
		return err
	}
	authenticator, err := authenticate(o)
	if err != nil {
		return err
	}
	mesosConn, err := mesosConnection(o)
	if err != nil {
		return err
	}
	st, closeStore, err := openStore(ctx, o)
	if err != nil {
		return err
	}
	defer closeStore()
	reg := registry.New(st, time.Now).WithSecretValues(secretValues)

	masters := o.Masters
	if o.Dev {
		cfg := o.DevConfig
		if cfg.WorkDir == "" {
			cfg.WorkDir = filepath.Join(o.DataDir, "mesos")
		}
		if cfg.Logger == nil {
			cfg.Logger = o.Logger.With("component", "devcluster")
		}
		if len(cfg.Agents) == 0 && !cfg.NoAgents && cfg.ExecutorMode == devcluster.ExecutorProcess {
			cfg.Agents = sharedHostAgents()
		}
		if cfg.ExecutorReregistrationTimeout == 0 {
			// Restarted on its work dir (after a kill -9, say), the dev
			// cluster recovers our executors, which retry every 2s: Mesos'
			// 2s would kill some on their way back (deploy/mesos/README.md).
			cfg.ExecutorReregistrationTimeout = devExecutorReregistrationTimeout
		}
		cluster, err := devcluster.Start(ctx, cfg)
		if err != nil {
			return fmt.Errorf("dev cluster: %w", err)
		}
		defer cluster.Stop()
		masters = []string{cluster.MasterURL()}
		o.Logger.Info("dev cluster", "master", cluster.MasterURL(), "agents", len(cluster.Agents()))
	}
	agentScheme, err := mesosScheme(o, masters)
	if err != nil {
		return err
	}

	debugAddr := ""
	if o.DebugAddr != "" {
		stopDebug, listening, err := serveDebug(o.DebugAddr, o.Logger)
		if err != nil {
			return err
		}
		defer stopDebug()
		debugAddr = listening
	}
	listener, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return err
	}
	scheme := "http"
	if o.TLSCert != "" {
		tlsConfig, err := tlsfiles.Server(o.TLSCert, o.TLSKey, o.ClientCA)
		if err != nil {
			listener.Close()
			return fmt.Errorf("--tls-cert/--tls-key/--client-ca: %w", err)
		}
		listener, scheme = tls.NewListener(listener, tlsConfig), "https"
	}
	self := strings.TrimSuffix(o.AdvertiseURL, "/")
	if self == "" {
		self = scheme + "://" + listener.Addr().String()
	}
	egressSet, refused, err := egressPolicies(ctx, controlPlane{api: listener.Addr(), self: self, debug: debugAddr, masters: masters,
		etcd: etcdEndpoints(ctx, st, o.EtcdEndpoints, o.Logger), agentPorts: agentPorts}, admit.Policy, cmp.Or(o.Scheduler.SchedulerURL, self))
	if err != nil {
		listener.Close()
		return err
	}
	o.Logger.Info("egress policy: what tenants' hooks, callbacks, remote configmap items and packages may not reach, besides loopback and link-local",
		"scheduler", refused.Scheduler, "debug", refused.Debug, "masters", refused.Masters, "agent_ports", refused.AgentPorts, "etcd", refused.Etcd)
	lead := &leadership{self: self, egress: egressSet, admission: admit}
	op := &operator{reg: reg}
	apiServer := api.NewServer(api.Config{
		Registry: reg, Leadership: lead, Operator: op, Planner: op, FilesDir: o.FilesDir, Admission: admit,
		Healthy: func(ctx context.Context) error { return st.Ping(ctx) },
		Events:  api.EventsConfig{Feed: changefeed.New(st)},
		Auth:    &api.AuthConfig{Authenticator: authenticator, AuditKeep: o.AuditKeep},
		// Agents serve as the masters do (LIBPROCESS_SSL_ENABLED is
		// the cluster's), and may want the framework's credential.
		Logs:           api.LogsConfig{Files: &mesosfiles.Client{HTTP: mesosConn.HTTPClient(mesosfiles.DefaultTimeout), Scheme: agentScheme}},
		Logger:         o.Logger,
		EngineDefaults: scheduler.EngineDefaults(o.Scheduler, o.AgentSyncInterval),
	})
	lead.metrics = scheduler.NewMetrics(apiServer.Metrics())
	srv := apiServer.HTTPServer(withConsole(apiServer, authenticator, o.Logger))
	srv.RegisterOnShutdown(apiServer.EndStreams)
	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(listener) }()
	defer func() {
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	o.Logger.Info("API listening", "addr", self)
	if o.Ready != nil {
		o.Ready(listener.Addr().String())
	}

	runCtx, cancel := context.WithCancel(ctx)
	// The leadership ends (resigning, so that a stopped replica leaves the
	// election at once) before the store closes.
	leadershipDone := make(chan struct{})
	defer func() {
		cancel()
		<-leadershipDone
	}()
	if len(masters) == 0 {
		close(leadershipDone)
		o.Logger.Warn("no Mesos master (--master or --dev): serving the API only")
	} else {
		go func() {
			defer close(leadershipDone)
			errc <- lead.run(runCtx, st, o, connection{masters, encoding, mesosConn}, reg, op)
		}()
	}
	select {
	case <-ctx.Done():
		return nil
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) || ctx.Err() != nil {
			return nil
		}
		return err
	}
}

// withConsole serves the web console at /ui/ (and sends a browser
// opening / there) next to the API, which answers every other path.
func withConsole(apiServer http.Handler, authenticator *auth.Authenticator, logger *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	mux.Handle(console.Prefix, console.New(console.Config{Authenticator: authenticator, Logger: logger}))
	mux.Handle("GET /{$}", http.RedirectHandler(console.Prefix, http.StatusFound))
	mux.Handle("/", apiServer)
	return mux
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

func openStore(ctx context.Context, o Options) (*store.Store, func(), error) {
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
// names no endpoints) with cfg's sealing settings; the func closes both.
func openStoreWith(ctx context.Context, o Options, cfg store.Config) (*store.Store, func(), error) {
	var err error
	if cfg.TLS, err = o.EtcdTLS.config(o.EtcdEndpoints); err != nil {
		return nil, nil, err
	}
	endpoints := o.EtcdEndpoints
	closeEtcd := func() {}
	if len(endpoints) == 0 {
		etcd, err := store.StartEmbedded(ctx, o.DataDir)
		if err != nil {
			return nil, nil, err // it names the embedded etcd
		}
		closeEtcd, endpoints = etcd.Close, etcd.Endpoints()
	}
	cfg.Endpoints = endpoints
	st, err := store.Open(ctx, cfg)
	if errors.Is(err, errdefs.ErrUnauthenticated) {
		err = fmt.Errorf("%w (--etcd-cacert names the CA that signed etcd's certificate; --etcd-cert and --etcd-key the client certificate etcd wants)", err)
	}
	if err != nil {
		closeEtcd()
		return nil, nil, err
	}
	return st, func() { st.Close(); closeEtcd() }, nil
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
	st, closeStore, err := openStoreWith(ctx, opts, store.Config{})
	if err != nil {
		return store.Rotation{}, err
	}
	defer closeStore()
	return st.RotateSealingKey(ctx, from, to)
}

// connection is how a leader's driver reaches Mesos.
type connection struct {
	masters  []string
	encoding encoding.Codec
	conn     mesosconn.Config
}

// leadership tracks who leads, for the API, and runs the driver, the
// hook runner and the notifier while this replica does.
type leadership struct {
	self string
	// egress is every namespace's egress policy, for the launches, the
	// hook runs and the callbacks of each term.
	egress *egress.Set
	// admission is the API's: the users each namespace's policy allows go
	// to the agents with its identity.
	admission *admission.Checker
	// metrics outlive terms: each term's driver records into them.
	metrics *scheduler.Metrics
	mu      sync.Mutex
	leader  string
}

func (l *leadership) Leader() (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.leader, l.leader == l.self
}

func (l *leadership) set(leader string) {
	l.mu.Lock()
	l.leader = leader
	l.mu.Unlock()
}

// run campaigns, and while leading runs the driver, the hook runner and
// the notifier; when leadership or one of them fails — its session lost,
// a write refused by its fence — it steps down and, a standby again,
// campaigns again.
func (l *leadership) run(ctx context.Context, st *store.Store, o Options, mesos connection, reg *registry.Registry, op *operator) error {
	for ctx.Err() == nil {
		err := l.term(ctx, st, o, mesos, reg, op)
		l.set("") // until the next term's observer sees who leads
		if err != nil && ctx.Err() == nil {
			o.Logger.Error("leadership term ended", "err", err)
			select {
			case <-time.After(time.Second):
			case <-ctx.Done():
			}
		}
	}
	return nil
}

func (l *leadership) term(ctx context.Context, st *store.Store, o Options, mesos connection, reg *registry.Registry, op *operator) error {
	election, err := st.NewElection(ctx, "scheduler", o.ElectionTTL)
	if err != nil {
		return err
	}
	defer func() {
		resign, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = election.Resign(resign)
	}()
	observeCtx, stopObserving := context.WithCancel(ctx)
	defer stopObserving()
	go func() {
		for leader := range election.Observe(observeCtx) {
			l.set(leader)
		}
	}()
	if err := election.Campaign(ctx, l.self); err != nil {
		return err
	}
	l.set(l.self)
	o.Logger.Info("leading", "self", l.self)
	// Everything this replica does as leader writes through the fence of
	// its term: once another replica leads (this one paused or cut off
	// past its TTL), its writes are refused and the term ends. The API's
	// writes, made for users, keep going through reg.
	fence := election.Fence()
	leaderStore := st.WithFence(fence)
	leaderReg := reg.OnStore(leaderStore)

	cfg := o.Scheduler
	cfg.ContainerExecutor.URI, cfg.ProcessExecutor.URI = o.ContainerExecutorURI, o.ProcessExecutorURI
	cfg.Egress = l.egress.Spec
	if cfg.SchedulerURL == "" {
		cfg.SchedulerURL = l.self
	}
	// The process executors prepare the roots the scheduler expands
	// ${work_base_dir} and ${run_base_dir} to.
	if cfg.WorkBaseDir == "" {
		cfg.WorkBaseDir = proto.DefaultWorkBaseDir
	}
	if cfg.RunBaseDir == "" {
		cfg.RunBaseDir = proto.DefaultRunBaseDir
	}
	cfg.ProcessExecutor.Args = append(cfg.ProcessExecutor.Args,
		"--work-base-dir="+cfg.WorkBaseDir, "--run-base-dir="+cfg.RunBaseDir)
	if len(o.PackageDirs) > 0 {
		cfg.ProcessExecutor.Args = append(cfg.ProcessExecutor.Args, "--package-dirs="+strings.Join(o.PackageDirs, ","))
	}
	var identities scheduler.IdentitySource
	if !o.NamespaceUIDs.Off() {
		identities = namespaceIdentities{reg: leaderReg, uids: o.NamespaceUIDs, admission: l.admission}
	}
	driver, err := scheduler.NewDriver(scheduler.DriverConfig{
		Masters: mesos.masters, Encoding: mesos.encoding, Mesos: mesos.conn, User: o.User, Role: o.Role, FailoverTimeout: o.FailoverTimeout,
		Registry: leaderReg, Store: leaderStore, Core: cfg, TickInterval: o.TickInterval, Logger: o.Logger,
		AgentSyncInterval: o.AgentSyncInterval, Metrics: l.metrics, Identities: identities,
	})
	if err != nil {
		return err
	}
	// The hook runner drives the hook runs while this replica leads; the
	// next leader's resumes them from their stored measurements.
	hooks, err := hookrun.New(hookrun.Config{Registry: leaderReg, Store: leaderStore, Logger: o.Logger.With("component", "hookrun"), Egress: l.egress})
	if err != nil {
		return err
	}
	// The notifier delivers the notifications the driver stores; the
	// next leader's resumes from their delivery records.
	notifyCfg := o.Notify
	notifyCfg.Registry, notifyCfg.Store, notifyCfg.Logger = leaderReg, leaderStore, o.Logger.With("component", "notify")
	notifyCfg.Egress = l.egress.Default("notify callbacks")
	notifier, err := notify.New(notifyCfg)
	if err != nil {
		return err
	}
	leadCtx, stopLeading := context.WithCancel(ctx)
	defer stopLeading()
	op.set(driver)
	defer op.set(nil)
	// Each returns nil only once leadCtx ends; the first to end ends the
	// term, and the term waits for all.
	done := make(chan error, 3)
	go func() { done <- driver.Run(leadCtx) }()
	go func() {
		if err := hooks.Run(leadCtx); err != nil {
			done <- fmt.Errorf("hook runner: %w", err)
			return
		}
		done <- nil
	}()
	go func() {
		if err := notifier.Run(leadCtx); err != nil {
			done <- fmt.Errorf("notifier: %w", err)
			return
		}
		done <- nil
	}()
	running := 3
	select {
	case <-election.Lost():
		err = fmt.Errorf("lost the etcd session: %w", errdefs.ErrUnavailable)
	case <-fence.Refused():
		err = fmt.Errorf("deposed, stepping down: a write was refused: %w", store.ErrDeposed)
	case err = <-done:
		running--
	case <-ctx.Done():
	}
	stopLeading()
	for ; running > 0; running-- {
		// A write refused by the fence while stopping shows here.
		if stopErr := <-done; stopErr != nil {
			o.Logger.Warn("stopped leading", "err", stopErr)
		}
	}
	return err
}

// namespaceIdentities give each namespace its own uid of uids, recorded
// in etcd the first time it is asked for, with the users its admission
// policy allows.
type namespaceIdentities struct {
	reg       *registry.Registry
	uids      identity.Range
	admission *admission.Checker
}

func (n namespaceIdentities) Identity(ctx context.Context, namespace string) (*proto.Identity, error) {
	uid, err := n.reg.EnsureNamespaceUID(ctx, namespace, n.uids)
	if err != nil {
		return nil, err
	}
	return &proto.Identity{UID: uid, GID: uid, Users: n.admission.Policy.RulesFor(namespace).Users, Range: n.uids.String()}, nil
}

// operator hands task group operations to the driver of this replica.
type operator struct {
	reg    *registry.Registry
	mu     sync.Mutex
	driver *scheduler.Driver
}

func (op *operator) set(d *scheduler.Driver) {
	op.mu.Lock()
	op.driver = d
	op.mu.Unlock()
}

func (op *operator) Operate(ctx context.Context, taskGroupID, what string) error {
	instance, _, err := op.reg.LaunchByID(ctx, taskGroupID)
	if err != nil {
		return err
	}
	if instance.Ended(taskGroupID) { // its previous launch: nothing runs to operate on
		return fmt.Errorf("task group %q has ended (instance %d runs %s): %w", taskGroupID, instance.Index, instance.ID, errdefs.ErrNotFound)
	}
	return op.send(ctx, scheduler.Operate{TaskGroupID: taskGroupID, Op: scheduler.Operation(what)})
}

func (op *operator) Drift(ctx context.Context, req api.DriftRequest) error {
	d := scheduler.Drift{FromHost: req.FromHost, ToHost: req.To, Namespace: req.Namespace, App: req.App, Index: -1, Force: req.Force}
	if req.Instance != nil {
		d.Index = *req.Instance
	}
	return op.send(ctx, d)
}

func (op *operator) Message(ctx context.Context, taskGroupID, task string, msg proto.Message) (*proto.MessageResult, error) {
	d, err := op.leading()
	if err != nil {
		return nil, err
	}
	return d.Message(ctx, taskGroupID, task, msg)
}

// Plan asks the driver of this replica, which must lead, what storing obj
// would do.
func (op *operator) Plan(ctx context.Context, obj manifest.Object) (*plan.Plan, error) {
	d, err := op.leading()
	if err != nil {
		return nil, err
	}
	return d.Plan(ctx, obj)
}

// send hands a request to the driver of this replica, which must lead.
func (op *operator) send(ctx context.Context, in scheduler.Input) error {
	d, err := op.leading()
	if err != nil {
		return err
	}
	return d.Operate(ctx, in)
}

// leading returns the driver of this replica, which must lead.
func (op *operator) leading() (*scheduler.Driver, error) {
	op.mu.Lock()
	defer op.mu.Unlock()
	if op.driver == nil {
		return nil, fmt.Errorf("this replica does not lead: %w", errdefs.ErrUnavailable)
	}
	return op.driver, nil
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
