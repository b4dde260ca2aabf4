package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/bcs-mesos/bcs-mesos/pkg/api"
	"github.com/bcs-mesos/bcs-mesos/pkg/console"
	"github.com/bcs-mesos/bcs-mesos/pkg/devcluster"
	"github.com/bcs-mesos/bcs-mesos/pkg/identity"
	"github.com/bcs-mesos/bcs-mesos/pkg/notify"
	"github.com/bcs-mesos/bcs-mesos/pkg/scheduler"
	"github.com/bcs-mesos/bcs-mesos/pkg/schedulerd"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
	"github.com/bcs-mesos/bcs-mesos/pkg/vaultsecrets"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// atRunTime ends the help of the flags that are the engine's
// configuration, which a value set at run time overrides.
const atRunTime = " (a value set at run time, bcsctl engine config set, wins)"

func main() {
	// Microseconds, as Mesos's own logs: what happens to one instance
	// (kill, status, launch) takes far less than a second, and its log
	// lines must tell in what order and how far apart.
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)
	if len(os.Args) > 1 && os.Args[1] == "rotate-key" {
		os.Exit(rotateKey(os.Args[2:]))
	}
	o, err := parseFlags()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bcs-scheduler:", err)
		os.Exit(2)
	}
	if o.Dev {
		o.Ready = func(addr string) { printDevWelcome(os.Stderr, o, addr) }
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // a second signal ends the process at once
	}()
	err = schedulerd.Run(ctx, o)
	if err != nil && ctx.Err() != nil {
		slog.Info("bcs-scheduler stopped while starting", "err", err)
		return
	}
	if err != nil {
		slog.Error("bcs-scheduler", "err", err)
		os.Exit(1)
	}
}

// textFlags are the flags turned into Options once parsed: lists, ranges
// and the dev cluster's settings.
type textFlags struct {
	etcd, masters, devAgents, devMode, packageDirs, agentPorts, namespaceUIDs string
}

// parseFlags parses the command line into Options; its error is a usage
// error.
func parseFlags() (schedulerd.Options, error) {
	var o schedulerd.Options
	var t textFlags
	for _, define := range []func(*flag.FlagSet, *schedulerd.Options, *textFlags){
		apiFlags, storeFlags, mesosFlags, engineFlags, tenantFlags, devFlags, notifyFlags,
	} {
		define(flag.CommandLine, &o, &t)
	}
	flag.Parse()
	o.EtcdEndpoints, o.Masters, o.PackageDirs = splitList(t.etcd), splitList(t.masters), splitList(t.packageDirs)
	for _, p := range splitList(t.agentPorts) {
		port, err := strconv.Atoi(p)
		if err != nil {
			return o, fmt.Errorf("--agent-ports %q: want comma-separated port numbers", t.agentPorts)
		}
		o.AgentPorts = append(o.AgentPorts, port)
	}
	var err error
	if o.NamespaceUIDs, err = identity.ParseRange(t.namespaceUIDs); err != nil {
		return o, fmt.Errorf("--namespace-uids %w", err)
	}
	if o.Scheduler.UsageInterval < proto.MinUsageInterval {
		return o, fmt.Errorf("--usage-report-interval %s: want at least %s", o.Scheduler.UsageInterval, proto.MinUsageInterval)
	}
	if err := checkNotifyFlags(o); err != nil {
		return o, err
	}
	return o, configureDev(&o, t.devAgents, t.devMode)
}

// apiFlags are the API's flags: where it listens, who may call it, its
// TLS, its audit log.
func apiFlags(flags *flag.FlagSet, o *schedulerd.Options, t *textFlags) {
	flags.StringVar(&o.Listen, "listen", schedulerd.DefaultListen, "address of the REST API")
	flags.StringVar(&o.DebugAddr, "debug-addr", "", "serve Go's profiles (net/http/pprof) at this loopback address, e.g. 127.0.0.1:6060")
	flags.StringVar(&o.AdvertiseURL, "advertise-url", "", "URL other replicas and agents reach the API at (redirects, ${scheduler_url}); default http://<listen address>")
	flags.StringVar(&o.TokenFile, "token-file", "", "the API's callers, a line each: token,user,role[,namespace;namespace…] (role read-only, operator or admin); default: an admin token made at the first start in <data-dir>/admin.token")
	flags.StringVar(&o.TLSCert, "tls-cert", "", "PEM certificate (chain) of the API: it serves HTTPS (with --tls-key)")
	flags.StringVar(&o.TLSKey, "tls-key", "", "PEM private key of --tls-cert")
	flags.StringVar(&o.ClientCA, "client-ca", "", "PEM CA certificates: a client certificate they signed names its caller by its common name (needs --tls-cert)")
	flags.StringVar(&o.CertRoles, "cert-roles", "", "roles of client certificates, a line each: user,role[,namespace;namespace…]; a user not in it takes its role from --token-file")
	flags.Int64Var(&o.AuditKeep, "audit-keep", api.DefaultAuditKeep, "the audit log (GET /v1/audit) keeps this many of the newest writes in etcd")
}

