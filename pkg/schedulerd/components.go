package schedulerd

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/mesos/mesos-go/api/v1/lib/encoding"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/bcs-mesos/bcs-mesos/pkg/admission"
	"github.com/bcs-mesos/bcs-mesos/pkg/api"
	"github.com/bcs-mesos/bcs-mesos/pkg/auth"
	"github.com/bcs-mesos/bcs-mesos/pkg/changefeed"
	"github.com/bcs-mesos/bcs-mesos/pkg/console"
	"github.com/bcs-mesos/bcs-mesos/pkg/devcluster"
	"github.com/bcs-mesos/bcs-mesos/pkg/egress"
	"github.com/bcs-mesos/bcs-mesos/pkg/mesosconn"
	"github.com/bcs-mesos/bcs-mesos/pkg/mesosfiles"
	"github.com/bcs-mesos/bcs-mesos/pkg/readview"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/scheduler"
	"github.com/bcs-mesos/bcs-mesos/pkg/simexec"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
	"github.com/bcs-mesos/bcs-mesos/pkg/tlsfiles"
)

// daemon is the process Run assembles: its checked options, what they
// load, and what each component makes for those that start after it.
type daemon struct {
	o Options
	// Loaded by configure, before anything starts.
	encoding      encoding.Codec
	secretValues  registry.SecretValues
	admit         *admission.Checker
	authenticator *auth.Authenticator
	mesosConn     mesosconn.Config

	st          *store.Store          // by startStore
	etcd        *store.Embedded       // by startStore; nil with an external etcd
	reg         *registry.Registry    // by startStore
	view        *registry.Viewed      // by startReadView
	masters     []string              // by startMesos
	agentScheme string                // by startMesos: the scheme the agents serve
	debugAddr   string                // by startDebug: where it listens
	lead        *leadership           // by startAPI, which shows who leads
	metrics     prometheus.Registerer // by startAPI: what GET /metrics shows
	op          *operator             // by startAPI

	// failed receives the ends of the API server and of the leadership:
	// either ends the process.
	failed chan error
}

// startStore opens the store, starting the embedded etcd when o names no
// endpoints, and the registry on it.
func (d *daemon) startStore(ctx context.Context) (func() error, error) {
	st, etcd, closeStore, err := openStore(ctx, d.o)
	if err != nil {
		return nil, err
	}
	d.st, d.etcd, d.reg = st, etcd, registry.New(st, time.Now).WithSecretValues(d.secretValues)
	return func() error { closeStore(); return nil }, nil
}

// startReadView keeps, in memory, the records the API's reads serve,
// fed by the store's watch, on the leader and standbys alike.
func (d *daemon) startReadView(ctx context.Context) (func() error, error) {
	view, err := readview.New(d.st, registry.ViewConfig(readview.Config{Log: d.o.Logger.With("component", "readview")}))
	if err != nil {
		return nil, err
	}
	d.view = registry.NewViewed(view)
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = view.Run(runCtx) // it ends only with runCtx
	}()
	return func() error {
		cancel()
		<-done
		return nil
	}, nil
}

// startMesos starts the dev cluster with Dev, whose master then is the
// only one, and checks the scheme the masters serve.
func (d *daemon) startMesos(ctx context.Context) (func() error, error) {
	d.masters = d.o.Masters
	var stop func() error
	if d.o.Dev {
		cluster, err := devcluster.Start(ctx, devClusterConfig(d.o))
		if err != nil {
			return nil, fmt.Errorf("dev cluster: %w", err)
		}
		stop = func() error { cluster.Stop(); return nil }
		d.masters = []string{cluster.MasterURL()}
		d.o.Logger.Info("dev cluster", "master", cluster.MasterURL(), "agents", len(cluster.Agents()))
	}
	var err error
	if d.agentScheme, err = mesosScheme(d.o, d.masters); err != nil {
		if stop != nil {
			_ = stop()
		}
		return nil, err
	}
	return stop, nil
}

// devClusterConfig is o's dev cluster configuration with the defaults of
// one run by bcs-scheduler.
func devClusterConfig(o Options) devcluster.Config {
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
	if cfg.SimulatedMessages == nil {
		cfg.SimulatedMessages = simexec.Answer // simulated executors answer updates
	}
	if cfg.ExecutorReregistrationTimeout == 0 {
		// Restarted on its work dir (after a kill -9, say), the dev
		// cluster recovers our executors, which retry every 2s: Mesos'
		// 2s would kill some on their way back (deploy/mesos/README.md).
		cfg.ExecutorReregistrationTimeout = devExecutorReregistrationTimeout
	}
	return cfg
}

// startDebug serves Go's profiles at --debug-addr, if given.
func (d *daemon) startDebug(context.Context) (func() error, error) {
	if d.o.DebugAddr == "" {
		return nil, nil
	}
	stop, listening, err := serveDebug(d.o.DebugAddr, d.o.Logger)
	if err != nil {
		return nil, err
	}
	d.debugAddr = listening
	return func() error { stop(); return nil }, nil
}

