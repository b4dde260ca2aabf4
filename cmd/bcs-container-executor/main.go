package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	docker "github.com/fsouza/go-dockerclient"
	"github.com/mesos/mesos-go/api/v1/lib/executor/config"

	"github.com/bcs-mesos/bcs-mesos/pkg/executor"
	"github.com/bcs-mesos/bcs-mesos/pkg/mesoswire"
	"github.com/bcs-mesos/bcs-mesos/pkg/numa"
	"github.com/bcs-mesos/bcs-mesos/pkg/pod"
	"github.com/bcs-mesos/bcs-mesos/pkg/podruntime"
	"github.com/bcs-mesos/bcs-mesos/pkg/remotefile"
)

func main() {
	if err := run(); err != nil {
		slog.Error("bcs-container-executor failed", "err", err)
		os.Exit(1)
	}
}

// labels is a repeatable key=value flag.
type labels map[string]string

func (l labels) String() string { return fmt.Sprint(map[string]string(l)) }

func (l labels) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("label %q: want key=value", s)
	}
	l[k] = v
	return nil
}

// options are the command line's.
type options struct {
	endpoint, networkMode        string
	pluginDir, confDir, cacheDir string
	nodeAddr, portBindIP         string
	numaState, sysfsRoot         string
	ackTimeout                   time.Duration
	codec                        string
	labels                       labels
	networkImage, networkCommand string
}

// parseFlags reads the command line.
func parseFlags() *options {
	o := &options{labels: labels{}}
	flag.StringVar(&o.endpoint, "docker-endpoint", "unix:///var/run/docker.sock", "dockerd address")
	flag.StringVar(&o.networkMode, "network-mode", "", `"" for CNM (HOST, BRIDGE, NONE, USER per task group), "cni" for CNI`)
	flag.StringVar(&o.pluginDir, "cni-plugin-dir", pod.DefaultCNIPluginDir, "CNI plugin binaries (comma-separated list of directories)")
	flag.StringVar(&o.confDir, "cni-conf-dir", pod.DefaultCNIConfDir, "CNI network configuration lists")
	flag.StringVar(&o.cacheDir, "cni-cache-dir", "", "libcni result cache; empty is /var/lib/cni")
	flag.StringVar(&o.nodeAddr, "node-addr", "", "agent address (BCS_NODE_ADDR); empty is the host of MESOS_AGENT_ENDPOINT")
	flag.StringVar(&o.portBindIP, "port-bind-ip", "", "host address BRIDGE ports are published on; empty is every address")
	flag.StringVar(&o.numaState, "numa-state", numa.DefaultStatePath, "agent-wide CPU pinning state file (shared by every executor of the agent)")
	flag.StringVar(&o.sysfsRoot, "sysfs-root", "/sys", "where devices/system/node is read from")
	flag.DurationVar(&o.ackTimeout, "ack-timeout", 10*time.Second, "wait for acknowledgements once every task is terminal")
	flag.StringVar(&o.codec, "codec", "protobuf", "executor API encoding: protobuf or json")
	flag.Var(o.labels, "label", "key=value label put on every container (repeatable)")
	for _, prefix := range []string{"", "cni-"} { // the cni- names are older aliases
		flag.StringVar(&o.networkImage, prefix+"network-image", pod.DefaultNetworkImage,
			"image of the network container holding a pod's network (CNI pods, CNM pods of several containers outside HOST mode); agents need it")
		flag.StringVar(&o.networkCommand, prefix+"network-command", "", "command of the network container (space-separated); empty is the image's")
	}
	flag.Parse()
	return o
}

func run() error {
	o := parseFlags()
	env, err := config.FromEnv()
	if err != nil {
		return err
	}
	if err := executor.PrivateSandbox(env.Sandbox); err != nil {
		return err
	}
	agentTLS, err := executor.AgentTLS(os.Getenv)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil)).With("executor", env.ExecutorID)
	slog.SetDefault(log)
	var network pod.NetworkType
	switch o.networkMode {
	case "":
	case "cni":
		network = pod.NetworkCNI
	default:
		return fmt.Errorf("--network-mode %q: want \"\" or \"cni\"", o.networkMode)
	}
	c, err := mesoswire.ByName(o.codec)
	if err != nil {
		return fmt.Errorf("--codec: %w", err)
	}
	if o.nodeAddr == "" {
		if host, _, err := net.SplitHostPort(env.AgentEndpoint); err == nil {
			o.nodeAddr = host
		}
	}
	cli, err := docker.NewClient(o.endpoint)
	if err != nil {
		return fmt.Errorf("docker endpoint %q: %w", o.endpoint, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	rt, err := podruntime.New(ctx, o.runtimeConfig(cli, env, network, log))
	if err != nil {
		return err
	}
	d := executor.New(executor.Config{Env: env, Runtime: rt, Logger: log, Codec: c, AgentTLS: agentTLS, AckTimeout: o.ackTimeout, Sweep: rt.SweepDead})
	log.Info("starting", "framework", env.FrameworkID, "agent", env.AgentEndpoint, "docker", o.endpoint, "network", o.networkMode)
	return serve(ctx, d, rt, log)
}

// runtimeConfig is the pod runtime's configuration: the options and the
// executor's environment.
func (o *options) runtimeConfig(cli *docker.Client, env config.Config, network pod.NetworkType, log *slog.Logger) podruntime.Config {
	return podruntime.Config{
		Docker:        cli,
		ExecutorID:    env.ExecutorID,
		FrameworkID:   env.FrameworkID,
		SandboxDir:    env.Sandbox,
		NodeAddr:      o.nodeAddr,
		PortBindIP:    o.portBindIP,
		AgentEndpoint: env.AgentEndpoint,
		Network:       network,
		CNI: pod.CNIConfig{
			PluginDirs: strings.Split(o.pluginDir, ","), ConfDir: o.confDir, CacheDir: o.cacheDir,
		},
		NetworkImage: o.networkImage, NetworkCommand: strings.Fields(o.networkCommand),
		CPUSets: &numa.Allocator{SysfsRoot: o.sysfsRoot, StatePath: o.numaState},
		Labels:  o.labels,
		Remote:  &remotefile.Fetcher{Dir: filepath.Join(env.Sandbox, remotefile.SandboxDir)},
		Logger:  log,
	}
}

// serve runs the executor until its tasks are done or ctx ends, then
// waits for the pods' teardown: containers must not outlive the executor.
func serve(ctx context.Context, d *executor.Driver, rt *podruntime.Runtime, log *slog.Logger) error {
	runErr := d.Run(ctx)
	wctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if runErr != nil {
		rt.Shutdown(5 * time.Second)
	}
	if err := rt.Wait(wctx); err != nil {
		log.Warn("waiting for the pods to be torn down", "err", err)
	}
	if runErr != nil {
		return runErr
	}
	log.Info("all tasks terminal; exiting")
	return nil
}