// storeFlags are the store's flags: the data dir, etcd and where the
// secrets are kept.
func storeFlags(flags *flag.FlagSet, o *schedulerd.Options, t *textFlags) {
	flags.StringVar(&o.DataDir, "data-dir", schedulerd.DefaultDataDir, "directory of the embedded etcd, the secret key and the dev cluster")
	flags.StringVar(&t.etcd, "etcd-endpoints", "", "comma-separated etcd client URLs; empty runs an embedded etcd under --data-dir")
	etcdTLSFlags(flags, &o.EtcdTLS)
	flags.Int64Var(&o.EtcdQuotaBytes, "etcd-quota-backend-bytes", 0, fmt.Sprintf("the embedded etcd's database quota: at it, etcd refuses writes (0: %d, %d GiB); an external etcd has its own --quota-backend-bytes",
		int64(store.DefaultQuotaBytes), store.DefaultQuotaBytes>>30))
	flags.StringVar(&o.SecretKeyFile, "secret-key-file", "", "AES key sealing secrets and passwords at rest, the same file on every replica (default <data-dir>/secret.key; created only for a store that has none yet)")
	flags.StringVar(&o.SecretBackend, "secret-backend", schedulerd.SecretBackendEtcd, "where the values of secrets are kept: etcd (sealed in their records) or vault (HashiCorp Vault's KV v2 engine; etcd keeps their item names)")
	flags.StringVar(&o.Vault.Addr, "vault-addr", "", "Vault's address, e.g. https://vault.example:8200 (--secret-backend vault)")
	flags.StringVar(&o.Vault.TokenFile, "vault-token-file", "", "file holding the Vault token; read at start and again whenever it changes (--secret-backend vault)")
	flags.StringVar(&o.Vault.Mount, "vault-mount", vaultsecrets.DefaultMount, "path of Vault's KV version 2 secrets engine")
	flags.StringVar(&o.Vault.Prefix, "vault-prefix", vaultsecrets.DefaultPrefix, "secrets are kept at <prefix>/<namespace>/<name> in the engine")
	flags.StringVar(&o.Vault.CACert, "vault-cacert", "", "PEM file of the CA that signed Vault's TLS certificate; default the system's")
}

// mesosFlags are how the framework reaches Mesos and the executors the
// agents fetch.
func mesosFlags(flags *flag.FlagSet, o *schedulerd.Options, t *textFlags) {
	flags.StringVar(&t.masters, "master", "", "comma-separated Mesos master URLs, e.g. http://10.0.0.1:5050, or https://… for a cluster with LIBPROCESS_SSL_ENABLED (its agents then serve HTTPS too)")
	flags.StringVar(&o.MesosCACert, "mesos-cacert", "", "PEM file of the CA that signed the https:// masters' and agents' certificates; default the system's")
	flags.StringVar(&o.MesosPrincipal, "mesos-principal", "", "the framework's principal (FrameworkInfo.principal); with --mesos-secret-file it authenticates as it (HTTP Basic) to a master with --authenticate_http_frameworks")
	flags.StringVar(&o.MesosSecretFile, "mesos-secret-file", "", "file holding the secret of --mesos-principal (as in the master's --credentials); read again at each subscription, so a rotated file takes effect")
	flags.StringVar(&o.MesosEncoding, "mesos-encoding", "protobuf", "media type of the Mesos scheduler API: protobuf (skips enum values newer than this build) or json")
	flags.StringVar(&o.User, "mesos-user", "root", "FrameworkInfo.user: the user executors run as on the agents")
	flags.StringVar(&o.Role, "mesos-role", "*", "FrameworkInfo.role")
	flags.DurationVar(&o.FailoverTimeout, "failover-timeout", scheduler.DefaultFailoverTimeout, "how long Mesos keeps the tasks of a disconnected scheduler")
	flags.StringVar(&o.ContainerExecutorURI, "container-executor-uri", "", "file:// or http(s):// address of bcs-container-executor for agents to fetch")
	flags.StringVar(&o.ProcessExecutorURI, "process-executor-uri", "", "file:// or http(s):// address of bcs-process-executor for agents to fetch")
	flags.Var((*repeated)(&o.Scheduler.ContainerExecutor.Args), "container-executor-arg", "an argument for bcs-container-executor, e.g. --cni-conf-dir=/etc/cni (repeatable)")
	flags.Var((*repeated)(&o.Scheduler.ProcessExecutor.Args), "process-executor-arg", "an argument for bcs-process-executor, e.g. --default-user=game (repeatable)")
}