// startAPI serves the API and the console. The egress policy is made
// here: it refuses the API's own addresses, known once it listens.
func (d *daemon) startAPI(ctx context.Context) (func() error, error) {
	listener, scheme, err := listen(d.o)
	if err != nil {
		return nil, err
	}
	self := cmp.Or(strings.TrimSuffix(d.o.AdvertiseURL, "/"), scheme+"://"+listener.Addr().String())
	egressSet, err := d.egressPolicy(ctx, listener.Addr(), self)
	if err != nil {
		listener.Close()
		return nil, err
	}
	d.lead = &leadership{self: self, egress: egressSet, admission: d.admit}
	d.op = &operator{reg: d.reg}
	apiServer := d.newAPIServer()
	d.metrics = apiServer.Metrics()
	d.lead.metrics = scheduler.NewMetrics(d.metrics)
	srv := apiServer.HTTPServer(withConsole(apiServer, d.authenticator, d.o.Logger))
	srv.RegisterOnShutdown(apiServer.EndStreams)
	go func() { d.failed <- srv.Serve(listener) }()
	d.o.Logger.Info("API listening", "addr", self)
	if d.o.Ready != nil {
		d.o.Ready(listener.Addr().String())
	}
	return func() error {
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return srv.Shutdown(shutdown)
	}, nil
}

// listen listens at o.Listen, with TLS when o has a certificate; the
// scheme says which.
func listen(o Options) (net.Listener, string, error) {
	listener, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return nil, "", err
	}
	if o.TLSCert == "" {
		return listener, "http", nil
	}
	tlsConfig, err := tlsfiles.Server(o.TLSCert, o.TLSKey, o.ClientCA)
	if err != nil {
		listener.Close()
		return nil, "", fmt.Errorf("--tls-cert/--tls-key/--client-ca: %w", err)
	}
	return tls.NewListener(listener, tlsConfig), "https", nil
}

// egressPolicy is every namespace's egress policy, refusing the control
// plane this replica knows: its API at api and self, the debug server,
// the masters, etcd, the agents' ports.
func (d *daemon) egressPolicy(ctx context.Context, api net.Addr, self string) (*egress.Set, error) {
	set, refused, err := egressPolicies(ctx, controlPlane{api: api, self: self, debug: d.debugAddr, masters: d.masters,
		etcd: etcdEndpoints(ctx, d.st, d.o.EtcdEndpoints, d.o.Logger), agentPorts: d.o.AgentPorts}, d.admit.Policy, cmp.Or(d.o.Scheduler.SchedulerURL, self))
	if err != nil {
		return nil, err
	}
	d.o.Logger.Info("egress policy: what tenants' hooks, callbacks, remote configmap items and packages may not reach, besides loopback and link-local",
		"scheduler", refused.Scheduler, "debug", refused.Debug, "masters", refused.Masters, "agent_ports", refused.AgentPorts, "etcd", refused.Etcd)
	return set, nil
}

func (d *daemon) newAPIServer() *api.Server {
	mesosFiles := &mesosfiles.Client{HTTP: d.mesosConn.HTTPClient(mesosfiles.DefaultTimeout), Scheme: d.agentScheme}
	return api.NewServer(api.Config{
		Registry: d.reg, View: d.view, Leadership: d.lead, Operator: d.op, Planner: d.op, AutoscalePlanner: d.op, FilesDir: d.o.FilesDir, Admission: d.admit,
		Healthy: func(ctx context.Context) error { return d.st.Ping(ctx) },
		Events:  api.EventsConfig{Feed: changefeed.New(d.st)},
		Auth:    &api.AuthConfig{Authenticator: d.authenticator, AuditKeep: d.o.AuditKeep},
		// Agents serve as the masters do (LIBPROCESS_SSL_ENABLED is
		// the cluster's), and may want the framework's credential.
		Logs:           api.LogsConfig{Files: mesosFiles},
		Logger:         d.o.Logger,
		EngineDefaults: scheduler.EngineDefaults(d.o.Scheduler, d.o.AgentSyncInterval),
	})
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

// startSpaceWatch follows etcd's database against its quota (spaceWatch).
func (d *daemon) startSpaceWatch(ctx context.Context) (func() error, error) {
	watch := newSpaceWatch(d.st, d.etcd, d.metrics, d.o.Logger.With("component", "etcd"))
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		watch.run(runCtx, spaceCheckInterval)
	}()
	return func() error {
		cancel()
		<-done
		return nil
	}, nil
}

// startLeadership campaigns and, while this replica leads, runs the
// driver, the hook runner, the notifier and the autoscaler controller; without masters there is
// nothing to lead. Its stop resigns, so that a stopped replica leaves the
// election at once, before the store closes.
func (d *daemon) startLeadership(ctx context.Context) (func() error, error) {
	if len(d.masters) == 0 {
		d.o.Logger.Warn("no Mesos master (--master or --dev): serving the API only")
		return nil, nil
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	mesos := connection{d.masters, d.encoding, d.mesosConn}
	go func() {
		defer close(done)
		d.failed <- d.lead.run(runCtx, d.st, d.o, mesos, d.reg, d.op)
	}()
	return func() error {
		cancel()
		<-done
		return nil
	}, nil
}

// wait returns once ctx ends, or with the error of the API server or the
// leadership if either fails first.
func (d *daemon) wait(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return nil
	case err := <-d.failed:
		if errors.Is(err, http.ErrServerClosed) || ctx.Err() != nil {
			return nil
		}
		return err
	}
}