// engineFlags are the scheduler core's flags: the instances' base
// directories, and the engine's intervals and launch budget.
func engineFlags(flags *flag.FlagSet, o *schedulerd.Options, t *textFlags) {
	flags.StringVar(&o.Scheduler.WorkBaseDir, "work-base-dir", "", "${work_base_dir} of process applications on agents (default "+proto.DefaultWorkBaseDir+"; --dev: <data-dir>/work, or under /var/tmp/bcs-mesos-dev when the instances cannot reach the data dir)")
	flags.BoolVar(&o.Scheduler.PerAgentBaseDirs, "per-agent-base-dirs", false, "append the agent's hostname to ${work_base_dir} and ${run_base_dir}, for agents that share a machine (always on with --dev)")
	flags.StringVar(&o.Scheduler.RunBaseDir, "run-base-dir", "", "${run_base_dir} of process applications on agents (default "+proto.DefaultRunBaseDir+"; --dev: <data-dir>/run, or beside the work base dir)")
	flags.DurationVar(&o.Scheduler.ReconcileInterval, "reconcile-interval", scheduler.DefaultReconcileInterval, "interval of implicit task reconciliation"+atRunTime)
	flags.DurationVar(&o.AgentSyncInterval, "agent-sync-interval", scheduler.DefaultAgentSyncInterval, "how often the master's agents are read (GET_AGENTS): their state, drain and total resources; agents it does not know are dropped"+atRunTime)
	flags.DurationVar(&o.Scheduler.DependsGCDelay, "depends-gc-delay", scheduler.DefaultDependsGCDelay, "how long a dependency pod outlives the last instance that used it on its agent"+atRunTime)
	flags.DurationVar(&o.Scheduler.UsageInterval, "usage-report-interval", scheduler.DefaultUsageInterval, "how often the instances of a workload an autoscaler sizes by cpu or memory report their use (at least "+proto.MinUsageInterval.String()+")")
	flags.IntVar(&o.Scheduler.MaxLaunching, "max-launching", scheduler.DefaultMaxLaunching, "at most this many instances launched and not yet running at once (the ceiling of the launch budget, which adapts below it to how fast status updates are acknowledged); more wait, so that status updates come no faster than they are stored and acknowledged"+atRunTime)
}

// tenantFlags are what tenants may run as, do and reach.
func tenantFlags(flags *flag.FlagSet, o *schedulerd.Options, t *textFlags) {
	flags.StringVar(&o.AdmissionPolicy, "admission-policy", "", "JSON or YAML file of the admission policy: per namespace, the users processes and containers may run as besides the namespace's uid, privileged containers, host network, host paths, and where hooks and fetches may go besides the default (egress) (default: none of them; --dev: host network)")
	flags.StringVar(&t.agentPorts, "agent-ports", strconv.Itoa(schedulerd.DefaultAgentPort), "comma-separated HTTP ports of the Mesos agents: what is fetched on a tenant's behalf (hooks, callbacks, remote configmap items, packages) never reaches them, on any address")
	flags.StringVar(&t.namespaceUIDs, "namespace-uids", identity.DefaultRange, "FIRST-LAST: the uids namespaces get on the agents, one each, recorded once; their processes, and containers whose user the admission policy does not allow, run as it (empty: none, the executors' default users)")
	flags.StringVar(&t.packageDirs, "package-dirs", "", "comma-separated directories on the agents that file:// package URIs may come from (default none: file:// refused)")
}

// devFlags are the embedded dev cluster's flags.
func devFlags(flags *flag.FlagSet, o *schedulerd.Options, t *textFlags) {
	flags.BoolVar(&o.Dev, "dev", false, "also run an embedded Mesos-compatible dev cluster (the whole system on this machine)")
	flags.StringVar(&o.DevConfig.ListenAddr, "dev-master-listen", "127.0.0.1:5050", "address of the dev cluster's master")
	flags.StringVar(&t.devAgents, "dev-agents", "", "JSON file with the dev cluster's config (agents, timings); default three agents")
	flags.StringVar(&t.devMode, "dev-executors", "", "process (real executor binaries) or simulated; default process when the executors are found next to this binary")
}

// notifyFlags are the notifier's flags.
func notifyFlags(flags *flag.FlagSet, o *schedulerd.Options, t *textFlags) {
	flags.IntVar(&o.Scheduler.Flapping.Restarts, "notify-flapping-restarts", scheduler.DefaultFlappingRestarts, "an instance restarted more than this many times within --notify-flapping-window is notified as flapping"+atRunTime)
	flags.DurationVar(&o.Scheduler.Flapping.Window, "notify-flapping-window", scheduler.DefaultFlappingWindow, "the window of --notify-flapping-restarts; at most one flapping notification per instance per window"+atRunTime)
	flags.IntVar(&o.Notify.MaxAttempts, "notify-max-attempts", notify.DefaultMaxAttempts, "attempts to deliver a notification to a callback before giving up")
	flags.DurationVar(&o.Notify.MinBackoff, "notify-min-backoff", notify.DefaultMinBackoff, "wait after a failed delivery attempt; doubles with each further failure")
	flags.DurationVar(&o.Notify.MaxBackoff, "notify-max-backoff", notify.DefaultMaxBackoff, "the longest wait between delivery attempts")
	flags.DurationVar(&o.Notify.Retention, "notify-retention", notify.DefaultRetention, "how long delivered (or failed) notifications stay in the delivery log")
	flags.IntVar(&o.Notify.Keep, "notify-keep", notify.DefaultKeep, "at most this many delivered (or failed) notifications stay in the delivery log")
}

// rotateKey is `bcs-scheduler rotate-key`: re-seal the store under a new
// key (schedulerd.RotateKey). It returns the exit status.
func rotateKey(args []string) int {
	var o schedulerd.RotateKeyOptions
	var etcd string
	flags := flag.NewFlagSet("bcs-scheduler rotate-key", flag.ContinueOnError)
	flags.Usage = func() {
		fmt.Fprintln(flags.Output(), "Usage: bcs-scheduler rotate-key --new-key-file FILE [--data-dir DIR | --etcd-endpoints URLS [--etcd-cacert FILE] [--etcd-cert FILE --etcd-key FILE]] [--secret-key-file FILE]")
		fmt.Fprintln(flags.Output(), "Re-seals every secret and password under the key of FILE. Stop every replica first; afterwards give each FILE as its key file.")
		flags.PrintDefaults()
	}
	flags.StringVar(&o.DataDir, "data-dir", schedulerd.DefaultDataDir, "the replicas' --data-dir (its embedded etcd, its default key file)")
	flags.StringVar(&etcd, "etcd-endpoints", "", "the replicas' --etcd-endpoints; empty opens the embedded etcd under --data-dir")
	etcdTLSFlags(flags, &o.EtcdTLS)
	flags.StringVar(&o.SecretKeyFile, "secret-key-file", "", "the current key, as the replicas' --secret-key-file (default <data-dir>/secret.key)")
	flags.StringVar(&o.NewKeyFile, "new-key-file", "", "the new key; created (mode 0600) if it does not exist")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if flags.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "bcs-scheduler rotate-key: unexpected argument %q\n", flags.Arg(0))
		return 2
	}
	o.EtcdEndpoints = splitList(etcd)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	r, err := schedulerd.RotateKey(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bcs-scheduler rotate-key:", err)
		fmt.Fprintln(os.Stderr, "Running the same command again resumes the rotation.")
		return 1
	}
	fmt.Printf("re-sealed %d values (%d already under the new key, %d retried after a concurrent write)\n", r.Resealed, r.AlreadyNew, r.Retried)
	fmt.Printf("the store now seals with the key of %s: give it to every replica as its --secret-key-file, then start them\n", o.NewKeyFile)
	return 0
}

// etcdTLSFlags are the flags of the client side of https:// etcd
// endpoints, named as etcdctl's --cacert, --cert and --key.
func etcdTLSFlags(flags *flag.FlagSet, e *schedulerd.EtcdTLS) {
	flags.StringVar(&e.CACert, "etcd-cacert", "", "PEM file of the CA that signed the https:// etcd endpoints' certificates; default the system's")
	flags.StringVar(&e.Cert, "etcd-cert", "", "PEM client certificate for etcd, for an etcd with --client-cert-auth (with --etcd-key)")
	flags.StringVar(&e.Key, "etcd-key", "", "PEM private key of --etcd-cert")
}

// configureDev fills the dev cluster settings: its config file, and the
// executors built next to this binary (make build puts them in bin/).
func configureDev(o *schedulerd.Options, configFile, mode string) error {
	if !o.Dev {
		return nil
	}
	// The dev cluster's agents share this machine.
	o.Scheduler.PerAgentBaseDirs = true
	if configFile != "" {
		cfg, err := devcluster.LoadConfig(configFile)
		if err != nil {
			return err
		}
		listen := o.DevConfig.ListenAddr
		o.DevConfig = cfg
		if o.DevConfig.ListenAddr == "" {
			o.DevConfig.ListenAddr = listen
		}
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	found := map[string]bool{}
	for _, exec := range []struct {
		uri  *string
		name string
	}{{&o.ContainerExecutorURI, "bcs-container-executor"}, {&o.ProcessExecutorURI, "bcs-process-executor"}} {
		path := filepath.Join(filepath.Dir(self), exec.name)
		if _, err := os.Stat(path); err == nil {
			found[exec.name] = true
		}
		if *exec.uri == "" {
			*exec.uri = "file://" + path
		}
	}
	if !found["bcs-container-executor"] {
		slog.Warn("bcs-container-executor is not next to bcs-scheduler: container applications will fail to launch")
	}
	switch mode {
	case "":
		o.DevConfig.ExecutorMode = devcluster.ExecutorSimulated
		if found["bcs-process-executor"] {
			o.DevConfig.ExecutorMode = devcluster.ExecutorProcess
		}
	case "process", "simulated":
		o.DevConfig.ExecutorMode = devcluster.ExecutorMode(mode)
	default:
		return fmt.Errorf("--dev-executors %q: want process or simulated", mode)
	}
	if !found["bcs-process-executor"] && o.DevConfig.ExecutorMode == devcluster.ExecutorProcess {
		return fmt.Errorf("--dev-executors process: bcs-process-executor is not next to %s (run make build)", self)
	}
	return nil
}

// printDevWelcome tells the person who started --dev (make run) where
// everything is and what to do next, once the API serves on addr.
func printDevWelcome(w io.Writer, o schedulerd.Options, addr string) {
	api := "http://" + addr
	token := filepath.Join(o.DataDir, schedulerd.AdminTokenFile) + " (bcsctl reads it)"
	if o.TokenFile != "" {
		token = "one of " + o.TokenFile
	}
	fmt.Fprintf(w, "\nbcs-mesos is running (bcs-scheduler --dev; data in %s):\n", o.DataDir)
	fmt.Fprintf(w, "  API      %s   token: %s\n", api, token)
	fmt.Fprintf(w, "  console  %s%s\n", api, console.Prefix)
	fmt.Fprintf(w, "  master   http://%s/master/state\n", o.DevConfig.ListenAddr)
	fmt.Fprintln(w, "Next, in another terminal at the top of the checkout (README: Quick start):")
	if addr != schedulerd.DefaultListen {
		fmt.Fprintf(w, "  export BCS_SERVER=%s\n", api)
	}
	fmt.Fprintln(w, "  bin/bcsctl apply -f examples/process.json")
	fmt.Fprintln(w, "  bin/bcsctl get instances -n demo")
	fmt.Fprintln(w, "Ctrl-C stops everything it started.")
	fmt.Fprintln(w)
}

// checkNotifyFlags refuses a negative notify setting: zero takes the
// default, a negative one means nothing.
func checkNotifyFlags(o schedulerd.Options) error {
	for _, f := range []struct {
		name  string
		value int64
	}{
		{"--notify-flapping-restarts", int64(o.Scheduler.Flapping.Restarts)}, {"--notify-flapping-window", int64(o.Scheduler.Flapping.Window)},
		{"--notify-max-attempts", int64(o.Notify.MaxAttempts)}, {"--notify-min-backoff", int64(o.Notify.MinBackoff)},
		{"--notify-max-backoff", int64(o.Notify.MaxBackoff)}, {"--notify-retention", int64(o.Notify.Retention)},
		{"--notify-keep", int64(o.Notify.Keep)}, {"--audit-keep", o.AuditKeep},
	} {
		if f.value < 0 {
			return fmt.Errorf("%s: must not be negative", f.name)
		}
	}
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// repeated is a flag that may be given several times.
type repeated []string

func (r *repeated) String() string { return strings.Join(*r, " ") }

func (r *repeated) Set(v string) error {
	*r = append(*r, v)
	return nil
}
